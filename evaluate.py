"""Tournament between named players with duplicate deals and rotated seats.

    python evaluate.py --players search expert greedy random --games 20000 \\
        --rules standard --workers 2 --seed 0

Prints per-player statistics with 95% confidence intervals, paired differences in
win rate and in lives lost per round, and an OpenSkill leaderboard, and writes
``results.json``, ``games.csv`` and PNG plots to the results folder (``--out``). A
player is a registry name with optional options: ``greedy:knock_at=27``,
``search:worlds=64``.

    python evaluate.py --gauntlet ppo --seats 4 --games 400 --workers 2

plays the gauntlet of one candidate (:mod:`agents.gauntlet`): every table twice, with
the candidate and with ``expert`` in the same seat on the same deals, and writes the
paired differences (``results.json``, ``gauntlet.md``, ``gauntlet.png``).
"""

from __future__ import annotations

from thirtyone_env.harness.interrupts import quiet_interrupts

quiet_interrupts("evaluate.py")  # a Ctrl-C while the libraries load: one line, not a traceback
import argparse  # noqa: E402
import dataclasses
import math
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import agents
from agents import gauntlet as gl
from agents import portable
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.command import CommandParser, path_arg, run_command
from thirtyone_env.harness.driver import check_table
from thirtyone_env.harness.evaluation import (
    TournamentConfig,
    check_unit,
    config_dict,
    outcome_json,
    outcomes_from_json,
    paired_differences,
    ratings,
    run_tournament,
    summarize,
    write_record_manifest,
)
from thirtyone_env.harness.files import FolderLock, atomic_write, check_writable_dir, json_text, make_dir
from thirtyone_env.harness.parallel import BACKENDS, Backend, available_cpus, check_reachable
from thirtyone_env.harness.records import MANIFEST
from thirtyone_env.harness.report import (
    check_not_inside_a_run,
    check_out_dir,
    check_run,
    claim_run,
    default_out_name,
    forget_run,
    new_results_dir,
    unfinished_work,
)

PROG = "evaluate.py"

#: Most games one tournament plays: every game's per-round rows stay in memory for the
#: statistics (some 50 KB a game), so a larger run is split into several.
MAX_GAMES = 1_000_000
#: Memory one game's rows take (measured: about 58 KB a four-player standard game).
BYTES_PER_GAME = 60_000
#: Games of a tournament unless ``--games`` says otherwise.
TOURNAMENT_GAMES = 2000
#: Seats of a gauntlet's tables unless ``--seats`` says otherwise.
GAUNTLET_SEATS = 4


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``); ``None``
    where the OS does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Defaults shown in the help, except ``None`` (an option whose help says what
    its absence means)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return action.help if action.default is None else super()._get_help_string(action)


def seed_arg(text: str) -> int | str:
    """``--seed``: a non-negative integer, or ``random`` (drawn by :func:`settle_seed`
    once the mode is known)."""
    if text.strip() == "random":
        return "random"
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer or 'random', got {text!r}"
        ) from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer or 'random', got {seed}")
    return seed


def settle_seed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The run's seed: ``--seed random`` drawn from the operating system's entropy and
    printed (so the games can be played again), 63 bits, or 32 where an exploiter is
    trained (``--exploit``, ``--card``: training seeds stop at 2**32 - 1, as do the
    seeds given there)."""
    from training.seeding import MAX_SEED

    trains = args.exploit is not None or args.card is not None
    if args.seed == "random":
        seed = secrets.randbits(32 if trains else 63)
        print(f"{PROG}: seed {seed} (drawn at random; --seed {seed} plays these games again)", flush=True)
        return seed
    if trains and args.seed > MAX_SEED:
        parser.error(f"--seed {args.seed}: an exploiter's training takes seeds 0..{MAX_SEED}")
    return args.seed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog=PROG,
        description="Tournament with duplicate deals and rotated seats, or a player's gauntlet (--gauntlet).",
        formatter_class=HelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--players", nargs="+", help=f"one player per seat; players: {agents.names()}")
    what.add_argument(
        "--gauntlet",
        metavar="SPEC",
        help="play the gauntlet of this player instead: every table of agents.gauntlet twice, with it and "
        "with expert in the same seat on the same deals (paired differences, 95%% CIs)",
    )
    what.add_argument(
        "--exploit",
        metavar="SPEC",
        help="train a best response against --seats - 1 frozen copies of this player for --time-limit seconds "
        "(the default recipe at that table) and measure its margin over the player itself in that seat: a "
        "lower bound on how exploitable the player is, with its learning curve",
    )
    what.add_argument(
        "--card",
        metavar="SPEC",
        help="the strength card of this player: its gauntlet (luck taken out), an exploiter's margin over it "
        "(--time-limit of training), its decision regret against the research oracle and its OpenSkill "
        "rating at a reference table, as card.md, card.png and card.json",
    )
    p.add_argument(
        "--decisions",
        type=int,
        default=None,
        help="with --card: decisions measured for each regret question (default 400)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="with --exploit or --card: seconds of the exploiter's training (default 1800)",
    )
    p.add_argument(
        "--names",
        nargs="+",
        default=None,
        help="display names of the --players, one each, all different (default: the specs)",
    )
    p.add_argument(
        "--games",
        type=int,
        default=None,
        help=f"games (default {TOURNAMENT_GAMES}; with --gauntlet: per table, default {gl.DEFAULT_GAMES}); "
        "rounded up to a multiple of the table "
        f"size; at most {MAX_GAMES:,}: every game's rows stay in memory for the statistics, some 60 KB a game: "
        "a run that would not fit in the available memory is refused",
    )
    p.add_argument(
        "--seats",
        type=int,
        default=None,
        help=f"with --gauntlet: seats at each table, the candidate's included (default {GAUNTLET_SEATS})",
    )
    p.add_argument(
        "--tables",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"with --gauntlet: play only these tables (default: all: {', '.join(gl.GAUNTLET)})",
    )
    p.add_argument(
        "--rules",
        default="standard",
        help=f"rules preset: {sorted(PRESETS)}, or house rules PRESET:OPTION=VALUE,... (standard:lives=5,knock_from_turn=2)",
    )
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="the games' seed: the same seed plays the same games (default: 0); 'random': a "
        "63-bit seed from the operating system, printed, so that no player can know or search "
        "it to work out the decks (seat code you do not trust only with it)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help=f"worker processes: at most the CPUs this process may use (here {available_cpus()}), "
        "else refused; no more are started than there are work units (8 deal sets each). "
        "Results are the same for any number",
    )
    p.add_argument(
        "--cluster",
        choices=BACKENDS,
        default="local",
        help="where the games run: local processes (--workers of them) or a Ray cluster (--ray-address, "
        "else RAY_ADDRESS, else a local Ray on 127.0.0.1; --workers tasks in flight, 0 = twice its CPUs). "
        "Results are the same on either",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        help="with --cluster ray: the cluster to join (ray start --head prints it)",
    )
    p.add_argument(
        "--out",
        type=path_arg,
        default=None,
        help="results folder, locked for the run, one run a folder; finished results there are never replaced "
        "(default: results/<rules>-<players>-s<seed>, a gauntlet's results/<rules>-gauntlet_<seats>p_<spec>-s<seed>, "
        "an exploit's results/<rules>-exploit_<seats>p_<spec>-s<seed> and a card's "
        "results/<rules>-card_<seats>p_<spec>-s<seed>, where an interrupted one goes on; in plain characters, "
        "a long or unusual name shortened with a hash)",
    )
    p.add_argument(
        "--record",
        type=path_arg,
        default=None,
        metavar="DIR",
        help="also write every game as JSON Lines into DIR, a new or empty folder locked for the "
        f"run (one file per deal set, and {MANIFEST} written last to mark the record complete; "
        "replay with python -m thirtyone_env.harness.replay DIR or FILE)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="compare without taking the luck of the cards out: by default each game's luck (every deal and "
        "draw from the stock, measured by a value function fixed in advance) is subtracted from its result, "
        "an unbiased estimate with a narrower interval, reported with the plain one and the games it is "
        "worth (lives tables with a stock; elsewhere the estimate is plain)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def check_players(parser: argparse.ArgumentParser, players: list[str], rules: Rules) -> None:
    """Every spec names a player with valid options (all checked before any player is
    built), then each player can sit at this table."""
    for spec in players:
        try:
            agents.check_spec(spec)
        except (ValueError, OSError) as e:
            parser.error(str(e))
    for spec in players:
        try:
            check_table(agents.from_spec(spec), len(players), rules, spec)
        except (ValueError, OSError) as e:
            parser.error(str(e))


def check_counts(
    parser: argparse.ArgumentParser, args: argparse.Namespace, held: int | None = None, part: str = ""
) -> None:
    """The rules preset, ``--games`` (within :data:`MAX_GAMES` and the memory the
    statistics take), ``--workers`` and ``--seed``; errors exit with code 2. ``held``:
    the most games the run holds at once, where ``--games`` sets more than itself
    (``part`` names where: a card's rating plays ten times ``--games``)."""
    try:
        Rules.preset(args.rules)
    except ValueError as e:
        parser.error(str(e))
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be at least 1 and at most {MAX_GAMES:,}, got {args.games}")
    held = args.games if held is None else held
    where = f" ({part}: {held:,} games at once)" if held != args.games else ""
    if held > MAX_GAMES:
        parser.error(f"--games {args.games:,} is too many{where}: a run holds at most {MAX_GAMES:,} games")
    memory = available_memory()
    if memory is not None and held * BYTES_PER_GAME > memory:
        parser.error(
            f"--games {args.games:,} needs about {held * BYTES_PER_GAME / 1e9:.1f} GB for its statistics{where} "
            f"and {memory / 1e9:.1f} GB are available: play at most {memory // BYTES_PER_GAME:,} games a run "
            "(or split the run into runs with different --seed values)"
        )
    check_backend(parser, args)


def check_backend(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--workers`` within the CPUs for local processes (any count of in-flight tasks,
    0 = automatic, on Ray); ``--ray-address`` only with ``--cluster ray``."""
    if args.cluster == "local":
        cpus = available_cpus()
        if args.ray_address is not None:
            parser.error("--ray-address needs --cluster ray")
        if not 1 <= args.workers <= cpus:
            parser.error(
                f"--workers must be at least 1 and at most the {cpus} CPUs available, got {args.workers}"
            )
    elif args.workers < 0:
        parser.error(f"--workers must be 0 (automatic) or more with --cluster ray, got {args.workers}")
    else:
        address = args.ray_address or os.environ.get("RAY_ADDRESS")
        if address:
            try:
                check_reachable(address)
            except ValueError as e:
                parser.error(str(e))


def backend_of(args: argparse.Namespace) -> Backend:
    """Where the run's games are played."""
    return Backend(args.cluster, args.workers, args.ray_address)


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> TournamentConfig:
    """Validate everything before any game is played; errors exit with code 2."""
    for option, owners, value in (
        ("--seats", "--gauntlet, --exploit or --card", args.seats),
        ("--tables", "--gauntlet", args.tables),
        ("--time-limit", "--exploit or --card", args.time_limit),
        ("--decisions", "--card", args.decisions),
    ):
        if value is not None:
            parser.error(f"{option} belongs to {owners}; a tournament seats one player per --players spec")
    if args.games is None:
        args.games = TOURNAMENT_GAMES
    seats = len(args.players)
    played = -(-args.games // seats) * seats  # whole deal sets: every player in every seat
    check_counts(parser, args, played, f"rounded up to whole deal sets of {seats}")
    rules = Rules.preset(args.rules)
    try:
        rules.check_num_players(len(args.players))
    except ValueError as e:
        parser.error(f"{len(args.players)} players given: {e}")
    check_players(parser, args.players, rules)
    record = None
    if args.record is not None:
        try:
            check_writable_dir(args.record, "--record")
        except ValueError as e:
            parser.error(str(e))
        if args.record.exists() and not args.record.is_dir():
            parser.error(f"--record {args.record} exists and is not a folder")
        record = str(args.record)
    try:
        return TournamentConfig(
            tuple(args.players),
            args.games,
            args.rules,
            args.seed,
            max(1, args.workers),
            record,
            tuple(args.names or ()),
            luck=not args.plain,
        )
    except ValueError as e:
        parser.error(f"--names: {e}")


def results_dir(args: argparse.Namespace, config: TournamentConfig) -> Path:
    """``--out``, or the default results folder of this tournament (with a number
    added where an earlier run holds that name)."""
    assert isinstance(config.rules, str)
    name = default_out_name(config.rules, config.players, config.seed)
    return args.out or new_results_dir(Path("results"), name, "tournament", tournament_options(config))


def check_record_dir(record: Path, out: Path) -> None:
    """``ValueError`` unless ``record`` is a place for a new record apart from ``out``:
    a new or empty folder (a record is written whole, never beside other files), not
    ``out``, inside it or holding it, and not inside another run's results."""
    mine, theirs = Path(os.path.abspath(record)), Path(os.path.abspath(out))
    if mine == theirs:
        raise ValueError(f"--record and --out are one folder ({out}): give two")
    if theirs in mine.parents or mine in theirs.parents:
        raise ValueError(
            f"--record {record} and --out {out} lie one inside the other: give two folders apart"
        )
    if record.is_file():
        raise ValueError(f"--record {record} is a file, not a folder: refusing to replace it")
    check_writable_dir(record, "--record")
    check_not_inside_a_run(record, "--record")
    if record.is_dir():
        held = sorted(p.name for p in record.iterdir() if p.name != FolderLock.NAME)
        if held:
            raise ValueError(
                f"--record {record} is not empty (it holds {held[0]!r}): a record goes into a new or empty folder"
            )


class Claim:
    """The run's folders, locked and checked before any game is played; on a failed or
    interrupted run, a folder this run created that holds nothing but its lock is
    removed again."""

    def __init__(self, folders: list[tuple[Path, str]]) -> None:
        self.folders = folders
        self.locks: list[FolderLock] = []
        self.created: list[Path] = []
        self.done = False  #: set when the run succeeded

    def __enter__(self) -> Claim:
        try:
            for folder, what in self.folders:
                if not folder.exists():
                    self.created.append(folder)
                self.locks.append(FolderLock(folder, what).acquire())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        for lock in reversed(self.locks):
            if exc_type is not None or not self.done:
                _remove_if_only_lock(lock.folder, lock.folder in self.created)
            lock.release()


def _remove_if_only_lock(folder: Path, created: bool) -> None:
    """Remove a folder this run created that holds nothing but its lock file."""
    try:
        if created and {p.name for p in folder.iterdir()} <= {FolderLock.NAME}:
            (folder / FolderLock.NAME).unlink(missing_ok=True)
            folder.rmdir()
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command; every error is one line ``evaluate.py: error: ...`` and exit 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.seed = settle_seed(parser, args)
    if args.gauntlet is not None:
        return gauntlet_main(parser, args)
    if args.exploit is not None:
        return exploit_main(parser, args)
    if args.card is not None:
        return card_main(parser, args)
    config = check_args(parser, args)
    out = results_dir(args, config)
    record = None if config.record_dir is None else Path(config.record_dir)
    try:
        check_out_dir(out)
        check_run(out, "tournament", tournament_options(config))
        if record is not None:
            check_record_dir(record, out)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    folders = [(out, "--out")] + ([] if record is None else [(record, "--record")])

    def body() -> int:
        with Claim(folders) as claim:
            check_out_dir(out)  # again, now that no other run can write them
            check_run(out, "tournament", tournament_options(config))
            if record is not None:
                check_record_dir(record, out)
            code = play(args, config, out)
            claim.done = code == 0
            return code

    return run_command(PROG, "the tournament", body)


#: Deal sets a tournament's work unit plays (a resumed tournament keeps its units).
CHUNK = 8
#: A kept work unit's largest file: 8 deal sets of 6 seats of the longest games are a few MB.
MAX_UNIT_BYTES = 64 << 20


def tournament_options(config: TournamentConfig) -> dict[str, Any]:
    """What names a tournament in its folder: its configuration but the workers and the
    display names (its games do not depend on them), and its work units' size."""
    return {k: v for k, v in config_dict(config).items() if k not in ("workers", "names")} | {"chunk": CHUNK}


def resumable(out: Path, config: TournamentConfig) -> tuple[dict[int, list], Any]:
    """The work units an interrupted run of this tournament left in ``out/partial``, and
    the ``on_unit`` that keeps each unit as it finishes (nothing is kept with
    ``--record``: a record is written whole or not at all). ``out/tournament.json`` names
    the tournament a folder's units belong to; another tournament there is refused."""
    if config.record_dir is not None:
        return {}, None
    partial = out / "partial"
    done: dict[int, list] = {}
    if claim_run(out, "tournament", tournament_options(config)):
        for path in sorted(partial.glob("unit_*.json")):
            try:
                if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_UNIT_BYTES:
                    raise ValueError("not a work unit this program wrote (a link, not a file, or too large)")
                k = int(path.stem[5:])
                done[k] = outcomes_from_json(path.read_text())
                check_unit(config, k, CHUNK, done[k])
            except (OSError, ValueError) as e:
                raise ValueError(f"cannot read the finished work unit {path}: {e}") from None

    def on_unit(k: int, games: list) -> None:
        atomic_write(partial / f"unit_{k:06d}.json", outcome_json(games))

    return done, on_unit


def play(args: argparse.Namespace, config: TournamentConfig, out: Path) -> int:
    """Play the tournament, print the report and write the results (and the record's
    manifest); the folders are checked and locked."""
    from rich.console import Console

    from thirtyone_env.harness.progress import RateBar
    from thirtyone_env.harness.report import PLOTS, print_report, write_results

    console = Console()
    command = "python evaluate.py " + " ".join(
        ["--players", *config.players, "--games", str(config.total_games), "--rules", config.rules]
        + ["--seed", str(config.seed), "--workers", str(config.workers)]
        + (["--names", *config.names] if config.names else [])
        + (["--plain"] if not config.luck else [])
    )
    done, on_unit = resumable(out, config)  # before the first line: a refusal plays nothing
    console.print(command, style="bold", markup=False, soft_wrap=True)
    if done:
        console.print(
            f"going on with the tournament in {out}: {len(done)} work units of {CHUNK} deal sets finished",
            markup=False,
            soft_wrap=True,
        )
    start = time.perf_counter()
    try:
        with RateBar("games", "games", config.total_games, console, args.no_progress) as advance:
            backend = backend_of(args)
            games = run_tournament(
                config,
                portable.reader(config.players, backend),
                progress=advance,
                chunk=CHUNK,
                backend=backend,
                done=done,
                on_unit=on_unit,
            )
    except KeyboardInterrupt:
        if config.record_dir:
            note = f"; the record in {config.record_dir} is incomplete (no {MANIFEST})"
        elif unfinished_work(out, "tournament"):
            note = f"; its finished work units are kept in {out}: run the same command to go on"
        else:
            forget_run(out, "tournament")
            note = " (no work unit had finished)"
        console.print(f"interrupted: no results written{note}", style="red", markup=False, soft_wrap=True)
        return 130
    except BaseException:  # a player's failure: nothing left that would refuse another run
        if on_unit is not None:
            forget_run(out, "tournament")  # (only where no work unit was kept)
        raise
    elapsed = time.perf_counter() - start
    if config.record_dir is not None:
        write_record_manifest(config, command=command)
    rounds = sum(g.rounds for g in games)
    summary = summarize(config, games)
    extra = {
        "command": command,
        "elapsed_s": elapsed,
        "rounds": rounds,
        "rounds_per_s": rounds / elapsed,
        "paired_differences": paired_differences(config, games),
        "ratings": ratings(config, games),
    }
    print_report(config, summary, extra, console)
    path = write_results(out, config, games, summary, extra)
    for unit in (out / "partial").glob("unit_*.json"):  # the results are whole: the units are done with
        unit.unlink()
    if (out / "partial").is_dir():
        (out / "partial").rmdir()
    console.print(
        f"{config.total_games} games, {rounds} rounds in {elapsed:.1f}s ({rounds / elapsed:,.0f} rounds/s)\n"
        f"results: {path}/results.json, {path}/games.csv\nplots: " + ", ".join(str(path / p) for p in PLOTS),
        markup=False,
        soft_wrap=True,
    )
    if config.record_dir is not None:
        console.print(
            f"record: {config.record_dir} ({MANIFEST} marks it complete)", markup=False, soft_wrap=True
        )
    return 0


# -- the gauntlet ----------------------------------------------------------------------


def check_gauntlet_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Validate a gauntlet run before any game (the candidate and every opponent can
    sit at the table, the tables exist); errors exit with code 2."""
    for option, owners, value in (
        ("--time-limit", "--exploit or --card", args.time_limit),
        ("--decisions", "--card", args.decisions),
    ):
        if value is not None:
            parser.error(f"{option} belongs to {owners}; a gauntlet plays --games a table")
    if args.record is not None:
        parser.error("--record belongs to tournaments (--players); a gauntlet keeps no game records")
    if args.names is not None:
        parser.error("--names belongs to tournaments (--players); a gauntlet names its tables itself")
    if args.games is None:
        args.games = gl.DEFAULT_GAMES
    if args.seats is None:
        args.seats = GAUNTLET_SEATS
    check_counts(parser, args, 2 * args.games, "a table's two sides")
    try:
        Rules.preset(args.rules).check_num_players(args.seats)
    except ValueError as e:
        parser.error(f"--seats {args.seats}: {e}")
    try:
        gl.check_gauntlet(args.gauntlet, args.seats, args.rules, args.games, args.seed, args.tables)
    except (ValueError, OSError) as e:
        parser.error(str(e))


def gauntlet_dir(args: argparse.Namespace) -> Path:
    """``--out``, or ``results/<rules>-gauntlet_<seats>p_<spec>-s<seed>`` (with a number
    added where an earlier run holds that name)."""
    name = default_out_name(args.rules, ("gauntlet", f"{args.seats}p", args.gauntlet), args.seed)
    return args.out or new_results_dir(Path("results"), name)


def gauntlet_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check, claim the results folder, play the gauntlet and write its results."""
    check_gauntlet_args(parser, args)
    out = gauntlet_dir(args)
    try:
        check_out_dir(out, "gauntlet")
    except (ValueError, OSError) as e:
        parser.error(str(e))

    def body() -> int:
        with Claim([(out, "--out")]) as claim:
            check_out_dir(out, "gauntlet")  # again, now that no other run can write it
            code = play_gauntlet(args, out)
            claim.done = code == 0
            return code

    return run_command(PROG, "the gauntlet", body)


def play_gauntlet(args: argparse.Namespace, out: Path) -> int:
    """Play every table, print the summary table and write ``gauntlet.png``,
    ``gauntlet.md`` and ``results.json`` (last) into ``out`` (checked and locked)."""

    from rich.console import Console

    from thirtyone_env.harness.progress import RateBar

    console = Console()
    command = (
        f"python evaluate.py --gauntlet {args.gauntlet} --seats {args.seats} --games {args.games} "
        f"--rules {args.rules} --seed {args.seed} --workers {args.workers}"
        + (f" --tables {' '.join(args.tables)}" if args.tables else "")
        + (" --plain" if args.plain else "")
    )
    console.print(command, style="bold", markup=False, soft_wrap=True)
    total = gl.planned_games(args.seats, args.games, args.tables)
    start = time.perf_counter()
    try:
        with RateBar("games", "games", total, console, args.no_progress) as advance:
            rows = gl.run_gauntlet(
                args.gauntlet,
                args.seats,
                args.rules,
                args.games,
                args.seed,
                max(1, args.workers),
                args.tables,
                progress=advance,
                backend=backend_of(args),
                luck=not args.plain,
            )
    except KeyboardInterrupt:
        console.print("interrupted: no results written", style="red")
        return 130
    elapsed = time.perf_counter() - start
    summary = gl.gauntlet_table(rows, args.rules)
    title = f"Gauntlet of {args.gauntlet}: {args.seats} seats, rules={args.rules}, seed={args.seed}"
    console.print(
        f"{title} (candidate minus expert in the same seat on the same deals; *: 95% CI excludes 0)\n{summary}",
        markup=False,
        soft_wrap=True,
        highlight=False,
    )
    make_dir(out)
    gl.plot_gauntlet(rows, out / "gauntlet.png", title, args.rules)
    atomic_write(out / "gauntlet.md", f"# {title}\n\n`{command}`\n\n{summary}")
    payload = {
        "config": {
            "candidate": args.gauntlet,
            "baseline": gl.BASELINE,
            "seats": args.seats,
            "rules": args.rules,
            "rules_fields": dataclasses.asdict(Rules.preset(args.rules)),
            "games_per_table": args.games,
            "seed": args.seed,
            "workers": args.workers,
            "held_out_seed": gl.HELD_OUT_SEED,
            "luck": not args.plain,
        },
        "command": command,
        "elapsed_s": elapsed,
        "tables": rows,
    }
    atomic_write(out / "results.json", json_text(payload, indent=2))
    console.print(
        f"{total:,} games in {elapsed:.1f}s\nresults: {out}/results.json, {out}/gauntlet.md, {out}/gauntlet.png",
        markup=False,
        soft_wrap=True,
    )
    return 0


# -- the exploiter ----------------------------------------------------------------------

#: Games of the exploiter's final comparison unless ``--games`` says otherwise.
EXPLOIT_GAMES = 2000


def check_trained_args(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    flag: str,
    games: int,
    refused: tuple[str, ...],
    held: tuple[int, str],
) -> None:
    """What ``--exploit`` and ``--card`` check alike: options that do not go with
    ``flag`` (``refused``, ``--plain`` and a Ray cluster), ``--games`` (default
    ``games``) and ``--seats`` defaults, ``--time-limit``, the counts (``held``: the
    most games the run holds at once as a multiple of ``--games`` and where, with a
    floor); errors exit with code 2."""
    for option in ("--record", "--tables", "--names", *refused):
        if getattr(args, option[2:].replace("-", "_")) is not None:
            parser.error(f"{option} does not go with {flag}")
    if args.plain:
        parser.error(f"--plain does not go with {flag}: its comparisons take the luck out where they can")
    for option, given in (("--cluster ray", args.cluster != "local"), ("--ray-address", args.ray_address)):
        if given:
            parser.error(
                f"{option} does not go with {flag}: it trains and plays on this machine (--workers processes)"
            )
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        parser.error(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    if args.games is None:
        args.games = games
    if args.seats is None:
        args.seats = GAUNTLET_SEATS
    times, part = held
    check_counts(parser, args, max(args.games, times * args.games), part)
    try:
        Rules.preset(args.rules).check_num_players(args.seats)
    except ValueError as e:
        parser.error(f"--seats {args.seats}: {e}")


def check_exploit_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The exploit's configuration, everything checked before any training or game
    (the player can sit at the table, the time limit fits one update, the recipe and
    its players); errors exit with code 2."""
    check_trained_args(
        parser, args, "--exploit", EXPLOIT_GAMES, ("--decisions",), (2, "its comparison's two sides")
    )
    try:
        from training.exploit import ExploitConfig, check

        limit = 1800.0 if args.time_limit is None else args.time_limit
        config = ExploitConfig(
            args.exploit, args.seats, args.rules, limit, args.games, args.seed, max(1, args.workers)
        )
        check(config)
    except ImportError as e:
        parser.error(f"--exploit trains a model and needs the training extra (pip install -e .[train]): {e}")
    except (ValueError, OSError) as e:
        parser.error(str(e))
    return config


def exploit_dir(args: argparse.Namespace) -> Path:
    """``--out``, or ``results/<rules>-exploit_<seats>p_<spec>-s<seed>``: an interrupted
    exploit there is gone on with."""
    name = default_out_name(args.rules, ("exploit", f"{args.seats}p", args.exploit), args.seed)
    return args.out or Path("results") / name


def run_options(config: Any) -> dict[str, Any]:
    """What names an exploit's or a card's run in its folder: every field of its
    configuration but where and how long it trains (the workers and the time limit, as
    ``train.py --resume`` may give them anew): an interrupted run is gone on with only
    under the same ones."""
    return {k: getattr(config, k) for k in config.__dataclass_fields__ if k not in ("workers", "time_limit")}


def exploit_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check, claim the results folder, train and measure the exploiter."""
    config = check_exploit_args(parser, args)
    out = exploit_dir(args)
    try:
        check_out_dir(out, "exploit")
        check_run(out, "exploit", run_options(config))
    except (ValueError, OSError) as e:
        parser.error(str(e))

    def body() -> int:
        with Claim([(out, "--out")]) as claim:
            check_out_dir(out, "exploit")  # again, now that no other run can write it
            claim_run(out, "exploit", run_options(config))
            try:
                code = play_exploit(args, config, out)
            finally:
                forget_run(out, "exploit")  # a run stopped before it kept any work
            claim.done = code == 0
            return code

    return run_command(PROG, "the exploit", body)


def play_exploit(args: argparse.Namespace, config: Any, out: Path) -> int:
    """Train and measure; print the summary and write ``exploit.md``, ``exploit.png``
    and ``exploit.json`` (last) into ``out``."""
    from training.exploit import run, summary, write

    make_dir(out)
    try:
        result = run(config, out, progress=not args.no_progress)
    except KeyboardInterrupt:
        if unfinished_work(out, "exploit"):
            print(
                f"interrupted: the training so far is kept in {out}; run the same command to go on",
                file=sys.stderr,
            )
        else:
            print("interrupted before any training was kept", file=sys.stderr)
        return 130
    print(summary(result))
    write(result, out)
    print(f"results: {out}/exploit.json, {out}/exploit.md, {out}/exploit.png")
    return 0


# -- the strength card ---------------------------------------------------------------


def check_card_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The card's configuration, every part checked before any game; errors exit 2."""
    check_trained_args(parser, args, "--card", gl.DEFAULT_GAMES, (), (10, "its rating"))
    try:
        from training.card import CardConfig, check

        config = CardConfig(
            args.card,
            args.seats,
            args.rules,
            args.games,
            400 if args.decisions is None else args.decisions,
            16,
            1800.0 if args.time_limit is None else args.time_limit,
            args.seed,
            max(1, args.workers),
        )
        check(config)
    except ImportError as e:
        parser.error(
            f"--card trains an exploiter and needs the training extra (pip install -e .[train]): {e}"
        )
    except (ValueError, OSError) as e:
        parser.error(str(e))
    return config


def card_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check, claim the results folder, measure and write the card."""
    config = check_card_args(parser, args)
    out = args.out or Path("results") / default_out_name(
        args.rules, ("card", f"{args.seats}p", args.card), args.seed
    )
    try:
        check_out_dir(out, "card")
        check_run(out, "card", run_options(config))
    except (ValueError, OSError) as e:
        parser.error(str(e))

    def body() -> int:
        from training.card import make, write

        with Claim([(out, "--out")]) as claim:
            check_out_dir(out, "card")  # again, now that no other run can write it
            claim_run(out, "card", run_options(config))
            start = time.perf_counter()
            try:
                card = make(config, out, progress=not args.no_progress)
            except KeyboardInterrupt:
                if unfinished_work(out, "card"):
                    print(
                        f"interrupted: the parts measured so far are kept in {out}; run the same command to go on"
                    )
                else:
                    print("interrupted before any part was kept")
                return 130
            finally:
                forget_run(out, "card")  # a card stopped before it kept any part
            write(card, out)
            print(
                f"card of {config.spec} in {time.perf_counter() - start:.0f}s: {out}/card.md, {out}/card.png"
            )
            claim.done = True
            return 0

    return run_command(PROG, "the card", body)


if __name__ == "__main__":
    sys.exit(main())
