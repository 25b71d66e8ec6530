"""Games on the compiled kernels: the arrays N games live in and the calls on them.

:class:`KernelGames` holds N stock games (one learning seat each) in the flat arrays of
:mod:`thirtyone_env.envs.batch_kernels` and steps, encodes and masks them with one kernel
call each; :class:`~thirtyone_env.envs.vector.ThirtyOneVectorEnv` is the Gymnasium face of
it and :class:`CompiledGame` the single env's (``ThirtyOneEnv(backend="compiled")``).

Opponents: ``greedy`` and ``random`` (or :class:`~thirtyone_env.game.policies.GreedyPolicy`
/ :class:`~thirtyone_env.game.policies.RandomPolicy` objects) play inside the kernels; any
other player sits at an *external seat*: the kernels play each game on until a seat they
do not play must decide, the games waiting on one player object are gathered, and the
player answers them all in one call (:meth:`KernelGames.play_external_seats`):
``act_batch(observations, masks) -> actions`` when it has one, else ``act`` game by game.
Observations follow the player's ``obs_encoding``: ``"view"`` players get a
:class:`~thirtyone_env.game.view_batch.ViewBatch` (one ``PlayerView`` each with ``act``),
``"flat"`` ones the flat encoding rows, ``"dict"`` ones its parts. Whether the kernels can
play a table is decided here, once (:func:`~thirtyone_env.envs.kernel_rules.batchable`):
this module imports neither env module, so both envs build on it without a cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from thirtyone_env.envs import batch_kernels as K
from thirtyone_env.envs import kernel_rules
from thirtyone_env.envs.batch_rng import ROW, load_row, state_row
from thirtyone_env.game.actions import IllegalActionError, num_actions
from thirtyone_env.game.cards import NUM_CARDS, hand_table
from thirtyone_env.game.encoding import PLAYER_ENCODINGS, ObsLayout, split_encoding
from thirtyone_env.game.engine import DISCARD, DRAW, PHASE_NAMES, GameState
from thirtyone_env.game.player_stream import players_generator
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.view_batch import batch_rows, empty_batch
from thirtyone_env.harness.driver import legal_text
from thirtyone_env.harness.player_specs import spec_player

#: Opponents the kernels play, by name.
KERNEL_OPPONENTS = ("greedy", "random")
#: The observations an external player may ask for (``obs_encoding``; none: ``"flat"``).
EXTERNAL_ENCODINGS = PLAYER_ENCODINGS
#: Most discard-log entries kept for players that read ``PlayerView.discards``.
MAX_LOG_ENTRIES = 8_000_000


def kernel_offsets(layout: ObsLayout) -> np.ndarray:
    """The offsets of ``layout``'s parts in the order the encoding kernel takes them
    (``batch_kernels.OFFSETS``; -1 for a part the layout does not have)."""
    return np.array([layout.offsets.get(p, -1) for p in K.OFFSETS], dtype=np.int64)


def opponent_kind(opponent: Any) -> tuple[int, float] | None:
    """(kernel kind, knock level) of an opponent the kernels play, else None."""
    if opponent == "greedy" or type(opponent) is GreedyPolicy:
        return K.OPP_GREEDY, float(getattr(opponent, "knock_at", GreedyPolicy().knock_at))
    if opponent == "random" or type(opponent) is RandomPolicy:
        return K.OPP_RANDOM, 0.0
    return None


def _check_opponent(o: Any, where: str) -> None:
    """An opponent is a kernel player's name or an object with ``act``."""
    if isinstance(o, str):
        if opponent_kind(o) is None:
            raise ValueError(
                f"{where}: unknown opponent {o!r}; by name: {list(KERNEL_OPPONENTS)} (or pass a player)"
            )
        return
    if not callable(getattr(o, "act", None)):
        raise ValueError(f"{where}: {o!r} has no act(observation, action_mask) method")
    enc = getattr(o, "obs_encoding", "flat")
    if enc not in EXTERNAL_ENCODINGS:
        raise ValueError(
            f"{where}: {type(o).__name__} asks for obs_encoding={enc!r}; allowed: {list(EXTERNAL_ENCODINGS)}"
        )


def seat_players(opponents: Any, k: int, num_envs: int) -> list[list[Any]]:
    """Every game's ``k`` opponents, in seat order after the agent: one player (or name,
    or player spec) for every seat, a list of ``k`` shared by all games, or a callable
    that makes one game's list (called once per game: each game keeps its own). A spec
    other than a kernel player's name (``"expert"``, ``"ppo"``) makes a new player for
    each of its seats in every game."""
    if callable(opponents) and not hasattr(opponents, "act"):
        games = []
        for i in range(num_envs):
            made = opponents()
            if isinstance(made, str) or not isinstance(made, Sequence) or len(made) != k:
                raise ValueError(f"opponents(): game {i} got {made!r}, not a list of {k} players")
            for j, o in enumerate(made):
                _check_opponent(o, f"opponents() of game {i}, seat {j + 1} after the agent")
            games.append(list(made))
        return games
    if isinstance(opponents, str) or hasattr(opponents, "act"):
        opponents = [opponents] * k
    if not isinstance(opponents, Sequence) or len(opponents) != k:
        raise ValueError(f"opponents: give one opponent, a list of {k}, or a callable making the list")
    specs = [isinstance(o, str) and opponent_kind(o) is None for o in opponents]
    if any(specs):  # a player spec: a new player in each of its seats of every game
        built = [
            [spec_player(o) if s else o for o, s in zip(opponents, specs, strict=True)]
            for _ in range(num_envs)
        ]
        for j, o in enumerate(built[0]):
            _check_opponent(o, f"opponents[{j}]")
        return built
    for j, o in enumerate(opponents):
        _check_opponent(o, f"opponents[{j}]")
    return [list(opponents)] * num_envs


def kernel_opponents(opponents: Any, k: int) -> list[tuple[int, float]] | None:
    """The kernel kinds of ``k`` opponents, or None where one of them is not a kernel
    player (a callable making the list counts as not); bad input raises ``ValueError``."""
    if callable(opponents) and not hasattr(opponents, "act"):
        return None
    kinds = [opponent_kind(o) for o in seat_players(opponents, k, 1)[0]]
    return None if any(x is None for x in kinds) else kinds  # type: ignore[return-value]


def player_name(player: Any) -> str:
    """How errors name an external player: its class and, for a model, its file."""
    name = getattr(player, "path", None) or getattr(player, "name", None)
    return f"{type(player).__name__}({name})" if isinstance(name, str) else type(player).__name__


@cache
def value_array(rules: Rules) -> np.ndarray:
    """:func:`~thirtyone_env.game.cards.hand_table` as the kernels read it: float64,
    read-only, built once per rules."""
    values = np.asarray(hand_table(rules), dtype=np.float64)
    values.flags.writeable = False
    return values


class KernelGames:
    """``num_envs`` compiled games of one learning seat each.

    The arrays are public for the kernels' callers (the two envs and benchmarks); the
    methods are the steps every caller takes: :meth:`seed`, :meth:`reset_games`,
    :meth:`encode`, :meth:`update_masks`, :meth:`step`.

    Args:
        players: per game, its opponents in seat order after the agent (names of kernel
            players or player objects; see :func:`seat_players`).
        agents: per game, a player object for the agent's seat too, asked as the
            external seats are: the games then play to their end by themselves
            (:meth:`play_to_end`, after :meth:`load_state` and :meth:`advance`; the
            play-outs of measured knocks); ``None`` (the default): the caller steps it.
    """

    def __init__(
        self,
        num_envs: int,
        layout: ObsLayout,
        rules: Rules,
        players: list[list[Any]],
        seat: int | str,
        episode: str,
        reward: str,
        agents: Sequence[Any] | None = None,
    ) -> None:
        N, n = num_envs, layout.num_players
        k = n - 1
        self.num_envs = N
        self.num_players = n
        self.layout = layout
        self.rules = rules
        self.seat = -1 if seat == "random" else int(seat)
        self.players = players
        self.opp_kind = np.full((N, k), K.OPP_EXTERNAL, dtype=np.int64)
        self.opp_knock2 = np.zeros((N, k), dtype=np.float64)
        self.ext_id = np.full((N, k), -1, dtype=np.int64)
        self.external: list[Any] = []  #: the distinct player objects asked from outside
        self.encodings: list[str] = []  #: each one's obs_encoding
        # what each reads: "flat" / "dict" without the history part, with it for
        # "+history" (the agent's own observation follows ``layout``)
        self._plain = ObsLayout(n, rules)
        self.ext_layouts: list[tuple[str, ObsLayout]] = []  #: (encoding, layout) of each
        self.ext_offsets: list[np.ndarray] = []  #: each one's layout offsets for the kernel
        self.batched: list[bool] = []  #: whether each one has act_batch
        self.owner: list[int] = []  #: the one game each plays in (its own generator), else -1
        self._index: dict[int, int] = {}
        games_of: dict[int, set[int]] = {}
        for i, row in enumerate(players):
            for o in row:
                games_of.setdefault(id(o), set()).add(i)
        #: per game: its own (not shared) players with ``reset``, in seat order
        self.game_resets: dict[int, list[Any]] = {}
        #: per game: (seat slot, player) of the players that stand for another (``delegate``)
        self.delegating: dict[int, list[tuple[int, Any, bool]]] = {}
        for i, row in enumerate(players):
            for j, o in enumerate(row):
                own = not isinstance(o, str) and len(games_of[id(o)]) == 1
                if own and hasattr(o, "reset"):
                    self.game_resets.setdefault(i, []).append(o)
                if callable(getattr(o, "delegate", None)):
                    self.delegating.setdefault(i, []).append((j, o, own))
                else:
                    self._seat(i, j, o, own)
        self.agent_id = np.full(N, -1, dtype=np.int64)
        if agents is not None:
            if len(agents) != N:
                raise ValueError(f"agents: give one player per game ({N}), got {len(agents)}")
            for i, o in enumerate(agents):
                if isinstance(o, str):
                    raise ValueError(f"agents: game {i}'s agent seat takes a player object, not {o!r}")
                self.agent_id[i] = self._external(o, i, False, f"game {i}, the agent's seat")
        self.shared_resets = [
            o for u, o in enumerate(self.external) if self.owner[u] < 0 and hasattr(o, "reset")
        ]
        self._players_rngs: dict[int, np.random.Generator] = {}
        self.g = np.zeros((N, K.NUM_G), dtype=np.int32)
        self.seat_i = np.zeros((N, n, K.NUM_S), dtype=np.int32)
        self.hands = np.full((N, n, 4), -1, dtype=np.int64)
        self.stock = np.zeros((N, K.NUM_CARDS), dtype=np.int64)
        self.pile = np.zeros((N, K.NUM_CARDS), dtype=np.int64)
        self.known = np.zeros((N, n), dtype=np.int64)
        self.disc_seat = np.full((N, K.NUM_CARDS), -1, dtype=np.int32)
        self.disc_order = np.full((N, K.NUM_CARDS), -1, dtype=np.int32)
        # the discards in order, for view players (PlayerView.discards; a batch's log may
        # be empty when the rules allow very long rounds and no player reads it one game at a time)
        outside = bool(self.external or self.delegating)
        log = rules.max_turns_per_round if "view" in self.encodings or self.delegating else 0
        if N * log > MAX_LOG_ENTRIES:
            if any(e == "view" and not b for e, b in zip(self.encodings, self.batched, strict=True)):
                raise ValueError(
                    f"{N} games of up to {log} discards a round (max_turns_per_round) are too many to "
                    "keep for opponents that read PlayerView.discards one game at a time: play fewer games"
                )
            log = 0
        self.disc_log = np.full((N, log), -1, dtype=np.int16)
        # each game's PCG64 generator (row i) and its players' (row N + i)
        self.rs = np.zeros((2 * N, ROW), dtype=np.uint64)
        self.rew = np.zeros(N, dtype=np.float64)
        self.pending = np.zeros(N, dtype=np.float64)
        self.values = value_array(rules)
        self.deck = np.asarray(rules.deck_cards, dtype=np.int64)
        self.R = kernel_rules.pack(rules, episode, reward)
        self.offsets = kernel_offsets(layout)
        self.scale = float(layout.value_scale)
        self.illegal = np.zeros(N, dtype=np.bool_)
        self.done = np.zeros(N, dtype=np.bool_)
        self.all = np.arange(N, dtype=np.int64)
        A = num_actions(rules)
        self.masks = np.zeros((N, A), dtype=np.int8)
        self.seeded = False
        self.args = (
            self.g,
            self.seat_i,
            self.hands,
            self.stock,
            self.pile,
            self.known,
            self.disc_seat,
            self.disc_order,
            self.disc_log,
            self.R,
            self.rs,
            self.values,
            self.deck,
            self.opp_kind,
            self.opp_knock2,
            self.rew,
            self.pending,
        )  # fmt: skip  (the arrays every game kernel takes, in order)
        # the external seats' buffers: masks, flat observations, views (row k = k-th waiting game)
        # (a delegating seat may stand for any kind of player: all of them)
        self.ext_masks = np.zeros((N if outside else 0, A), dtype=np.int8)
        flat = self.delegating or any(e != "view" for e in self.encodings)
        width = max((lay.size for _, lay in self.ext_layouts), default=0)
        if self.delegating:  # may stand for any player
            width = self._plain.with_history().size
        self.ext_obs = np.zeros((N if flat else 0, width), dtype=np.float32)
        self.ext_views = empty_batch(rules, n, N if self.delegating or "view" in self.encodings else 0, log)
        self._view_arrays = tuple(
            getattr(self.ext_views, f)
            for f in (
                "seat",
                "phase",
                "hand",
                "hand_len",
                "drawn",
                "took",
                "pile",
                "pile_len",
                "known",
                "discard_counts",
                "discard_log",
                "num_discards",
                "lives",
                "active",
                "dealer",
                "knocker",
                "stock_size",
                "turn",
                "round_no",
                "turns_played",
            )
        )  # fmt: skip  (seat_views' outputs, in order)

    def _seat(self, i: int, j: int, o: Any, own: bool = False) -> None:
        """Seat player ``o`` in slot ``j`` of game ``i``: a kernel player's kind, or an
        external player's index (``own``: it plays in this game only, drawing from the
        game's generator; one seen in a second game is shared from then on)."""
        kind = opponent_kind(o)
        if kind is not None:
            self.opp_kind[i, j], self.opp_knock2[i, j] = kind
            self.opp_knock2[i, j] *= 2
            self.ext_id[i, j] = -1
            return
        self.opp_kind[i, j] = K.OPP_EXTERNAL
        self.ext_id[i, j] = self._external(o, i, own, f"game {i}, seat {j + 1} after the agent")

    def _external(self, o: Any, i: int, own: bool, where: str) -> int:
        """The index of player object ``o`` among the external players (added when new),
        seen in game ``i``."""
        u = self._index.get(id(o))
        if u is None:
            _check_opponent(o, where)
            u = self._index[id(o)] = len(self.external)
            self.external.append(o)
            encoding = getattr(o, "obs_encoding", "flat")
            self.encodings.append(encoding)
            if encoding != "view":
                encoding, lay = split_encoding(encoding, self._plain)
                self.ext_layouts.append((encoding, lay))
            else:
                self.ext_layouts.append((encoding, self._plain))
            self.ext_offsets.append(kernel_offsets(self.ext_layouts[-1][1]))
            self.batched.append(callable(getattr(o, "act_batch", None)))
            self.owner.append(i if own else -1)
        elif self.owner[u] != i:
            self.owner[u] = -1  # seen in two games: shared
        return u

    def _seat_delegates(self, rows: list[int]) -> None:
        """Seat, in games ``rows``, the player each delegating seat stands for this game
        (asked after its ``reset``): a league seat playing greedy runs in the kernels,
        and games whose seats play one shared player are asked together."""
        for i in rows:
            for j, o, own in self.delegating.get(i, ()):
                self._seat(i, j, o.delegate(), own)

    def seed(self, seeds: Sequence[int | None]) -> None:
        """Seed game ``i``'s generator as the single env seeds its own with ``seeds[i]``;
        shared external players with ``reset(rng)`` get one players' generator, seeded
        from the first game's seed (a player that decides for many games draws in its
        batches' order)."""
        for i, sd in enumerate(seeds):
            self.rs[i] = state_row(seeding.np_random(sd)[0])
        if self.shared_resets:
            rng = players_generator(np.random.default_rng(seeds[0]))
            for o in self.shared_resets:
                o.reset(rng)
        self.seeded = True

    def reset_games(self, rows: np.ndarray) -> None:
        """New games in ``rows``, each played to the agent's first decision. A game's
        own players with ``reset(rng)`` get that game's players' generator, seeded after
        its seat is drawn, as in ``ThirtyOneEnv.reset``."""
        K.draw_seats(self.g, self.rs, rows, self.seat, self.num_players)
        if self.game_resets:
            for i in rows.tolist():
                own = self.game_resets.get(i)
                if own:
                    rng = self._players_rng(i)
                    for o in own:
                        o.reset(rng)
                    self.rs[self.num_envs + i] = state_row(rng)
        if self.delegating:
            self._seat_delegates(rows.tolist())
        K.reset_games(*self.args, rows)
        self.play_external_seats()

    def encode(self, rows: np.ndarray, out: np.ndarray) -> None:
        """The agent's observations in games ``rows``, into ``out[rows[k]]``."""
        self._encode(rows, K.G_SEAT, out, False)

    def _encode(self, rows: np.ndarray, col: int, out: np.ndarray, compact: bool) -> None:
        """The flat observations of the seat in ``g``'s column ``col`` (the agent's or
        the seat to act's) in games ``rows``, into ``out[k]`` or (not ``compact``) ``out[rows[k]]``."""
        K.encode(
            self.g, self.seat_i, self.hands, self.pile, self.known, self.disc_seat, self.disc_order, self.R,
            self.values, self.deck, self.offsets, self.scale, rows, col, out, compact,
        )  # fmt: skip

    def update_masks(self) -> None:
        K.masks(self.g, self.seat_i, self.hands, self.R, self.masks)

    def step(self, actions: np.ndarray, obs: np.ndarray) -> None:
        """Play every game's action, the opponents' replies and settlements; writes
        ``rew``, ``illegal``, ``done``, the observations into ``obs`` and the masks."""
        if not self.external and not self.delegating:  # one kernel call does it all
            K.step_encode(
                *self.args, actions, self.illegal, self.done, self.offsets, self.scale, obs, self.masks
            )
            return
        K.step_games(*self.args, actions, self.illegal, self.done)
        self.play_external_seats()
        np.equal(self.g[:, K.G_STATUS], K.OVER, out=self.done)
        self.encode(self.all, obs)
        self.update_masks()

    def summary(self, i: int) -> dict[str, Any]:
        """Where game ``i`` stands, as a finished game's info gives it: the agent's
        ``seat``, the ``round``, every seat's ``lives`` and ``active`` flag, and the
        rounds each seat was dealt in (``rounds_played``) and the lives each was charged
        in them (``lives_lost``, a free ride's last loss too; all public at the table)."""
        seats = self.seat_i[i]
        return {
            "seat": int(self.g[i, K.G_SEAT]),
            "round": int(self.g[i, K.G_ROUND]),
            "lives": tuple(seats[:, K.S_LIVES].tolist()),
            "active": tuple(bool(x) for x in seats[:, K.S_ACTIVE]),
            "rounds_played": tuple(seats[:, K.S_ROUNDS].tolist()),
            "lives_lost": tuple(seats[:, K.S_LOST].tolist()),
        }

    def load_state(self, i: int, s: GameState, seat: int, rng: np.random.Generator | None = None) -> None:
        """Put the engine state ``s`` (a stock game in the middle of a round, at a draw
        or a discard) into game ``i``, ``seat`` as its learning seat, ``rng``'s state
        (if given) as its generator, and its players' generator seeded from it: the
        kernels play on from there as the engine would (search players roll sampled
        worlds out this way). The round in progress counts as one dealt to every seat
        still in (``rounds_played``), lives lost start at zero; the game ends with this
        round (``episode="round"``) or the game, as the games were built."""
        rules = s.rules
        if rules != self.rules or s.num_players != self.num_players:
            raise ValueError(
                f"load_state: a {s.num_players}-player state of rules {rules} does not fit these "
                f"{self.num_players}-player games of rules {self.rules}"
            )
        if s.phase not in (DRAW, DISCARD):
            raise ValueError(
                f"load_state: the kernels take a state at a draw or discard, not {PHASE_NAMES[s.phase]}"
            )
        if not 0 <= seat < self.num_players:
            raise ValueError(f"load_state: seat {seat} is not a seat of {self.num_players}")
        g, si = self.g[i], self.seat_i[i]
        g[:] = 0
        g[K.G_DEALER], g[K.G_CUR], g[K.G_PHASE], g[K.G_KNOCKER] = s.dealer, s.current, s.phase, s.knocker
        g[K.G_FINAL], g[K.G_TURN], g[K.G_DRAWN], g[K.G_TOOK] = s.final_left, s.turn, s.drawn, s.took
        g[K.G_ROUND], g[K.G_SLEN], g[K.G_PLEN] = s.round_no, len(s.stock), len(s.discard)
        g[K.G_NDISC], g[K.G_SEAT] = len(s.discards), seat
        g[K.G_TOPSEAT] = s.disc_seat[s.discard[-1]] if s.discard else -1
        g[K.G_STATUS] = K.AGENT if s.current == seat else K.EXTERNAL
        si[:] = 0
        self.hands[i] = -1
        for p in range(self.num_players):
            si[p, K.S_LIVES], si[p, K.S_ACTIVE], si[p, K.S_TURNS] = s.lives[p], s.active[p], s.player_turns[p]
            si[p, K.S_HLEN], si[p, K.S_ROUNDS] = len(s.hands[p]), s.active[p]
            si[p, K.S_TALLY : K.S_TALLY + len(s.tally[p])] = s.tally[p]
            self.hands[i, p, : len(s.hands[p])] = s.hands[p]
            self.known[i, p] = s.known[p]
        self.stock[i, : len(s.stock)] = s.stock
        self.pile[i, : len(s.discard)] = s.discard
        self.disc_seat[i] = s.disc_seat
        self.disc_order[i] = s.disc_order
        log = self.disc_log[i]
        log[:] = -1
        for k, (p, card) in enumerate(s.discards):
            si[p, K.S_DISCS] += 1
            if k < len(log):
                log[k] = p * NUM_CARDS + card
        if rng is not None:
            self.rs[i] = state_row(rng)
            self.rs[self.num_envs + i] = state_row(players_generator(rng))
        self.rew[i] = 0.0
        self.pending[i] = 0.0

    # -- external seats -------------------------------------------------------------

    def play_external_seats(self) -> None:
        """Until no game waits on an external seat: gather the waiting games by player,
        ask each player once for all of its games, play the answers on."""
        g = self.g
        n = self.num_players
        while True:
            waiting = np.flatnonzero(g[:, K.G_STATUS] == K.EXTERNAL)
            if not waiting.size:
                return
            self._answer(waiting, self.ext_id[waiting, (g[waiting, K.G_CUR] - g[waiting, K.G_SEAT]) % n - 1])

    def _answer(self, waiting: np.ndarray, who: np.ndarray) -> None:
        """Games ``waiting`` on external players ``who``: each player asked once for all
        of its games, the answers played on."""
        order = np.argsort(who, kind="stable")
        rows, who = waiting[order], who[order]
        K.seat_masks(self.g, self.seat_i, self.hands, self.R, rows, self.ext_masks)
        actions = np.empty(len(rows), dtype=np.int64)
        cuts = [0, *(np.flatnonzero(np.diff(who)) + 1).tolist(), len(rows)]
        for start, stop in zip(cuts[:-1], cuts[1:], strict=True):
            actions[start:stop] = self._ask(int(who[start]), rows[start:stop], start, stop)
        K.play_external(*self.args, rows, actions)

    def advance(self, rows: np.ndarray) -> None:
        """Games ``rows`` (put there by :meth:`load_state`) played on by the kernel
        seats to the next decision of the agent or an external seat (or their end)."""
        K.advance_rows(*self.args, np.asarray(rows, dtype=np.int64))

    def play_to_end(self) -> None:
        """Every game played to its end (status over), the agent's seat too (the games
        must have been built with ``agents``): the waiting games gathered by player and
        each player asked once for all of them, turn after turn."""
        if (self.agent_id < 0).any():
            raise ValueError("play_to_end: every game needs a player in the agent's seat (agents=)")
        g = self.g
        while True:
            self.play_external_seats()
            waiting = np.flatnonzero(g[:, K.G_STATUS] == K.AGENT)
            if not waiting.size:
                return
            self._answer(waiting, self.agent_id[waiting])

    def _ask(self, u: int, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Player ``u``'s actions in games ``rows`` (buffer rows ``start:stop``), checked.
        The player gets copies, never views into the buffers every external seat shares
        (through a view's ``base`` it would read other seats' rows: their hands)."""
        player, encoding = self.external[u], self.encodings[u]
        masks = self.ext_masks[start:stop].copy()
        if encoding == "view":
            K.seat_views(
                self.g, self.seat_i, self.hands, self.stock, self.pile, self.known, self.disc_log,
                rows, *(a[start:stop] for a in self._view_arrays),
            )  # fmt: skip
            obs: Any = batch_rows(self.ext_views, start, stop)
        else:
            encoding, lay = self.ext_layouts[u]
            obs = self.ext_obs[start:stop, : lay.size]
            K.encode(
                self.g, self.seat_i, self.hands, self.pile, self.known, self.disc_seat, self.disc_order, self.R,
                self.values, self.deck, self.ext_offsets[u], self.scale, rows, K.G_CUR, obs, True,
            )  # fmt: skip
        if self.batched[u] and encoding != "dict":
            mine = obs if encoding == "view" else obs.copy()  # (a view batch is copied already)
            actions = self._check_batch(u, player.act_batch(mine, masks.copy()), rows, masks)
        else:
            actions = np.empty(len(rows), dtype=np.int64)
            synced = self.owner[u] >= 0 and hasattr(player, "reset")
            for k in range(len(rows)):
                i = int(rows[k])
                if synced:  # this game's own player: it draws from the game's players' generator
                    rng = self._players_rng(i)
                    try:
                        a = player.act(self._one(obs, encoding, k, u), masks[k].copy())
                    finally:
                        self.rs[self.num_envs + i] = state_row(rng)
                else:
                    a = player.act(self._one(obs, encoding, k, u), masks[k].copy())
                actions[k] = self._check_one(u, a, i, masks[k])
        return actions

    def _one(self, obs: Any, encoding: str, k: int, u: int) -> Any:
        """Row ``k`` of a batch of observations as one-game ``act`` of external player
        ``u`` takes it."""
        if encoding == "view":
            return obs.view(k)
        row = obs[k].copy()
        if encoding == "dict":
            return {name: row[sl] for name, sl in self.ext_layouts[u][1].slices.items()}
        return row

    def _players_rng(self, i: int) -> np.random.Generator:
        """Game ``i``'s players' generator as a NumPy ``Generator`` in its current
        state (the game's own players draw from it as in the single env; the caller
        writes its state back into ``rs[N + i]``)."""
        rng = self._players_rngs.get(i)
        if rng is None:
            rng = self._players_rngs[i] = np.random.default_rng()
        load_row(rng, self.rs[self.num_envs + i])
        return rng

    def _where(self, u: int, i: int) -> str:
        g = self.g[i]
        return (
            f"opponent {player_name(self.external[u])} in game {i} (seat {int(g[K.G_CUR])}, "
            f"{PHASE_NAMES[int(g[K.G_PHASE])]} phase)"
        )

    def _check_one(self, u: int, a: Any, i: int, mask: np.ndarray) -> int:
        """One action id, legal in ``mask``; else the error names the player and game."""
        ok = isinstance(a, int | np.integer) and not isinstance(a, bool | np.bool_)
        if not ok or not 0 <= a < len(mask) or not mask[a]:
            legal = legal_text(np.flatnonzero(mask).tolist())
            raise IllegalActionError(f"{self._where(u, i)} chose {a!r}: not a legal action; legal: {legal}")
        return int(a)

    def _check_batch(self, u: int, actions: Any, rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``act_batch``'s answer: one legal action id per game, else the error names
        the player (and the first game at fault)."""
        B = len(rows)
        arr = np.asarray(actions) if not isinstance(actions, np.ndarray) else actions
        if arr.shape != (B,) or arr.dtype.kind not in "iu":
            raise IllegalActionError(
                f"opponent {player_name(self.external[u])}: act_batch answered games "
                f"{rows[:3].tolist()}{'...' if B > 3 else ''} ({B} in all) with "
                f"{'dtype ' + str(arr.dtype) if arr.shape == (B,) else 'shape ' + str(arr.shape)}; "
                f"it must return {B} integer action ids, shape ({B},)"
            )
        A = masks.shape[1]
        inside = (arr >= 0) & (arr < A)
        ok = inside.copy()
        ok[inside] = masks[np.flatnonzero(inside), arr[inside]] != 0
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            self._check_one(u, arr[k].item(), int(rows[k]), masks[k])
        return arr


class CompiledGame:
    """One game on the compiled kernels, for ``ThirtyOneEnv(backend="compiled")``: the
    same seat, deals, opponents and observations as the Python engine, without the
    per-step Python of the engine and the encoder (no autoreset: the env resets)."""

    def __init__(
        self,
        num_players: int,
        rules: Rules,
        opponents: list,
        seat: Any,
        episode: str,
        reward: str,
        opponent_history: bool = False,
    ):
        kinds = kernel_opponents(opponents, num_players - 1)
        if kinds is None or not kernel_rules.batchable(rules):
            why = (
                "; ".join(kernel_rules.refusals(rules))
                or "these opponents (not GreedyPolicy or RandomPolicy)"
            )
            raise ValueError(
                "backend='compiled' plays the stock game with lives against GreedyPolicy or RandomPolicy "
                f"opponents, not {why}: use backend='python'"
            )
        layout = ObsLayout(num_players, rules, opponent_history)
        self.games = games = KernelGames(
            1,
            layout,
            rules,
            seat_players(opponents, num_players - 1, 1),
            seat,
            episode,
            reward,
        )
        self.obs = np.zeros((1, layout.size), dtype=np.float32)
        self._actions = np.zeros(1, dtype=np.int64)
        # one step's kernel arguments, built once: a step is a few microseconds
        self._step_args = (
            *games.args, self._actions, games.illegal, games.done, games.offsets, games.scale, self.obs, games.masks,
        )  # fmt: skip

    @property
    def seeded(self) -> bool:
        """Whether the game's generator was ever seeded (by a first ``reset``)."""
        return self.games.seeded

    def reset(self, seed: int | None) -> np.ndarray:
        games = self.games
        if seed is not None or not games.seeded:
            games.seed([seed])
        games.reset_games(games.all)
        games.encode(games.all, self.obs)
        games.update_masks()
        return self.obs[0].copy()

    def legal(self, action: int) -> bool:
        return bool(self.games.masks[0, action])

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        games = self.games
        self._actions[0] = action
        K.step_encode(*self._step_args)
        return self.obs[0].copy(), float(games.rew[0]), bool(games.done[0])

    def mask(self) -> np.ndarray:
        return self.games.masks[0].copy()

    def info(self) -> dict[str, Any]:
        games = self.games
        g = games.g[0]
        return {
            "action_mask": self.mask(),
            "seat": int(g[K.G_SEAT]),
            "round": int(g[K.G_ROUND]),
            "lives": tuple(games.seat_i[0, :, K.S_LIVES].tolist()),
            "phase": PHASE_NAMES[int(g[K.G_PHASE])],
        }
