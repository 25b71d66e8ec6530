"""The command line of ``train.py``: run a recipe of training steps.

    train.py --rules cut_throat --players 3         # the default recipe for that table
    train.py --rules standard --teacher none        # ... learning with no hand-written teacher
    train.py recipes/ppo_standard_4p.toml           # a recipe file (the zoo's are in recipes/)
    train.py --resume runs/default_standard_4p_1    # go on where a recipe run stopped

Step options live in the recipe files (``--steps`` lists them); ``--set STEP.OPTION=VALUE``
changes one for a run. Bad input exits with code 2 and one line naming the problem
(for a recipe: the file, the step and the option) before any work; Ctrl-C or SIGTERM
exits with 130 once the running step saved what it could.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from thirtyone_env.harness.command import CommandParser, path_arg

PROG = "train.py"
#: what ``--resume`` may give anew: where and how long, never what is trained
RESUMABLE = ("time_limit", "workers", "cluster", "ray_address", "device", "report_games", "keep_worse")


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=PROG,
        description="Train a Thirty-One player by a recipe of steps (imitation, policy improvement by "
        "measured moves, the heads-up teacher, PPO), with a report of what each step added.",
        epilog="Step kinds and their options: train.py --steps. One run by flags, every option of "
        "every step: python -m training.run_cli --help.",
    )
    add = parser.add_argument
    add(
        "recipe",
        nargs="?",
        type=path_arg,
        default=None,
        help="a recipe file (TOML); without it, the default recipe",
    )
    add(
        "--rules",
        default=None,
        help="the rules of the default recipe's table: a preset (default: standard) or house rules, "
        "PRESET:OPTION=VALUE,... (standard:lives=5,knock_from_turn=2)",
    )
    add("--players", type=int, default=None, help="the table size of the default recipe (default: 4)")
    add(
        "--teacher",
        default=None,
        help="the player the default recipe learns from (any player spec), or 'none': learning from "
        "its own play only (default: the table's: 'expert', at Stop the Bus 'search:moves=all')",
    )
    add(
        "--opponents", default=None, help="comma-separated player specs of the table (the recipe's otherwise)"
    )
    add("--seed", type=int, default=None, help="the recipe's seed (the recipe's otherwise)")
    add(
        "--set",
        metavar="STEP.OPTION=VALUE",
        action="append",
        default=[],
        help="change one option of the recipe for this run: table.OPTION, a step's name (imitation.decisions=1000) "
        "or steps.OPTION for every step that has it; repeatable",
    )
    add(
        "--run-name",
        default=None,
        help="the run's folder under --runs-dir (default: the recipe's name, numbered)",
    )
    add("--runs-dir", type=path_arg, default="runs", help="the folder of run folders (default: runs)")
    add(
        "--time-limit",
        type=float,
        default=None,
        help="seconds for the whole recipe, its reports included: no step starts after it, a running "
        "one stops in time for its report, and a step marked until_time repeats until it "
        "(0: none; default: the recipe's table.time_limit; with --resume, the run's own, less the time it "
        "has spent)",
    )
    add(
        "--report-games",
        type=int,
        default=None,
        help="games a report table starts with, played on until a 2-point difference is resolved "
        "(0: no comparison; the recipe's otherwise)",
    )
    add("--keep-worse", action="store_true", help="keep a step's model even when it is significantly worse")
    add("--workers", type=int, default=0, help="processes of the collections and comparisons (0: automatic)")
    add("--cluster", default="local", choices=("local", "ray"), help="where they run (default: local)")
    add("--ray-address", default="", help="the Ray cluster to join with --cluster ray")
    add("--device", default="cpu", help="the torch device of the fits and PPO (default: cpu)")
    add(
        "--resume",
        metavar="RUN_DIR",
        type=path_arg,
        default=None,
        help="go on with the recipe run in this folder",
    )
    add("--show", action="store_true", help="print the recipe as it would run (every option) and exit")
    add(
        "--allow-code",
        action="store_true",
        help="let the recipe file or run folder name players that run code (file.py:Class, module:Class)",
    )
    add("--steps", action="store_true", help="list the step kinds and their options and exit")
    add("--no-progress", action="store_true", help="no progress bars")
    return parser


def _settings(pairs: list[str]) -> dict[str, Any]:
    from training.recipe import RecipeError, parse_value

    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise RecipeError(f"--set {pair!r}: give STEP.OPTION=VALUE")
        if key.strip() in out:
            raise RecipeError(f"--set {key.strip()} is given twice")
        out[key.strip()] = parse_value(value.strip())
    return out


def _timed(place: Any, recipe: Any, time_limit: float | None) -> Any:
    """``place`` with the time limit given, or the recipe's own."""
    import dataclasses

    limit = recipe.table.time_limit if time_limit is None else time_limit
    return dataclasses.replace(place, time_limit=limit)


def resolve(args: argparse.Namespace) -> tuple[Any, Path, Any, bool]:
    """The recipe, its run folder, where it runs, and whether it resumes."""
    from thirtyone_env.game.rules import Rules
    from training.recipe import RecipeError, default, read, with_settings
    from training.recipe_run import Placement, stored_recipe, stored_time_limit
    from training.seeding import MAX_SEED

    place = Placement(
        workers=args.workers,
        cluster=args.cluster,
        ray_address=args.ray_address,
        device=args.device,
        keep_worse=args.keep_worse,
        report_games=args.report_games,
        allow_code=args.allow_code,
    )
    for flag, value in (
        ("--time-limit", args.time_limit),
        ("--workers", args.workers),
        ("--report-games", args.report_games),
    ):
        if value is not None and not value >= 0:  # (a NaN is not 0 or more either)
            raise RecipeError(f"{flag} must be 0 or more, got {value}")
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        raise RecipeError(f"--seed must be 0..{MAX_SEED}, got {args.seed}")
    from thirtyone_env.harness.parallel import available_cpus

    if args.cluster == "local" and args.workers > available_cpus():
        raise RecipeError(
            f"--workers must be at most the {available_cpus()} CPUs available, got {args.workers}"
        )
    if args.resume is not None:
        given = [
            flag
            for flag, value in (
                ("recipe", args.recipe),
                ("--rules", args.rules),
                ("--players", args.players),
                ("--teacher", args.teacher),
                ("--opponents", args.opponents),
                ("--seed", args.seed),
                ("--set", args.set or None),
                ("--run-name", args.run_name),
            )
            if value is not None
        ]
        if given:
            raise RecipeError(f"--resume goes on with the run's own recipe: drop {', '.join(given)}")
        root = Path(args.resume)
        recipe = stored_recipe(root, args.allow_code)
        limit = stored_time_limit(root, recipe) if args.time_limit is None else args.time_limit
        return recipe, root, _timed(place, recipe, limit), True
    if args.recipe is not None:
        given = [
            f
            for f, v in (("--rules", args.rules), ("--players", args.players), ("--teacher", args.teacher))
            if v is not None
        ]
        if given:
            raise RecipeError(
                f"{', '.join(given)} choose the default recipe's table; a recipe file names its own "
                "(change it with --set table.rules=...)"
            )
        recipe = read(args.recipe, args.allow_code)
        stem = Path(args.recipe).stem
    else:
        if args.rules is not None and not args.rules.strip():
            raise RecipeError("--rules is empty: name a preset or house rules (standard:lives=5)")
        rules = args.rules or "standard"
        try:  # the flags named as flags, not as the default recipe's fields
            table = Rules.resolve(rules)
            players = args.players if args.players is not None else (table.seats or 4)
            table.check_num_players(players)
        except ValueError as e:
            given = f"--rules {rules}" + ("" if args.players is None else f" --players {args.players}")
            raise RecipeError(f"{given}: {e}") from None
        teacher = args.teacher
        recipe = default(rules, players, teacher)
        table = re.sub(r"[^A-Za-z0-9_.]+", "-", rules)[:80]  # house rules: PRESET:OPTION=VALUE,...
        stem = f"{'no_teacher' if teacher == 'none' else 'default'}_{table}_{players}p"
    settings = _settings(args.set)
    if args.opponents is not None and any(not part.strip() for part in args.opponents.split(",")):
        raise RecipeError(
            f"--opponents {args.opponents!r} has an empty entry: name a player between every two commas"
        )
    if args.opponents is not None:
        settings["table.opponents"] = args.opponents
        settings.update({f"{s.name}.opponents": args.opponents for s in recipe.steps})
    if args.seed is not None:
        settings["table.seed"] = args.seed
        settings.update({f"{s.name}.seed": (args.seed + s.index) % (MAX_SEED + 1) for s in recipe.steps})
    if settings:
        recipe = with_settings(recipe, settings)
    runs = Path(args.runs_dir)
    if args.run_name is not None:
        from thirtyone_env.harness.files import check_name

        check_name(args.run_name, "run_name")
        root = runs / args.run_name
    else:
        n = 1
        while (runs / f"{stem}_{n}").exists():
            n += 1
        root = runs / f"{stem}_{n}"
    from thirtyone_env.harness.report import check_not_inside_a_run

    check_not_inside_a_run(root, "the run folder")
    return recipe, root, _timed(place, recipe, args.time_limit), False


def main(argv: list[str] | None = None) -> int:
    """Train as the command line says; the exit code (0, 2: bad input, 130: interrupted)."""
    from training.run_cli import exit_code

    args = build_parser().parse_args(argv)

    def work() -> int:
        if args.steps:
            from training.steps import step_help

            print(step_help())
            return 0
        recipe, root, place, resume = resolve(args)
        from training.recipe_run import check, run_recipe

        if args.show:
            check(recipe, root, place)
            print(recipe.to_toml(), end="")
            return 0
        try:
            run_recipe(recipe, root, place, resume, progress=not args.no_progress)
        except KeyboardInterrupt:
            if root.is_dir():
                print(f"{PROG}: interrupted: the work so far is kept; go on with: python train.py --resume {root}",
                      file=sys.stderr)  # fmt: skip
            raise
        return 0

    return exit_code(PROG, work)
