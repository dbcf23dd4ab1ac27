"""c4sim for Python: Connect Four for reinforcement learning.

- ``c4sim.VectorEnv``: many games stepped together, numpy in and out.
- ``c4sim.pettingzoo.connect_four_v3``: a drop-in for PettingZoo's env
  (``pip install "c4sim[pettingzoo]"``).
- ``c4sim.Solver`` and ``c4sim.AlphaZero``: perfect play and the trained
  network as oracles and opponents.
- ``c4sim.Game``: one game under the engine's referee.
- ``c4sim.run``: any scenario file (matches, tournaments, training) in-process.

Everything delegates to the Rust engine; see docs/python.md.
"""

from pathlib import Path as _Path

from . import _c4sim
from ._c4sim import AlphaZero, Game, Solver, VectorEnv, __version__, data_dir, run

# The shipped network, solver books and player profiles travel inside the
# package; relative paths the current directory lacks are looked up here.
_c4sim._set_data_dir(str(_Path(__file__).resolve().parent / "data"))

__all__ = ["AlphaZero", "Game", "Solver", "VectorEnv", "run", "data_dir", "__version__"]
