"""Fit the value function that measures the luck of the cards (``thirtyone_env.harness.luck``).

    python benchmarks/luck_model.py --games 3000 --seed 10000 --workers 2 \\
        --out thirtyone_env/harness/luck_model.json

Plays games at a mix of tables (two to five seats, the rules of the stock games, the
built-in players and held-out heuristics), keeps every seat's features at each state
the model is read at (after each deal and each draw from the stock) with the lives the
round then cost it, and fits the round-loss model to them: each seat's chance to lose,
times the lives a loser loses (more for a knocker), exact where a 31 ends the round,
against the lives it lost (least squares). The seeds
of the fit (10000 and up by default) are kept apart from those of the measurements (the
benchmarks and docs use seeds below 10000), so no estimate is tuned on its own games.

The model's file holds plain numbers and how they were fitted; the packaged one is the
default of every tournament. A file there that this script did not write is never
replaced.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import agents
from thirtyone_env.game.actions import DRAW_STOCK
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import NOBODY, Table, reset_players
from thirtyone_env.harness.files import atomic_write
from thirtyone_env.harness.luck import FEATURES, LuckModel, applies, state_features
from thirtyone_env.harness.parallel import Backend, ordered_map

#: The tables the model is fitted at: (rules, seats' player specs); every game picks one
#: in turn. Held-out population members stand for players nobody wrote the model for.
TABLES = (
    ("standard", ("expert", "expert", "expert", "expert")),
    ("standard", ("greedy", "greedy", "greedy", "greedy")),
    ("standard", ("expert", "greedy", "blitz31", "expert")),
    ("standard", ("population:split=held_out,seed=3,member=0", "expert", "greedy", "random")),
    ("standard", ("expert", "blitz31", "greedy")),
    ("standard", ("expert", "greedy")),
    ("standard", ("blitz31", "expert", "population:split=held_out,seed=3,member=1", "greedy", "expert")),
    ("pagat", ("expert", "greedy", "expert", "blitz31")),
    ("blitz31", ("expert", "greedy", "blitz31", "expert")),
    ("dutch", ("greedy", "expert", "expert", "greedy")),
)
MARK = "benchmarks/luck_model.py"  #: the ``fitted.by`` of the files this script writes


def play(job: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One game's samples: features ``(S, n, F)`` padded to 6 seats, the seats dealt in
    and the lives each lost that round."""
    game, seed = job
    rules_name, specs = TABLES[game % len(TABLES)]
    rules = Rules.preset(rules_name)
    n = len(specs)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(game,)))
    players = [agents.from_spec(spec) for spec in specs]
    reset_players(players, rng)
    xs, acts, ys = [], [], []
    open_round: list[tuple[np.ndarray, np.ndarray]] = []

    class Drawn:
        def before(self, s, seat, action) -> bool:
            return action == DRAW_STOCK and bool(s.stock)

        def after(self, s, seat, action) -> None:
            open_round.append(state_features(s))

    def dealt(s) -> None:
        open_round.append(state_features(s))

    def settled(s) -> None:
        lost = np.zeros(6)
        lost[:n] = s.result.losses
        for f, active, _ in open_round:
            x = np.zeros((6, len(FEATURES)))
            x[:n] = f
            a = np.zeros(6, dtype=bool)
            a[:n] = active
            xs.append(x)
            acts.append(a)
            ys.append(lost)
        open_round.clear()

    state = new_game(rules, n, rng)
    table = Table(
        state, players, rng, layout=ObsLayout(n, rules), observer=Drawn(), on_settle=settled, on_deal=dealt
    )
    dealt(state)
    table.advance(NOBODY)
    return np.array(xs), np.array(acts), np.array(ys)


def fit(
    x: np.ndarray,
    active: np.ndarray,
    lost: np.ndarray,
    hidden: int,
    seed: int,
    epochs: int,
    batch: int = 1024,
) -> dict:
    """Least squares of the model's lives lost (``LuckModel``: a softmax over the seats
    times the scales, exact where a blitz ends the round) against the lives lost, by
    Adam on shuffled batches of ``batch`` states, from a seeded start."""
    import torch

    torch.manual_seed(seed)
    X = torch.tensor(x, dtype=torch.float32)
    A = torch.tensor(active)
    Y = torch.tensor(lost, dtype=torch.float32)
    F = X.shape[-1]
    linear = torch.zeros(F, requires_grad=True)
    W = (0.3 * torch.randn(hidden, F)).requires_grad_()
    b = torch.zeros(hidden, requires_grad=True)
    out = (0.1 * torch.randn(hidden)).requires_grad_()
    scale = torch.tensor(1.0, requires_grad=True)
    knocker_scale = torch.tensor(1.0, requires_grad=True)
    opt = torch.optim.Adam([linear, W, b, out, scale, knocker_scale], lr=0.01)
    knocker, holds, now = (FEATURES.index(k) for k in ("knocker", "holds a blitz", "blitz now"))

    def loss_of(i: torch.Tensor | slice) -> torch.Tensor:
        x, a, y = X[i], A[i], Y[i]
        z = x @ linear + torch.tanh(x @ W.T + b) @ out
        p = torch.softmax(z.masked_fill(~a, -1e30), dim=1) * (scale + knocker_scale * x[..., knocker])
        p = torch.where(x[..., now] > 0, (1 - x[..., holds]) * a, p)
        return (((p - y) ** 2) * a).sum() / a.sum()

    for epoch in range(epochs):
        order = torch.randperm(len(X))
        for k in range(0, len(X), batch):
            opt.zero_grad()
            loss = loss_of(order[k : k + batch])
            loss.backward()
            opt.step()
        print(f"  epoch {epoch + 1}: mean squared error {loss.item():.5f}", file=sys.stderr)
    with torch.no_grad():
        error = float(loss_of(slice(None)))
        base = float((((Y - (Y * A).sum() / A.sum()) ** 2) * A).sum() / A.sum())
    return {
        "linear": linear.detach().double().tolist(),
        "hidden": W.detach().double().tolist(),
        "bias": b.detach().double().tolist(),
        "out": out.detach().double().tolist(),
        "scale": float(scale.detach()),
        "knocker_scale": float(knocker_scale.detach()),
        "error": error,
        "error_of_the_mean": base,
    }


def check_out(path: Path) -> None:
    """Refuse a destination this script did not write (a file that is not its model)."""
    if path.exists():
        try:
            mine = json.loads(path.read_text()).get("fitted", {}).get("by") == MARK
        except (OSError, ValueError, AttributeError):
            mine = False
        if not mine:
            raise ValueError(
                f"--out {path} exists and is not a luck model this script wrote: refusing to replace it"
            )
    if not path.parent.is_dir():
        raise ValueError(f"--out {path}: its folder does not exist")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4000, help="games played for the fit")
    parser.add_argument(
        "--seed", type=int, default=10000, help="the games' seed (10000 and up: not a measurement's)"
    )
    parser.add_argument("--hidden", type=int, default=8, help="hidden units of the model")
    parser.add_argument("--epochs", type=int, default=8, help="passes of the fit over the states")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the games")
    parser.add_argument("--out", type=Path, required=True, help="the model's JSON file")
    parser.add_argument("--data", type=Path, default=None, help="also keep the states as this .npz")
    args = parser.parse_args(argv)
    if args.games < len(TABLES) or args.hidden < 1 or args.epochs < 1 or args.workers < 1 or args.seed < 0:
        parser.error(
            f"--games must be at least {len(TABLES)}, --hidden, --epochs and --workers at least 1, --seed >= 0"
        )
    try:
        check_out(args.out)
    except ValueError as e:
        parser.error(str(e))
    assert all(applies(Rules.preset(rules)) for rules, _ in TABLES)
    start = time.perf_counter()
    parts = list(
        ordered_map(play, ((g, args.seed) for g in range(args.games)), Backend("local", args.workers))
    )
    x = np.concatenate([p[0] for p in parts])
    active = np.concatenate([p[1] for p in parts])
    lost = np.concatenate([p[2] for p in parts])
    played = time.perf_counter() - start
    print(f"{args.games} games, {len(x):,} states in {played:.0f}s; fitting", file=sys.stderr)
    if args.data is not None:
        np.savez_compressed(args.data, x=x, active=active, lost=lost)
    weights = fit(x, active, lost, args.hidden, args.seed, args.epochs)
    model = {
        "name": f"round-loss model ({args.hidden} hidden units)",
        "features": list(FEATURES),
        **{k: weights[k] for k in ("linear", "hidden", "bias", "out", "scale", "knocker_scale")},
        "fitted": {
            "by": MARK,
            "command": "python benchmarks/luck_model.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "games": args.games,
            "seed": args.seed,
            "states": len(x),
            "tables": [[rules, list(specs)] for rules, specs in TABLES],
            "mean_squared_error": weights["error"],
            "mean_squared_error_of_the_mean": weights["error_of_the_mean"],
            "seconds": round(time.perf_counter() - start, 1),
        },
    }
    atomic_write(args.out, json.dumps(model, indent=1) + "\n")
    LuckModel.load(args.out)
    print(
        f"wrote {args.out}: mean squared error {weights['error']:.4f} "
        f"(predicting the mean: {weights['error_of_the_mean']:.4f}), {time.perf_counter() - start:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
