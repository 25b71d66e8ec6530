"""``python -m thirtyone_env.research QUESTION ...``: an oracle study from the command line.

    python -m thirtyone_env.research knock --table expert,expert,expert,expert --seat 1 \\
        --decisions 200000 --workers 2 --out results/knock-expert

Measures ``--decisions`` decisions of the player in ``--seat`` (README, Research),
shows progress with its rate and ETA, prints the answers and writes the results
folder (``decisions.csv``, ``summary.json``, PNGs; an interrupted study goes on where
it stopped when run again with the same options). Every error is one line and exit
status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from thirtyone_env.harness.command import CommandParser, path_arg, run_command
from thirtyone_env.harness.driver import OBJECTIVES, check_table
from thirtyone_env.harness.parallel import BACKENDS, Backend, check_reachable
from thirtyone_env.research import folder
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.questions import QUESTION_HELP, QUESTIONS

PROG = "python -m thirtyone_env.research"


def build_parser() -> argparse.ArgumentParser:
    """The command: one sub-command per question (``knock --help``: that question's
    options and what it measures), the options shared by all."""
    shared = argparse.ArgumentParser(add_help=False)
    d = StudyConfig()
    shared.add_argument(
        "--table",
        default=",".join(d.table),
        help=StudyConfig.help("table")
        + " (comma-separated; a spec with options in quotes: 'greedy:knock_at=27')",
    )
    for name in ("seat", "rules", "decisions", "rollouts", "seed", "workers"):
        shared.add_argument(
            f"--{name}", type=type(getattr(d, name)), default=getattr(d, name), help=StudyConfig.help(name)
        )
    shared.add_argument(
        "--objective", choices=OBJECTIVES, default=d.objective, help=StudyConfig.help("objective")
    )
    shared.add_argument(
        "--cluster",
        choices=BACKENDS,
        default="local",
        help="where the jobs run: local processes (--workers) or a Ray cluster (--ray-address, else RAY_ADDRESS, "
        "else a local Ray on 127.0.0.1; --workers jobs in flight, 0 = twice its CPUs); the same results on either",
    )
    shared.add_argument(
        "--ray-address", default=None, help="with --cluster ray: the cluster to join (default: none)"
    )
    shared.add_argument(
        "--out",
        type=path_arg,
        default=None,
        help="results folder (default: results/research-<question>-<rules>-seat<seat>-<table>-s<seed>, "
        "numbered -2, -3, ... where taken)",
    )
    shared.add_argument("--no-progress", action="store_true", help="no progress bar")
    p = CommandParser(
        prog=PROG,
        description="Measure a player's decisions with the decision oracle: each option of the question played "
        "out on copies of the true position, the table's real players continuing. "
        f"{PROG} QUESTION --help: that question's options.",
    )
    questions = p.add_subparsers(dest="question", metavar="QUESTION", required=True)
    for question in QUESTIONS:
        summary, _, detail = QUESTION_HELP[question].partition("\n\n")
        questions.add_parser(
            question,
            parents=[shared],
            help=summary,
            description=f"{summary}\n\n{detail}",
            formatter_class=HelpFormatter,
        )
    return p


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's default shown (an option whose help says its own default, or that
    has none, as its help says); a question's description kept in its paragraphs."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or "default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def split_table(text: str) -> list[str]:
    """Seat specs from ``a,b,c``: a comma starts a new seat unless the text after it is an
    option (``key=value``) of the spec before it."""
    seats: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if seats and "=" in part and ":" not in part.split("=", 1)[0] and ":" in seats[-1]:
            seats[-1] += "," + part
        else:
            seats.append(part)
    return seats


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = StudyConfig(
            question=args.question,
            table=tuple(split_table(args.table)),
            seat=args.seat,
            rules=args.rules,
            decisions=args.decisions,
            rollouts=args.rollouts,
            objective=args.objective,
            seed=args.seed,
            workers=args.workers if args.cluster == "local" else 1,
        )
        if args.cluster == "local" and args.ray_address is not None:
            raise ValueError("--ray-address needs --cluster ray")
        backend = Backend(args.cluster, args.workers, args.ray_address)
        address = args.ray_address or os.environ.get("RAY_ADDRESS")
        if backend.kind == "ray" and address:
            check_reachable(address)  # before the first job, not after Ray's retries
        from thirtyone_env.harness.player_specs import spec_reader

        make_player = spec_reader(config.table, backend)
        from thirtyone_env.game.rules import Rules

        rules = Rules.resolve(config.rules)
        for spec in dict.fromkeys(config.table):  # built once here: a bad spec fails now, not in a worker
            check_table(make_player(spec), len(config.table), rules, spec)
        out = args.out or default_out(config)
        folder.check_folder(out, config)  # refused before any lock or game
    except ValueError as e:
        parser.error(str(e))
    from thirtyone_env.harness.files import FolderLock

    def body() -> int:
        with FolderLock(out, "--out"):
            found = folder.check_folder(out, config)  # again, now that no other run can write it
            return run(args, config, make_player, out, found, backend)

    note = f"interrupted; the finished jobs are kept in {out}: run the same command to go on"
    return run_command(PROG, "the study", body, note)


def default_out(config: StudyConfig) -> Path:
    """``results/research-<question>-<rules>-seat<seat>-<table>-s<seed>`` in plain characters (``-2``, ... where taken)."""
    from thirtyone_env.harness.report import default_out_name, new_results_dir

    name = default_out_name(
        f"research-{config.question}-{config.rules}-seat{config.seat}", list(config.table), config.seed
    )
    return new_results_dir(Path("results"), name)


def run(
    args: argparse.Namespace,
    config: StudyConfig,
    make_player: object,
    out: Path,
    done: dict,
    backend: Backend,
) -> int:
    from rich.console import Console

    from thirtyone_env.harness.progress import RateBar
    from thirtyone_env.research import report
    from thirtyone_env.research.study import run_jobs, study_frame

    console = Console()
    folder.start(out, config)
    if done:
        console.print(f"going on with the study in {out}: {len(done)} of {len(config.jobs)} jobs finished")
    resumed = sum(config.jobs[k] for k in done)
    start = time.perf_counter()
    with RateBar(
        config.question, "decisions", config.decisions, console, args.no_progress, resumed
    ) as advance:
        rows = run_jobs(
            config,
            make_player,
            done=done,
            on_job=lambda k, r: folder.save_job(out, k, r),
            progress=advance,
            backend=backend,
        )
    elapsed = time.perf_counter() - start
    df = study_frame(rows)
    summary = report.summarize(config, df)
    measured = config.decisions - resumed
    summary["elapsed_s"] = elapsed
    summary["decisions_per_s"] = measured / elapsed if elapsed > 0 else None
    summary["backend"] = {"kind": backend.kind, "workers": backend.workers}
    pngs = report.write_plots(out, config, df)
    folder.finish(out, rows, summary)
    where = (
        f"{config.workers} local worker{'s' if config.workers > 1 else ''}"
        if backend.kind == "local"
        else f"Ray, {backend.workers or 'automatic'} in flight"
    )
    for line in report.summary_lines(summary):
        console.print(line)
    console.print(
        f"{measured:,} decisions measured in {elapsed:.1f}s ({measured / max(elapsed, 1e-9):,.1f}/s; {where})\n"
        f"results: {out / folder.TABLE}, {out / folder.SUMMARY}\nplots: " + ", ".join(str(p) for p in pngs)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
