#!/usr/bin/env python3
"""Test bot: names a legal column but sends a board that was tampered with."""
import sys
block = {}
for line in sys.stdin:
    line = line.rstrip("\n")
    if line:
        k, _, v = line.partition(":")
        block[k.strip()] = v.strip()
        continue
    if "BOARD" in block:
        board = "Y" * len(block["BOARD"])
        print(f"MOVE: 1\nBOARD: {board}", flush=True)
    block = {}
