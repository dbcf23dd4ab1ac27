#!/usr/bin/env python3
"""Test bot: exits as soon as it is started."""
import sys
sys.exit(3)
