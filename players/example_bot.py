#!/usr/bin/env python3
"""An example c4sim external player (spec: docs/external-player.md).

It takes a winning move when it has one, blocks the opponent's winning move
otherwise, and else plays the legal column nearest the centre. It also sends
the board after its move, which c4sim checks. Standard library only.
"""
import sys


def read_block(stdin):
    """Reads one request block (key: value lines up to an empty line)."""
    block = {}
    for line in stdin:
        line = line.rstrip("\n")
        if line == "":
            if block:
                return block
            continue
        key, _, value = line.partition(":")
        block[key.strip()] = value.strip()
    return block or None


def drop(cells, rows, cols, col, piece):
    """Returns the board after dropping `piece` in `col`, or None if full."""
    for row in range(rows - 1, -1, -1):  # row 0 is the top row
        i = row * cols + col
        if cells[i] == ".":
            out = list(cells)
            out[i] = piece
            return out
    return None


def wins(cells, rows, cols, need, piece):
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                if all(
                    0 <= r + k * dr < rows
                    and 0 <= c + k * dc < cols
                    and cells[(r + k * dr) * cols + c + k * dc] == piece
                    for k in range(need)
                ):
                    return True
    return False


def choose(block):
    rows, cols = int(block["ROWS"]), int(block["COLS"])
    need = int(block["WIN_LENGTH"])
    cells = list(block["BOARD"])
    me = block["YOUR_PIECE"]
    others = block["OPPONENT_PIECE"].split(",")
    legal = [c for c in range(cols) if cells[c] == "."]
    for c in legal:  # win now
        if wins(drop(cells, rows, cols, c, me), rows, cols, need, me):
            return c
    for other in others:  # block a loss
        for c in legal:
            if wins(drop(cells, rows, cols, c, other), rows, cols, need, other):
                return c
    return min(legal, key=lambda c: abs(c - (cols - 1) / 2))


def main():
    while True:
        block = read_block(sys.stdin)
        if block is None:
            return
        if "GAME_OVER" in block:
            continue
        col = choose(block)
        after = drop(list(block["BOARD"]), int(block["ROWS"]), int(block["COLS"]), col, block["YOUR_PIECE"])
        print(f"MOVE: {col + 1}\nBOARD: {''.join(after)}", flush=True)


if __name__ == "__main__":
    main()
