"""MkDocs hooks: pages and tables made from the code, so the site never disagrees with it.

- Every model card (``agents/models/<name>.md``) becomes the page ``zoo/<name>.md``.
- A page may hold these markers, each replaced by a table built at build time:

  - ``<!-- actions: RULES -->``: the action ids of a rules preset and their names;
  - ``<!-- observation: PLAYERS RULES [history] -->``: the flat observation's index
    table (:class:`~thirtyone_env.game.encoding.ObsLayout`: each part, its shape and
    its indices);
  - ``<!-- routes -->``: the web table's HTTP routes from its OpenAPI description.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "agents" / "models"
MARKER = re.compile(r"<!-- (actions|observation|routes)(?::\s*([^>]*?))?\s*-->")


def _ensure_path() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def on_files(files: Any, config: Any) -> Any:
    """The model cards as pages of the zoo section."""
    from mkdocs.structure.files import File

    for card in sorted(MODELS.glob("*.md")):
        files.append(File.generated(config, f"zoo/{card.name}", content=card.read_text(encoding="utf-8")))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The markers of a page replaced by their tables."""
    return MARKER.sub(lambda m: _table(m.group(1), (m.group(2) or "").split()), markdown)


def _table(kind: str, args: list[str]) -> str:
    _ensure_path()
    if kind == "actions":
        return actions_table(args[0] if args else "standard")
    if kind == "observation":
        players, rules = int(args[0]), args[1]
        return observation_table(players, rules, history="history" in args[2:])
    return routes_table()


def actions_table(rules: str) -> str:
    """Every action id of ``rules`` with its name (a discard's range in one row)."""
    from thirtyone_env.game.actions import DISCARD_BASE, action_name, num_actions
    from thirtyone_env.game.cards import NUM_CARDS
    from thirtyone_env.game.rules import Rules

    n = num_actions(Rules.preset(rules))
    rows = ["| id | action |", "|---:|---|"]
    rows += [f"| {a} | `{action_name(a)}` |" for a in range(DISCARD_BASE)]
    last = DISCARD_BASE + NUM_CARDS - 1
    rows.append(
        f"| {DISCARD_BASE}..{last} | discard card `id - {DISCARD_BASE}` "
        f"(`{action_name(DISCARD_BASE)}` ... `{action_name(last)}`) |"
    )
    rows += [f"| {a} | `{action_name(a)}` |" for a in range(last + 1, n)]
    return "\n".join(rows) + "\n"


def observation_table(players: int, rules: str, history: bool = False) -> str:
    """The flat observation's parts at this table: name, shape, indices."""
    from thirtyone_env.game.encoding import ObsLayout
    from thirtyone_env.game.rules import Rules

    layout = ObsLayout(players, Rules.preset(rules), opponent_history=history)
    rows = ["| part | shape | indices |", "|---|---|---|"]
    for name, where in layout.slices.items():
        rows.append(f"| `{name}` | {layout.shapes[name]} | [{where.start}, {where.stop}) |")
    rows.append(f"| **total** | ({layout.size},) | |")
    return "\n".join(rows) + "\n"


def routes_table() -> str:
    """The web table's API routes, from the app's own OpenAPI description."""
    from apps.web.app import create_app

    schema = create_app().openapi()
    rows = ["| method | path | what |", "|---|---|---|"]
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            summary = (op.get("description") or op.get("summary") or "").strip().splitlines()[0]
            rows.append(f"| {method.upper()} | `{path}` | {summary} |")
    return "\n".join(rows) + "\n"
