"""thirtyone_env: the card game Thirty-One (Scat, Blitz, Knock) for reinforcement learning.

``import thirtyone_env`` registers ``ThirtyOne-v0`` with Gymnasium.
"""

from gymnasium.envs.registration import register, registry

from thirtyone_env.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, NUM_ACTIONS, STAND, TAKE_DISCARD
from thirtyone_env.cards import format_card, hand_value, parse_card
from thirtyone_env.engine import IllegalActionError, RoundResult
from thirtyone_env.env import ThirtyOneEnv
from thirtyone_env.policies import GreedyPolicy, Policy, RandomPolicy
from thirtyone_env.rules import Rules

__all__ = [
    "DISCARD_BASE",
    "DRAW_STOCK",
    "KNOCK",
    "NUM_ACTIONS",
    "STAND",
    "TAKE_DISCARD",
    "IllegalActionError",
    "Policy",
    "RandomPolicy",
    "RoundResult",
    "GreedyPolicy",
    "Rules",
    "ThirtyOneEnv",
    "format_card",
    "hand_value",
    "parse_card",
]

if "ThirtyOne-v0" not in registry:
    register(id="ThirtyOne-v0", entry_point="thirtyone_env.env:ThirtyOneEnv")
