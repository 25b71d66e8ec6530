"""The learner's model: built from the run's config, saved as an SB3 zip with its actor
described in plain JSON, and loaded from a checkpoint without unpickling anything
(see :mod:`agents.ppo`). torch and SB3 are imported where used: the configuration
and the command line work without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.files import atomic_write
from training.config import TrainConfig

#: torch device types a run can train on ('auto' too: SB3 picks CUDA where there is one)
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")


def check_device(device: str) -> None:
    """``ValueError`` unless torch parses ``device`` and it works here: SB3 itself
    moves a run to the CPU without a word when CUDA is missing."""
    import torch

    if device == "auto":
        return
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError) as e:
        raise ValueError(f"device={device!r} is not a torch device ({e})") from None
    if parsed.type not in DEVICE_TYPES:
        raise ValueError(f"device={device!r}: a run trains on {', '.join(DEVICE_TYPES)} or auto")
    try:
        torch.zeros(1, device=parsed)
    except Exception as e:  # RuntimeError, AssertionError ("not compiled with CUDA"), ...
        raise ValueError(f"device={device!r} is not available here ({type(e).__name__}: {e})") from None


def build_model(config: TrainConfig, env: Any) -> Any:
    """A fresh MaskablePPO learner of the run's architecture and hyper-parameters."""
    import torch.nn as nn
    from sb3_contrib import MaskablePPO

    sizes = config.hidden_sizes
    policy: Any = "MlpPolicy" if config.obs_encoding == "flat" else "MultiInputPolicy"
    if config.kl_coef > 0:  # PPO with a KL penalty toward the warm start (training.anchor)
        from training.anchor import AnchoredPolicy

        policy = AnchoredPolicy
    return MaskablePPO(
        policy,
        env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        policy_kwargs={
            "net_arch": {"pi": sizes, "vf": sizes},
            "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[config.activation],
        },
        seed=config.seeds.learner,
        device=config.device,
        verbose=0,
    )


def read_initial_weights(config: TrainConfig) -> dict[str, Any]:
    """The tensors of ``--init-from``'s model, read weights-only, after checking that
    its description (where it has one) names the run's table, rules and network:
    ``ValueError`` naming what differs, before the run folder is made."""
    from agents.ppo import read_model_zip, table_of

    path = Path(config.init_from)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"init_from: cannot read {path}: {e.strerror or e}") from None
    try:
        saved = read_model_zip(raw)
    except ValueError as e:
        raise ValueError(f"init_from {path}: {e}") from None
    about = saved.description if isinstance(saved.description, dict) else {}
    wanted = {
        "table": table_of(config.players, Rules.resolve(config.rules)),
        "hidden": config.hidden_sizes,
        "activation": {"tanh": "Tanh", "relu": "ReLU"}[config.activation],
    }
    for key, value in wanted.items():
        if key in about and about[key] != value:
            theirs, ours = differing(about[key], value)
            raise ValueError(
                f"init_from {path}: the model's {key} is {theirs}, this run's {ours} "
                "(give the run the model's table, rules and net_arch)"
            )
    return saved.tensors["policy.pth"]


def differing(theirs: Any, ours: Any, prefix: str = "") -> tuple[str, str]:
    """The fields in which two descriptions differ, each side as ``a=1, b.c='x'``: a
    table's rules hold some twenty fields, and a refusal names the few that differ.
    Values that are not both dicts are shown whole."""
    if not (isinstance(theirs, dict) and isinstance(ours, dict)):
        return repr(theirs), repr(ours)
    left, right = [], []
    for key in sorted(set(theirs) | set(ours), key=str):
        a, b = theirs.get(key, "(none)"), ours.get(key, "(none)")
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            sub = differing(a, b, f"{prefix}{key}.")
            left.append(sub[0])
            right.append(sub[1])
        else:
            left.append(f"{prefix}{key}={a!r}")
            right.append(f"{prefix}{key}={b!r}")
    return ", ".join(left), ", ".join(right)


def load_initial_weights(model: Any, state: dict[str, Any], path: str, widen_from: int = 0) -> None:
    """Start ``model``'s policy and value networks from ``state`` (see
    :func:`read_initial_weights`): every entry of the run's networks must be there with
    the same shape (``ValueError`` naming the first that is not). ``widen_from``: the
    observation width of a model trained without the ``opponent_history`` part, which
    this run adds last: its input layers then take the new inputs with zero weights,
    so the run starts playing exactly as the model did."""
    import torch

    own = model.policy.state_dict()
    loaded = {}
    for key, tensor in own.items():
        if key not in state:
            raise ValueError(f"init_from {path}: the model has no {key} (a network of another kind)")
        given = state[key]
        if (
            widen_from
            and given.ndim == 2
            and tensor.ndim == 2
            and given.shape[0] == tensor.shape[0]
            and given.shape[1] == widen_from < tensor.shape[1]
        ):
            given = torch.cat([given, given.new_zeros(given.shape[0], tensor.shape[1] - widen_from)], dim=1)
        if tuple(given.shape) != tuple(tensor.shape):
            raise ValueError(
                f"init_from {path}: {key} is {tuple(state[key].shape)}, this run's is {tuple(tensor.shape)}"
            )
        loaded[key] = given
    model.policy.load_state_dict(loaded, strict=True)


def init_width(config: TrainConfig) -> int:
    """The observation width an ``--init-from`` model may have without the run's
    ``opponent_history`` part (0: the run has none, the widths must agree)."""
    if not config.opponent_history:
        return 0
    from thirtyone_env.game.encoding import ObsLayout

    return ObsLayout(config.players, Rules.resolve(config.rules)).size


def save_model(model: Any, path: Path, config: TrainConfig | None = None) -> None:
    """An SB3 zip with the actor described in plain JSON (``thirtyone.json``), so a
    player reads it without unpickling anything (:mod:`agents.ppo`); with ``config``,
    the description names the table it was trained for (seats and rules)."""
    from agents.ppo import model_bytes, table_of

    table = table_of(config.players, Rules.resolve(config.rules)) if config is not None else None
    atomic_write(path, model_bytes(model, table))


def load_checkpoint(path: Path, env: Any, config: TrainConfig) -> Any:
    """The run's model from a checkpoint, with nothing in the file unpickled: SB3's
    loader gets a copy of the zip made of its plain "data" JSON and the tensors torch
    read weights-only, and every serialized entry of that data (spaces, schedules,
    policy class and kwargs, buffers) is replaced, through ``custom_objects``, by what
    this run's config builds."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import plain_zip, read_model_zip

    try:
        saved = read_model_zip(path.read_bytes(), ("policy.pth", "policy.optimizer.pth"))
        fresh = build_model(config, env)
        serialized = [k for k, v in saved.data.items() if isinstance(v, dict) and ":serialized:" in v]
        foreign = [k for k in serialized if k not in vars(fresh)]
        if foreign:
            raise ValueError(f"serialized entries this run does not have: {foreign}")
        custom = {k: getattr(fresh, k) for k in serialized}
        return MaskablePPO.load(plain_zip(saved), env=env, device=config.device, custom_objects=custom)
    except Exception as e:  # a truncated zip, a torch error on damaged tensors, ...
        raise ValueError(f"cannot load checkpoint {path}: {type(e).__name__}: {e}") from None
