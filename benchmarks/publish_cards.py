"""Publish strength cards in the docs: a page a card, and an index of them all.

    python benchmarks/publish_cards.py cards/greedy cards/ppo_standard_2p ... \\
        --docs docs/zoo/cards

Each folder is the ``--out`` of one ``evaluate.py --card`` run (``card.json`` and
``card.png``); its name names the page. Writes ``<docs>/<name>.md`` (the
card, the one command that made it and the time it took, its picture),
``<docs>/<name>.png`` and ``<docs>/index.md`` (a row a card). A page there that this
script did not write is never replaced.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.gauntlet import interval_text
from thirtyone_env.harness.files import atomic_write, json_value
from training.card import markdown

MARK = "<!-- written by benchmarks/publish_cards.py: run it again to change this page -->"


def command(config: dict[str, Any], name: str) -> str:
    """The one command that makes the card of ``config`` into ``cards/<name>``."""
    return (
        f"python evaluate.py --card {config['spec']} --seats {config['seats']} --rules {config['rules']} "
        f"--games {config['games']} --decisions {config['decisions']} "
        f"--time-limit {config['time_limit']:.0f} --seed {config['seed']} --workers {config['workers']} "
        f"--out cards/{name}"
    )


def page(card: dict[str, Any], name: str) -> str:
    """The card's page: how it was made, its picture, then the card itself."""
    c = card["config"]
    head, _, body = markdown(card).partition("\n")
    return "\n".join(
        [
            MARK,
            head,
            "",
            f"Made by one command in {_time(card['seconds'])} on one core (its parts: gauntlet "
            f"{_time(card['gauntlet']['seconds'])}, exploiter {_time(card['exploit']['seconds'])}, "
            f"regret {_time(card['regret']['seconds'])}, rating {_time(card['rating']['seconds'])}):",
            "",
            f"    {command(c, name)}",
            "",
            f"![strength card of {c['spec']}]({name}.png)",
            body,
        ]
    )


def _time(seconds: float) -> str:
    return f"{seconds / 60:.0f} minutes" if seconds >= 90 else f"{seconds:.0f} s"


def _span(rows: list[dict[str, Any]]) -> str:
    wins = [100 * r["wins_diff"] for r in rows]
    return f"{min(wins):+.1f} to {max(wins):+.1f}"


def index_row(card: dict[str, Any], name: str) -> str:
    c = card["config"]
    e = card["exploit"]
    m = e["margin"]
    knock = card["regret"]["questions"].get("knock", {}).get("pooled", {})
    regret = f"{knock['regret']:.4f}" if knock else "—"
    return (
        f"| [{name}]({name}.md) | `{c['spec']}` | {c['seats']}, `{c['rules']}` "
        f"| {_span(card['gauntlet']['rows'])} "
        f"| {interval_text(m['wins_diff'], m['wins_low'], m['wins_high'], 100, 1)} "
        f"after {e['training_s'] / 60:.0f} min{'' if (m['wins_low'] or 0) > 0 else ' (no weakness found)'} | {regret} "
        f"| {card['rating']['rating']['ordinal']:.1f} | {card['seconds'] / 60:.0f} |"
    )


def index(cards: list[tuple[str, dict[str, Any]]]) -> str:
    lines = [
        MARK,
        "# Strength cards",
        "",
        "One card a player: the built-in players and every zoo model, each made by one",
        "`evaluate.py --card` command (on its page, with the minutes it took on one core).",
        "A card holds the player's gauntlet (its margin over the expert in its seat at every",
        "gauntlet table, the luck of the cards taken out), an exploiter's margin over it (a",
        "best response trained against copies of it: a lower bound on how beatable it is), its",
        "decision regret against the research oracle and its OpenSkill rating at a reference",
        "table. [Evaluation](../../evaluation.md) says how each part is measured. `*`: the",
        "95% interval excludes 0.",
        "",
        "| card | player | seats, rules | gauntlet: wins − expert, points (lowest to highest table) "
        "| exploiter − player, points [95% CI] | knock regret, lives a decision | rating | minutes |",
        "|---|---|---|---|---|---:|---:|---:|",
    ]
    lines += [index_row(card, name) for name, card in cards]
    return "\n".join(lines) + "\n"


def check_destination(path: Path) -> None:
    """Refuse a page or picture this script did not write."""
    if not path.exists():
        return
    if path.suffix == ".png":
        page_of = path.with_suffix(".md")
        if page_of.is_file() and page_of.read_text().startswith(MARK):
            return
    elif path.read_text().startswith(MARK):
        return
    raise ValueError(f"{path} exists and was not written by this script: refusing to replace it")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cards", nargs="+", type=Path, help="folders of evaluate.py --card runs")
    parser.add_argument("--docs", type=Path, required=True, help="the docs folder of the cards")
    args = parser.parse_args(argv)
    cards = []
    try:
        if not args.docs.is_dir():
            raise ValueError(f"--docs {args.docs}: not a folder")
        for folder in args.cards:
            path = folder / "card.json"
            if not path.is_file() or not (folder / "card.png").is_file():
                raise ValueError(f"{folder}: no finished card (card.json and card.png) in it")
            card = json_value(path.read_bytes())
            try:  # every page and row made before anything is written
                page(card, folder.name), index_row(card, folder.name)
            except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
                raise ValueError(
                    f"{path} is not a card evaluate.py --card wrote ({type(e).__name__}: {e})"
                ) from None
            cards.append((folder.name, card, folder))
        for name, _, _ in cards:
            for suffix in (".md", ".png"):
                check_destination(args.docs / f"{name}{suffix}")
        check_destination(args.docs / "index.md")
    except (OSError, ValueError) as e:
        parser.exit(2, f"publish_cards.py: error: {e}\n")
    for name, card, folder in cards:
        atomic_write(args.docs / f"{name}.md", page(card, name))
        atomic_write(args.docs / f"{name}.png", (folder / "card.png").read_bytes())
    atomic_write(args.docs / "index.md", index([(name, card) for name, card, _ in cards]))
    print(f"wrote {len(cards)} cards and their index to {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
