"""The imitation warm start of a run (see :mod:`training.imitation`): fit the fresh
network to demonstrations given (``--imitate-from``), saved in the run folder (a run
started again) or collected now, going on from those an interrupted collection saved,
together with earlier runs' (``imitate_with``: DAgger's aggregated data set); Ctrl-C
keeps what was collected and says how to go on."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from training.collection import (
    DEMONSTRATIONS,
    PARTIAL_DEMONSTRATIONS,
    CollectionInterrupted,
    collection_meta,
    demonstrations,
    is_first_jobs,
    load_demonstrations,
    read_demonstrations,
    save_demonstrations,
)
from training.config import TrainConfig

#: The most of a time limit the collection leaves for the fit after it. The fit of all
#: the decisions asked for can take longer than the whole limit (200,000 decisions for
#: 30 epochs): leaving all of that would end the collection after its first game, 20
#: decisions of a slow teacher. A fit cut short by the limit stops after its first epoch.
FIT_SHARE = 0.25


def read_partial(config: TrainConfig) -> Any:
    """The decisions an interrupted collection of this run saved, if they are the
    first jobs of the same collection (else ``None``: collected anew, with a note)."""
    path = config.run_dir / PARTIAL_DEMONSTRATIONS
    if not path.exists():
        return None
    done = read_demonstrations(path)
    if not is_first_jobs(done, config):
        print(f"note: {path} is not part of this collection: collecting anew", file=sys.stderr)
        return None
    print(f"imitation: going on from the {len(done):,} decisions saved in {path}", flush=True)
    return done


def collect_demonstrations(config: TrainConfig, progress: bool, reserve: float = 0.0) -> Any:
    """Collect the run's demonstrations, going on from those an interrupted collection
    saved, ``reserve`` seconds of its time limit left for the fit; on Ctrl-C save what
    was collected and say how to go on."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=config.imitate_decisions, unit="decision", unit_scale=True, desc=f"imitate {config.imitate}"
        )
    done = read_partial(config)
    try:
        return demonstrations(config, progress=bar.update if bar else None, done=done, reserve=reserve)
    except CollectionInterrupted as e:
        if bar:
            bar.close()
            bar = None
        saved = e.collected
        path = config.run_dir / PARTIAL_DEMONSTRATIONS
        if saved is not None and len(saved) > (len(done) if done is not None else 0):
            saved.meta = collection_meta(config, complete=False)
            save_demonstrations(saved, path)
        if saved is not None:
            print(
                f"\ninterrupted during the imitation warm start: {len(saved):,} of "
                f"{config.imitate_decisions:,} decisions saved to {path}, where a run started again goes on",
                file=sys.stderr,
            )
        else:
            print(
                "\ninterrupted during the imitation warm start, before a collection job finished",
                file=sys.stderr,
            )
        raise
    finally:
        if bar:
            bar.close()


def sharpen(policy: Any, factor: float) -> None:
    """Multiply the actor's logits by ``factor`` (its action head's weights and bias):
    the same argmax, a lower temperature (``--imitate-sharpen``)."""
    import torch as th

    with th.no_grad():
        policy.action_net.weight.mul_(factor)
        policy.action_net.bias.mul_(factor)


def warm_start(model: Any, config: TrainConfig, progress: bool, demos: Any = None) -> dict[str, float]:
    """The imitation warm start (see :mod:`training.imitation`): fit ``demos`` (from
    ``--imitate-from``), else the demonstrations saved in the run folder (a run started
    again), else collect them; saved in the run folder before the fit. Returns the fit's
    figures."""
    from training.imitation import Demonstrations, fit_seconds, pretrain

    t0 = time.perf_counter()
    deadline = time.monotonic() + config.time_limit if config.time_limit else math.inf
    earlier = load_demonstrations(config.imitate_with, config) if config.imitate_with else None
    saved = config.run_dir / DEMONSTRATIONS
    if demos is None and saved.exists():
        demos = load_demonstrations(str(saved), config)
        print(f"imitation: fitting the {len(demos):,} decisions saved in {saved}", flush=True)
    elif demos is None:
        reserve = 0.0
        if config.time_limit:  # the fit of the new decisions and any earlier ones
            fitted = config.imitate_decisions + (len(earlier) if earlier is not None else 0)
            reserve = min(
                fit_seconds(model, earlier, fitted, config.imitate_epochs), FIT_SHARE * config.time_limit
            )
        demos = collect_demonstrations(config, progress, reserve)
    if not saved.exists():
        save_demonstrations(demos, saved)
    (config.run_dir / PARTIAL_DEMONSTRATIONS).unlink(missing_ok=True)  # a prefix of the saved ones
    ours = len(demos)
    if earlier is not None:
        demos = Demonstrations.concat([demos, earlier])
    try:
        stats = pretrain(
            model,
            demos,
            config.imitate_epochs,
            seed=config.seeds.learner,
            knock_weight=config.imitate_knock_weight,
            deadline=deadline,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted while fitting the demonstrations (kept in {saved}, where a run started again goes on)",
            file=sys.stderr,
        )
        raise
    if config.imitate_sharpen != 1.0:
        sharpen(model.policy, config.imitate_sharpen)
    print(
        f"imitation of {config.imitate}: {len(demos):,} decisions"
        + (f" ({ours:,} of this run's, the others earlier runs')" if config.imitate_with else "")
        + f", {stats['epochs']:.3g} epochs{'' if stats['epochs'] == config.imitate_epochs else ' (the time limit)'}, "
        f"action accuracy {stats['accuracy']:.1%}, value loss {stats['value_loss']:.3f} "
        f"({time.perf_counter() - t0:.0f}s)",
        flush=True,
    )
    return {"decisions": float(len(demos)), "recorded": float(ours), **stats}
