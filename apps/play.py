"""Play Thirty-One in a terminal against the built-in players.

    python -m apps.play --opponents ppo expert expert      (or: thirtyone-play ...)

You take one seat (``--seat``, default 0); the opponents play the others. On your
turn the table is shown (your hand and its value, the top discard, what is known of
each opponent, lives) with the legal moves as short commands:

    s        draw from the stock          d        take the top discard
    k        knock                        t        stand (last turn after a knock)
    x Qh     discard the queen of hearts  3        the move numbered 3 in the list
    ?        help                         q        quit

(The table variants list their exchanges by number, or by name: ``swap 0 1 2``; at a
Switch carry-over offer, ``carry`` or ``decline``.)
Opponents' moves are shown as they happen, with only what a player at the table
would see; a showdown shows every hand and who lost lives. Bad input gets a message
and the question again. ``--record FILE`` saves the game as JSON Lines in a new file
(checked before the game starts; an existing file is never replaced).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import agents
from thirtyone_env.game.actions import (
    DISCARD_BASE,
    DRAW_STOCK,
    KNOCK,
    STAND,
    TAKE_DISCARD,
    action_name,
    parse_action,
)
from thirtyone_env.game.cards import format_card, format_cards, parse_card
from thirtyone_env.game.engine import GAME_OVER, legal_actions, new_game
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.game.state import hands_shown
from thirtyone_env.game.views import describe_view, player_view
from thirtyone_env.harness.command import CommandParser
from thirtyone_env.harness.driver import Table, check_table, reset_players
from thirtyone_env.harness.files import check_new_file
from thirtyone_env.harness.replay import describe_event
from thirtyone_env.harness.report import check_not_inside_a_run

SHORT = {"s": DRAW_STOCK, "d": TAKE_DISCARD, "k": KNOCK, "t": STAND}
#: Short words for moves that have a longer name (the Switch carry-over offer).
ALIASES = {"carry": "carry over", "decline": "decline carry"}
HELP = """commands:
  s        draw from the stock          d        take the top discard
  k        knock                        t        stand (last turn after a knock)
  x Qh     discard the queen of hearts  3        the move numbered 3 in the list
  ?        this help                    q        quit
  carry    Switch: lay your last one-suit hand face up as the new table hand
  decline  Switch: do not carry it over
  (table variants: the move's number, or its name as listed, e.g. 'swap 0 1 2')"""


class QuitGame(Exception):
    """The person asked to stop (or the input ended)."""


def describe_settlement(state: Any, viewer: int) -> str:
    r = state.result
    lines = [f"round over ({r.reason})"]
    if hands_shown(r.reason, state.rules):
        for p, h in enumerate(state.hands):
            if h:
                tag = " (you)" if p == viewer else ""
                lines.append(f"  seat {p}{tag}: {format_cards(h)} = {r.values[p]:g}")
    elif r.reason == "blitz":
        for p in r.blitzers:
            lines.append(f"  seat {p}: {format_cards(state.hands[p])} = 31")
    lost = ", ".join(f"seat {p} loses {x}" for p, x in enumerate(r.losses) if x) or "nobody loses a life"
    lines.append("  " + lost)
    if r.gains and state.rules.scoring != "lives":
        lines.append("  standing change: " + " ".join(f"seat {p}: {g:+g}" for p, g in enumerate(r.gains)))
    if r.eliminated:
        lines.append("  out of the game: " + ", ".join(f"seat {p}" for p in r.eliminated))
    lines.append("  lives: " + " ".join(f"seat {p}: {x}" for p, x in enumerate(r.lives_after)))
    return "\n".join(lines)


def parse_command(text: str, legal: list[int], hand: tuple[int, ...]) -> int:
    """The action a command names; ``ValueError`` with a helpful message otherwise."""
    t = text.strip()
    if not t:
        raise ValueError("type a move (? for help)")
    low = t.lower()
    if low in ("q", "quit", "exit"):
        raise QuitGame
    if t.isdigit():
        k = int(t)
        if not 1 <= k <= len(legal):
            raise ValueError(f"no move numbered {k}: pick 1..{len(legal)}")
        return legal[k - 1]
    if low in SHORT:
        action = SHORT[low]
    elif low.startswith("x"):
        card_text = t[1:].strip()
        try:
            card = parse_card(card_text)
        except ValueError:
            raise ValueError(f"{card_text!r} is not a card: write it like Qh, Ts, 10d, As") from None
        if card not in hand:
            raise ValueError(f"{format_card(card)} is not in your hand ({format_cards(hand)})")
        action = DISCARD_BASE + card
    else:
        try:
            action = parse_action(ALIASES.get(low, t))
        except ValueError:
            raise ValueError(f"unknown command {t!r} (? for help)") from None
    if action not in legal:
        raise ValueError(f"{action_name(action)} is not allowed now")
    return action


def ask(state: Any, seat: int, inp: TextIO, out: TextIO) -> int:
    """Show the table and read a legal move from the person."""
    view = player_view(state, seat)
    legal = legal_actions(state)
    print("\n" + describe_view(view), file=out)
    print("your moves: " + "  ".join(f"{i}) {action_name(a)}" for i, a in enumerate(legal, 1)), file=out)
    while True:
        print("> ", end="", file=out, flush=True)
        line = inp.readline()
        if not line:
            raise QuitGame
        if line.strip() == "?":
            print(HELP, file=out)
            continue
        try:
            return parse_command(line, legal, view.hand)
        except ValueError as e:
            print(f"  {e}", file=out)


def play(
    opponents: list[str],
    rules: Rules,
    seat: int,
    seed: int | None,
    inp: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    record: str | None = None,
) -> int:
    n = len(opponents) + 1
    rng = np.random.default_rng(seed)
    others = [agents.from_spec(spec) for spec in opponents]
    players: list[Any] = []
    k = 0
    for p in range(n):
        if p == seat:
            players.append(None)
        else:
            players.append(others[k])
            k += 1
    reset_players(others, rng)
    names = [("you" if p == seat else opponents[p - (p > seat)]) for p in range(n)]
    print(
        f"Thirty-One, {rules.table} table, {n} players: "
        + ", ".join(f"seat {p}: {x}" for p, x in enumerate(names)),
        file=out,
    )
    shown = 0

    def show_events(s: Any) -> None:
        """Print what the person saw happen since the last call."""
        nonlocal shown
        for kind, who, data in s.history[shown:]:
            text = describe_event(kind, who, data, viewer=seat)
            if text:
                print("  " + text, file=out)
        shown = len(s.history)

    def show_settlement(s: Any) -> None:
        show_events(s)
        print(describe_settlement(s, seat), file=out)

    def show_deal(s: Any) -> None:
        nonlocal shown
        shown = 0
        print(f"\n-- round {s.round_no}, dealer: seat {s.dealer}", file=out)

    table = Table(
        new_game(rules, n, rng),
        players,
        rng,
        keep_history=True,
        on_settle=show_settlement,
        on_deal=show_deal,
    )
    s = table.state
    try:
        while not table.advance(seat):
            show_events(s)
            table.play(ask(s, seat, inp, out))
        if s.phase == GAME_OVER:
            won = seat in s.winners
            print("\nYou win!" if won else f"\nGame over: seat(s) {list(s.winners)} win.", file=out)
        else:
            print("\nYou are out of the game.", file=out)
    except QuitGame:
        print("\nGame abandoned.", file=out)
    histories = table.histories
    if record:
        save_record(record, rules, n, histories, s, names, seed, out)
    return 0


def save_record(
    record: str, rules: Rules, n: int, histories: list[list], s: Any, names: list[str], seed: Any, out: TextIO
) -> None:
    """Write the game's settled rounds as JSON Lines to the new file ``record`` (checked
    again now: a file that appeared meanwhile is never replaced); a game abandoned
    before any round ended has nothing to record."""
    from thirtyone_env.harness.records import game_lines, write_lines

    if not histories:
        print(f"record: no round was finished, nothing written to {record}", file=out)
        return
    check_new_file(record, "--record")
    done = s.phase == GAME_OVER
    lines = game_lines(rules, n, histories, s.winners if done else None, s.lives, s.score, names, seed)
    print(f"record: {write_lines(record, lines, replace=False)}", file=out)


PROG = "thirtyone-play"


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Rules:
    """Every option checked before the game starts (bad ones exit 2 with a message)."""
    try:
        rules = Rules.preset(args.rules)
    except ValueError as e:
        parser.error(str(e))
    n = len(args.opponents) + 1
    try:
        rules.check_num_players(n)
    except ValueError as e:
        parser.error(f"{len(args.opponents)} opponents: {e}")
    if not 0 <= args.seat < n:
        parser.error(f"--seat {args.seat}: seats are 0..{n - 1}")
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    if args.record is not None:
        try:
            check_new_file(args.record, "--record")
            check_not_inside_a_run(args.record, "--record")
            folder = Path(args.record).parent
            if not folder.is_dir():  # (it would be made only after the game, and might not be)
                raise ValueError(f"--record {args.record}: its folder {folder} does not exist")
        except ValueError as e:
            parser.error(str(e))
        except OSError as e:  # e.g. a name too long to look up
            parser.error(f"--record {args.record}: {e.strerror or e}")
    for spec in args.opponents:  # every spec checked before any player is built
        try:
            agents.check_spec(spec)
        except (ValueError, OSError) as e:
            parser.error(str(e))
    for spec in args.opponents:
        try:
            check_table(agents.from_spec(spec), n, rules, spec)
        except (ValueError, OSError) as e:
            parser.error(str(e))
    return rules


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(prog=PROG, description="Play Thirty-One in a terminal.")
    parser.add_argument(
        "--opponents", nargs="+", default=["ppo", "expert", "expert"], help=f"players: {agents.names()}"
    )
    parser.add_argument(
        "--rules",
        default="standard",
        help=f"rules preset: {sorted(PRESETS)}, or house rules PRESET:OPTION=VALUE,... (standard:lives=5,knock_from_turn=2)",
    )
    parser.add_argument(
        "--seat", type=int, default=0, help="your seat (0 plays first after the first dealer)"
    )
    parser.add_argument("--seed", type=int, default=None, help="fix the deal (a non-negative integer)")
    parser.add_argument(
        "--record",
        default=None,
        metavar="FILE",
        help="save the game as JSON Lines in FILE, a new file (never replaced)",
    )
    args = parser.parse_args(argv)
    rules = check_args(parser, args)
    if sys.stdin is None or sys.stdout is None:
        parser.error(
            "standard input or output is closed: the game reads your moves and shows the table there"
        )
    try:
        return play(args.opponents, rules, args.seat, args.seed, record=args.record)
    except KeyboardInterrupt:
        print("\nGame abandoned.")
        return 130
    except (ValueError, OSError) as e:  # a player's illegal move, a record that cannot be written
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
