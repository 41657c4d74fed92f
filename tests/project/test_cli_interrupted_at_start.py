"""Ctrl-C while ``maxminq COMMAND`` still imports its command's module (up to a second: torch,
pandas, matplotlib) was a KeyboardInterrupt traceback through importlib's frames; now it
is the one line every interrupted command ends with, exit status 130."""

from __future__ import annotations

import subprocess
import sys

# A real SIGINT, sent by the process to itself at the moment the command's module is looked
# up (a finder first on sys.meta_path), so the interrupt lands inside the import every time.
CODE = """
import os, signal, sys
from maxminq.cli import main

class InterruptAtImport:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "maxminq.commands.envs":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptAtImport())
sys.exit(main(["envs"]))
"""


def test_ctrl_c_while_the_command_is_imported_is_one_line() -> None:
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert proc.stderr == "maxminq envs: interrupted\n"
    assert proc.stdout == ""
