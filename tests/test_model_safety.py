"""Model files never run code: a crafted SB3 zip whose pickles would write a marker
file plays (or is refused by name) through every reader, and the marker never appears;
player specs are checked without building a player or reading a model."""

import base64
import io
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.ppo import SHIPPED_MODEL, NumpyPolicy, load_policy, model_bytes  # noqa: E402
from thirtyone_env import ThirtyOneEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Payload:
    """Unpickled, it creates the file ``marker`` (as ``open(marker, "w")`` does)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def tiny_model(activation: str = "ReLU", encoding: str = "flat"):
    import torch.nn as nn
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    env = ActionMasker(ThirtyOneEnv(obs_encoding=encoding), lambda e: e.unwrapped.action_masks())
    return MaskablePPO(
        "MlpPolicy" if encoding == "flat" else "MultiInputPolicy",
        env,
        n_steps=64,
        batch_size=64,
        policy_kwargs={"net_arch": [16], "activation_fn": getattr(nn, activation)},
        device="cpu",
        seed=0,
    )


def sb3_bytes(model) -> bytes:
    """The zip SB3 itself writes (no ``thirtyone.json``: a model of an earlier run)."""
    buf = io.BytesIO()
    model.save(buf)
    return buf.getvalue()


def rewrite(raw: bytes, replace: dict[str, bytes]) -> bytes:
    """The zip with some entries' bytes replaced."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, replace.get(name, src.read(name)))
    return out.getvalue()


def poison_data(raw: bytes, marker: Path) -> bytes:
    """Every cloudpickled entry of the "data" JSON replaced by the payload; the text SB3
    keeps beside it stays, so the model looks and plays like the honest one."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        data = json.loads(z.read("data"))
    payload = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    poisoned = 0
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = payload
            poisoned += 1
    assert poisoned >= 7  # policy class and kwargs, spaces, schedules, buffer class
    return rewrite(raw, {"data": json.dumps(data).encode()})


def poison_tensors(raw: bytes, marker: Path, entry: str = "policy.pth") -> bytes:
    buf = io.BytesIO()
    torch.save(Payload(marker), buf)  # a full torch.load would run it
    return rewrite(raw, {entry: buf.getvalue()})


@pytest.fixture(scope="module")
def honest():
    model = tiny_model()
    return model, sb3_bytes(model)


def test_the_payload_is_real(tmp_path, honest):
    """The crafted entries do run code under a plain unpickler (what SB3's loader
    uses): the tests below would see the marker if anything unpickled them."""
    marker = tmp_path / "fired"
    with zipfile.ZipFile(io.BytesIO(poison_data(honest[1], marker))) as z:
        entry = json.loads(z.read("data"))["policy_kwargs"][":serialized:"]
    pickle.loads(base64.b64decode(entry)).close()
    assert marker.exists()


def test_a_crafted_model_plays_without_running_its_payload(tmp_path, honest):
    model, raw = honest
    marker = tmp_path / "fired"
    crafted = tmp_path / "crafted.zip"
    crafted.write_bytes(poison_data(raw, marker))
    player = agents.make("ppo", path=str(crafted))
    reference = NumpyPolicy.from_sb3(model.policy)
    assert player.policy.activation == "ReLU"
    x = np.random.default_rng(0).random(reference.input_size).astype(np.float32)
    np.testing.assert_array_equal(player.policy.logits(x), reference.logits(x))
    env = ThirtyOneEnv(
        opponents=[player, agents.make("greedy"), agents.make("greedy")], illegal_action="raise"
    )
    env.reset(seed=0)
    for _ in range(200):
        mask = env.action_masks()
        _, _, term, _, _ = env.step(int(np.flatnonzero(mask)[0]))
        if term:
            env.reset()
    assert not marker.exists()


@pytest.mark.parametrize("entry", ["policy.pth", "data"])
def test_crafted_tensors_or_a_bare_pickle_are_refused_by_name(tmp_path, honest, entry):
    marker = tmp_path / "fired"
    crafted = tmp_path / "crafted.zip"
    if entry == "policy.pth":
        crafted.write_bytes(poison_tensors(honest[1], marker))
        message = r"cannot load model .*crafted.zip: .*policy.pth holds more than tensors"
    else:  # not even JSON: a pickle where the data should be
        crafted.write_bytes(rewrite(honest[1], {"data": pickle.dumps(Payload(marker))}))
        message = r"cannot load model .*crafted.zip"
    with pytest.raises(ValueError, match=message):
        agents.from_spec(f"ppo:path={crafted}")
    assert not marker.exists()


def test_evaluate_plays_a_crafted_model_without_running_it(tmp_path, honest):
    """Crafted data entries: the model plays; crafted tensors: refused by name, exit 2."""
    marker = tmp_path / "fired"
    for name, craft, code in (("crafted.zip", poison_data, 0), ("tensors.zip", poison_tensors, 2)):
        model = tmp_path / name
        model.write_bytes(craft(honest[1], marker))
        r = subprocess.run(
            [sys.executable, str(ROOT / "evaluate.py"), "--players", f"ppo:path={model}", "greedy", "greedy",
             "greedy", "--games", "4", "--out", str(tmp_path / f"out-{name}"), "--no-progress"],
            capture_output=True, text=True, cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert r.returncode == code, r.stderr
        assert code == 0 or (name in r.stderr and "Traceback" not in r.stderr)
        assert not marker.exists()


def test_train_never_unpickles_an_opponent_or_its_checkpoint(tmp_path, honest):
    """train.py with a crafted model among its opponents (beside a player of one's own,
    by file) plays it without running it;
    --resume of a run whose checkpoint was swapped for a crafted one: its serialized
    data is never read (the run goes on), crafted tensors are refused by name."""
    marker = tmp_path / "fired"
    crafted = tmp_path / "crafted.zip"
    crafted.write_bytes(poison_data(honest[1], marker))
    mine = tmp_path / "mine.py"  # and a player of one's own, by file
    mine.write_text(
        "class First:\n    def act(self, observation, action_mask):\n        return int(action_mask.argmax())\n"
    )
    base = [sys.executable, str(ROOT / "train.py")]
    tiny = ["--total-timesteps", "128", "--n-envs", "1", "--vec-env", "dummy", "--n-steps", "64",
            "--batch-size", "64", "--n-epochs", "1", "--net-arch", "8", "--eval-every", "0",
            "--checkpoint-every", "128", "--opponents", f"random,ppo:path={crafted},{mine}:First", "--no-progress"]  # fmt: skip
    r = subprocess.run(
        [*base, "--run-name", "r", "--runs-dir", str(tmp_path), *tiny],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    ckpt = tmp_path / "r" / "checkpoints" / "ckpt_000000000128.zip"
    honest_ckpt = ckpt.read_bytes()
    ckpt.write_bytes(poison_tensors(poison_data(honest_ckpt, marker), marker, "policy.optimizer.pth"))
    resume = [*base, "--resume", str(tmp_path / "r"), "--no-progress"]
    r = subprocess.run([*resume, "--total-timesteps", "192"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "ckpt_000000000128.zip" in r.stderr and "Traceback" not in r.stderr
    assert not marker.exists()
    ckpt.write_bytes(poison_data(honest_ckpt, marker))
    r = subprocess.run([*resume, "--total-timesteps", "192"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert (tmp_path / "r" / "checkpoints" / "ckpt_000000000192.zip").exists()


def test_saved_models_describe_their_actor_in_plain_json(tmp_path, honest):
    model, raw = honest
    path = tmp_path / "m.zip"
    path.write_bytes(model_bytes(model))
    with zipfile.ZipFile(path) as z:
        description = json.loads(z.read("thirtyone.json"))
    assert description == {
        "format": 1,
        "features_extractor": "FlattenExtractor",
        "activation": "ReLU",
        "hidden": [16],
        "observation_size": model.observation_space.shape[0],
        "actions": int(model.action_space.n),
    }
    from sb3_contrib import MaskablePPO

    again = MaskablePPO.load(path, device="cpu")  # still an SB3 zip (our own file)
    assert again.policy.action_net.out_features == description["actions"]
    x = np.random.default_rng(1).random(description["observation_size"]).astype(np.float32)
    np.testing.assert_array_equal(load_policy(path).logits(x), NumpyPolicy.from_sb3(model.policy).logits(x))


def test_the_shipped_model_reads_the_same_weights_as_sb3():
    from sb3_contrib import MaskablePPO

    ours = load_policy(SHIPPED_MODEL)
    theirs = NumpyPolicy.from_sb3(MaskablePPO.load(SHIPPED_MODEL, device="cpu").policy)
    assert ours.activation == theirs.activation == "Tanh"
    for (a, b), (c, d) in zip([*ours.layers, ours.head], [*theirs.layers, theirs.head], strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_a_dict_encoding_model_is_refused_by_name(tmp_path):
    model = tiny_model("Tanh", "dict")
    for name, raw in (("old.zip", sb3_bytes(model)), ("new.zip", model_bytes(model))):
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(
            ValueError, match=rf"cannot load model .*{name}: .*only policies on the flat encoding"
        ):
            load_policy(tmp_path / name)


def test_check_spec_builds_no_player_and_reads_no_model(tmp_path):
    from agents.training.config import TrainConfig

    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a model")
    agents.check_spec(f"ppo:path={garbage}")  # exists: reading it is the player's job
    with pytest.raises(ValueError, match="cannot load model"):
        agents.from_spec(f"ppo:path={garbage}")
    with pytest.raises(ValueError, match="model file not found: .*nothere.zip"):
        agents.check_spec(f"ppo:path={tmp_path / 'nothere.zip'}")
    with pytest.raises(ValueError, match="takes true or false"):
        agents.check_spec(f"ppo:path={garbage},deterministic=maybe")
    # a player whose constructor leaves a mark: validating its spec leaves none
    marker = tmp_path / "built"
    bots = tmp_path / "marking.py"
    bots.write_text(
        "class Marking:\n"
        "    def __init__(self, knock: int = 30):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "    def act(self, observation, action_mask):\n"
        "        return 0\n"
    )
    agents.check_spec(f"{bots}:Marking:knock=29")
    TrainConfig(opponents=f"ppo:path={garbage},{bots}:Marking", imitate=f"{bots}:Marking:knock=25")
    assert not marker.exists()
    with pytest.raises(ValueError, match="unknown player 'nobody'"):
        TrainConfig(opponents=f"{bots}:Marking", eval_opponents="nobody")
    assert not marker.exists()
    agents.from_spec(f"{bots}:Marking")
    assert marker.exists()


def test_a_torch_with_an_unsafe_weights_only_loader_is_refused():
    from agents.ppo import check_torch

    check_torch(torch.__version__)  # the installed one is safe
    check_torch("2.6.0+cpu")
    for old in ("2.5.1", "1.13.0", "garbage"):
        with pytest.raises(ValueError, match=f"torch {old} cannot read model files safely"):
            check_torch(old)


def test_a_snapshot_is_written_with_the_users_umask(tmp_path):
    """Self-play snapshots are read by colleagues too: 0644 under umask 022, not mkstemp's 0600."""
    import os

    policy = load_policy(SHIPPED_MODEL)
    old = os.umask(0o022)
    try:
        policy.save(tmp_path / "snap.npz")
    finally:
        os.umask(old)
    assert (tmp_path / "snap.npz").stat().st_mode & 0o777 == 0o644
    again = NumpyPolicy.load_npz(tmp_path / "snap.npz")
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(again.layers, policy.layers, strict=True))
