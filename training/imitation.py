"""Imitation warm start: teach a fresh MaskablePPO policy a teacher's moves first.

PPO from scratch spends millions of steps relearning what a hand-written player
already knows (which card to keep, not to knock on 15). :func:`collect` lets a
teacher (any player, usually ``expert``) play the learner's seat of the training env
and records what the learner would observe, the mask, the teacher's action and the
discounted return that followed; :func:`pretrain` fits the policy to the actions
(cross-entropy over the legal actions) and the value network to the returns (so PPO
starts with a critic that matches its actor). PPO then improves on the teacher.

The knock is where the expert is weakest and where copying a teacher's yes/no is
noisiest, so ``collect`` can also *measure* it (``knock_rollouts``): on each turn
where knocking is legal it plays KNOCK and the teacher's best other move on copies of
the true position (the stock reshuffled for each play-out: nobody knows its order),
with the table's real players on to the end of the round, and keeps the mean
difference in lives or, with the ``"win"`` objective, in the chance to win the game
(``knock_gain``). :func:`pretrain` then fits the
knock as a cost-weighted choice (knock where the gain is positive, weighted by its
size), whose optimum knocks exactly where the expected gain *given the observation*
is positive: the hidden cards enter only through the outcomes, never the input, so
the learner sees nothing it could not see at a table. ``behaviour`` lets another
player (the learner itself: DAgger) choose the moves that are played while the teacher
labels them, so the data covers the positions the learner reaches.

``move_rollouts`` measures every move instead: on each decision with a choice, every
legal move is played on copies of the true position with the same paired play-outs
(``move_values``, the mean value of each of ``move_actions``). That is the data of a
policy-improvement step (:mod:`training.measured_moves`): a network fitted to prefer the
moves of higher measured value, seeing only the observation, learns the better move
*given what it sees*, as the measured knock does for the knock alone.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from thirtyone_env.envs.playouts import compiled, measure_many
from thirtyone_env.game.actions import KNOCK
from thirtyone_env.game.encoding import split_encoding
from thirtyone_env.game.engine import clone_state
from thirtyone_env.harness.driver import check_seated, encodings_of, observe, player_move, reset_players
from thirtyone_env.harness.files import json_value
from thirtyone_env.research.oracle import measure

#: The most bytes a demonstrations file's arrays may take once read (a million decisions
#: of the widest table take about 1 GB): a small file that would inflate to more is refused
#: before anything is read.
MAX_DEMONSTRATION_BYTES = 8 << 30
#: How many times its size a demonstrations file may inflate (saved ones: about 30, their
#: features being mostly 0 and 1); more is a file made to exhaust memory (a zip bomb)
MAX_INFLATION = 200
#: The largest observation or return a decision may hold (features are cards, counts and
#: scores; larger ones are no game's and overflow the network's float32 into NaN).
MAX_VALUE = 1e6


def check_sizes(path: Any) -> None:
    """Refuse (``ValueError``) a demonstrations file whose arrays declare more than
    their members hold, more than :data:`MAX_DEMONSTRATION_BYTES` in all, or (past 64
    MiB) more than :data:`MAX_INFLATION` times the file's size: only each member's
    header is read."""
    import os
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(path) as z:
            total = 0
            for info in z.infolist():
                with z.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version not in ((1, 0), (2, 0)):
                        raise ValueError(f"its {info.filename} is a .npy of version {version}")
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read(f)
                    header = f.tell()
                declared = math.prod(shape) * dtype.itemsize
                if declared + header > info.file_size:
                    raise ValueError(
                        f"its {info.filename} declares {declared:,} bytes and holds {info.file_size:,}"
                    )
                total += declared
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as e:
        raise ValueError(f"not a demonstrations file (.npz): {type(e).__name__}: {e}") from None
    if total > MAX_DEMONSTRATION_BYTES:
        raise ValueError(
            f"its arrays would take {total / 2**30:.1f} GiB once read, more than the "
            f"{MAX_DEMONSTRATION_BYTES / 2**30:.0f} GiB a demonstrations file may"
        )
    size = os.path.getsize(path)
    if total > 64 << 20 and total > MAX_INFLATION * size:
        raise ValueError(
            f"its {size:,} bytes would inflate to {total:,} ({total // max(size, 1):,} times): "
            "no saved demonstrations do (a file made to exhaust memory)"
        )


@dataclass
class Demonstrations:
    """Decisions of a teacher in the learner's seat (float16 observations keep a few
    hundred thousand of them in a few hundred MB)."""

    obs: np.ndarray  #: (N, obs size) float16
    masks: np.ndarray  #: (N, actions) bool
    actions: np.ndarray  #: (N,) int64
    returns: np.ndarray  #: (N,) float32, discounted with ``gamma``
    #: (N,) float32: measured lives gained by knocking rather than ``alternatives``
    #: (NaN where not measured); ``None``: nothing measured
    knock_gain: np.ndarray | None = None
    alternatives: np.ndarray | None = None  #: (N,) int64: the teacher's best move other than KNOCK
    #: (N, K) int64: the legal moves measured at each decision (-1 pads; all -1: none)
    move_actions: np.ndarray | None = None
    move_values: np.ndarray | None = None  #: (N, K) float32: their mean measured values (NaN pads)
    #: where and how they were collected (JSON-able: the table's rules and size, the
    #: teacher, ...); ``None`` for files saved before it was recorded
    meta: dict[str, Any] | None = None

    FIELDS = (
        "obs",
        "masks",
        "actions",
        "returns",
        "knock_gain",
        "alternatives",
        "move_actions",
        "move_values",
    )

    def __len__(self) -> int:
        return len(self.actions)

    def take(self, rows: np.ndarray) -> Demonstrations:
        """These rows' decisions (indices, in order), every field kept."""
        picked = {f: (None if getattr(self, f) is None else getattr(self, f)[rows]) for f in self.FIELDS}
        return type(self)(**picked, meta=self.meta)

    def measured(self) -> tuple[np.ndarray, np.ndarray]:
        """``knock_gain`` and ``alternatives`` filled for every row (NaN and the teacher's
        action where nothing was measured)."""
        if self.knock_gain is None or self.alternatives is None:
            return np.full(len(self), np.nan, dtype=np.float32), self.actions
        return self.knock_gain, self.alternatives

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        """The parts' decisions one after another (chunks collected in parallel, or
        files collected apart)."""
        fixed = [
            np.concatenate([getattr(p, f) for p in parts]) for f in ("obs", "masks", "actions", "returns")
        ]
        meta = parts[0].meta if all(p.meta == parts[0].meta for p in parts) else None
        knocks: tuple[Any, Any] = (None, None)
        if any(p.knock_gain is not None for p in parts):
            gains, alternatives = zip(*(p.measured() for p in parts), strict=True)
            knocks = (np.concatenate(gains), np.concatenate(alternatives))
        moves: tuple[Any, Any] = (None, None)
        if any(p.move_actions is not None for p in parts):
            width = max(p.move_actions.shape[1] for p in parts if p.move_actions is not None)
            filled = [p.moves(width) for p in parts]
            moves = (np.concatenate([a for a, _ in filled]), np.concatenate([v for _, v in filled]))
        return cls(*fixed, *knocks, *moves, meta=meta)

    def moves(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``move_actions`` and ``move_values`` padded to ``width`` columns (-1 and NaN;
        every row unmeasured where nothing was)."""
        n = len(self)
        actions = np.full((n, width), -1, dtype=np.int64)
        values = np.full((n, width), np.nan, dtype=np.float32)
        if self.move_actions is not None and self.move_values is not None:
            k = self.move_actions.shape[1]
            actions[:, :k], values[:, :k] = self.move_actions, self.move_values
        return actions, values

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields to save (``numpy.savez``), the unmeasured ones left out; ``meta``
        as a JSON string (read back without unpickling anything)."""
        out = {f: getattr(self, f) for f in self.FIELDS if getattr(self, f) is not None}
        if self.meta is not None:
            out["meta"] = np.array(json.dumps(self.meta, sort_keys=True))
        return out

    @classmethod
    def load(cls, path: Any) -> Demonstrations:
        """Read what :meth:`arrays` saved, never unpickling (``KeyError``/``ValueError``/
        ``OSError`` on a damaged file). Files without ``meta`` load with ``meta=None``."""
        check_sizes(path)
        with np.load(path, allow_pickle=False) as d:
            optional = [d[f] if f in d.files else None for f in cls.FIELDS[4:]]
            meta = json_value(str(d["meta"])) if "meta" in d.files else None
            if meta is not None and not isinstance(meta, dict):
                raise ValueError("its meta is not a JSON object")
            return cls(d["obs"], d["masks"], d["actions"], d["returns"], *optional, meta=meta)

    def check(self, obs_size: int, num_actions: int) -> None:
        """``ValueError`` naming the first problem unless these are decisions a run with
        ``obs_size`` flat observations and ``num_actions`` actions can fit: at least one
        row, every array as long as ``actions``, of the right width and kind, finite
        observations and returns, every action (and alternative) an id the mask allows."""
        n = len(self.actions)
        arrays = {f: getattr(self, f) for f in self.FIELDS if getattr(self, f) is not None}
        kinds = {"obs": "fiu", "masks": "b", "actions": "iu", "returns": "fiu", "knock_gain": "f"}
        kinds.update(alternatives="iu", move_actions="iu", move_values="f")
        widths = {"obs": obs_size, "masks": num_actions}
        if "move_actions" in arrays:
            widths["move_actions"] = widths["move_values"] = arrays["move_actions"].shape[-1]
        for name, a in arrays.items():
            ndim = 2 if name in widths else 1
            if a.ndim != ndim or a.dtype.kind not in kinds[name]:
                raise ValueError(
                    f"{name} is a {a.ndim}-d {a.dtype} array; expected {ndim}-d of kind {kinds[name]!r}"
                )
            if len(a) != n:
                raise ValueError(f"{name} has {len(a)} rows but actions has {n}: the arrays differ in length")
            if name in widths and a.shape[1] != widths[name]:
                raise ValueError(
                    f"{name} rows are {a.shape[1]} wide; this run's table needs {widths[name]} "
                    "(collected at another table size or rules?)"
                )
        if n == 0:
            raise ValueError("it holds no decisions (0 rows)")
        for name in ("obs", "returns"):
            if not np.isfinite(arrays[name]).all():
                raise ValueError(f"{name} holds NaN or infinite values")
            if arrays[name].size and float(np.abs(arrays[name]).max()) > MAX_VALUE:
                raise ValueError(f"{name} holds values beyond {MAX_VALUE:g}: no decision of a game does")
        rows = np.arange(n)
        for name in ("actions", "alternatives"):
            ids = arrays.get(name)
            if ids is None:
                continue
            bad = np.flatnonzero((ids < 0) | (ids >= num_actions))
            if len(bad):
                raise ValueError(f"{name}[{bad[0]}]={ids[bad[0]]} is not an action id 0..{num_actions - 1}")
            illegal = np.flatnonzero(~self.masks[rows, ids])
            if len(illegal):
                raise ValueError(f"{name}[{illegal[0]}]={ids[illegal[0]]} is not legal under its mask")
        if ("move_actions" in arrays) != ("move_values" in arrays):
            raise ValueError("move_actions and move_values come together: one of them is missing")
        if "move_actions" in arrays:
            self._check_moves(num_actions)

    def _check_moves(self, num_actions: int) -> None:
        """The measured moves: ids of legal moves or -1, each with a finite value."""
        ids, values = self.move_actions, self.move_values
        assert ids is not None and values is not None
        bad = np.argwhere((ids < -1) | (ids >= num_actions))
        if len(bad):
            r, c = bad[0]
            raise ValueError(
                f"move_actions[{r}, {c}]={ids[r, c]} is not an action id 0..{num_actions - 1} or -1"
            )
        given = ids >= 0
        rows = np.broadcast_to(np.arange(len(ids))[:, None], ids.shape)
        illegal = np.argwhere(given & ~self.masks[rows, np.where(given, ids, 0)])
        if len(illegal):
            r, c = illegal[0]
            raise ValueError(f"move_actions[{r}, {c}]={ids[r, c]} is not legal under its mask")
        unvalued = np.argwhere(given & ~np.isfinite(values))
        if len(unvalued):
            r, c = unvalued[0]
            raise ValueError(f"move_values[{r}, {c}] is not a finite value for move {ids[r, c]}")


#: Measured decisions (knocks or all moves) whose play-outs run together: one batch of compiled games
#: (:func:`~thirtyone_env.envs.playouts.measure_many`) per this many positions.
KNOCK_BATCH = 512
#: Decisions :func:`fit_seconds` times one epoch over (four of the fit's batches)
FIT_PROBE_ROWS = 4096


@dataclass(frozen=True)
class _Measure:
    """A decision whose moves are to be measured: the collection's ``row``, a copy of
    the true position, the moves to play there (KNOCK and the teacher's best other
    move, or every legal move), the players of each seat in the play-outs and the
    play-outs' seed."""

    row: int
    state: Any
    actions: tuple[int, ...]
    table: tuple[Any, ...]
    seed: np.random.SeedSequence


def _seated(env: Any, teacher: Any) -> tuple[Any, ...]:
    """The players of a play-out from the agent's decision, by seat: the teacher in the
    agent's seat, the env's opponents in theirs."""
    me, n = env.seat, env.num_players
    return tuple(teacher if p == me else env.opponents[(p - me) % n - 1] for p in range(n))


def _move_of(env: Any, table: Sequence[Any]) -> Any:
    """The engine's moves of a play-out with ``table``'s players."""
    return player_move(table, encodings_of(table, env.obs_encoding), env.players_layout, "rollout")


def _table_move(env: Any, teacher: Any) -> Any:
    """The moves of a play-out from the agent's decision in the engine (:func:`_seated`)."""
    return _move_of(env, _seated(env, teacher))


def _pending(env: Any, teacher: Any, row: int, actions: Sequence[int], rng: np.random.Generator) -> _Measure:
    """``actions`` at ``env``'s current decision, ``teacher`` playing on in the agent's
    seat (the seed drawn from ``rng`` now)."""
    seed = np.random.SeedSequence(int(rng.integers(2**63)))
    return _Measure(row, clone_state(env.state), tuple(int(a) for a in actions), _seated(env, teacher), seed)


def _values(
    env: Any, pending: list[_Measure], rollouts: int, elimination_penalty: float, objective: str
) -> np.ndarray:
    """``(len(pending), A)``: each position's moves' mean values over ``rollouts``
    paired play-outs (``A`` the most moves of any; NaN past a position's own), on the
    compiled kernels where they play the table
    (:func:`~thirtyone_env.envs.playouts.compiled`; the same values), else in the
    engine one position at a time."""
    width = max(len(m.actions) for m in pending)
    out = np.full((len(pending), width), np.nan)
    if all(compiled(m.state, m.table) for m in pending):
        # one batch needs as many moves per position: the short ones repeat their first
        padded = [m.actions + (m.actions[0],) * (width - len(m.actions)) for m in pending]
        values = measure_many(
            [m.state for m in pending], padded, [m.table for m in pending], [m.seed for m in pending],
            rollouts, elimination_penalty=elimination_penalty, objective=objective,
        ).mean(axis=2)  # fmt: skip
        for j, m in enumerate(pending):
            out[j, : len(m.actions)] = values[j, : len(m.actions)]
        return out
    for j, m in enumerate(pending):
        values = measure(
            m.state, m.actions, _move_of(env, m.table), m.seed, rollouts,
            elimination_penalty=elimination_penalty, objective=objective,
        )  # fmt: skip
        out[j, : len(m.actions)] = values.mean(axis=1)
    return out


def knock_gain(
    env: Any,
    teacher: Any,
    alternative: int,
    rollouts: int,
    rng: np.random.Generator,
    elimination_penalty: float,
    objective: str = "lives",
) -> float:
    """Mean value of KNOCK minus that of ``alternative`` for the agent, over
    ``rollouts`` paired play-outs from the env's current (true) position to the end of
    the round (the decision oracle's :func:`~thirtyone_env.research.oracle.measure`):
    the hands and the pile are the game's own, the stock, whose order nobody at the
    table knows, is shuffled afresh for each play-out, the same way for both moves
    (on its true order every play-out of deterministic players would be one and the
    same). The value is minus the lives lost (``elimination_penalty`` more for going
    out), or with ``objective`` ``"win"`` the chance to win the game afterwards, in
    lives at the start. :func:`collect` measures its knocks this way, in batches."""
    values = _values(
        env, [_pending(env, teacher, 0, (KNOCK, alternative), rng)], rollouts, elimination_penalty, objective
    )
    return float(values[0, 0] - values[0, 1])


def _move(player: Any, base: Any, obs: np.ndarray, mask: np.ndarray) -> int:
    """``player``'s choice for the agent's seat: the env's observation where it is what
    the player reads, else the player's own (a view; with or without the history)."""
    encoding = getattr(player, "obs_encoding", "flat")
    if (
        encoding != "view"
        and isinstance(obs, np.ndarray)
        and obs.shape == (split_encoding(encoding, base.players_layout)[1].size,)
    ):
        return int(player.act(obs, mask))
    return int(player.act(observe(base.state, base.seat, encoding, base.players_layout), mask))


def _taught(base: Any, players_in: int, against: Collection[str]) -> bool:
    """Whether the teacher labels ``base``'s current decision: at most ``players_in``
    players in (0: any number), and every other player still in one of ``against``
    (by its seat's ``label``; empty: any)."""
    s = base.state
    if players_in and sum(s.active) > players_in:
        return False
    me, n = base.seat, base.num_players
    others = [base.opponents[(p - me) % n - 1] for p in range(n) if p != me and s.active[p]]
    return not against or all(getattr(o, "label", None) in against for o in others)


def collect(
    env: Any,
    teacher: Any,
    decisions: int,
    gamma: float,
    seed: int,
    progress: Any = None,
    behaviour: Any = None,
    knock_rollouts: int = 0,
    elimination_penalty: float = 0.0,
    continuation: str = "teacher",
    objective: str = "lives",
    move_rollouts: int = 0,
    players_in: int = 0,
    teach_players_in: int = 0,
    teach_against: Collection[str] = (),
    stop_at: float = math.inf,
) -> Demonstrations:
    """Record ``teacher``'s choice at each decision of the agent seat of ``env`` (a
    flat-encoding, Python-engine ``ThirtyOneEnv``) until ``decisions`` are recorded,
    finishing the last episode, or until the first episode that ends past ``stop_at``
    (``time.time()``: a time limit reaches into a job whose teacher is slow, such as
    ``search``), with the decisions recorded by then. ``behaviour`` (default: the teacher) plays the moves.
    With ``knock_rollouts`` > 0, every decision where knocking is legal and nobody has
    knocked gets a measured ``knock_gain`` (see the module doc), the agent's seat played
    on by the teacher or, with ``continuation="behaviour"``, by the behaviour player
    (the gain of knocking now over playing on as that player would). The gain is in
    lives; ``elimination_penalty`` charges going out on top (0 by default: the
    demonstrations of the shipped agent's recipe were measured in lives alone). With
    ``objective="win"`` it is the gain in the chance to win the game, in lives at the
    start (:mod:`~thirtyone_env.harness.equity`): the last life and an opponent's
    elimination count for what they do to the game. With ``move_rollouts`` > 0 instead,
    every decision with a choice has all its legal moves measured the same way
    (``move_actions``, ``move_values``: each move's mean value, by the same objective).
    ``players_in`` > 0 records only the decisions taken with at most that many players
    still in the game (2: the heads-up end), the games played whole all the same, so
    what the seat saw before (the opponent history) is what a real table showed.
    ``teach_players_in`` > 0 (with a ``behaviour`` player) labels by the teacher only the
    decisions taken with at most that many players in, and every other decision by the
    behaviour player's own move: a refit on these keeps its play there and learns the
    teacher's at that end of the game. ``teach_against`` (labels of the env's opponent
    seats, e.g. the league's ``"greedy"``) narrows the teacher's decisions to those where
    every other player still in is one of these: the labels know who sits at the table,
    the observations do not (a model tells them apart from the opponent history)."""
    if knock_rollouts and move_rollouts:
        raise ValueError("knock_rollouts and move_rollouts: give one (measured moves include the knock)")
    if continuation not in ("teacher", "behaviour"):
        raise ValueError(
            f"continuation={continuation!r} is not allowed; allowed values: ['teacher', 'behaviour']"
        )
    if (teach_players_in or teach_against) and (knock_rollouts or move_rollouts):
        raise ValueError("teach_players_in and teach_against label plain moves: measure no knocks or moves")
    if (teach_players_in or teach_against) and behaviour is None:
        raise ValueError(
            "teach_players_in and teach_against label the other decisions by the behaviour player: give one"
        )
    if teach_players_in < 0 or teach_players_in == 1:
        raise ValueError(
            f"teach_players_in={teach_players_in!r} must be 0 (every decision) or at least 2 (two in)"
        )
    if players_in < 0 or players_in == 1:
        raise ValueError(
            f"players_in={players_in!r} must be 0 (every decision) or at least 2 (a decision has two in)"
        )
    follower = behaviour if continuation == "behaviour" and behaviour is not None else teacher
    base = env.unwrapped
    size = base.observation_space.shape[0]
    obs_buf = np.zeros((decisions, size), dtype=np.float16)
    mask_buf = np.zeros((decisions, base.action_space.n), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    ret_buf = np.zeros(decisions, dtype=np.float32)
    gain_buf = np.full(decisions, np.nan, dtype=np.float32)
    alt_buf = np.zeros(decisions, dtype=np.int64)
    rng = np.random.default_rng(seed)
    players = [teacher] if behaviour is None else [teacher, behaviour]
    check_seated(players, base.num_players, base.rules)
    waiting: list[_Measure] = []  # measured decisions whose play-outs are still to run
    moves: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}  # row: its moves and their values

    def measure_waiting() -> None:
        if move_rollouts:
            values = _values(base, waiting, move_rollouts, elimination_penalty, objective)
            moves.update((m.row, (m.actions, values[j])) for j, m in enumerate(waiting))
        else:
            values = _values(base, waiting, knock_rollouts, elimination_penalty, objective)
            gain_buf[[m.row for m in waiting]] = values[:, 0] - values[:, 1]
        waiting.clear()

    n = 0
    obs, info = env.reset(seed=seed)
    while n < decisions:
        reset_players(players, rng)
        rows, rewards = [], []  # rows: (step of the episode, row) of the recorded decisions
        done = False
        while not done:
            mask = info["action_mask"]
            taught = _taught(base, teach_players_in, teach_against)
            action = _move(teacher if taught else behaviour, base, obs, mask)
            record = n < decisions and (not players_in or sum(base.state.active) <= players_in)
            if record:
                rows.append((len(rewards), n))
                obs_buf[n], mask_buf[n], act_buf[n] = obs, mask.astype(bool), action
                alt_buf[n] = action
                if knock_rollouts and mask[KNOCK] and base.state.knocker < 0 and mask.sum() > 1:
                    alternative = action
                    if action == KNOCK:
                        others = mask.copy()
                        others[KNOCK] = 0
                        alternative = _move(teacher, base, obs, others)
                    alt_buf[n] = alternative
                    waiting.append(_pending(base, follower, n, (KNOCK, alternative), rng))
                elif move_rollouts and mask.sum() > 1:
                    waiting.append(_pending(base, follower, n, np.flatnonzero(mask), rng))
                if len(waiting) >= KNOCK_BATCH:
                    measure_waiting()
            if behaviour is not None and taught:  # else the label is the behaviour's move
                action = _move(behaviour, base, obs, mask)
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
            if record:
                n += 1
                if progress is not None:
                    progress(1)
        returns = np.zeros(len(rewards) + 1)
        for k in range(len(rewards) - 1, -1, -1):
            returns[k] = rewards[k] + gamma * returns[k + 1]
        for k, row in rows:
            ret_buf[row] = returns[k]
        if time.time() > stop_at:
            break
        obs, info = env.reset()
    if waiting:
        measure_waiting()
    if n < decisions:  # stopped by the time: the decisions recorded
        obs_buf, mask_buf, act_buf, ret_buf = obs_buf[:n], mask_buf[:n], act_buf[:n], ret_buf[:n]
        gain_buf, alt_buf, decisions = gain_buf[:n], alt_buf[:n], n
    if move_rollouts:
        width = max((len(a) for a, _ in moves.values()), default=1)
        move_actions = np.full((decisions, width), -1, dtype=np.int64)
        move_values = np.full((decisions, width), np.nan, dtype=np.float32)
        for row, (actions, values) in moves.items():
            move_actions[row, : len(actions)] = actions
            move_values[row, : len(actions)] = values[: len(actions)]
        return Demonstrations(
            obs_buf, mask_buf, act_buf, ret_buf, move_actions=move_actions, move_values=move_values
        )
    if not knock_rollouts:
        return Demonstrations(obs_buf, mask_buf, act_buf, ret_buf)
    return Demonstrations(obs_buf, mask_buf, act_buf, ret_buf, gain_buf, alt_buf)


def pretrain(
    model: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 1024,
    lr: float = 1e-3,
    seed: int = 0,
    knock_weight: float = 1.0,
    row_weight: np.ndarray | None = None,
    deadline: float = math.inf,
) -> dict[str, float]:
    """Fit ``model.policy`` (an SB3 maskable actor-critic on flat observations) to the
    demonstrations; returns the last epoch's action accuracy and value loss, and the
    epochs fitted.
    ``row_weight`` (one positive number a decision) weighs each decision's policy loss.
    After the first epoch the fit stops at the first batch past ``deadline``
    (``time.monotonic()``): a time limit bounds the fit too.

    A decision with a measured ``knock_gain`` is two choices: whether to knock (a
    logistic loss towards "knock" when the gain is positive, weighted by the gain's
    size over its mean, times ``knock_weight``) and, if not, which other move (the
    teacher's). Any other decision is a cross-entropy towards the teacher's action,
    ``knock_weight`` times heavier where knocking was legal (the few choices where a
    teacher such as ``search`` differs from the expert)."""
    import torch as th
    import torch.nn.functional as F

    policy = model.policy
    policy.set_training_mode(True)
    optimizer = th.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    n = len(demos)
    if row_weight is None:
        row_weight = np.ones(n, dtype=np.float32)
    row_weight = np.asarray(row_weight, dtype=np.float32)
    if row_weight.shape != (n,) or not (row_weight > 0).all():
        raise ValueError(f"row_weight must hold one positive weight for each of the {n} decisions")
    gains, alternatives = demos.measured()
    measured_all = np.isfinite(gains)
    scale = float(np.abs(gains[measured_all]).mean()) if measured_all.any() else 1.0
    knock_cost = np.where(measured_all, knock_weight * np.abs(np.nan_to_num(gains)) / max(scale, 1e-9), 0.0)
    targets = np.where(measured_all & (np.nan_to_num(gains) > 0), KNOCK, alternatives)
    stats: dict[str, float] = {}
    fitted = 0  # decisions fitted, over all epochs
    for epoch in range(epochs):
        order = rng.permutation(n)
        correct = value_loss = total = 0.0
        for i in range(0, n, batch_size):
            if epoch and time.monotonic() > deadline:
                break
            idx = order[i : i + batch_size]
            obs = th.as_tensor(demos.obs[idx].astype(np.float32))
            mask = th.as_tensor(demos.masks[idx])
            returns = th.as_tensor(demos.returns[idx])
            measured = th.as_tensor(measured_all[idx])
            features = policy.extract_features(obs)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~mask, -1e8)
            values = policy.value_net(latent_vf).squeeze(-1)
            # imitation of the teacher's action
            plain = th.as_tensor(demos.actions[idx])
            rows = th.as_tensor(row_weight[idx])
            weight = (1.0 + (knock_weight - 1.0) * mask[:, KNOCK].float()) * (~measured).float() * rows
            loss_pi = (F.cross_entropy(logits, plain, reduction="none") * weight).sum()
            # measured knocks: knock or not (cost-weighted), then the teacher's other move
            others = logits.clone()
            others[:, KNOCK] = -1e8
            lse_all = th.logsumexp(logits, -1)
            lse_others = th.logsumexp(others, -1)
            log_knock = logits[:, KNOCK] - lse_all
            log_other = lse_others - lse_all
            knock = th.as_tensor(targets[idx] == KNOCK).float()
            cost = th.as_tensor(knock_cost[idx], dtype=th.float32)
            loss_knock = -(knock * log_knock + (1.0 - knock) * log_other) * cost
            loss_other = F.cross_entropy(others, th.as_tensor(alternatives[idx]), reduction="none")
            loss_pi = loss_pi + ((loss_knock + loss_other) * measured.float() * rows).sum()
            loss_pi = loss_pi / (weight.sum() + (measured.float() * rows).sum() * (1.0 + knock_weight))
            loss_vf = F.mse_loss(values, returns)
            optimizer.zero_grad()
            (loss_pi + 0.5 * loss_vf).backward()
            optimizer.step()
            target = th.as_tensor(targets[idx])
            correct += float((logits.detach().argmax(-1) == target).sum())
            value_loss += float(loss_vf.detach()) * len(idx)
            total += len(idx)
        fitted += int(total)
        if total:
            stats = {"accuracy": correct / total, "value_loss": value_loss / total, "epochs": fitted / n}
        if time.monotonic() > deadline:
            break
    policy.set_training_mode(False)
    return stats


def fit_seconds(model: Any, sample: Demonstrations | None, decisions: int, epochs: int) -> float:
    """About how long :func:`pretrain` takes to fit ``decisions`` for ``epochs`` with
    ``model``'s network: one epoch over ``sample`` (a few batches of real decisions; with
    ``None``, blank ones of the network's shapes, before any is collected) on a copy of
    the network, timed and scaled."""
    import copy
    from types import SimpleNamespace

    if sample is None:
        size, moves = model.policy.observation_space.shape[0], model.policy.action_space.n
        blank = np.zeros(FIT_PROBE_ROWS)
        masks = np.ones((FIT_PROBE_ROWS, moves), dtype=bool)
        obs = np.zeros((FIT_PROBE_ROWS, size), dtype=np.float16)
        sample = Demonstrations(obs, masks, blank.astype(np.int64), blank.astype(np.float32))
    rows = np.arange(min(len(sample), FIT_PROBE_ROWS))
    probe = SimpleNamespace(policy=copy.deepcopy(model.policy))
    t0 = time.perf_counter()
    pretrain(probe, sample.take(rows), 1)
    return (time.perf_counter() - t0) / max(len(rows), 1) * decisions * epochs
