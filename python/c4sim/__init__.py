"""c4sim for Python: Connect Four for reinforcement learning.

- ``c4sim.VectorEnv``: many games stepped together, numpy in and out.
- ``c4sim.pettingzoo.connect_four_v3``: a drop-in for PettingZoo's env
  (``pip install "c4sim[pettingzoo]"``).
- ``c4sim.Solver`` and ``c4sim.AlphaZero``: perfect play and the trained
  network as oracles and opponents.
- ``c4sim.Game``: one game under the engine's referee.
- ``c4sim.run``: any scenario file (matches, tournaments, training) in-process,
  with your own agents as players (``{kind: agent, name: NAME}``).
- ``c4sim.rate``, ``c4sim.sprt``, ``c4sim.play``, ``c4sim.web``: your agent
  rated on a ladder, tested for progress, played in the terminal or browser.

Everything delegates to the Rust engine; see docs/python.md.
"""

from pathlib import Path as _Path

from . import _c4sim
from ._c4sim import AlphaZero, Game, Solver, VectorEnv, __version__, data_dir, run
from . import accuracy
from .agents import play, rate, sprt, web

# The shipped network, solver books and player profiles travel inside the
# package; relative paths the current directory lacks are looked up here.
_c4sim._set_data_dir(str(_Path(__file__).resolve().parent / "data"))

__all__ = ["AlphaZero", "Game", "Solver", "VectorEnv", "run", "rate", "sprt", "play", "web", "accuracy",
           "data_dir", "__version__"]
