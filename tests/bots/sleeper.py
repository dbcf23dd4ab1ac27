#!/usr/bin/env python3
"""Test bot: records its pid, then never answers in time."""
import os, sys, time
path = os.environ.get("PID_FILE")
if path:
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
for line in sys.stdin:
    if line.strip() == "":
        time.sleep(60)
