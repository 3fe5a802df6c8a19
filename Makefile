# Each target creates .venv when missing and installs what it needs.
VENV   ?= .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test bench clean

$(PYTHON):
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)  ## the main job against an embedded sandbox; results in ./out
	$(PYTHON) -m imagekit.cli demo --out out

test: $(STAMP)  ## the whole test suite
	$(PYTHON) -m pytest

bench: $(STAMP)  ## benchmarks; each prints ratios measured side by side
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

clean:
	rm -rf $(VENV) out .pytest_cache
