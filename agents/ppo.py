"""Learned players: MaskablePPO policies at a table.

``PPOPlayer`` loads a model saved by ``train.py`` (an SB3 ``.zip``) or a policy
snapshot (``.npz``, what self-play pools hold) and plays it with its action mask. The
network runs in numpy (:class:`NumpyPolicy`): a forward pass of a small MLP costs
microseconds, where SB3's ``predict`` pays torch's per-call overhead, so learned
players are as cheap at a table as the heuristics. ``act_batch`` answers many games
in one forward pass (what the vector env asks of an opponent that offers it), with
the decision ``act`` gives each game alone (:data:`TIE_MARGIN`). Only the flat
encoding is supported (the default of ``train.py``).

Reading a model runs no code from it: SB3's own loader unpickles the zip's "data"
entries (cloudpickle), so a crafted model would run code when loaded. Here the weights
come from ``policy.pth`` through torch's weights-only loader, and the architecture from
plain JSON: the ``thirtyone.json`` entry ``train.py`` adds (:func:`model_bytes`) or,
for zips saved without it, the text SB3 writes beside each pickle. Snapshots are read
with ``allow_pickle=False``.

The model zoo, ``agents/models/``: each ``<name>.zip`` there names in its description
the table it was trained for (seats and rules) and has a model card ``<name>.md``.
``agents.make("ppo")`` (no path) picks the zoo model of the table it is seated at when
told the table (``check_table``, which the envs, the harness and the command-line tools
call before a game); :func:`zoo` reads the index from the files themselves, so adding
a model is dropping its zip and card into the folder.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from thirtyone_env.harness.files import atomic_write

#: The model zoo: ``<name>.zip`` models, each with its table in its description and a
#: model card ``<name>.md``.
ZOO = Path(__file__).resolve().parent / "models"
#: The zoo's 4-player standard-rules agent.
SHIPPED_MODEL = ZOO / "ppo_standard_4p.zip"

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
        """Action logits (float32) of one observation ``(input_size,)`` or a batch
        ``(B, input_size)``, one BLAS matmul per layer. A row's values may differ in
        the last bits with the batch it came in (BLAS picks kernels by shape), hence
        :meth:`row_logits` for near ties."""
        x = np.asarray(obs, dtype=np.float32)
        for w, b in self.layers:
            x = self._act(x @ w + b)
        w, b = self.head
        return x @ w + b

    def row_logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits of one observation in float64 without BLAS: exact products
        summed in a fixed order, so the result depends on the row alone. Slow; what
        breaks a near tie of :meth:`logits` the same way in any batch."""
        x = np.asarray(obs, dtype=np.float64)
        for w, b in self.layers:
            x = self._act(_row_affine(x, w, b))
        return _row_affine(x, *self.head)

    def save(self, path: str | os.PathLike) -> None:
        """Write the weights as ``.npz``, atomically (a reader never sees half a file)
        and with the user's umask."""
        arrays: dict[str, Any] = {"activation": np.array(self.activation)}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w.T, b
        arrays["head_w"], arrays["head_b"] = self.head[0].T, self.head[1]
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write(path, buf.getvalue())

    @classmethod
    def load_npz(cls, path: str | os.PathLike) -> NumpyPolicy:
        with np.load(path, allow_pickle=False) as z:
            count = sum(1 for k in z.files if k.startswith("w"))
            layers = [(z[f"w{i}"], z[f"b{i}"]) for i in range(count)]
            return cls(layers, (z["head_w"], z["head_b"]), str(z["activation"]))


def _row_affine(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w + b`` for one float64 row, elementwise: each product exact (float32
    weights), the sum in numpy's fixed order over a fixed shape."""
    return (x[:, None] * w).sum(axis=0) + b


def load_policy(path: str | os.PathLike) -> NumpyPolicy:
    """A :class:`NumpyPolicy` from an SB3 model ``.zip`` or a snapshot ``.npz``; a
    missing or damaged file raises ``ValueError`` naming the path. Nothing in the file
    is unpickled (see :func:`read_model_zip`), so a model from anyone is safe to play.
    Loaded once per file version (path, size, modification time): a tournament builds
    a player per game, and reading an SB3 zip costs far more than a game."""
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
        return policy_from_zip(path.read_bytes())
    except Exception as e:  # torch, zipfile and numpy raise many kinds on a bad file
        raise ValueError(f"cannot load model {path}: {type(e).__name__}: {e}") from None


# -- SB3 model zips, read without unpickling -------------------------------------------

#: The entry :func:`agents.training.models.save_model` adds to an SB3 zip: the actor's
#: architecture as plain JSON (:func:`describe`).
DESCRIPTION = "thirtyone.json"
SAFE_TORCH = (2, 6)  #: the first torch whose weights-only loader is safe (CVE-2025-32434)
MAX_ENTRY = 1 << 30  #: bytes an entry may unpack to (a 256-256 model's are ~2 MB)
POLICY_NET = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)$")


def describe(policy: Any) -> dict[str, Any]:
    """The actor of an SB3 ``ActorCriticPolicy`` as plain JSON data: what
    :func:`policy_from_zip` needs beside the weights (the activation cannot be read
    from a state dict)."""
    import torch.nn as nn

    return {
        "format": 1,
        "features_extractor": type(policy.pi_features_extractor).__name__,
        "activation": policy.activation_fn.__name__,
        "hidden": [m.out_features for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)],
        "observation_size": int(policy.features_dim),
        "actions": int(policy.action_net.out_features),
    }


def model_bytes(model: Any, table: dict[str, Any] | None = None) -> bytes:
    """An SB3 model saved as a zip, with its :func:`describe` entry added; ``table``
    (``{"players": n, "rules": {field: value}}``) says what table it was trained for."""
    buf = io.BytesIO()
    model.save(buf)
    description = describe(model.policy)
    if table is not None:
        description["table"] = table
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(DESCRIPTION, json.dumps(description, indent=2))
    return buf.getvalue()


def table_of(players: int, rules: Any) -> dict[str, Any]:
    """The table description a model keeps: seats and every rules field."""
    import dataclasses

    return {"players": int(players), "rules": dataclasses.asdict(rules)}


def trained_table(path: str | os.PathLike) -> tuple[int, Any] | None:
    """(players, Rules) a model was trained for: from its description (models saved by
    this version, the zoo's), else from the run's ``config.json`` beside the file or one
    folder up (checkpoints, snapshots); None where neither says. Plain JSON only."""
    path = Path(path)
    described = described_table(path)
    if described is not None:
        return described
    for folder in (path.parent, path.parent.parent):
        stored = _run_config(folder / "config.json")
        if stored is not None:
            return stored
    return None


def described_table(path: str | os.PathLike) -> tuple[int, Any] | None:
    """(players, Rules) the model's own description names (the ``table`` of its
    :data:`DESCRIPTION` entry); None for a file without one. Read once per file
    version; a damaged description raises ``ValueError`` naming the file."""
    path = Path(path)
    stat = path.stat()
    return _described_table(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _described_table(path_text: str, size: int, mtime_ns: int) -> tuple[int, Any] | None:
    from thirtyone_env.game.rules import Rules

    path = Path(path_text)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                if DESCRIPTION in archive.namelist() and archive.getinfo(DESCRIPTION).file_size < MAX_ENTRY:
                    table = json.loads(archive.read(DESCRIPTION)).get("table")
                    if table is not None:
                        return int(table["players"]), Rules(**table["rules"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as e:
        raise ValueError(
            f"cannot read the table model {path} was trained for: {type(e).__name__}: {e}"
        ) from None
    return None


def _run_config(path: Path) -> tuple[int, Any] | None:
    """(players, Rules) of a ``train.py`` run config; None for a file that is not one."""
    from thirtyone_env.game.rules import PRESETS, Rules

    try:
        stored = json.loads(path.read_text()) if path.is_file() else None
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("rules") not in PRESETS:
        return None
    players = stored.get("players")
    if isinstance(players, bool) or not isinstance(players, int):
        return None
    return players, Rules.preset(stored["rules"])


def preset_of(rules: Any) -> str | None:
    """The name of the preset equal to ``rules``; None for custom rules."""
    from thirtyone_env.game.rules import PRESETS, Rules

    return next((name for name in PRESETS if Rules.preset(name) == rules), None)


def rules_name(rules: Any) -> str:
    """``rules 'standard'`` for a preset's rules, else ``custom rules`` (for messages)."""
    name = preset_of(rules)
    return "custom rules" if name is None else f"rules {name!r}"


# -- the model zoo ---------------------------------------------------------------------


class ZooModel(NamedTuple):
    """A model of the zoo and the table it was trained for."""

    name: str  #: the file's stem; its model card is ``<name>.md`` beside it
    path: Path
    players: int
    rules: Any  #: a :class:`~thirtyone_env.game.rules.Rules`

    def label(self) -> str:
        return f"{self.players} players {preset_of(self.rules) or 'custom rules'} ({self.name})"


def zoo(folder: str | os.PathLike | None = None) -> list[ZooModel]:
    """Every model of the zoo (``folder``, default :data:`ZOO`), by name: each ``*.zip``
    with the table its own description names (nothing else is kept, so the index
    cannot go stale). A zip whose description names no table, or two models for one
    table, raise ``ValueError`` naming the files: the zoo never guesses."""
    folder = Path(ZOO if folder is None else folder)
    files = sorted(folder.glob("*.zip"))
    models = []
    for path in files:
        table = described_table(path)
        if table is None:
            raise ValueError(
                f"zoo model {path} names no table in its {DESCRIPTION} (save it with train.py, "
                "or add one with agents.ppo.with_description)"
            )
        models.append(ZooModel(path.stem, path, *table))
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            if (a.players, a.rules) == (b.players, b.rules):
                raise ValueError(f"zoo models {a.path} and {b.path} are both for {a.label()}: keep one")
    return models


def zoo_model(num_players: int, rules: Any, folder: str | os.PathLike | None = None) -> ZooModel:
    """The zoo model trained for ``num_players`` seats and ``rules``; ``ValueError``
    naming the table and what the zoo has when none is."""
    folder = Path(ZOO if folder is None else folder)
    models = zoo(folder)
    for model in models:
        if (model.players, model.rules) == (num_players, rules):
            return model
    available = "; ".join(m.label() for m in models) or f"none (no model in {folder})"
    raise ValueError(
        f"no zoo model for {num_players} players with {rules_name(rules)}; available: {available}"
    )


def with_description(raw: bytes, table: dict[str, Any]) -> bytes:
    """An SB3 zip saved without a :data:`DESCRIPTION` (before ``train.py`` wrote one),
    with one added: the architecture read from its weights (:func:`policy_from_zip`,
    nothing unpickled) and ``table`` (:func:`table_of`), so it can join the zoo. The
    entries it had are kept byte for byte."""
    if DESCRIPTION in zipfile.ZipFile(io.BytesIO(raw)).namelist():
        raise ValueError(f"the model already has a {DESCRIPTION} entry")
    policy = policy_from_zip(raw)
    description = {
        "format": 1,
        "features_extractor": "FlattenExtractor",
        "activation": policy.activation,
        "hidden": [w.shape[1] for w, _ in policy.layers],
        "observation_size": policy.input_size,
        "actions": policy.num_actions,
        "table": table,
    }
    buf = io.BytesIO(raw)
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(DESCRIPTION, json.dumps(description, indent=2))
    return buf.getvalue()


class ModelZip(NamedTuple):
    """What :func:`read_model_zip` read from an SB3 zip, all plain data."""

    data: dict[str, Any]  #: the "data" JSON; serialized entries stay base64 text
    description: Any  #: the :data:`DESCRIPTION` entry (plain JSON), None if absent
    tensors: dict[str, Any]  #: name of a ``.pth`` entry -> what torch read weights-only


def read_model_zip(raw: bytes, tensors: tuple[str, ...] = ("policy.pth",)) -> ModelZip:
    """The "data" JSON of an SB3 zip read as plain JSON (never unpickled), its
    description, and the named ``.pth`` entries read with torch's weights-only loader,
    which refuses anything but tensors and plain containers."""
    import torch

    check_torch(torch.__version__)
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise ValueError("not a zip archive")
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        names = set(archive.namelist())
        missing = [n for n in ("data", *tensors) if n not in names]
        if missing:
            raise ValueError(f"not an SB3 model: no {', '.join(missing)} in the archive")
        for name in ("data", DESCRIPTION, *tensors):
            if name in names and archive.getinfo(name).file_size > MAX_ENTRY:
                raise ValueError(
                    f"its {name} unpacks to {archive.getinfo(name).file_size:,} bytes: not a model"
                )
        data = json.loads(archive.read("data"))
        if not isinstance(data, dict):
            raise ValueError("its data entry is not a JSON object")
        description = json.loads(archive.read(DESCRIPTION)) if DESCRIPTION in names else None
        states = {}
        for name in tensors:
            try:
                states[name] = torch.load(
                    io.BytesIO(archive.read(name)), map_location="cpu", weights_only=True
                )
            except Exception as e:  # UnpicklingError for anything but plain tensors
                raise ValueError(f"{name} holds more than tensors, refused: {e}") from None
    return ModelZip(data, description, states)


def check_torch(version: str) -> None:
    """Refuse a torch whose weights-only loader can be made to run code (before 2.6:
    CVE-2025-32434)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if not m or (int(m.group(1)), int(m.group(2))) < SAFE_TORCH:
        raise ValueError(
            f"torch {version} cannot read model files safely (its weights-only loader can run code): "
            f"install torch {SAFE_TORCH[0]}.{SAFE_TORCH[1]} or later"
        )


def plain_zip(model: ModelZip) -> io.BytesIO:
    """An SB3 zip written anew from what :func:`read_model_zip` read: the data JSON
    and tensors saved by us, for SB3's loader (which, before SB3 2.4, unpickles
    ``.pth`` entries in full)."""
    import torch

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("data", json.dumps(model.data))
        for name, state in model.tensors.items():
            buf = io.BytesIO()
            torch.save(state, buf)
            archive.writestr(name, buf.getvalue())
    out.seek(0)
    return out


def policy_from_zip(raw: bytes) -> NumpyPolicy:
    """The actor of an SB3 model zip: weights from ``policy.pth`` (weights only), the
    activation from the :data:`DESCRIPTION` entry, or for zips saved without one,
    from the plain-text copy SB3 keeps of ``policy_kwargs`` beside the pickle."""
    data, description, tensors = read_model_zip(raw)
    state = tensors["policy.pth"]
    if not isinstance(state, dict):
        raise ValueError("policy.pth is not a state dict")
    extractor, activation = _extractor_and_activation(data, description)
    if extractor != "FlattenExtractor":
        raise ValueError(
            f"only policies on the flat encoding (MlpPolicy) can be played; this one uses {extractor}"
        )
    found: dict[int, dict[str, Any]] = {}
    for key, tensor in state.items():
        if m := POLICY_NET.match(key):
            found.setdefault(int(m.group(1)), {})[m.group(2)] = _array(tensor, key)
    layers = [(found[i].get("weight"), found[i].get("bias")) for i in sorted(found)]
    head = (
        _array(state.get("action_net.weight"), "action_net.weight"),
        _array(state.get("action_net.bias"), "action_net.bias"),
    )
    _check_shapes(layers, head)
    policy = NumpyPolicy(layers, head, activation)
    if isinstance(description, dict):
        expected = (description.get("observation_size"), description.get("actions"))
        if expected != (policy.input_size, policy.num_actions):
            raise ValueError(
                f"{DESCRIPTION} says {expected} observation values and actions, the weights {policy.input_size, policy.num_actions}"
            )
    return policy


def _extractor_and_activation(data: dict[str, Any], description: Any) -> tuple[str, str]:
    """The features extractor and activation names, from the description when there
    is one, else from the text SB3 writes beside its pickles (an MlpPolicy's default
    activation is Tanh)."""
    if description is not None:
        if not isinstance(description, dict) or description.get("format") != 1:
            raise ValueError(f"{DESCRIPTION} is not a description this version reads")
        return str(description.get("features_extractor")), str(description.get("activation"))
    space = data.get("observation_space")
    space_type = space.get(":type:", "") if isinstance(space, dict) else ""
    extractor = (
        "FlattenExtractor"
        if space_type.endswith(".Box'>")
        else f"an extractor for {space_type or 'an unknown space'}"
    )
    kwargs = data.get("policy_kwargs")
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    if "features_extractor_class" in kwargs:
        extractor = _class_name(kwargs["features_extractor_class"])
    activation = _class_name(kwargs["activation_fn"]) if "activation_fn" in kwargs else "Tanh"
    return extractor, activation


def _class_name(text: Any) -> str:
    """``Tanh`` from SB3's text of a class, ``"<class 'torch.nn.modules.activation.Tanh'>"``."""
    m = re.fullmatch(r"<class '(?:[\w.]+\.)?(\w+)'>", str(text))
    if not m:
        raise ValueError(f"unreadable class name {text!r} in the model's data")
    return m.group(1)


def _array(tensor: Any, key: str) -> np.ndarray:
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise ValueError(f"policy.pth has no tensor {key}")
    return tensor.detach().cpu().numpy()


def _check_shapes(layers: list[tuple[Any, Any]], head: tuple[np.ndarray, np.ndarray]) -> None:
    """Raise unless the layers chain into the head (each a 2-d weight and a 1-d bias)."""
    width = None
    for i, (w, b) in enumerate([*layers, head]):
        name = "the action head" if i == len(layers) else f"policy layer {i}"
        if w is None or b is None or w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"{name} is not a weight matrix and a bias")
        if width is not None and w.shape[1] != width:
            raise ValueError(f"{name} takes {w.shape[1]} inputs, the layer before gives {width}")
        width = w.shape[0]


class PolicyPlayer:
    """A :class:`NumpyPolicy` as a player (flat observations, masked), for one game
    (:meth:`act`) or many at once (:meth:`act_batch`, one forward pass); both give
    the same decision for the same row (see :func:`masked_actions`).

    Args:
        policy: the network.
        name: what errors call it (a model's path, a snapshot's name).
        deterministic: play the most likely legal action; else sample from the
            masked action distribution with the generator handed to ``reset``.
    """

    obs_encoding = "flat"

    def __init__(self, policy: NumpyPolicy, name: str, deterministic: bool = True) -> None:
        self.policy = policy
        self.name = name
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def check_table(self, num_players: int, rules: Any) -> None:
        """Refuse (``ValueError`` naming both) a table whose observations or actions
        the network does not take; a network that takes the observation with the
        ``opponent_history`` part asks for it (``obs_encoding = "flat+history"``)."""
        self.obs_encoding = observation_kind(self.policy, num_players, rules, self.name)

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        return masked_action(self.policy, observation, action_mask, self.deterministic, self.rng, self.name)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row of ``observations`` ``(B, input_size)`` under ``masks``
        ``(B, num_actions)``; the inputs are not kept."""
        return masked_actions(self.policy, observations, masks, self.deterministic, self.rng, self.name)


class PPOPlayer(PolicyPlayer):
    """A trained MaskablePPO policy as a player (flat observations).

    Args:
        path: an SB3 ``.zip`` from ``train.py`` or a snapshot ``.npz``, played only at
            the table it was trained for; ``None`` (the default): the zoo's model for
            the table, picked when :meth:`check_table` names it (a table the zoo has no
            model for is refused, naming what it has).
        deterministic: play the most likely legal action; else sample from the
            masked action distribution with the generator handed to ``reset``.
    """

    #: the option naming a file (it travels with the spec to other machines, :mod:`agents.portable`)
    FILE_OPTIONS = ("path",)

    def __init__(self, path: str | None = None, deterministic: bool = True) -> None:
        self.path = path
        self.from_zoo = path is None
        self._table: tuple[int, Any] | None = None  # the last table check_table accepted
        if self.from_zoo:  # no model until the table is known
            self.policy = None  # type: ignore[assignment]
            self.name = "ppo (the zoo model for its table)"
            self.deterministic = deterministic
            self.rng = np.random.default_rng()
        else:
            super().__init__(load_policy(path), str(path), deterministic)

    @staticmethod
    def companion_files(path: str) -> list[Path]:
        """Files beside the model that say its table, to travel with it: the run's
        ``config.json`` (beside it or one folder up) of a model whose own description
        names no table (:func:`trained_table`)."""
        path_ = Path(path)
        if described_table(path_) is not None:
            return []
        return [
            f / "config.json" for f in (path_.parent, path_.parent.parent) if _run_config(f / "config.json")
        ][:1]

    @staticmethod
    def check_options(path: str | None = None, deterministic: bool = True) -> None:
        """What :func:`agents.check_spec` checks without reading the model: that the
        file is there (the zoo's model is picked at the table)."""
        if path is not None and not Path(path).is_file():
            raise ValueError(f"model file not found: {path}")

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        if self.policy is None:
            raise ValueError(self._no_table())
        return super().act(observation, action_mask)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.policy is None:
            raise ValueError(self._no_table())
        return super().act_batch(observations, masks)

    def _no_table(self) -> str:
        return (
            "the ppo player with no path plays the zoo model of its table, and was not told the table: "
            "call check_table(num_players, rules) before a game (the envs, the harness and "
            "the command-line tools do), or give path="
        )

    def check_table(self, num_players: int, rules: Any) -> None:
        """Get ready for a table of ``num_players`` seats and ``rules``: the zoo player
        picks the zoo's model for it (``ValueError`` naming the table and the zoo's
        models when there is none); a model is refused (``ValueError`` naming it) unless
        it was trained for this table size and rules. Found before a game, not in one."""
        from thirtyone_env.game.rules import Rules

        rules = Rules.resolve(rules)
        if self._table is not None and self._table == (num_players, rules):
            return  # checked already (the harness asks before every game)
        if self.from_zoo:
            self.policy, self._table = None, None  # type: ignore[assignment]  # no model until one fits
            chosen = zoo_model(num_players, rules)
            self.policy = load_policy(chosen.path)
            self.path = self.name = str(chosen.path)
        self._check_model(num_players, rules)
        self._table = (num_players, rules)

    def _check_model(self, num_players: int, rules: Any) -> None:
        """Raise unless the model takes this table's observations and actions and, where
        it says which table it was trained for, was trained for this one."""
        self.obs_encoding = observation_kind(self.policy, num_players, rules, f"model {self.path}")
        trained = trained_table(self.path)
        if trained is not None and trained != (num_players, rules):
            players, trained_rules = trained
            raise ValueError(
                f"model {self.path} was trained for {players} players with {rules_name(trained_rules)}; "
                f"this table has {num_players} players with {rules_name(rules)}"
            )


def observation_kind(policy: NumpyPolicy, num_players: int, rules: Any, name: str) -> str:
    """``"flat"`` or ``"flat+history"``: the observation ``policy`` takes at this table
    (without or with the ``opponent_history`` part); ``ValueError`` naming ``name``,
    the sizes and the actions where it takes neither."""
    from thirtyone_env.game.actions import num_actions
    from thirtyone_env.game.encoding import ObsLayout
    from thirtyone_env.game.rules import Rules

    layout = ObsLayout(num_players, Rules.resolve(rules))
    sizes = {layout.size: "flat", layout.with_history().size: "flat+history"}
    actions = num_actions(layout.rules)
    if policy.input_size not in sizes or actions != policy.num_actions:
        raise ValueError(
            f"{name} was trained for another table: it takes {policy.input_size} "
            f"observation values and {policy.num_actions} actions, {num_players} players with these "
            f"rules give {layout.size} ({layout.with_history().size} with the opponent history) "
            f"and {actions}"
        )
    return sizes[policy.input_size]


#: A deterministic decision whose best legal logit leads the next by at most this
#: share of ``1 + |best|`` is a near tie: it is decided again by
#: :meth:`NumpyPolicy.row_logits`, which depends on the row alone. BLAS rounds a
#: row's logits differently in batches of different sizes (the shipped agent: by up
#: to 4e-5 on logits up to 45, some 1% of this margin; ``tests/test_ppo_batch.py``
#: checks), so a game played alone and the same game in any batch get the same
#: decisions. Near ties are rare (none in 5,000 of the shipped agent's decisions).
TIE_MARGIN = 1e-3


def masked_action(
    policy: NumpyPolicy,
    observation: np.ndarray,
    action_mask: np.ndarray,
    deterministic: bool,
    rng: np.random.Generator,
    name: str,
) -> int:
    """The policy's choice among the legal actions (argmax, or a sample) for one
    observation: :func:`masked_actions` on a batch of one, so a game played alone
    and the same game in a batch get the same decisions."""
    obs = np.asarray(observation)
    if obs.shape != (policy.input_size,):
        raise ValueError(_wrong_observations(policy, obs.shape, name))
    mask = np.asarray(action_mask)
    if mask.shape != (policy.num_actions,):
        raise ValueError(
            f"model {name} takes an action mask of shape ({policy.num_actions},), got shape {mask.shape}"
        )
    return int(masked_actions(policy, obs[None], mask[None], deterministic, rng, name)[0])


def masked_actions(
    policy: NumpyPolicy,
    observations: np.ndarray,
    masks: np.ndarray,
    deterministic: bool,
    rng: np.random.Generator,
    name: str,
) -> np.ndarray:
    """The policy's choice among each row's legal actions, one forward pass for all
    rows: the argmax (a near tie decided by :meth:`NumpyPolicy.row_logits`, see
    :data:`TIE_MARGIN`), or one draw per row from ``rng`` by inverse CDF."""
    obs = _check_observations(policy, np.asarray(observations), name)
    legal = _check_masks(policy, np.asarray(masks), len(obs), name)
    logits = np.where(legal, policy.logits(obs), np.float32(MASKED_LOGIT))
    if deterministic:
        return _argmax_rows(policy, obs, legal, logits)
    return _sample_rows(logits, rng)


def _check_observations(policy: NumpyPolicy, obs: np.ndarray, name: str) -> np.ndarray:
    """The observations as float32 (what both forward passes read)."""
    if obs.ndim != 2 or obs.shape[1] != policy.input_size:
        raise ValueError(_wrong_observations(policy, obs.shape, name))
    return obs.astype(np.float32, copy=False)


def _wrong_observations(policy: NumpyPolicy, shape: tuple[int, ...], name: str) -> str:
    return (
        f"model {name} takes observations of size {policy.input_size} (a batch: one per row), got shape "
        f"{shape}: it was trained for another table size or encoding"
    )


def _check_masks(policy: NumpyPolicy, masks: np.ndarray, rows: int, name: str) -> np.ndarray:
    """The masks as booleans; ``ValueError`` naming the model for a wrong shape or a
    row with no legal action."""
    if masks.shape != (rows, policy.num_actions):
        raise ValueError(
            f"model {name} takes action masks of shape ({rows}, {policy.num_actions}) for {rows} "
            f"observation(s), got shape {masks.shape}"
        )
    legal = masks.astype(bool)
    some = legal.any(axis=1)
    if np.count_nonzero(some) < rows:
        raise ValueError(f"model {name}: no legal action in the mask of row {int(np.argmin(some))}")
    return legal


def _argmax_rows(policy: NumpyPolicy, obs: np.ndarray, legal: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """Each row's best legal action; near ties decided again row by row."""
    best = logits.argmax(axis=1)
    if logits.shape[1] > 1:
        second, top = np.partition(logits, -2, axis=1)[:, -2:].T
        near = top - second <= TIE_MARGIN * (1 + np.abs(top))
        if near.any():
            for k in np.flatnonzero(near):
                best[k] = np.where(legal[k], policy.row_logits(obs[k]), -np.inf).argmax()
    return best


def _sample_rows(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row from the softmax of ``logits`` (illegal ones at
    :data:`MASKED_LOGIT` have probability 0): one uniform each, the first action whose
    cumulative probability exceeds it, so only legal actions are ever drawn."""
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    cdf = np.cumsum(z, axis=1, dtype=np.float64)
    cdf /= cdf[:, -1:]
    u = rng.random(len(logits))
    return (cdf <= u[:, None]).sum(axis=1)
