"""The terminal game, driven through piped stdin: bad input is rejected and asked
again, a whole game can be played, nothing hidden is shown, the record replays."""

import subprocess
import sys
from pathlib import Path

import pytest

from thirtyone_env.harness.records import read_games, replay

ROOT = Path(__file__).resolve().parents[1]


def run_play(stdin, *args):
    return subprocess.run(
        [sys.executable, "-m", "apps.play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_bad_input_is_rejected_and_asked_again():
    r = run_play("hello\nx Zz\nx As\n99\n?\nq\n", "--opponents", "expert", "greedy", "--seed", "3")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "unknown command 'hello'" in out
    assert "'Zz' is not a card" in out
    assert "no move numbered 99" in out
    assert "commands:" in out  # the help
    assert "Game abandoned." in out
    assert "Traceback" not in r.stderr


def test_a_whole_game_to_the_end_with_a_record(tmp_path):
    record = tmp_path / "game.jsonl"
    # always the first listed move: draw from the stock, discard the first card
    r = run_play("1\n" * 5000, "--opponents", "expert", "greedy", "--seed", "5", "--record", str(record))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "round over" in out and ("You win!" in out or "Game over" in out or "You are out" in out)
    assert "your moves:" in out and "hand:" in out and "top discard:" in out
    # others' stock draws never show the card
    draws = [line for line in out.splitlines() if "seat 1 draws" in line or "seat 2 draws" in line]
    assert draws and all(line.strip().endswith("draws from the stock") for line in draws)
    assert not any("holding" in line for line in out.splitlines())  # knock values stay hidden
    (game,) = list(read_games(record))
    assert sum(1 for _ in replay(game)) > 0


def test_input_ending_early_does_not_crash():
    r = run_play("", "--opponents", "ppo", "expert", "expert", "--seed", "1")
    assert r.returncode == 0 and "Game abandoned." in r.stdout


def test_bad_options_exit_2():
    r = run_play("", "--opponents", "nobody")
    assert r.returncode == 2 and "unknown player 'nobody'" in r.stderr
    r = run_play("", "--rules", "nope")
    assert r.returncode == 2 and "nope" in r.stderr
    r = run_play("", "--opponents", "expert", "--seat", "5")
    assert r.returncode == 2 and "--seat" in r.stderr


def test_variant_table_moves_by_number():
    r = run_play("1\n" * 3000, "--opponents", "expert", "greedy", "--rules", "stop_the_bus", "--seed", "2")
    assert r.returncode == 0, r.stderr
    assert "bus 0 0" in r.stdout and "round over" in r.stdout


def test_switch_carry_over_is_typed_as_carry_or_decline():
    """'carry' and 'decline' name the two moves of the carry-over offer (and only then);
    seed 7 offers seat 0 a carry-over: typing 'carry' at every question carries it."""
    from apps.play import parse_command
    from thirtyone_env.game.actions import CARRY_OVER, DECLINE_CARRY, DRAW_STOCK

    offer = [CARRY_OVER, DECLINE_CARRY]
    assert parse_command("carry", offer, ()) == CARRY_OVER
    assert parse_command("Decline", offer, ()) == DECLINE_CARRY
    assert parse_command("decline carry", offer, ()) == DECLINE_CARRY
    with pytest.raises(ValueError, match="carry over is not allowed now"):
        parse_command("carry", [DRAW_STOCK], ())
    r = run_play("carry\n1\n" * 3000, "--opponents", "expert", "greedy", "--rules", "switch", "--seed", "7")
    assert r.returncode == 0, r.stderr
    assert "seat 0 (you) carries the hand" in r.stdout and "carry over is not allowed now" in r.stdout
