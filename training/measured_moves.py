"""One step of policy improvement from measured moves.

A trained policy plays its seat while every legal move of each decision is measured by
paired play-outs from the true position, the policy itself playing on in its seat and
the table's players in theirs (:func:`training.imitation.collect` with
``move_rollouts``): each move's value if the policy deviates there once. :func:`improve`
then fits the policy's actor to *prefer the moves of higher measured value*: it
maximises the measured value of its own (stochastic) choice, ``sum_a pi(a|obs) Q(a)``,
minus ``kl_coef`` times the KL divergence from the policy it started as. The hidden
cards enter only through the measured values, never the input, so the fitted policy
learns the move that is better *given what the seat sees* (the play-outs' noise
averages out over many similar observations, as PPO's advantages do, but every move is
valued at every decision, paired on the same shuffles). Rollout policy improvement in
the sense of Bertsekas and Tesauro's roll-outs, distilled into the network instead of
searched at play time.

A share of the rows (``holdout``), the last in play order, is kept out of the fit to
report an honest figure: the mean measured gain, per decision, of the fitted policy's
argmax over the starting policy's in games it never saw (a round's decisions share its
hidden cards, so rows drawn at random beside fitted ones would flatter the fit).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from training.imitation import Demonstrations


def measured_rows(demos: Demonstrations) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows with measured moves: their indices, and for each a ``(rows, actions)``
    value table (0 where not measured) and mask of the measured moves."""
    if demos.move_actions is None or demos.move_values is None:
        raise ValueError("these demonstrations have no measured moves (collect them with move_rollouts)")
    ids, values = demos.move_actions, demos.move_values
    rows = np.flatnonzero((ids >= 0).sum(axis=1) > 1)
    if not len(rows):
        raise ValueError("no decision in these demonstrations has two or more measured moves")
    num_actions = demos.masks.shape[1]
    q = np.zeros((len(rows), num_actions), dtype=np.float32)
    measured = np.zeros((len(rows), num_actions), dtype=bool)
    r, c = np.nonzero(ids[rows] >= 0)
    q[r, ids[rows][r, c]] = values[rows][r, c]
    measured[r, ids[rows][r, c]] = True
    return rows, q, measured


def improve(
    model: Any,
    demos: Demonstrations,
    epochs: int,
    lr: float = 3e-5,
    kl_coef: float = 0.01,
    batch_size: int = 1024,
    seed: int = 0,
    holdout: float = 0.1,
) -> dict[str, float]:
    """Fit ``model.policy``'s actor (an SB3 maskable actor-critic on flat observations)
    to the measured moves of ``demos`` (see the module doc); the value network is left
    as it is. Returns the fit's figures: rows fitted and held out, the share of
    held-out decisions whose argmax changed, and the held-out measured gain per
    decision of the new argmax over the old (with its standard error)."""
    import torch as th

    from agents.ppo import NumpyPolicy
    from training.anchor import policy_parameters, torch_actor

    if epochs < 1:
        raise ValueError(f"epochs={epochs!r} must be at least 1")
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout={holdout!r} must be in [0, 1)")
    rows, q, measured = measured_rows(demos)
    centred = np.where(
        measured, q - (q * measured).sum(1, keepdims=True) / measured.sum(1, keepdims=True), 0.0
    )
    obs = demos.obs[rows].astype(np.float32)
    rng = np.random.default_rng(seed)
    # the last rows, not rows drawn at random: decisions of one round share its hidden
    # cards, so a held-out row beside fitted ones would be valued with what the fit learnt
    # of that deal; the tail is whole games the fit never saw (rows are in play order)
    cut = len(rows) - int(len(rows) * holdout)
    held = np.arange(cut, len(rows))
    fit = rng.permutation(cut)
    policy = model.policy
    start = torch_actor(NumpyPolicy.from_sb3(policy))

    def logits_of(x: Any, legal: Any) -> Any:
        latent, _ = policy.mlp_extractor(policy.extract_features(x))
        return policy.action_net(latent).masked_fill(~legal, -1e8)

    x_all = th.as_tensor(obs)
    legal_all = th.as_tensor(measured)
    with th.no_grad():
        start_logp = th.log_softmax(start(x_all).masked_fill(~legal_all, -1e8), -1)
    start_choice = start_logp.argmax(-1).numpy()
    optimizer = th.optim.Adam(policy_parameters(policy), lr=lr)
    q_all = th.as_tensor(centred, dtype=th.float32)
    policy.set_training_mode(True)
    for _ in range(epochs):
        rng.shuffle(fit)
        for i in range(0, len(fit), batch_size):
            idx = th.as_tensor(fit[i : i + batch_size])
            logp = th.log_softmax(logits_of(x_all[idx], legal_all[idx]), -1)
            value = (logp.exp() * q_all[idx]).sum(-1).mean()
            ref = start_logp[idx]
            kl = (ref.exp() * (ref - logp)).masked_fill(~legal_all[idx], 0.0).sum(-1).mean()
            loss = -value + kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    stats: dict[str, float] = {"rows": float(len(fit)), "held_out": float(len(held))}
    if len(held):
        with th.no_grad():
            choice = logits_of(x_all[held], legal_all[held]).argmax(-1).numpy()
        gain = q[held, choice] - q[held, start_choice[held]]
        stats["changed"] = float((choice != start_choice[held]).mean())
        stats["gain"] = float(gain.mean())
        stats["gain_se"] = float(gain.std(ddof=1) / np.sqrt(len(gain))) if len(gain) > 1 else float("nan")
    return stats
