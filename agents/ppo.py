"""Learned players: MaskablePPO policies at a table.

``PPOPlayer`` loads a model saved by ``train.py`` (an SB3 ``.zip``) or a policy
snapshot (``.npz``, what self-play pools hold) and plays it with its action mask. The
network runs in numpy (:class:`NumpyPolicy`): a forward pass of a small MLP costs
microseconds, where SB3's ``predict`` pays torch's per-call overhead, so learned
players are as cheap at a table as the heuristics. ``act_batch`` answers many games
in one forward pass (what the vector env asks of an opponent that offers it), with
the decision ``act`` gives each game alone (:data:`TIE_MARGIN`). A network on the
flat encoding (``MlpPolicy``, the default of ``train.py``) is played as it is; one on
the dict encoding (``MultiInputPolicy``) is the same network with its first layer's
inputs in another order, so it is played on the flat encoding with them put in the
flat order (:func:`in_flat_order`).

Reading a model runs no code from it: SB3's own loader unpickles the zip's "data"
entries (cloudpickle), so a crafted model would run code when loaded. Here the weights
come from ``policy.pth`` through torch's weights-only loader, and the architecture from
plain JSON: the ``thirtyone.json`` entry ``train.py`` adds (:func:`model_bytes`) or,
for zips saved without it, the text SB3 writes beside each pickle. Snapshots are read
with ``allow_pickle=False``. Nor can a model file take more memory than a model needs:
what it unpacks to is bounded (:data:`MAX_UNPACKED`) before anything is inflated, and
its weights must be the tensors of an MLP policy, of the shapes its description names,
float32 or float64 and finite, else it is refused with one line naming the file and
the reason.

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
import math
import os
import re
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from thirtyone_env.harness.files import atomic_write, json_value

#: The model zoo: ``<name>.zip`` models, each with its table in its description and a
#: model card ``<name>.md``.
ZOO = Path(__file__).resolve().parent / "models"
#: The zoo's 4-player standard-rules agent.
SHIPPED_MODEL = ZOO / "ppo_standard_4p-v5.zip"
#: A zoo file's stem: ``<name>-v<version>`` (``ppo_standard_4p-v5``), its id.
VERSIONED = re.compile(r"(.+)-v(\d+)")

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
        """Copy the actor of an SB3 ``ActorCriticPolicy`` on the flat encoding
        (``MlpPolicy``) or on the dict encoding (``MultiInputPolicy``, played on the flat
        encoding: :func:`in_flat_order`)."""
        import torch.nn as nn

        parts = _combined_parts(policy)
        layers = []
        activation = None
        for module in policy.mlp_extractor.policy_net:
            if isinstance(module, nn.Linear):
                layers.append((module.weight.detach().numpy(), module.bias.detach().numpy()))
            else:
                activation = type(module).__name__
        head = (policy.action_net.weight.detach().numpy(), policy.action_net.bias.detach().numpy())
        if parts is not None:
            layers, head = _flat_network(layers, head, parts, "the policy")
        return cls(layers, head, activation or type(policy.activation_fn()).__name__)

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
        """A snapshot written by :meth:`save`, read without unpickling and within
        :data:`MAX_UNPACKED` (:func:`_read_npz`); ``ValueError`` naming the file and
        the reason for anything else (:meth:`_from_arrays`)."""
        try:
            return cls._from_arrays(_read_npz(Path(path)))
        except Exception as e:  # zipfile, numpy and the checks raise many kinds on a bad file
            raise ValueError(f"cannot load model {path}: {_reason(e)}") from None

    @classmethod
    def _from_arrays(cls, arrays: dict[str, np.ndarray]) -> NumpyPolicy:
        """The policy of a snapshot's arrays: exactly ``activation`` (a name), ``w<i>``,
        ``b<i>``, ``head_w`` and ``head_b``, chained (:func:`_check_shapes`), float32
        or float64 and finite."""
        count = sum(1 for key in arrays if re.fullmatch(r"w\d+", key))
        expected = {"activation", "head_w", "head_b", *(f"{p}{i}" for p in "wb" for i in range(count))}
        if unexpected := sorted(set(arrays) - expected):
            raise ValueError(f"it holds an array {unexpected[0]!r} a snapshot does not have: not a model")
        if missing := sorted(expected - set(arrays)):
            raise ValueError(f"it has no array {missing[0]!r}: not a model")
        activation = arrays["activation"]
        if activation.dtype.kind != "U" or activation.shape != ():
            raise ValueError("its activation is not a name: not a model")
        for key in sorted(expected - {"activation"}):
            _check_dtype(arrays[key].dtype.name, f"its {key}")
            _check_finite(arrays[key], f"its {key}")
        layers = [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(count)]
        head = (arrays["head_w"], arrays["head_b"])
        _check_shapes(layers, head)
        return cls(layers, head, str(activation))


def _combined_parts(policy: Any) -> list[tuple[str, int]] | None:
    """The dict observation's parts (name, size) in the order an SB3 policy's
    ``CombinedExtractor`` joins them (each Box part flattened); None for a flatten
    extractor; ``ValueError`` for any other (a network before the MLP)."""
    import torch.nn as nn

    extractor = policy.pi_features_extractor
    kind = type(extractor).__name__
    if kind == "FlattenExtractor":
        return None
    spaces = getattr(policy.observation_space, "spaces", None)
    if kind != "CombinedExtractor" or not isinstance(spaces, dict):
        raise ValueError(
            f"only policies on the flat or the dict encoding (MlpPolicy, MultiInputPolicy) can be "
            f"played in numpy; this one uses {kind}"
        )
    parts = []
    for key, space in spaces.items():
        if not isinstance(extractor.extractors[key], nn.Flatten) or type(space).__name__ != "Box":
            raise ValueError(
                f"its observation part {key!r} is not a flattened box: not a dict-encoding policy"
            )
        parts.append((str(key), int(np.prod(space.shape))))
    return parts


def in_flat_order(weight: np.ndarray, parts: Iterable[tuple[str, int]], name: str) -> np.ndarray:
    """The first layer's ``weight`` ``(out, in)`` of a network that reads the dict
    encoding's ``parts`` (name, size) one after another in the given order (what a
    ``MultiInputPolicy`` joins), with its columns in the flat encoding's order
    (:data:`~thirtyone_env.game.encoding.PART_ORDER`): the same network, on the flat
    observation. ``ValueError`` naming ``name`` for a part the encoding does not have."""
    from thirtyone_env.game.encoding import PART_ORDER

    where: dict[str, range] = {}
    pos = 0
    for part, size in parts:
        if part not in PART_ORDER or part in where or size < 1:
            raise ValueError(
                f"{name} reads a dict observation part {part!r} of {size} values, not a part of this "
                f"library's encoding ({', '.join(PART_ORDER)})"
            )
        where[part] = range(pos, pos + size)
        pos += size
    if pos != weight.shape[1]:
        raise ValueError(
            f"{name}'s observation parts hold {pos} values, its first layer takes {weight.shape[1]}"
        )
    order = [i for part in PART_ORDER if part in where for i in where[part]]
    return weight[:, order]


def _flat_network(
    layers: list[tuple[Any, Any]], head: tuple[Any, Any], parts: list[tuple[str, int]], name: str
) -> tuple[list[tuple[Any, Any]], tuple[Any, Any]]:
    """The actor ``layers`` and ``head`` of a dict-encoding network with its first
    layer's inputs in the flat encoding's order (:func:`in_flat_order`)."""
    if layers:
        (w, b), *rest = layers
        return [(in_flat_order(np.asarray(w), parts, name), b), *rest], head
    return [], (in_flat_order(np.asarray(head[0]), parts, name), head[1])


def _row_affine(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w + b`` for one float64 row, elementwise: each product exact (float32
    weights), the sum in numpy's fixed order over a fixed shape."""
    return (x[:, None] * w).sum(axis=0) + b


def check_model_path(path: Path) -> None:
    """``ValueError`` naming the problem unless ``path`` is a file (a model's)."""
    if not str(path).strip() or str(path) == ".":
        raise ValueError("the model's path is empty: give path=<a model .zip or .npz file>")
    if path.is_dir():
        raise ValueError(f"model path {path} is a folder, not a model file (.zip or .npz)")
    if not path.is_file():
        if path.exists() or path.is_symlink():  # a device, a pipe, a socket, a broken link
            raise ValueError(f"model path {path} is not a regular file: not a model file (.zip or .npz)")
        raise ValueError(f"model file not found: {path}")


def load_policy(path: str | os.PathLike) -> NumpyPolicy:
    """A :class:`NumpyPolicy` from an SB3 model ``.zip`` or a snapshot ``.npz``; a
    missing or damaged file raises ``ValueError`` naming the path. Nothing in the file
    is unpickled (see :func:`read_model_zip`), so a model from anyone is safe to play.
    Loaded once per file version (path, size, modification time): a tournament builds
    a player per game, and reading an SB3 zip costs far more than a game."""
    path = Path(path)
    check_model_path(path)
    stat = path.stat()
    return _load_cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_cached(path_text: str, size: int, mtime_ns: int) -> NumpyPolicy:
    path = Path(path_text)
    if path.suffix == ".npz":
        return NumpyPolicy.load_npz(path)
    try:
        return policy_from_zip(path.read_bytes())
    except Exception as e:  # torch, zipfile and numpy raise many kinds on a bad file
        raise ValueError(f"cannot load model {path}: {_reason(e)}") from None


def _reason(e: Exception) -> str:
    """An error as one line for a message: the text of a ``ValueError`` (what the
    checks here raise), the kind and text of anything else."""
    text = str(e) if type(e) is ValueError else f"{type(e).__name__}: {e}"
    return " ".join(text.split())


# -- SB3 model zips, read without unpickling -------------------------------------------

#: The entry :func:`training.models.save_model` adds to an SB3 zip: the actor's
#: architecture as plain JSON (:func:`describe`).
DESCRIPTION = "thirtyone.json"
SAFE_TORCH = (2, 6)  #: the first torch whose weights-only loader is safe (CVE-2025-32434)
#: The most bytes a model file may unpack to: the entries of a model zip read together,
#: the records of the torch archive in each of its ``.pth`` entries (what torch makes
#: tensors of), the arrays of a snapshot. The zoo's 256-256 models unpack to 2-3.3 MB,
#: a 256-256 checkpoint with its optimizer state to ~10 MB, a 1024-1024 one to ~58 MB
#: (and a checkpoint's data keeps the last observation of each env: ~6.6 KB an env at
#: 4 players, 1.7 MB for 256 envs); a file past the bound is a zip bomb (a few MB that
#: inflate to GBs), refused before it is inflated.
MAX_UNPACKED = 64 << 20
#: Bytes inflated at a time: zipfile cuts an entry to the size its header declares only
#: after each read, so reading an entry whole inflates all its stream holds first.
_CHUNK = 1 << 20
#: The dtypes weights may have: what SB3 saves (float32) and float64. float16 and
#: bfloat16 are not what a policy here was trained in, complex and integers not weights.
REAL_FLOATS = ("float32", "float64")
#: The tensors of an SB3 ``MlpPolicy`` (flatten extractor, which has none): the hidden
#: layers of its actor and critic, its action head and value head. Nothing else is read,
#: so nothing else is taken.
HIDDEN_LAYER = re.compile(r"mlp_extractor\.(policy|value)_net\.(\d+)\.(weight|bias)")
HEADS = ("action_net.weight", "action_net.bias", "value_net.weight", "value_net.bias")


def describe(policy: Any) -> dict[str, Any]:
    """The actor of an SB3 ``ActorCriticPolicy`` as plain JSON data: what
    :func:`policy_from_zip` needs beside the weights (the activation cannot be read
    from a state dict)."""
    import torch.nn as nn

    description = {
        "format": 1,
        "features_extractor": type(policy.pi_features_extractor).__name__,
        "activation": policy.activation_fn.__name__,
        "hidden": [m.out_features for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)],
        "observation_size": int(policy.features_dim),
        "actions": int(policy.action_net.out_features),
    }
    parts = _combined_parts(policy)
    if parts is not None:  # the dict encoding's parts, in the order the network reads them
        description["input_parts"] = [[name, size] for name, size in parts]
    return description


def model_bytes(model: Any, table: dict[str, Any] | None = None) -> bytes:
    """An SB3 model saved as a zip, with its :func:`describe` entry added; ``table``
    (``{"players": n, "rules": {field: value}}``) says what table it was trained for."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    buf = io.BytesIO()
    own = model.policy_class
    if isinstance(own, type) and issubclass(own, MaskableActorCriticPolicy):
        # a training-time subclass (the anchored policy) keeps its sb3-contrib base's
        # weights: saved as that class, ``MaskablePPO.load`` needs nothing of ours
        model.policy_class = next(c for c in own.__mro__ if c.__module__.startswith("sb3_contrib."))
    try:
        model.save(buf)
    finally:
        model.policy_class = own
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
                if DESCRIPTION in archive.namelist():
                    table = json_value(_unpack(archive, [DESCRIPTION])[DESCRIPTION]).get("table")
                    if table is not None:
                        players = table["players"]
                        if isinstance(players, bool) or not isinstance(players, int):
                            raise ValueError(f"its 'players' is {players!r}, not a number of seats")
                        return players, Rules(**table["rules"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as e:
        raise ValueError(f"cannot read the table model {path} was trained for: {_reason(e)}") from None
    return None


def _run_config(path: Path) -> tuple[int, Any] | None:
    """(players, Rules) of a ``train.py`` run config; None for a file that is not one."""
    from thirtyone_env.game.rules import Rules

    try:
        stored = json_value(path.read_text()) if path.is_file() else None
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("rules"), str):
        return None
    players = stored.get("players")
    if isinstance(players, bool) or not isinstance(players, int):
        return None
    try:
        return players, Rules.preset(stored["rules"])
    except ValueError:  # not a train.py run config
        return None


def preset_of(rules: Any) -> str | None:
    """The name of the preset equal to ``rules``; None for custom rules."""
    from thirtyone_env.game.rules import PRESETS, Rules

    return next((name for name in PRESETS if Rules.preset(name) == rules), None)


def rules_name(rules: Any) -> str:
    """``rules 'standard'`` for a preset's rules, ``rules 'standard:lives=2'`` for house
    rules (for messages)."""
    from thirtyone_env.game.rules import house_spec

    return f"rules {house_spec(rules)!r}"


# -- the model zoo ---------------------------------------------------------------------


class ZooModel(NamedTuple):
    """A model of the zoo and the table it was trained for."""

    name: str  #: its id, the file's stem (``ppo_standard_4p-v5``)
    path: Path
    players: int
    rules: Any  #: a :class:`~thirtyone_env.game.rules.Rules`
    base: str = ""  #: the id without its version; the model card is ``<base>.md``
    version: int = 0  #: ``-v<k>`` of the id (0: an id without one)

    def label(self) -> str:
        return f"{self.players} players {preset_of(self.rules) or 'custom rules'} ({self.name})"


def zoo(folder: str | os.PathLike | None = None) -> list[ZooModel]:
    """Every model of the zoo (``folder``, default :data:`ZOO`), by id: each ``*.zip``
    with the table its own description names (nothing else is kept, so the index
    cannot go stale). A table may have several versions of one model
    (``NAME-v1.zip``, ``NAME-v2.zip``: :func:`zoo_model` plays the newest, an id picks
    one); a zip whose description names no table, or two different models for one
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
        found = VERSIONED.fullmatch(path.stem)
        base, version = (found.group(1), int(found.group(2))) if found else (path.stem, 0)
        models.append(ZooModel(path.stem, path, *table, base=base, version=version))
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            versions_of_one = a.base == b.base and a.version != b.version
            if (a.players, a.rules) == (b.players, b.rules) and not versions_of_one:
                raise ValueError(
                    f"zoo models {a.path} and {b.path} are both for {a.label()}: keep one "
                    "(versions of one model share its name: NAME-v1, NAME-v2, ...)"
                )
    return models


def zoo_by_id(model_id: str, folder: str | os.PathLike | None = None) -> ZooModel:
    """The zoo model whose id is ``model_id`` exactly (``ppo_standard_4p-v3``: an earlier
    version too); ``ValueError`` naming the ids there are."""
    models = zoo(folder)
    for model in models:
        if model.name == model_id:
            return model
    raise ValueError(f"no zoo model {model_id!r}; the zoo's ids are {sorted(m.name for m in models)}")


def zoo_model(num_players: int, rules: Any, folder: str | os.PathLike | None = None) -> ZooModel:
    """The zoo model trained for ``num_players`` seats and ``rules``; ``ValueError``
    naming the table and what the zoo has when none is."""
    folder = Path(ZOO if folder is None else folder)
    models = zoo(folder)
    fits = [m for m in models if (m.players, m.rules) == (num_players, rules)]
    if fits:
        return max(fits, key=lambda m: m.version)  # the newest version
    newest = {(m.players, m.rules): m for m in sorted(models, key=lambda m: m.version)}  # one a table
    available = "; ".join(m.label() for m in models if newest[(m.players, m.rules)] == m) or (
        f"none (no model in {folder})"
    )
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
    extractor, _, parts = _architecture(read_model_zip(raw, tensors=()).data, None)
    description = {
        "format": 1,
        "features_extractor": extractor,
        "activation": policy.activation,
        "hidden": [w.shape[1] for w, _ in policy.layers],
        "observation_size": policy.input_size,
        "actions": policy.num_actions,
        "table": table,
    }
    if parts is not None:
        description["input_parts"] = [[name, size] for name, size in parts]
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
    which refuses anything but tensors and plain containers. Nothing is inflated past
    :data:`MAX_UNPACKED` (:func:`_unpack`, :func:`_torch_archive`), every tensor is
    checked (:func:`_check_tensors`), and ``policy.pth`` must be an MLP policy's state
    dict that agrees with the description (:func:`_check_policy_state`): ``ValueError``
    with the reason otherwise."""
    import torch

    check_torch(torch.__version__)
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise ValueError("not a zip archive")
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        names = set(archive.namelist())
        missing = [n for n in ("data", *tensors) if n not in names]
        if missing:
            raise ValueError(f"not an SB3 model: no {', '.join(missing)} in the archive")
        entries = _unpack(archive, [n for n in ("data", DESCRIPTION, *tensors) if n in names])
    data = json_value(entries["data"])
    if not isinstance(data, dict):
        raise ValueError("its data entry is not a JSON object")
    description = json_value(entries[DESCRIPTION]) if DESCRIPTION in entries else None
    states = {name: _load_tensors(entries[name], name) for name in tensors}
    if "policy.pth" in states:
        _check_policy_state(states["policy.pth"], description)
    return ModelZip(data, description, states)


def _unpack(archive: zipfile.ZipFile, names: Iterable[str], whole: str | None = None) -> dict[str, bytes]:
    """The named entries of ``archive``, unpacked to at most :data:`MAX_UNPACKED` bytes
    in all; ``ValueError`` naming what is too big (``whole``: what the archive is to the
    reader, else the entry) otherwise. Refused first on the sizes the headers declare
    (every entry's, read or not), then while inflating, a chunk at a time
    (:data:`_CHUNK`), stopping past the bound: a header that lies gets no further."""
    infos = archive.infolist()
    if sum(info.file_size for info in infos) > MAX_UNPACKED:
        biggest = max(infos, key=lambda info: info.file_size)
        raise ValueError(_too_big(whole or (biggest.filename if biggest.file_size > MAX_UNPACKED else None)))
    entries: dict[str, bytes] = {}
    left = MAX_UNPACKED
    for name in names:
        entries[name] = _inflate(archive, name, left, whole or (name if left == MAX_UNPACKED else None))
        left -= len(entries[name])
    return entries


def _inflate(archive: zipfile.ZipFile, name: str, limit: int, what: str | None) -> bytes:
    """An entry's bytes, inflated a chunk at a time: ``ValueError`` once past ``limit``
    (naming ``what``, see :func:`_too_big`), or where the entry is damaged."""
    chunks, size = [], 0
    try:
        with archive.open(name) as entry:
            while size <= limit and (chunk := entry.read(_CHUNK)):
                size += len(chunk)
                chunks.append(chunk)
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as e:
        raise ValueError(f"its {what or name} is damaged: {e}") from None
    if size > limit:
        raise ValueError(_too_big(what))
    return b"".join(chunks)


def _too_big(what: str | None) -> str:
    """The refusal of a file that unpacks past :data:`MAX_UNPACKED`: ``what`` (an
    entry) alone, or its entries together (None)."""
    subject = f"its {what} unpacks" if what else "its entries unpack"
    return f"{subject} to more than {MAX_UNPACKED / (1 << 20):g} MiB: not a model"


def _load_tensors(raw: bytes, name: str) -> Any:
    """What torch's weights-only loader reads from the ``.pth`` entry ``name``, handed
    only the records :func:`_torch_archive` measured, each tensor then checked
    (:func:`_check_tensors`)."""
    import torch

    archive = _torch_archive(raw, name)
    try:
        state = torch.load(io.BytesIO(archive), map_location="cpu", weights_only=True)
    except Exception as e:  # UnpicklingError for anything but plain tensors
        raise ValueError(f"{name} holds more than tensors, refused: {_torch_refusal(e)}") from None
    _check_tensors(state, name)
    return state


def _torch_archive(raw: bytes, name: str) -> bytes:
    """The ``.pth`` entry ``name`` (torch's zip format: records ``<archive>/data.pkl``,
    ``<archive>/data/<k>``, ...) written anew, uncompressed, from its records unpacked
    within :data:`MAX_UNPACKED` (:func:`_unpack`): torch's reader believes the sizes
    the headers declare, so it reads only records read and measured here."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise ValueError(f"its {name} is not in torch's zip format: not a model") from None
    with archive:
        records = _unpack(archive, archive.namelist(), whole=name)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as repacked:
        for record, data in records.items():
            repacked.writestr(record, data)
    return out.getvalue()


def _torch_refusal(e: Exception) -> str:
    """Why torch's weights-only loader refused a file, on one line (its message is
    paragraphs of advice, some of it to load the file unsafely)."""
    text = str(e)
    m = re.search(r"WeightsUnpickler error: (.*?)(?: Please use|\n|$)", text)
    if m:
        return m.group(1)
    # newer torch: the reason is a paragraph of its own among the advice, never passed on
    advice = ("weights_only", "Weights only load failed", "Check the documentation", "torch.load")
    reasons = [
        line.strip() for line in text.splitlines() if line.strip() and not any(a in line for a in advice)
    ]
    return reasons[0][:200] if reasons else "it holds objects other than tensors"


def _check_tensors(state: Any, name: str) -> None:
    """Refuse (``ValueError`` naming the tensor) what no weights file holds: a tensor
    that is not dense, weights that are not float32 or float64, a tensor viewing more
    values than its storage holds (a broadcast that would inflate), more than
    :data:`MAX_UNPACKED` of values in all, or weights that are not finite."""
    import torch

    total = 0
    for key, tensor in _tensors(state):
        where = f"its {name}'s {key}"
        if tensor.layout != torch.strided:
            raise ValueError(f"{where} is not a dense tensor: not a model")
        _check_dtype(str(tensor.dtype).removeprefix("torch."), where)
        size = tensor.numel() * tensor.element_size()
        if size > tensor.untyped_storage().nbytes():
            raise ValueError(f"{where} views more values than it stores: not a model")
        total += size
        if total > MAX_UNPACKED:
            raise ValueError(_too_big(name))
        _check_finite(tensor.detach().numpy(), where)


def _tensors(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Every tensor in what torch read (dicts, lists and tuples of them), with its
    place (``state.0.exp_avg``)."""
    import torch

    if isinstance(value, torch.Tensor):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _tensors(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _tensors(v, f"{key}.{i}" if key else str(i))


def _check_dtype(dtype: str, where: str) -> None:
    """Refuse weights (``where`` says which) of a dtype not in :data:`REAL_FLOATS`."""
    if dtype not in REAL_FLOATS:
        raise ValueError(f"{where} is {dtype}: weights must be {' or '.join(REAL_FLOATS)}")


#: The largest weight a model may hold: no trained network comes near it, and larger
#: ones (finite in float64) overflow the float32 arithmetic the players run on into NaN.
MAX_WEIGHT = 1e6


def _check_finite(values: np.ndarray, where: str) -> None:
    """Refuse weights (``where`` says which) holding NaN, infinity or values beyond
    :data:`MAX_WEIGHT`."""
    if not np.isfinite(values).all():
        raise ValueError(f"{where} holds NaN or infinite values: not a model")
    if values.size and float(np.abs(values).max()) > MAX_WEIGHT:
        raise ValueError(f"{where} holds values beyond {MAX_WEIGHT:g}: not a trained model")


def _check_policy_state(state: Any, description: Any) -> None:
    """Refuse a ``policy.pth`` that is not an SB3 ``MlpPolicy``'s state dict: a tensor
    such a policy does not hold (:data:`HIDDEN_LAYER`, :data:`HEADS`), layers that do
    not chain into their heads (:func:`_check_shapes`), an actor and a critic taking
    different observations, a critic giving more than one value, or weights that
    disagree with the description (observation size, hidden layers, actions)."""
    import torch

    if not isinstance(state, dict):
        raise ValueError("policy.pth is not a state dict")
    for key, value in state.items():
        if not (isinstance(key, str) and (HIDDEN_LAYER.fullmatch(key) or key in HEADS)):
            raise ValueError(f"its policy.pth holds {key!r}, not a tensor of an MLP policy: not a model")
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"its policy.pth's {key} is not a tensor: not a model")
    actor, critic = _network(state, "policy"), _network(state, "value")
    _check_shapes(*actor)
    _check_shapes(*critic, side="value", head_name="value head")
    inputs = [int((layers[0][0] if layers else head[0]).shape[1]) for layers, head in (actor, critic)]
    if inputs[0] != inputs[1]:
        raise ValueError(
            f"its actor takes {inputs[0]} observation values, its critic {inputs[1]}: not a model"
        )
    if critic[1][0].shape[0] != 1:
        raise ValueError(f"its value head gives {critic[1][0].shape[0]} values, not one: not a model")
    if isinstance(description, dict):
        weights = {
            "observation_size": inputs[0],
            "hidden": [int(w.shape[0]) for w, _ in actor[0]],
            "actions": int(actor[1][0].shape[0]),
        }
        for key, value in weights.items():
            if description.get(key) != value:
                raise ValueError(
                    f"its {DESCRIPTION} says {key} {description.get(key)!r}, its weights {value!r}"
                )


def _network(state: dict[str, Any], side: str) -> tuple[list[tuple[Any, Any]], tuple[Any, Any]]:
    """One side (``policy``: the actor, ``value``: the critic) of an MLP policy's state
    dict: its hidden layers (weight, bias) in order and its head; None where missing."""
    found: dict[int, dict[str, Any]] = {}
    for key, tensor in state.items():
        if (m := HIDDEN_LAYER.fullmatch(key)) and m.group(1) == side:
            found.setdefault(int(m.group(2)), {})[m.group(3)] = tensor
    layers = [(found[i].get("weight"), found[i].get("bias")) for i in sorted(found)]
    head = "action_net" if side == "policy" else "value_net"
    return layers, (state.get(f"{head}.weight"), state.get(f"{head}.bias"))


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz``, unpacked within :data:`MAX_UNPACKED` (:func:`_unpack`),
    each ``.npy`` refused where its header declares more data than it holds (numpy
    allocates what the header declares before reading), read with ``allow_pickle=False``."""
    with zipfile.ZipFile(path) as archive:
        entries = _unpack(archive, archive.namelist())
    arrays = {}
    for name, raw in entries.items():
        if not name.endswith(".npy"):
            raise ValueError(f"its {name} is not an array (.npy): not a model")
        _check_npy_size(raw, name)
        arrays[name.removesuffix(".npy")] = np.load(io.BytesIO(raw), allow_pickle=False)
    return arrays


def _check_npy_size(raw: bytes, name: str) -> None:
    """Refuse a ``.npy`` whose header declares more bytes of data than follow it."""
    fp = io.BytesIO(raw)
    version = np.lib.format.read_magic(fp)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"its {name} is a .npy of version {version}, not one a snapshot is saved in")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(fp)
    declared, held = math.prod(shape) * dtype.itemsize, len(raw) - fp.tell()
    if declared > held:
        raise ValueError(
            f"its {name} declares {declared:,} bytes of {dtype.name} and holds {held:,}: not a model"
        )


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
    data, description, tensors = read_model_zip(raw)  # checked: names, shapes, values
    extractor, activation, parts = _architecture(data, description)
    layers, head = _network(tensors["policy.pth"], "policy")
    layers = [(_array(w), _array(b)) for w, b in layers]
    head = (_array(head[0]), _array(head[1]))
    if parts is not None:
        layers, head = _flat_network(layers, head, parts, "the model")
    return NumpyPolicy(layers, head, activation)


#: One part of the text SB3 writes of a dict space: ``'hand': Box(0.0, 1.0, (52,), float32)``.
_BOX_PART = re.compile(r"'(\w+)': Box\([^()]*\((\d+),\)[^()]*\)")


def _architecture(data: dict[str, Any], description: Any) -> tuple[str, str, list[tuple[str, int]] | None]:
    """The features extractor and activation names, and for a network on the dict
    encoding the parts it reads in order (None on the flat encoding): from the
    description when there is one, else from the text SB3 writes beside its pickles
    (an MlpPolicy's default activation is Tanh; a dict space's text lists its parts).
    ``ValueError`` for an extractor no numpy player plays."""
    if description is not None:
        if not isinstance(description, dict) or description.get("format") != 1:
            raise ValueError(f"{DESCRIPTION} is not a description this version reads")
        extractor, activation = str(description.get("features_extractor")), str(description.get("activation"))
        parts = description.get("input_parts") if extractor == "CombinedExtractor" else None
        if extractor == "CombinedExtractor" and not (
            isinstance(parts, list)
            and parts
            and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is int
                for p in parts
            )
        ):
            raise ValueError(
                f"{DESCRIPTION} names no input_parts [[name, size], ...] for its dict observation"
            )
    else:
        space = data.get("observation_space")
        space_type = space.get(":type:", "") if isinstance(space, dict) else ""
        extractor = f"an extractor for {space_type or 'an unknown space'}"
        parts = None
        if space_type.endswith(".Box'>"):
            extractor = "FlattenExtractor"
        elif space_type.endswith(".Dict'>"):
            extractor = "CombinedExtractor"
            text = space.get("spaces")
            parts = [
                [m.group(1), int(m.group(2))]
                for m in _BOX_PART.finditer(text if isinstance(text, str) else "")
            ]
            if not parts or len(parts) != str(text).count("':"):
                raise ValueError("its data's text of the dict observation space does not list flat box parts")
        kwargs = data.get("policy_kwargs")
        kwargs = kwargs if isinstance(kwargs, dict) else {}
        if "features_extractor_class" in kwargs:
            extractor = _class_name(kwargs["features_extractor_class"])
        activation = _class_name(kwargs["activation_fn"]) if "activation_fn" in kwargs else "Tanh"
    if extractor not in ("FlattenExtractor", "CombinedExtractor"):
        raise ValueError(
            "only policies on the flat or the dict encoding (MlpPolicy, MultiInputPolicy) can be played; "
            f"this one uses {extractor}"
        )
    return extractor, activation, None if parts is None else [(str(n), int(k)) for n, k in parts]


def _class_name(text: Any) -> str:
    """``Tanh`` from SB3's text of a class, ``"<class 'torch.nn.modules.activation.Tanh'>"``."""
    m = re.fullmatch(r"<class '(?:[\w.]+\.)?(\w+)'>", str(text))
    if not m:
        raise ValueError(f"unreadable class name {text!r} in the model's data")
    return m.group(1)


def _array(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def _check_shapes(
    layers: list[tuple[Any, Any]], head: tuple[Any, Any], side: str = "policy", head_name: str = "action head"
) -> None:
    """Raise unless the layers chain into the head, each a 2-d weight ``(out, in)`` and
    a 1-d bias (numpy arrays or tensors); ``side`` and ``head_name`` name them."""
    width = None
    for i, (w, b) in enumerate([*layers, head]):
        name = f"its {head_name}" if i == len(layers) else f"its {side} layer {i}"
        if w is None or b is None or w.ndim != 2 or tuple(b.shape) != (w.shape[0],):
            raise ValueError(f"{name} is not a weight matrix and a bias: not a model")
        if width is not None and w.shape[1] != width:
            raise ValueError(f"{name} takes {w.shape[1]} inputs, the layer before gives {width}: not a model")
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
        self._set_observation(num_players, rules, self.name)

    def _set_observation(self, num_players: int, rules: Any, name: str) -> None:
        """The observation this network takes at this table (:func:`observation_kind`),
        and the size an env without the opponent history would give it instead."""
        from thirtyone_env.game.encoding import ObsLayout
        from thirtyone_env.game.rules import Rules

        self.obs_encoding = observation_kind(self.policy, num_players, rules, name)
        self._plain_size = ObsLayout(num_players, Rules.resolve(rules)).size

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        self._check_history(observation)
        return masked_action(self.policy, observation, action_mask, self.deterministic, self.rng, self.name)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row of ``observations`` ``(B, input_size)`` under ``masks``
        ``(B, num_actions)``; the inputs are not kept."""
        self._check_history(observations)
        return masked_actions(self.policy, observations, masks, self.deterministic, self.rng, self.name)

    def _check_history(self, observation: Any) -> None:
        """A model that reads the opponent history, given an observation without it:
        ``ValueError`` saying how to get it (tables and the envs' opponent seats give
        each player the observation it asks for; one's own loop needs the env's flag)."""
        size = np.shape(observation)[-1] if np.ndim(observation) else None
        if self.obs_encoding == "flat+history" and size == getattr(self, "_plain_size", None):
            raise ValueError(
                f"{self.name} reads the opponent history ({self.policy.input_size} observation values), "
                f"got {size}: make the env with opponent_history=True "
                '(gym.make("ThirtyOne-v1", opponent_history=True)); as an env\'s opponent it gets it by itself'
            )


class PPOPlayer(PolicyPlayer):
    """A trained MaskablePPO policy as a player (flat observations).

    Args:
        path: an SB3 ``.zip`` from ``train.py`` or a snapshot ``.npz``, played only at
            the table it was trained for; ``None`` (the default): the zoo's model for
            the table, picked when :meth:`check_table` names it (a table the zoo has no
            model for is refused, naming what it has).
        deterministic: play the most likely legal action; else sample from the
            masked action distribution with the generator handed to ``reset``.
        model: a zoo id (``ppo_standard_4p-v3``): exactly that model, an earlier
            version too (``None``: by ``path``, or the zoo's newest for the table).
    """

    #: the option naming a file (it travels with the spec to other machines, :mod:`agents.portable`)
    FILE_OPTIONS = ("path",)

    def __init__(self, path: str | None = None, deterministic: bool = True, model: str | None = None) -> None:
        self.check_options(path, deterministic, model)
        if model is not None:
            path = str(zoo_by_id(model).path)
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
    def check_options(path: str | None = None, deterministic: bool = True, model: str | None = None) -> None:
        """What :func:`agents.check_spec` checks without reading the model: that the
        file is there, or that the zoo has the model id (the zoo's newest model for the
        table is picked at the table when neither is given)."""
        if path is not None and model is not None:
            raise ValueError("give the model by path or by zoo id (model=), not both")
        if path is not None:
            check_model_path(Path(path))
        if model is not None:
            zoo_by_id(model)

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
        self._set_observation(num_players, rules, f"model {self.path}")
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
#: share of ``TIE_FLOOR + |best|`` is a near tie: it is decided again by
#: :meth:`NumpyPolicy.row_logits`, which depends on the row alone. BLAS rounds a
#: row's logits differently in batches of different sizes (the shipped agent: by up
#: to 4e-5 on logits up to 45, some 1% of this margin; a fresh network, whose logits
#: are a few thousandths, by 1e-8; ``tests/test_ppo_batch.py`` checks both), so a game
#: played alone and the same game in any batch get the same decisions. Near ties are
#: rare (none in 5,000 of the shipped agent's decisions, 1% of a fresh network's).
TIE_MARGIN = 1e-3
#: the margin's floor: small enough that a fresh network's tiny logits are not all
#: near ties (decided row by row, 50 times slower), far above its rounding
TIE_FLOOR = 0.05


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
        near = top - second <= TIE_MARGIN * (TIE_FLOOR + np.abs(top))
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
