#!/usr/bin/env bash
# Build the wheel and sdist as a release would (twine checks their metadata), then install the wheel
# as a user would: the core alone, [sandbox] alone and each light extra alone, each in a fresh venv,
# and smoke-test each (CI runs this).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
export IMAGEKIT_HOME="$work/home"
unset IMAGEKIT_BASE_URL IMAGEKIT_API_KEY

extras="notebook storage parquet postgres"
for venv in tools core sandbox $extras; do
  python3 -m venv "$work/$venv"
  "$work/$venv/bin/python" -m pip install --quiet --upgrade pip
done
"$work/tools/bin/python" -m pip install --quiet build twine
"$work/tools/bin/python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/tools/bin/twine" check --strict "$work"/dist/*
wheel=$(ls "$work"/dist/imagekit-*.whl)
"$work/core/bin/python" -m pip install --quiet "$wheel"
"$work/sandbox/bin/python" -m pip install --quiet "$wheel[sandbox]"
for extra in $extras; do
  "$work/$extra/bin/python" -m pip install --quiet "$wheel[$extra]"
  "$work/$extra/bin/python" tests/smoke/extra_only.py "$extra"
done

"$work/sandbox/bin/python" tests/smoke/sandbox_only.py

# The core's client against a sandbox served from the sandbox-only venv.
key=$("$work/sandbox/bin/imagekit" sandbox init --data "$work/data" | tail -n 1)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/sandbox/bin/imagekit" sandbox serve --data "$work/data" --port "$port" --base-size 256 \
  --log-level warning &
server=$!
python3 - "$port" <<'PY'
import sys, time, urllib.error, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/openapi.json", timeout=2)
        break
    except (urllib.error.URLError, OSError):
        if time.monotonic() > deadline:
            sys.exit("the smoke sandbox did not start within 60 s")
        time.sleep(0.2)
PY
"$work/core/bin/python" tests/smoke/client_only.py "http://127.0.0.1:$port" "$key"
