"""Your own agent inside c4sim: rated against a ladder, tested by SPRT,
played in the terminal or the browser.

An *agent* is anything with ``act(observation) -> column``, or with
``act_batch(observations) -> columns`` (then concurrent games are answered
in one call), or a plain function ``f(observation) -> column``. The
observation is the PettingZoo drop-in's: a dict with ``observation``
((rows, cols, 2) int8 from the side to move) and ``action_mask`` ((cols,)
int8); ``act_batch`` gets the same keys with a leading batch axis. Columns
count from 0.

Every function here builds an ordinary scenario and runs it with
:func:`c4sim.run`, the agent playing as ``{kind: agent, name: NAME}``: an
exception costs the agent that game (its message is in the game record's
``forfeits``), an illegal column is refused and re-asked up to
``limits.max_invalid_moves``, a move slower than the move time loses on time.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Sequence

from ._c4sim import run
from . import accuracy as _accuracy

#: The default ladder, weakest first: random, minimax at growing depths,
#: the solver's levels, the shipped AlphaZero (at 800 simulations a move,
#: to keep a rating run to minutes) and the perfect solver.
DEFAULT_LADDER: list[dict] = [
    {"kind": "random", "name": "random"},
    {"kind": "minimax", "depth": 2, "name": "minimax2"},
    {"kind": "minimax", "depth": 4, "name": "minimax4"},
    {"kind": "minimax", "depth": 6, "name": "minimax6"},
    {"use": "solver", "level": "easy", "name": "solver easy"},
    {"use": "solver", "level": "medium", "name": "solver medium"},
    {"use": "solver", "level": "hard", "name": "solver hard"},
    {"use": "alphazero", "simulations": 800, "name": "alphazero800"},
    {"use": "solver", "level": "perfect", "name": "solver perfect"},
]

#: The ladder player whose Elo is 0 by default.
DEFAULT_ANCHOR = "minimax4"


def _entry(p: Any, i: int) -> str:
    """A ladder entry as the YAML text of a scenario player entry: a dict
    as it is, a string as a flow mapping (``"{kind: minimax, depth: 3}"``)
    or a profile (``"minimax4"``, ``"players/mine.yaml"``)."""
    if isinstance(p, dict):
        return json.dumps(p)
    if isinstance(p, str) and p.strip().startswith("{"):
        return p.strip()
    if isinstance(p, str):
        return json.dumps({"use": p})
    raise TypeError(f"opponent {i}: a dict, a profile name or a flow mapping, not {type(p).__name__}")


def _tournament(name: str, opponents: Sequence[Any], games: int, *, schedule: str, openings: int,
                move_time: str | None, concurrency: int | None, seed: int, out: str, extra: dict) -> str:
    """The scenario's YAML text (JSON but for flow-mapping player entries)."""
    sc: dict = {
        "name": f"{name} rated by c4sim",
        "mode": "tournament",
        "seed": seed,
        "render": "none",
        "tournament": {"schedule": schedule, "games_per_pair": games, **extra},
        "report": {"dir": out, "formats": ["markdown", "json", "csv", "html"]},
    }
    if concurrency is not None:
        sc["tournament"]["concurrency"] = concurrency
    if openings:
        sc["tournament"]["openings"] = {"plies": openings}
    if move_time is not None:
        sc["limits"] = {"move_time": move_time}
    players = [json.dumps({"kind": "agent", "name": name})] + [_entry(p, i) for i, p in enumerate(opponents)]
    return json.dumps(sc)[:-1] + ', "players": [' + ", ".join(players) + "]}\n"


def _run_text(text: str, tmp: str, agents: dict, fresh: bool) -> dict:
    path = os.path.join(tmp, "scenario.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return run(path, agents=agents, fresh=fresh)


def _order_played(games: str, name: str) -> dict:
    """Each opponent's place in the order the gauntlet played them."""
    firsts: dict = {}
    with open(games, encoding="utf-8") as f:
        for line in f:
            try:
                g = json.loads(line)
            except ValueError:
                continue  # a half-written last line
            for p in g.get("players", []):
                if p != name:
                    firsts[p] = min(firsts.get(p, g["game"]), g["game"])
    return {p: i for i, p in enumerate(sorted(firsts, key=firsts.get))}


def rate(agent: Any, opponents: Sequence[Any] | None = None, games: int = 200, *, name: str = "agent",
         anchor: str | None = None, openings: int = 2, move_time: str | None = None, concurrency: int | None = None,
         seed: int = 0, out: str | None = None, positions: int = 90) -> dict:
    """Plays ``agent`` against each opponent (``None``: :data:`DEFAULT_LADDER`)
    ``games`` times (a gauntlet, colours swapped, from random
    ``openings``-ply openings), and returns::

        {"name": ..., "opponents": [{"name", "games", "wins", "draws", "losses", "score"}, ...],
         "elo": float, "elo_interval": [low, high], "elo_bound": None | "lower" | "upper",
         "anchor": {"player": ..., "elo": 0},
         "accuracy": {...}  # c4sim.accuracy.measure on `positions` labelled positions (0: skipped)
         "dir": str | None, "report": dict}

    Wins, draws and losses are the agent's. The Elo is the tournament's
    rating fit anchored on ``anchor`` (default ``minimax4``, else the first
    opponent) at 0, with its 95% interval; a perfect or zero score against
    everything gives a bound, not a value (``elo_bound``). With ``out`` the
    tournament's files (``report.json``, the HTML report, ``games.jsonl``)
    are kept there; a run there interrupted resumes."""
    ladder = list(DEFAULT_LADDER if opponents is None else opponents)
    if not ladder:
        raise ValueError("rate needs at least one opponent")
    if anchor is None:
        anchor = DEFAULT_ANCHOR if opponents is None else None
    with tempfile.TemporaryDirectory(prefix="c4sim-rate-") as tmp:
        sc = _tournament(name, ladder, games, schedule="gauntlet", openings=openings, move_time=move_time,
                         concurrency=concurrency, seed=seed, out=out or tmp, extra={})
        result = _run_text(sc, tmp, {name: agent}, out is None)
        report = result["report"]
        order = _order_played(os.path.join(result["dir"], "games.jsonl"), name)
    standings = {s["name"]: s for s in report["standings"]}
    if name not in standings:
        raise RuntimeError(f"the report has no standing for {name!r}")
    me = standings[name]
    # The opponents' names as the report gives them, in the order played.
    played = sorted((s for s in report["standings"] if s["name"] != name), key=lambda s: order.get(s["name"], 0))
    rows = [{
        "name": s["name"], "games": s["games"], "wins": s["losses"], "draws": s["draws"],
        "losses": s["wins"], "score": 1.0 - s["score"] if s["games"] else float("nan"),
    } for s in played]
    anchor_name = anchor if anchor is not None else rows[0]["name"]
    shift = standings[anchor_name]["elo"] if anchor_name in standings else 0.0
    err = me.get("elo_error") or 0.0
    elo = me["elo"] - shift
    acc = _accuracy.measure(agent, positions) if positions else None
    return {
        "name": name,
        "opponents": rows,
        "elo": elo,
        "elo_interval": [elo - err, elo + err],
        "elo_bound": me.get("bound"),
        "anchor": {"player": anchor_name, "elo": 0},
        "accuracy": acc,
        "dir": out,
        "report": report,
    }


def sprt(agent_new: Any, agent_old: Any, *, elo0: float = 0, elo1: float = 50, alpha: float = 0.05,
         beta: float = 0.05, games: int = 10000, openings: int = 2, move_time: str | None = None,
         concurrency: int | None = None, seed: int = 0, out: str | None = None) -> dict:
    """Is ``agent_new`` stronger than ``agent_old``? The tournaments' SPRT
    (H0: at most ``elo0`` Elo stronger, H1: at least ``elo1``; normalized
    Elo, game pairs with colours swapped), stopping at a decision or after
    ``games`` games. Returns the report's ``sprt`` dict (``result``:
    ``"H1"`` stronger, ``"H0"`` not, ``"none"`` undecided; the LLR, its
    bounds and the Elo estimate) with ``report`` and ``dir`` added."""
    with tempfile.TemporaryDirectory(prefix="c4sim-sprt-") as tmp:
        sc = _tournament("new", [{"kind": "agent", "name": "old"}], games, schedule="round-robin",
                         openings=openings, move_time=move_time, concurrency=concurrency, seed=seed,
                         out=out or tmp,
                         extra={"sprt": {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta}})
        result = _run_text(sc, tmp, {"new": agent_new, "old": agent_old}, out is None)
    report = result["report"]
    summary = dict(report.get("sprt") or {})
    summary["report"] = report
    summary["dir"] = out
    return summary


def play(agent: Any, *, name: str = "agent", first: str = "ask", render: str = "emoji") -> dict:
    """You against ``agent`` in the terminal (``first``: ``ask`` (you
    choose), ``you``, ``agent`` or ``random``); returns :func:`c4sim.run`'s
    result."""
    seats = [{"kind": "human", "name": "You"}, {"kind": "agent", "name": name}]
    which = {"ask": "ask", "you": "seat", "agent": "seat", "random": "random"}.get(first)
    if which is None:
        raise ValueError(f"first must be ask, you, agent or random, not {first!r}")
    if first == "agent":
        seats.reverse()
    return run({"mode": "match", "render": render, "match": {"games": 1, "first": which}, "players": seats},
               agents={name: agent})


def web(agent: Any, bind: str = "127.0.0.1:8080", *, name: str = "agent", move_time: str = "10s") -> dict:
    """Serves the web page with ``agent`` as the opponent (the analysis board
    included) until Ctrl-C: open ``http://BIND/``."""
    sc = {"mode": "web", "limits": {"move_time": move_time}, "web": {"bind": bind},
          "players": [{"kind": "agent", "name": name}]}
    return run(sc, agents={name: agent})
