"""Adversarial checks of the sweep runner and results store: what a kill -9 while results
are written, a damaged store, or a config edited between sweeps leave behind, and what the
user is told. (The random-moment SIGKILL, Ctrl-C, busy-folder and corrupt-table cases are in
``test_sweep.py`` and ``test_store.py``.)

Process-level tests use the test-only ``theory_mc`` kind of ``test_sweep_helpers`` (pure
NumPy, fast worker start-up). Kill points are made deterministic by a driver script that
SIGKILLs itself from inside the store's own write path at a chosen moment.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import test_sweep_helpers as helpers

from maxminq.cli import main
from maxminq.experiments.config import load_config
from maxminq.experiments.store import ResultsStore

HERE = Path(__file__).resolve().parent

THEORY = """
name: tiny_theory
kind: theory_mc
fixed: {{seed: 11, samples: {samples}, chunks: 3}}
grid: {{M: [2, 8], N: [1, 2, 3, 4]}}
scales: {{quick: {{}}, paper: {{}}}}
"""


@pytest.fixture
def theory_kinds():
    helpers.register()
    yield
    helpers.unregister()


def _theory(tmp_path: Path, samples: int = 2_000, text: str = THEORY) -> Path:
    path = tmp_path / "theory.yaml"
    path.write_text(text.format(samples=samples))
    return path


def _damage_page(db: Path, table: str) -> None:
    """Overwrite the header of ``table``'s root page (a disk error past the schema)."""
    conn = sqlite3.connect(db)
    try:
        (page,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    data = bytearray(db.read_bytes())
    data[(page - 1) * size : (page - 1) * size + 16] = b"\xff" * 16
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("table", ["runs", "members", "events"])
def test_a_sweep_on_a_store_damaged_past_its_schema_is_one_line_not_a_traceback(
    tmp_path, capsys, theory_kinds, table
):
    """The sweep opens its store for writing; a damaged runs/members/events page raised
    sqlite3.DatabaseError from register() (or later, from the first event written after
    hours of work) as a traceback. Now: one line naming the file, exit 2, nothing run."""
    path = _theory(tmp_path)
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(load_config(path).runs[:1])
    _damage_page(out / "results.sqlite", table)
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(out / "results.sqlite") in err[0] and "cannot open" in err[0], err
    assert not (out / "tables").exists()  # nothing ran
