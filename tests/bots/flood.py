#!/usr/bin/env python3
"""Test bot: answers every request with megabytes of junk and no newline."""
import sys
for line in sys.stdin:
    if line.strip() == "":
        sys.stdout.write("x" * (3 * 1024 * 1024))
        sys.stdout.flush()
