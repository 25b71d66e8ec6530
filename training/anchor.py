"""Keeping long PPO close to its warm start: a KL penalty to the imitation policy.

PPO fine-tuning from an imitation warm start tends to drift: the first updates, made
with a value function that has not learned the game yet, undo what imitation taught.
:class:`AnchoredPolicy` adds ``kl_coef * KL(pi || pi_anchor)`` to PPO's loss, where
``pi_anchor`` is the frozen warm-start policy (masked like the learner), so RL departs
from the imitation only where its advantage pays for it; the callback lets the weight
decay (``--kl-half-life``), and ``--kl-heads-up`` weights it apart at the heads-up end of
a game (two players left), the play a warm start may know least.

MaskablePPO's loss adds ``ent_coef * (-mean(entropy))`` for the entropy its policy
reports, so the penalty rides on that term: :meth:`AnchoredPolicy.evaluate_actions`
reports ``entropy - (kl_coef / ent_coef) * KL``, which adds exactly ``kl_coef *
mean(KL)`` (a run with the anchor needs ``ent_coef > 0``, checked by the config).
The anchor's weights are kept in the run folder (``anchor_policy.npz``, read without
unpickling) so a resumed run keeps the same anchor.
"""

from __future__ import annotations

from typing import Any

import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.ppo import NumpyPolicy

#: The anchor's file in the run folder.
ANCHOR = "anchor_policy.npz"


def torch_actor(policy: NumpyPolicy) -> nn.Module:
    """A frozen torch copy of a numpy actor (its layers, activation and head)."""
    modules: list[nn.Module] = []
    act = {"Tanh": nn.Tanh, "ReLU": nn.ReLU, "tanh": nn.Tanh, "relu": nn.ReLU}[policy.activation]
    for w, b in [*policy.layers, policy.head]:
        layer = nn.Linear(w.shape[0], w.shape[1])
        with th.no_grad():
            layer.weight.copy_(th.from_numpy(w.T.copy()))
            layer.bias.copy_(th.from_numpy(b.copy()))
        modules += [layer, act()]
    net = nn.Sequential(*modules[:-1])  # no activation after the head
    for p in net.parameters():
        p.requires_grad_(False)
    return net.eval()


def policy_parameters(policy: MaskableActorCriticPolicy) -> list[nn.Parameter]:
    """The parameters of the actor alone (its hidden layers and action head; the
    critic's and any shared extractor's are left out)."""
    actor = [*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters()]
    if not policy.share_features_extractor:
        actor += list(policy.pi_features_extractor.parameters())
    return actor


def freeze_actor(policy: MaskableActorCriticPolicy, frozen: bool) -> None:
    """Stop (or resume) training the actor: with it frozen PPO's updates move the value
    function only (the value warm-up, ``--vf-warmup``)."""
    for p in policy_parameters(policy):
        p.requires_grad_(not frozen)


class AnchoredPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with a KL penalty toward a frozen anchor policy (see the
    module doc); without an anchor (or with a zero weight) it is the plain policy."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # kept outside nn.Module's registry: not trained, not in the saved state dict
        object.__setattr__(self, "_anchor", None)
        self.entropy_scale = 0.0  #: kl_coef / ent_coef, set by the run's callback
        self.last_kl = float("nan")  #: mean KL of the last minibatch, for the logs

    def set_anchor(self, anchor: NumpyPolicy) -> None:
        """Anchor to this (frozen) policy."""
        object.__setattr__(self, "_anchor", torch_actor(anchor).to(self.device))

    @property
    def anchored(self) -> bool:
        return self._anchor is not None

    def evaluate_actions(
        self, obs: th.Tensor, actions: th.Tensor, action_masks: th.Tensor | None = None
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor | None]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            latent_pi, latent_vf = self.mlp_extractor(features)
        else:
            latent_pi = self.mlp_extractor.forward_actor(features[0])
            latent_vf = self.mlp_extractor.forward_critic(features[1])
        dist = self._get_action_dist_from_latent(latent_pi)
        if action_masks is not None:
            dist.apply_masking(action_masks)
        log_prob = dist.log_prob(actions)
        values = self.value_net(latent_vf)
        entropy = dist.entropy()
        if self._anchor is None or self.entropy_scale <= 0:
            return values, log_prob, entropy
        logp = dist.distribution.logits  # the masked policy's log-probabilities
        with th.no_grad():
            ref = self._anchor(obs.float().reshape(len(obs), -1))
            if action_masks is not None:
                legal = th.as_tensor(action_masks, device=ref.device).reshape(ref.shape).bool()
                ref = ref.masked_fill(~legal, -1e8)
            ref = th.log_softmax(ref, dim=-1)
        p = logp.exp()
        kl = (p * (logp - ref)).sum(dim=-1)
        self.last_kl = float(kl.mean().detach())
        return values, log_prob, entropy - self.entropy_scale * kl
