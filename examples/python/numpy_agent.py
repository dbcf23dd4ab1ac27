#!/usr/bin/env python3
"""A Connect Four agent trained with numpy alone, against a random opponent.

The agent is a small network (84 inputs → 128 ReLU units → 7 move logits and a
value), trained by advantage actor-critic (A2C with generalised advantage
estimation) on ``c4sim.VectorEnv(256, opponent={"kind": "random"})``, with
the gradients written out by hand and Adam in numpy: no torch, no jax.

What the env gives (docs/python.md):

* ``obs["observation"]`` (N, 6, 7, 2) int8, always from the agent's view:
  with an opponent, every observation is one where the agent is to move, so
  channel 0 is the agent's pieces and channel 1 the opponent's.
* ``obs["action_mask"]`` (N, 7) int8: the logits of full columns are masked
  out, so the agent never plays an illegal move (``step`` would raise).
* ``step`` plays the agent's move and the opponent's reply. ``rewards`` is the
  agent's: +1 when its move wins, −1 when the reply wins, 0 otherwise.
* Autoreset: an env whose game ended restarts within the same step. The
  observation it returns is already the next game's first; the ended game is
  in ``infos["final_moves"]`` / ``infos["final_length"]``. So a termination
  at step t cuts the return there: the value of the observation after it
  belongs to another game and is not bootstrapped from.
* The agent moves first in each env's even-numbered games and second in the
  odd ones: training and evaluation see both sides.

It prints the win rate of the games finished in each window of updates, then
plays greedily (the most likely legal column) on a fresh, differently seeded
VectorEnv: the first two games of each of 512 envs (1,024 games, half moving
first, half second), each replayed from ``final_moves`` on ``c4sim.Game`` to
check the referee agrees with the reward. It exits with status 1 when the
greedy win rate is below 90%.

Seeded: the same ``--seed`` gives the same numbers on the same machine.

    python examples/python/numpy_agent.py            # about 7 s on 2 cores
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

import c4sim

OPPONENT = {"kind": "random"}


class Agent:
    """An MLP policy and value in numpy, with a hand-written backward pass
    and Adam."""

    def __init__(self, inputs: int, hidden: int, actions: int, rng: np.random.Generator, lr: float):
        f32 = np.float32
        self.p = {
            "W1": rng.normal(0, math.sqrt(2 / inputs), (inputs, hidden)).astype(f32),  # He init for ReLU
            "b1": np.zeros(hidden, f32),
            "W2": rng.normal(0, 0.01, (hidden, actions)).astype(f32),  # near-uniform first policy
            "b2": np.zeros(actions, f32),
            "wv": rng.normal(0, 0.01, hidden).astype(f32),
            "bv": np.zeros((), f32),
        }
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.lr, self.t = lr, 0

    def forward(self, x: np.ndarray, mask: np.ndarray):
        """(hidden activations, move probabilities over the legal columns, values)."""
        p = self.p
        h = np.maximum(x @ p["W1"] + p["b1"], 0)
        logits = np.where(mask, h @ p["W2"] + p["b2"], -1e9)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)  # exactly 0 on full columns
        return h, e / e.sum(axis=1, keepdims=True), h @ p["wv"] + p["bv"]

    def update(self, x, mask, actions, advantages, returns, entropy_coef: float) -> float:
        """One gradient step on the A2C loss
        −mean(A·log π(a)) − c·mean(H(π)) + ¼·mean((V − R)²) (the value term
        at half weight); returns the mean entropy."""
        p, n = self.p, len(actions)
        h, prob, value = self.forward(x, mask)
        logp = np.log(np.where(mask, prob, 1.0))  # 0 where masked: those terms vanish
        entropy = -(prob * logp).sum(axis=1)
        # d/dlogits of −A·log π(a): −A·(onehot(a) − π)
        dlogits = prob * advantages[:, None]
        dlogits[np.arange(n), actions] -= advantages
        # d/dlogits of −c·H: c·π·(log π + H)
        dlogits += entropy_coef * prob * (logp + entropy[:, None])
        dlogits /= n
        dvalue = 0.5 * (value - returns) / n
        grads = {
            "W2": h.T @ dlogits,
            "b2": dlogits.sum(axis=0),
            "wv": h.T @ dvalue,
            "bv": dvalue.sum(),
        }
        dh = (dlogits @ p["W2"].T + np.outer(dvalue, p["wv"])) * (h > 0)
        grads["W1"], grads["b1"] = x.T @ dh, dh.sum(axis=0)
        self.t += 1
        for k, g in grads.items():  # Adam (0.9, 0.999)
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat = self.m[k] / (1 - 0.9**self.t)
            v_hat = self.v[k] / (1 - 0.999**self.t)
            p[k] -= (self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)
        return float(entropy.mean())


def features(obs: dict) -> tuple[np.ndarray, np.ndarray]:
    """The flat board (N, rows·cols·2) as float32 and the mask as bool."""
    x = obs["observation"]
    return x.reshape(len(x), -1).astype(np.float32), obs["action_mask"].astype(bool)


def sample(prob: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column per row, drawn from ``prob`` (inverse CDF). The uniform
    draw is scaled by the row's total so float rounding can never step past
    the last legal column."""
    cdf = prob.cumsum(axis=1)
    u = rng.random((len(prob), 1)) * cdf[:, -1:]
    return (cdf > u).argmax(axis=1)


def train(agent: Agent, args, rng: np.random.Generator) -> None:
    env = c4sim.VectorEnv(args.envs, seed=args.seed, opponent=OPPONENT)
    obs, _ = env.reset()
    n, T = args.envs, args.steps
    started = time.perf_counter()
    wins = losses = draws = plies = 0
    for update in range(1, args.updates + 1):
        xs, masks, acts, values, rewards, dones = [], [], [], [], [], []
        for _ in range(T):
            x, mask = features(obs)
            _, prob, value = agent.forward(x, mask)
            a = sample(prob, rng)
            obs, r, term, _trunc, infos = env.step(a)
            for store, item in zip((xs, masks, acts, values, rewards, dones), (x, mask, a, value, r, term)):
                store.append(item)
            wins += int((r > 0).sum())
            losses += int((r < 0).sum())
            draws += int((term & (r == 0)).sum())
            plies += int(infos["final_length"].sum())  # 0 where no game ended
        # Generalised advantage estimation over the rollout (γ, λ). A done
        # step's successor is another game's start: no bootstrap across it.
        _, _, next_value = agent.forward(*features(obs))
        adv = np.zeros((T, n), np.float32)
        running = np.zeros(n, np.float32)
        for t in reversed(range(T)):
            alive = 1.0 - dones[t]
            delta = rewards[t] + args.gamma * next_value * alive - values[t]
            running = delta + args.gamma * args.lam * alive * running
            adv[t] = running
            next_value = values[t]
        returns = (adv + np.array(values)).reshape(-1)
        adv = adv.reshape(-1)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        entropy = agent.update(np.concatenate(xs), np.concatenate(masks), np.concatenate(acts),
                               adv, returns, args.entropy)
        if update % args.print_every == 0:
            games = wins + losses + draws
            print(f"update {update:4d}: {games:5d} games, won {100 * wins / games:5.1f}%, "
                  f"lost {100 * losses / games:4.1f}%, {plies / games:4.1f} plies a game, "
                  f"entropy {entropy:.2f}, {time.perf_counter() - started:5.1f} s", flush=True)
            wins = losses = draws = plies = 0


def evaluate(agent: Agent, envs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Greedy play on a fresh env: the first two games of every env (game 0
    the agent moves first, game 1 second). Returns each counted game's
    reward (+1/0/−1) and whether the agent moved first."""
    env = c4sim.VectorEnv(envs, seed=seed, opponent=OPPONENT)
    obs, _ = env.reset()
    finished = np.zeros(envs, int)  # games ended so far in each env
    results, first = [], []
    while (finished < 2).any():
        x, mask = features(obs)
        _, prob, _ = agent.forward(x, mask)
        obs, r, term, _trunc, infos = env.step(prob.argmax(axis=1))
        for i in np.flatnonzero(term & (finished < 2)):
            agent_seat = finished[i] % 2  # even games: the agent is seat 0
            # Replay the ended game on the referee: its winner must match the reward.
            game = c4sim.Game()
            for col in infos["final_moves"][i, : infos["final_length"][i]]:
                game.play(int(col))
            expected = 0 if game.winner is None else (1 if game.winner == agent_seat else -1)
            assert game.over and expected == r[i], (i, r[i], game.moves)
            results.append(r[i])
            first.append(agent_seat == 0)
        finished += term
    return np.array(results), np.array(first)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=256, help="training envs (default %(default)s)")
    ap.add_argument("--steps", type=int, default=16, help="steps per env per update (default %(default)s)")
    ap.add_argument("--updates", type=int, default=600, help="updates (default %(default)s)")
    ap.add_argument("--hidden", type=int, default=128, help="hidden units (default %(default)s)")
    ap.add_argument("--lr", type=float, default=3e-3, help="Adam's step size (default %(default)s)")
    ap.add_argument("--entropy", type=float, default=0.03,
                    help="entropy bonus; lower settles sooner on a weaker policy (default %(default)s)")
    ap.add_argument("--gamma", type=float, default=0.99, help="discount (default %(default)s)")
    ap.add_argument("--lam", type=float, default=0.95, help="GAE λ (default %(default)s)")
    ap.add_argument("--eval-envs", type=int, default=512,
                    help="evaluation envs, two games each (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="seed (default %(default)s)")
    ap.add_argument("--print-every", type=int, default=50, help="updates between progress lines")
    args = ap.parse_args()

    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    probe = c4sim.Game()
    agent = Agent(probe.rows * probe.cols * 2, args.hidden, probe.cols, rng, args.lr)
    print(f"training: {args.updates} updates × {args.envs} envs × {args.steps} steps "
          f"against {OPPONENT}, seed {args.seed}")
    train(agent, args, rng)

    # Another seed than training's: other opponent moves, other games.
    results, first = evaluate(agent, args.eval_envs, seed=args.seed + 1_000_003)
    n = len(results)
    p = float((results > 0).mean())
    se = math.sqrt(p * (1 - p) / n)
    print(f"greedy, fresh env: {n} games, won {100 * p:.1f}% ± {100 * se:.1f} "
          f"(moving first {100 * (results[first] > 0).mean():.1f}%, "
          f"second {100 * (results[~first] > 0).mean():.1f}%), "
          f"lost {100 * (results < 0).mean():.1f}%, drawn {100 * (results == 0).mean():.1f}%; "
          f"{time.perf_counter() - started:.1f} s in all")
    if p < 0.9:
        print("below 90%: FAIL")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
