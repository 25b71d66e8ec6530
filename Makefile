# The two commands of the README. Each sets up .venv by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint format clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# torch is pinned here (not in pyproject) so pip takes the CPU wheel on local disk
# instead of resolving a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev,train,eval]"
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest -q -n 2

# A tournament between the built-in players (duplicate deals, rotated seats).
demo: $(STAMP)
	$(PY) evaluate.py --players expert blitz31 greedy random --games 400 --workers 2 --out results/demo

bench: $(STAMP)
	$(PY) benchmarks/engine_speed.py
	$(PY) benchmarks/harness_speed.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
