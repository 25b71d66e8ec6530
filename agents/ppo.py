"""Learned players: MaskablePPO policies at a table.

``PPOPlayer`` loads a model saved by ``train.py`` (an SB3 ``.zip``) or a policy
snapshot (``.npz``, what self-play pools hold) and plays it with its action mask. The
network runs in numpy (:class:`NumpyPolicy`): a forward pass of a small MLP costs
microseconds, where SB3's ``predict`` pays torch's per-call overhead, so learned
players are as cheap at a table as the heuristics. Only the flat encoding is
supported (the default of ``train.py``).

The shipped model, ``agents/models/ppo_standard_4p.zip``, is what ``agents.make("ppo")``
loads; its model card is in the README.
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

#: The shipped 4-player standard-rules agent.
SHIPPED_MODEL = Path(__file__).resolve().parent / "models" / "ppo_standard_4p.zip"

ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
}
MASKED_LOGIT = -1e8  #: what MaskablePPO puts on illegal actions


class NumpyPolicy:
    """The actor of an SB3 ``MlpPolicy`` as numpy arrays: ``layers`` of (weight,
    bias) with ``activation`` between them, then the action head."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        head: tuple[np.ndarray, np.ndarray],
        activation: str,
    ):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unsupported activation {activation!r}; supported: {sorted(ACTIVATIONS)}")
        self.layers = [(np.ascontiguousarray(w.T, dtype=np.float32), b.astype(np.float32)) for w, b in layers]
        self.head = (np.ascontiguousarray(head[0].T, dtype=np.float32), head[1].astype(np.float32))
        self.activation = activation
        self._act = ACTIVATIONS[activation]
        self.input_size = (self.layers[0][0] if self.layers else self.head[0]).shape[0]
        self.num_actions = self.head[0].shape[1]

    @classmethod
    def from_sb3(cls, policy: Any) -> NumpyPolicy:
        """Copy the actor of an SB3 ``ActorCriticPolicy`` with a flatten extractor."""
        import torch.nn as nn

        if type(policy.pi_features_extractor).__name__ != "FlattenExtractor":
            raise ValueError(
                "only policies on the flat encoding (MlpPolicy) can be played in numpy; "
                f"this one uses {type(policy.pi_features_extractor).__name__}"
            )
        layers = []
        activation = None
        for module in policy.mlp_extractor.policy_net:
            if isinstance(module, nn.Linear):
                layers.append((module.weight.detach().numpy(), module.bias.detach().numpy()))
            else:
                activation = type(module).__name__
        head = policy.action_net
        return cls(
            layers,
            (head.weight.detach().numpy(), head.bias.detach().numpy()),
            activation or type(policy.activation_fn()).__name__,
        )

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        for w, b in self.layers:
            x = self._act(x @ w + b)
        w, b = self.head
        return x @ w + b

    def save(self, path: str | os.PathLike) -> None:
        """Write the weights as ``.npz``, atomically (a reader never sees half a file)."""
        path = Path(path)
        arrays: dict[str, Any] = {"activation": np.array(self.activation)}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w.T, b
        arrays["head_w"], arrays["head_b"] = self.head[0].T, self.head[1]
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(buf.getvalue())
        os.replace(tmp, path)

    @classmethod
    def load_npz(cls, path: str | os.PathLike) -> NumpyPolicy:
        with np.load(path, allow_pickle=False) as z:
            count = sum(1 for k in z.files if k.startswith("w"))
            layers = [(z[f"w{i}"], z[f"b{i}"]) for i in range(count)]
            return cls(layers, (z["head_w"], z["head_b"]), str(z["activation"]))


def load_policy(path: str | os.PathLike) -> NumpyPolicy:
    """A :class:`NumpyPolicy` from an SB3 model ``.zip`` or a snapshot ``.npz``; a
    missing or damaged file raises ``ValueError`` naming the path. Loaded once per
    file version (path, size, modification time): a tournament builds a player per
    game, and reading an SB3 zip costs far more than a game."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"model file not found: {path}")
    stat = path.stat()
    return _load_cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_cached(path_text: str, size: int, mtime_ns: int) -> NumpyPolicy:
    path = Path(path_text)
    try:
        if path.suffix == ".npz":
            return NumpyPolicy.load_npz(path)
        if not zipfile.is_zipfile(path):
            raise ValueError("not a zip archive")
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(path, device="cpu")
        return NumpyPolicy.from_sb3(model.policy)
    except Exception as e:  # torch, zipfile and numpy raise many kinds on a bad file
        raise ValueError(f"cannot load model {path}: {type(e).__name__}: {e}") from None


class PPOPlayer:
    """A trained MaskablePPO policy as a player (flat observations).

    Args:
        path: an SB3 ``.zip`` from ``train.py`` or a snapshot ``.npz``; default: the
            shipped 4-player standard-rules agent.
        deterministic: play the most likely legal action; else sample from the
            masked action distribution with the generator handed to ``reset``.
    """

    obs_encoding = "flat"

    def __init__(self, path: str = str(SHIPPED_MODEL), deterministic: bool = True) -> None:
        self.path = path
        self.policy = load_policy(path)
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def check_table(self, num_players: int, rules: Any) -> None:
        """Raise ``ValueError`` (naming the model) unless it was trained for this table
        size and rules' observation and action space: found before a game, not in one."""
        from thirtyone_env.actions import num_actions
        from thirtyone_env.encoding import ObsLayout

        size = ObsLayout(num_players, rules).size
        if size != self.policy.input_size or num_actions(rules) != self.policy.num_actions:
            raise ValueError(
                f"model {self.path} was trained for another table: it takes {self.policy.input_size} "
                f"observation values and {self.policy.num_actions} actions, {num_players} players with these "
                f"rules give {size} and {num_actions(rules)}"
            )

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        return masked_action(self.policy, observation, action_mask, self.deterministic, self.rng, self.path)


def masked_action(
    policy: NumpyPolicy,
    observation: np.ndarray,
    action_mask: np.ndarray,
    deterministic: bool,
    rng: np.random.Generator,
    name: str,
) -> int:
    """The policy's choice among the legal actions (argmax, or a sample)."""
    obs = np.asarray(observation)
    if obs.ndim != 1 or obs.shape[0] != policy.input_size:
        raise ValueError(
            f"model {name} takes observations of size {policy.input_size}, got shape {obs.shape}: "
            "it was trained for another table size or encoding"
        )
    logits = policy.logits(obs)
    legal = np.asarray(action_mask, dtype=bool)
    if not legal.any():
        raise ValueError("no legal action in the mask")
    logits = np.where(legal, logits, MASKED_LOGIT)
    if deterministic:
        return int(np.argmax(logits))
    z = np.exp(logits - logits.max())
    return int(rng.choice(logits.size, p=z / z.sum()))
