"""MaskablePPO trains on the env, unwrapped and through ActionMasker, never illegally."""

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

from thirtyone_env import ThirtyOneEnv


class CountIllegal(BaseCallback):
    def __init__(self):
        super().__init__()
        self.illegal = 0
        self.steps = 0

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            self.steps += 1
            self.illegal += "illegal_action" in info
        return True


def test_maskable_ppo_smoke_run_has_no_illegal_action():
    env = make_vec_env(ThirtyOneEnv, n_envs=2, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=128, n_epochs=1, seed=0, device="cpu")
    cb = CountIllegal()
    model.learn(2000, callback=cb)
    assert cb.steps >= 2000
    assert cb.illegal == 0


def test_maskable_ppo_dict_encoding_through_action_masker():
    env = ActionMasker(
        ThirtyOneEnv(obs_encoding="dict", episode="round"), lambda e: e.unwrapped.action_masks()
    )
    model = MaskablePPO("MultiInputPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    obs, info = env.reset(seed=1)
    for _ in range(200):
        mask = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, r, term, trunc, info = env.step(int(action))
        assert "illegal_action" not in info
        if term or trunc:
            obs, info = env.reset()


@pytest.mark.parametrize("deterministic", [True, False])
def test_trained_model_as_opponent(deterministic):
    """An SB3 model can sit at the table through the act(observation, mask) protocol."""
    model = MaskablePPO(
        "MlpPolicy", ThirtyOneEnv(), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )

    class ModelPolicy:
        def act(self, obs, mask):
            a, _ = model.predict(obs, action_masks=mask.astype(bool), deterministic=deterministic)
            return int(a)

    env = ThirtyOneEnv(opponents=ModelPolicy(), illegal_action="raise")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):
        obs, r, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            obs, info = env.reset()
