"""``ThirtyOneEnv``: one seat of a Thirty-One table as a Gymnasium environment.

The agent plays one seat; ``opponents`` (any objects with ``act(observation,
action_mask) -> int``) play the others inside :meth:`ThirtyOneEnv.step`. Every call
returns ``info["action_mask"]`` (int8) and :meth:`ThirtyOneEnv.action_masks` gives the
same mask, so ``sb3_contrib.MaskablePPO`` trains on the env unwrapped or through
``ActionMasker``.

Rewards:

- ``"lives"``: the change of the agent's standing by every settlement during the step:
  in the lives games (standard, pagat, blitz31, dutch, cut_throat, switch,
  stop_the_bus) minus the lives charged (0 most steps, -1 for a lost round, -2 for a
  knocker strictly lowest); in ``no_elimination`` the points scored (0..6 a round); in
  ``banking`` the chips won less the ante and any blitz payment. In a ``"game"``
  episode this sums to the change of standing over the game (an elimination from the
  free ride counts its charge too).
- ``"win"``: +1 when the game ends with the agent among the winners, -1 when the agent
  is eliminated, else 0. Meant for ``episode="game"``; in one-round episodes it is
  nonzero only when that round decides the game.
- ``"rate"`` (lives games): the ``"lives"`` reward plus ``1 / num_players`` for every
  round settled with the agent in, its fair share of the life a round costs. A game
  then returns ``rounds played / num_players - lives lost``: the linear form of the
  *lives lost a round* that tournaments and the gauntlet report, which a seat lowers
  by losing fewer lives and by staying in more rounds (``"lives"`` counts only the
  first; an eliminated seat loses all its lives whenever it goes out).

Episodes: ``"game"`` plays a whole game (it ends when the agent wins or is out);
``"round"`` plays one round of a fresh game (full lives). Rounds that end before the
agent's first decision (a dealt 31, a blitz by an earlier seat) cannot be returned by
``reset``: in ``"game"`` episodes their reward is added to the next step's, in
``"round"`` episodes a new game is dealt; either way they are listed in
``info["skipped_rounds"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from thirtyone_env.envs.env_options import (
    BACKENDS,
    EPISODES,
    ILLEGAL_ACTION_MODES,
    RESET_OPTIONS,
    REWARDS,
    check_reward,
    check_seat,
    choice,
    flag,
)
from thirtyone_env.envs.frames import text_frame
from thirtyone_env.envs.kernel_games import CompiledGame
from thirtyone_env.envs.spaces import dict_space, flat_space
from thirtyone_env.game.actions import action_name, check_action_id, num_actions
from thirtyone_env.game.encoding import ENCODINGS, PLAYER_ENCODINGS, ObsLayout
from thirtyone_env.game.engine import (
    GAME_OVER,
    PHASE_NAMES,
    ROUND_OVER,
    GameState,
    IllegalActionError,
    RoundResult,
    legal_actions,
    legal_mask,
    new_game,
)
from thirtyone_env.game.policies import GreedyPolicy
from thirtyone_env.game.rewards import forfeit_reward, round_cost, seat_reward
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.starts import check_standing
from thirtyone_env.game.views import describe_view, player_view, public_result
from thirtyone_env.harness.driver import Table, check_seated, observe, reset_players
from thirtyone_env.harness.player_specs import spec_player

__all__ = ["BACKENDS", "EPISODES", "ILLEGAL_ACTION_MODES", "RESET_OPTIONS", "REWARDS", "ThirtyOneEnv"]


class ThirtyOneEnv(gym.Env):
    """One seat of a Thirty-One game.

    Args:
        num_players: table size, 2..7 (the rules' deck must deal it).
        rules: a :class:`~thirtyone_env.game.rules.Rules` or a preset name.
        opponents: ``None`` (a :class:`~thirtyone_env.game.policies.GreedyPolicy` in every
            other seat), one policy for all of them, a player spec as every command
            takes (``"expert"``, ``"ppo"``, ``"search:worlds=64"``, ``"file.py:Class"``:
            a new player in each seat), or a list of ``num_players - 1`` policies or
            specs seated clockwise after the agent.
        seat: the agent's seat, or ``"random"`` (drawn each episode).
        episode: ``"game"`` or ``"round"`` (see the module doc).
        reward: ``"lives"``, ``"win"`` or ``"rate"`` (see the module doc).
        obs_encoding: ``"flat"`` (a ``Box``; ``env.obs_layout`` names its slices) or
            ``"dict"`` (a ``Dict`` of the same parts).
        illegal_action: ``"penalize"``: an illegal action ends the episode with
            ``info["illegal_action"]`` and the worst reward the rest of the episode
            could have brought (:func:`~thirtyone_env.game.rewards.forfeit_reward`:
            every life still to lose, -1 with ``reward="win"``), so that no illegal
            move pays better than playing on; ``"raise"``: raise
            :class:`~thirtyone_env.game.engine.IllegalActionError`.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text), ``"human"``
            (prints it every step) or ``"rgb_array"`` (the text as an image of one
            size, for video recorders; SB3's ``make_vec_env`` asks for it; the
            compiled backend renders nothing and takes it with a warning); another
            mode is refused.
        backend: ``"python"`` (the engine: every rule set and opponent, ``state``,
            round results in ``info``, ``render`` and ``save_record``) or ``"compiled"``
            (the numba kernels of :mod:`thirtyone_env.envs.vector`: the stock game with lives,
            ``GreedyPolicy`` / ``RandomPolicy`` opponents, the flat encoding; several
            times faster, and the same games, observations and rewards for the same
            seed; no ``state``, round results, render or records).
        opponent_history: add the ``opponent_history`` part to the observation (last,
            after every other part): per opponent, what the table has shown of its play
            over this game's settled rounds (knocks, its turn at them, hands shown at
            showdowns, draws from the pile; :mod:`thirtyone_env.game.encoding`). Off by
            default: the observation of models trained without it.

    ``reset(seed=..., options={"deck": [...], "dealer": k, "lives": [...]})`` stacks
    the first deal (cards top first, the rest shuffled beneath), picks its dealer and
    starts the game at a standing (per seat its lives, ``None`` for a seat out; the
    agent's seat must be in).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        num_players: int = 4,
        rules: Rules | str | None = None,
        opponents: Any = None,
        seat: int | str = "random",
        episode: str = "game",
        reward: str = "lives",
        obs_encoding: str = "flat",
        illegal_action: str = "penalize",
        render_mode: str | None = None,
        backend: str = "python",
        opponent_history: bool = False,
    ) -> None:
        self.rules = Rules.resolve(rules)
        self.num_players = self.rules.check_num_players(num_players)
        n = self.num_players
        self.seat_option = seat = check_seat(seat, n)
        self.episode = choice("episode", episode, EPISODES)
        self.reward_kind = check_reward(reward, self.rules.scoring)
        self._reward_index = REWARDS.index(reward)
        self.obs_encoding = choice("obs_encoding", obs_encoding, ENCODINGS)
        self.illegal_action = choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed values: None, "
                + ", ".join(repr(m) for m in self.metadata["render_modes"])
            )
        self.render_mode = render_mode
        self.opponents = self._seat_opponents(opponents)
        check_seated(self.opponents, n, self.rules)

        self.opponent_history = flag("opponent_history", opponent_history)
        self.obs_layout = ObsLayout(n, self.rules, self.opponent_history)
        #: what the players at the table read: ``"flat"`` / ``"dict"`` without the
        #: history part whatever the agent's observation holds (``"+history"`` adds it)
        self.players_layout = ObsLayout(n, self.rules)
        if obs_encoding == "flat":
            self.observation_space = flat_space(self.obs_layout)
        else:
            self.observation_space = dict_space(self.obs_layout)
        self.num_actions = num_actions(self.rules)
        self.action_space = spaces.Discrete(self.num_actions)
        self.state: GameState | None = None
        self.seat = 0 if seat == "random" else seat
        self._done = True
        self._pending = 0.0
        self._table: Table | None = None
        self._reward = 0.0  # settled during the current step
        self._results: list[RoundResult] = []  # settled during the current step, as the agent saw them
        self.backend = choice("backend", backend, BACKENDS)
        self._compiled = None
        if backend == "compiled":
            if obs_encoding != "flat" or render_mode in ("ansi", "human"):
                raise ValueError("backend='compiled' observes the flat encoding and does not render")
            if render_mode == "rgb_array":  # what SB3's make_vec_env asks of every env
                gym.logger.warn("backend='compiled' does not render: render() returns None")
            # this env renders nothing: Gymnasium's checkers then ask for no mode
            self.metadata = {**self.metadata, "render_modes": []}
            self.render_mode = None
            self._compiled = CompiledGame(
                n, self.rules, self.opponents, seat, episode, reward, self.opponent_history
            )

    def _seat_opponents(self, opponents: Any) -> list[Any]:
        k = self.num_players - 1
        if opponents is None:
            opps = [GreedyPolicy() for _ in range(k)]
        elif hasattr(opponents, "act") or isinstance(opponents, str):
            opps = [opponents] * k
        elif isinstance(opponents, Sequence):
            opps = list(opponents)
            if len(opps) != k:
                raise ValueError(f"opponents: {len(opps)} policies given for {k} other seats")
        else:
            model = " (a trained SB3 model plays as agents.make('ppo', path=...) or 'ppo:path=FILE')"
            raise ValueError(
                f"opponents must be a policy, a player spec or a list of {k} of them, got {opponents!r}"
                + (model if callable(getattr(opponents, "predict", None)) else "")
            )
        # a spec makes a new player for each seat it names (players keep per-game state)
        opps = [spec_player(p) if isinstance(p, str) else p for p in opps]
        for i, p in enumerate(opps):
            if not callable(getattr(p, "act", None)):
                raise ValueError(f"opponent {i} ({p!r}) has no act(observation, action_mask) method")
            enc = getattr(p, "obs_encoding", None)
            if enc is not None and enc not in PLAYER_ENCODINGS:
                raise ValueError(
                    f"opponent {i} asks for obs_encoding={enc!r}; allowed: {list(PLAYER_ENCODINGS)}"
                )
        return opps

    # -- observations -------------------------------------------------------------

    def _observe(self, seat: int, encoding: str) -> Any:
        return observe(self.state, seat, encoding, self.obs_layout)

    def _info(self, results: list[RoundResult] | None = None) -> dict[str, Any]:
        s = self.state
        info: dict[str, Any] = {
            "action_mask": self.action_masks(),
            "seat": self.seat,
            "round": s.round_no,
            "lives": tuple(s.lives),
            "phase": PHASE_NAMES[s.phase],
        }
        if results:
            info["round_results"] = results
        return info

    def action_masks(self) -> np.ndarray:
        """The agent's legal actions as an int8 mask (zeros when it is not to act or
        the episode is over)."""
        if self._compiled is not None:
            if self._done:
                return np.zeros(self.num_actions, dtype=np.int8)
            return self._compiled.mask()
        s = self.state
        if s is None or self._done or s.phase >= ROUND_OVER or s.current != self.seat:
            return np.zeros(self.num_actions, dtype=np.int8)
        return legal_mask(s)

    # -- the game loop -------------------------------------------------------------

    def _settled(self, s: GameState) -> None:
        """The table's ``on_settle``: the agent's reward and view of a settled round."""
        seat = self.seat
        result = s.result
        winners = s.winners if s.phase == GAME_OVER else ()
        self._reward += seat_reward(self._reward_index, result, seat, winners)
        self._results.append(public_result(result, seat, s.rules))

    def _new_table(self, state: GameState) -> None:
        """Seat the opponents around the agent at a new game."""
        n = self.num_players
        seat = self.seat
        players = [None if p == seat else self.opponents[(p - seat) % n - 1] for p in range(n)]
        self.state = state
        self._table = Table(
            state,
            players,
            self.np_random,
            layout=self.players_layout,
            encoding=self.obs_encoding,
            labels="opponent",
            one_round=self.episode == "round",
            keep_history=True,  # for save_record
            on_settle=self._settled,
        )

    def _play_others(self, reward: float = 0.0) -> tuple[float, bool, list[RoundResult]]:
        """Let the opponents move until the agent must act or the episode ends: the
        reward (``reward`` plus the rounds settled on the way, added in their order,
        as the compiled kernels add them), those rounds, and whether the episode ended."""
        self._reward = reward
        self._results = []
        done = self._table.advance(self.seat)
        return self._reward, done, self._results

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; options are {list(RESET_OPTIONS)}")
        if self._compiled is not None:
            if options:
                raise ValueError(f"reset options {sorted(options)} need backend='python'")
            obs = self._compiled.reset(seed)
            self._done = False
            return obs, self._compiled.info()
        rng = self.np_random
        n = self.num_players
        self.seat = int(rng.integers(n)) if self.seat_option == "random" else self.seat_option
        reset_players(self.opponents, rng)
        lives = options.get("lives")
        if lives is not None and check_standing(self.rules, n, lives)[self.seat] is None:
            raise ValueError(f"lives: the agent's seat {self.seat} must be in the game")
        self._new_table(
            new_game(self.rules, n, rng, dealer=options.get("dealer"), deck=options.get("deck"), lives=lives)
        )
        skipped: list[RoundResult] = []
        while True:
            reward, done, results = self._play_others()
            skipped.extend(results)
            if not done:
                break
            self._new_table(new_game(self.rules, n, rng))
        self._pending = reward if self.episode == "game" else 0.0
        self._done = False
        info = self._info()
        if skipped:
            info["skipped_rounds"] = skipped
        if self.render_mode == "human":
            self.render()
        return self._observe(self.seat, self.obs_encoding), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self.state is None and (self._compiled is None or self._done and not self._compiled.seeded):
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        a = check_action_id(action, self.num_actions)
        if self._compiled is not None:
            return self._step_compiled(a)
        s = self.state
        legal = legal_actions(s)
        if a not in legal:
            rejected = self._reject(a, legal)
            info = self._info()
            info["illegal_action"] = rejected
            forfeit = self._forfeit(
                float(s.score[self.seat] if self.rules.scoring == "chips" else s.lives[self.seat])
            )
            return self._observe(self.seat, self.obs_encoding), forfeit, True, False, info
        table = self._table
        table.state = s  # the game is the env's ``state`` (a caller may have set it)
        table.play(a)
        reward, terminated, results = self._play_others(self._pending)
        self._pending = 0.0
        self._done = terminated
        if self.render_mode == "human":
            self.render()
        return self._observe(self.seat, self.obs_encoding), reward, terminated, False, self._info(results)

    def _reject(self, a: int, legal: list[int]) -> dict[str, Any]:
        """An illegal action: raise (``illegal_action="raise"``) or end the episode and
        return what ``info["illegal_action"]`` says of it."""
        names = ", ".join(f"{x} ({action_name(x)})" for x in legal)
        message = f"illegal action {a} ({action_name(a)}); legal: {names}"
        if self.illegal_action == "raise":
            raise IllegalActionError(message)
        self._done = True
        return {"action": a, "legal": legal, "message": message}

    def _forfeit(self, standing: float) -> float:
        """The reward of an illegal action (:func:`~thirtyone_env.game.rewards.forfeit_reward`)
        with ``standing`` the agent's lives (chips at banking), and any reward still
        pending from rounds settled before its first decision."""
        forfeit = forfeit_reward(
            self._reward_index,
            standing,
            round_cost(self.rules),
            self.episode == "round",
        )
        pending, self._pending = self._pending, 0.0
        return pending + forfeit

    def _step_compiled(self, a: int) -> tuple[Any, float, bool, bool, dict]:
        game = self._compiled
        if not game.legal(a):
            rejected = self._reject(a, [int(x) for x in np.flatnonzero(game.mask())])
            info = game.info()
            info["action_mask"] = np.zeros(self.num_actions, dtype=np.int8)
            info["illegal_action"] = rejected
            obs = game.obs[0].copy()
            _, reward, _ = game.step(a)  # the kernels end the game with the forfeit's reward
            return obs, reward, True, False, info
        obs, reward, done = game.step(a)
        self._done = done
        info = game.info()
        if done:
            info["action_mask"] = np.zeros(self.num_actions, dtype=np.int8)
        return obs, reward, done, False, info

    def save_record(self, path: str) -> str:
        """Write the current game (every round played so far, with the engine's full
        account of it) as JSON Lines: replay it with ``python -m thirtyone_env.harness.replay``.
        Opponents are named by class; the agent's seat is listed as ``"agent"``.
        ``path`` must be a new file (``ValueError`` otherwise): a file that exists is
        never replaced. A record shows every card, the stock's order and the hands
        nobody showed included, so it is written once the episode is over
        (``RuntimeError`` before)."""
        from thirtyone_env.harness.files import check_new_file
        from thirtyone_env.harness.records import game_lines, write_lines

        if self._compiled is not None:
            raise RuntimeError("save_record needs backend='python' (the compiled backend keeps no history)")
        if self.state is None:
            raise RuntimeError("call reset() before save_record(): there is no game yet")
        if not self._done:
            raise RuntimeError(
                "the episode is still being played: a record shows every card, so save it once the episode is over"
            )
        check_new_file(path, "record")
        s = self.state
        names = []
        for seat in range(self.num_players):
            if seat == self.seat:
                names.append("agent")
            else:
                names.append(type(self.opponents[(seat - self.seat) % self.num_players - 1]).__name__)
        done = s.phase == GAME_OVER
        lines = game_lines(
            self.rules,
            self.num_players,
            self._table.histories,
            s.winners if done else None,
            s.lives,
            s.score,
            names,
        )
        return str(write_lines(path, lines, replace=False))

    def render(self) -> str | np.ndarray | None:
        """The table as the agent's seat sees it: text (``"ansi"``), printed
        (``"human"``) or drawn as an image (``"rgb_array"``, :mod:`.frames`)."""
        if self.render_mode is None:
            return None  # no render mode (the compiled backend has none)
        if self.state is None:
            gym.logger.warn("render() before reset(): nothing to show")
            return None
        text = describe_view(player_view(self.state, self.seat))
        s = self.state
        if s.phase >= ROUND_OVER and s.result is not None:
            text += "\n" + describe_result(public_result(s.result, self.seat, s.rules))
        if self.render_mode == "human":
            print(text + "\n")
            return None
        if self.render_mode == "rgb_array":
            return text_frame(text)
        return text


def describe_result(result: RoundResult) -> str:
    """One line on how a round ended (all hands are shown at a showdown)."""
    lost = ", ".join(f"seat {p} -{n}" for p, n in enumerate(result.losses) if n) or "nobody"
    values = " ".join("?" if v is None else str(v) for v in result.values)
    out = f" | out: {list(result.eliminated)}" if result.eliminated else ""
    return f"round over ({result.reason}, {result.detail}): values [{values}] | lives lost: {lost}{out}"
