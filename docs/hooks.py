"""MkDocs hooks: pages and tables made from the code, so the site never disagrees with it.

- Every model card (``agents/models/<name>.md``) becomes the page ``zoo/<name>.md``.
- A page may hold these markers, each followed by the table it names and
  ``<!-- end -->``:

  - ``<!-- actions: RULES -->``: the action ids of a rules preset and their names;
  - ``<!-- observation: PLAYERS RULES [history] -->``: the flat observation's index
    table (:class:`~thirtyone_env.game.encoding.ObsLayout`: each part, its shape and
    its indices);
  - ``<!-- routes -->``: the web table's HTTP routes from its OpenAPI description.

  The tables are written into the pages (``python docs/hooks.py`` writes them anew),
  so they read on GitHub too; the build puts in the tables of the code as it is and
  warns (an error with ``--strict``) where a page's differ, and so does a test.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "agents" / "models"
MARKER = re.compile(r"<!-- (actions|observation|routes)(?::\s*([^>]*?))?\s*-->")
#: A marker, the table after it and the end of the table.
BLOCK = re.compile(MARKER.pattern + r"\n(?:.*?\n)?<!-- end -->", re.S)
DOCS = ROOT / "docs"


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
    """The page with the tables of the code as it is; a warning where the page's own
    differ (``--strict`` makes it an error)."""
    filled = fill(markdown)
    if filled != markdown:
        import logging

        logging.getLogger("mkdocs.hooks").warning(
            f"{page.file.src_path}: its generated tables are out of date: run python docs/hooks.py"
        )
    return filled


def fill(markdown: str) -> str:
    """``markdown`` with each marker followed by its table and ``<!-- end -->`` (a
    marker without one gets one)."""

    def block(m: re.Match) -> str:
        marker = m.group(0).split("\n", 1)[0] if m.group(0).endswith("<!-- end -->") else m.group(0)
        return f"{marker}\n{_table(m.group(1), (m.group(2) or '').split())}<!-- end -->"

    out, pos = [], 0
    for m in BLOCK.finditer(markdown):  # the blocks with their tables
        out.append(_bare(markdown[pos : m.start()], block))
        out.append(block(m))
        pos = m.end()
    out.append(_bare(markdown[pos:], block))
    return "".join(out)


def _bare(text: str, block: Any) -> str:
    """``text`` (no table block in it) with each bare marker given its table."""
    return MARKER.sub(block, text)


def pages() -> list[Path]:
    """The documentation pages that hold a marker."""
    return [p for p in sorted(DOCS.rglob("*.md")) if MARKER.search(p.read_text(encoding="utf-8"))]


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


def main() -> int:
    """Write the tables of the code into every page that has a marker."""
    _ensure_path()
    for path in pages():
        text = path.read_text(encoding="utf-8")
        filled = fill(text)
        if filled != text:
            path.write_text(filled, encoding="utf-8")
            print(f"wrote the tables of {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
