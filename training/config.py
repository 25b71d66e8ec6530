"""The configuration of a training run: :class:`TrainConfig`, one frozen dataclass
whose fields are the options of ``train.py`` (each field's ``--help`` text is its
``metadata["help"]``) and whose values are stored in the run folder's ``config.json``.
A config is checked whole when it is made (``__post_init__``): a bad value, from the
command line or a hand-edited ``config.json``, raises ``ValueError`` naming the field."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agents
from thirtyone_env.envs.env import EPISODES, REWARDS
from thirtyone_env.game.encoding import ENCODINGS
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import OBJECTIVES
from thirtyone_env.harness.equity import check_win_objective
from thirtyone_env.harness.files import check_name
from thirtyone_env.harness.parallel import BACKENDS, Backend
from training.seeding import MAX_SEED, RunSeeds

ACTIVATIONS = ("tanh", "relu")
VEC_ENVS = ("auto", "subproc", "dummy", "batched")
#: Largest network a run builds: layers and units per layer (bigger ones do not fit
#: in memory, and fail deep inside torch).
MAX_LAYERS, MAX_LAYER = 16, 8192
#: Most envs per vector env kind: subproc starts a process for each.
MAX_ENVS = {"subproc": 256, "dummy": 65_536, "batched": 65_536}
#: fields a resumed run may change: how far to go on and what it keeps, not what is trained
OPERATIONAL = (
    "total_timesteps",
    "time_limit",
    "cluster",
    "ray_address",
    "workers",
    "keep_checkpoints",
    "report_games",
    "report_most_games",
    "keep_worse",
)
#: what a field added since runs were first stored was in those runs, where its default
#: says otherwise: a config.json without the field goes on as its run was made (a run
#: stored before keep_checkpoints kept every checkpoint: resuming it deletes none unless
#: --keep-checkpoints is given)
UNSTORED = {"keep_checkpoints": 0, "report_games": 0, "report_most_games": 0}
#: Options of earlier versions that only experiments used, with the value that meant
#: "not used": a stored run that has it resumes; one that used the option is refused.
REMOVED = {
    "kl_half_life": 0,
    "kl_heads_up": 1.0,
    "improve_objective": "lives",
    "improve_players_in": 0,
    "endgame": 0.0,
}
#: where a run's collection and evaluations run: given anew on every start (a resume
#: takes them from its command line, else the defaults, never from config.json, which
#: runs stored before these fields existed lack); the results do not depend on them
PLACEMENT = ("cluster", "ray_address", "workers")
TYPE_WORDS = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false"}


def option(default: Any, help: str, *aliases: str) -> Any:
    """A config field with its ``--help`` text (and any other flags it answers to)."""
    return dataclasses.field(default=default, metadata={"help": help, "aliases": aliases})


@dataclass(frozen=True)
class TrainConfig:
    """Everything a run depends on (stored in ``config.json``; ``--resume`` reuses it)."""

    run_name: str = option("ppo", "the run's folder under runs_dir")
    runs_dir: str = option("runs", "the folder of run folders")
    rules: str = option("standard", "a rules preset, or house rules: PRESET:OPTION=VALUE,...")
    players: int = option(4, "table size")
    seat: str = option("random", "the learner's seat: 'random' or 0..players-1")
    episode: str = option("game", "'game' or 'round'")
    reward: str = option(
        "lives", "'lives', 'win' or 'rate' (lives plus 1/players a round played: lives lost a round)"
    )
    obs_encoding: str = option("flat", "'flat' (MlpPolicy) or 'dict' (MultiInputPolicy)")
    opponent_history: bool = option(
        False,
        "add the opponent_history part to the observation: per opponent, what the table showed "
        "of its play over the game's settled rounds (knocks, its turn at them, hands shown, "
        "pickups); the model then plays only with it (ThirtyOneEnv(opponent_history=True))",
    )
    opponents: str = option("expert", "comma-separated player specs, one drawn per seat per episode")
    self_play: float = option(0.0, "share of opponent seats taken by frozen snapshots of the learner")
    snapshot_every: int = option(100_000, "steps between self-play snapshots")
    pool_size: int = option(5, "snapshots in the self-play pool (newest kept)")
    opponent_deterministic: bool = option(True, "frozen snapshots play their argmax (else sample)")
    league: bool = option(
        False,
        "draw each game's opponents from a league: the --opponents players, a population of "
        "randomised heuristics (--league-population) and the learner's snapshots (--self-play), "
        "by prioritised fictitious self-play (--pfsp-power); rated with OpenSkill in league.json",
    )
    league_population: int = option(16, "randomised heuristic players in the league (training ranges)")
    league_population_share: float = option(
        0.5,
        "share of the league's heuristic draws that take a population member (the rest take "
        "the --opponents players)",
    )
    pfsp_power: float = option(
        2.0, "league draws weigh each member (1 - learner's win share against it) ** this (0: uniform)"
    )
    kl_coef: float = option(
        0.0,
        "weight of the KL divergence from the warm-start policy in PPO's loss (keeps long RL from "
        "drifting away from the warm start; 0: none; needs a warm start, imitate or init_from, and ent_coef > 0)",
    )
    vf_warmup: int = option(
        0,
        "steps at the start of PPO in which only the value function learns and the policy "
        "stays the warm start's (its first updates then follow advantages of a value "
        "function that knows the game)",
    )
    init_from: str = option(
        "",
        "a model zip (a run's model, or one of agents/models) whose policy and value networks start "
        "PPO instead of fresh ones, read without unpickling (same table, rules and net_arch); with "
        "--kl-coef the anchor is its policy; '' = fresh networks",
    )
    improve_decisions: int = option(
        0,
        "a step of policy improvement before PPO, from the init_from model: it plays this many of "
        "its seat's decisions at the run's tables while every legal move is measured by paired "
        "playouts (it playing on), then its actor is fitted to prefer the moves of higher measured "
        "value (training/measured_moves.py); the anchor is the improved policy; 0: none",
    )
    improve_rollouts: int = option(8, "paired playouts per measured move of the improvement step")
    improve_epochs: int = option(8, "passes of the improvement step's fit over its decisions")
    improve_lr: float = option(3e-5, "learning rate of the improvement step's fit")
    improve_kl: float = option(
        0.01, "weight of the KL divergence from the starting policy in the improvement step's fit"
    )
    heads_up_teacher: str = option(
        "",
        "a player spec (e.g. 'expert') whose moves the init_from model learns at the heads-up end, "
        "before PPO and after any improvement step: the model plays --heads-up-decisions of its "
        "seat's decisions at the run's tables, each taken with two players in labelled by this "
        "teacher and every other by the model's own move, and is refitted to them (DAgger on the "
        "model's states); the anchor is the refitted policy; '' = none",
    )
    heads_up_against: str = option(
        "",
        "comma-separated specs among --opponents: the heads-up teacher labels only the games' ends "
        "against these (the collection reads who sits at the table; the model sees only its "
        "observation, where --opponent-history tells them apart); '' = against anyone",
    )
    heads_up_decisions: int = option(600_000, "decisions the heads-up teacher step plays")
    heads_up_others: float = option(
        1.0,
        "share of the heads-up teacher step's decisions taken with three or more players in that "
        "are kept for its refit (each job keeps a random such share, drawn from its seed; every "
        "heads-up decision is kept): a long collection gathers many heads-up decisions without a "
        "fit over all the others; 1 = all",
    )
    heads_up_weight: float = option(
        5.0, "weight of a heads-up decision against any other in the heads-up teacher step's fit"
    )
    heads_up_epochs: int = option(6, "passes of the heads-up teacher step's fit over its decisions")
    heads_up_lr: float = option(3e-4, "learning rate of the heads-up teacher step's fit")
    gauntlet_every: int = option(0, "steps between learning-curve gauntlets (0: never)")
    gauntlet_games: int = option(100, "games per table of the learning-curve gauntlet")
    imitate: str = option("", "a teacher player spec (e.g. 'expert') to imitate before PPO; '' = none")
    imitate_decisions: int = option(200_000, "teacher decisions recorded for the imitation warm start")
    imitate_epochs: int = option(4, "passes over them")
    imitate_knock_weight: float = option(1.0, "loss weight of decisions where knocking is legal")
    imitate_sharpen: float = option(
        1.0,
        "multiply the imitation's action logits by this before RL (its temperature 1/this): a "
        "fitted imitation is soft where the teacher's choices look alike, and PPO samples it, "
        "so its rollouts play far worse than its argmax; the anchor is the sharpened policy",
    )
    imitate_from: str = option(
        "", "demonstrations.npz files of earlier runs to fit, comma-separated ('' = collect)"
    )
    imitate_with: str = option(
        "",
        "demonstrations.npz files of earlier runs, separated by commas, fitted together with "
        "the ones this run collects (DAgger's aggregated data set; '' = this run's only)",
    )
    imitate_behaviour: str = option(
        "",
        "a player spec that plays the moves while the teacher labels them (DAgger: the "
        "learner's model); '' = the teacher",
    )
    imitate_knock_rollouts: int = option(
        0,
        "paired plays of KNOCK vs the teacher's move per knock decision, on the true hands and "
        "pile with the stock shuffled for each, to learn the knock from its measured gain "
        "(0 = copy the teacher)",
    )
    imitate_continuation: str = option(
        "teacher", "who plays on in the agent's seat there: teacher or behaviour"
    )
    imitate_knock_objective: str = option(
        "lives",
        "what a measured knock's play-outs value: 'lives' (the lives the round costs) or 'win' (the "
        "chance to win the game from the standing it leaves, in lives at the start: the last life "
        "and opponents' eliminations count for what they do to the game)",
    )
    total_timesteps: int = option(
        1_000_000, "PPO steps to train to (a resume may raise it; 0: no PPO, the steps before it only)"
    )
    time_limit: float = option(
        0.0,
        "stop after this many seconds of PPO, and stop a collection before PPO after the job that "
        "ends past it (0: no limit); the run can be resumed",
    )
    n_envs: int = option(8, "games played at once (the vector env's size)")
    vec_env: str = option(
        "auto",
        "'batched' (the compiled vector env: every opponent, self-play snapshots included, asked for "
        "all its games at once), 'subproc' (a process per env), 'dummy' (in process), or 'auto': "
        "batched wherever the kernels play the rules (the stock game with lives, flat encoding), else subproc",
        "--vec",
    )
    learning_rate: float = option(3e-4, "PPO's learning rate")
    n_steps: int = option(512, "steps per env per update")
    batch_size: int = option(512, "PPO's minibatch size")
    n_epochs: int = option(4, "PPO's passes over each rollout")
    gamma: float = option(0.995, "discount factor")
    gae_lambda: float = option(0.95, "GAE's lambda")
    clip_range: float = option(0.2, "PPO's clip range")
    ent_coef: float = option(0.01, "entropy bonus coefficient")
    vf_coef: float = option(0.5, "value loss coefficient")
    net_arch: str = option("256,256", "hidden layer sizes of the policy and value networks")
    activation: str = option("tanh", "'tanh' or 'relu'")
    seed: int = option(0, "the run's seed: every random stream of the run derives from it")
    eval_every: int = option(100_000, "steps between ladder evaluations (0: never)")
    eval_games: int = option(400, "games per evaluation table")
    eval_opponents: str = option("expert,greedy", "one table per spec: the learner against three of it")
    checkpoint_every: int = option(100_000, "steps between checkpoints")
    report_games: int = option(
        1000,
        "games a table in the run report (report.md): each step's model against the model it "
        "started from, on the same deals (0: no comparison)",
    )
    report_most_games: int = option(
        32_000,
        "the most games a report table plays on to while its wins interval is wider than a "
        "2-point difference needs (a 2-point difference takes 2,000 to 10,000)",
    )
    keep_worse: bool = option(
        False, "make a step's model the run's model even when the report finds it significantly worse"
    )
    keep_checkpoints: int = option(
        5,
        "checkpoints kept in the run folder: the newest this many, and the one of the best "
        "evaluation so far (a resume after a crash restores the best model from it); 0 keeps all",
    )
    cluster: str = option(
        "local",
        "where the collection and the evaluations run: 'local' (processes of this machine) or 'ray' "
        "(a Ray cluster: --ray-address, else RAY_ADDRESS, else a local Ray on 127.0.0.1); the results "
        "are the same on both",
    )
    ray_address: str = option(
        "", "the Ray cluster to join with --cluster ray ('' = RAY_ADDRESS or a new local Ray)"
    )
    workers: int = option(
        0,
        "processes (or Ray tasks in flight) of the collection and the evaluations; 0: the collection "
        "on min(n_envs, CPUs) processes and the evaluations in this one (local), twice the cluster's "
        "CPUs (ray)",
    )
    device: str = option("cpu", "the torch device to train on ('auto': CUDA where there is one)")
    torch_threads: int = option(1, "torch threads of the learner (1 suits small MLPs beside env workers)")

    def __post_init__(self) -> None:
        self._check_types()
        self._check_numbers()
        Rules.preset(self.rules)  # names the presets on a typo
        Rules.preset(self.rules).check_num_players(self.players)
        if self.seat != "random" and not (self.seat.isdigit() and int(self.seat) < self.players):
            raise ValueError(f"seat={self.seat!r}: use 'random' or a seat 0..{self.players - 1}")
        for name, value, allowed in (
            ("episode", self.episode, EPISODES),
            ("reward", self.reward, REWARDS),
            ("obs_encoding", self.obs_encoding, ENCODINGS),
            ("vec_env", self.vec_env, VEC_ENVS),
            ("activation", self.activation, ACTIVATIONS),
            ("imitate_continuation", self.imitate_continuation, ("teacher", "behaviour")),
            ("imitate_knock_objective", self.imitate_knock_objective, OBJECTIVES),
        ):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} is not allowed; allowed values: {list(allowed)}")
        check_name(self.run_name, "run_name")  # '.' and '..' are no run folder
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.run_name):
            raise ValueError(f"run_name={self.run_name!r}: use letters, digits, '_', '-', '.'")
        if not 0.0 <= self.self_play <= 1.0:
            raise ValueError(f"self_play={self.self_play!r} must be a share in [0, 1]")
        for name in ("opponents", "eval_opponents", "heads_up_against"):
            value = getattr(self, name)
            if value.strip() and any(not part.strip() for part in value.split(",")):
                raise ValueError(
                    f"{name}={value!r} has an empty entry: name a player between every two commas"
                )
        if not self.opponent_specs and self.self_play < 1.0:
            raise ValueError("opponents is empty: name at least one player (or use --self-play 1)")
        if self.imitate and self.obs_encoding != "flat":
            raise ValueError("the imitation warm start trains the flat encoding: use --obs-encoding flat")
        teachers = [s for s in (self.imitate, self.imitate_behaviour, self.heads_up_teacher) if s]
        for spec in (*self.opponent_specs, *self.eval_specs, *teachers):
            agents.check_spec(spec)  # an unknown player or option raises here, with its name; builds none
        if self.vec_env == "batched" and self.obs_encoding != "flat":
            raise ValueError(
                "the batched env (--vec batched) observes the flat encoding: use --obs-encoding flat"
            )
        if self.league and self.vec != "batched":
            raise ValueError(
                "--league plays on the batched env (the stock game with lives, flat encoding, --vec auto or batched)"
            )
        if self.kl_coef < 0 or self.league_population < 0 or self.pfsp_power < 0:
            raise ValueError("kl_coef, league_population and pfsp_power must be 0 or more")
        if self.kl_coef > 0 and not ((self.imitate or self.init_from) and self.ent_coef > 0):
            raise ValueError(
                "--kl-coef anchors PPO to the warm start: it needs --imitate or --init-from, and ent_coef > 0"
            )
        if self.init_from and self.imitate:
            raise ValueError("init_from and imitate are two warm starts: give one of them")
        if not 0.0 <= self.league_population_share <= 1.0:
            raise ValueError(
                f"league_population_share={self.league_population_share!r} must be a share in [0, 1]"
            )
        if self.vf_warmup < 0:
            raise ValueError(f"vf_warmup={self.vf_warmup!r} must be 0 (none) or more steps")
        if self.gauntlet_every < 0 or self.gauntlet_games < 1:
            raise ValueError("gauntlet_every must be 0 or more and gauntlet_games at least 1")
        if self.self_play > 0 and self.obs_encoding != "flat":
            raise ValueError("self-play snapshots play the flat encoding: use --obs-encoding flat")
        if self.total_timesteps < 0:
            raise ValueError(f"total_timesteps={self.total_timesteps!r} must be 0 (no PPO) or more")
        for name in (
            "n_envs",
            "n_steps",
            "batch_size",
            "n_epochs",
            "pool_size",
            "torch_threads",
            "imitate_decisions",
            "imitate_epochs",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be at least 1")
        if self.report_most_games < 0:
            raise ValueError(f"report_most_games={self.report_most_games!r} must be 0 or more")
        if self.report_games < 0:
            raise ValueError(f"report_games={self.report_games} must be 0 (no comparison) or more")
        for name in ("snapshot_every", "checkpoint_every", "eval_games"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be at least 1")
        most = MAX_ENVS[self.vec]
        if self.n_envs > most:
            raise ValueError(
                f"n_envs={self.n_envs!r}: at most {most:,} with the {self.vec} vector env "
                f"({'a process' if self.vec == 'subproc' else 'a game'} each)"
            )
        if (self.imitate_from or self.imitate_with) and not self.imitate:
            raise ValueError(
                "imitate_from and imitate_with need --imitate (the teacher the demonstrations came from)"
            )
        if (self.imitate_behaviour or self.imitate_knock_rollouts) and not self.imitate:
            raise ValueError("imitate_behaviour and imitate_knock_rollouts need --imitate (the teacher)")
        if self.imitate_continuation == "behaviour" and not self.imitate_behaviour:
            raise ValueError(
                "imitate_continuation='behaviour' needs --imitate-behaviour (the player who plays on)"
            )
        if self.imitate_knock_objective != "lives":
            if not self.imitate_knock_rollouts:
                raise ValueError(
                    "imitate_knock_objective values measured knocks: it needs --imitate-knock-rollouts"
                )
            check_win_objective(Rules.resolve(self.rules), self.players)
        if self.imitate_knock_rollouts < 0:
            raise ValueError(
                f"imitate_knock_rollouts={self.imitate_knock_rollouts!r} must be 0 (none) or more"
            )
        if self.improve_decisions < 0:
            raise ValueError(f"improve_decisions={self.improve_decisions!r} must be 0 (none) or more")
        if self.improve_decisions and not self.init_from:
            raise ValueError("improve_decisions improves a trained model: it needs --init-from")
        for name in ("improve_rollouts", "improve_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be at least 1")
        if self.improve_lr <= 0:
            raise ValueError(f"improve_lr={self.improve_lr!r} must be positive")
        if self.improve_kl < 0:
            raise ValueError(f"improve_kl={self.improve_kl!r} must be 0 or more")
        against = [a.strip() for a in self.heads_up_against.split(",") if a.strip()]
        if against and not self.heads_up_teacher:
            raise ValueError(
                "heads_up_against narrows the heads-up teacher's labels: it needs --heads-up-teacher"
            )
        if any(a not in self.opponent_specs for a in against):
            odd = [a for a in against if a not in self.opponent_specs]
            raise ValueError(
                f"heads_up_against names {odd}, not among the run's opponents {self.opponent_specs}"
            )
        if self.heads_up_teacher and not self.init_from:
            raise ValueError("heads_up_teacher refits a trained model: it needs --init-from")
        if self.heads_up_teacher and self.obs_encoding != "flat":
            raise ValueError("the heads-up teacher step fits the flat encoding: use --obs-encoding flat")
        if self.heads_up_decisions < 1 or self.heads_up_epochs < 1:
            name = "heads_up_decisions" if self.heads_up_decisions < 1 else "heads_up_epochs"
            raise ValueError(f"{name}={getattr(self, name)!r} must be at least 1")
        if not 0 < self.heads_up_others <= 1:
            raise ValueError(f"heads_up_others={self.heads_up_others!r} must be a share in (0, 1]")
        if self.heads_up_weight <= 0 or self.heads_up_lr <= 0:
            name = "heads_up_weight" if self.heads_up_weight <= 0 else "heads_up_lr"
            raise ValueError(f"{name}={getattr(self, name)!r} must be positive")
        if self.imitate_sharpen <= 0:
            raise ValueError(f"imitate_sharpen={self.imitate_sharpen!r} must be positive")
        if self.imitate_sharpen != 1.0 and not self.imitate:
            raise ValueError("imitate_sharpen sharpens the imitation: it needs --imitate")
        if self.imitate_knock_weight <= 0:
            raise ValueError(f"imitate_knock_weight={self.imitate_knock_weight!r} must be positive")
        if self.cluster not in BACKENDS:
            raise ValueError(f"cluster={self.cluster!r} is not allowed; allowed values: {list(BACKENDS)}")
        if self.ray_address and self.cluster != "ray":
            raise ValueError("ray_address needs --cluster ray")
        if self.workers < 0:
            raise ValueError(f"workers={self.workers!r} must be 0 (automatic) or more")
        if self.cluster == "ray":
            self.backend(1, 1)  # Ray installed?
        if self.time_limit < 0:
            raise ValueError(f"time_limit={self.time_limit!r} must be 0 (none) or more seconds")
        if self.eval_every < 0:
            raise ValueError(f"eval_every={self.eval_every!r} must be 0 (never) or more")
        if self.keep_checkpoints < 0:
            raise ValueError(f"keep_checkpoints={self.keep_checkpoints!r} must be 0 (keep all) or more")
        self.hidden_sizes  # noqa: B018 (validates)

    def _check_types(self) -> None:
        """Each field of its declared type (a hand-edited config.json can hold anything):
        ``ValueError`` naming the field; an integer given for a float is taken as one."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}[str(f.type)]
            if isinstance(value, bool) != (f.type == "bool") or not isinstance(value, expected):
                raise ValueError(
                    f"{f.name}={value!r} must be {TYPE_WORDS[str(f.type)]}, not {type(value).__name__}"
                )
            if f.type == "float":
                object.__setattr__(self, f.name, float(value))

    def _check_numbers(self) -> None:
        """Numbers in their domains (argparse takes 'nan' and 'inf' for a float)."""
        for f in dataclasses.fields(self):
            if f.type == "float" and not math.isfinite(getattr(self, f.name)):
                raise ValueError(f"{f.name}={getattr(self, f.name)!r} must be a finite number")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed={self.seed} must be in 0..{MAX_SEED} (the seeds numpy and SB3 take)")
        for name, ok, rule in (
            ("learning_rate", self.learning_rate > 0, "positive"),
            ("gamma", 0 <= self.gamma <= 1, "in [0, 1]"),
            ("gae_lambda", 0 <= self.gae_lambda <= 1, "in [0, 1]"),
            ("clip_range", self.clip_range > 0, "positive"),
            ("ent_coef", self.ent_coef >= 0, "0 or more"),
            ("vf_coef", self.vf_coef >= 0, "0 or more"),
        ):
            if not ok:
                raise ValueError(f"{name}={getattr(self, name)!r} must be {rule}")

    @property
    def vec(self) -> str:
        """The vector env this run uses: ``auto`` is ``batched`` wherever the kernels
        play the rules (the stock game with lives) and the learner observes the flat
        encoding: every opponent plays there, the kernels' own (greedy, random) inside
        them and the others (expert, Blitz31, frozen networks, self-play snapshots)
        asked for all their waiting games at once; else ``subproc``."""
        if self.vec_env != "auto":
            return self.vec_env
        from thirtyone_env.envs.vector import batchable

        batched = self.obs_encoding == "flat" and batchable(Rules.resolve(self.rules))
        return "batched" if batched else "subproc"

    @property
    def opponent_specs(self) -> list[str]:
        return [s.strip() for s in self.opponents.split(",") if s.strip()]

    @property
    def eval_specs(self) -> list[str]:
        return [s.strip() for s in self.eval_opponents.split(",") if s.strip()]

    @property
    def hidden_sizes(self) -> list[int]:
        try:
            sizes = [int(x) for x in self.net_arch.split(",") if x.strip()]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 1:
            raise ValueError(f"net_arch={self.net_arch!r}: give layer sizes like '256,256'")
        if max(sizes) > MAX_LAYER or len(sizes) > MAX_LAYERS:
            raise ValueError(
                f"net_arch={self.net_arch!r}: at most {MAX_LAYERS} layers of at most {MAX_LAYER:,} units each"
            )
        return sizes

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.run_name

    def backend(self, tasks: int, auto: int) -> Backend:
        """Where ``tasks`` collection or evaluation tasks run: Ray, or ``workers``
        local processes (0: ``auto``), never more than there are tasks."""
        if self.cluster == "ray":
            return Backend("ray", self.workers, self.ray_address or None)
        return Backend("local", max(1, min(self.workers or auto, tasks)))

    @property
    def seeds(self) -> RunSeeds:
        """The seed of every random stream of the run (:mod:`training.seeding`)."""
        return RunSeeds(self.seed)
