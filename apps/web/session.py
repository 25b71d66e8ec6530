"""One game at the web table: a person's seat against players built from specs.

The game runs on the one table loop (:class:`~thirtyone_env.harness.driver.Table`):
the opponents move until the person must act, then the person's move is checked and
played. What goes to the browser is what that seat sees at a real table and nothing
else: its :func:`~thirtyone_env.game.views.player_view` (own hand, face-up cards, the
cards known to be in each hand, lives, whose turn), the moves since the last answer as
that seat saw them (another seat's stock draw without its card, a knock without its
value), and each settled round as it is shown at the table (every hand at a showdown
and at the points game's blitz; at another blitz only the blitzer's 31; after a void
round no other hand). The record of a
game (every card, as a record holds) is written only once the game is over.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD, action_name
from thirtyone_env.game.cards import format_card, hand_value
from thirtyone_env.game.engine import GAME_OVER, ROUND_OVER, legal_actions, new_game
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.game.state import hands_shown
from thirtyone_env.game.views import player_view, public_result
from thirtyone_env.harness.driver import Table, check_table, reset_players
from thirtyone_env.harness.replay import describe_event

#: Most seeds a person may give (the record keeps it).
MAX_SEED = 2**63 - 1


class TableFull(Exception):
    """Every place for a game is taken by a game still in play."""


class MoveTimeout(Exception):
    """The opponents took longer than the move's time limit."""


class Deadline:
    """The table's observer: before each move it checks the clock, and a move that
    would be played after ``until`` (``time.monotonic``) raises :class:`MoveTimeout`,
    so a long run of the opponents' moves stops between two of them."""

    def __init__(self) -> None:
        self.until = float("inf")

    def before(self, state: Any, seat: int, action: int) -> bool:
        if time.monotonic() > self.until:
            raise MoveTimeout
        return False

    def after(self, state: Any, seat: int, action: int) -> None:  # never asked for
        pass


def card(c: int | None) -> str | None:
    """A card as its short name (``"Qh"``); None for no card or a face-down one."""
    return None if c is None or c < 0 else format_card(c)


def cards(cs: Sequence[int | None]) -> list[str | None]:
    return [card(c) for c in cs]


class GameSession:
    """A game of ``opponents`` (player specs, built by ``make_player``) and a person in
    ``seat``, with ``rules`` (a preset name) and ``seed`` (None: a fresh one, kept in
    the record). Not thread-safe by itself: :class:`GameStore` holds a lock per game."""

    def __init__(
        self,
        rules: str,
        opponents: Sequence[str],
        seat: int,
        seed: int | None,
        make_player: Callable[[str], Any],
        move_seconds: float = float("inf"),
    ) -> None:
        if rules not in PRESETS:
            raise ValueError(f"unknown rules preset {rules!r}; presets are {sorted(PRESETS)}")
        self.rules_name = rules
        self.rules = Rules.preset(rules)
        self.num_players = self.rules.check_num_players(len(opponents) + 1)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be 0..{self.num_players - 1}, got {seat!r}")
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
        ):
            raise ValueError(f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
        self.seat = seat
        self.seed = secrets.randbelow(MAX_SEED) if seed is None else seed
        self.opponents = list(opponents)
        others = []
        for spec in self.opponents:
            player = make_player(spec)
            check_table(player, self.num_players, self.rules, spec)
            others.append(player)
        it = iter(others)
        players = [None if p == seat else next(it) for p in range(self.num_players)]
        it = iter(self.opponents)
        self.names = ["you" if p == seat else next(it) for p in range(self.num_players)]
        rng = np.random.default_rng(self.seed)
        reset_players(others, rng)
        self.pending: list[dict[str, Any]] = []  # what happened since the last answer
        self.shown = 0  # history events of the round already turned into ``pending``
        self.resigned = False
        self.ended = False
        self.saved: str | None = None
        self.stopped: str | None = None  # why the game was stopped (an opponent ran out of time)
        self.turn = 0  # the person's moves so far: a move names the turn it is for
        self.touched = time.monotonic()
        self.move_seconds = move_seconds
        self.deadline = Deadline()
        self.table = Table(
            new_game(self.rules, self.num_players, rng),
            players,
            rng,
            keep_history=True,
            on_settle=self._settled,
            on_deal=self._dealt,
            observer=self.deadline,
            play_out=True,  # a person knocked out watches the game to its end: a whole record
        )
        self.pending.append(self._deal_event(self.table.state))

    def begin(self) -> None:
        """The others' moves before the person's first (a game is built, then begun:
        building its players may take a while, its moves have the move's time limit)."""
        self._advance()

    def _advance(self) -> None:
        """The others' moves until the person must act, within the move's time limit
        (past it the game is stopped: :class:`MoveTimeout`)."""
        self.deadline.until = time.monotonic() + self.move_seconds
        try:
            self.ended = self.table.advance(self.seat)
        except MoveTimeout:
            self.stop(f"the opponents took more than {self.move_seconds:g} s to move: the game was stopped")
            raise
        finally:
            self.deadline.until = float("inf")
        self._collect()

    def stop(self, why: str) -> None:
        """End the game for good (it takes no more moves; it can still be saved)."""
        self.stopped = why

    # -- what the seat saw happen -------------------------------------------------------

    def _collect(self) -> None:
        """The round's events since the last call, as this seat saw them."""
        s = self.table.state
        for kind, who, data in s.history[self.shown :]:
            text = describe_event(kind, who, data, viewer=self.seat)
            if text:
                event: dict[str, Any] = {"type": "move", "round": s.round_no, "seat": who, "text": text}
                if kind in (ev.DISCARD, ev.TAKE_DISCARD) or (kind == ev.DRAW_STOCK and who == self.seat):
                    event["card"] = card(data)
                self.pending.append(event)
        self.shown = len(s.history)

    def _settled(self, s: Any) -> None:
        self._collect()
        self.pending.append(self._settlement(s))

    def _dealt(self, s: Any) -> None:
        self.shown = 0
        self.pending.append(self._deal_event(s))

    @staticmethod
    def _deal_event(s: Any) -> dict[str, Any]:
        return {
            "type": "deal",
            "round": s.round_no,
            "dealer": s.dealer,
            "text": f"round {s.round_no}: seat {s.dealer} deals",
        }

    def _settlement(self, s: Any) -> dict[str, Any]:
        """A settled round as this seat sees it: every hand where all are laid down
        (a showdown; the points game's blitz), else the blitzers' 31 and its own hand
        (a blitz; no other after a void round)."""
        r = public_result(s.result, self.seat, s.rules)
        shown = set(range(self.num_players)) if hands_shown(r.reason, s.rules) else {*r.blitzers, self.seat}
        return {
            "type": "settle",
            "round": r.round_no,
            "reason": r.reason,
            "detail": r.detail,
            "knocker": r.knocker,
            "hands": [cards(h) if p in shown and h else None for p, h in enumerate(s.hands)],
            "values": list(r.values),
            "losses": list(r.losses),
            "lives": list(r.lives_after),
            "eliminated": list(r.eliminated),
            "gains": list(r.gains),
            "scores": list(r.score_after),
        }

    # -- the person's move --------------------------------------------------------------

    def legal(self) -> list[int]:
        s = self.table.state
        if self.over or s.phase >= ROUND_OVER or s.current != self.seat:
            return []
        return [int(a) for a in legal_actions(s)]

    def move(self, action: Any, turn: int | None = None) -> None:
        """Play the person's ``action`` (an action id) and let the others move until
        the person must act again; ``ValueError`` (the game unchanged) for a move that
        is not an integer or not legal now. ``turn`` (the view's ``turn``) makes a
        retry safe: a move sent twice is played once, the second refused."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"a move is an action id (an integer), got {action!r}")
        if turn is not None and turn != self.turn:
            raise ValueError(
                f"it is not your turn: this move was for turn {turn}, the game is at turn {self.turn} "
                "(a move sent twice is played once)"
            )
        legal = self.legal()
        if not legal:
            if self.stopped:
                raise ValueError(f"it is not your turn: {self.stopped}")
            raise ValueError("it is not your turn: the game is over" if self.over else "it is not your turn")
        if action not in legal:
            raise ValueError(f"move {action} is not legal now; legal: {legal}")
        self.table.play(action)
        self.turn += 1
        self._collect()
        self._advance()

    def moves(self, legal: list[int]) -> list[dict[str, Any]]:
        """The move buttons: the table's basic moves always (``legal`` False when not
        allowed now, shown disabled), then every other legal move."""
        basic = [DRAW_STOCK, TAKE_DISCARD, KNOCK, STAND] if self.rules.table == "stock" else [KNOCK, STAND]
        out = [{"id": a, "label": action_name(a), "legal": a in legal} for a in basic]
        return out + [{"id": a, "label": action_name(a), "legal": True} for a in legal if a not in basic]

    def resign(self) -> None:
        """Stop playing (the game is over for the person; it can then be saved)."""
        self.resigned = True

    @property
    def over(self) -> bool:
        return self.ended or self.resigned or self.stopped is not None

    # -- answers ------------------------------------------------------------------------

    def take_events(self) -> list[dict[str, Any]]:
        """The events since the last answer (then forgotten)."""
        out, self.pending = self.pending, []
        return out

    def view(self) -> dict[str, Any]:
        """The table as this seat sees it now, with its legal moves."""
        s = self.table.state
        v = player_view(s, self.seat)
        seats = []
        for p in range(self.num_players):
            seats.append(
                {
                    "seat": p,
                    "name": self.names[p],
                    "lives": v.lives[p],
                    "active": bool(v.active[p]),
                    "known": cards(v.known[p]) if p != self.seat else [],
                    "score": v.score[p] if v.score else None,
                }
            )
        legal = self.legal()
        hand = list(v.hand)
        return {
            "rules": self.rules_name,
            "table": self.rules.table,
            "scoring": self.rules.scoring,
            "players": self.num_players,
            "seat": self.seat,
            "round": v.round_no,
            "dealer": v.dealer,
            "phase": v.phase,
            "current": s.current if s.phase < ROUND_OVER and not self.over else None,
            "my_turn": bool(legal),
            "hand": cards(hand),
            "hand_value": hand_value(hand, self.rules) if len(hand) == 3 else None,
            "drawn": card(v.drawn),
            "top_discard": card(v.top_discard),
            "discard_pile": cards(v.discard_pile),
            "stock": v.stock_size,
            "knocker": v.knocker if v.knocker >= 0 else None,
            "table_hands": [cards(h) for h in v.table],
            "muck": cards(v.muck),
            "choice": [cards(h) for h in v.choice],
            "pot": v.pot,
            "seats": seats,
            "moves": self.moves(legal),
            "turn": self.turn,
            "over": self.over,
            "stopped": self.stopped,
            "finished": s.phase == GAME_OVER,
            "winners": list(s.winners) if s.phase == GAME_OVER else [],
            "out": not v.active[self.seat],
            "saved": self.saved,
        }

    def record_lines(self) -> list[str]:
        """The game as JSON Lines (every card: only once the game is over)."""
        from thirtyone_env.harness.records import game_lines

        if not self.over:
            raise ValueError(
                "a game is saved once it is over (finish it or resign): a record shows every card"
            )
        s = self.table.state
        if not self.table.histories:
            raise ValueError("no round was finished: there is nothing to save")
        done = s.phase == GAME_OVER
        return game_lines(
            self.rules,
            self.num_players,
            self.table.histories,
            s.winners if done else None,
            s.lives,
            s.score,
            self.names,
            self.seed,
        )


class GameStore:
    """The server's games by unguessable id (``secrets.token_urlsafe``), each with its
    own lock. At most ``limit`` games: a game untouched for ``idle_seconds`` expires,
    and a finished game untouched the longest makes room for a new one; a game still in
    play is never taken for another, so when every place holds one, a new game is
    refused (:class:`TableFull`)."""

    def __init__(self, limit: int, idle_seconds: float) -> None:
        self.games: dict[str, tuple[GameSession, threading.Lock]] = {}
        self.limit = limit
        self.idle_seconds = idle_seconds
        self.lock = threading.Lock()

    def expire(self) -> None:
        """Forget the games untouched for ``idle_seconds``."""
        now = time.monotonic()
        with self.lock:
            for key in [k for k, (g, _) in self.games.items() if now - g.touched > self.idle_seconds]:
                del self.games[key]

    def check_room(self) -> None:
        """:class:`TableFull` unless a new game would find a place (checked before its
        players are built; :meth:`add` checks again)."""
        self.expire()
        with self.lock:
            self._make_room(remove=False)

    def _make_room(self, remove: bool) -> None:
        if len(self.games) < self.limit:
            return
        finished = [k for k, (g, lock) in self.games.items() if g.over and not lock.locked()]
        if not finished:
            raise TableFull(
                f"the table is full: {self.limit} games are in play (an idle game expires after "
                f"{self.idle_seconds / 60:g} minutes)"
            )
        if remove:
            del self.games[min(finished, key=lambda k: self.games[k][0].touched)]

    def add(self, game: GameSession) -> str:
        self.expire()
        with self.lock:
            self._make_room(remove=True)
            key = secrets.token_urlsafe(24)
            self.games[key] = (game, threading.Lock())
            return key

    def remove(self, key: str) -> None:
        """Forget a game (one whose start failed: its id was never given out)."""
        with self.lock:
            self.games.pop(key, None)

    def get(self, key: str) -> tuple[GameSession, threading.Lock] | None:
        self.expire()
        with self.lock:
            found = self.games.get(key)
        if found is not None:
            found[0].touched = time.monotonic()
        return found
