# Each target creates .venv when missing and installs what it needs.
VENV    ?= .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-dev
# Test processes (pytest-xdist): two per core by default, since many tests wait (on a sandbox's
# latency, a subprocess, a browser) and a second process keeps the core busy meanwhile; WORKERS=0
# runs the suite in this process.
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# The suite always runs against embedded sandboxes, whatever service the environment names. It
# keeps bytecode in __pycache__ even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# its hundred-odd subprocesses then load imagekit compiled, and a second run loads the tests as
# pytest rewrote them (3 s of each test process's start). NumPy's OpenBLAS and OpenCV run one thread
# each: with two test processes per core their own thread pools only contend (5% of the CPU of the
# image-heavy tests, measured).
PYTEST  := env -u IMAGEKIT_BASE_URL -u IMAGEKIT_API_KEY -u PYTHONDONTWRITEBYTECODE \
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENCV_FOR_THREADS_NUM=1 $(PYTHON) -m pytest -n $(WORKERS)

.PHONY: demo lint docs test suite check smoke bench notebooks clean

$(PYTHON):
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)  ## the main job against an embedded sandbox; results in ./out
	$(PYTHON) -m imagekit.cli demo --out out

# mypy keeps its cache beside the packages it read the types of: a fresh clone (or worktree) on the
# same venv checks incrementally (0.5 s, not 18), and a new venv starts a new cache. mypy checks each
# cached module's hash and options, so a cache made in another clone is only reused where it holds.
# The suite's type tests (tests.helpers.revealed_types) check their snippets on the same cache, one
# mypy at a time (flock): in make test, where the venv is new, imagekit's types are then read once,
# by whichever comes first, not twice side by side (a cold snippet check: 45 to 50 CPU-s; one after
# lint's: 2).
lint: $(STAMP)  ## ruff, the import contracts (pyproject.toml), mypy, and the documentation built strictly
	$(VENV)/bin/ruff check imagekit tests benchmarks conftest.py
	$(VENV)/bin/lint-imports --cache-dir $(VENV)/import-linter-cache
	flock $(VENV)/mypy-cache.lock $(VENV)/bin/mypy --cache-dir $(VENV)/mypy-cache imagekit
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

# make docs serves on DOCS_PORT, or the next port nothing listens on (and says so in one line).
DOCS_PORT ?= 8000
docs: $(STAMP)  ## the documentation (guides, explanations, reference) served on http://127.0.0.1:8000 (or the next free port)
	@NO_MKDOCS_2_WARNING=1 $(PYTHON) .ci/serve-docs $(DOCS_PORT)

test: $(STAMP)  ## lint and types beside the whole suite: browser (chromium) and PostgreSQL tests, notebooks and the docs' blocks included
	@.ci/system-needs
	@$(MAKE) --no-print-directory -j 2 lint suite

suite: $(STAMP)  ## the whole suite alone (make test runs it beside lint)
	@.ci/system-needs
	$(PYTEST) $(SUITE_MARKS) $(PYTEST_ARGS)

# make check asks pytest-testmon which tests ran code that changed since the tests last passed, and
# runs only those: a change to one function reruns the tests that ran it (a function few tests reach:
# a minute or two; one every batch runs: a few minutes), and with no data yet (a new venv) it runs
# the whole suite once, traced. Its data lives in the venv, as mypy's cache does. testmon sees the
# code a test runs in its own process
# (threads included: the embedded sandbox's too), not what a subprocess runs (the console script, a
# notebook's kernel, a sweep's other processes): make test, which CI runs, is still the gate.
TESTMON  := --testmon
export TESTMON_DATAFILE := $(abspath $(VENV))/testmondata

check: $(STAMP)  ## lint and types beside the tests that ran the code changed since they last passed (pytest-testmon)
	@$(MAKE) --no-print-directory -j 2 lint suite PYTEST_ARGS='$(TESTMON) $(PYTEST_ARGS)'

smoke:  ## build the wheel (twine-checked); install it alone, with [sandbox] and with each light extra, in fresh venvs, and smoke-test each
	tests/smoke/run.sh

bench: $(STAMP)  ## benchmarks; each prints ratios measured side by side
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

notebooks: $(STAMP)  ## re-run the example notebooks and store their outputs
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.store_widget_state=False \
		--ExecutePreprocessor.record_timing=False notebooks/0*.ipynb

clean:
	rm -rf $(VENV) out site .pytest_cache .mypy_cache .ruff_cache
