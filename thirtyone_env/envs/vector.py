"""Batched Thirty-One: N games stepped at once, for training and fast evaluation.

:class:`ThirtyOneVectorEnv` is Gymnasium's ``VectorEnv`` (autoreset in the same step:
a finished game's last observation is in ``info["final_obs"]``, its info in
``info["final_info"]``) and :func:`sb3_vec_env` wraps it as a Stable-Baselines3
``VecEnv`` (``env_method("action_masks")`` feeds ``MaskablePPO``; finished games put
``terminal_observation`` in their info).

Game ``i`` is the same game as a :class:`~thirtyone_env.envs.env.ThirtyOneEnv` reset with
seed ``seed + i``: same deals, same opponents' moves, same observations, masks and
rewards (the stock game with lives; :mod:`thirtyone_env.envs.batch_kernels` holds the
compiled engine and :mod:`thirtyone_env.envs.kernel_rules` declares, field by field, which
rules it plays). ``"greedy"`` (or a :class:`~thirtyone_env.game.policies.GreedyPolicy`, any
``knock_at``) and ``"random"`` (or a :class:`~thirtyone_env.game.policies.RandomPolicy`)
play inside the kernels; every other player sits at an *external seat*
(:mod:`thirtyone_env.envs.kernel_games`): the games waiting on one player object are
asked together, in one ``act_batch(observations, masks)`` call where the player has one
(the expert, Blitz31, MaskablePPO models), else with ``act`` game by game. Each game
draws (deals, random moves, its own players' draws) from its own NumPy generator,
seeded as the single env's (:mod:`thirtyone_env.envs.batch_rng`). A seat that stands for
another player each episode (a league seat) names it with ``delegate()``, so its games
are asked with the other games of that player. The table and scored variants fall back
to one ``ThirtyOneEnv`` per game, stepped in a loop (same API, same results, no speed-up).

Actions: one per game, each held to the single env's contract
(:func:`~thirtyone_env.game.actions.check_action_id`): an int id; a float (``2.7`` or
``2.0``), a bool or a string is refused with
:class:`~thirtyone_env.game.engine.IllegalActionError` naming the game, never cast.

Memory: 1.6 KB of game state per game, plus its observation (650 float32 features at
4 seats: 2.6 KB) and mask: 4.3 KB a game; external seats add their observation
buffers and the round's discard log (about 5 KB a game at 200 turns a round).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from thirtyone_env.envs import kernel_rules
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.env_options import EPISODES, check_reward, check_seat, flag
from thirtyone_env.envs.env_options import choice as _choice
from thirtyone_env.envs.kernel_games import KernelGames, seat_players
from thirtyone_env.envs.spaces import flat_space
from thirtyone_env.game.actions import check_action_id, num_actions
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import ROUND_OVER, IllegalActionError
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import T_ROUNDS
from thirtyone_env.harness.driver import check_seated


def batchable(rules: Rules) -> bool:
    """Whether the compiled kernels play these rules (the stock game with lives): every
    field's value is one they play, as :data:`~thirtyone_env.envs.kernel_rules.MIRROR`
    declares field by field."""
    return kernel_rules.batchable(rules)


class ThirtyOneVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of one seat each, stepped together (see the module doc).

    Args:
        num_envs: games played at once.
        num_players: as for ``ThirtyOneEnv``.
        rules: as for ``ThirtyOneEnv``.
        opponents: ``"greedy"`` (as ``None``) / ``"random"`` (played in the kernels), any other player
            spec (``"expert"``: a new player in each seat of every game), or a player
            for every other seat, or a list of ``num_players - 1`` of them, shared by
            every game (a player with
            ``act_batch`` answers all its waiting games at once); or a callable that
            returns one game's list (called once per game: each game keeps its own, and
            those with ``reset(rng)`` draw from that game's players' generator, as in the single
            env). A shared player with ``reset`` is handed one generator at ``reset``.
        seat: as for ``ThirtyOneEnv``.
        episode: as for ``ThirtyOneEnv``.
        reward: as for ``ThirtyOneEnv``.
        opponent_history: as for ``ThirtyOneEnv``.
        autoreset_mode: Gymnasium's ``AutoresetMode`` (or its value): ``SAME_STEP``
            (default; Stable-Baselines3's convention): a finished game is dealt anew in
            the step that ends it, its last observation in ``info["final_obs"]`` and
            where it ended in ``info["final_info"]``; ``NEXT_STEP`` (Gymnasium's
            ``SyncVectorEnv`` default, which its vector wrappers such as
            ``NormalizeObservation`` need): the step that ends a game returns its last
            observation and where it ended as the info's own keys, and the next step
            deals it anew, its action ignored, with reward 0.

    Observations are the flat encoding (``float32``); an illegal action ends that game
    with the reward ``rewards.forfeit_reward`` gives (as ``ThirtyOneEnv``: every life
    still to lose) and ``illegal_action`` true for it in where it ended
    (``info["final_info"]``; with next-step autoreset, the info's own key).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        num_players: int = 4,
        rules: Rules | str | None = None,
        opponents: Any = "greedy",
        seat: int | str = "random",
        episode: str = "game",
        reward: str = "lives",
        opponent_history: bool = False,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
    ) -> None:
        modes = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value)), None)
        if mode is None:
            raise ValueError(
                f"autoreset_mode={autoreset_mode!r} is not allowed; allowed values: "
                + ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in modes)
            )
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        if (
            isinstance(num_envs, bool | np.bool_)
            or not isinstance(num_envs, int | np.integer)
            or num_envs < 1
        ):
            raise ValueError(f"num_envs={num_envs!r} must be a positive int")
        num_envs = int(num_envs)
        self.rules = Rules.resolve(rules)
        n = self.rules.check_num_players(num_players)
        seat = check_seat(seat, n)
        self.num_envs = num_envs
        self.num_players = n
        self.seat_option = seat
        self.episode = _choice("episode", episode, EPISODES)
        self.reward_kind = check_reward(reward, self.rules.scoring)
        self.opponent_history = flag("opponent_history", opponent_history)
        self.layout = ObsLayout(n, self.rules, self.opponent_history)
        self.single_observation_space = flat_space(self.layout)
        self.single_action_space = spaces.Discrete(num_actions(self.rules))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._fallback: list[ThirtyOneEnv] | None = None
        self.games: KernelGames | None = None
        players = seat_players("greedy" if opponents is None else opponents, n - 1, num_envs)
        check_seated((p for row in players for p in row), n, self.rules)
        if not batchable(self.rules):
            self._fallback = [
                ThirtyOneEnv(
                    n,
                    self.rules,
                    self._fallback_opponents(row),
                    seat,
                    episode,
                    reward,
                    opponent_history=self.opponent_history,
                )
                for row in players
            ]
            self._masks = np.zeros((num_envs, self.single_action_space.n), dtype=np.int8)
            self._charged = np.zeros((num_envs, n), dtype=np.int64)  #: each game's charges so far
        else:
            self.games = KernelGames(
                num_envs,
                self.layout,
                self.rules,
                players,
                seat,
                self.episode,
                self.reward_kind,
            )
            self._masks = self.games.masks
        self._obs = np.zeros((num_envs, self.layout.size), dtype=np.float32)
        #: next-step autoreset: the games that ended in the last step, dealt anew in this one
        self._restart = np.zeros(num_envs, dtype=bool)

    # -- set-up ----------------------------------------------------------------------

    @staticmethod
    def _fallback_opponents(row: list[Any]) -> list[Any]:
        """One game's opponents for its own env (names made into fresh players)."""
        names = {"greedy": GreedyPolicy, "random": RandomPolicy}
        return [names[o]() if isinstance(o, str) else o for o in row]

    # -- Gymnasium's vector API -----------------------------------------------------

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every game. ``seed``: an int (game ``i`` gets ``seed + i``), a list
        of seeds, or None (fresh entropy the first time, else the generators go on)."""
        self._check_open()
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}; the vector env takes none")
        N = self.num_envs
        self._restart[:] = False
        if seed is None:
            seeds: list[int | None] = [None] * N
        elif isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(N)]
        else:
            seeds = list(seed)
            if len(seeds) != N:
                raise ValueError(f"reset: {len(seeds)} seeds for {N} games")
        if self._fallback is not None:
            for i, env in enumerate(self._fallback):
                obs, info = env.reset(seed=seeds[i])
                self._charged[i] = self._skipped(info)
                self._obs[i] = obs
                self._masks[i] = info["action_mask"]
            return self._obs.copy(), self._mask_info({})
        games = self.games
        assert games is not None
        if seed is not None or not games.seeded:
            games.seed(seeds)
        games.reset_games(games.all)
        obs = np.empty_like(self._obs)
        games.encode(games.all, obs)
        games.update_masks()
        return obs, self._mask_info({})

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._check_open()
        actions = self._check_actions(actions)
        games = self.games
        if games is None:
            return self._step_fallback(actions)
        if not games.seeded:
            raise RuntimeError("call reset() before step()")
        N = self.num_envs
        illegal, done = games.illegal, games.done
        obs = np.empty_like(self._obs)
        games.step(actions, obs)  # (a finished game waiting for its next-step reset is left as it is)
        rewards = games.rew.copy()
        info: dict[str, Any] = {}
        if self._next_step:
            ended = np.flatnonzero(done & ~self._restart).tolist()
            info = self._ended_info(illegal, {i: games.summary(i) for i in ended})
            restart = np.flatnonzero(self._restart)
            if restart.size:
                games.reset_games(restart)
                games.encode(restart, obs)
                games.update_masks()
                rewards[restart] = 0.0
            self._restart = done & ~self._restart
            return obs, rewards, self._restart.copy(), np.zeros(N, dtype=bool), self._mask_info(info)
        if done.any():
            ended = np.flatnonzero(done)
            info = self._final_info(ended, obs, illegal, {i: games.summary(i) for i in ended.tolist()})
            games.reset_games(ended)
            games.encode(ended, obs)
            games.update_masks()
        return obs, rewards, done.copy(), np.zeros(N, dtype=bool), self._mask_info(info)

    def _mask_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` with every game's legal actions, in Gymnasium's vector convention:
        ``info["action_mask"]`` is ``(num_envs, actions)`` int8 (after an autoreset, the
        new game's), ``info["_action_mask"]`` says every game has one."""
        info["action_mask"] = self._masks.copy()
        info["_action_mask"] = np.ones(self.num_envs, dtype=bool)
        return info

    def _check_actions(self, actions: Any) -> np.ndarray:
        """The games' action ids as int64, each held to the single env's contract
        (:func:`~thirtyone_env.game.actions.check_action_id`); the error names the game."""
        N, n = self.num_envs, self.single_action_space.n
        if isinstance(actions, np.ndarray) and actions.dtype.kind in "iu" and actions.shape in ((N,), (N, 1)):
            ids = actions.reshape(N)
            if ids.min() >= 0 and ids.max() < n:  # the usual case, checked at once
                return ids.astype(np.int64)
        try:
            count = len(actions)
        except TypeError:
            count = None
        if isinstance(actions, str | bytes) or count != N:
            raise ValueError(f"step: give one action per game ({N} games), got {actions!r}")
        ids = np.empty(N, dtype=np.int64)
        for i, a in enumerate(actions):
            try:
                ids[i] = check_action_id(a, n)
            except IllegalActionError as e:
                raise IllegalActionError(f"game {i}: {e}") from None
        return ids

    @property
    def _next_step(self) -> bool:
        return self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP

    def _check_open(self) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector env is closed: make a new one")

    def _ended_info(self, illegal: np.ndarray, summaries: dict[int, dict[str, Any]]) -> dict[str, Any]:
        """Next-step autoreset: where each game that ended in this step ended, as the
        info's own keys over the games (``VectorEnv._add_info``: arrays with ``_key``
        masks)."""
        info: dict[str, Any] = {}
        for i, summary in summaries.items():
            info = self._add_info(info, _game_info(illegal[i], summary), i)
        return info

    def _final_info(
        self, ended: np.ndarray, obs: np.ndarray, illegal: np.ndarray, summaries: dict[int, dict[str, Any]]
    ) -> dict[str, Any]:
        """Gymnasium's same-step autoreset info, built as ``SyncVectorEnv`` builds it
        (``VectorEnv._add_info``): ``final_obs``, an object array of the finished
        games' last observations, and ``final_info``, a dict of arrays over the games
        (``final_info["lives"]`` is ``(num_envs, num_players)``), each key with its
        ``_key`` mask of the games that have it. :func:`ended_game` reads one game's."""
        info: dict[str, Any] = {}
        for i in ended.tolist():
            game = _game_info(illegal[i], summaries[i])
            info = self._add_info(info, {"final_obs": obs[i].copy(), "final_info": game}, i)
        return info

    def _step_fallback(self, actions: np.ndarray) -> tuple:
        N = self.num_envs
        rewards = np.zeros(N)
        done = np.zeros(N, dtype=bool)
        illegal = np.zeros(N, dtype=bool)
        finals, summaries = {}, {}
        restart = self._restart.copy()
        for i, env in enumerate(self._fallback):
            if restart[i]:  # next-step autoreset: its game ended in the last step
                obs, info = env.reset()
                self._charged[i] = self._skipped(info)
                self._obs[i] = obs
                self._masks[i] = info["action_mask"]
                continue
            obs, r, terminated, _, info = env.step(int(actions[i]))
            rewards[i] = r
            self._charged[i] += _charges(info.get("round_results", ()), self.num_players)
            if terminated:
                done[i] = True
                illegal[i] = "illegal_action" in info
                finals[i] = obs
                summaries[i] = self._fallback_summary(i)
                if not self._next_step:
                    obs, info = env.reset()
                    self._charged[i] = self._skipped(info)
            self._obs[i] = obs
            self._masks[i] = info["action_mask"]
        if self._next_step:
            self._restart = done.copy()
            return (
                self._obs.copy(),
                rewards,
                done,
                np.zeros(N, dtype=bool),
                self._mask_info(self._ended_info(illegal, summaries)),
            )
        info: dict[str, Any] = {}
        if finals:
            ended = np.array(sorted(finals), dtype=np.int64)
            last = self._obs.copy()
            for i, o in finals.items():
                last[i] = o
            info = self._final_info(ended, last, illegal, summaries)
        return self._obs.copy(), rewards, done, np.zeros(N, dtype=bool), self._mask_info(info)

    def _skipped(self, info: dict[str, Any]) -> np.ndarray:
        """The charges of the rounds a reset settled before the agent's first decision:
        this game's in a ``"game"`` episode, other games' (dealt anew) in a ``"round"`` one."""
        skipped = info.get("skipped_rounds", ()) if self.episode == "game" else ()
        return _charges(skipped, self.num_players)

    def _fallback_summary(self, i: int) -> dict[str, Any]:
        """Where game ``i`` of the per-game envs ended, as the kernels' summary says it
        (``KernelGames.summary``): the rounds each seat was dealt in (the engine's
        public tally of settled rounds, and a round an illegal action cut short) and,
        in the lives games, the lives each was charged in them (a round settled before
        the agent's first decision included); at a points or chips table ``score``
        (the points or chips) instead of ``lives`` and ``lives_lost``."""
        env = self._fallback[i]
        s = env.state
        cut_short = s.phase < ROUND_OVER  # an illegal action ended the game inside a round
        summary: dict[str, Any] = {
            "seat": env.seat,
            "round": s.round_no,
            "active": tuple(bool(a) for a in s.active),
            "rounds_played": tuple(
                int(t[T_ROUNDS]) + int(cut_short and s.active[p]) for p, t in enumerate(s.tally)
            ),
        }
        if self.rules.scoring != "lives":
            return {**summary, "score": tuple(s.score)}
        return {**summary, "lives": tuple(s.lives), "lives_lost": tuple(int(x) for x in self._charged[i])}

    def action_masks(self) -> np.ndarray:
        """``(num_envs, actions)`` int8: each game's legal actions for its agent."""
        return self._masks.copy()

    @property
    def compiled(self) -> bool:
        """Whether the games run in the compiled kernels (else one env per game)."""
        return self._fallback is None


def _game_info(illegal: bool, summary: dict[str, Any]) -> dict[str, Any]:
    """One finished game's info: whether an illegal action ended it, and its summary
    with the per-seat tuples as arrays (so that they batch to ``(num_envs, seats)``)."""
    game: dict[str, Any] = {"illegal_action": bool(illegal)}
    for key, value in summary.items():
        game[key] = np.asarray(value) if isinstance(value, tuple) else value
    return game


def _charges(results: Sequence[Any], n: int) -> np.ndarray:
    """Each seat's charges over settled rounds (``RoundResult.losses``)."""
    total = np.zeros(n, dtype=np.int64)
    for result in results:
        total += np.asarray(result.losses, dtype=np.int64)
    return total


def ended_game(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Game ``i``'s entry of a step's ``info["final_info"]`` (Gymnasium's dict of arrays
    over the games) as one dict: ``seat``, ``round``, ``illegal_action`` and, per seat,
    ``lives``, ``active``, ``rounds_played`` and ``lives_lost`` as tuples. ``KeyError``
    when game ``i`` did not end in that step."""
    final = info["final_info"]
    if not final["_illegal_action"][i]:
        raise KeyError(f"game {i} did not end in this step")
    game: dict[str, Any] = {}
    for key, value in final.items():
        if key.startswith("_") or not final[f"_{key}"][i]:
            continue
        x = value[i]
        game[key] = (
            tuple(x.tolist()) if isinstance(x, np.ndarray) else x.item() if isinstance(x, np.generic) else x
        )
    return game


def sb3_vec_env(*args: Any, **kwargs: Any) -> Any:
    """The batched env as a Stable-Baselines3 ``VecEnv`` (arguments as for
    :class:`ThirtyOneVectorEnv`, but the reward is ``ThirtyOne-v1``'s unless given:
    ``"rate"`` in the lives games, whose returns vary with play, as with
    ``make_vec_env("ThirtyOne-v1")``); ``MaskablePPO`` reads its masks."""
    from stable_baselines3.common.vec_env import VecEnv

    from thirtyone_env.envs.env_options import v1_reward

    if len(args) < 7 and "reward" not in kwargs:  # (reward is the seventh argument)
        rules = args[2] if len(args) > 2 else kwargs.get("rules")
        kwargs["reward"] = v1_reward(rules)
    mode = args[8] if len(args) > 8 else kwargs.get("autoreset_mode", AutoresetMode.SAME_STEP)
    if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP.value):
        raise ValueError(
            f"autoreset_mode={mode!r} is not allowed here: a Stable-Baselines3 VecEnv resets a "
            "finished game in the step that ends it (AutoresetMode.SAME_STEP)"
        )

    class ThirtyOneSB3VecEnv(VecEnv):
        """SB3's ``VecEnv`` over :class:`ThirtyOneVectorEnv`."""

        def __init__(self) -> None:
            self.venv = ThirtyOneVectorEnv(*args, **kwargs)
            super().__init__(
                self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space
            )
            self._actions: np.ndarray | None = None
            self._seed: int | None = None

        def reset(self) -> np.ndarray:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple:
            obs, rewards, done, _, info = self.venv.step(self._actions)
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if done.any():
                final = info["final_obs"]
                for i in np.flatnonzero(done).tolist():
                    infos[i] = {
                        "terminal_observation": final[i],
                        "TimeLimit.truncated": False,
                        **ended_game(info, i),
                    }
            return obs, rewards.astype(np.float32), done, infos

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seed = seed
            return [None if seed is None else seed + i for i in range(self.num_envs)]

        def close(self) -> None:
            self.venv.close()

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.venv, attr_name)] * len(self._get_indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(
            self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
        ) -> Any:
            rows = self._get_indices(indices)
            if method_name == "action_masks":
                return self.venv.action_masks()[list(rows)]
            result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
            return [result] * len(rows)

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False] * len(self._get_indices(indices))

        def has_attr(self, attr_name: str) -> bool:
            return hasattr(self.venv, attr_name)

    return ThirtyOneSB3VecEnv()
