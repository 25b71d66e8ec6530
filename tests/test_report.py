"""The run report: each step's model against the model it started from, paired on the
same deals; a step that made the model significantly worse is said so, on the console
and in ``report.md``, and the run's model is the better one unless ``--keep-worse``."""

import json
import zipfile
from pathlib import Path

from test_checkpoints import run_train


def members(path: Path) -> dict[str, bytes]:
    """A model zip's files (its entries' times are when it was written, not what it holds)."""
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


#: imitation of the expert, then PPO at a learning rate that wrecks the network: a
#: deliberately harmful step
HARMFUL = [
    "--players", "2", "--imitate", "expert", "--imitate-decisions", "4000", "--imitate-epochs", "4",
    "--total-timesteps", "1024", "--n-envs", "2", "--vec-env", "dummy", "--n-steps", "256",
    "--batch-size", "128", "--n-epochs", "4", "--learning-rate", "0.5", "--net-arch", "32,32",
    "--eval-every", "0", "--checkpoint-every", "1024", "--opponents", "greedy",
    "--eval-opponents", "greedy", "--report-most-games", "200", "--report-games", "200", "--workers", "2",
    "--no-progress",
]  # fmt: skip


def test_a_harmful_step_is_flagged_and_the_better_model_kept(tmp_path, capsys):
    run_train("--run-name", "h", "--runs-dir", str(tmp_path), *HARMFUL)
    run = tmp_path / "h"
    out = capsys.readouterr().out
    assert "the step ppo made the model significantly worse than its start: not kept" in out
    report = json.loads((run / "report.json").read_text())
    assert [s["step"] for s in report["steps"]] == ["imitation", "ppo"]
    [ppo] = report["steps"][1]["rows"]
    assert ppo["lives_low"] > 0 or ppo["wins_high"] < 0  # resolved, on the worse side
    assert ppo["games"] == 200 and ppo["table"] == "greedy x1"
    assert report["chosen"] == "imitation"
    assert (run / "best_model.zip").read_bytes() == (run / "steps" / "1_imitation.zip").read_bytes()
    text = (run / "report.md").read_text()
    assert "**significantly worse**" in text and "the step **imitation**" in text
    assert (run / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    run_train("--run-name", "k", "--runs-dir", str(tmp_path), *HARMFUL, "--keep-worse")
    kept = tmp_path / "k"
    assert "kept anyway (--keep-worse)" in capsys.readouterr().out
    assert json.loads((kept / "report.json").read_text())["chosen"] == "ppo"
    assert (kept / "best_model.zip").read_bytes() == (kept / "final_model.zip").read_bytes()


def test_without_games_the_report_lists_the_steps_and_the_model_is_the_last(tmp_path):
    run_train(
        "--run-name", "n", "--runs-dir", str(tmp_path), *HARMFUL[:-5], "--no-progress", "--report-games", "0"
    )
    run = tmp_path / "n"
    assert json.loads((run / "report.json").read_text()) == {"games": 0, "chosen": "ppo", "steps": []}
    assert (run / "best_model.zip").read_bytes() == (run / "final_model.zip").read_bytes()
    assert sorted(p.name for p in (run / "steps").iterdir()) == ["0_start.zip", "1_imitation.zip"]


def test_a_run_without_ppo_ends_with_its_last_steps_model(tmp_path):
    """``--total-timesteps 0``: the steps before PPO only (no step run at a learning
    rate that does nothing); the run's model is the last step's."""
    run_train(
        "--run-name", "s", "--runs-dir", str(tmp_path), *HARMFUL[:-5], "--total-timesteps", "0",
        "--report-games", "60", "--workers", "1", "--no-progress",
    )  # fmt: skip
    run = tmp_path / "s"
    report = json.loads((run / "report.json").read_text())
    assert [s["step"] for s in report["steps"]] == ["imitation"] and report["chosen"] == "imitation"
    imitation = members(run / "steps" / "1_imitation.zip")
    assert members(run / "final_model.zip") == imitation == members(run / "best_model.zip")
    assert not (run / "checkpoints").exists() or not any((run / "checkpoints").iterdir())


def test_a_step_worse_at_one_table_is_worse_even_where_it_is_better_at_another(tmp_path):
    """A trade (better against greedy players, worse against experts) is no improvement
    the run takes silently: it is flagged, undone, and the report says both."""
    from training.report import Verdict, choose, write_report

    def row(table, wins, lives):
        return {
            "table": table, "games": 1000, "wins_diff": wins[0], "wins_low": wins[1], "wins_high": wins[2],
            "lives_diff": lives[0], "lives_low": lives[1], "lives_high": lives[2],
        }  # fmt: skip

    trade = Verdict(
        "improvement",
        [
            row("expert x3", (-0.04, -0.06, -0.02), (0.03, 0.02, 0.04)),
            row("greedy x3", (0.05, 0.03, 0.07), (0, -0.01, 0.01)),
        ],
    )
    level = Verdict("ppo", [row("expert x3", (0.01, -0.01, 0.03), (0, -0.01, 0.01))])
    assert trade.worse and not trade.better and not level.worse and not level.better
    models = [("start", tmp_path / "a"), ("improvement", tmp_path / "b"), ("ppo", tmp_path / "c")]
    assert choose(models, [trade, level], keep_worse=False) == ("ppo", tmp_path / "c")
    assert choose(models[:2], [trade], keep_worse=False) == ("start", tmp_path / "a")
    assert choose(models[:2], [trade], keep_worse=True) == ("improvement", tmp_path / "b")
    text = write_report(tmp_path, [trade, level], "start", 1000)
    # each row says what its own intervals say; the step's line names where it was worse and better
    assert (
        "| improvement | expert x3 | 1,000 | -4.0 [-6.0, -2.0]* | +0.0300 [+0.0200, +0.0400]* | **significantly worse** |"
        in text
    )
    assert (
        "| improvement | greedy x3 | 1,000 | +5.0 [+3.0, +7.0]* | +0.0000 [-0.0100, +0.0100] | better |"
        in text
    )
    assert (
        "| ppo | expert x3 | 1,000 | +1.0 [-1.0, +3.0] | +0.0000 [-0.0100, +0.0100] | not resolved |" in text
    )
    assert "Significantly worse than its start: improvement (at expert x3; better at greedy x3)." in text
    both = write_report(
        tmp_path, [Verdict("x", [row("t", (0.05, 0.03, 0.07), (0.03, 0.02, 0.04))])], "start", 1000
    )
    assert "| **significantly worse** in one measure, better in the other |" in both
    assert "| wins | lives lost a round |" in text
    chips = write_report(tmp_path, [level], "ppo", 1000, rules="banking")
    assert "| wins | chips lost a round |" in chips and "chips scored count negative" in chips
    assert "(at least 1,000 games a table)" in text
    short = Verdict("ppo", [{**level.rows[0], "games": 40}])  # a time limit's probe
    said = write_report(tmp_path, [short], "ppo", 1000)
    assert "at least" not in said and "1,000 games a table, fewer where" in said


def test_a_report_plays_on_to_resolve_only_while_time_is_left():
    """Without a deadline the planned games and more, to resolve a difference; under
    one a probe of PROBE_GAMES first, and more only while time is left (a recipe's time
    limit bounds its reports)."""
    import math
    import time

    from agents.ppo import zoo_by_id
    from training.report import PROBE_GAMES, resolved_row

    after, before = (str(zoo_by_id(f"ppo_standard_2p-v{v}").path) for v in (2, 1))
    args = (after, before, ["greedy"], 80, "standard", 5, 1, 120)
    assert resolved_row(*args, deadline=time.monotonic())["games"] == PROBE_GAMES < 80
    assert resolved_row(*args, deadline=time.monotonic() + 600)["games"] == 120
    assert 80 < resolved_row(*args, deadline=math.inf)["games"] <= 120


def row(wins: float, wins_half: float, lives: float, lives_half: float) -> dict[str, float]:
    return {
        "wins_low": wins - wins_half,
        "wins_high": wins + wins_half,
        "lives_low": lives - lives_half,
        "lives_high": lives + lives_half,
    }


def test_a_comparison_is_resolved_by_a_narrow_interval_or_a_difference_far_from_0():
    """More games are played while a 2-point difference could hide in the interval,
    unless both measures already lie on one side of 0 by their half-widths."""
    from training.report import resolved

    assert resolved(row(0.0, 0.019, 0.0, 0.05))  # narrow: resolved whatever it says
    assert not resolved(row(0.01, 0.03, 0.0, 0.01))  # could be 0 or 4 points
    assert resolved(row(0.25, 0.03, -0.3, 0.02))  # far better in both
    assert resolved(row(-0.20, 0.03, 0.1, 0.02))  # far worse in both
    assert not resolved(row(0.05, 0.03, -0.3, 0.02))  # clear of 0, not by its half-width
    assert not resolved(row(0.25, 0.03, 0.0, 0.02))  # lives unresolved
    assert not resolved(row(0.25, 0.03, 0.3, 0.02))  # better in wins, worse in lives
