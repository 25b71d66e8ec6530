# The two commands of the README. Each sets up .venv by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo gauntlet bench lint format clean rllib web agent-4p-hu

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# torch is pinned here (not in pyproject) so pip takes the CPU wheel on local disk
# instead of resolving a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev,train,eval,cluster,web]"
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

# The main job: train a fresh agent for about two minutes (an imitation warm start on
# the expert, then MaskablePPO), then a tournament of the fresh agent, the shipped one
# and two heuristics (duplicate deals, rotated seats): table, results folder, plots.
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)
demo: $(STAMP)
	$(PY) train.py --run-name $(DEMO_RUN) --imitate expert --imitate-decisions 100000 --imitate-epochs 4 \
		--opponents expert,expert,greedy,blitz31 --total-timesteps 2000000 --time-limit 60 --n-envs 64 \
		--n-steps 256 --batch-size 2048 --torch-threads 2 --learning-rate 1e-4 --clip-range 0.1 --ent-coef 0.001 \
		--eval-every 100000 --eval-games 100 --eval-opponents expert --report-games 400
	$(PY) evaluate.py --players ppo:path=runs/$(DEMO_RUN)/best_model.zip ppo expert greedy \
		--games 400 --workers 2 --out results/$(DEMO_RUN)

# The shipped agent's gauntlet (README, Evaluation): eight 4-seat tables, each played with
# the agent and with expert in its seat on the same deals; GAUNTLET_GAMES games a table:
# about 2 minutes on 2 cores, half of it the search table; results in
# results/standard-gauntlet_4p_ppo-s0 (-2, -3, ... after the first).
GAUNTLET_GAMES ?= 400
gauntlet: $(STAMP)
	$(PY) evaluate.py --gauntlet ppo --seats 4 --games $(GAUNTLET_GAMES) --workers 2

# The shipped 4-player agent's recipe (agent-4p-hu below; the first six runs are WARM_START):
# imitation of search with the knock weighted, rounds of DAgger with measured knocks (the third
# valued by the chance to win the game), an RL phase (`rl1`: a refit over the pooled decisions
# as the warm start, sharpened 3x, the KL anchor, and 4 million PPO steps in the league). Runs
# go to runs/$(AGENT)-*.
AGENT ?= agent4p-$(shell date +%Y%m%d-%H%M%S)
# decisions of agent-4p-hu's improvement step (every legal move measured by 8 play-outs)
IMPROVE_DECISIONS ?= 160000
# agent-4p-hu's heads-up teacher: the tables it plays (one player drawn per seat), the weight of a
# heads-up decision in its fit, and the opponents whose heads-up ends it labels (empty: every end)
HU_OPPONENTS ?= greedy,expert,blitz31
HU_WEIGHT ?= 3
HEADS_UP_AGAINST ?= greedy
# no PPO after a step that refits the model itself (the step's model is the run's)
HOLD := --total-timesteps 0 --eval-every 0 --workers 2
K := --imitate expert --opponents expert,greedy --total-timesteps 4096 --n-envs 2 --n-steps 1024 \
	--batch-size 1024 --learning-rate 1e-4 --clip-range 0.1 --ent-coef 0.001 --eval-every 100000 \
	--eval-games 400 --eval-opponents expert,greedy --checkpoint-every 100000
RL := --imitate expert --imitate-epochs 8 --imitate-sharpen 3 --league --league-population 16 \
	--league-population-share 0.3 --self-play 0.2 --snapshot-every 1000000 --pool-size 8 --pfsp-power 2 \
	--opponents expert,greedy,blitz31 --reward lives --gamma 0.99 --kl-coef 0.1 --vf-warmup 500000 \
	--n-envs 256 --n-steps 128 --batch-size 8192 --n-epochs 4 --learning-rate 1e-4 --clip-range 0.1 \
	--ent-coef 0.001 --total-timesteps 4000000 --eval-every 1000000 --eval-games 2000 \
	--eval-opponents expert,greedy --checkpoint-every 1000000 --torch-threads 2 --seed 71
define WARM_START
	$(PY) train.py --run-name $(AGENT)-ship5 --imitate search --imitate-decisions 240000 --imitate-epochs 8 \
		--imitate-knock-weight 5 --opponents expert,expert,greedy,blitz31 --total-timesteps 4096 --n-envs 2 \
		--n-steps 1024 --batch-size 1024 --learning-rate 1e-4 --clip-range 0.1 --ent-coef 0.001 \
		--eval-every 100000 --eval-games 400 --eval-opponents expert,greedy --checkpoint-every 100000 \
		--seed 4
	$(PY) train.py --run-name $(AGENT)-k1 $(K) --imitate-behaviour ppo:path=runs/$(AGENT)-ship5/best_model.zip \
		--imitate-knock-rollouts 4 --imitate-decisions 600000 --imitate-epochs 8 --seed 6
	$(PY) train.py --run-name $(AGENT)-k2 $(K) --imitate-behaviour ppo:path=runs/$(AGENT)-k1/best_model.zip \
		--imitate-knock-rollouts 8 --imitate-decisions 600000 --imitate-epochs 1 --seed 7
	$(PY) train.py --run-name $(AGENT)-k3 $(K) --imitate-epochs 8 --seed 8 --torch-threads 2 \
		--imitate-from runs/$(AGENT)-k1/demonstrations.npz,runs/$(AGENT)-k2/demonstrations.npz
	$(PY) train.py --run-name $(AGENT)-k6 $(K) --imitate-behaviour ppo:path=runs/$(AGENT)-k3/best_model.zip \
		--imitate-continuation behaviour --imitate-knock-rollouts 4 --imitate-knock-objective win \
		--imitate-decisions 600000 --imitate-epochs 8 --seed 11 --torch-threads 2
	$(PY) train.py --run-name $(AGENT)-rl1 $(RL) \
		--imitate-from runs/$(AGENT)-k1/demonstrations.npz,runs/$(AGENT)-k2/demonstrations.npz,runs/$(AGENT)-k6/demonstrations.npz
endef
# The shipped 4-player agent's recipe (agents/models/ppo_standard_4p.md): the first six steps
# above, then in place of `k8` and `rl` a step of policy improvement by measured moves (`imp`,
# with the opponent history in the observation) and the heads-up teacher (`hu`: the expert
# labels the decisions taken with two players in against HEADS_UP_AGAINST's players, greedy by
# default; empty: every end): 88.6 minutes on 2 cores (timed in one piece); the agent is
# runs/$(AGENT)-hu/final_model.zip. Earlier shipped models play by zoo id (ppo:model=ppo_standard_4p-v4).
agent-4p-hu: $(STAMP)
	$(WARM_START)
	$(PY) train.py --run-name $(AGENT)-imp --init-from runs/$(AGENT)-rl1/final_model.zip --opponent-history \
		--improve-decisions $(IMPROVE_DECISIONS) --improve-rollouts 8 --opponents greedy,expert $(HOLD) --torch-threads 1 --seed 211
	$(PY) train.py --run-name $(AGENT)-hu --init-from runs/$(AGENT)-imp/final_model.zip --opponent-history \
		--opponents $(HU_OPPONENTS) --heads-up-teacher expert $(if $(HEADS_UP_AGAINST),--heads-up-against $(HEADS_UP_AGAINST),) \
		--heads-up-decisions 3000000 --heads-up-others 0.35 --heads-up-weight $(HU_WEIGHT) --heads-up-epochs 8 \
		--heads-up-lr 5e-4 $(HOLD) --torch-threads 2 --seed 221
	$(PY) evaluate.py --players ppo:path=runs/$(AGENT)-hu/final_model.zip expert expert expert --games 2000 \
		--workers 2 --seed 21 --out results/$(AGENT)-vs-experts

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
