"""The steps a recipe chains (:mod:`training.recipe`): each a way of learning the project
has, with its own small frozen config whose fields are the options a recipe file may set
for it (each field's ``help`` is its documentation, shown by ``train.py --steps``).

A step takes a model in (the recipe's model so far) and gives a model out. It runs as a
run of its own in the recipe's folder (:class:`~training.config.TrainConfig`, built by
:meth:`Step.train_fields`), so it keeps that run's checkpoints, saved collections and
resume. Every step may also set the options of :data:`COMMON`: its name, table,
seed, and how often it runs.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, ClassVar

#: what a step's ``behaviour`` names when the model coming into the step plays (DAgger)
MODEL = "model"


def option(default: Any, help: str) -> Any:
    """A step field with its documentation."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Step:
    """What every step has: how it maps to the run it is made of."""

    kind: ClassVar[str] = ""
    #: the step reads its teacher's moves (a recipe with ``--teacher none`` has none)
    teaches: ClassVar[bool] = False
    #: the :class:`~training.config.TrainConfig` field of each option (the same name
    #: where not listed)
    FIELDS: ClassVar[dict[str, str]] = {}

    def train_fields(self, model_in: str) -> dict[str, Any]:
        """The :class:`~training.config.TrainConfig` fields of this step's run, given
        the path of the model coming in."""
        return {self.FIELDS.get(f.name, f.name): getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def option_of(cls, message: str) -> str:
        """``message`` (of a run config) with its field names given as this step's options."""
        for option, field in cls.FIELDS.items():
            message = re.sub(rf"\b{field}\b", option, message)
        return message

    def teachers(self) -> list[str]:
        """The built-in players whose moves this step learns from."""
        return []


@dataclass(frozen=True)
class Imitation(Step):
    """Fit a fresh network to a teacher's moves (behaviour cloning), optionally on the
    states the incoming model reaches (DAgger) and with the knock learnt from its
    measured gain instead of copied."""

    kind: ClassVar[str] = "imitation"
    teaches: ClassVar[bool] = True
    teacher: str = option("expert", "the player spec whose moves are learnt")
    decisions: int = option(200_000, "teacher decisions recorded")
    epochs: int = option(4, "passes of the fit over them")
    knock_weight: float = option(1.0, "loss weight of the decisions where knocking is legal")
    sharpen: float = option(
        1.0,
        "multiply the fitted logits by this (temperature 1/this): a fitted imitation is soft "
        "where the teacher's choices look alike, and plays far worse when sampled",
    )
    behaviour: str = option(
        "",
        "who plays the moves while the teacher labels them: '' the teacher, 'model' the "
        "model coming into the step (DAgger), or a player spec",
    )
    knock_rollouts: int = option(
        0, "paired play-outs of knocking against the teacher's move per knock decision (0: copy the teacher)"
    )
    continuation: str = option("teacher", "who plays on in the seat in those play-outs: teacher or behaviour")
    knock_objective: str = option("lives", "what a measured knock is worth: 'lives' or 'win' (the game)")
    pool: tuple[str, ...] = option(
        (),
        "names of earlier imitation steps of the recipe whose recorded decisions are fitted "
        "together instead of recording new ones",
    )
    aggregate: bool = option(
        False,
        "fit the decisions every earlier imitation pass of the recipe recorded together with "
        "this pass's (DAgger's aggregated data set): a pass the time limit cuts short adds the "
        "decisions it recorded to the others instead of fitting a network on those alone",
    )

    FIELDS: ClassVar[dict[str, str]] = {
        "teacher": "imitate",
        "decisions": "imitate_decisions",
        "epochs": "imitate_epochs",
        "knock_weight": "imitate_knock_weight",
        "sharpen": "imitate_sharpen",
        "behaviour": "imitate_behaviour",
        "knock_rollouts": "imitate_knock_rollouts",
        "continuation": "imitate_continuation",
        "knock_objective": "imitate_knock_objective",
    }

    def train_fields(self, model_in: str) -> dict[str, Any]:
        fields = super().train_fields(model_in)
        del fields["pool"], fields["aggregate"]  # the recipe runner finds the earlier steps' files
        if self.behaviour == MODEL:
            fields["imitate_behaviour"] = f"ppo:path={model_in}"
        return fields

    def teachers(self) -> list[str]:
        return [self.teacher]


@dataclass(frozen=True)
class Improvement(Step):
    """Policy improvement by measured moves (rollout policy iteration): the model plays
    its seat while every legal move is valued by paired play-outs with the model playing
    on, then its actor is fitted to prefer the moves of higher value
    (:mod:`training.measured_moves`). No teacher: it learns from its own play."""

    kind: ClassVar[str] = "improvement"
    decisions: int = option(60_000, "decisions of the model measured")
    rollouts: int = option(8, "paired play-outs per measured move")
    epochs: int = option(8, "passes of the fit over the decisions")
    lr: float = option(3e-5, "learning rate of the fit")
    kl: float = option(0.01, "weight of the KL divergence from the incoming policy in the fit")

    FIELDS: ClassVar[dict[str, str]] = {
        "decisions": "improve_decisions",
        "rollouts": "improve_rollouts",
        "epochs": "improve_epochs",
        "lr": "improve_lr",
        "kl": "improve_kl",
    }

    def train_fields(self, model_in: str) -> dict[str, Any]:
        return {**super().train_fields(model_in), "init_from": model_in}


@dataclass(frozen=True)
class HeadsUp(Step):
    """The heads-up teacher: the model plays, the teacher labels the decisions taken
    with two players in (the end of a game, met least), and the model is refitted to
    those labels and its own other moves (DAgger on the model's states)."""

    kind: ClassVar[str] = "heads_up"
    teaches: ClassVar[bool] = True
    teacher: str = option("expert", "the player spec that labels the heads-up decisions")
    against: str = option(
        "", "comma-separated specs among the step's opponents: label only the ends against these"
    )
    decisions: int = option(600_000, "decisions the model plays")
    others: float = option(1.0, "share of the decisions with three or more players in kept for the fit")
    weight: float = option(5.0, "weight of a heads-up decision in the fit")
    epochs: int = option(6, "passes of the fit")
    lr: float = option(3e-4, "learning rate of the fit")

    FIELDS: ClassVar[dict[str, str]] = {
        "teacher": "heads_up_teacher",
        "against": "heads_up_against",
        "decisions": "heads_up_decisions",
        "others": "heads_up_others",
        "weight": "heads_up_weight",
        "epochs": "heads_up_epochs",
        "lr": "heads_up_lr",
    }

    def train_fields(self, model_in: str) -> dict[str, Any]:
        return {**super().train_fields(model_in), "init_from": model_in}

    def teachers(self) -> list[str]:
        return [self.teacher]


#: a PPO step's environment steps when its recipe gives none and it is not ``until_time``
DEFAULT_TIMESTEPS = 1_000_000


@dataclass(frozen=True)
class PPO(Step):
    """MaskablePPO from the incoming model (or a fresh network), against the step's
    opponents, optionally in a league with self-play, optionally anchored to the
    incoming policy by a KL penalty. With the recipe's time limit and ``until_time`` it
    runs until the time left to it is spent, or until ``timesteps`` where given."""

    kind: ClassVar[str] = "ppo"
    timesteps: int | None = option(
        None, "environment steps (1,000,000 if not given; with until_time, as many as the time allows)"
    )
    reward: str = option("lives", "'lives', 'win' or 'rate' (ThirtyOneEnv's reward)")
    episode: str = option("game", "'game' or 'round'")
    learning_rate: float = option(3e-4, "PPO's learning rate")
    gamma: float = option(0.995, "PPO's discount factor (the recipe's gamma is the collections')")
    n_envs: int = option(8, "games played at once")
    n_steps: int = option(512, "steps per env per update")
    batch_size: int = option(512, "minibatch size")
    n_epochs: int = option(4, "passes over each rollout")
    gae_lambda: float = option(0.95, "GAE's lambda")
    clip_range: float = option(0.2, "PPO's clip range")
    ent_coef: float = option(0.01, "entropy bonus")
    vf_coef: float = option(0.5, "value loss weight")
    kl_coef: float = option(0.0, "KL penalty toward the incoming policy (0: none)")
    vf_warmup: int = option(0, "steps at the start in which only the value function learns")
    league: bool = option(False, "draw opponents from a league (heuristics, a population, snapshots)")
    league_population: int = option(16, "randomised heuristic players in the league")
    league_population_share: float = option(0.5, "share of the league's heuristic draws from the population")
    pfsp_power: float = option(2.0, "prioritised fictitious self-play exponent (0: uniform)")
    self_play: float = option(0.0, "share of opponent seats taken by the learner's snapshots")
    snapshot_every: int = option(100_000, "steps between self-play snapshots")
    pool_size: int = option(5, "snapshots kept")
    eval_every: int = option(0, "steps between ladder evaluations (0: never)")
    eval_games: int = option(400, "games per ladder evaluation table")
    checkpoint_every: int = option(100_000, "steps between checkpoints")

    FIELDS: ClassVar[dict[str, str]] = {"timesteps": "total_timesteps"}

    def train_fields(self, model_in: str) -> dict[str, Any]:
        fields = {**super().train_fields(model_in), "init_from": model_in}
        if self.timesteps is None:
            fields["total_timesteps"] = DEFAULT_TIMESTEPS
        return fields


#: every step kind a recipe may name
STEPS: dict[str, type[Step]] = {cls.kind: cls for cls in (Imitation, Improvement, HeadsUp, PPO)}
#: what every step may set besides its own options (see the module doc)
COMMON = {
    "kind": "the step's kind: " + ", ".join(STEPS),
    "name": "the step's name (its sub-folder and report row; default: its kind, numbered when repeated)",
    "opponents": "comma-separated player specs of the step's table (default: the recipe's)",
    "opponent_history": "add the opponent history to the model's input from this step on",
    "seed": "the step's seed (default: the recipe's seed plus the step's index)",
    "repeat": "passes of the step, each from the model the one before gave (default: 1)",
    "until_time": "with --time-limit, pass again while time is left (PPO: train on until it)",
    "time_share": "with --time-limit, the share of the time left when the step begins that it may use, "
    "its reports included (default: 1)",
}


def step_help() -> str:
    """Every step kind and its options, with their defaults and documentation."""
    lines = ["Options every step may set:"]
    lines += [f"  {name:22} {text}" for name, text in COMMON.items()]
    for kind, cls in STEPS.items():
        doc = " ".join((cls.__doc__ or "").split())
        lines += ["", f"[[step]] kind = {kind!r}: {doc}"]
        for f in dataclasses.fields(cls):
            default = "" if f.default is None else f" (default: {f.default!r})"  # its help says
            lines.append(f"  {f.name:22} {f.metadata['help']}{default}")
    return "\n".join(lines)
