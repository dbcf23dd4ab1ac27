"""c4sim.run: scenarios in-process (a match, a round-robin tournament with its
report and resume), broken scenarios, Ctrl-C, and the package used from
another directory. Game records are replayed in c4sim.Game, and the report's
standings are recounted from games.jsonl."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import c4sim

# scenarios/small_board.yaml, key for key (render: none keeps the output short)
SMALL_BOARD = {
    "name": "Small board (4×5, win 3)",
    "mode": "match",
    "seed": 3,
    "board": {"rows": 4, "cols": 5, "win_length": 3},
    "render": "none",
    "match": {"games": 4, "swap_colors": True},
    "players": [{"use": "minimax4", "name": "Minimax"}, {"use": "random", "name": "Randy"}],
}

SMALL_TOURNAMENT = {
    "name": "Python round-robin",
    "mode": "tournament",
    "seed": 5,
    "board": {"rows": 4, "cols": 5, "win_length": 3},
    "tournament": {"schedule": "round-robin", "games_per_pair": 4, "openings": {"plies": 1}, "concurrency": 2},
    "players": [
        {"use": "random", "name": "R"},
        {"use": "leftmost", "name": "L"},
        {"kind": "minimax", "depth": 2, "name": "M"},
    ],
}

# Two MCTS players with a heavy search: a few games a second on 2 cores, so
# Ctrl-C lands in the middle.
LONG_TOURNAMENT = {
    "name": "Python interrupt",
    "mode": "tournament",
    "seed": 11,
    "tournament": {"schedule": "round-robin", "games_per_pair": 24, "openings": {"plies": 2}, "concurrency": 2},
    "players": [
        {"kind": "mcts", "simulations": 10000, "name": "A"},
        {"kind": "mcts", "simulations": 10000, "name": "B"},
    ],
}
LONG_TOTAL = 24


def replay(moves, rows=6, cols=7, win=4):
    g = c4sim.Game(rows, cols, win)
    for c in moves:
        g.play(c)
    return g


def records(folder: Path):
    with open(folder / "games.jsonl") as f:
        return [json.loads(line) for line in f if line.strip()]


def without_timing(report):
    """The report but for the clock (ms/move differs between runs)."""
    r = copy.deepcopy(report)
    for s in r.get("standings", []):
        s.pop("ms_per_move", None)
    return r


# --------------------------------------------------------------------------
# a match


def _check_match(result, players=("Minimax", "Randy"), games=4, shape=(4, 5, 3)):
    assert result["mode"] == "match"
    recs = result["games"]
    assert isinstance(recs, list) and len(recs) == games
    assert [g["game"] for g in recs] == list(range(1, games + 1))
    for k, g in enumerate(recs):
        # swap_colors: the seating rotates each game
        expected = list(players) if k % 2 == 0 else list(reversed(players))
        assert g["players"] == expected
        end = replay(g["moves"], *shape)
        assert end.over, g
        winner = g["outcome"]["winner"]
        assert end.winner == winner, g
        if winner is not None:
            assert g["outcome"]["reason"] == "WIN"
            assert winner == (len(g["moves"]) - 1) % 2


def test_match_from_a_file(repo):
    text = (repo / "scenarios" / "small_board.yaml").read_text()
    for line in ("mode: match", "seed: 3", "games: 4", "swap_colors: true", "use: minimax4", "use: random"):
        assert line in text, f"scenarios/small_board.yaml changed: {line}"
    result = c4sim.run(repo / "scenarios" / "small_board.yaml")
    assert set(result) == {"mode", "games"}
    _check_match(result)
    # the same file as a str path: the same seeded games
    again = c4sim.run(str(repo / "scenarios" / "small_board.yaml"))
    assert [g["moves"] for g in again["games"]] == [g["moves"] for g in result["games"]]


def test_match_from_a_dict_plays_the_files_games(repo):
    from_dict = c4sim.run(SMALL_BOARD)
    _check_match(from_dict)
    from_file = c4sim.run(repo / "scenarios" / "small_board.yaml")
    assert [g["moves"] for g in from_dict["games"]] == [g["moves"] for g in from_file["games"]]
    assert [g["outcome"] for g in from_dict["games"]] == [g["outcome"] for g in from_file["games"]]


def test_minimax_beats_random_on_the_small_board():
    result = c4sim.run(SMALL_BOARD)
    names = [g["players"][g["outcome"]["winner"]] for g in result["games"] if g["outcome"]["winner"] is not None]
    assert names.count("Minimax") >= 3, names


# --------------------------------------------------------------------------
# a tournament


def _check_tournament_folder(folder: Path, report, total, shape=(4, 5, 3)):
    assert report["total_games"] == total
    assert report["finished_games"] == total
    recs = records(folder)
    numbers = [r["game"] for r in recs]
    assert sorted(numbers) == list(range(1, total + 1)), "games missing or recorded twice"
    tally = {s["name"]: Counter() for s in report["standings"]}
    for r in recs:
        end = replay(r["moves"], *shape)
        assert end.over, r
        assert r["moves"][: len(r["opening"])] == r["opening"]
        if end.winner is None:
            assert r["winner"] is None
            for p in r["players"]:
                tally[p]["draws"] += 1
        else:
            assert r["winner"] == r["players"][end.winner], r
            tally[r["winner"]]["wins"] += 1
            tally[r["players"][1 - end.winner]]["losses"] += 1
    for s in report["standings"]:
        t = tally[s["name"]]
        assert (s["wins"], s["draws"], s["losses"]) == (t["wins"], t["draws"], t["losses"]), s["name"]
        assert s["games"] == s["wins"] + s["draws"] + s["losses"]


def test_round_robin_returns_the_written_report(tmp_path):
    out = tmp_path / "rr"
    result = c4sim.run(SMALL_TOURNAMENT, out=out)
    assert result["mode"] == "tournament"
    assert set(result) == {"mode", "dir", "report"}
    assert Path(result["dir"]).resolve() == out.resolve()
    with open(out / "report.json") as f:
        written = json.load(f)
    assert result["report"] == written
    assert written["schedule"] == "round-robin"
    # 3 pairs, 4 games each
    _check_tournament_folder(out, written, 12)
    assert sorted(s["name"] for s in written["standings"]) == ["L", "M", "R"]


def test_a_finished_tournament_resumes_without_new_games(tmp_path):
    out = tmp_path / "rr"
    first = c4sim.run(SMALL_TOURNAMENT, out=out)
    before = records(out)
    second = c4sim.run(SMALL_TOURNAMENT, out=out)
    assert records(out) == before
    assert without_timing(second["report"]) == without_timing(first["report"])
    # fresh starts over: the same seeded games, recorded once
    third = c4sim.run(SMALL_TOURNAMENT, out=out, fresh=True)
    assert [r["moves"] for r in sorted(records(out), key=lambda r: r["game"])] == [
        r["moves"] for r in sorted(before, key=lambda r: r["game"])
    ]
    _check_tournament_folder(out, third["report"], 12)


def test_json_events_do_not_change_the_result(tmp_path, capfd):
    result = c4sim.run(SMALL_TOURNAMENT, out=tmp_path / "j", json=True)
    assert result["mode"] == "tournament"
    _check_tournament_folder(tmp_path / "j", result["report"], 12)
    out = capfd.readouterr().out
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert any(e.get("event") == "summary" for e in events)


def test_a_folder_of_another_tournament_is_refused(tmp_path):
    out = tmp_path / "rr"
    c4sim.run(SMALL_TOURNAMENT, out=out)
    other = copy.deepcopy(SMALL_TOURNAMENT)
    other["seed"] = 6
    with pytest.raises(ValueError, match="another tournament|fresh"):
        c4sim.run(other, out=out)


# --------------------------------------------------------------------------
# broken scenarios


def _broken(change):
    d = copy.deepcopy(SMALL_BOARD)
    change(d)
    return d


@pytest.mark.parametrize(
    "scenario,pattern",
    [
        (_broken(lambda d: d["match"].update({"gmes": 2})), r"gmes.*games"),
        (_broken(lambda d: d.update({"mode": "matchh"})), r"matchh"),
        (_broken(lambda d: d.update({"players": [{"kind": "nope"}, {"kind": "random"}]})), r"nope"),
        (_broken(lambda d: d.update({"players": [{"use": "no_such_profile"}, {"kind": "random"}]})), r"no_such_profile"),
        (_broken(lambda d: d["board"].update({"win_length": 9})), r"win_length"),
        (_broken(lambda d: d["match"].update({"games": "many"})), r"games"),
    ],
    ids=["typo", "mode", "kind", "profile", "board", "games-type"],
)
def test_a_broken_scenario_is_a_value_error(scenario, pattern):
    with pytest.raises(ValueError, match=pattern):
        c4sim.run(scenario)


def test_a_missing_or_invalid_file_is_a_value_error(tmp_path):
    missing = tmp_path / "none.yaml"
    with pytest.raises(ValueError, match="none.yaml"):
        c4sim.run(missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("mode: match\nplayers: [\n")
    with pytest.raises(ValueError, match="bad.yaml"):
        c4sim.run(str(bad))


@pytest.mark.parametrize("scenario", [5, [1, 2], None], ids=["int", "list", "none"])
def test_a_scenario_of_a_wrong_type_is_a_type_error(scenario):
    with pytest.raises(TypeError):
        c4sim.run(scenario)


# --------------------------------------------------------------------------
# Ctrl-C

INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import c4sim
    scenario = json.loads(sys.argv[1])
    try:
        result = c4sim.run(scenario, out=sys.argv[2])
    except KeyboardInterrupt as e:
        print("INTERRUPTED", e, flush=True)
        sys.exit(42)
    print("FINISHED", result["report"]["finished_games"], flush=True)
    """
)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """Runs the long tournament in a subprocess, sends SIGINT once its first
    game is recorded, and waits for the process to end."""
    out = tmp_path_factory.mktemp("interrupt") / "t"
    games = out / "games.jsonl"
    p = subprocess.Popen(
        [sys.executable, "-c", INTERRUPT_SCRIPT, json.dumps(LONG_TOURNAMENT), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    start = time.monotonic()
    try:
        while time.monotonic() - start < 15:
            if games.exists() and games.read_text().count("\n") >= 1:
                break
            if p.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(0.1)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            stdout, stderr = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            pytest.fail(f"c4sim.run did not stop within 10 s of SIGINT: {stderr[-2000:]}")
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return {"out": out, "rc": p.returncode, "stdout": stdout, "stderr": stderr, "took": took}


def test_ctrl_c_stops_a_tournament_quickly(interrupted):
    r = interrupted
    assert r["took"] < 5, f"took {r['took']:.1f} s to stop"
    assert "FINISHED" not in r["stdout"], "the tournament finished before SIGINT: make it longer"
    assert r["rc"] != 0
    assert "INTERRUPTED" in r["stdout"] or "KeyboardInterrupt" in r["stderr"], r["stderr"][-2000:]
    assert "PanicException" not in r["stderr"]
    saved = records(r["out"])
    assert 1 <= len(saved) < LONG_TOTAL


def test_ctrl_c_raises_one_catchable_keyboard_interrupt(interrupted):
    """One Ctrl-C is one KeyboardInterrupt: code that catches it around
    c4sim.run must not get a second one in its handler."""
    r = interrupted
    assert r["rc"] == 42 and "INTERRUPTED" in r["stdout"], (
        f"exit code {r['rc']}, stdout {r['stdout'][-500:]!r}, stderr {r['stderr'][-2000:]}"
    )


def test_an_interrupted_tournament_resumes(interrupted):
    out = interrupted["out"]
    done = {rec["game"]: rec for rec in records(out)}
    assert 1 <= len(done) < LONG_TOTAL
    result = c4sim.run(LONG_TOURNAMENT, out=out)
    _check_tournament_folder(out, result["report"], LONG_TOTAL, shape=(6, 7, 4))
    after = {rec["game"]: rec for rec in records(out)}
    # the games saved before Ctrl-C are kept as they were
    for k, rec in done.items():
        assert after[k]["moves"] == rec["moves"]
    with open(out / "report.json") as f:
        assert json.load(f) == result["report"]


# --------------------------------------------------------------------------
# the package from another directory


def test_import_from_another_directory(tmp_path):
    script = textwrap.dedent(
        """
        import json, os
        import c4sim
        d = c4sim.data_dir()
        env = c4sim.VectorEnv(2, opponent="minimax2")
        env.reset()
        env.step(env.random_actions())
        print(json.dumps({
            "file": c4sim.__file__,
            "data": d,
            "models": os.path.isdir(os.path.join(d, "models")),
            "players": os.path.isdir(os.path.join(d, "players")),
            "solver_profile": os.path.isfile(os.path.join(d, "players", "solver.yaml")),
            "network": os.path.isdir(os.path.join(d, "models", "connect4-6x7")),
            "empty": c4sim.Solver(threads=1).scores([""]).tolist(),
            "cwd": os.getcwd(),
        }))
        """
    )
    p = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr[-3000:]
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert Path(info["cwd"]).resolve() == tmp_path.resolve()
    assert info["models"] and info["players"] and info["solver_profile"] and info["network"], info
    assert Path(info["data"]).resolve() != tmp_path.resolve()
    # the score book is found from here (the empty board is instant with it)
    assert info["empty"] == [[-2, -1, 0, 1, 0, -1, -2]]
    assert os.path.samefile(info["data"], c4sim.data_dir())


def test_the_package_data_holds_every_shipped_profile_the_network_and_the_labelled_sets():
    """The wheel carries the shipped files through links in
    python/c4sim/data: a profile added to players/ needs its link too."""
    data = Path(c4sim.data_dir())
    repo_players = {p.name for p in (Path(__file__).resolve().parents[2] / "players").iterdir()}
    shipped = {p.name for p in (data / "players").iterdir() if p.name != "__pycache__"}
    assert shipped == repo_players - {"__pycache__"}
    for name in ("meta.json", "model.safetensors"):
        assert (data / "models" / "connect4-6x7" / name).is_file()
    for name in ("solver-book-6x7.bin", "solver-scores-6x7.bin"):
        assert (data / "models" / name).is_file()
    # c4sim.rate's and c4sim.accuracy's labelled positions.
    assert (data / "benches" / "accuracy" / "sets-v1.jsonl").is_file()
