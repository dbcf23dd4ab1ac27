#!/usr/bin/env python3
"""c4sim for Python against its peers, side by side, in one run.

    python benches/python/bench.py [--only envs,pettingzoo,solver] [--rounds 5]
        [--seconds 1.0] [--positions 36] [--solver-rounds 3] [--batch 1024]
        [--c4sim target/release/c4sim] [--pons PATH]

It installs nothing: every peer that is not importable or not found is
skipped, and the run says which and why (see benches/python/README.md for how
to get them). Figures are medians over rounds; the contestants of a section
take their rounds in turn (A B C, A B C, ...) so that a shared machine's load
falls on all of them alike. Ratios come from the same run.

Sections:
  envs        c4sim.VectorEnv random masked play (numpy-drawn and native
              actions) vs pgx connect_four (jax.jit + vmap, CPU) and
              PettingZoo's connect_four_v3 AEC loop: env steps per second.
  pettingzoo  c4sim.pettingzoo.connect_four_v3 vs pettingzoo.classic's, the
              same AEC loop: moves per second.
  solver      c4sim.Solver(threads=1).scores vs `c4sim analyze` (solver with
              the score book), bitbully (no opening book) and Pascal Pons'
              c4solver -a (no opening book) on the same positions from
              benches/accuracy/sets-v1.jsonl; every answer is checked against
              the file's labels, and any disagreement fails the run (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # CPU only: no accelerator probing

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "benches" / "accuracy" / "sets-v1.jsonl"
SECTIONS = ("envs", "pettingzoo", "solver")
# One thread, as c4sim.Solver(threads=1): analysis otherwise scores the
# columns on every core.
SCORE_BOOK_SPEC = "{kind: solver, scores: models/solver-scores-6x7.bin, threads: 1}"
ROWS, COLS = 6, 7


# ---------------------------------------------------------------- peers


class Peers:
    """What this run found: each name → the module / path, or why not."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.found: dict[str, object] = {}
        self.skipped: dict[str, str] = {}
        self.args = args

    def _try(self, name: str, fn) -> None:
        try:
            self.found[name] = fn()
        except Exception as e:  # noqa: BLE001 — any failure means "skip, and say why"
            self.skipped[name] = f"{type(e).__name__}: {e}".splitlines()[0]

    def detect(self, sections: set[str]) -> None:
        def c4sim_mod():
            import c4sim

            missing = [a for a in ("VectorEnv", "Solver") if not hasattr(c4sim, a)]
            if missing:
                raise ImportError(f"c4sim at {c4sim.__file__} lacks {', '.join(missing)}")
            return c4sim

        self._try("c4sim", c4sim_mod)
        if "envs" in sections:

            def pgx_mod():
                import jax
                import pgx

                return (jax, pgx)

            self._try("pgx", pgx_mod)
        if sections & {"envs", "pettingzoo"}:

            def pz_mod():
                import pettingzoo
                from pettingzoo.classic import connect_four_v3

                return (pettingzoo.__version__, connect_four_v3)

            self._try("pettingzoo", pz_mod)
        if "pettingzoo" in sections:

            def dropin():
                from c4sim.pettingzoo import connect_four_v3

                return connect_four_v3

            self._try("c4sim.pettingzoo", dropin)
        if "solver" in sections:

            def bitbully_mod():
                import bitbully

                return bitbully

            self._try("bitbully", bitbully_mod)
            self._try("c4sim CLI", lambda: self._binary(self.args.c4sim, "c4sim", "--c4sim"))
            self._try("Pons c4solver", lambda: self._binary(self.args.pons, "c4solver", "--pons"))

    @staticmethod
    def _binary(path: str | None, name: str, flag: str) -> str:
        if path is None:
            raise FileNotFoundError(f"not found (give {flag} PATH)")
        p = Path(path)
        if not p.is_file() and shutil.which(path):
            p = Path(shutil.which(path))
        if not p.is_file():
            raise FileNotFoundError(f"{path} does not exist (give {flag} PATH)")
        if not os.access(p, os.X_OK):
            raise PermissionError(f"{p} is not executable")
        return str(p)

    def report(self) -> None:
        print("peers found:")
        for name, v in self.found.items():
            print(f"  {name:18} {describe(name, v)}")
        if self.skipped:
            print("peers skipped:")
            for name, why in self.skipped.items():
                print(f"  {name:18} {why}")
        print()


def describe(name: str, v: object) -> str:
    if name == "c4sim":
        return f"{getattr(v, '__version__', '?')} ({v.__file__})"
    if name == "pgx":
        jax, pgx = v
        return f"pgx {pgx.__version__}, jax {jax.__version__} on {jax.devices()[0].platform}"
    if name == "pettingzoo":
        return f"pettingzoo {v[0]}"
    if name == "bitbully":
        return f"bitbully {getattr(v, '__version__', '?')}"
    if name == "c4sim.pettingzoo":
        return v.__name__
    return str(v)


# ---------------------------------------------------------------- timing


class Rate:
    """A contestant of a throughput race: ``run(n)`` does n calls and returns
    the units done (env steps or moves), waiting until they are really done."""

    def __init__(self, label: str, run, unit: str) -> None:
        self.label, self.run, self.unit = label, run, unit
        self.calls = 1
        self.rates: list[float] = []

    def calibrate(self, seconds: float) -> None:
        """Warms up, then sets the calls per round so a round takes ~seconds."""
        self.run(1)
        n = 1
        while True:
            t = time.perf_counter()
            self.run(n)
            dt = time.perf_counter() - t
            if dt >= 0.1:
                break
            n *= 4 if dt < 0.02 else 2
        self.calls = max(1, round(n * seconds / dt))

    def round(self) -> None:
        t = time.perf_counter()
        units = self.run(self.calls)
        self.rates.append(units / (time.perf_counter() - t))

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def race(contestants: list[Rate], rounds: int, seconds: float) -> None:
    for c in contestants:
        c.calibrate(seconds)
    for r in range(rounds):
        for c in contestants:
            c.round()
    for c in contestants:
        spread = f"{min(c.rates):,.0f}..{max(c.rates):,.0f}"
        print(f"  {c.label:56} {c.median:>14,.0f} {c.unit}/s  (median of {rounds}; {spread})")


# ---------------------------------------------------------------- envs


def c4sim_numpy(c4sim, n: int, threads: int) -> Rate:
    env = c4sim.VectorEnv(n, seed=0, threads=threads)
    rng = np.random.default_rng(0)
    state = {"obs": env.reset(seed=0)[0]}

    def run(calls: int) -> int:
        obs = state["obs"]
        for _ in range(calls):
            actions = (rng.random((n, env.cols)) * obs["action_mask"]).argmax(axis=1)
            obs = env.step(actions)[0]
        state["obs"] = obs
        return calls * n

    return Rate(f"c4sim.VectorEnv({n}, threads={threads}), numpy-drawn actions", run, "steps")


def c4sim_native(c4sim, n: int, threads: int) -> Rate:
    # copy=False: the same arrays each step, overwritten (nothing allocated).
    env = c4sim.VectorEnv(n, seed=0, threads=threads, copy=False)
    env.reset(seed=0)

    def run(calls: int) -> int:
        for _ in range(calls):
            env.step(env.random_actions())
        return calls * n

    return Rate(f"c4sim.VectorEnv({n}, threads={threads}, copy=False), env.random_actions()", run, "steps")


def pgx_rates(jax, pgx, n: int, fused: int) -> list[Rate]:
    import jax.numpy as jnp
    from pgx.experimental import auto_reset

    env = pgx.make("connect_four")
    step = jax.vmap(auto_reset(env.step, env.init))

    def one(state, key):
        key, k_act, k_env = jax.random.split(key, 3)
        logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
        action = jax.random.categorical(k_act, logits, axis=1)
        return step(state, action, jax.random.split(k_env, n)), key

    one_jit = jax.jit(one, donate_argnums=0)

    @jax.jit
    def scan(state, key):
        return jax.lax.scan(lambda c, _: (one(*c), None), (state, key), None, length=fused)[0]

    out = []
    for label, fn, per_call in (
        (f"pgx connect_four, vmap {n}, one jit call a step", one_jit, 1),
        (f"pgx connect_four, vmap {n}, {fused} steps per jit (scan)", scan, fused),
    ):
        key = jax.random.PRNGKey(0)
        key, k0 = jax.random.split(key)
        box = {"s": jax.jit(jax.vmap(env.init))(jax.random.split(k0, n)), "k": key}

        def run(calls: int, fn=fn, box=box, per_call=per_call) -> int:
            s, k = box["s"], box["k"]
            for _ in range(calls):
                s, k = fn(s, k)
            jax.block_until_ready(s)
            box["s"], box["k"] = s, k
            return calls * per_call * n

        out.append(Rate(label, run, "steps"))
    return out


def aec_rate(label: str, make_env, seed: int) -> Rate:
    """PettingZoo's AEC loop (agent_iter / last / step) with a seeded random
    legal action; counts moves (the step(None) of finished agents are part of
    the cost but not counted)."""
    env = make_env()
    rnd = random.Random(seed)
    box = {"it": None, "game": 0}

    def new_game() -> None:
        env.reset(seed=seed + box["game"])
        box["game"] += 1
        box["it"] = iter(env.agent_iter())

    new_game()

    def run(moves: int) -> int:
        done = 0
        it = box["it"]
        while done < moves:
            try:
                next(it)
            except StopIteration:
                new_game()
                it = box["it"]
                continue
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rnd.randrange(len(legal))]))
            done += 1
        return done

    return Rate(label, run, "moves")


# ---------------------------------------------------------------- solver


def load_positions(path: Path, count: int, lo: int, hi: int, seed: int) -> list[dict]:
    """A fixed, stratified sample: the same number from each set (round-robin
    over the sets in file order), plies lo..hi, drawn with `seed`."""
    by_set: dict[str, list[dict]] = {}
    with open(path) as f:
        header = json.loads(f.readline())
        for line in f:
            r = json.loads(line)
            if lo <= r["ply"] <= hi:
                by_set.setdefault(r["set"], []).append(r)
    rng = random.Random(seed)
    pools = [rng.sample(v, len(v)) for v in (by_set[s] for s in header["sets"] if s in by_set)]
    picked: list[dict] = []
    while len(picked) < count and any(pools):
        for p in pools:
            if p and len(picked) < count:
                picked.append(p.pop())
    return picked


def parse_scores_c4sim(arr, full: int, unknown: int) -> list[list]:
    return [[None if s == full else ("unknown" if s == unknown else int(s)) for s in row] for row in arr]


def run_c4sim_python(c4sim, moves: list[str]) -> list[list]:
    solver = c4sim.Solver(threads=1)
    return parse_scores_c4sim(solver.scores(moves), c4sim.Solver.FULL, c4sim.Solver.UNKNOWN)


def run_c4sim_cli(binary: str, spec: str, moves: list[str]) -> list[list]:
    out = subprocess.run(
        [binary, "analyze", "--player", spec],
        input="".join(m + "\n" for m in moves),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(f"c4sim analyze exited {out.returncode}: {out.stderr.strip()[-300:]}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [r.get("scores") or ["error"] * COLS for r in rows]


def run_bitbully(bitbully, moves: list[str]) -> list[list]:
    agent = bitbully.BitBully(opening_book=None)
    assert not agent.is_book_loaded()
    res = []
    for m in moves:
        board = bitbully.Board("".join(str(int(c) - 1) for c in m))  # its columns count from 0
        s = agent.score_all_moves(board)  # full columns are left out
        res.append([s.get(c) for c in range(COLS)])
    return res


def run_pons(binary: str, moves: list[str]) -> list[list]:
    with tempfile.TemporaryDirectory() as d:
        book = str(Path(d) / "no-such.book")  # no opening book: it fails to load, and says so
        out = subprocess.run(
            [binary, "-a", "-b", book],
            input="".join(m + "\n" for m in moves),
            capture_output=True,
            text=True,
            cwd=d,
        )
    if "Unable to load opening book" not in out.stderr:
        raise RuntimeError(f"c4solver may have loaded a book: {out.stderr.strip()[:200]}")
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split()
        rows.append([None if int(x) == -1000 else int(x) for x in parts[1:]])
    return rows


def solver_section(args, peers: Peers, results: list) -> int:
    positions = load_positions(args.sets, args.positions, args.min_ply, args.max_ply, args.seed)
    moves = [p["moves"] for p in positions]
    truth = [p["scores"] for p in positions]
    groups = {}
    for p in positions:
        groups[p["set"]] = groups.get(p["set"], 0) + 1
    print(
        f"solver: {len(moves)} positions from {args.sets.name}, plies {args.min_ply}-{args.max_ply} "
        f"(ply {min(p['ply'] for p in positions)}..{max(p['ply'] for p in positions)}; "
        + ", ".join(f"{k} {v}" for k, v in groups.items())
        + f"), label nodes {sum(p['nodes'] for p in positions):,}; every column's score, "
        f"median wall time of {args.solver_rounds} rounds, each a fresh solver"
    )
    runners = []
    if "c4sim" in peers.found:
        runners.append(("c4sim.Solver(threads=1).scores", lambda: run_c4sim_python(peers.found["c4sim"], moves)))
    if "c4sim CLI" in peers.found:
        runners.append(("c4sim analyze (score book)", lambda: run_c4sim_cli(peers.found["c4sim CLI"], args.cli_spec, moves)))
    if "bitbully" in peers.found:
        runners.append(("bitbully score_all_moves (no book)", lambda: run_bitbully(peers.found["bitbully"], moves)))
    if "Pons c4solver" in peers.found:
        runners.append(("Pons c4solver -a (no book)", lambda: run_pons(peers.found["Pons c4solver"], moves)))
    times: dict[str, list[float]] = {name: [] for name, _ in runners}
    mismatches: dict[str, int] = {}
    examples: dict[str, str] = {}
    for r in range(args.solver_rounds):
        for name, fn in runners:
            t = time.perf_counter()
            got = fn()
            times[name].append(time.perf_counter() - t)
            if r == 0:
                bad = [i for i in range(len(truth)) if i >= len(got) or list(got[i]) != truth[i]]
                mismatches[name] = len(bad)
                if bad:
                    i = bad[0]
                    examples[name] = f"{moves[i]}: got {got[i] if i < len(got) else 'nothing'}, label {truth[i]}"
    med = {name: statistics.median(ts) for name, ts in times.items()}
    for name, _ in runners:
        ts = times[name]
        print(
            f"  {name:40} {med[name]:>9.3f} s  (median of {len(ts)}; {min(ts):.3f}..{max(ts):.3f}); "
            f"mismatches vs labels: {mismatches[name]}/{len(moves)}"
            + (f"  e.g. {examples[name]}" if name in examples else "")
        )
    base = "c4sim.Solver(threads=1).scores"
    if base in med:
        for name, _ in runners:
            if name == base:
                results.append(("solver: " + name, f"{med[name]:.3f} s", "", "", ""))
                continue
            ratio = med[name] / med[base]  # c4sim's speed ÷ the peer's
            if name.startswith("c4sim analyze"):  # goal: the Python call at most 10% slower
                goal, met = ">= 0.91x", ratio >= 1 / 1.10
            else:
                goal, met = "", None
            results.append(("solver: c4sim.Solver vs " + name, f"{med[name]:.3f} s", f"{ratio:.2f}x", goal, met))
    else:
        for name, _ in runners:
            results.append(("solver: " + name, f"{med[name]:.3f} s", "", "", ""))
    total = sum(mismatches.values())
    results.append(("solver: mismatches vs labels, all solvers", str(total), "", "0", total == 0))
    return total


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma list of: " + ",".join(SECTIONS))
    ap.add_argument("--rounds", type=int, default=5, help="rounds per throughput figure (median)")
    ap.add_argument("--seconds", type=float, default=1.0, help="seconds per throughput round")
    ap.add_argument("--batch", type=int, default=1024, help="envs per batch (c4sim and pgx)")
    ap.add_argument("--env-threads", type=int, default=0, help="c4sim.VectorEnv threads (0: its default, one per core)")
    ap.add_argument("--fused", type=int, default=64, help="pgx steps per jit call in its scan variant")
    ap.add_argument("--positions", type=int, default=36, help="solver positions (stratified over the sets)")
    ap.add_argument("--solver-rounds", type=int, default=3, help="rounds of the whole solver set (median)")
    ap.add_argument("--min-ply", type=int, default=9)
    ap.add_argument("--max-ply", type=int, default=34)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sets", type=Path, default=SETS)
    ap.add_argument("--c4sim", default=str(ROOT / "target" / "release" / "c4sim"), help="the c4sim binary")
    ap.add_argument("--cli-spec", default=SCORE_BOOK_SPEC, help="player spec for `c4sim analyze` (default %(default)s)")
    default_pons = os.environ.get("C4SIM_PONS") or "/work/peers/pons/c4solver"
    ap.add_argument("--pons", default=default_pons, help="Pascal Pons' c4solver (default $C4SIM_PONS or %(default)s)")
    args = ap.parse_args()
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = sections - set(SECTIONS)
    if unknown:
        ap.error(f"--only: unknown {', '.join(sorted(unknown))}; choose from {', '.join(SECTIONS)}")

    t_start = time.perf_counter()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs; sections: {', '.join(s for s in SECTIONS if s in sections)}")
    peers = Peers(args)
    peers.detect(sections)
    peers.report()
    results: list[tuple] = []  # (figure, value, ratio, goal, met)
    failed = 0
    c4 = peers.found.get("c4sim")
    n = args.batch

    def pz_aec() -> Rate | None:  # a fresh contestant per section
        if "pettingzoo" not in peers.found:
            return None
        return aec_rate("pettingzoo.classic connect_four_v3 AEC loop", peers.found["pettingzoo"][1].env, args.seed)

    if "envs" in sections:
        print(f"envs: random masked play, batch {n}; steps/s = envs stepped per second")
        contestants = []
        pz_rate = pz_aec()
        if c4:
            contestants += [c4sim_numpy(c4, n, args.env_threads), c4sim_native(c4, n, args.env_threads)]
        if "pgx" in peers.found:
            contestants += pgx_rates(*peers.found["pgx"], n, args.fused)
        if pz_rate:
            contestants.append(pz_rate)
        race(contestants, args.rounds, args.seconds)
        c4_np = next((c for c in contestants if "numpy-drawn" in c.label), None)
        c4_nat = next((c for c in contestants if "random_actions" in c.label), None)
        pgx1 = next((c for c in contestants if c.label.endswith("one jit call a step")), None)
        pgxs = next((c for c in contestants if c.label.endswith("(scan)")), None)
        for c in (c4_np, c4_nat):
            if c:
                results.append(("envs: " + c.label, f"{c.median:,.0f} steps/s", "", "", ""))
        for peer, goal in ((pgx1, 10), (pgxs, None), (pz_rate, 500)):
            if not peer:
                continue
            for c in (c4_np, c4_nat):
                if not c:
                    continue
                ratio = c.median / peer.median
                how = "numpy actions" if c is c4_np else "native actions"
                # pgx draws its actions inside its jitted step, as
                # env.random_actions() does in Rust: that pair is the like
                # for like one; numpy-drawn actions are for information.
                g = None if (peer is pgx1 and c is c4_np) else goal
                results.append(
                    (f"envs: c4sim ({how}) vs {peer.label}", f"{peer.median:,.0f} {peer.unit}/s", f"{ratio:,.1f}x",
                     f">= {g}x" if g else "", (ratio >= g) if g else None)
                )
        print()

    if "pettingzoo" in sections:
        print("pettingzoo: the AEC loop (agent_iter / last / step, seeded random legal action); moves/s")
        contestants = []
        pz_rate = pz_aec()
        drop = None
        if "c4sim.pettingzoo" in peers.found:
            drop = aec_rate("c4sim.pettingzoo connect_four_v3 AEC loop", peers.found["c4sim.pettingzoo"].env, args.seed)
            contestants.append(drop)
        if pz_rate:
            contestants.append(pz_rate)
        race(contestants, args.rounds, args.seconds)
        if drop:
            results.append(("pettingzoo: " + drop.label, f"{drop.median:,.0f} moves/s", "", "", ""))
        if drop and pz_rate:
            ratio = drop.median / pz_rate.median
            results.append(("pettingzoo: drop-in vs " + pz_rate.label, f"{pz_rate.median:,.0f} moves/s", f"{ratio:,.1f}x", ">= 5x", ratio >= 5))
        print()

    if "solver" in sections:
        failed = solver_section(args, peers, results)
        print()

    print(f"summary (one run, {time.perf_counter() - t_start:.0f} s; value: the peer's figure, or c4sim's own;")
    print("  ratio: c4sim's speed / the peer's, > 1 = c4sim faster; solver speed = 1 / wall time):")
    w = max(len(r[0]) for r in results) if results else 10
    print(f"  {'figure':{w}}  {'value':>18}  {'ratio':>14}  {'goal':>16}  met")
    for fig, val, ratio, goal, met in results:
        m = "" if met in ("", None) else ("yes" if met else "NO")
        print(f"  {fig:{w}}  {val:>18}  {ratio:>14}  {goal:>16}  {m}")
    if failed:
        print(f"\nFAILED: {failed} solver answers disagree with the labels (see above)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
