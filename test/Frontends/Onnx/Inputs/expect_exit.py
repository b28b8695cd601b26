"""Runs a command and succeeds only when it exits with the expected code.

usage: expect_exit.py CODE COMMAND [ARGS...]

The command's stdout and stderr pass through (stderr after stdout), so the
output can be piped to FileCheck. A crash (a signal) never matches.
"""
import subprocess
import sys

expected = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stdout.write(proc.stderr)
if proc.returncode != expected:
    sys.stdout.write(f"expect_exit.py: exit code {proc.returncode}, expected {expected}\n")
    sys.exit(1)
