"""The env ids registered with Gymnasium, and what each version changed.

As in Gymnasium, an id's behaviour never changes: a change that alters what an episode
returns gets a new version, and the older id stays registered as it was. Corrections
of the game's rules to the seed's apply to every id (the rules are not a version's to
keep wrong): one's own discard is taken back only with two players left after a knock,
and tables seat two to seven. So does the players' own generator, which changes the
games of opponents that sample (not of those that decide alone) under a seed, and the
cost of an illegal action (:func:`~thirtyone_env.game.rewards.forfeit_reward`, the worst
the rest of the episode could bring, where -1 had paid better than playing: a defect
that taught learners without masks to forfeit, not a behaviour to keep).

- ``ThirtyOne-v0``: :class:`~thirtyone_env.envs.env.ThirtyOneEnv` as constructed, with
  ``reward="lives"`` by default. In the lives games every lost game returns the same
  total (the starting lives, or one more for a knocker's double charge: -3 or -4 at
  ``cut_throat``), however long the seat stayed in, so an evaluation callback's mean
  return or a learning curve of returns stays flat until the agent starts to win.
- ``ThirtyOne-v1``: the same env with a reward whose return varies with play by default:
  ``"rate"`` in the lives games (a game returns ``rounds played / num_players - lives
  lost``, the linear form of the lives lost a round that tournaments report), and
  ``"lives"`` where a round already settles points or chips (``no_elimination``,
  ``banking``). An explicit ``reward=`` is taken as given, as in v0.
"""

from __future__ import annotations

from typing import Any

from thirtyone_env.envs.env_options import v1_reward

#: every registered id, oldest first
ENV_IDS = ("ThirtyOne-v0", "ThirtyOne-v1")

__all__ = ["ENV_IDS", "make_v1", "make_vector_v0", "make_vector_v1", "v1_reward"]


def make_v1(**kwargs: Any) -> Any:
    """``gym.make("ThirtyOne-v1", ...)``: the env with v1's default reward."""
    from thirtyone_env.envs.env import ThirtyOneEnv

    kwargs.setdefault("reward", v1_reward(kwargs.get("rules")))
    return ThirtyOneEnv(**kwargs)


def make_vector_v0(num_envs: int, **kwargs: Any) -> Any:
    """``gym.make_vec("ThirtyOne-v0", num_envs, vectorization_mode="vector_entry_point")``
    (make_vec's default here): the batched env, which takes the single env's options
    but those it has no use for (:func:`_batched`)."""
    return _batched(num_envs, kwargs)


def make_vector_v1(num_envs: int, **kwargs: Any) -> Any:
    """``gym.make_vec("ThirtyOne-v1", num_envs, vectorization_mode="vector_entry_point")``."""
    kwargs.setdefault("reward", v1_reward(kwargs.get("rules")))
    return _batched(num_envs, kwargs)


def _batched(num_envs: int, kwargs: dict[str, Any]) -> Any:
    """The batched env, or a ``TypeError`` naming the single env's options it does not
    take (an observation encoding, a render mode, ...) and the modes that do."""
    import inspect

    from thirtyone_env.envs.vector import ThirtyOneVectorEnv

    unknown = sorted(set(kwargs) - set(inspect.signature(ThirtyOneVectorEnv).parameters))
    if unknown:
        raise TypeError(
            f"the batched vector env (make_vec's default vectorization_mode='vector_entry_point') "
            f"takes no {', '.join(unknown)}: give vectorization_mode='sync' or 'async' for a vector "
            "of single envs, which take every option"
        )
    return ThirtyOneVectorEnv(num_envs, **kwargs)
