"""A real atomic write killed midway (kill -9), and decoy files beside an output that a
command must leave alone: for the tests of what commands clean up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A process killed by SIGKILL while store.atomic_write writes `path`: the temporary it was
# writing stays behind, as after a kill -9 (or the OOM killer) of a command in its writes.
_KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from maxminq.experiments.store import atomic_write

def write(tmp):
    tmp.write_text("half a file")
    print(tmp, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

atomic_write(Path(sys.argv[1]), write)
"""


def killed_write(path: Path) -> Path:
    """Kill -9 a real ``atomic_write(path, ...)`` midway; returns the temporary it left."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITE, str(path)], capture_output=True, text=True
    )
    assert done.returncode == -9, done.stderr
    tmp = Path(done.stdout.strip())
    assert tmp.is_file() and tmp.parent == path.parent and tmp.name.startswith(f".{path.name}.")
    return tmp


def decoys(folder: Path, name: str) -> list[Path]:
    """Files a command must leave alone beside its output ``name``: a user's own
    temporaries of that name, and another program's atomic-write temporary."""
    files = [
        folder / f".{name}.tmp",
        folder / f".{name}.backup-1.tmp",
        folder / ".notes.txt.x1.tmp",
    ]
    for f in files:
        f.write_text("keep")
    return files
