"""Train a Thirty-One player with MaskablePPO, against heuristics and itself.

    python train.py --run-name mine --total-timesteps 2000000 --opponents expert,greedy
    python train.py --resume runs/mine                 # go on from the last checkpoint
    python train.py --resume runs/mine --total-timesteps 4000000   # ... and further
    (on resume only --total-timesteps and --time-limit may differ from the run's config)

Every option is a field of :class:`TrainConfig` (``--help`` lists them). A run writes
``runs/<name>/``: ``config.json``, ``versions.json``, ``logs/`` (TensorBoard and
``progress.csv``; a resumed run keeps the earlier part as ``progress_to_<steps>.csv``,
never over an earlier one), ``evaluations.csv`` (the periodic ladder evaluation),
``checkpoints/`` (``ckpt_<steps>.zip``), ``pool/`` (self-play snapshots),
``demonstrations.npz`` (the imitation warm start's decisions), ``best_model.zip`` (best
evaluation so far) and ``final_model.zip``. Every file is written atomically with the
user's umask. Evaluation rows later than the checkpoint a run resumes from (a crash)
are set aside in ``evaluations_set_aside.csv`` with the best model they chose.

Every option is checked before the run folder is created; the folder is locked for
the whole run (a second train.py on it is refused). Ctrl-C (or SIGTERM) saves a
checkpoint before exiting, or during the warm start the decisions collected so far
(``--resume`` goes on from them); a fresh start that fails before saving anything
removes its folder. Bad input exits with code 2 and a message that names the problem.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import os
import platform
import re
import shutil
import signal
import sys
import time
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

import agents
from thirtyone_env.encoding import ENCODINGS
from thirtyone_env.env import EPISODES, REWARDS
from thirtyone_env.files import FolderLock, atomic_write, check_name, check_writable_dir, make_dir
from thirtyone_env.rules import Rules

ACTIVATIONS = ("tanh", "relu")
VEC_ENVS = ("auto", "subproc", "dummy", "batched")
#: Largest network train.py builds: layers and units per layer (bigger ones do not fit
#: in memory, and fail deep inside torch).
MAX_LAYERS, MAX_LAYER = 16, 8192
#: Most envs per vector env kind: subproc starts a process for each.
MAX_ENVS = {"subproc": 256, "dummy": 65_536, "batched": 65_536}
CHECKPOINT = re.compile(r"ckpt_(\d+)\.zip$")
#: fields a resumed run may change: how far to go on, not what is trained
OPERATIONAL = ("total_timesteps", "time_limit")
#: seeds numpy's legacy generator (which SB3 seeds) takes
MAX_SEED = 2**32 - 1
#: torch device types a run can train on ('auto' too: SB3 picks CUDA where there is one)
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")
TYPE_WORDS = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false"}


@dataclass(frozen=True)
class TrainConfig:
    """Everything a run depends on (stored in ``config.json``; ``--resume`` reuses it)."""

    run_name: str = "ppo"  #: folder under runs_dir
    runs_dir: str = "runs"
    rules: str = "standard"  #: a rules preset
    players: int = 4  #: table size
    seat: str = "random"  #: the learner's seat: 'random' or 0..players-1
    episode: str = "game"  #: 'game' or 'round'
    reward: str = "lives"  #: 'lives' or 'win'
    obs_encoding: str = "flat"  #: 'flat' (MlpPolicy) or 'dict' (MultiInputPolicy)
    opponents: str = "expert"  #: comma-separated player specs, one drawn per seat per episode
    self_play: float = 0.0  #: share of opponent seats taken by frozen snapshots of the learner
    snapshot_every: int = 100_000  #: steps between self-play snapshots
    pool_size: int = 5  #: snapshots in the self-play pool (newest kept)
    opponent_deterministic: bool = True  #: frozen snapshots play their argmax (else sample)
    imitate: str = ""  #: a teacher player spec (e.g. 'expert') to imitate before PPO; '' = none
    imitate_decisions: int = 200_000  #: teacher decisions recorded for the imitation warm start
    imitate_epochs: int = 4  #: passes over them
    imitate_knock_weight: float = 1.0  #: loss weight of decisions where knocking is legal
    imitate_from: str = ""  #: demonstrations.npz files of earlier runs to fit, comma-separated ('' = collect)
    imitate_behaviour: str = ""  #: a player spec that plays the moves while the teacher labels them (DAgger: the learner's model); '' = the teacher
    imitate_knock_rollouts: int = 0  #: paired plays of KNOCK vs the teacher's move on the true position per knock decision, to learn the knock from its measured gain (0 = copy the teacher)
    imitate_continuation: str = "teacher"  #: who plays on in the agent's seat there: teacher or behaviour
    total_timesteps: int = 1_000_000
    time_limit: float = 0.0  #: stop after this many seconds of PPO (0: no limit); the run can be resumed
    n_envs: int = 8
    vec_env: str = "auto"  #: 'batched' (compiled, thirtyone_env.vector), 'subproc' (a process per env), 'dummy' (in process), or 'auto': batched where the opponents are compiled, else subproc (also --vec)
    learning_rate: float = 3e-4
    n_steps: int = 512  #: steps per env per update
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    net_arch: str = "256,256"  #: hidden layer sizes of the policy and value networks
    activation: str = "tanh"
    seed: int = 0
    eval_every: int = 100_000  #: steps between ladder evaluations (0: never)
    eval_games: int = 400  #: games per evaluation table
    eval_opponents: str = "expert,greedy"  #: one table per spec: the learner against three of it
    checkpoint_every: int = 100_000
    device: str = "cpu"
    torch_threads: int = 1  #: torch threads of the learner (1 suits small MLPs beside env workers)

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
        ):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} is not allowed; allowed values: {list(allowed)}")
        check_name(self.run_name, "run_name")  # '.' and '..' are no run folder
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.run_name):
            raise ValueError(f"run_name={self.run_name!r}: use letters, digits, '_', '-', '.'")
        if not 0.0 <= self.self_play <= 1.0:
            raise ValueError(f"self_play={self.self_play!r} must be a share in [0, 1]")
        if not self.opponent_specs and self.self_play < 1.0:
            raise ValueError("opponents is empty: name at least one player (or use --self-play 1)")
        if self.imitate and self.obs_encoding != "flat":
            raise ValueError("the imitation warm start trains the flat encoding: use --obs-encoding flat")
        teachers = [s for s in (self.imitate, self.imitate_behaviour) if s]
        for spec in (*self.opponent_specs, *self.eval_specs, *teachers):
            agents.check_spec(spec)  # an unknown player or option raises here, with its name; builds none
        if self.vec_env == "batched" and self.obs_encoding != "flat":
            raise ValueError(
                "the batched env (--vec batched) observes the flat encoding: use --obs-encoding flat"
            )
        if self.self_play > 0 and self.obs_encoding != "flat":
            raise ValueError("self-play snapshots play the flat encoding: use --obs-encoding flat")
        for name in (
            "total_timesteps",
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
        for name in ("snapshot_every", "checkpoint_every", "eval_games"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be at least 1")
        most = MAX_ENVS[self.vec]
        if self.n_envs > most:
            raise ValueError(
                f"n_envs={self.n_envs!r}: at most {most:,} with the {self.vec} vector env "
                f"({'a process' if self.vec == 'subproc' else 'a game'} each)"
            )
        if self.imitate_from and not self.imitate:
            raise ValueError("imitate_from needs --imitate (the teacher the demonstrations came from)")
        if (self.imitate_behaviour or self.imitate_knock_rollouts) and not self.imitate:
            raise ValueError("imitate_behaviour and imitate_knock_rollouts need --imitate (the teacher)")
        if self.imitate_continuation == "behaviour" and not self.imitate_behaviour:
            raise ValueError(
                "imitate_continuation='behaviour' needs --imitate-behaviour (the player who plays on)"
            )
        if self.imitate_knock_rollouts < 0:
            raise ValueError(
                f"imitate_knock_rollouts={self.imitate_knock_rollouts!r} must be 0 (none) or more"
            )
        if self.imitate_knock_weight <= 0:
            raise ValueError(f"imitate_knock_weight={self.imitate_knock_weight!r} must be positive")
        if self.time_limit < 0:
            raise ValueError(f"time_limit={self.time_limit!r} must be 0 (none) or more seconds")
        if self.eval_every < 0:
            raise ValueError(f"eval_every={self.eval_every!r} must be 0 (never) or more")
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
        """The vector env this run uses: ``auto`` is ``batched`` when the kernels play
        every opponent (greedy or random, one name, no self-play, the stock game with
        lives, flat encoding; as fast per step there and learning the same), else
        ``subproc``."""
        if self.vec_env != "auto":
            return self.vec_env
        from thirtyone_env.vector import batchable

        specs = self.opponent_specs
        compiled = (
            self.self_play == 0
            and len(set(specs)) == 1
            and specs[0] in ("greedy", "random")
            and self.obs_encoding == "flat"
            and batchable(Rules.resolve(self.rules))
        )
        return "batched" if compiled else "subproc"

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


# -- files ----------------------------------------------------------------------------


def save_model(model: Any, path: Path) -> None:
    """An SB3 zip with the actor described in plain JSON (``thirtyone.json``), so a
    player reads it without unpickling anything (:mod:`agents.ppo`)."""
    from agents.ppo import model_bytes

    atomic_write(path, model_bytes(model))


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("thirtyone", "numpy", "gymnasium", "stable_baselines3", "sb3_contrib", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def last_checkpoint(run_dir: Path) -> Path | None:
    found = [
        (int(m.group(1)), p)
        for p in (run_dir / "checkpoints").glob("ckpt_*.zip")
        if (m := CHECKPOINT.search(p.name))
    ]
    return max(found)[1] if found else None


def checkpoint_steps(path: Path | None) -> int:
    """The steps a checkpoint's name says (0 for none: a run from the start)."""
    m = CHECKPOINT.search(path.name) if path is not None else None
    return int(m.group(1)) if m else 0


def free_name(path: Path) -> Path:
    """``path``, else ``<stem>_2<suffix>``, ``<stem>_3<suffix>``, ...: the first name not
    taken (a log or result is never replaced)."""
    candidate, k = path, 1
    while candidate.exists() or candidate.is_symlink():
        k += 1
        candidate = path.with_name(f"{path.stem}_{k}{path.suffix}")
    return candidate


# -- environments ----------------------------------------------------------------------


def make_env_fn(config: TrainConfig, rank: int, opponents_only: bool = False) -> Any:
    """A picklable env factory for one vector slot (each slot builds its own seats);
    with ``opponents_only``, a factory of the opponent seats alone."""
    trainer = os.getpid()  # the process that made the factory handles Ctrl-C

    def seats() -> list[Any]:
        from agents.league import LeagueSeat

        pool = str(config.run_dir / "pool") if config.self_play > 0 else None
        return [
            LeagueSeat(
                config.opponent_specs, pool, config.self_play, config.pool_size, config.opponent_deterministic
            )
            for _ in range(config.players - 1)
        ]

    if opponents_only:
        return seats

    def build() -> Any:
        from sb3_contrib.common.wrappers import ActionMasker
        from stable_baselines3.common.monitor import Monitor

        from thirtyone_env.env import ThirtyOneEnv

        if os.getpid() != trainer:  # an env worker process: Ctrl-C is the trainer's to handle
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        env = ThirtyOneEnv(
            num_players=config.players,
            rules=config.rules,
            opponents=seats(),
            seat="random" if config.seat == "random" else int(config.seat),
            episode=config.episode,
            reward=config.reward,
            obs_encoding=config.obs_encoding,
        )
        return ActionMasker(Monitor(env), lambda e: e.unwrapped.action_masks())

    return build


def make_vec(config: TrainConfig) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if config.vec == "batched":
        from thirtyone_env.vector import sb3_vec_env

        specs = config.opponent_specs
        if config.self_play == 0 and all(s in ("greedy", "random") for s in specs) and len(set(specs)) == 1:
            opponents: Any = specs[0]  # played inside the kernels
        else:  # other players: one env per game (same API, no speed-up)
            opponents = make_env_fn(config, -1, opponents_only=True)
        vec = VecMonitor(
            sb3_vec_env(
                config.n_envs,
                config.players,
                config.rules,
                opponents=opponents,
                seat="random" if config.seat == "random" else int(config.seat),
                episode=config.episode,
                reward=config.reward,
            )
        )
        vec.seed(config.seed)
        return vec
    fns = [make_env_fn(config, i) for i in range(config.n_envs)]
    if config.vec == "subproc" and config.n_envs > 1:
        vec = SubprocVecEnv(fns, start_method="fork" if sys.platform != "win32" else "spawn")
    else:
        vec = DummyVecEnv(fns)
    vec.seed(config.seed)
    return vec


# -- evaluation ---------------------------------------------------------------------------


EVAL_FIELDS = (
    "timesteps",
    "opponent",
    "games",
    "win_rate",
    "win_low",
    "win_high",
    "lives_lost_per_round",
    "lives_low",
    "lives_high",
    "opponent_lives_lost_per_round",
)


def evaluate_policy_file(path: Path, config: TrainConfig, spec: str, games: int, seed: int) -> dict[str, Any]:
    """The learner (seat-rotated, duplicate deals) against three copies of ``spec``."""
    from thirtyone_env.evaluation import TournamentConfig, run_tournament, summarize

    players = (f"ppo:path={path}",) + (spec,) * (config.players - 1)
    tc = TournamentConfig(players=players, games=games, rules=config.rules, seed=seed, workers=1)
    summary = summarize(tc, run_tournament(tc, agents.from_spec))
    me, opp = summary[next(iter(summary))], list(summary.values())[1:]
    return {
        "opponent": spec,
        "games": tc.total_games,
        "win_rate": me["win_rate"][0],
        "win_low": me["win_rate"][1],
        "win_high": me["win_rate"][2],
        "lives_lost_per_round": me["lives_lost_per_round"][0],
        "lives_low": me["lives_lost_per_round"][1],
        "lives_high": me["lives_lost_per_round"][2],
        "opponent_lives_lost_per_round": float(np.mean([o["lives_lost_per_round"][0] for o in opp])),
    }


def read_evaluations(run_dir: Path) -> list[dict[str, str]]:
    """The rows of ``evaluations.csv`` in the order written; ``ValueError`` naming the
    file when it is not one this script wrote (missing columns, a bad number)."""
    path = run_dir / "evaluations.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for k, row in enumerate(rows, 2):
        try:
            missing = [name for name in EVAL_FIELDS if row.get(name) is None]
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
            int(row["timesteps"]), float(row["win_rate"])
        except ValueError as e:
            raise ValueError(f"{path} line {k} is not an evaluation row ({e})") from None
    return rows


def write_evaluations(run_dir: Path, rows: list[dict[str, Any]], name: str = "evaluations.csv") -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EVAL_FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row[k] for k in EVAL_FIELDS})
    atomic_write(run_dir / name, buf.getvalue())


def best_evaluation(rows: list[dict[str, str]]) -> tuple[int | None, float]:
    """The evaluation that chose ``best_model.zip`` (its timesteps and mean win rate):
    the last to beat every earlier one, as the callback chooses (``None``: no rows)."""
    source, best = None, -np.inf
    for steps in dict.fromkeys(int(r["timesteps"]) for r in rows):
        score = float(np.mean([float(r["win_rate"]) for r in rows if int(r["timesteps"]) == steps]))
        if score > best:
            source, best = steps, score
    return source, best


def set_aside_after(run_dir: Path, steps: int) -> None:
    """Before a run goes on from ``steps`` (-1: from the start): keep the log so far
    under a name of its own (SB3 starts ``progress.csv`` anew), and set aside the
    evaluation rows later than ``steps`` (written after the last checkpoint, before a
    crash) with the best model they chose, so they take no part in choosing the next.
    Nothing is deleted or replaced."""
    log = run_dir / "logs" / "progress.csv"
    if log.exists():
        log.rename(free_name(run_dir / "logs" / f"progress_to_{max(steps, 0):012d}.csv"))
    rows = read_evaluations(run_dir)
    kept = [r for r in rows if int(r["timesteps"]) <= steps]
    if len(kept) == len(rows):
        return
    aside = free_name(run_dir / "evaluations_set_aside.csv")
    write_evaluations(run_dir, [r for r in rows if int(r["timesteps"]) > steps], aside.name)
    write_evaluations(run_dir, kept)  # after the copy: a crash between them loses nothing
    print(
        f"{len(rows) - len(kept)} evaluation rows after {max(steps, 0):,} steps (where the run goes on) "
        f"moved to {aside}",
        flush=True,
    )
    best = run_dir / "best_model.zip"
    chosen = best_evaluation(rows)[0]
    if best.exists() and chosen is not None and chosen > steps:
        moved = best.rename(free_name(run_dir / "best_model_set_aside.zip"))
        source = best_evaluation(kept)[0]
        restore = run_dir / "checkpoints" / f"ckpt_{source or 0:012d}.zip"
        note = "no model of the best evaluation kept: the next evaluation chooses anew"
        if source is not None and restore.exists():
            atomic_write(best, restore.read_bytes())
            note = f"best_model.zip is again the model evaluated at {source:,} steps"
        print(f"the best model they chose moved to {moved}; {note}", flush=True)


# -- the training loop ----------------------------------------------------------------------


def make_callback(config: TrainConfig, progress: bool) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.ppo import NumpyPolicy

    run_dir = config.run_dir

    class RunCallback(BaseCallback):
        """Checkpoints, self-play snapshots, ladder evaluations and the progress bar."""

        def __init__(self) -> None:
            super().__init__()
            self.bar: Any = None
            self.started = time.perf_counter()
            self.evaluated = -1
            self.marks: dict[str, int] = {}
            self.evals = read_evaluations(run_dir)
            # the score to beat: that of the evaluation whose model best_model.zip holds
            has_best = (run_dir / "best_model.zip").exists()
            self.best = best_evaluation(self.evals)[1] if has_best else -np.inf

        def _due(self, key: str, every: int) -> bool:
            last = self.marks.setdefault(key, self.num_timesteps // every)
            now = self.num_timesteps // every
            self.marks[key] = now
            return now > last

        def _on_training_start(self) -> None:
            self.started = time.perf_counter()
            for key, every in (("ckpt", config.checkpoint_every), ("snap", config.snapshot_every)):
                self.marks[key] = self.num_timesteps // every
            if config.eval_every:
                self.marks["eval"] = self.num_timesteps // config.eval_every
            if config.self_play > 0 and not any((run_dir / "pool").glob("*.npz")):
                self.snapshot()  # the initial policy: the pool is never empty
            if config.eval_every and self.num_timesteps == 0 and not self.evals:
                self.evaluate()  # where the curve starts (after any warm start)
            if progress:
                from tqdm import tqdm

                self.bar = tqdm(
                    total=config.total_timesteps,
                    initial=self.num_timesteps,
                    unit="step",
                    unit_scale=True,
                    dynamic_ncols=True,
                    desc=config.run_name,
                )

        def snapshot(self) -> None:
            pool = make_dir(run_dir / "pool")
            NumpyPolicy.from_sb3(self.model.policy).save(pool / f"snap_{self.num_timesteps:012d}.npz")
            for old in sorted(pool.glob("snap_*.npz"))[: -config.pool_size]:
                old.unlink()

        def checkpoint(self) -> Path:
            path = run_dir / "checkpoints" / f"ckpt_{self.num_timesteps:012d}.zip"
            save_model(self.model, path)
            return path

        def evaluate(self) -> None:
            self.evaluated = self.num_timesteps
            path = run_dir / "eval_policy.npz"
            NumpyPolicy.from_sb3(self.model.policy).save(path)
            rows = []
            for k, spec in enumerate(config.eval_specs):
                row = evaluate_policy_file(path, config, spec, config.eval_games, config.seed + 1000 + k)
                row["timesteps"] = self.num_timesteps
                rows.append(row)
                tag = spec.replace(":", "_")
                self.logger.record(f"eval/{tag}_win_rate", row["win_rate"])
                self.logger.record(f"eval/{tag}_lives_lost_per_round", row["lives_lost_per_round"])
                self._print(
                    f"eval @ {self.num_timesteps:,} vs {config.players - 1}x {spec}: win {row['win_rate']:.1%} "
                    f"[{row['win_low']:.1%}, {row['win_high']:.1%}], lives lost/round "
                    f"{row['lives_lost_per_round']:.3f} [{row['lives_low']:.3f}, {row['lives_high']:.3f}] "
                    f"(theirs {row['opponent_lives_lost_per_round']:.3f})"
                )
            self.evals.extend({k: str(v) for k, v in r.items()} for r in rows)
            write_evaluations(run_dir, self.evals)
            score = float(np.mean([r["win_rate"] for r in rows])) if rows else -np.inf
            if score > self.best:
                self.best = score
                save_model(self.model, run_dir / "best_model.zip")

        def _print(self, text: str) -> None:
            if self.bar is not None:
                self.bar.write(text)
            else:
                print(text, flush=True)

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.training_env.num_envs)
            if config.self_play > 0 and self._due("snap", config.snapshot_every):
                self.snapshot()
            if self._due("ckpt", config.checkpoint_every):
                self.checkpoint()
            if config.eval_every and self._due("eval", config.eval_every):
                self.evaluate()
            if config.time_limit and time.perf_counter() - self.started > config.time_limit:
                self._print(f"time limit of {config.time_limit:g}s reached at {self.num_timesteps:,} steps")
                return False
            return True

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    return RunCallback()


def build_model(config: TrainConfig, env: Any) -> Any:
    import torch.nn as nn
    from sb3_contrib import MaskablePPO

    sizes = config.hidden_sizes
    return MaskablePPO(
        "MlpPolicy" if config.obs_encoding == "flat" else "MultiInputPolicy",
        env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        policy_kwargs={
            "net_arch": {"pi": sizes, "vf": sizes},
            "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[config.activation],
        },
        seed=config.seed,
        device=config.device,
        verbose=0,
    )


#: Teacher decisions per collection job: the jobs and their seeds depend on the seed
#: and the decision count only, so the demonstrations are the same on any worker count.
IMITATION_CHUNK = 5_000
DEMONSTRATIONS = "demonstrations.npz"  #: the warm start's decisions, in the run folder
PARTIAL_DEMONSTRATIONS = "demonstrations.partial.npz"  #: those collected before a Ctrl-C


class CollectionInterrupted(KeyboardInterrupt):
    """Ctrl-C during the collection; ``collected`` holds the jobs finished before it
    (``None``: none)."""

    def __init__(self, collected: Any) -> None:
        super().__init__("interrupted during the collection")
        self.collected = collected


def _ignore_interrupts() -> None:
    """A collection worker's start: Ctrl-C is the trainer's to handle (it saves what
    was collected), and the pool's SIGTERM just ends the worker (no traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _collect_chunk(job: tuple[TrainConfig, int, int]) -> Any:
    """One collection job (module level so worker processes can run it)."""
    from agents.imitation import collect

    config, seed, size = job
    env = make_env_fn(config, -1)()
    behaviour = agents.from_spec(config.imitate_behaviour) if config.imitate_behaviour else None
    return collect(
        env,
        agents.from_spec(config.imitate),
        size,
        config.gamma,
        seed,
        behaviour=behaviour,
        knock_rollouts=config.imitate_knock_rollouts,
        continuation=config.imitate_continuation,
    )


def table(config: TrainConfig) -> dict[str, Any]:
    """The table a run plays (every rules option and the table size), as JSON holds
    it: demonstrations from another table do not fit."""
    return json.loads(
        json.dumps({"rules": dataclasses.asdict(Rules.resolve(config.rules)), "players": config.players})
    )


def collection_meta(config: TrainConfig, complete: bool) -> dict[str, Any]:
    """What the run's collection is (stored with its demonstrations): the table, the
    players and the job layout, so that an interrupted one can go on."""
    return json.loads(
        json.dumps(
            {
                "table": table(config),
                "teacher": config.imitate,
                "behaviour": config.imitate_behaviour,
                "knock_rollouts": config.imitate_knock_rollouts,
                "continuation": config.imitate_continuation,
                "gamma": config.gamma,
                "seed": config.seed,
                "decisions": config.imitate_decisions,
                "chunk": IMITATION_CHUNK,
                "complete": complete,
            }
        )
    )


def collection_jobs(config: TrainConfig) -> list[tuple[TrainConfig, int, int]]:
    """The collection's jobs (config, seed, decisions), one child seed each."""
    total = config.imitate_decisions
    sizes = [min(IMITATION_CHUNK, total - i) for i in range(0, total, IMITATION_CHUNK)]
    seeds = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(config.seed).spawn(len(sizes))]
    return [(config, seed, size) for seed, size in zip(seeds, sizes, strict=True)]


def demonstrations(config: TrainConfig, progress: Any = None, done: Any = None) -> Any:
    """The teacher's decisions for the warm start, collected in fixed-size jobs (one
    child seed each), on ``n_envs`` worker processes with ``--vec-env subproc``.
    ``done``: the decisions of the first jobs, saved by an interrupted collection (a
    whole number of jobs); only the rest are collected. Ctrl-C raises
    :class:`CollectionInterrupted` holding every job finished (workers ignore it)."""
    import multiprocessing as mp

    from agents.imitation import Demonstrations

    jobs = collection_jobs(config)
    parts = [done] if done is not None and len(done) else []
    todo = jobs[len(done) // IMITATION_CHUNK :] if parts else jobs
    if progress and parts:
        progress(len(done))
    workers = min(config.n_envs, len(todo), os.cpu_count() or 1) if config.vec != "dummy" else 1
    try:
        if workers <= 1:
            for job in todo:
                parts.append(_collect_chunk(job))
                if progress:
                    progress(job[2])
        else:
            with mp.get_context().Pool(workers, initializer=_ignore_interrupts) as pool:
                for part in pool.imap(_collect_chunk, todo):
                    parts.append(part)
                    if progress:
                        progress(len(part))
    except KeyboardInterrupt:
        raise CollectionInterrupted(Demonstrations.concat(parts) if parts else None) from None
    demos = Demonstrations.concat(parts)
    demos.meta = collection_meta(config, complete=True)
    return demos


def save_demonstrations(demos: Any, path: Path) -> None:
    """Write demonstrations as a compressed ``.npz``, atomically."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **demos.arrays())
    atomic_write(path, buf.getvalue())


def read_demonstrations(path: str | Path) -> Any:
    """A demonstrations file, never unpickled; ``ValueError`` naming it if damaged."""
    from agents.imitation import Demonstrations

    try:
        return Demonstrations.load(path)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"cannot read demonstrations {path}: {type(e).__name__}: {e}") from None


def observation_shape(config: TrainConfig) -> tuple[int, int]:
    """The width of the run's flat observation and its number of actions."""
    from thirtyone_env.env import ThirtyOneEnv

    env = ThirtyOneEnv(num_players=config.players, rules=config.rules)
    return int(env.observation_space.shape[0]), int(env.action_space.n)


def table_differences(theirs: Any, ours: dict[str, Any]) -> list[str]:
    """How a stored table differs from the run's (rules options stored in both)."""
    if not isinstance(theirs, dict) or not isinstance(theirs.get("rules"), dict):
        return ["its table is not recorded in a form this train.py reads"]
    out = [] if theirs.get("players") == ours["players"] else [f"players={theirs.get('players')!r}"]
    rules = theirs["rules"]
    out += [f"{k}={rules[k]!r}" for k, v in ours["rules"].items() if k in rules and rules[k] != v]
    return out


def load_demonstrations(paths: str, config: TrainConfig) -> Any:
    """Demonstrations saved by earlier runs (``--imitate-from``, comma-separated files,
    fitted together), each checked to fit the run (see ``Demonstrations.check``) and,
    where recorded, to come from the run's table; ``ValueError`` names the file."""
    from agents.imitation import Demonstrations

    obs_size, num_actions = observation_shape(config)
    ours = table(config)
    parts = []
    for path in filter(None, (p.strip() for p in paths.split(","))):
        demos = read_demonstrations(path)
        try:
            demos.check(obs_size, num_actions)
        except ValueError as e:
            raise ValueError(f"demonstrations {path} do not fit this run: {e}") from None
        if demos.meta is not None:
            different = table_differences(demos.meta.get("table"), ours)
            if different:
                raise ValueError(
                    f"demonstrations {path} were collected at another table than this run's "
                    f"({config.rules}, {config.players} players): {', '.join(different)}"
                )
        parts.append(demos)
    if not parts:
        raise ValueError(f"imitate_from={paths!r} names no file")
    demos = Demonstrations.concat(parts)
    demos.meta = {"table": ours, "from": paths, "complete": True}
    return demos


def read_partial(config: TrainConfig) -> Any:
    """The decisions an interrupted collection of this run saved, if they are the
    first jobs of the same collection (else ``None``: collected anew, with a note)."""
    path = config.run_dir / PARTIAL_DEMONSTRATIONS
    if not path.exists():
        return None
    done = read_demonstrations(path)
    fits = done.meta == collection_meta(config, complete=False) and len(done) % IMITATION_CHUNK == 0
    if not fits or len(done) >= config.imitate_decisions:
        print(f"note: {path} is not part of this collection: collecting anew", file=sys.stderr)
        return None
    print(f"imitation: going on from the {len(done):,} decisions saved in {path}", flush=True)
    return done


def collect_demonstrations(config: TrainConfig, progress: bool) -> Any:
    """Collect the run's demonstrations, going on from those an interrupted collection
    saved; on Ctrl-C save what was collected and say how to go on."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=config.imitate_decisions, unit="decision", unit_scale=True, desc=f"imitate {config.imitate}"
        )
    done = read_partial(config)
    try:
        return demonstrations(config, progress=bar.update if bar else None, done=done)
    except CollectionInterrupted as e:
        if bar:
            bar.close()
            bar = None
        saved = e.collected
        path = config.run_dir / PARTIAL_DEMONSTRATIONS
        if saved is not None and len(saved) > (len(done) if done is not None else 0):
            saved.meta = collection_meta(config, complete=False)
            save_demonstrations(saved, path)
        if saved is not None:
            print(
                f"\ninterrupted during the imitation warm start: {len(saved):,} of "
                f"{config.imitate_decisions:,} decisions saved to {path}; go on with: "
                f"python train.py --resume {config.run_dir}",
                file=sys.stderr,
            )
        else:
            print(
                "\ninterrupted during the imitation warm start, before a collection job finished",
                file=sys.stderr,
            )
        raise
    finally:
        if bar:
            bar.close()


def warm_start(model: Any, config: TrainConfig, progress: bool, demos: Any = None) -> None:
    """The imitation warm start (see :mod:`agents.imitation`): fit ``demos`` (from
    ``--imitate-from``), else the demonstrations saved in the run folder (a run started
    again), else collect them; saved in the run folder before the fit."""
    from agents.imitation import pretrain

    t0 = time.perf_counter()
    saved = config.run_dir / DEMONSTRATIONS
    if demos is None and saved.exists():
        demos = load_demonstrations(str(saved), config)
        print(f"imitation: fitting the {len(demos):,} decisions saved in {saved}", flush=True)
    elif demos is None:
        demos = collect_demonstrations(config, progress)
    if not saved.exists():
        save_demonstrations(demos, saved)
    (config.run_dir / PARTIAL_DEMONSTRATIONS).unlink(missing_ok=True)  # a prefix of the saved ones
    try:
        stats = pretrain(
            model, demos, config.imitate_epochs, seed=config.seed, knock_weight=config.imitate_knock_weight
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted while fitting the demonstrations (kept in {saved}); go on with: "
            f"python train.py --resume {config.run_dir}",
            file=sys.stderr,
        )
        raise
    print(
        f"imitation of {config.imitate}: {len(demos):,} decisions, {config.imitate_epochs} epochs, "
        f"action accuracy {stats['accuracy']:.1%}, value loss {stats['value_loss']:.3f} "
        f"({time.perf_counter() - t0:.0f}s)",
        flush=True,
    )


def load_checkpoint(path: Path, env: Any, config: TrainConfig) -> Any:
    """The run's model from a checkpoint, with nothing in the file unpickled: SB3's
    loader gets a copy of the zip made of its plain "data" JSON and the tensors torch
    read weights-only, and every serialized entry of that data (spaces, schedules,
    policy class and kwargs, buffers) is replaced, through ``custom_objects``, by what
    this run's config builds."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import plain_zip, read_model_zip

    try:
        saved = read_model_zip(path.read_bytes(), ("policy.pth", "policy.optimizer.pth"))
        fresh = build_model(config, env)
        serialized = [k for k, v in saved.data.items() if isinstance(v, dict) and ":serialized:" in v]
        foreign = [k for k in serialized if k not in vars(fresh)]
        if foreign:
            raise ValueError(f"serialized entries this run does not have: {foreign}")
        custom = {k: getattr(fresh, k) for k in serialized}
        return MaskablePPO.load(plain_zip(saved), env=env, device=config.device, custom_objects=custom)
    except Exception as e:  # a truncated zip, a torch error on damaged tensors, ...
        raise ValueError(f"cannot load checkpoint {path}: {type(e).__name__}: {e}") from None


def check_device(device: str) -> None:
    """``ValueError`` unless torch parses ``device`` and it works here: SB3 itself
    moves a run to the CPU without a word when CUDA is missing."""
    import torch

    if device == "auto":
        return
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError) as e:
        raise ValueError(f"device={device!r} is not a torch device ({e})") from None
    if parsed.type not in DEVICE_TYPES:
        raise ValueError(f"device={device!r}: a run trains on {', '.join(DEVICE_TYPES)} or auto")
    try:
        torch.zeros(1, device=parsed)
    except Exception as e:  # RuntimeError, AssertionError ("not compiled with CUDA"), ...
        raise ValueError(f"device={device!r} is not available here ({type(e).__name__}: {e})") from None


def refuse_existing(run_dir: Path) -> None:
    """A fresh run starts in a new (or empty) folder: never over another run's files."""
    if (run_dir / "config.json").exists():
        raise ValueError(
            f"run folder {run_dir} exists: resume it with --resume {run_dir}, or pick another --run-name"
        )
    if run_dir.is_dir() and any(p.name != FolderLock.NAME for p in run_dir.iterdir()):
        raise ValueError(f"{run_dir} is not empty and holds no run (no config.json): pick another --run-name")


def preflight(config: TrainConfig, resume: bool) -> Any:
    """Every check that needs no run folder, before one is created or changed: the
    place, the device and the demonstrations to fit (loaded here, once: returned)."""
    check_writable_dir(config.runs_dir, "runs_dir")
    check_writable_dir(config.run_dir, "run folder")
    if not resume:
        refuse_existing(config.run_dir)
    check_device(config.device)
    check_players(config)
    from_start = not resume or last_checkpoint(config.run_dir) is None
    if config.imitate and config.imitate_from and from_start:
        return load_demonstrations(config.imitate_from, config)
    return None


def check_players(config: TrainConfig) -> None:
    """Build every named player once, here in the trainer's process: one that cannot be
    built, or a model made for another table, fails now with its name instead of later
    inside the env workers."""
    rules = Rules.resolve(config.rules)
    teachers = [s for s in (config.imitate, config.imitate_behaviour) if s]
    for spec in dict.fromkeys((*config.opponent_specs, *config.eval_specs, *teachers)):
        player = agents.from_spec(spec)
        check = getattr(player, "check_table", None)
        if callable(check):
            check(config.players, rules)


def check_can_go_on(config: TrainConfig, steps: int) -> None:
    if steps >= config.total_timesteps:
        raise ValueError(
            f"the run is already at {steps:,} steps of total_timesteps={config.total_timesteps:,}: "
            "give a larger --total-timesteps to go on"
        )


def store_operational(config: TrainConfig) -> None:
    """Record in the run's config.json how far a resumed run now goes (the only fields
    a resume may change), once the resume is known to go ahead."""
    path = config.run_dir / "config.json"
    stored = json.loads(path.read_text())
    changed = {k: getattr(config, k) for k in OPERATIONAL if stored.get(k) != getattr(config, k)}
    if changed:
        atomic_write(path, json.dumps({**stored, **changed}, indent=2))


def remove_failed_start(run_dir: Path) -> None:
    """Remove the folder a fresh start created when it failed before saving anything
    useful (a checkpoint or demonstrations): all in it is that start's own."""
    useful = any((run_dir / "checkpoints").glob("*.zip")) or any(run_dir.glob("demonstrations*.npz"))
    if run_dir.is_dir() and not useful:
        shutil.rmtree(run_dir, ignore_errors=True)
        print(f"train.py: removed {run_dir}: the run stopped before saving anything", file=sys.stderr)


def train(config: TrainConfig, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run (or go on with) training; returns the run's figures. Every check comes
    before the run folder is created; the folder is locked for the run (another
    train.py on it is refused); a fresh start that fails before saving anything
    removes the folder it created. Raises ``ValueError`` on bad input and
    ``KeyboardInterrupt`` after saving what can be saved."""
    import torch

    torch.set_num_threads(config.torch_threads)
    demos = preflight(config, resume)
    created = not config.run_dir.exists()
    with FolderLock(config.run_dir, "run folder"):
        try:
            return run_locked(config, resume, progress, demos)
        except BaseException:
            if created:
                remove_failed_start(config.run_dir)
            raise


def run_locked(config: TrainConfig, resume: bool, progress: bool, demos: Any) -> dict[str, Any]:
    """:func:`train` once the run folder is locked: a resume without a checkpoint
    (a warm start that was interrupted, a start that failed) starts the run again."""
    from stable_baselines3.common.logger import configure

    run_dir = config.run_dir
    ckpt = last_checkpoint(run_dir) if resume else None
    if resume:
        check_can_go_on(config, checkpoint_steps(ckpt))
        store_operational(config)
        if ckpt is None:
            print(f"{run_dir} has no checkpoint: starting the run from the beginning", flush=True)
    else:
        refuse_existing(run_dir)
        atomic_write(run_dir / "config.json", json.dumps(dataclasses.asdict(config), indent=2))
        atomic_write(run_dir / "versions.json", json.dumps(library_versions(), indent=2))
    env = make_vec(config)
    try:
        model = load_checkpoint(ckpt, env, config) if ckpt else build_model(config, env)
        start = model.num_timesteps
        check_can_go_on(config, start)
        set_aside_after(run_dir, start if ckpt else -1)
        if config.imitate and ckpt is None:
            warm_start(model, config, progress, demos)
        model.set_logger(configure(str(run_dir / "logs"), ["csv", "tensorboard"]))
        callback = make_callback(config, progress)
        t0 = time.perf_counter()
        try:
            model.learn(
                config.total_timesteps - start,
                callback=callback,
                reset_num_timesteps=ckpt is None,
            )
        except KeyboardInterrupt:
            path = callback.checkpoint()
            print(
                f"\ninterrupted at {model.num_timesteps:,} steps: checkpoint saved to {path}", file=sys.stderr
            )
            raise
        elapsed = time.perf_counter() - t0
        if config.eval_every and callback.evaluated != model.num_timesteps:
            callback.num_timesteps = model.num_timesteps
            callback.evaluate()  # the final policy is a candidate for the best model too
            model.logger.dump(model.num_timesteps)
        callback.checkpoint()
        save_model(model, run_dir / "final_model.zip")
        if not (run_dir / "best_model.zip").exists():
            save_model(model, run_dir / "best_model.zip")
    finally:
        env.close()
    steps = model.num_timesteps - start
    figures = {"timesteps": model.num_timesteps, "elapsed_s": elapsed, "steps_per_s": steps / elapsed}
    print(
        f"trained {steps:,} steps in {elapsed:.1f}s ({steps / elapsed:,.0f} steps/s, {config.vec} env); "
        f"models: {run_dir / 'final_model.zip'}, {run_dir / 'best_model.zip'}"
    )
    return figures


# -- command line -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Train a Thirty-One player with MaskablePPO.", argument_default=argparse.SUPPRESS
    )
    docs = _field_docs()
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{docs.get(f.name, '')} (default: {f.default})".strip()
        flags = [flag, "--vec"] if f.name == "vec_env" else [flag]
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            parser.add_argument(*flags, type={"int": int, "float": float}.get(f.type, str), help=help_text)
    parser.add_argument(
        "--resume", metavar="RUN_DIR", default=None, help="go on with the run in this folder (its config)"
    )
    parser.add_argument("--no-progress", action="store_true", default=False, help="no progress bar")
    return parser


def _field_docs() -> dict[str, str]:
    """The ``#:`` comments of :class:`TrainConfig`, as --help text."""
    import inspect

    out = {}
    for line in inspect.getsource(TrainConfig).splitlines():
        m = re.match(r"\s+(\w+): \w+ = .*#: (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def config_from_args(args: argparse.Namespace) -> tuple[TrainConfig, bool]:
    given = {k: v for k, v in vars(args).items() if k not in ("resume", "no_progress")}
    resume = getattr(args, "resume", None)
    if resume is None:
        return TrainConfig(**given), False
    run_dir = Path(resume)
    stored_path = run_dir / "config.json"
    if not stored_path.is_file():
        raise ValueError(f"cannot resume: {stored_path} not found (is {run_dir} a run folder?)")
    try:
        stored = json.loads(stored_path.read_text())
        names = {f.name for f in dataclasses.fields(TrainConfig)}
        if not isinstance(stored, dict):
            raise ValueError("it is not a JSON object")
        if set(stored) != names:
            odd = sorted(names ^ set(stored))
            raise ValueError(f"its fields are not those of this train.py (differ: {', '.join(odd)})")
    except (OSError, UnicodeDecodeError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise ValueError(f"cannot resume: {stored_path} is not a run config ({e})") from None
    different = {k: (stored[k], v) for k, v in given.items() if k not in OPERATIONAL and stored[k] != v}
    if different:
        listed = ", ".join(f"{k}: run has {a!r}, given {b!r}" for k, (a, b) in different.items())
        raise ValueError(f"cannot resume {run_dir} with another config ({listed})")
    for k in OPERATIONAL:
        stored[k] = given.get(k, stored[k])
    try:
        config = TrainConfig(**stored)
        where = run_dir.resolve()
        if config.run_dir.resolve() != where:
            # the folder was moved or renamed: train where it is now
            config = dataclasses.replace(config, runs_dir=str(where.parent), run_name=where.name)
    except ValueError as e:
        raise ValueError(f"cannot resume: {stored_path}: {e}") from None
    return config, True


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    # SIGTERM (kill, a job scheduler) stops a run like Ctrl-C: with a checkpoint saved
    signal.signal(signal.SIGTERM, _interrupt)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config, resume = config_from_args(args)
        train(config, resume=resume, progress=not args.no_progress)
    except (ValueError, OSError) as e:  # bad input, a place that cannot be written
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
