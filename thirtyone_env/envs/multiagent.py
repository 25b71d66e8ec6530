"""A PettingZoo AEC environment: every seat of a Thirty-One table played from outside.

``env(num_players=4, rules="standard")`` is the wrapped environment (an illegal move
ends the game, the mover's reward the worst the rest of its game could have brought:
:meth:`raw_env.forfeit`; out-of-order calls raise); ``raw_env`` is the bare one.
Both hold actions to the single-agent env's contract
(:func:`~thirtyone_env.game.actions.check_action_id`): anything but an int id in the action
space (a bool, a float, a string) raises
:class:`~thirtyone_env.game.engine.IllegalActionError`, never cast. Agents are ``"player_0"`` ... by seat. Each agent
observes ``{"observation": <the single-agent env's encoding of its own seat>,
"action_mask": int8}``: its own hand and the public table, never another hand, and an
all-zero mask whenever it is not the one to act.

Rewards per agent per step: the change of its standing at every settlement (minus the
lives lost; the points or chips of ``no_elimination`` and ``banking``), as in the
single-agent env's ``"lives"`` reward; ``reward="win"`` gives +1 to the winners and -1
to each player as it is eliminated; ``reward="rate"`` adds ``1 / num_players`` to the
``"lives"`` reward of each player in a settled round. A player leaves (``terminations[agent]``) when it
is eliminated; the game ends when one is left (or at the rules' round limit).

``infos[agent]["round_result"]`` is the last round's result as that agent saw it
(:func:`~thirtyone_env.game.views.public_result`: no value of a hand that was never shown,
after a blitz or a void round); ``infos[agent]["winners"]`` at the end.

Scripted seats: :meth:`raw_env.observe_for` gives an agent's observation as a given
player reads it (a built-in heuristic reads a ``PlayerView``, the shipped 4-player
model the flat encoding with the opponent history), so built-in, shipped and own
players sit in the AEC loop beside learners.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers import BaseWrapper

from thirtyone_env.envs.env_options import REWARDS, check_reward, flag
from thirtyone_env.envs.spaces import dict_space, flat_space
from thirtyone_env.game.actions import check_action_id, num_actions
from thirtyone_env.game.encoding import ENCODINGS, ObsLayout, encode_dict, encode_flat
from thirtyone_env.game.engine import GAME_OVER, ROUND_OVER, GameState, legal_mask, new_game
from thirtyone_env.game.rewards import forfeit_reward, round_cost, seat_reward
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.views import describe_view, player_view, public_result
from thirtyone_env.harness.driver import Table, check_seated, observe


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's usual wrappers for classic games."""
    e: AECEnv = raw_env(**kwargs)
    e = ForfeitIllegalWrapper(e)
    e = ActionContractWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class ForfeitIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` with the mover's reward for an illegal
    move the worst the rest of its game could bring (:meth:`raw_env.forfeit`) rather
    than a constant -1, which here, where a lost game costs every life, would pay
    better than playing on."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env, illegal_reward=-1.0)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            self._illegal_value = self.env.unwrapped.forfeit(agent)
        super().step(action)


class ActionContractWrapper(BaseWrapper):
    """Holds a live agent's action to the single-agent env's contract before
    ``TerminateIllegalWrapper`` indexes the mask with it. It takes the place of
    PettingZoo's ``AssertOutOfBoundsWrapper``, which lets ``True`` through (and is
    compiled out under ``python -O``); a dead agent's ``step(None)`` passes as ever."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            action = check_action_id(action, self.action_space(agent).n)
        super().step(action)


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming)
    """Thirty-One for PettingZoo (see the module doc)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "thirtyone_v0", "is_parallelizable": False}

    def __init__(
        self,
        num_players: int = 4,
        rules: Rules | str | None = None,
        obs_encoding: str = "flat",
        reward: str = "lives",
        render_mode: str | None = None,
        opponent_history: bool = False,
        render_seat: int | None = None,
    ) -> None:
        """``opponent_history`` adds that part to every agent's observation, as in
        ``ThirtyOneEnv``. ``render_seat``: whose view :meth:`render` shows (that seat's
        hand, as a person in it sees the table); ``None``, the default, shows what a
        spectator sees, no hand, since one render is seen by every seat's agent."""
        super().__init__()
        self.rules = Rules.resolve(rules)
        self.num_players = self.rules.check_num_players(num_players)
        if obs_encoding not in ENCODINGS:
            raise ValueError(
                f"obs_encoding={obs_encoding!r} is not allowed; allowed values: {list(ENCODINGS)}"
            )
        check_reward(reward, self.rules.scoring)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed: {self.metadata['render_modes']}"
            )
        self.obs_encoding = obs_encoding
        self.reward_kind = reward
        self._reward_index = REWARDS.index(reward)
        self.render_mode = render_mode
        if render_seat is not None and (
            isinstance(render_seat, bool)
            or not isinstance(render_seat, int)
            or not 0 <= render_seat < self.num_players
        ):
            raise ValueError(
                f"render_seat={render_seat!r} is not allowed; allowed values: None or 0..{self.num_players - 1}"
            )
        self.render_seat = render_seat
        self.opponent_history = flag("opponent_history", opponent_history)
        self.layout = ObsLayout(self.num_players, self.rules, self.opponent_history)
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        n_actions = num_actions(self.rules)
        inner = flat_space(self.layout) if obs_encoding == "flat" else dict_space(self.layout)
        obs_space = spaces.Dict(
            {"observation": inner, "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8)}
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self._n_actions = n_actions
        self.state_ = None
        self._table: Table | None = None
        self._seated: set[int] = set()  # players observe_for told the table
        self.np_random = np.random.default_rng()

    @property
    def obs_layout(self) -> ObsLayout:
        """The observation's layout, by the single env's name for it (``layout``)."""
        return self.layout

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- the game ---------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or self.state_ is None:
            self.np_random = np.random.default_rng(seed)
        # "deck", "dealer" and "lives" as in the single-agent env (the agents of seats
        # out of the game are not in ``agents``); other keys are ignored, as
        # PettingZoo's api_test requires of every environment.
        options = dict(options or {})
        self.state_ = new_game(
            self.rules,
            self.num_players,
            self.np_random,
            dealer=options.get("dealer"),
            deck=options.get("deck"),
            lives=options.get("lives"),
        )
        self.agents = [a for a in self.possible_agents if self.state_.active[self.agent_name_mapping[a]]]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        # Every seat is played from outside: the table only settles and deals rounds.
        self._table = Table(
            self.state_,
            [None] * self.num_players,
            self.np_random,
            layout=self.layout,
            on_settle=self._settle,
        )
        self._table.settle()
        self.agent_selection = self.possible_agents[self.state_.current]
        self._deads_step_first()

    def _settle(self, s: GameState) -> None:
        """The table's ``on_settle``: rewards and departures of the round just settled."""
        result = s.result
        over = s.phase == GAME_OVER
        winners = s.winners if over else ()
        kind = self._reward_index
        for agent in self.agents:
            seat = self.agent_name_mapping[agent]
            self.rewards[agent] += seat_reward(kind, result, seat, winners)
            if over or seat in result.eliminated:
                self.terminations[agent] = True
            self.infos[agent] = {"round_result": public_result(result, seat, s.rules)}
            if over:
                self.infos[agent]["winners"] = tuple(s.winners)

    def forfeit(self, agent: str) -> float:
        """``agent``'s reward for an illegal move, which ends its game: the worst the
        rest of the game could have brought it
        (:func:`~thirtyone_env.game.rewards.forfeit_reward`: every life still to lose,
        at banking every chip; -1 with ``reward="win"`` and in the points games)."""
        seat = self.agent_name_mapping[agent]
        s = self.state_
        standing = float(s.score[seat] if self.rules.scoring == "chips" else s.lives[seat])
        return forfeit_reward(self._reward_index, standing, round_cost(self.rules), False)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action_id = check_action_id(action, self._n_actions)
        s = self.state_
        self._cumulative_rewards[agent] = 0.0
        for a in self.rewards:
            self.rewards[a] = 0.0
        table = self._table
        table.state = s  # the game is ``state_`` (a caller may have set it)
        table.play(action_id)
        table.settle()
        if s.phase != GAME_OVER:
            self.agent_selection = self.possible_agents[s.current]
        self._accumulate_rewards()
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    # -- observing ---------------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self.agent_name_mapping[agent]
        s = self.state_
        obs = (
            encode_flat(s, seat, self.layout)
            if self.obs_encoding == "flat"
            else encode_dict(s, seat, self.layout)
        )
        acting = (
            s.phase < ROUND_OVER
            and s.current == seat
            and agent in self.terminations
            and not self.terminations[agent]
            and self.agent_selection == agent
        )
        mask = legal_mask(s) if acting else np.zeros(self._n_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def observe_for(self, agent: str, player: Any) -> dict[str, Any]:
        """``agent``'s observation as ``player`` reads it, to seat a built-in, shipped or
        own player in the AEC loop: ``{"observation": ..., "action_mask": ...}`` with
        the observation in the player's ``obs_encoding`` (``"view"``: a
        :class:`~thirtyone_env.game.views.PlayerView`; ``"flat+history"``: with the
        opponent history; ``"flat"`` when it names none), the same seat's cards and
        public table as :meth:`observe`. The first call for a player tells it the table
        (its ``check_table``: the learned player picks its model there)::

            obs = env.unwrapped.observe_for(agent, expert)
            action = expert.act(obs["observation"], obs["action_mask"])
        """
        if id(player) not in self._seated:
            check_seated([player], self.num_players, self.rules)
            self._seated.add(id(player))
        encoding = getattr(player, "obs_encoding", "flat")
        seen = observe(self.state_, self.agent_name_mapping[agent], encoding, self.layout)
        return {"observation": seen, "action_mask": self.observe(agent)["action_mask"]}

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'human'")
            return None
        s = self.state_
        if s is None:
            gymnasium.logger.warn("render() before reset(): nothing to show")
            return None
        if self.render_seat is not None:
            text = describe_view(player_view(s, self.render_seat))
        else:
            text = describe_view(player_view(s, s.current if s.phase < ROUND_OVER else 0), spectator=True)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass
