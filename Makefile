# The two commands of the README. Each sets up .venv by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo gauntlet bench bench-learning lint format clean rllib web notebook docs docs-serve $(addprefix agent-,$(ZOO))

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# torch is pinned here (not in pyproject) so pip takes the CPU wheel on local disk
# instead of resolving a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev,train,eval,cluster,web,notebook,docs]"
	touch $(STAMP)

# RLlib pins its own Gymnasium (ray[rllib] 2.60 needs gymnasium 1.2.2, .venv has the
# newest), so it gets a virtualenv of its own; torch first, pinned, as above.
RLLIB_VENV := .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_STAMP := $(RLLIB_VENV)/.installed

$(RLLIB_STAMP): pyproject.toml examples/rllib/requirements.txt
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) -m pip install --quiet --upgrade pip
	$(RLLIB_PY) -m pip install --quiet "torch==2.13.0"
	$(RLLIB_PY) -m pip install --quiet -e . -r examples/rllib/requirements.txt
	touch $(RLLIB_STAMP)

rllib: $(RLLIB_STAMP)

# The suite in .venv; the RLlib example's tests (real training, the env's checkers under
# RLlib's Gymnasium) in .venv-rllib.
test: $(STAMP) $(RLLIB_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest -q -n 2 --ignore=tests/test_rllib.py
	$(RLLIB_PY) -m pytest -q -p no:cacheprovider tests/test_rllib.py

# The main job: the default recipe for the standard 4-player table in a few minutes (an
# imitation of the expert with measured knocks, then a DAgger round; the run report says
# what each step added), then a tournament of the fresh agent, the shipped one and two
# heuristics (duplicate deals, rotated seats): table, results folder, plots.
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)
demo: $(STAMP)
	$(PY) train.py --run-name $(DEMO_RUN) --time-limit 150 --set imitation.decisions=60000 \
		--set dagger.decisions=60000 --report-games 400 --set table.report_most_games=2000 --workers 2
	$(PY) evaluate.py --players ppo:path=runs/$(DEMO_RUN)/best_model.zip ppo expert greedy \
		--games 400 --workers 2 --out results/$(DEMO_RUN)

# The shipped agent's gauntlet (README, Evaluation): eight 4-seat tables, each played with
# the agent and with expert in its seat on the same deals; GAUNTLET_GAMES games a table:
# about 2 minutes on 2 cores, half of it the search table; results in
# results/standard-gauntlet_4p_ppo-s0 (-2, -3, ... after the first).
GAUNTLET_GAMES ?= 400
gauntlet: $(STAMP)
	$(PY) evaluate.py --gauntlet ppo --seats 4 --games $(GAUNTLET_GAMES) --workers 2

# The zoo's models, each from its recipe file (recipes/<id>.toml; the model card gives its
# time and gauntlet): runs/<id>_<n>/best_model.zip.
ZOO := ppo_standard_2p ppo_standard_3p ppo_standard_4p ppo_stop_the_bus_4p ppo_no_elimination_4p ppo_cut_throat_3p ppo_switch_4p ppo_banking_4p
$(addprefix agent-,$(ZOO)): agent-%: $(STAMP)
	$(PY) train.py recipes/$*.toml

# The documentation site (mkdocs.yml): built into site/ with every link and reference
# checked, or served on http://127.0.0.1:8000/ while it is edited.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

# The training notebook executed headless on a run (RUN=runs/<name>: a run folder or a
# recipe run), its HTML written next to the run.
notebook: $(STAMP)
	$(PY) -m apps.notebook $(RUN)

# The learning benchmark (benchmarks/learning.py): the default recipe at every table for
# LEARN_MINUTES (default 30) with and without a teacher; TABLES=standard_4p,... a subset.
bench-learning: $(STAMP)
	$(PY) benchmarks/learning.py $(if $(TABLES),--tables $(TABLES),) $(if $(LEARN_MINUTES),--minutes $(LEARN_MINUTES),)

# Every case for a fixed time in its own process, one table, a PNG; PEERS=1 adds RLCard,
# OpenSpiel and PettingZoo (installed once into .venv-peers) and Gymnasium's Blackjack.
bench: $(STAMP)
	$(PY) benchmarks/suite.py $(if $(PEERS),--peers,) $(if $(BENCH_SECONDS),--seconds $(BENCH_SECONDS),)

# The web table on this machine (http://127.0.0.1:8031/): play the agents, watch records
# (records/) and results folders (results/).
web: $(STAMP)
	mkdir -p records results
	$(VENV)/bin/thirtyone-web --records records --results results $(if $(PORT),--port $(PORT),)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) $(RLLIB_VENV) build *.egg-info .pytest_cache .ruff_cache
