"""Python agents inside c4sim: `{kind: agent}` players, faults that cost
the agent its own game, batching across concurrent games, rate and sprt."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import c4sim


def first_legal(obs):
    return int(np.flatnonzero(obs["action_mask"])[0])


class First:
    """Plays its first legal column; checks what it is shown."""

    def __init__(self):
        self.seen = 0

    def act(self, obs):
        assert obs["observation"].shape == (6, 7, 2) and obs["observation"].dtype == np.int8
        assert obs["action_mask"].shape == (7,) and obs["action_mask"].dtype == np.int8
        self.seen += 1
        return first_legal(obs)


class Batched:
    """Answers every waiting game at once; remembers its batch sizes."""

    def __init__(self):
        self.sizes = []

    def act_batch(self, obs):
        n = len(obs["action_mask"])
        assert obs["observation"].shape == (n, 6, 7, 2)
        self.sizes.append(n)
        time.sleep(0.002)  # long enough for other games' questions to queue
        return np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])


def match(agent, opponent="leftmost", games=2, **limits):
    sc = {"render": "none", "match": {"games": games},
          "players": [{"kind": "agent", "name": "mine"}, {"kind": opponent}]}
    if limits:
        sc["limits"] = limits
    return c4sim.run(sc, agents={"mine": agent})["games"]


def test_an_agent_object_plays_legal_moves_from_its_observations():
    a = First()
    games = match(a, games=3)
    assert len(games) == 3
    assert a.seen > 0
    for g in games:
        assert g["outcome"]["reason"] in ("WIN", "TIE")
        assert "forfeits" not in g


def test_a_plain_function_is_an_agent():
    games = match(first_legal, games=1)
    assert games[0]["outcome"]["reason"] in ("WIN", "TIE")


def test_an_exception_forfeits_only_that_game_with_its_message():
    calls = []

    def flaky(obs):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("boom")
        return first_legal(obs)

    games = match(flaky, games=2)
    g1, g2 = games
    assert g1["outcome"]["reason"] == "FORFEIT" and g1["outcome"]["winner"] == 1
    assert g1["forfeits"] == [{"seat": 0, "why": "agent `mine` failed: ValueError: boom"}]
    assert g2["outcome"]["reason"] in ("WIN", "TIE")


def test_illegal_columns_are_refused_and_reasked_then_lose():
    tries = []

    def stubborn(obs):
        tries.append(1)
        return 99

    games = match(stubborn, games=1, max_invalid_moves=3)
    assert games[0]["outcome"]["reason"] == "TOO_MANY_INVALID"
    assert len(tries) == 3


def test_an_answer_that_is_not_a_column_is_refused():
    games = match(lambda obs: "left", games=1, max_invalid_moves=2)
    assert games[0]["outcome"]["reason"] == "TOO_MANY_INVALID"


def test_a_slow_agent_loses_on_time():
    def slow(obs):
        time.sleep(0.6)
        return first_legal(obs)

    games = match(slow, games=1, move_time="100ms")
    assert games[0]["outcome"]["reason"] == "TIMEOUT"
    assert games[0]["outcome"]["winner"] == 1


def test_concurrent_games_reach_a_batched_agent_together(tmp_path):
    b = Batched()
    sc = {"mode": "tournament", "render": "none",
          "tournament": {"games_per_pair": 24, "concurrency": 8},
          "report": {"dir": str(tmp_path)},
          "players": [{"kind": "agent", "name": "b"}, {"kind": "minimax", "depth": 1}]}
    r = c4sim.run(sc, agents={"b": b}, fresh=True)
    assert r["report"]["finished_games"] == 24
    assert max(b.sizes) > 1, b.sizes
    assert sum(b.sizes) > len(b.sizes)


def test_unknown_names_and_bad_agents_are_explained():
    sc = {"render": "none", "players": [{"kind": "agent", "name": "nobody"}, {"kind": "random"}]}
    with pytest.raises(ValueError, match="no agent named `nobody`"):
        c4sim.run(sc, agents={"someone": first_legal})
    with pytest.raises(TypeError, match="neither act"):
        c4sim.run(sc, agents={"nobody": 42})


def test_rate_returns_the_documented_keys_and_agrees_with_the_files(tmp_path):
    out = tmp_path / "rating"
    r = c4sim.rate(first_legal, opponents=["random", {"kind": "minimax", "depth": 2, "name": "mm2"},
                                           "{kind: leftmost, name: lefty}"],
                   games=6, out=str(out), positions=18)
    assert set(r) >= {"name", "opponents", "elo", "elo_interval", "elo_bound", "anchor", "accuracy", "dir", "report"}
    assert [o["name"] for o in r["opponents"]] == ["random", "mm2", "lefty"]
    assert r["anchor"] == {"player": "random", "elo": 0}
    lo, hi = r["elo_interval"]
    assert lo <= r["elo"] <= hi
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines() if line.strip()]
    for o in r["opponents"]:
        mine = [g for g in games if o["name"] in g["players"]]
        assert o["games"] == len(mine) == 6
        wins = sum(g["winner"] == r["name"] for g in mine)
        losses = sum(g["winner"] == o["name"] for g in mine)
        assert (o["wins"], o["losses"], o["draws"]) == (wins, losses, len(mine) - wins - losses)
        assert o["score"] == pytest.approx((wins + 0.5 * o["draws"]) / len(mine))
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk["standings"] == r["report"]["standings"]
    acc = r["accuracy"]
    assert acc["positions"] == 18 and 0 <= acc["mistakes"] <= acc["not_best"] <= 18
    assert (out / "report.html").is_file()


def test_accuracy_counts_a_perfect_agent_as_perfect():
    records, sets = c4sim.accuracy.load_labelled()
    chosen = c4sim.accuracy.subset(records, sets, 27)
    labels = c4sim.accuracy.labels(chosen)
    best = [int(np.argmax(np.where(row == c4sim.Solver.FULL, -10**6, row))) for row in labels]
    r = c4sim.accuracy.judge(best, labels)
    assert (r["positions"], r["mistakes"], r["not_best"]) == (27, 0, 0)
    worst = [int(np.argmin(np.where(row == c4sim.Solver.FULL, 10**6, row))) for row in labels]
    assert c4sim.accuracy.judge(worst, labels)["mistakes"] == 27  # every set position has a W/D/L choice


def test_sprt_says_a_stronger_agent_is_stronger():
    net = c4sim.AlphaZero()

    class Network:
        """The shipped network's policy, greedily, a batch at a time."""

        def act_batch(self, obs):
            policy, _ = net.policy_value(obs["observation"])
            return np.argmax(np.where(obs["action_mask"] == 1, policy, -1.0), axis=1)

    s = c4sim.sprt(Network(), first_legal, elo0=0, elo1=100, games=400)
    assert s["result"] == "H1", {k: v for k, v in s.items() if k != "report"}
    assert s["candidate"] == "new" and s["baseline"] == "old"


AGENT_TOURNAMENT_SCRIPT = r"""
import json, sys, time
import numpy as np
import c4sim

def slow(obs):
    time.sleep(0.01)
    return int(np.flatnonzero(obs["action_mask"])[0])

sc = {"mode": "tournament", "render": "none", "seed": 3,
      "tournament": {"games_per_pair": 400, "concurrency": 2},
      "report": {"dir": sys.argv[1]},
      "players": [{"kind": "agent", "name": "slow"}, {"kind": "minimax", "depth": 1}]}
try:
    c4sim.run(sc, agents={"slow": slow})
    print("FINISHED")
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    sys.exit(42)
"""


def test_ctrl_c_stops_a_run_with_an_agent_and_it_resumes(tmp_path):
    import signal
    import subprocess
    import sys

    out = tmp_path / "t"
    games = out / "games.jsonl"
    p = subprocess.Popen([sys.executable, "-c", AGENT_TOURNAMENT_SCRIPT, str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and p.poll() is None:
            if games.exists() and games.read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=15)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 42 and "INTERRUPTED" in stdout, stderr[-2000:]
    saved = [json.loads(line) for line in games.read_text().splitlines() if line.strip().endswith("}")]
    assert 2 <= len(saved) < 400
    # The same run again resumes: it keeps the saved games and plays the rest.
    sc = {"mode": "tournament", "render": "none", "seed": 3,
          "tournament": {"games_per_pair": 400, "concurrency": 2}, "report": {"dir": str(out)},
          "players": [{"kind": "agent", "name": "slow"}, {"kind": "minimax", "depth": 1}]}
    r = c4sim.run(sc, agents={"slow": first_legal})
    assert r["report"]["finished_games"] == 400
    after = {g["game"]: g for g in (json.loads(line) for line in games.read_text().splitlines() if line.strip())}
    assert len(after) == 400
    for g in saved:
        assert after[g["game"]]["moves"] == g["moves"]


def test_play_puts_a_person_against_the_agent_in_the_terminal():
    import subprocess
    import sys

    script = ("import numpy as np, c4sim\n"
              "r = c4sim.play(lambda o: int(np.flatnonzero(o['action_mask'])[0]), first='you', render='ascii')\n"
              "print('RESULT', r['games'][0]['outcome']['reason'], r['games'][0]['outcome']['winner'])\n")
    p = subprocess.run([sys.executable, "-c", script], input="4\n4\n4\n4\n", capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    # You (seat 0) stack column 4; the agent plays column 1 each time: four in a row.
    assert "RESULT WIN 0" in p.stdout, p.stdout[-2000:]


def test_the_default_ladder_runs_from_random_to_the_perfect_solver():
    r = c4sim.rate(first_legal, games=2, positions=0)
    assert [o["name"] for o in r["opponents"]] == [p["name"] for p in c4sim.agents.DEFAULT_LADDER]
    assert r["opponents"][0]["name"] == "random" and r["opponents"][-1]["name"] == "solver perfect"
    assert all(o["games"] == 2 for o in r["opponents"])
    assert r["anchor"] == {"player": "minimax4", "elo": 0} and r["accuracy"] is None
    # The perfect solver never loses to a player that only stacks the first open column.
    assert r["opponents"][-1]["wins"] == 0
