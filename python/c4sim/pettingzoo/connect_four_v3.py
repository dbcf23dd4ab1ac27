"""PettingZoo's ``connect_four_v3``, played by c4sim's engine.

A drop-in for ``pettingzoo.classic.connect_four_v3``::

    from c4sim.pettingzoo import connect_four_v3

    env = connect_four_v3.env(render_mode=None)  # or raw_env(...)

Agents ``player_0`` (moves first) and ``player_1``; observations
``{"observation": (rows, cols, 2) int8, "action_mask": (cols,) int8}`` (channel
0 the observing agent's pieces, channel 1 the opponent's, row 0 the top row;
the mask is all zeros for an agent that is not ``agent_selection``);
``Discrete(cols)`` actions; rewards +1 / −1 / 0, as PettingZoo's.

``env()`` gives what PettingZoo's ``env()`` gives (its ``raw_env`` inside
``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``
and ``OrderEnforcingWrapper``), with that behaviour built into one class
instead of three wrapper objects: an illegal move ends the game with −1 to the
mover and 0 to the other after PettingZoo's warning, an action outside the
action space fails its assertion, and calls before ``reset()`` fail as the
wrappers make them fail. Rules, legality and wins are the native ``Game``'s.

Beyond PettingZoo's: ``rows``, ``cols`` and ``win_length`` (keywords) play any
board the engine supports; ``render_mode="ansi"`` returns the board as text
and ``"human"`` prints it (there is no ``"rgb_array"``: no pygame window or
image; ``screen_scaling`` is accepted and ignored).
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.utils import EzPickle
    from pettingzoo import AECEnv
    from pettingzoo.utils.env import AECIterable, AECIterator
    from pettingzoo.utils.env_logger import EnvLogger
except ImportError as err:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        f"c4sim.pettingzoo needs PettingZoo ({err}); install it with: "
        'pip install "c4sim[pettingzoo]"'
    ) from err

import numpy as np

from .. import Game

__all__ = ["env", "raw_env", "ConnectFourEnv"]

_SEAT = {"player_0": 0, "player_1": 1}
_OTHER = {"player_0": "player_1", "player_1": "player_0"}
_NOT_IN_SPACE = "action is not in action space"


def env(**kwargs: Any) -> ConnectFourEnv:
    """PettingZoo's ``env()``: ``raw_env`` plus the behaviour of its
    TerminateIllegal (−1), AssertOutOfBounds and OrderEnforcing wrappers."""
    return ConnectFourEnv(**kwargs)


class raw_env(AECEnv, EzPickle):
    """PettingZoo's ``connect_four_v3.raw_env`` on the native ``Game``.

    As PettingZoo's raw env, it trusts its caller: an illegal or
    out-of-range column fails ``step`` with ``AssertionError("played illegal
    move.")`` (the state is left as it was)."""

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "connect_four_v3",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        screen_scaling: int = 9,
        *,
        rows: int = 6,
        cols: int = 7,
        win_length: int = 4,
    ):
        EzPickle.__init__(
            self, render_mode, screen_scaling, rows=rows, cols=cols, win_length=win_length
        )
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not supported by c4sim's connect_four_v3; "
                f"use one of {self.metadata['render_modes']} or None"
            )
        self._game = game = Game(rows, cols, win_length)
        self.rows, self.cols, self.win_length = game.rows, game.cols, game.win_length
        self.render_mode = render_mode
        self.screen_scaling = screen_scaling
        self.screen = None
        # last() inlines observe() unless a subclass replaced it
        self._own_observe = type(self).observe in (raw_env.observe, ConnectFourEnv.observe)

        self.agents = ["player_0", "player_1"]
        self.possible_agents = self.agents[:]
        self.action_spaces = {i: spaces.Discrete(self.cols) for i in self.agents}
        self.observation_spaces = {
            i: spaces.Dict(
                {
                    "observation": spaces.Box(
                        low=0, high=1, shape=(self.rows, self.cols, 2), dtype=np.int8
                    ),
                    "action_mask": spaces.Box(
                        low=0, high=1, shape=(self.cols,), dtype=np.int8
                    ),
                }
            )
            for i in self.agents
        }

    # ------------------------------------------------------------ queries

    @property
    def game(self) -> Game:
        """The native ``Game`` being played (read it; changing it behind the
        env's back desynchronises the env)."""
        return self._game

    @property
    def board(self) -> list[int]:
        """PettingZoo's ``board``: the cells row by row from the top-left,
        0 empty, 1 player_0's piece, 2 player_1's (a copy)."""
        return self._game.board().ravel().tolist()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        seat = _SEAT.get(agent)
        if seat is None:
            raise ValueError(f"{agent!r} is not in list")
        game = self._game
        # PettingZoo's mask: the open columns for agent_selection (even once
        # the game is over), all zeros for the other agent.
        if agent == self.agent_selection:
            mask = game.open_columns()
        else:
            mask = np.zeros(self.cols, np.int8)
        return {"observation": game.observation(seat), "action_mask": mask}

    def last(self, observe: bool = True):
        agent = self.agent_selection
        if observe:
            if self._own_observe:
                # observe(agent_selection), inline: the mask is the open columns
                game = self._game
                obs = {
                    "observation": game.observation(_SEAT[agent]),
                    "action_mask": game.open_columns(),
                }
            else:
                obs = self.observe(agent)
        else:
            obs = None
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    # ------------------------------------------------------------ play

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._game.reset()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {i: {} for i in self.agents}
        self.agent_selection = self.agents[0]

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        try:
            status = self._game.play(action)
        except (ValueError, OverflowError) as err:
            raise AssertionError("played illegal move.") from err
        if status:
            self._game_over(agent, status)
        else:
            self.agent_selection = _OTHER[agent]
        if self.render_mode == "human":
            self.render()

    def _game_over(self, agent, status: int) -> None:
        """PettingZoo's accounting after the move that ends the game: +1 / −1
        on a line, 0 / 0 on a full board; both agents terminated; the turn
        passes on."""
        nxt = _OTHER[agent]
        if status == 1:
            self.rewards[agent] += 1
            self.rewards[nxt] -= 1
        self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = nxt
        self._accumulate_rewards()

    # ------------------------------------------------------------ display

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        text = self._game.render()
        if self.render_mode == "ansi":
            return text
        print(text, end="" if text.endswith("\n") else "\n")
        return None

    def close(self) -> None:
        pass


_BEFORE_RESET = frozenset(
    {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}
)


class ConnectFourEnv(raw_env):
    """What ``env()`` returns: ``raw_env`` with the behaviour PettingZoo's
    ``env()`` gets from its wrapper chain, in one object:

    * ``OrderEnforcingWrapper``: ``rewards``, ``terminations``,
      ``truncations``, ``infos``, ``agent_selection``, ``num_agents`` and
      ``agents`` raise AttributeError before ``reset()``; ``step``,
      ``observe``, ``render``, ``state`` and ``agent_iter`` raise
      AssertionError before it; ``step`` once every agent is gone only logs
      PettingZoo's warning; ``agent_iter`` asserts that each agent was stepped.
    * ``AssertOutOfBoundsWrapper``: an action outside the action space (or
      None for a live agent) raises ``AssertionError("action is not in action
      space")``.
    * ``TerminateIllegalWrapper(illegal_reward=-1)``: a full column logs
      PettingZoo's warning and ends the game, −1.0 to the mover, 0 to the
      other, every agent terminated and truncated.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        screen_scaling: int = 9,
        *,
        rows: int = 6,
        cols: int = 7,
        win_length: int = 4,
    ):
        self._has_reset = False
        self._has_updated = False
        super().__init__(
            render_mode, screen_scaling, rows=rows, cols=cols, win_length=win_length
        )
        del self.agents  # hidden until reset(), as OrderEnforcingWrapper hides it

    def __getattr__(self, name: str):
        if name in _BEFORE_RESET and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        super().reset(seed=seed, options=options)

    def observe(self, agent):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return raw_env.observe(self, agent)

    def render(self):
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return super().state()

    def agent_iter(self, max_iter: int = 2**63) -> _OrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingIterable(self, max_iter)

    def step(self, action) -> None:
        # OrderEnforcingWrapper
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        # AssertOutOfBoundsWrapper
        if action is None:
            if not dead:
                raise AssertionError(_NOT_IN_SPACE)
        elif type(action) is int:
            if not 0 <= action < self.cols:
                raise AssertionError(_NOT_IN_SPACE)
        elif not self.action_space(agent).contains(action):
            raise AssertionError(_NOT_IN_SPACE)
        # TerminateIllegalWrapper, then the raw step
        if dead:
            return self._was_dead_step(action)
        try:
            status = self._game.play(action)
        except ValueError:
            return self._illegal_move(agent)
        if status:
            self._game_over(agent, status)
        else:
            self.agent_selection = _OTHER[agent]
        if self.render_mode == "human":
            self.render()

    def _illegal_move(self, agent) -> None:
        """TerminateIllegalWrapper's ending, step by step as it does it."""
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0)
        self.rewards[agent] = float(-1)
        self._accumulate_rewards()
        self._deads_step_first()


class _OrderEnforcingIterable(AECIterable):
    def __iter__(self) -> _OrderEnforcingIterator:
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(AECIterator):
    def __next__(self):
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not env._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        env._has_updated = False
        return env.agent_selection
