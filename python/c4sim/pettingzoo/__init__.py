"""PettingZoo environments played by c4sim's engine (an optional extra).

``from c4sim.pettingzoo import connect_four_v3`` is a drop-in for
``pettingzoo.classic.connect_four_v3``. Needs PettingZoo:
``pip install "c4sim[pettingzoo]"``; ``import c4sim`` alone never imports it.
"""

try:
    import pettingzoo as _pettingzoo  # noqa: F401
except ImportError as err:
    raise ImportError(
        f"c4sim.pettingzoo needs PettingZoo ({err}); install it with: "
        'pip install "c4sim[pettingzoo]"'
    ) from err

from . import connect_four_v3

__all__ = ["connect_four_v3"]
