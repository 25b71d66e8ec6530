"""What an oracle study is: :class:`StudyConfig`, one frozen dataclass whose fields
are the options of ``python -m thirtyone_env.research`` (each field's help text is its
``metadata["help"]``), checked whole when made and stored in the results folder."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.driver import OBJECTIVES
from thirtyone_env.harness.equity import check_win_objective
from thirtyone_env.harness.parallel import available_cpus
from thirtyone_env.research.questions import QUESTIONS, check_question

#: Decisions per job: jobs and their seeds depend on the seed and the decision count
#: only, so a study's results are the same on any worker count.
CHUNK = 100
MAX_DECISIONS = 10_000_000
MAX_ROLLOUTS = 10_000
#: The largest seed numpy's SeedSequence takes here (kept in JSON without loss).
MAX_SEED = 2**63 - 1


def option(default: Any, help: str) -> Any:
    """A config field with its ``--help`` text."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class StudyConfig:
    """One oracle study: which decisions of whom, at which table, measured how often."""

    question: str = option("knock", f"what to measure: one of {', '.join(QUESTIONS)}")
    table: tuple[str, ...] = option(
        ("expert", "expert", "expert", "expert"),
        "one player spec per seat, as evaluate.py takes them (e.g. expert, greedy:knock_at=27, ppo:path=...)",
    )
    seat: int = option(
        0, "the seat whose decisions are measured (0-based; the dealer rotates, so it plays every position)"
    )
    rules: str = option(
        "standard",
        f"a rules preset: one of {', '.join(sorted(PRESETS))}; or house rules, PRESET:OPTION=VALUE,...",
    )
    decisions: int = option(2_000, "decisions to measure (each one where the question applies)")
    rollouts: int = option(16, "paired play-outs of each option per decision")
    objective: str = option(
        "lives",
        "what a played-out round is worth: lives (minus those lost; points or chips in the scored "
        "games) or win (the chance to win the game from the standing it leaves, in lives at the "
        "start; lives games)",
    )
    seed: int = option(0, "the study's seed: the same seed gives the same results on any worker count")
    workers: int = option(1, "worker processes")

    def __post_init__(self) -> None:
        if isinstance(self.table, list):
            object.__setattr__(self, "table", tuple(self.table))
        for name, kind in (
            ("decisions", int),
            ("rollouts", int),
            ("seed", int),
            ("workers", int),
            ("seat", int),
        ):
            value = getattr(self, name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        if not isinstance(self.rules, str):
            raise ValueError(f"rules must be a preset name or house rules, got {self.rules!r}")
        Rules.preset(self.rules)  # names an unknown preset or option
        check_question(self.question, Rules.resolve(self.rules))
        rules = Rules.resolve(self.rules)
        n = len(self.table)
        if not all(isinstance(p, str) and p.strip() for p in self.table):
            raise ValueError(f"table: every seat needs a player spec, got {list(self.table)!r}")
        if not 2 <= n <= rules.max_players or rules.seats not in (None, n):
            seats = f"exactly {rules.seats}" if rules.seats else f"2 to {rules.max_players}"
            raise ValueError(f"table: the {self.rules} rules seat {seats} players, the table names {n}")
        if not 0 <= self.seat < n:
            raise ValueError(f"seat {self.seat} is not a seat of the {n}-player table (0..{n - 1})")
        if not 1 <= self.decisions <= MAX_DECISIONS:
            raise ValueError(f"decisions must be 1..{MAX_DECISIONS:,}, got {self.decisions}")
        if not 1 <= self.rollouts <= MAX_ROLLOUTS:
            raise ValueError(f"rollouts must be 1..{MAX_ROLLOUTS:,}, got {self.rollouts}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective {self.objective!r} is not one of {list(OBJECTIVES)}")
        if self.objective == "win":
            check_win_objective(rules, n)
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be 0..{MAX_SEED}, got {self.seed}")
        cpus = available_cpus()
        if not 1 <= self.workers <= cpus:
            raise ValueError(f"workers must be 1..{cpus} (the CPUs), got {self.workers}")

    @property
    def jobs(self) -> list[int]:
        """Decisions of each job, in order (job ``k`` draws from child ``k`` of the seed)."""
        return [min(CHUNK, self.decisions - i) for i in range(0, self.decisions, CHUNK)]

    def study_dict(self) -> dict[str, Any]:
        """What the results depend on (everything but the worker count), as JSON holds it."""
        out = dataclasses.asdict(self)
        out["table"] = list(self.table)
        del out["workers"]
        if self.objective == "lives":  # the default, as studies stored before it existed
            del out["objective"]
        return out

    @classmethod
    def help(cls, name: str) -> str:
        """The help text of field ``name``."""
        return next(f.metadata["help"] for f in dataclasses.fields(cls) if f.name == name)
