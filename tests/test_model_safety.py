"""Model files never run code: a crafted SB3 zip whose pickles would write a marker
file plays (or is refused by name) through every reader, and the marker never appears;
player specs are checked without building a player or reading a model. Nor do they take
more memory than a model needs: zip bombs (a few MB that inflate to a GiB) are refused
before they are inflated, and weights of other names, shapes or dtypes, or not finite,
are refused, each with one line naming the file and the reason."""

import base64
import io
import json
import pickle
import re
import struct
import subprocess
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.ppo import MAX_UNPACKED, SHIPPED_MODEL, NumpyPolicy, load_policy, model_bytes  # noqa: E402
from thirtyone_env import ThirtyOneEnv  # noqa: E402
from thirtyone_env.game.encoding import ObsLayout  # noqa: E402
from thirtyone_env.game.rules import Rules  # noqa: E402

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


class _System:
    """A pickle that would call ``os.system`` (a module torch's loader blocks)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("entry", ["policy.pth", "system", "data"])
def test_crafted_tensors_or_a_bare_pickle_are_refused_by_name(tmp_path, honest, entry):
    marker = tmp_path / "fired"
    crafted = tmp_path / "crafted.zip"
    if entry == "policy.pth":
        crafted.write_bytes(poison_tensors(honest[1], marker))
        message = r"cannot load model .*crafted.zip: .*policy.pth holds more than tensors"
    elif entry == "system":
        import torch

        saved = io.BytesIO()
        torch.save(_System(marker), saved)  # torch's own format, its pickle calling os.system
        crafted.write_bytes(rewrite(honest[1], {"policy.pth": saved.getvalue()}))
        message = r"cannot load model .*crafted.zip: .*policy.pth"
    else:  # not even JSON: a pickle where the data should be
        crafted.write_bytes(rewrite(honest[1], {"data": pickle.dumps(Payload(marker))}))
        message = r"cannot load model .*crafted.zip"
    with pytest.raises(ValueError, match=message) as refused:
        agents.from_spec(f"ppo:path={crafted}")
    assert not marker.exists()
    assert "weights_only" not in str(refused.value)  # never torch's advice to load it unsafely
    assert "\n" not in str(refused.value)


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
    base = [sys.executable, "-m", "training.run_cli"]
    tiny = ["--total-timesteps", "128", "--n-envs", "1", "--vec-env", "dummy", "--n-steps", "64",
            "--batch-size", "64", "--n-epochs", "1", "--net-arch", "8", "--eval-every", "0",
            "--checkpoint-every", "128", "--opponents", f"random,ppo:path={crafted},{mine}:First", "--no-progress",
            "--report-games", "0"]  # fmt: skip
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
    assert r.returncode == 2 and "names a player that runs code" in r.stderr  # the folder names mine.py
    resume.append("--allow-code")  # the user's own run: they trust it
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


@pytest.mark.parametrize("path", sorted(Path(SHIPPED_MODEL).parent.glob("*.zip")), ids=lambda p: p.stem)
def test_every_shipped_model_loads_in_sb3_alone_with_the_same_weights(path):
    """``MaskablePPO.load`` (SB3's own loader, our own files) needs nothing of this
    package: each zip names sb3-contrib's policy class, and its weights are those our
    reader plays."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    model = MaskablePPO.load(path, device="cpu")
    assert type(model.policy) is MaskableActorCriticPolicy
    ours = load_policy(path)
    theirs = NumpyPolicy.from_sb3(model.policy)
    assert ours.activation == theirs.activation
    for (a, b), (c, d) in zip([*ours.layers, ours.head], [*theirs.layers, theirs.head], strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


@pytest.mark.parametrize("hidden", [[16], []])
def test_a_dict_encoding_model_plays_on_the_flat_encoding_as_sb3_plays_it(tmp_path, hidden):
    """A ``MultiInputPolicy`` reads the dict encoding's parts in the dict space's key
    order: read from SB3's own zip (its space's text), from a zip with the description,
    or from the policy in memory, it gives on the flat observation the very logits SB3
    gives on the dict one (its first layer's inputs put in the flat order)."""
    import gymnasium as gym
    import torch
    import torch.nn as nn
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    env = ActionMasker(ThirtyOneEnv(3, obs_encoding="dict"), lambda e: e.unwrapped.action_masks())
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, device="cpu", seed=0,
                        policy_kwargs={"net_arch": hidden, "activation_fn": nn.ReLU})  # fmt: skip
    assert list(model.observation_space.spaces) != list(ObsLayout(3).shapes)  # sorted: another order
    with torch.no_grad():  # random weights, away from zero: every input counts
        for param in model.policy.parameters():
            param.add_(torch.randn_like(param))
    (tmp_path / "old.zip").write_bytes(sb3_bytes(model))
    (tmp_path / "new.zip").write_bytes(model_bytes(model))
    assert "input_parts" in json.loads(zipfile.ZipFile(tmp_path / "new.zip").read("thirtyone.json"))
    played = [
        load_policy(tmp_path / "old.zip"),
        load_policy(tmp_path / "new.zip"),
        NumpyPolicy.from_sb3(model.policy),
    ]
    flat, as_dict = ThirtyOneEnv(3), gym.make("ThirtyOne-v1", num_players=3, obs_encoding="dict")
    for seed in range(5):
        x, _ = flat.reset(seed=seed)
        d, _ = as_dict.reset(seed=seed)
        with torch.no_grad():
            t, _ = model.policy.obs_to_tensor(d)
            features = model.policy.extract_features(t, model.policy.pi_features_extractor)
            sb3 = model.policy.action_net(model.policy.mlp_extractor.forward_actor(features))[0].numpy()
        for policy in played:
            np.testing.assert_allclose(policy.logits(x), sb3, rtol=1e-5, atol=1e-4)
    player = agents.from_spec(f"ppo:path={tmp_path / 'old.zip'}")
    player.check_table(3, Rules())
    assert player.obs_encoding == "flat"


def test_a_dict_model_naming_a_part_the_encoding_lacks_is_refused(tmp_path):
    model = tiny_model("Tanh", "dict")
    raw = model_bytes(model)
    description = json.loads(zipfile.ZipFile(io.BytesIO(raw)).read("thirtyone.json"))
    description["input_parts"][0][0] = "opponents_hands"
    (tmp_path / "m.zip").write_bytes(rewrite(raw, {"thirtyone.json": json.dumps(description).encode()}))
    with pytest.raises(ValueError, match=r"m.zip: .*reads a dict observation part 'opponents_hands'"):
        load_policy(tmp_path / "m.zip")
    description["input_parts"] = "all"
    (tmp_path / "m.zip").write_bytes(rewrite(raw, {"thirtyone.json": json.dumps(description).encode()}))
    with pytest.raises(ValueError, match=r"m.zip: .*names no input_parts"):
        load_policy(tmp_path / "m.zip")


def test_check_spec_builds_no_player_and_reads_no_model(tmp_path):
    from training.config import TrainConfig

    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a model")
    agents.check_spec(f"ppo:path={garbage}")  # exists: reading it is the player's job
    with pytest.raises(ValueError, match="cannot load model"):
        agents.from_spec(f"ppo:path={garbage}")
    with pytest.raises(ValueError, match="model file not found: .*nothere.zip"):
        agents.check_spec(f"ppo:path={tmp_path / 'nothere.zip'}")
    (tmp_path / "zero.zip").symlink_to("/dev/zero")  # endless: never read
    with pytest.raises(ValueError, match="zero.zip is not a regular file"):
        agents.check_spec(f"ppo:path={tmp_path / 'zero.zip'}")
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


# -- files that would take more memory than a model needs ------------------------------


class Deflated(NamedTuple):
    """A zip entry's deflate stream and what its header says it unpacks to."""

    stream: bytes
    size: int
    crc: int


MIB_OF_SPACES = b" " * (1 << 20)


@pytest.fixture(scope="module")
def gib_of_spaces() -> Deflated:
    """~1 GiB (1,023 MiB) of spaces as ~1 MB of deflate stream, made without deflating
    a GiB: one MiB deflated and flushed (so it refers to nothing before it), over and
    over."""
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = block.compress(MIB_OF_SPACES) + block.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(1023):
        crc = zlib.crc32(MIB_OF_SPACES, crc)
    return Deflated(stream * 1023, 1023 << 20, crc)


def bomb(spaces: Deflated, head: bytes = b"", tail: bytes = b"") -> Deflated:
    """``head``, the GiB of spaces and ``tail``, deflated as one stream."""
    first, last = zlib.compressobj(9, zlib.DEFLATED, -15), zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH) + spaces.stream
    crc = spaces.crc
    if head:  # the CRC runs from the first byte: count the spaces again after the head
        crc = zlib.crc32(head)
        for _ in range(spaces.size >> 20):
            crc = zlib.crc32(MIB_OF_SPACES, crc)
    return Deflated(
        stream + last.compress(tail) + last.flush(),
        len(head) + spaces.size + len(tail),
        zlib.crc32(tail, crc),
    )


def handmade_zip(entries: dict[str, bytes | Deflated], says: dict[str, int] | None = None) -> bytes:
    """A zip written byte by byte: ``bytes`` entries stored, :class:`Deflated` ones as
    they are, each header declaring the entry's size, or ``says[name]`` (a lie)."""
    out, central = bytearray(), bytearray()
    for name, entry in entries.items():
        method = 8
        if isinstance(entry, bytes):
            entry, method = Deflated(entry, len(entry), zlib.crc32(entry)), 0
        size = (says or {}).get(name, entry.size)
        fields = (method, 0, 0, entry.crc, len(entry.stream), size, len(name))
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, *fields, 0, 0, 0, 0, 0, len(out))
        central += name.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, *fields, 0) + name.encode() + entry.stream
    ends = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + ends)


def entries(raw: bytes) -> dict[str, bytes]:
    """A zip's entries by name."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return {name: z.read(name) for name in z.namelist()}


def refusal(load, path: Path) -> str:
    """The ``ValueError`` ``load(path)`` refuses the file with: one line naming the
    file, raised before Python allocated a quarter of :data:`MAX_UNPACKED` (a bomb
    inflated, or an array allocated at the size a header declares, would take GBs)."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert path.name in message and "\n" not in message, message
    assert peak < MAX_UNPACKED // 4, f"{peak:,} bytes allocated before: {message}"
    return message


@pytest.fixture
def torch_loads(monkeypatch) -> list:
    """The calls of ``torch.load`` (it still loads): a bomb must be refused before any."""
    calls, load = [], torch.load

    def counted(*args, **kwargs):
        calls.append(args)
        return load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", counted)
    return calls


@pytest.fixture(scope="module")
def described(honest) -> bytes:
    """The honest model saved with its description (what train.py writes)."""
    return model_bytes(honest[0])


def test_a_data_entry_that_inflates_to_a_gib_is_refused_before_it_is_inflated(
    tmp_path, described, gib_of_spaces, torch_loads
):
    """Spaces then ``{}`` is JSON: read whole, this model would load (with a GiB in memory)."""
    path = tmp_path / "data_bomb.zip"
    path.write_bytes(handmade_zip({**entries(described), "data": bomb(gib_of_spaces, tail=b"{}")}))
    assert path.stat().st_size < 4 << 20
    assert (
        refusal(load_policy, path)
        == f"cannot load model {path}: its data unpacks to more than 64 MiB: not a model"
    )
    assert torch_loads == []


def test_a_description_that_inflates_to_a_gib_is_refused_when_the_zoo_reads_it(
    tmp_path, described, gib_of_spaces
):
    from agents.ppo import described_table

    path = tmp_path / "description_bomb.zip"
    text = entries(described)["thirtyone.json"]
    path.write_bytes(handmade_zip({**entries(described), "thirtyone.json": bomb(gib_of_spaces, tail=text)}))
    message = refusal(described_table, path)
    assert message.endswith("its thirtyone.json unpacks to more than 64 MiB: not a model"), message


def test_a_tensor_record_that_inflates_to_a_gib_is_refused_before_torch_reads_it(
    tmp_path, described, gib_of_spaces, torch_loads
):
    """policy.pth is itself a zip (torch's format): its records are bounded too."""
    records = entries(entries(described)["policy.pth"])
    first = next(name for name in records if name.endswith("/data/0"))
    pth = handmade_zip({**records, first: gib_of_spaces})
    path = tmp_path / "tensor_bomb.zip"
    path.write_bytes(rewrite(described, {"policy.pth": pth}))
    assert path.stat().st_size < 4 << 20
    message = refusal(load_policy, path)
    assert message == f"cannot load model {path}: its policy.pth unpacks to more than 64 MiB: not a model"
    assert torch_loads == []


@pytest.mark.parametrize("where", ["data", "policy.pth"])
def test_a_header_that_lies_about_its_size_gets_no_further(
    tmp_path, described, gib_of_spaces, torch_loads, where
):
    """Headers that declare a few bytes, over a GiB of spaces: inflated no further than
    declared (a chunk at a time: zipfile's ``read()`` inflates all the stream holds
    before cutting it to the declared size), the entry is damaged (its CRC is the
    GiB's), and torch never reads it."""
    path = tmp_path / "lying.zip"
    if where == "data":
        path.write_bytes(handmade_zip({**entries(described), "data": gib_of_spaces}, says={"data": 1000}))
        damaged = "its data is damaged: Bad CRC-32 for file 'data'"
    else:
        records = entries(entries(described)["policy.pth"])
        first = next(name for name in records if name.endswith("/data/0"))
        pth = handmade_zip({**records, first: gib_of_spaces}, says={first: len(records[first])})
        path.write_bytes(rewrite(described, {"policy.pth": pth}))
        damaged = f"its policy.pth is damaged: Bad CRC-32 for file '{first}'"
    assert refusal(load_policy, path) == f"cannot load model {path}: {damaged}"
    assert torch_loads == []


def with_state(raw: bytes, change) -> bytes:
    """The model with ``change`` made to the state dict in its policy.pth."""
    state = torch.load(io.BytesIO(entries(raw)["policy.pth"]), weights_only=True)
    change(state)
    buf = io.BytesIO()
    torch.save(state, buf)
    return rewrite(raw, {"policy.pth": buf.getvalue()})


def set_to(key: str, make):
    """A change: ``state[key] = make(state.get(key))``."""

    def change(state):
        state[key] = make(state.get(key))

    return change


def every(make):
    """A change: ``make(tensor)`` for every tensor."""

    def change(state):
        state.update({key: make(value) for key, value in state.items()})

    return change


def with_nan(tensor):
    """The tensor with a NaN for its first value."""
    tensor = tensor.clone()
    tensor.view(-1)[0] = float("nan")
    return tensor


def with_inf(tensor):
    """The tensor with infinity for its last value."""
    tensor = tensor.clone()
    tensor.view(-1)[-1] = float("inf")
    return tensor


def wider(state):
    """The actor's hidden layer 32 units wide (the description says 16), chained right."""
    w = state["mlp_extractor.policy_net.0.weight"]
    state["mlp_extractor.policy_net.0.weight"] = torch.zeros(32, w.shape[1])
    state["mlp_extractor.policy_net.0.bias"] = torch.zeros(32)
    state["action_net.weight"] = torch.zeros(state["action_net.weight"].shape[0], 32)


@pytest.mark.parametrize(
    "change, reason",
    [
        (set_to("action_net.bias", with_nan), "its policy.pth's action_net.bias holds NaN or infinite values"),
        (set_to("value_net.weight", with_inf), "its policy.pth's value_net.weight holds NaN or infinite values"),
        (every(lambda t: t.half()), "its policy.pth's .* is float16: weights must be float32 or float64"),
        (every(lambda t: t.bfloat16()), "its policy.pth's .* is bfloat16: weights must be float32 or float64"),
        (set_to("action_net.weight", lambda t: t.to(torch.complex64)), "action_net.weight is complex64: weights must be"),
        (set_to("action_net.bias", lambda t: t.long()), "its policy.pth's action_net.bias is int64: weights must be"),
        (set_to("action_net.bias", lambda t: torch.zeros(1).expand(len(t))), "action_net.bias views more values than it stores"),
        (set_to("junk", lambda _: torch.zeros(3)), "its policy.pth holds 'junk', not a tensor of an MLP policy"),
        (set_to("action_net.bias", lambda t: t.tolist()), "its policy.pth's action_net.bias is not a tensor"),
        (set_to("value_net.weight", lambda t: t[:, :8]), "its value head takes 8 inputs, the layer before gives 16"),
        (set_to("value_net.weight", lambda t: t.repeat(2, 1)), "its value head is not a weight matrix and a bias"),
        (wider, r"its thirtyone.json says hidden \[16\], its weights \[32\]"),
    ],
    ids=["nan", "inf-critic", "float16", "bfloat16", "complex", "int", "broadcast", "name", "list", "shape",
         "two-values", "hidden"],
)  # fmt: skip
def test_weights_of_other_names_shapes_or_dtypes_or_not_finite_are_refused(
    tmp_path, described, change, reason
):
    path = tmp_path / "weights.zip"
    path.write_bytes(with_state(described, change))
    assert re.fullmatch(
        rf"cannot load model {re.escape(str(path))}: .*{reason}.*", refusal(load_policy, path)
    )


@pytest.fixture(scope="module")
def snapshot(honest) -> dict[str, np.ndarray]:
    """The arrays of the honest model's snapshot (what self-play pools hold)."""
    policy = NumpyPolicy.from_sb3(honest[0].policy)
    arrays = {"activation": np.array(policy.activation)}
    for i, (w, b) in enumerate(policy.layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w.T, b
    arrays["head_w"], arrays["head_b"] = policy.head[0].T, policy.head[1]
    return arrays


def npy(array: np.ndarray, shape: tuple[int, ...] | None = None) -> bytes:
    """A ``.npy`` of ``array``; with ``shape``, float32 data under a header that declares
    that shape (a lie)."""
    buf = io.BytesIO()
    if shape is None:
        np.save(buf, array, allow_pickle=False)
        return buf.getvalue()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return buf.getvalue() + array.astype("<f4").tobytes()


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"head_b": lambda a: np.full_like(a, np.nan)}, "its head_b holds NaN or infinite values"),
        ({"w0": lambda a: a.astype(np.float16)}, "its w0 is float16: weights must be float32 or float64"),
        ({"head_w": lambda a: a.astype(np.complex64)}, "its head_w is complex64: weights must be"),
        ({"b0": lambda a: a.astype(np.int64)}, "its b0 is int64: weights must be"),
        ({"junk": lambda _: np.zeros(3)}, "it holds an array 'junk' a snapshot does not have"),
        ({"b0": lambda a: a[:7]}, "its policy layer 0 is not a weight matrix and a bias"),
    ],
    ids=["nan", "float16", "complex", "int", "name", "shape"],
)
def test_snapshot_arrays_of_other_names_shapes_or_dtypes_or_not_finite_are_refused(
    tmp_path, snapshot, change, reason
):
    arrays = {**snapshot, **{key: make(snapshot.get(key)) for key, make in change.items()}}
    path = tmp_path / "snap.npz"
    np.savez(path, **arrays)
    for load in (load_policy, NumpyPolicy.load_npz):
        assert refusal(load, path).startswith(f"cannot load model {path}: {reason}")


def test_a_snapshot_that_inflates_or_declares_a_gib_is_refused_before_numpy_allocates_it(
    tmp_path, snapshot, gib_of_spaces
):
    """A ``.npy`` is allocated at the size its header declares, before its data is read."""
    arrays = {f"{key}.npy": npy(array) for key, array in snapshot.items()}
    header = npy(np.zeros(0), shape=(gib_of_spaces.size // 4,))
    bombed = tmp_path / "bomb.npz"
    bombed.write_bytes(handmade_zip({**arrays, "w0.npy": bomb(gib_of_spaces, head=header)}))
    assert (
        refusal(load_policy, bombed)
        == f"cannot load model {bombed}: its w0.npy unpacks to more than 64 MiB: not a model"
    )
    lying = tmp_path / "lying.npz"
    lying.write_bytes(handmade_zip({**arrays, "w0.npy": npy(np.zeros(16), shape=(1 << 31,))}))
    assert refusal(load_policy, lying) == (
        f"cannot load model {lying}: its w0.npy declares 8,589,934,592 bytes of float32 and holds 64: not a model"
    )


def test_checkpoints_and_warm_starts_get_the_same_checks(tmp_path, described):
    """Every reader of a model zip: a checkpoint (with its optimizer state) and the
    model a run starts from."""
    from training.config import TrainConfig
    from training.models import load_checkpoint, read_initial_weights

    nan = tmp_path / "nan.zip"
    nan.write_bytes(with_state(described, set_to("action_net.bias", with_nan)))
    with pytest.raises(ValueError, match=r"cannot load checkpoint .*nan\.zip: .*action_net\.bias holds NaN"):
        load_checkpoint(nan, None, TrainConfig())
    with pytest.raises(ValueError, match=r"init_from .*nan\.zip: .*action_net\.bias holds NaN"):
        read_initial_weights(TrainConfig(init_from=str(nan), net_arch="16", activation="relu"))
    adam = {
        "state": {0: {"step": torch.tensor(1.0), "exp_avg": torch.full((3,), float("nan"))}},
        "param_groups": [],
    }
    buf = io.BytesIO()
    torch.save(adam, buf)
    optimizer = tmp_path / "optimizer.zip"
    optimizer.write_bytes(rewrite(described, {"policy.optimizer.pth": buf.getvalue()}))
    with pytest.raises(
        ValueError, match=r"optimizer\.zip: .*policy\.optimizer\.pth's state\.0\.exp_avg holds NaN"
    ):
        load_checkpoint(optimizer, None, TrainConfig())


@pytest.mark.parametrize("players", ["Infinity", "NaN", '"4"', "4.0", "true"])
def test_a_description_whose_table_size_is_not_a_count_is_named(tmp_path, described, players):
    from agents.ppo import described_table

    description = json.loads(entries(described)["thirtyone.json"])
    description["table"] = {"players": "SEATS", "rules": {}}
    crafted = json.dumps(description).replace('"SEATS"', players)
    path = tmp_path / "players.zip"
    path.write_bytes(rewrite(described, {"thirtyone.json": crafted.encode()}))
    with pytest.raises(
        ValueError, match=r"^cannot read the table model .* its 'players' is .*not a number of seats$"
    ):
        described_table(path)
