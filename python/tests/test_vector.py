"""c4sim.VectorEnv against the referee (c4sim.Game) and hand-made games.

Every observation, mask, reward and ended game is checked against
``c4sim.Game`` replaying the env's moves, on several board shapes; seeds,
threads, opponents (dict, flow mapping, profile name, profile path), the
agent's alternation, and the errors (bad actions, bad arguments), which must
leave the envs untouched and never be a pyo3 PanicException (a
BaseException, so ``pytest.raises((TypeError, ValueError))`` lets it through
and the test fails).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import c4sim

SHAPES = [(6, 7, 4), (5, 4, 3), (7, 9, 4), (2, 3, 3), (9, 8, 5), (16, 16, 6)]
SHAPE_IDS = [f"{r}x{c}w{w}" for r, c, w in SHAPES]


# --------------------------------------------------------------------------
# helpers


class Referee:
    """Follows a VectorEnv step by step and checks every output against
    ``c4sim.Game`` replaying the env's moves (and the moves it must have)."""

    def __init__(self, env: c4sim.VectorEnv, replay, opponent: bool):
        self.env = env
        self.replay = replay
        self.opponent = opponent
        self.n = env.num_envs
        self.shape = (env.rows, env.cols, env.win_length)
        self.cells = env.rows * env.cols
        self.moves = [None] * self.n
        self.mask = None
        # The game number of each env (the env must have been just made or
        # reset with a seed: game 0 everywhere) and the agent's own columns.
        self.game = [0] * self.n
        self.agent_cols = [[] for _ in range(self.n)]
        self.ended = 0
        self.wins = 0
        self.losses = 0
        self.draws = 0

    def game_of(self, moves):
        return self.replay(moves, *self.shape)

    def check_view(self, obs):
        o, m = obs["observation"], obs["action_mask"]
        for i in range(self.n):
            g = self.game_of(self.moves[i])
            assert not g.over, f"env {i}: a finished game was not restarted: {self.moves[i]}"
            np.testing.assert_array_equal(o[i], g.observation(g.to_move), err_msg=f"env {i} moves {self.moves[i]}")
            np.testing.assert_array_equal(m[i], g.action_mask(), err_msg=f"env {i} moves {self.moves[i]}")
        self.mask = m.copy()

    def after_reset(self, obs, infos):
        for i in range(self.n):
            self.moves[i] = self.env.moves(i)
            if self.opponent and self.game[i] % 2 == 1:
                assert len(self.moves[i]) == 1, f"env {i}: the opponent opens game {self.game[i]}"
            else:
                assert self.moves[i] == [], f"env {i}: the agent opens game {self.game[i]}"
        np.testing.assert_array_equal(infos["final_moves"], np.full((self.n, self.cells), -1, np.int8))
        np.testing.assert_array_equal(infos["final_length"], np.zeros(self.n, np.int32))
        self.check_view(obs)

    def after_step(self, actions, obs, rewards, terminations, truncations, infos):
        fm, fl = infos["final_moves"], infos["final_length"]
        assert not truncations.any()
        for i in range(self.n):
            a = int(actions[i])
            assert self.mask[i, a] == 1, f"env {i}: action {a} was not legal"
            prev = self.moves[i]
            now = self.env.moves(i)
            self.agent_cols[i].append(a)
            if not terminations[i]:
                assert fl[i] == 0
                assert (fm[i] == -1).all()
                assert rewards[i] == 0.0
                if self.opponent:
                    assert len(now) == len(prev) + 2 and now[: len(prev) + 1] == prev + [a], (prev, a, now)
                else:
                    assert now == prev + [a]
            else:
                length = int(fl[i])
                played = [int(c) for c in fm[i, :length]]
                assert length > 0
                assert (fm[i, length:] == -1).all(), "final_moves must be padded with -1"
                assert played[: len(prev) + 1] == prev + [a]
                if self.opponent:
                    assert length in (len(prev) + 1, len(prev) + 2)
                else:
                    assert length == len(prev) + 1
                g = self.game_of(played)
                assert g.over, f"env {i}: a game reported as ended is not over: {played}"
                last = (length - 1) % 2
                if g.winner is None:
                    assert length == self.cells
                    assert rewards[i] == 0.0
                    self.draws += 1
                else:
                    assert g.winner == last
                    if not self.opponent:
                        assert rewards[i] == 1.0
                        self.wins += 1
                    else:
                        agent = self.game[i] % 2
                        # the agent's seat alternates with the game number
                        assert played[agent::2] == self.agent_cols[i], (self.game[i], played, self.agent_cols[i])
                        expected = 1.0 if g.winner == agent else -1.0
                        assert rewards[i] == expected, (self.game[i], played, rewards[i])
                        if expected > 0:
                            self.wins += 1
                        else:
                            self.losses += 1
                if self.opponent and g.winner is None:
                    agent = self.game[i] % 2
                    assert played[agent::2] == self.agent_cols[i]
                self.ended += 1
                self.game[i] += 1
                self.agent_cols[i] = []
                if self.opponent and self.game[i] % 2 == 1:
                    assert len(now) == 1, f"env {i}: the opponent moves first in game {self.game[i]}: {now}"
                else:
                    assert now == [], f"env {i}: game {self.game[i]} must start empty: {now}"
            self.moves[i] = now
        self.check_view(obs)


def snapshot(out):
    """A deep copy of a step's (or reset's) arrays, flattened to a list."""
    arrays = []
    for part in out:
        if isinstance(part, dict):
            arrays.extend(np.array(part[k], copy=True) for k in sorted(part))
        else:
            arrays.append(np.array(part, copy=True))
    return arrays


def trajectory(env, steps, reset_seed=None, reset=True):
    """Resets (optionally seeded) and plays ``steps`` random steps: every
    action and array, copied."""
    out = [snapshot(env.reset(seed=reset_seed))] if reset else []
    for _ in range(steps):
        a = env.random_actions()
        out.append([a.copy()] + snapshot(env.step(a)))
    return out


def same_trajectory(t1, t2) -> bool:
    return len(t1) == len(t2) and all(
        len(x) == len(y) and all(np.array_equal(a, b) for a, b in zip(x, y)) for x, y in zip(t1, t2)
    )


def env_state(env):
    return [env.moves(i) for i in range(env.num_envs)]


# --------------------------------------------------------------------------
# shapes, dtypes, properties


@pytest.mark.parametrize("rows,cols,win", SHAPES, ids=SHAPE_IDS)
def test_shapes_dtypes_and_properties(rows, cols, win):
    n = 5
    env = c4sim.VectorEnv(n, rows=rows, cols=cols, win_length=win, seed=1)
    assert (env.num_envs, env.rows, env.cols, env.win_length) == (n, rows, cols, win)
    assert len(env) == n
    assert env.threads >= 1
    obs, infos = env.reset()
    assert set(obs) == {"observation", "action_mask"}
    assert set(infos) == {"final_moves", "final_length"}
    assert obs["observation"].shape == (n, rows, cols, 2) and obs["observation"].dtype == np.int8
    assert obs["action_mask"].shape == (n, cols) and obs["action_mask"].dtype == np.int8
    assert infos["final_moves"].shape == (n, rows * cols) and infos["final_moves"].dtype == np.int8
    assert infos["final_length"].shape == (n,) and infos["final_length"].dtype == np.int32
    # a fresh game everywhere
    assert not obs["observation"].any()
    assert (obs["action_mask"] == 1).all()
    assert (infos["final_moves"] == -1).all()
    assert not infos["final_length"].any()

    actions = env.random_actions()
    assert actions.shape == (n,) and actions.dtype == np.int64
    assert ((actions >= 0) & (actions < cols)).all()
    result = env.step(actions)
    assert isinstance(result, tuple) and len(result) == 5
    obs, rewards, terminations, truncations, infos = result
    assert set(obs) == {"observation", "action_mask"}
    assert set(infos) == {"final_moves", "final_length"}
    assert obs["observation"].shape == (n, rows, cols, 2) and obs["observation"].dtype == np.int8
    assert obs["action_mask"].shape == (n, cols) and obs["action_mask"].dtype == np.int8
    assert rewards.shape == (n,) and rewards.dtype == np.float32
    assert terminations.shape == (n,) and terminations.dtype == np.bool_
    assert truncations.shape == (n,) and truncations.dtype == np.bool_
    assert infos["final_moves"].shape == (n, rows * cols) and infos["final_moves"].dtype == np.int8
    assert infos["final_length"].shape == (n,) and infos["final_length"].dtype == np.int32
    # one piece on the board, in the opponent's channel (the mover is seat 1 now)
    if win > 1:
        assert (obs["observation"][:, :, :, 0].sum(axis=(1, 2)) == 0).all()
        assert (obs["observation"][:, :, :, 1].sum(axis=(1, 2)) == 1).all()


def test_each_step_returns_new_arrays():
    env = c4sim.VectorEnv(3, seed=4)
    obs0, infos0 = env.reset()
    kept = snapshot((obs0, infos0))
    out1 = env.step(np.array([0, 1, 2]))
    kept1 = snapshot(out1)
    env.step(np.array([3, 3, 3]))
    env.step(np.array([4, 4, 4]))
    assert all(np.array_equal(a, b) for a, b in zip(kept, snapshot((obs0, infos0))))
    assert all(np.array_equal(a, b) for a, b in zip(kept1, snapshot(out1)))


# --------------------------------------------------------------------------
# the referee's rules


@pytest.mark.parametrize("rows,cols,win", SHAPES, ids=SHAPE_IDS)
def test_random_games_follow_the_referee(rows, cols, win, replay):
    n = 6
    env = c4sim.VectorEnv(n, rows=rows, cols=cols, win_length=win, seed=11)
    ref = Referee(env, replay, opponent=False)
    ref.after_reset(*env.reset())
    steps = 150 if rows * cols <= 72 else 60
    for _ in range(steps):
        a = env.random_actions()
        ref.after_step(a, *env.step(a))
    if rows * cols <= 72:
        assert ref.ended > 0, "no game ended"


def test_observation_is_from_the_movers_view_with_row_0_on_top():
    env = c4sim.VectorEnv(1, rows=6, cols=7, seed=0)
    env.reset()
    obs = env.step(np.array([2]))[0]["observation"][0]
    # seat 1 moves now: seat 0's piece is the other side's (channel 1), bottom row
    expected = np.zeros((6, 7, 2), np.int8)
    expected[5, 2, 1] = 1
    np.testing.assert_array_equal(obs, expected)
    obs, _, _, _, _ = env.step(np.array([2]))
    # seat 0 moves again: its piece is channel 0 (bottom), seat 1's on top of it
    expected = np.zeros((6, 7, 2), np.int8)
    expected[5, 2, 0] = 1
    expected[4, 2, 1] = 1
    np.testing.assert_array_equal(obs["observation"][0], expected)
    np.testing.assert_array_equal(obs["action_mask"][0], np.ones(7, np.int8))


def test_action_mask_closes_a_full_column():
    env = c4sim.VectorEnv(2, rows=6, cols=7, seed=0)
    env.reset()
    for _ in range(6):
        obs = env.step(np.array([0, 1]))[0]
    np.testing.assert_array_equal(obs["action_mask"], [[0, 1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 1, 1, 1]])


def test_hand_made_wins_reward_the_mover_and_restart(replay):
    env = c4sim.VectorEnv(2, seed=0)
    env.reset()
    env0 = [3, 0, 3, 0, 3, 0, 3, 5]  # seat 0 wins at ply 7 (column 4 vertical), then a new game
    env1 = [0, 3, 0, 3, 0, 3, 1, 3]  # seat 1 wins at ply 8 (column 4 vertical)
    for ply in range(8):
        obs, rewards, terms, truncs, infos = env.step(np.array([env0[ply], env1[ply]]))
        assert not truncs.any()
        if ply < 6:
            assert not terms.any() and not rewards.any()
            assert not infos["final_length"].any() and (infos["final_moves"] == -1).all()
        if ply == 6:
            assert terms.tolist() == [True, False]
            assert rewards.tolist() == [1.0, 0.0]
            assert infos["final_length"].tolist() == [7, 0]
            assert infos["final_moves"][0, :7].tolist() == env0[:7]
            assert (infos["final_moves"][0, 7:] == -1).all() and (infos["final_moves"][1] == -1).all()
            # autoreset: env 0 shows an empty board
            assert not obs["observation"][0].any()
            assert (obs["action_mask"][0] == 1).all()
            assert env.moves(0) == []
            assert env.moves(1) == env1[:7]
        if ply == 7:
            assert terms.tolist() == [False, True]
            assert rewards.tolist() == [0.0, 1.0]
            assert infos["final_length"].tolist() == [0, 8]
            assert infos["final_moves"][1, :8].tolist() == env1
            assert replay(env1).winner == 1
            assert env.moves(0) == [5] and env.moves(1) == []
            expected = np.zeros((6, 7, 2), np.int8)
            expected[5, 5, 1] = 1
            np.testing.assert_array_equal(obs["observation"][0], expected)
            assert not obs["observation"][1].any()


def test_a_full_board_is_a_draw_with_no_reward():
    # 2x3, three in a row: bottom A B A, top B A B: no line, the board is full.
    env = c4sim.VectorEnv(1, rows=2, cols=3, win_length=3, seed=0)
    env.reset()
    cols = [0, 1, 2, 0, 1, 2]
    for ply, c in enumerate(cols):
        obs, rewards, terms, truncs, infos = env.step(np.array([c]))
        assert rewards[0] == 0.0
        assert bool(terms[0]) == (ply == 5)
    assert infos["final_length"][0] == 6
    assert infos["final_moves"][0].tolist() == cols
    assert env.moves(0) == []
    assert not obs["observation"].any() and (obs["action_mask"] == 1).all()


# --------------------------------------------------------------------------
# seeds and threads


def test_seeded_reset_reproduces_the_random_games():
    env = c4sim.VectorEnv(6, seed=3)
    first = trajectory(env, 40)  # reset() of an env made with seed 3
    again = trajectory(env, 40, reset_seed=3)
    assert same_trajectory(first, again)
    other_env = c4sim.VectorEnv(6, seed=99)
    assert same_trajectory(first, trajectory(other_env, 40, reset_seed=3))
    different = trajectory(env, 40, reset_seed=4)
    assert not same_trajectory(first, different)
    # a new env made with seed 4 plays what reset(seed=4) played
    assert same_trajectory(different, trajectory(c4sim.VectorEnv(6, seed=4), 40))


def test_different_construction_seeds_give_different_games():
    a = trajectory(c4sim.VectorEnv(4, seed=1), 30)
    b = trajectory(c4sim.VectorEnv(4, seed=2), 30)
    assert not same_trajectory(a, b)


def test_seeded_reset_reproduces_games_against_an_opponent():
    env = c4sim.VectorEnv(4, seed=8, opponent={"kind": "random"})
    first = trajectory(env, 40, reset_seed=21)
    assert same_trajectory(first, trajectory(env, 40, reset_seed=21))
    assert same_trajectory(first, trajectory(c4sim.VectorEnv(4, seed=21, opponent={"kind": "random"}), 40))
    assert not same_trajectory(first, trajectory(env, 40, reset_seed=22))


@pytest.mark.parametrize(
    "opponent,steps",
    [(None, 60), ({"kind": "random"}, 40), ("{kind: minimax, depth: 2}", 15)],
    ids=["none", "random", "minimax2"],
)
def test_one_and_two_threads_play_the_same_games(opponent, steps):
    n = 256  # enough envs for the batch to be split
    one = c4sim.VectorEnv(n, seed=7, opponent=opponent, threads=1)
    two = c4sim.VectorEnv(n, seed=7, opponent=opponent, threads=2)
    assert one.threads == 1
    assert 1 <= two.threads <= 2
    assert same_trajectory(trajectory(one, steps), trajectory(two, steps))
    assert env_state(one) == env_state(two)


# --------------------------------------------------------------------------
# opponents


def _profile_path(repo, name):
    return str(repo / "players" / f"{name}.yaml")


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "random"},
        "{kind: minimax, depth: 2}",
        {"kind": "minimax", "depth": 2},
        "minimax2",
        "random",
        "leftmost",
        "PROFILE_PATH",
    ],
    ids=["dict-random", "flow-minimax", "dict-minimax", "profile-minimax2", "profile-random", "profile-leftmost", "path"],
)
@pytest.mark.parametrize("shape", [(6, 7, 4), (5, 4, 3)], ids=["6x7w4", "5x4w3"])
def test_games_against_an_opponent_follow_the_referee(spec, shape, replay, repo):
    if spec == "PROFILE_PATH":
        spec = _profile_path(repo, "minimax2")
    rows, cols, win = shape
    env = c4sim.VectorEnv(4, rows=rows, cols=cols, win_length=win, seed=5, opponent=spec)
    ref = Referee(env, replay, opponent=True)
    ref.after_reset(*env.reset())
    for _ in range(60):
        a = env.random_actions()
        ref.after_step(a, *env.step(a))
    assert ref.ended >= 4
    assert max(ref.game) >= 2, "some env must have played both seats"
    if "minimax" in str(spec):
        assert ref.losses > 0, "minimax depth 2 never beat random moves"


def test_leftmost_opponent_hand_made_games(replay):
    """The agent always plays the last column, the opponent always the first:
    whoever moves first wins with its 4th piece (ply 7)."""
    env = c4sim.VectorEnv(1, seed=0, opponent="leftmost")
    obs, _ = env.reset()
    assert env.moves(0) == []  # game 0: the agent moves first
    six = np.array([6])
    for step in range(1, 5):
        obs, rewards, terms, _, infos = env.step(six)
        if step < 4:
            assert env.moves(0) == [6, 0] * step
            assert not terms[0] and rewards[0] == 0.0
    assert terms[0] and rewards[0] == 1.0
    assert infos["final_moves"][0, :7].tolist() == [6, 0, 6, 0, 6, 0, 6]
    assert infos["final_length"][0] == 7
    # game 1: the opponent has moved first (column 0), the agent is seat 1
    assert env.moves(0) == [0]
    expected = np.zeros((6, 7, 2), np.int8)
    expected[5, 0, 1] = 1
    np.testing.assert_array_equal(obs["observation"][0], expected)
    for step in range(1, 4):
        obs, rewards, terms, _, infos = env.step(six)
        if step < 3:
            assert not terms[0] and rewards[0] == 0.0
    assert terms[0] and rewards[0] == -1.0
    assert infos["final_length"][0] == 7
    assert infos["final_moves"][0, :7].tolist() == [0, 6, 0, 6, 0, 6, 0]
    assert replay([0, 6, 0, 6, 0, 6, 0]).winner == 0
    # game 2: the agent moves first again
    assert env.moves(0) == []
    assert not obs["observation"].any()


def test_a_perfect_opponent_wins_every_game_it_opens(replay):
    """On 4x5 with three in a row the first player wins (solver score of the
    empty board > 0): the solver opponent must win every odd-numbered game."""
    solver = c4sim.Solver(rows=4, cols=5, win_length=3, threads=1)
    assert solver.scores([""]).max() > 0
    env = c4sim.VectorEnv(4, rows=4, cols=5, win_length=3, seed=2, opponent="solver")
    ref = Referee(env, replay, opponent=True)
    ref.after_reset(*env.reset())
    lost_as_second = 0
    for _ in range(40):
        games_before = list(ref.game)
        a = env.random_actions()
        obs, rewards, terms, truncs, infos = env.step(a)
        ref.after_step(a, obs, rewards, terms, truncs, infos)
        for i in range(4):
            if terms[i] and games_before[i] % 2 == 1:
                assert rewards[i] == -1.0, infos["final_moves"][i, : infos["final_length"][i]]
                lost_as_second += 1
    assert lost_as_second > 0


def test_a_fresh_or_seeded_reset_starts_with_the_agent():
    env = c4sim.VectorEnv(3, seed=1, opponent={"kind": "random"})
    env.reset()
    assert env_state(env) == [[], [], []]
    for _ in range(30):
        env.step(env.random_actions())
    env.reset(seed=1)
    assert env_state(env) == [[], [], []]


# --------------------------------------------------------------------------
# bad actions: refused, nothing played


def _twins(opponent=None, n=3):
    envs = [c4sim.VectorEnv(n, seed=2, opponent=opponent) for _ in range(2)]
    for e in envs:
        e.reset()
        for _ in range(2):
            e.step(np.array([1, 2, 3][:n]))
    return envs


def _assert_untouched(env, twin, steps=12):
    assert env_state(env) == env_state(twin)
    assert same_trajectory(trajectory(env, steps, reset=False), trajectory(twin, steps, reset=False))


@pytest.mark.parametrize("opponent", [None, {"kind": "random"}], ids=["alone", "opponent"])
@pytest.mark.parametrize("bad_env,column", [(1, 9), (2, -3), (0, 7)])
def test_out_of_range_action_names_env_and_column(opponent, bad_env, column):
    env, twin = _twins(opponent)
    actions = np.array([0, 1, 2])
    actions[bad_env] = column
    with pytest.raises(ValueError) as info:
        env.step(actions)
    msg = str(info.value)
    assert re.search(rf"\benv {bad_env}\b", msg), msg
    assert re.search(re.escape(f"column {column}") + r"(?!\d)", msg), msg
    _assert_untouched(env, twin)


@pytest.mark.parametrize("opponent,steps", [(None, 6), ("leftmost", 3)], ids=["alone", "opponent"])
def test_full_column_action_names_env_and_column(opponent, steps):
    env = c4sim.VectorEnv(3, seed=2, opponent=opponent)
    twin = c4sim.VectorEnv(3, seed=2, opponent=opponent)
    for e in (env, twin):
        e.reset()
        # env 1 fills column 0 (alone: both seats; against leftmost: the
        # agent and the opponent take turns there), envs 0 and 2 stack
        # alternating pieces (no line) in column 3
        for _ in range(steps):
            obs = e.step(np.array([3, 0, 3]))[0]
    assert env.moves(1).count(0) == 6
    assert obs["action_mask"][1, 0] == 0
    with pytest.raises(ValueError) as info:
        env.step(np.array([1, 0, 1]))
    msg = str(info.value)
    assert re.search(r"\benv 1\b", msg), msg
    assert re.search(r"\bcolumn 0\b", msg), msg
    _assert_untouched(env, twin)


def test_out_of_range_uint64_action_is_named_as_given():
    env, twin = _twins()
    big = np.array([0, 0, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError) as info:
        env.step(big)
    msg = str(info.value)
    assert re.search(r"\benv 2\b", msg), msg
    assert str(2**64 - 1) in msg, f"the message names another column than the one given: {msg}"
    _assert_untouched(env, twin)


@pytest.mark.parametrize(
    "actions",
    [
        [0, 1],
        [0, 1, 2, 3],
        [],
        np.array([0.0, 1.0, 2.0]),
        [0.0, 1.0, 2.0],
        ["a", "b", "c"],
        np.array(["1", "2", "3"]),
        np.array([[0, 1, 2]]),
        np.array([[0], [1], [2]]),
        np.zeros((3, 3), np.int64),
        3,
        None,
        np.array([True, False, True]),
        [0, None, 2],
        [0, 1, 2**70],
    ],
    ids=[
        "too-few",
        "too-many",
        "empty",
        "float-array",
        "float-list",
        "strings",
        "string-array",
        "2d-row",
        "2d-col",
        "2d-square",
        "scalar",
        "none",
        "bool",
        "none-inside",
        "huge-int",
    ],
)
def test_malformed_actions_are_refused_without_playing(actions):
    env, twin = _twins()
    with pytest.raises((TypeError, ValueError)) as info:
        env.step(actions)
    assert str(info.value)
    _assert_untouched(env, twin)


def test_narrow_integer_dtypes_are_accepted():
    for dtype in (np.int8, np.uint8, np.int32, np.uint16):
        env, twin = _twins()
        a = np.array([4, 5, 6], dtype=dtype)
        assert same_trajectory([snapshot(env.step(a))], [snapshot(twin.step(np.array([4, 5, 6], np.int64)))])


def test_moves_of_an_env_out_of_range():
    env = c4sim.VectorEnv(3)
    env.reset()
    with pytest.raises(ValueError, match=r"\b3\b"):
        env.moves(3)


# --------------------------------------------------------------------------
# bad constructor arguments


@pytest.mark.parametrize(
    "kwargs,pattern",
    [
        (dict(num_envs=0), r"num_envs"),
        (dict(num_envs=2, rows=4, cols=5, win_length=6), r"win_length"),
        (dict(num_envs=2, rows=7, cols=7, win_length=8), r"win_length"),
        (dict(num_envs=2, win_length=0), r"win_length"),
        (dict(num_envs=2, rows=0), r"rows"),
        (dict(num_envs=2, cols=0), r"cols"),
        (dict(num_envs=2, rows=17), r"rows"),
        (dict(num_envs=2, opponent={"kind": "nope"}), r"nope"),
        (dict(num_envs=2, opponent="{kind: nope}"), r"nope"),
        (dict(num_envs=2, opponent={"kind": "minimax", "dept": 2}), r"dept"),
        (dict(num_envs=2, opponent="no_such_profile"), r"no_such_profile"),
        (dict(num_envs=2, opponent="/nonexistent/dir/bot.yaml"), r"/nonexistent/dir/bot\.yaml"),
        (dict(num_envs=2, opponent={"kind": "human"}), r"human"),
        (dict(num_envs=2, opponent={"kind": "external", "command": ["true"]}), r"external"),
    ],
    ids=[
        "no-envs",
        "win-too-long",
        "win-too-long-square",
        "win-zero",
        "no-rows",
        "no-cols",
        "too-many-rows",
        "unknown-kind-dict",
        "unknown-kind-flow",
        "unknown-key",
        "unknown-profile",
        "missing-path",
        "human",
        "external",
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(kwargs, pattern):
    with pytest.raises((ValueError, TypeError)) as info:
        c4sim.VectorEnv(**kwargs)
    assert re.search(pattern, str(info.value)), str(info.value)


def test_an_opponent_for_another_board_is_refused():
    # the shipped network plays 6x7 only
    spec = {"kind": "alphazero", "model": "models/connect4-6x7", "simulations": 8}
    with pytest.raises(ValueError, match=r"4×5|4x5|board"):
        c4sim.VectorEnv(2, rows=4, cols=5, win_length=3, opponent=spec)


def test_an_opponent_of_a_wrong_type_is_refused():
    with pytest.raises((ValueError, TypeError)):
        c4sim.VectorEnv(2, opponent=5)


def test_negative_numbers_are_value_or_type_errors():
    """The bindings promise ValueError / TypeError for bad input (lib.rs);
    a negative count, seed or index is bad input."""
    env = c4sim.VectorEnv(2)
    env.reset()
    calls = {
        "VectorEnv(-1)": lambda: c4sim.VectorEnv(-1),
        "VectorEnv(2, seed=-1)": lambda: c4sim.VectorEnv(2, seed=-1),
        "VectorEnv(2, threads=-1)": lambda: c4sim.VectorEnv(2, threads=-1),
        "VectorEnv(2, rows=-6)": lambda: c4sim.VectorEnv(2, rows=-6),
        "env.moves(-1)": lambda: env.moves(-1),
        "env.reset(seed=-1)": lambda: env.reset(seed=-1),
    }
    wrong = {}
    for what, call in calls.items():
        try:
            call()
        except (ValueError, TypeError):
            continue
        except Exception as e:  # noqa: BLE001 - report every wrong type at once
            wrong[what] = f"{type(e).__name__}: {e}"
        else:
            wrong[what] = "no exception"
    assert not wrong, wrong


def test_a_relative_profile_path_falls_back_to_the_data_dir(tmp_path, monkeypatch):
    """data_dir(): relative paths in player specs that the current directory
    lacks are looked up in the package's data folder (players/ is there)."""
    assert os.path.isfile(os.path.join(c4sim.data_dir(), "players", "random.yaml"))
    monkeypatch.chdir(tmp_path)
    env = c4sim.VectorEnv(2, opponent="players/random.yaml")
    env.reset()
    env.step(env.random_actions())


def test_copy_false_writes_the_same_arrays_in_place_and_plays_the_same_games():
    """``copy=False`` hands out one set of arrays, overwritten each step; the
    games and every number in them equal a copying env's."""
    kept = c4sim.VectorEnv(64, seed=5, copy=False)
    fresh = c4sim.VectorEnv(64, seed=5)
    (o1, i1), (o2, i2) = kept.reset(), fresh.reset()
    first_obs = o1["observation"]
    for _ in range(60):
        a = fresh.random_actions()
        s1, s2 = kept.step(a), fresh.step(a)
        assert s1[0]["observation"] is first_obs
        for x, y in zip((s1[0]["observation"], s1[0]["action_mask"], *s1[1:4], s1[4]["final_moves"]),
                        (s2[0]["observation"], s2[0]["action_mask"], *s2[1:4], s2[4]["final_moves"])):
            np.testing.assert_array_equal(x, y)
        assert not s1[3].any()
