"""Print a recorded game turn by turn: ``python -m thirtyone_env.harness.replay FILE|DIR [--game K]``.

The game is replayed on the engine (:func:`thirtyone_env.harness.records.replay`), so what is
printed is what the engine does with the recorded deck and actions. A record that
does not replay to every standing it states (each round's result: lives, losses,
values, points or chips, who went out; the game's end) or to the reshuffles it
states (each made, every card it lists drawn), a damaged, empty or
header-only file, and a record folder without its manifest (an interrupted
``evaluate.py --record``) are reported as errors (exit code 2). The file is read one
game at a time.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thirtyone_env.game import events as ev
from thirtyone_env.game.cards import format_card, format_cards
from thirtyone_env.harness.records import (
    MANIFEST,
    incomplete_note,
    read_games,
    read_manifest,
    record_rules,
    replay,
)


def describe_event(kind: str, seat: int, data: Any, viewer: int | None = None) -> str | None:
    """One line for a history event (``None`` for the ones shown otherwise). With a
    ``viewer`` seat, only what that player sees at the table: others' cards drawn from
    the stock and knock values stay hidden, and the round's settlement is left to the
    caller."""
    hidden = viewer is not None and viewer != seat
    who = f"seat {seat} (you)" if viewer == seat else f"seat {seat}"
    if kind == ev.DRAW_STOCK:
        return f"{who} draws from the stock" if hidden else f"{who} draws {format_card(data)} from the stock"
    if kind == ev.TAKE_DISCARD:
        return f"{who} takes {format_card(data)} from the discard pile"
    if kind == ev.DISCARD:
        return f"{who} discards {format_card(data)}"
    if kind in (ev.KNOCK, ev.STAND):
        verb = "KNOCKS" if kind == ev.KNOCK else "stands"
        return f"{who} {verb}" if viewer is not None else f"{who} {verb} holding {data}"
    if kind == ev.END_TURN:
        return f"{who} ends the turn"
    if kind == ev.BLITZ:
        return f"{who} BLITZ (31, {data})"
    if kind == ev.RESHUFFLE:
        return f"the discard pile is reshuffled into a new stock of {data} cards"
    if kind == ev.KEEP:
        return f"{who} (dealer) keeps dealt hand {data}; the other lies face up"
    if kind == ev.CARRY_OVER:
        return f"{who} carries the hand {format_cards(data)} over: it lies face up as table hand 0"
    if kind == ev.DECLINE_CARRY:  # silent at the table: it would tell that an unshown hand qualified
        return None if hidden else f"{who} declines to carry the last hand over"
    if kind in (ev.WIDOW, ev.BUS):
        given, taken = data
        return f"{who} exchanges hand slots {list(given)} for table slots {list(taken)}"
    if kind == ev.SWAP:
        i, t, j = data
        return f"{who} swaps hand slot {i} with slot {j} of table hand {t}"
    if kind == ev.SWAP_HAND:
        return f"{who} swaps the whole hand with table hand {data}"
    if kind == ev.RENEW:
        t, how, cards = data
        shown = format_cards(cards) if how == "up" else "face down"
        return f"{who} renews table hand {t} ({shown})"
    if kind == ev.SETTLE and viewer is None:
        r = data
        values = " ".join("-" if v is None else f"{v:g}" for v in r.values)
        lost = ", ".join(f"seat {p} -{x}" for p, x in enumerate(r.losses) if x)
        gains = "" if not r.gains or any(x < 0 for x in r.gains) else f" | scored {list(r.gains)}"
        out = f" | out: {list(r.eliminated)}" if r.eliminated else ""
        return f"round over ({r.reason}): hands {values} | lives lost: {lost or 'none'}{gains}{out}"
    return None


def print_game(game: list[dict[str, Any]], out: Any = None) -> None:
    """Print a recorded game round by round (to ``out``, else the standard output of
    the moment)."""
    out = sys.stdout if out is None else out
    head = game[0]
    rules = record_rules(head)  # (a record may leave fields at their defaults, as the replay does)
    players = head.get("players") or [f"seat {i}" for i in range(head["num_players"])]
    print(
        f"game: {head['num_players']} players {players}, table={rules.table}, seed={head.get('seed')}",
        file=out,
    )
    shown = 0
    round_no = 0
    state = None
    for state, _seat, _action in replay(game):
        history = state.history
        if state.round_no != round_no and history:  # (a carry-over offer comes before the deal)
            round_no = state.round_no
            deal = history[0]
            hands, upcard = deal[2][0], deal[2][1]
            print(f"\n-- round {state.round_no}, dealer seat {deal[1]}, lives {list(deal[2][2])}", file=out)
            for p, h in enumerate(hands):
                if h:
                    print(f"   seat {p}: {format_cards(h)}", file=out)
            if upcard is not None and upcard >= 0:
                print(f"   upcard: {format_card(upcard)}", file=out)
            for t, cards in enumerate(deal[2][3] if len(deal[2]) > 3 else ()):
                if all(c >= 0 for c in cards):
                    print(f"   table hand {t}: {format_cards(cards)}", file=out)
            if len(deal[2]) > 4 and deal[2][4]:
                print(f"   dealer's second hand: {format_cards(deal[2][4])}", file=out)
            shown = 1
        for kind, seat, data in history[shown:]:
            line = describe_event(kind, seat, data)
            if line:
                print("   " + line, file=out)
        shown = len(history)
    end = next((x for x in game if x["type"] == "end"), None)
    if end:
        print(f"\nwinners: {end['winners']} | lives {end['lives']}", file=out)
    elif state is None:
        print("(no moves recorded)", file=out)
    else:
        print("\n(the game is not finished: the record has no end line)", file=out)


PROG = "python -m thirtyone_env.harness.replay"

#: What a damaged or crafted record can raise on its way through the engine: each is
#: reported as a bad record, never as a traceback.
RECORD_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError)


def record_games(path: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(label, game)`` for every game of a record file, or of a complete record folder
    (``evaluate.py --record``: the files its manifest lists, each checked to hold the
    games the manifest says), one game at a time."""
    if not path.is_dir():
        for k, game in enumerate(read_games(path)):
            yield f"game {k}", game
        return
    manifest = read_manifest(path)
    for entry in manifest["files"]:
        count = 0
        for count, game in enumerate(read_games(path / entry["name"]), 1):
            yield f"{entry['name']} game {count - 1}", game
        if count != entry["games"]:
            raise ValueError(f"{entry['name']} holds {count} games, its manifest says {entry['games']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "file",
        type=Path,
        help="a JSON Lines game record, or a record folder of evaluate.py --record "
        f"(complete only with its {MANIFEST})",
    )
    parser.add_argument("--game", type=int, default=None, help="print only game K (0-based, in file order)")
    args = parser.parse_args(argv)
    if args.game is not None and args.game < 0:
        parser.error(f"--game must be a non-negative integer, got {args.game}")
    seen = 0
    current = ""  # the game being printed, for an error's message
    try:
        note = None if args.file.is_dir() else incomplete_note(args.file)
        if note:
            print(f"{PROG}: warning: {note}", file=sys.stderr)
        for label, game in record_games(args.file):
            current = label
            if args.game is None or args.game == seen:
                print_game(game)
            current = ""
            seen += 1
    except RECORD_ERRORS as e:
        problem = f"missing key {e}" if isinstance(e, KeyError) else str(e)
        if current:
            problem = f"{current}: {problem}"
        if not problem.startswith(str(args.file)):
            problem = f"{args.file}: {problem}"
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: error: {args.file}: {e.strerror or e}", file=sys.stderr)
        return 2
    if seen == 0:
        print(f"{PROG}: error: {args.file} holds no game: an empty record", file=sys.stderr)
        return 2
    if args.game is not None and args.game >= seen:
        print(f"{PROG}: error: --game {args.game}: the record holds games 0..{seen - 1}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
