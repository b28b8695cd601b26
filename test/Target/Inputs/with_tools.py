"""Runs a command with a folder of stand-in programs first on PATH (a
CUDA toolkit whose ptxas or fatbinary fails) and succeeds only when it
exits with the expected code.

usage: with_tools.py DIR CODE COMMAND [ARGS...]

DIR/NAME.sh files become executables DIR/NAME. The command's stdout and
stderr pass through (stderr after stdout), for FileCheck.
"""
import os
import stat
import subprocess
import sys

folder, expected, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for name in os.listdir(folder):
    if name.endswith(".sh"):
        tool = os.path.join(folder, name[:-3])
        with open(os.path.join(folder, name)) as src, open(tool, "w") as dst:
            dst.write(src.read())
        os.chmod(tool, os.stat(tool).st_mode | stat.S_IXUSR)
env = dict(os.environ, PATH=folder + os.pathsep + os.environ["PATH"])
proc = subprocess.run(command, capture_output=True, text=True, env=env)
sys.stdout.write(proc.stdout)
sys.stdout.write(proc.stderr)
if proc.returncode != expected:
    sys.stdout.write(f"with_tools.py: exit code {proc.returncode}, expected {expected}\n")
    sys.exit(1)
