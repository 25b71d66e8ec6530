"""Imitation warm start: teach a fresh MaskablePPO policy a teacher's moves first.

PPO from scratch spends millions of steps relearning what a hand-written player
already knows (which card to keep, not to knock on 15). :func:`collect` lets a
teacher (any player, usually ``expert``) play the learner's seat of the training env
and records what the learner would observe, the mask, the teacher's action and the
discounted return that followed; :func:`pretrain` fits the policy to the actions
(cross-entropy over the legal actions) and the value network to the returns (so PPO
starts with a critic that matches its actor). PPO then improves on the teacher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from thirtyone_env.actions import KNOCK
from thirtyone_env.views import player_view


@dataclass
class Demonstrations:
    """Decisions of a teacher in the learner's seat (float16 observations keep a few
    hundred thousand of them in a few hundred MB)."""

    obs: np.ndarray  #: (N, obs size) float16
    masks: np.ndarray  #: (N, actions) bool
    actions: np.ndarray  #: (N,) int64
    returns: np.ndarray  #: (N,) float32, discounted with ``gamma``

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        """The parts' decisions one after another (chunks collected in parallel)."""
        return cls(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in ("obs", "masks", "actions", "returns"))
        )


def collect(
    env: Any, teacher: Any, decisions: int, gamma: float, seed: int, progress: Any = None
) -> Demonstrations:
    """Play ``teacher`` in the agent seat of ``env`` (a flat-encoding ``ThirtyOneEnv``)
    until ``decisions`` decisions are recorded, finishing the last episode."""
    base = env.unwrapped
    size = base.observation_space.shape[0]
    obs_buf = np.zeros((decisions, size), dtype=np.float16)
    mask_buf = np.zeros((decisions, base.action_space.n), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    ret_buf = np.zeros(decisions, dtype=np.float32)
    rng = np.random.default_rng(seed)
    teacher_reset = getattr(teacher, "reset", None)
    n = 0
    obs, info = env.reset(seed=seed)
    while n < decisions:
        if callable(teacher_reset):
            teacher_reset(rng)
        start, rewards = n, []
        done = False
        while not done:
            mask = info["action_mask"]
            encoding = getattr(teacher, "obs_encoding", "flat")
            seen = player_view(base.state, base.seat) if encoding == "view" else obs
            action = int(teacher.act(seen, mask))
            if n < decisions:
                obs_buf[n], mask_buf[n], act_buf[n] = obs, mask.astype(bool), action
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            n += 1
            done = terminated or truncated
            if progress is not None:
                progress(1)
        g = 0.0
        for k in range(len(rewards) - 1, -1, -1):
            g = rewards[k] + gamma * g
            if start + k < decisions:
                ret_buf[start + k] = g
        obs, info = env.reset()
    return Demonstrations(obs_buf, mask_buf, act_buf, ret_buf)


def pretrain(
    model: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 1024,
    lr: float = 1e-3,
    seed: int = 0,
    knock_weight: float = 1.0,
) -> dict[str, float]:
    """Fit ``model.policy`` (an SB3 maskable actor-critic on flat observations) to the
    demonstrations; returns the last epoch's action accuracy and value loss.
    ``knock_weight`` scales the action loss of decisions where knocking was legal (the
    few choices where a teacher such as ``search`` differs from the expert)."""
    import torch as th
    import torch.nn.functional as F

    policy = model.policy
    policy.set_training_mode(True)
    optimizer = th.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    n = len(demos)
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = rng.permutation(n)
        correct = value_loss = total = 0.0
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            obs = th.as_tensor(demos.obs[idx].astype(np.float32))
            mask = th.as_tensor(demos.masks[idx])
            target = th.as_tensor(demos.actions[idx])
            returns = th.as_tensor(demos.returns[idx])
            features = policy.extract_features(obs)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~mask, -1e8)
            values = policy.value_net(latent_vf).squeeze(-1)
            weight = 1.0 + (knock_weight - 1.0) * mask[:, KNOCK].float()
            loss_pi = (F.cross_entropy(logits, target, reduction="none") * weight).sum() / weight.sum()
            loss_vf = F.mse_loss(values, returns)
            optimizer.zero_grad()
            (loss_pi + 0.5 * loss_vf).backward()
            optimizer.step()
            correct += float((logits.detach().argmax(-1) == target).sum())
            value_loss += float(loss_vf.detach()) * len(idx)
            total += len(idx)
        stats = {"accuracy": correct / total, "value_loss": value_loss / total}
    policy.set_training_mode(False)
    return stats
