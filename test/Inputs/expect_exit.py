#!/usr/bin/env python3
# ===- expect_exit.py - Run a command, require an exact exit status ------=== #
#
# Usage: expect_exit.py CODE COMMAND [ARGS...]
# Runs COMMAND, passes its output through, and fails unless it exited with
# CODE (a crash, i.e. a signal, never matches). lit's `not` only tells zero
# from non-zero; the tools' contract distinguishes 1 (error) from 2 (usage).
#
# ===----------------------------------------------------------------------=== #
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:])
if result.returncode != expected:
    sys.stderr.write(
        f"expect_exit: {sys.argv[2]} exited {result.returncode}, expected {expected}\n")
    sys.exit(1)
