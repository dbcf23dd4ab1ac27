"""c4sim.pettingzoo.connect_four_v3 against PettingZoo's own connect_four_v3.

PettingZoo's API and seed tests, its render test, and move-by-move comparisons
with ``pettingzoo.classic.connect_four_v3`` (observations, masks, rewards,
terminations, truncations, infos, agent_selection, warnings and exceptions).
Everything here needs PettingZoo and skips without it, except the check of
the ImportError that ``c4sim.pettingzoo`` raises when PettingZoo is missing.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import pickle
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

HAVE_PETTINGZOO = importlib.util.find_spec("pettingzoo") is not None
needs_pettingzoo = pytest.mark.skipif(not HAVE_PETTINGZOO, reason="pettingzoo is not installed")


def _pettingzoo_version() -> tuple[int, ...]:
    if not HAVE_PETTINGZOO:
        return (0,)
    version = importlib.metadata.version("pettingzoo")
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


# The drop-in follows PettingZoo 1.25 and later (1.27's behaviour): before
# 1.25, TerminateIllegalWrapper kept the state it set after an illegal move on
# itself instead of on the env, so its env() played illegal moves differently.
needs_pettingzoo_1_25 = pytest.mark.skipif(
    _pettingzoo_version() < (1, 25), reason="compares with PettingZoo >= 1.25's wrappers"
)
# importing pettingzoo.classic's modules (pettingzoo.test does) warns that this API is deprecated
OLD_API_WARNING = "The old environment creation API"
pytestmark = pytest.mark.filterwarnings(f"ignore:{OLD_API_WARNING}:DeprecationWarning")

if HAVE_PETTINGZOO:
    from gymnasium.utils.env_checker import data_equivalence
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", OLD_API_WARNING, DeprecationWarning)
        from pettingzoo.test import api_test, seed_test
        from pettingzoo.test.render_test import render_test
        from pettingzoo.test.seed_test import seed_action_spaces, seed_observation_spaces

    from c4sim.pettingzoo import connect_four_v3 as c4


@pytest.fixture(scope="module")
def pz():
    """PettingZoo's own connect_four_v3 (its module imports pygame)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", OLD_API_WARNING, DeprecationWarning)
        from pettingzoo.classic import connect_four_v3
    return connect_four_v3


@pytest.fixture(autouse=True)
def _quiet_env_logger():
    """PettingZoo's EnvLogger prints each warning; keep the queue, drop the print."""
    if not HAVE_PETTINGZOO:
        yield
        return
    EnvLogger.suppress_output()
    EnvLogger.flush()
    try:
        yield
    finally:
        EnvLogger.flush()
        EnvLogger.unsuppress_output()


OTHER_BOARDS = [(5, 6, 4), (4, 4, 3)]
ILLEGAL_WARNING = (
    "[WARNING]: Illegal move made, game terminating with current player losing. "
    "\nobs['action_mask'] contains a mask of all legal moves that can be chosen."
)
STEP_AFTER_DONE_WARNING = (
    "[WARNING]: step() called after all agents are terminated or truncated. Should reset() first."
)


# ---------------------------------------------------------------- imports


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_c4sim_does_not_import_pettingzoo():
    r = _python(
        "import sys, c4sim\n"
        "assert 'pettingzoo' not in sys.modules, 'import c4sim imported pettingzoo'\n"
    )
    assert r.returncode == 0, r.stderr


def test_missing_pettingzoo_says_how_to_install():
    r = _python(
        "import sys\n"
        "sys.modules['pettingzoo'] = None  # as if it were not installed\n"
        "try:\n"
        "    from c4sim.pettingzoo import connect_four_v3\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    assert r.returncode == 0, r.stderr
    assert 'pip install "c4sim[pettingzoo]"' in r.stdout


# ---------------------------------------------------------------- PettingZoo's own tests


def _api_test_warnings(env) -> set[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=1000)
    return {str(w.message) for w in caught}


# PettingZoo's connect_four_v3 draws this one too (its first observation is an empty board).
EXPECTED_API_WARNINGS = {"Observation numpy array is all zeros."}


@needs_pettingzoo
@pytest.mark.parametrize("make", ["env", "raw_env"])
@pytest.mark.parametrize("render_mode", [None, "human", "ansi"])
def test_api_test(make, render_mode, capsys):
    env = getattr(c4, make)(render_mode=render_mode)
    assert str(env) == "connect_four_v3"
    assert _api_test_warnings(env) <= EXPECTED_API_WARNINGS
    out = capsys.readouterr().out
    assert "Passed API test" in out
    if render_mode == "human":
        assert "1234567" in out.replace(" ", "")  # boards were printed


@needs_pettingzoo
@pytest.mark.parametrize("size", OTHER_BOARDS, ids=lambda s: "%dx%dw%d" % s)
@pytest.mark.parametrize("make", ["env", "raw_env"])
def test_api_test_other_boards(make, size, capsys):
    rows, cols, win = size
    env = getattr(c4, make)(rows=rows, cols=cols, win_length=win)
    assert _api_test_warnings(env) <= EXPECTED_API_WARNINGS


@needs_pettingzoo
@pytest.mark.parametrize("make", ["env", "raw_env"])
def test_seed_test(make):
    seed_test(getattr(c4, make), 50)
    for rows, cols, win in OTHER_BOARDS:
        seed_test(functools.partial(getattr(c4, make), rows=rows, cols=cols, win_length=win), 50)


@needs_pettingzoo
def test_render_test(capsys):
    # PettingZoo's render_test over every mode in metadata["render_modes"].
    render_test(c4.env, custom_tests={"ansi": lambda s: isinstance(s, str) and len(s.splitlines()) >= 6})


@needs_pettingzoo
def test_max_cycles_test_does_not_apply():
    # PettingZoo runs max_cycles_test only for non-classic envs (it needs a
    # parallel_env and a max_cycles keyword); connect_four_v3 has neither.
    # (bombardment_test does not apply either: it fails on PettingZoo's own
    # connect_four_v3, whose observations are dicts.)
    assert c4.raw_env.metadata["is_parallelizable"] is False
    assert not hasattr(c4, "parallel_env")


# ---------------------------------------------------------------- static parity


@needs_pettingzoo
def test_spaces_metadata_and_agents_match_pettingzoo(pz):
    for make in ("env", "raw_env"):
        ours, theirs = getattr(c4, make)(), getattr(pz, make)()
        assert ours.possible_agents == theirs.possible_agents == ["player_0", "player_1"]
        for key in ("name", "is_parallelizable", "render_fps"):
            assert ours.metadata[key] == theirs.metadata[key]
        for agent in ours.possible_agents:
            assert ours.observation_space(agent) == theirs.observation_space(agent)
            assert ours.action_space(agent) == theirs.action_space(agent)
            assert ours.observation_space(agent) is ours.observation_space(agent)
            assert ours.action_space(agent) is ours.action_space(agent)
        # one space object per agent (seeded separately by seed_test)
        assert ours.action_space("player_0") is not ours.action_space("player_1")
        assert ours.observation_space("player_0") is not ours.observation_space("player_1")
        assert str(ours) == str(theirs) == "connect_four_v3"
        assert ours.unwrapped is ours
        assert ours.max_num_agents == 2
    assert isinstance(c4.env(), c4.raw_env)


@needs_pettingzoo
def test_observation_layout():
    env = c4.env()
    env.reset()
    for col in (3, 3, 4):  # player_0 at (5,3) and (5,4); player_1 at (4,3)
        env.step(col)
    obs, *_ = env.last()  # player_1 to move
    assert env.agent_selection == "player_1"
    o = obs["observation"]
    assert o.shape == (6, 7, 2) and o.dtype == np.int8
    assert o[4, 3, 0] == 1 and o[5, 3, 1] == 1 and o[5, 4, 1] == 1 and o.sum() == 3
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].tolist() == [1] * 7
    other = env.observe("player_0")
    assert other["observation"][5, 3, 0] == 1 and other["observation"][4, 3, 1] == 1
    assert other["action_mask"].tolist() == [0] * 7
    assert env.unwrapped.board[5 * 7 + 3] == 1 and env.unwrapped.board[4 * 7 + 3] == 2


# ---------------------------------------------------------------- move-by-move comparison


def _call(fn, *args, **kwargs):
    """(result, warnings logged by PettingZoo's EnvLogger) or the exception's type and text."""
    EnvLogger.flush()
    try:
        out = ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - comparing what each env raises
        out = ("raised", type(e), str(e))
    logged = list(EnvLogger.mqueue)
    EnvLogger.flush()
    return out, logged


def _same(a, b, what):
    assert type(a) is type(b), f"{what}: {a!r} vs {b!r}"
    if isinstance(a, tuple) and a and a[0] == "ok":
        assert data_equivalence(a[1], b[1], exact=True), f"{what}: {a!r} vs {b!r}"
    elif isinstance(a, (tuple, list, dict)) or a is None:
        assert data_equivalence(a, b, exact=True), f"{what}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{what}: {a!r} vs {b!r}"


def _both(ref, ours, what, fn):
    r, o = _call(fn, ref), _call(fn, ours)
    _same(r[0], o[0], what)
    assert r[1] == o[1], f"{what} logged {r[1]} vs {o[1]}"
    return r[0]


def _state(env):
    return (
        env.agent_selection,
        env.num_agents,
        list(env.agents),
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
        dict(env.truncations),
        dict(env.infos),
        env.unwrapped.board,
    )


def _same_state(ref, ours, what):
    a, b = _state(ref), _state(ours)
    assert data_equivalence(a, b, exact=True), f"{what}: {a} vs {b}"


def _compare_games(ref, ours, games, seed, *, wrapped, cols=7):
    """Plays `games` complete random games move by move in both envs, with the
    same choices, checking after every call that both agree. With `wrapped`,
    also makes illegal moves, out-of-range actions, non-None actions for dead
    agents, steps after the end and resets in the middle of games."""
    rnd = random.Random(seed)
    finished = illegal = restarts = dead_restarts = 0
    game = 0
    while finished < games:
        _both(ref, ours, "reset", lambda e: e.reset(seed=game))
        game += 1
        _same_state(ref, ours, "after reset")
        restarted = False
        for a_ref, a_ours in zip(ref.agent_iter(), ours.agent_iter()):
            assert a_ref == a_ours
            r = _both(ref, ours, "last()", lambda e: e.last())
            _obs, _rew, term, trunc, _info = r[1]
            roll = rnd.random()
            if roll < 0.1:
                other = "player_1" if a_ref == "player_0" else "player_0"
                _both(ref, ours, "observe(other)", lambda e: e.observe(other))
            elif roll < 0.15:
                _both(ref, ours, "observe(agent)", lambda e: e.observe(a_ref))
            elif roll < 0.2:
                _both(ref, ours, "last(observe=False)", lambda e: e.last(observe=False))
            # reset in the middle of a game, or of its end (PettingZoo's
            # _skip_agent_selection then outlives the reset)
            if wrapped and rnd.random() < (0.03 if term or trunc else 0.003):
                restarts += 1
                dead_restarts += bool(term or trunc)
                restarted = True
                break
            if term or trunc:
                if wrapped and rnd.random() < 0.1:  # a column for a dead agent
                    _both(ref, ours, "dead step(3)", lambda e: e.step(3))
                action = None
            else:
                mask = _obs["action_mask"]
                full = [c for c in range(cols) if not mask[c]]
                if wrapped and rnd.random() < 0.02:
                    bad = rnd.choice([None, -1, cols, cols + 5, np.int64(cols), 2.0])
                    _both(ref, ours, f"step({bad!r})", lambda e: e.step(bad))
                if wrapped and full and rnd.random() < 0.08:
                    action = rnd.choice(full)
                    illegal += 1
                else:
                    legal = np.flatnonzero(mask)
                    action = int(legal[rnd.randrange(len(legal))])
                if rnd.random() < 0.1:
                    action = np.int64(action)
            _both(ref, ours, f"step({action!r})", lambda e: e.step(action))
            _same_state(ref, ours, f"after step({action!r})")
        if restarted:
            continue
        assert not ref.agents and not ours.agents
        _same_state(ref, ours, "after the game")
        if wrapped and rnd.random() < 0.05:
            _both(ref, ours, "step after the end", lambda e: e.step(None))
            _same_state(ref, ours, "after a step after the end")
        _both(ref, ours, "last() after the end", lambda e: e.last())
        finished += 1
    return finished, illegal, restarts, dead_restarts


@needs_pettingzoo
@needs_pettingzoo_1_25
def test_env_matches_pettingzoo_move_by_move(pz):
    ref, ours = pz.env(), c4.env()
    # order-enforcing errors before reset
    for what, fn in [
        ("step", lambda e: e.step(0)),
        ("observe", lambda e: e.observe("player_0")),
        ("render", lambda e: e.render()),
        ("state", lambda e: e.state()),
        ("agent_iter", lambda e: e.agent_iter()),
        ("last", lambda e: e.last()),
    ] + [
        (name, lambda e, n=name: getattr(e, n))
        for name in ("agents", "rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents")
    ]:
        r = _both(ref, ours, what + " before reset", fn)
        assert r[0] == "raised"
    assert hasattr(ours, "possible_agents") and not hasattr(ours, "agents")
    finished, illegal, restarts, dead_restarts = _compare_games(ref, ours, 1000, seed=2024, wrapped=True)
    assert finished == 1000
    assert illegal >= 100, illegal  # the comparison did cover illegal moves
    assert restarts >= 20 and dead_restarts >= 10, (restarts, dead_restarts)
    _both(ref, ours, "state", lambda e: e.state())
    _both(ref, ours, "observe(unknown agent)", lambda e: e.observe("player_2"))
    _both(ref, ours, "action_space(unknown agent)", lambda e: e.action_space("player_2"))


@needs_pettingzoo
def test_raw_env_matches_pettingzoo_move_by_move(pz):
    _compare_games(pz.raw_env(), c4.raw_env(), 200, seed=7, wrapped=False)


@needs_pettingzoo
@needs_pettingzoo_1_25
@pytest.mark.parametrize("size", [(6, 7, 4)] + OTHER_BOARDS, ids=lambda s: "%dx%dw%d" % s)
def test_env_matches_pettingzoo_wrappers_around_raw_env(size):
    """env() ≡ PettingZoo's own wrapper chain around c4sim's raw_env, on any board."""
    rows, cols, win = size
    kw = dict(rows=rows, cols=cols, win_length=win)
    ref = wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(
            wrappers.TerminateIllegalWrapper(c4.raw_env(**kw), illegal_reward=-1)
        )
    )
    _compare_games(ref, c4.env(**kw), 150, seed=11, wrapped=True, cols=cols)


# ---------------------------------------------------------------- behaviours one by one


def _play(env, cols):
    for col in cols:
        env.step(col)


@needs_pettingzoo
def test_illegal_move_through_env():
    env = c4.env()
    env.reset()
    _play(env, [0] * 6)  # column 0 full; player_0 to move
    EnvLogger.flush()
    env.step(0)
    assert EnvLogger.mqueue == [ILLEGAL_WARNING]
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.truncations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": -1.0, "player_1": 0}
    assert env._cumulative_rewards == {"player_0": -1.0, "player_1": 0}
    assert type(env.rewards["player_0"]) is float
    # the dead agents then leave with step(None), player_0 first
    assert env.last()[1:4] == (-1.0, True, True)
    env.step(None)
    assert env.agent_selection == "player_1" and env.last()[1:4] == (0, True, True)
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(3)
    env.step(None)
    assert env.agents == []


@needs_pettingzoo
def test_illegal_move_by_player_1_selects_player_0_first():
    env = c4.env()
    env.reset()
    _play(env, [1, 0, 0, 0, 0, 0, 0])  # column 0 full, player_1 to move
    assert env.agent_selection == "player_1"
    env.step(0)
    assert env.agent_selection == "player_0"
    assert env.rewards == {"player_0": 0, "player_1": -1.0}
    env.step(None)
    assert env.agent_selection == "player_1" and env._cumulative_rewards == {"player_1": -1.0}


@needs_pettingzoo
def test_raw_env_rejects_illegal_moves():
    env = c4.raw_env()
    env.reset()
    _play(env, [0] * 6)
    for bad in (0, 7, -1):
        with pytest.raises(AssertionError, match="played illegal move"):
            env.step(bad)
    assert env.agent_selection == "player_0" and env.board[:7] == [2] + [0] * 6


@needs_pettingzoo
@pytest.mark.parametrize("bad", [7, -1, 100, None, 1.0, "3", np.int64(7), np.array([1])])
def test_out_of_range_action(bad):
    env = c4.env()
    env.reset()
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(bad)
    assert env.agent_selection == "player_0" and sum(env.board) == 0
    env.step(np.int32(3))  # numpy integers are actions
    env.step(np.array(3))
    assert env.board[4 * 7 + 3] == 2


@needs_pettingzoo
def test_step_before_reset_and_after_the_end():
    env = c4.env()
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):
        env.step(0)
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        env.agent_selection
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before agent_iter"):
        env.agent_iter()
    env.reset()
    _play(env, [0, 1, 0, 1, 0, 1, 0])  # player_0 wins vertically
    assert env.rewards == {"player_0": 1, "player_1": -1}
    assert env.agent_selection == "player_1"
    env.step(None)
    env.step(None)
    assert env.agents == [] and env.agent_selection == "player_1"
    EnvLogger.flush()
    env.step(None)
    assert EnvLogger.mqueue == [STEP_AFTER_DONE_WARNING]


@needs_pettingzoo
def test_agent_iter_enforces_a_step_per_agent():
    env = c4.env()
    env.reset()
    it = iter(env.agent_iter())
    assert next(it) == "player_0"
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)
    assert list(env.agent_iter(0)) == []


@needs_pettingzoo
def test_mask_after_the_end_is_pettingzoos(pz):
    for make in (c4.env, pz.env):
        env = make()
        env.reset()
        _play(env, [0, 1, 0, 1, 0, 1, 0])
        # the loser is selected: its mask shows the open columns, the winner's is zero
        assert env.observe("player_1")["action_mask"].tolist() == [1] * 7
        assert env.observe("player_0")["action_mask"].tolist() == [0] * 7


@needs_pettingzoo
def test_render_modes(capsys):
    env = c4.env(render_mode="ansi")
    env.reset()
    _play(env, [3, 3])
    text = env.render()
    assert isinstance(text, str) and text == env.unwrapped.game.render()
    assert capsys.readouterr().out == ""

    env = c4.env(render_mode="human")
    env.reset()
    assert env.render() is None
    assert capsys.readouterr().out.strip() == env.unwrapped.game.render().strip()
    env.step(3)  # human mode prints after each move, as PettingZoo's draws
    assert capsys.readouterr().out.strip() == env.unwrapped.game.render().strip()

    env = c4.env()
    env.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert env.render() is None
    assert any("without specifying any render mode" in str(w.message) for w in caught)

    with pytest.raises(ValueError, match="render_mode"):
        c4.env(render_mode="rgb_array")


# ---------------------------------------------------------------- other boards


def _has_line(board: np.ndarray, piece: int, n: int) -> bool:
    rows, cols = board.shape
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                if all(
                    0 <= r + k * dr < rows and 0 <= c + k * dc < cols and board[r + k * dr, c + k * dc] == piece
                    for k in range(n)
                ):
                    return True
    return False


@needs_pettingzoo
@pytest.mark.parametrize("size", OTHER_BOARDS, ids=lambda s: "%dx%dw%d" % s)
def test_other_boards_shapes_and_wins(size):
    rows, cols, win = size
    env = c4.env(rows=rows, cols=cols, win_length=win)
    assert env.observation_space("player_0")["observation"].shape == (rows, cols, 2)
    assert env.observation_space("player_0")["action_mask"].shape == (cols,)
    assert env.action_space("player_1").n == cols
    rnd = random.Random(5)
    outcomes = set()
    for _ in range(200):
        env.reset()
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            assert obs["observation"].shape == (rows, cols, 2) and obs["action_mask"].shape == (cols,)
            if term or trunc:
                env.step(None)
                continue
            mover = agent
            env.step(rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            if env.terminations[mover]:
                board = np.array(env.unwrapped.board).reshape(rows, cols)
                piece = 1 if mover == "player_0" else 2
                if _has_line(board, piece, win):
                    assert env.rewards[mover] == 1 and env.rewards[env.agent_selection] == -1
                    outcomes.add("win")
                else:
                    assert (board != 0).all() and set(env.rewards.values()) == {0}
                    outcomes.add("draw")
            else:
                board = np.array(env.unwrapped.board).reshape(rows, cols)
                assert not _has_line(board, 1, win) and not _has_line(board, 2, win)
    assert "win" in outcomes


@needs_pettingzoo
def test_4x4_win_3_lines():
    env = c4.env(rows=4, cols=4, win_length=3)
    for moves, winner in [
        ([0, 0, 1, 1, 2], "player_0"),  # horizontal
        ([3, 0, 3, 0, 2, 0], "player_1"),  # vertical
        ([0, 1, 1, 2, 3, 2, 2], "player_0"),  # diagonal
    ]:
        env.reset()
        _play(env, moves)
        loser = "player_1" if winner == "player_0" else "player_0"
        assert env.terminations == {"player_0": True, "player_1": True}
        assert env.rewards == {winner: 1, loser: -1}
        assert env.last()[1] == env._cumulative_rewards[env.agent_selection]


@needs_pettingzoo
def test_draw_on_a_small_board():
    env = c4.env(rows=2, cols=3, win_length=3)
    env.reset()
    _play(env, [0, 1, 2, 0, 1, 2])  # rows X O X and O X O
    assert all(env.terminations.values()) and env.rewards == {"player_0": 0, "player_1": 0}


@needs_pettingzoo
@pytest.mark.parametrize("size", [(6, 7, 4)] + OTHER_BOARDS, ids=lambda s: "%dx%dw%d" % s)
def test_pickle(size):
    """PettingZoo's pickle test: a pickled env plays as the original does."""
    rows, cols, win = size
    env1 = c4.env(render_mode=None, rows=rows, cols=cols, win_length=win)
    env2 = pickle.loads(pickle.dumps(env1))
    for env in (env1, env2):
        env.reset(seed=42)
        seed_action_spaces(env)
        seed_observation_spaces(env)
    assert env2.observation_space("player_0")["observation"].shape == (rows, cols, 2)
    for steps, (agent1, agent2) in enumerate(zip(env1.agent_iter(), env2.agent_iter())):
        if steps > 10:
            break
        assert agent1 == agent2
        last1, last2 = env1.last(), env2.last()
        assert data_equivalence(last1, last2, exact=True)
        if last1[2] or last1[3]:
            break
        mask = last1[0]["action_mask"]
        action1 = env1.action_space(agent1).sample(mask=mask)
        action2 = env2.action_space(agent2).sample(mask=mask)
        assert action1 == action2
        env1.step(action1)
        env2.step(action2)


@needs_pettingzoo
@pytest.mark.parametrize("size", [(0, 7, 4), (6, 7, 8), (17, 7, 4)])
def test_boards_the_engine_refuses(size):
    rows, cols, win = size
    with pytest.raises(ValueError):
        c4.env(rows=rows, cols=cols, win_length=win)
