"""The package's layers: which way imports run, no cycle, no Gymnasium in the game."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "thirtyone_env"
#: layer -> the layers its modules may import
ALLOWED = {
    "game": {"game"},
    "harness": {"game", "harness"},
    "envs": {"game", "harness", "envs"},
    "research": {"game", "harness", "research"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in it, functions included)."""
    graph: dict[str, set[str]] = {}
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "agents").rglob("*.py")]:
        name = module_name(path)
        found: set[str] = set()
        tree = ast.parse(path.read_text())
        typing_only = {  # `if TYPE_CHECKING:` blocks import nothing at run time
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for n in ast.walk(block)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
        graph[name] = {m for m in found if m.split(".")[0] in ("thirtyone_env", "agents") and m != name}
    known = set(graph)
    return {k: {m for m in v if m in known} for k, v in graph.items()}


def test_imports_run_one_way_between_layers():
    for module, targets in imports().items():
        parts = module.split(".")
        if parts[0] == "thirtyone_env":
            assert not any(t.startswith("agents") for t in targets), f"{module} imports agents"
        if parts[0] != "thirtyone_env" or len(parts) < 3:
            continue
        for target in targets:
            tparts = target.split(".")
            if tparts[0] == "thirtyone_env" and len(tparts) >= 2 and tparts[1] in ALLOWED:
                assert tparts[1] in ALLOWED[parts[1]], f"{module} ({parts[1]}) imports {target}"


def test_no_import_cycle():
    graph = imports()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_game_and_harness_layers_load_no_gymnasium():
    modules = [
        module_name(p) for p in [*(PACKAGE / "game").glob("*.py"), *(PACKAGE / "harness").glob("*.py")]
    ]
    r = run(
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "import thirtyone_env\n"
        "assert thirtyone_env.Rules.preset('pagat').lives == 3\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'pettingzoo', 'torch')))"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_env_is_registered_whichever_is_imported_first():
    for order in (
        "import thirtyone_env\nimport gymnasium as gym",
        "import gymnasium as gym\nimport thirtyone_env",
        "import thirtyone_env, importlib.util\nimportlib.util.find_spec('gymnasium')\nimport gymnasium as gym",
    ):
        r = run(order + "\nprint(gym.make('ThirtyOne-v0').reset(seed=0)[0].shape)")
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "(650,)"


def test_public_names_are_importable_from_the_package():
    import thirtyone_env

    for name in thirtyone_env.__all__:
        assert getattr(thirtyone_env, name) is not None
    assert "ThirtyOneEnv" in dir(thirtyone_env)
