"""c4sim.Solver and c4sim.AlphaZero.

The solver's scores are checked against values derived elsewhere: Pascal
Pons' published scores of the empty 6x7 board and of lines of his test sets
(src/solver/tests.rs), the repository's labelled accuracy sets
(benches/accuracy/sets-v1.jsonl, every column's exact score), and a brute
force negamax over the referee (c4sim.Game) on small boards. The network is
checked on positions where the side to move wins at once.
"""

from __future__ import annotations

import json
import re
import random
from pathlib import Path

import numpy as np
import pytest

import c4sim

FULL = c4sim.Solver.FULL
UNKNOWN = c4sim.Solver.UNKNOWN


# --------------------------------------------------------------------------
# helpers and fixtures


def to_columns(moves: str) -> list[int]:
    """A move string (columns from 1) as 0-based columns."""
    return [int(ch) - 1 for ch in moves]


def brute_scores(moves, rows, cols, win):
    """Every column's exact score by plain memoised negamax over the referee,
    in Pons' convention for boards with an even number of cells: a win with
    the winner's k-th piece scores cells/2 + 1 - k, a draw 0, a loss the
    negative of the opponent's win; FULL for a full column."""
    assert (rows * cols) % 2 == 0
    cells = rows * cols
    memo = {}

    def col_scores(g):
        n = len(g.moves)
        out = []
        for c in range(cols):
            if not g.is_legal(c):
                out.append(None)
                continue
            h = g.copy()
            status = h.play(c)
            if status == 1:
                out.append(cells // 2 + 1 - (n + 2) // 2)  # the mover's ((n+2)//2)-th piece
            elif status == 2:
                out.append(0)
            else:
                out.append(-value(h))
        return out

    def value(g):
        key = g.board().tobytes()
        if key not in memo:
            memo[key] = max(s for s in col_scores(g) if s is not None)
        return memo[key]

    g = c4sim.Game(rows, cols, win)
    for c in moves:
        g.play(c)
    return [FULL if s is None else s for s in col_scores(g)]


def labelled_sets(repo: Path):
    path = repo / "benches" / "accuracy" / "sets-v1.jsonl"
    with open(path) as f:
        header = json.loads(f.readline())
        assert header["board"] == "6x7x4"
        return [json.loads(line) for line in f if line.strip()]


def label_row(entry):
    return [FULL if s is None else s for s in entry["scores"]]


@pytest.fixture(scope="module")
def solver():
    return c4sim.Solver()


@pytest.fixture(scope="module")
def labelled(repo):
    return labelled_sets(repo)


# --------------------------------------------------------------------------
# Solver: known scores


def test_empty_board_scores_with_the_book(solver):
    scores = solver.scores([""])
    assert scores.dtype == np.int32 and scores.shape == (1, 7)
    # Pons: only the middle column wins for the first player
    assert scores.tolist() == [[-2, -1, 0, 1, 0, -1, -2]]
    assert scores[0, 3] > 0
    assert solver.scores([[]]).tolist() == scores.tolist()
    best = solver.best_moves([""])
    assert best.dtype == np.int64 and best.tolist() == [3]


def test_book_scores_are_negamax_consistent(solver):
    """Each column's score of the empty board is minus the best score of the
    position after it (no first move wins at once)."""
    root = solver.scores([""])[0]
    after = solver.scores([str(c) for c in range(1, 8)])
    assert [-int(row.max()) for row in after] == root.tolist()


def test_book_range_positions_are_negamax_and_mirror_consistent(solver):
    """Random ply-5 positions and their ply-6 children (all in the score
    book): each column scores minus the best of the position after it, and a
    mirrored position has the mirrored scores."""
    rng = random.Random(4)
    for _ in range(12):
        g = c4sim.Game()
        for _ in range(5):
            g.play(rng.choice([c for c in range(7) if g.is_legal(c)]))
        moves = g.moves
        root = solver.scores([moves])[0].tolist()
        for c in range(7):
            if not g.is_legal(c):
                assert root[c] == FULL
                continue
            child = solver.scores([moves + [c]])[0]
            assert root[c] == -int(child[child != FULL].max()), (moves, c)
        mirrored = solver.scores([[6 - c for c in moves]])[0].tolist()
        assert mirrored == root[::-1], moves


def test_labelled_positions_are_mirror_consistent(solver, labelled):
    entries = [e for e in labelled if e["set"] in ("end-hard", "middle-easy")][:8]
    mirrored = ["".join(str(8 - int(ch)) for ch in e["moves"]) for e in entries]
    for row, e in zip(solver.scores(mirrored).tolist(), entries):
        assert row == label_row(e)[::-1], e["moves"]


@pytest.mark.parametrize(
    "set_name,count",
    [
        ("end-easy", 10),
        ("end-medium", 10),
        ("end-hard", 10),
        ("middle-easy", 10),
        ("middle-medium", 4),
        ("begin-easy", 5),
    ],
)
def test_labelled_positions(solver, labelled, set_name, count):
    entries = [e for e in labelled if e["set"] == set_name][:count]
    assert len(entries) == count
    strings = [e["moves"] for e in entries]
    expected = [label_row(e) for e in entries]
    scores = solver.scores(strings)
    assert scores.shape == (count, 7)
    for s, e, exp in zip(scores.tolist(), strings, expected):
        assert s == exp, e
    for b, exp, e in zip(solver.best_moves(strings).tolist(), expected, strings):
        assert 0 <= b < 7 and exp[b] == max(exp), (e, b, exp)


# Pons' published scores (the position's value: its best column's score),
# late lines of Test_L3_R1 and a few of the L1 sets.
PONS = [
    ("2252576253462244111563365343671351441", -1),
    ("7422341735647741166133573473242566", 1),
    ("23163416124767223154467471272416755633", 0),
    ("71255763773133525731261364622167124446454", 0),
    ("65214673556155731566316327373221417", -1),
    ("52677675164321472411331752454", 0),
    ("67152117737262713366376314254", 6),
    ("2762751722231276466633475674533", 5),
    ("51756773145177", -10),
    ("165746146225", -11),
    ("43745416472735", -13),
]


@pytest.mark.parametrize("moves,value", PONS, ids=[m for m, _ in PONS])
def test_pons_published_values(solver, moves, value):
    row = solver.scores([moves])[0]
    assert max(s for s in row if s not in (FULL, UNKNOWN)) == value
    assert UNKNOWN not in row


def test_move_strings_and_column_sequences_agree(solver, labelled):
    entries = [e for e in labelled if e["set"] in ("end-easy", "middle-easy")][:8]
    strings = [e["moves"] for e in entries]
    lists = [to_columns(s) for s in strings]
    tuples = [tuple(x) for x in lists]
    expected = [label_row(e) for e in entries]
    assert solver.scores(strings).tolist() == expected
    assert solver.scores(lists).tolist() == expected
    assert solver.scores(tuples).tolist() == expected
    mixed = [strings[0], lists[1], tuples[2]]
    assert solver.scores(mixed).tolist() == expected[:3]
    assert solver.best_moves(lists).tolist() == solver.best_moves(strings).tolist()


def test_full_columns_are_marked(solver):
    # column 1 filled (alternating: no line) — in the book's range
    row = solver.scores(["111111"])[0]
    assert row[0] == FULL
    assert FULL not in row[1:].tolist() and UNKNOWN not in row.tolist()
    # on 4x5, three in a row: column 0 full, checked by brute force
    small = c4sim.Solver(rows=4, cols=5, win_length=3, threads=1)
    assert small.scores([[0, 0, 0, 0]]).tolist() == [brute_scores([0, 0, 0, 0], 4, 5, 3)]
    assert small.scores([[0, 0, 0, 0]])[0, 0] == FULL


def test_a_full_board_has_only_full_columns_and_no_best_move():
    # 2x3, three in a row: bottom A B A, top B A B: drawn and full
    s = c4sim.Solver(rows=2, cols=3, win_length=3, threads=1)
    assert s.scores([[0, 1, 2, 0, 1, 2]]).tolist() == [[FULL, FULL, FULL]]
    assert s.best_moves([[0, 1, 2, 0, 1, 2]]).tolist() == [-1]


def test_a_tiny_node_budget_gives_unknown_never_a_guess(labelled):
    tiny = c4sim.Solver(nodes=1, threads=1)
    entries = [e for e in labelled if e["set"] in ("begin-hard", "middle-hard") and e["ply"] >= 10][:6]
    assert entries
    rows = tiny.scores([e["moves"] for e in entries]).tolist()
    unknown = 0
    for row, e in zip(rows, entries):
        exp = label_row(e)
        for c, (got, want) in enumerate(zip(row, exp)):
            if got == UNKNOWN:
                assert want != FULL, (e["moves"], c)
                unknown += 1
            else:
                assert got == want, (e["moves"], c, row, exp)
    assert unknown > 0


def test_no_proven_column_means_no_best_move():
    tiny = c4sim.Solver(nodes=1, rows=5, cols=5, win_length=4, threads=1)
    assert tiny.scores([""]).tolist() == [[UNKNOWN] * 5]
    assert tiny.best_moves([""]).tolist() == [-1]
    ply10 = c4sim.Solver(nodes=1, threads=1)
    assert (ply10.scores(["4721224421"]) == UNKNOWN).all()
    assert ply10.best_moves(["4721224421"]).tolist() == [-1]


def test_best_moves_under_a_node_budget_is_a_best_column_or_none(labelled):
    """best_moves: "a best column ... −1 where none is proven". A column
    proven to lose while the others are unknown is not a best column."""
    budget = c4sim.Solver(nodes=1, threads=1)
    entries = [e for e in labelled if e["set"] == "middle-hard"][:10]
    best = budget.best_moves([e["moves"] for e in entries]).tolist()
    wrong = []
    for b, e in zip(best, entries):
        exp = label_row(e)
        if b != -1 and exp[b] != max(exp):
            wrong.append((e["moves"], b, exp))
    assert not wrong, f"best_moves gave columns that are not best: {wrong}"


# --------------------------------------------------------------------------
# Solver: bad input


@pytest.mark.parametrize(
    "position,pattern",
    [
        ("48", r"8"),
        ("40", r"0"),
        ([3, 7], r"7"),
        ([3, -2], r"-2"),
        ([3, -1, 4], r"padding"),
        ("1111111", r"full"),
        ([0, 0, 0, 0, 0, 0, 0], r"full"),
        ("1213141", r"line|won|ends|over"),
        ("12131415", r"line|won|ends|over"),
        ("4a5", r"a"),
        ("4-5", r"-"),
    ],
    ids=["col-8", "col-0", "seq-7", "seq-neg", "pad-then-col", "full", "full-seq", "won", "past-won", "letter", "dash"],
)
def test_bad_positions_name_the_position(solver, position, pattern):
    with pytest.raises(ValueError) as info:
        solver.scores(["", position])
    msg = str(info.value)
    assert msg.startswith("position 1") or "position 1" in msg, msg
    assert re.search(pattern, msg), msg
    with pytest.raises(ValueError):
        solver.best_moves([position])


@pytest.mark.parametrize(
    "positions",
    ["4453", None, 5, [None], [[3.0]], [[3, "a"]], [4453]],
    ids=["lone-string", "none", "int", "none-inside", "float-column", "str-column", "int-position"],
)
def test_malformed_position_lists_are_type_errors(solver, positions):
    with pytest.raises(TypeError):
        solver.scores(positions)


def test_an_empty_batch(solver):
    s = solver.scores([])
    assert s.shape == (0, 7) and s.dtype == np.int32
    b = solver.best_moves([])
    assert b.shape == (0,) and b.dtype == np.int64


@pytest.mark.parametrize(
    "kwargs",
    [dict(rows=0), dict(cols=17), dict(rows=4, cols=5, win_length=6), dict(win_length=0)],
    ids=["no-rows", "too-many-cols", "win-too-long", "win-zero"],
)
def test_bad_solver_boards(kwargs):
    with pytest.raises(ValueError):
        c4sim.Solver(**kwargs)


def test_negative_budgets_are_value_or_type_errors():
    """lib.rs: bad input is ValueError / TypeError."""
    wrong = {}
    for what, call in {
        "Solver(nodes=-1)": lambda: c4sim.Solver(nodes=-1),
        "Solver(threads=-1)": lambda: c4sim.Solver(threads=-1),
        "AlphaZero(simulations=-1)": lambda: c4sim.AlphaZero(simulations=-1),
    }.items():
        try:
            call()
        except (ValueError, TypeError):
            continue
        except Exception as e:  # noqa: BLE001
            wrong[what] = f"{type(e).__name__}: {e}"
        else:
            wrong[what] = "no exception"
    assert not wrong, wrong


# --------------------------------------------------------------------------
# Solver: other boards, against brute force


@pytest.mark.parametrize("rows,cols,win", [(3, 4, 3), (4, 4, 3), (4, 5, 3)], ids=["3x4w3", "4x4w3", "4x5w3"])
def test_small_empty_boards_match_brute_force(rows, cols, win):
    s = c4sim.Solver(rows=rows, cols=cols, win_length=win, threads=1)
    expected = brute_scores([], rows, cols, win)
    assert s.scores([""]).tolist() == [expected]
    assert s.scores([[]]).tolist() == [expected]
    b = int(s.best_moves([""])[0])
    assert expected[b] == max(expected)


def test_small_board_positions_match_brute_force():
    rows, cols, win = 4, 5, 3
    rng = random.Random(12)
    positions = []
    while len(positions) < 12:
        g = c4sim.Game(rows, cols, win)
        ok = True
        for _ in range(rng.randint(6, 12)):
            c = rng.choice([c for c in range(cols) if g.is_legal(c)])
            if g.play(c) != 0:
                ok = False
                break
        if ok:
            positions.append(g.moves)
    s = c4sim.Solver(rows=rows, cols=cols, win_length=win, threads=1)
    expected = [brute_scores(p, rows, cols, win) for p in positions]
    assert s.scores(positions).tolist() == expected
    # move strings (columns from 1) too
    assert s.scores(["".join(str(c + 1) for c in p) for p in positions]).tolist() == expected
    for b, exp in zip(s.best_moves(positions).tolist(), expected):
        assert exp[b] == max(exp)
    # two threads give the same
    assert c4sim.Solver(rows=rows, cols=cols, win_length=win, threads=2).scores(positions).tolist() == expected


def test_a_small_board_refuses_columns_past_its_width():
    s = c4sim.Solver(rows=4, cols=5, win_length=3, threads=1)
    with pytest.raises(ValueError, match="position 0"):
        s.scores(["6"])
    with pytest.raises(ValueError, match="position 0"):
        s.scores([[5]])


# --------------------------------------------------------------------------
# AlphaZero


@pytest.fixture(scope="module")
def az():
    return c4sim.AlphaZero(simulations=48)


# (moves, winning column): the side to move wins at once there, nowhere else
WINS_AT_ONCE = [
    # seat 0 to move: three in column 1; seat 1 has nothing
    ([0, 6, 0, 5, 0, 6], 0),
    # seat 1 to move: three in column 7; seat 0 threatens the bottom row
    ([3, 6, 3, 6, 2, 6, 4], 6),
]


def _obs(moves):
    g = c4sim.Game()
    for c in moves:
        g.play(c)
    return g.observation(g.to_move)


def test_the_win_fixtures_win_at_once(replay):
    for moves, col in WINS_AT_ONCE:
        g = replay(moves)
        wins = [c for c in range(7) if g.is_legal(c) and g.copy().play(c) == 1]
        assert wins == [col]


def test_alphazero_board(az):
    assert (az.rows, az.cols) == (6, 7)


def test_policy_value_shapes_and_sums(az):
    env = c4sim.VectorEnv(8, seed=3)
    obs, _ = env.reset()
    for _ in range(9):
        obs = env.step(env.random_actions())[0]
    policy, value = az.policy_value(obs["observation"])
    assert policy.shape == (8, 7) and policy.dtype == np.float32
    assert value.shape == (8,) and value.dtype == np.float32
    assert (policy >= 0).all()
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, atol=1e-5)
    assert ((value >= -1) & (value <= 1)).all()
    assert (policy[obs["action_mask"] == 0] == 0).all()


def test_policy_is_zero_on_full_columns(az):
    env = c4sim.VectorEnv(1, seed=0)
    env.reset()
    for c in [0, 0, 0, 0, 0, 0, 6, 6, 6, 5, 6, 6, 6]:  # columns 1 and 7 fill up, no line
        obs = env.step(np.array([c]))[0]
    assert obs["action_mask"][0].tolist() == [0, 1, 1, 1, 1, 1, 0]
    policy, value = az.policy_value(obs["observation"])
    assert policy[0, 0] == 0.0 and policy[0, 6] == 0.0
    assert policy[0, 1:6].min() > 0.0
    np.testing.assert_allclose(policy.sum(), 1.0, atol=1e-5)
    assert -1.0 <= value[0] <= 1.0


def test_policy_argmax_is_the_winning_column(az):
    obs = np.stack([_obs(m) for m, _ in WINS_AT_ONCE])
    policy, value = az.policy_value(obs)
    assert policy.argmax(axis=1).tolist() == [c for _, c in WINS_AT_ONCE]
    # the same positions as an env gives them
    for moves, col in WINS_AT_ONCE:
        env = c4sim.VectorEnv(1, seed=0)
        env.reset()
        for c in moves:
            o = env.step(np.array([c]))[0]["observation"]
        np.testing.assert_array_equal(o[0], _obs(moves))
        p, _ = az.policy_value(o)
        assert int(p[0].argmax()) == col


def test_policy_value_accepts_non_contiguous_arrays(az):
    obs = np.stack([_obs(m) for m, _ in WINS_AT_ONCE])
    wide = np.zeros(obs.shape[:-1] + (4,), np.int8)
    wide[..., ::2] = obs
    view = wide[..., ::2]
    assert not view.flags["C_CONTIGUOUS"]
    p1, v1 = az.policy_value(obs)
    p2, v2 = az.policy_value(view)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(v1, v2)
    # a batch of none
    p0, v0 = az.policy_value(np.zeros((0, 6, 7, 2), np.int8))
    assert p0.shape == (0, 7) and v0.shape == (0,)


def test_search_visit_shares(az):
    win0, win6 = WINS_AT_ONCE
    positions = [
        "".join(str(c + 1) for c in win0[0]),  # as a move string
        win6[0],  # as 0-based columns
        "",
        "111111",  # column 1 full
    ]
    shares = az.search(positions)
    assert shares.shape == (4, 7) and shares.dtype == np.float32
    assert (shares >= 0).all()
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, atol=1e-3)
    assert int(shares[0].argmax()) == win0[1]
    assert int(shares[1].argmax()) == win6[1]
    assert shares[3, 0] == 0.0


@pytest.mark.parametrize(
    "obs,exc",
    [
        (np.zeros((1, 6, 7, 2), np.float32), TypeError),
        (np.zeros((1, 6, 7, 2), np.int16), TypeError),
        (np.zeros((1, 6, 7, 2), np.uint8), TypeError),
        (np.zeros((6, 7, 2), np.int8), (TypeError, ValueError)),
        (np.zeros((1, 7, 6, 2), np.int8), ValueError),
        (np.zeros((1, 6, 7, 3), np.int8), ValueError),
        (np.zeros((1, 4, 5, 2), np.int8), ValueError),
        (np.full((1, 6, 7, 2), 2, np.int8), ValueError),
        (np.full((1, 6, 7, 2), -1, np.int8), ValueError),
        ([[0]], TypeError),
        (None, TypeError),
    ],
    ids=["float32", "int16", "uint8", "3d", "transposed", "3-channels", "4x5", "twos", "minus-ones", "list", "none"],
)
def test_policy_value_refuses_bad_observations(az, obs, exc):
    with pytest.raises(exc) as info:
        az.policy_value(obs)
    assert str(info.value)


@pytest.mark.parametrize(
    "positions,exc,pattern",
    [
        (["", "48"], ValueError, r"position 1"),
        (["", "1213141"], ValueError, r"position 1"),
        (["1111111"], ValueError, r"position 0"),
        ([[9]], ValueError, r"position 0"),
        ("44", TypeError, r"."),
        ([None], TypeError, r"."),
    ],
    ids=["column-8", "won", "full", "seq-out-of-range", "lone-string", "none"],
)
def test_search_refuses_bad_positions(az, positions, exc, pattern):
    with pytest.raises(exc, match=pattern):
        az.search(positions)


def test_a_missing_model_is_a_value_error(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ValueError, match="no-such-model"):
        c4sim.AlphaZero(missing)
    with pytest.raises(ValueError, match="no-such-model"):
        c4sim.AlphaZero(str(missing))
    with pytest.raises(ValueError):
        c4sim.AlphaZero(tmp_path)  # an empty folder is no model


def test_the_shipped_model_by_path():
    path = Path(c4sim.data_dir()) / "models" / "connect4-6x7"
    a = c4sim.AlphaZero(path, simulations=8)
    assert (a.rows, a.cols) == (6, 7)
    p, v = a.policy_value(np.stack([_obs(WINS_AT_ONCE[0][0])]))
    assert int(p[0].argmax()) == WINS_AT_ONCE[0][1]


def test_a_padded_final_moves_row_is_a_position(solver):
    """Trailing −1s are padding, so an env's ``final_moves`` row (a numpy
    array) can be scored as it is; the scores equal the unpadded position's."""
    padded = np.array([3, 3, 4, -1, -1, -1], dtype=np.int8)
    assert solver.scores([padded]).tolist() == solver.scores([[3, 3, 4]]).tolist()
    assert solver.scores([padded]).tolist() == solver.scores(["445"]).tolist()


def test_the_table_size_changes_speed_not_scores():
    small = c4sim.Solver(threads=1, table_log2=12)
    big = c4sim.Solver(threads=1, table_log2=20)
    positions = ["4453", "444455", "3344551"]
    assert small.scores(positions).tolist() == big.scores(positions).tolist()
    with pytest.raises(ValueError, match="30"):
        c4sim.Solver(table_log2=31)
