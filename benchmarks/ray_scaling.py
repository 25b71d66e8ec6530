"""Rounds per second of an expert tournament on 1 and 2 local processes and 1 and 2 Ray
workers (a local Ray on 127.0.0.1), and the overhead of one Ray task: the README table."""

import os
import time

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
import agents
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament
from thirtyone_env.harness.parallel import Backend, connect, ordered_map

G = 2000


def rate(backend, workers):
    cfg = TournamentConfig(("expert",) * 4, G, "standard", 1, workers)
    t = time.perf_counter()
    games = run_tournament(cfg, agents.from_spec, backend=backend)
    dt = time.perf_counter() - t
    return sum(g.rounds for g in games) / dt, dt


for w in (1, 2):
    r, dt = rate(Backend("local", w), w)
    print(f"local {w}: {r:,.0f} rounds/s ({dt:.1f}s)", flush=True)
ray = connect()  # local Ray, 127.0.0.1
for w in (1, 2):
    rate(Backend("ray", w), w)  # warm the workers
    r, dt = rate(Backend("ray", w), w)
    print(f"ray {w}: {r:,.0f} rounds/s ({dt:.1f}s)", flush=True)
n = 400
t = time.perf_counter()
list(ordered_map(abs, range(n), Backend("ray", 2)))
dt = time.perf_counter() - t
print(f"ray task overhead: {dt / n * 1000:.2f} ms a task (empty tasks, 2 in flight)")
