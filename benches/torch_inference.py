#!/usr/bin/env python3
"""PyTorch CPU inference of the same network as c4sim's AlphaZero net, for
`c4sim bench inference --torch PYTHON`: the baseline c4sim is compared to.

Same shapes: 3x3 conv stem, BLOCKS residual blocks of two 3x3 convs with
batch norm and ReLU, CHANNELS filters, policy head (1x1 conv to 2, linear
to cols), value head (1x1 conv to 1, linear to 64, ReLU, linear, tanh).
Eval mode, torch.inference_mode, float32. Prints one line per batch size:
`BATCH RATE_DEFAULT_THREADS RATE_ONE_THREAD` in positions per second
(median of ROUNDS rounds of at least MIN_TIME seconds).

torch is not a dependency of c4sim: install it in a virtual environment
outside the repository (`python3 -m venv /tmp/t && /tmp/t/bin/pip install torch`).
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(x + y)


class Net(nn.Module):
    def __init__(self, rows, cols, blocks, channels, hidden=64):
        super().__init__()
        hw = rows * cols
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(channels) for _ in range(blocks)])
        self.p = nn.Sequential(nn.Conv2d(channels, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                               nn.Linear(2 * hw, cols))
        self.v = nn.Sequential(nn.Conv2d(channels, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU(), nn.Flatten(),
                               nn.Linear(hw, hidden), nn.ReLU(), nn.Linear(hidden, 1), nn.Tanh())

    def forward(self, x):
        h = self.blocks(self.stem(x))
        return self.p(h), self.v(h)


def rate(net, x, rounds, min_time):
    b = x.shape[0]
    with torch.inference_mode():
        net(x)
        rates = []
        for _ in range(rounds):
            t = time.perf_counter()
            n = 0
            while time.perf_counter() - t < min_time:
                net(x)
                n += b
            rates.append(n / (time.perf_counter() - t))
    return statistics.median(rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=6)
    ap.add_argument("--cols", type=int, default=7)
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 32, 256])
    a = ap.parse_args()
    torch.manual_seed(0)
    net = Net(a.rows, a.cols, a.blocks, a.channels).eval()
    default_threads = torch.get_num_threads()
    for b in a.batches:
        x = (torch.rand(b, 3, a.rows, a.cols) < 0.3).float()
        torch.set_num_threads(default_threads)
        d = rate(net, x, a.rounds, a.min_time)
        torch.set_num_threads(1)
        o = rate(net, x, a.rounds, a.min_time)
        print(b, f"{d:.1f}", f"{o:.1f}", flush=True)


if __name__ == "__main__":
    main()
