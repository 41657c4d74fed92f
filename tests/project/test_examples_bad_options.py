"""The examples' bad options are one line worded as ``maxminq``'s, with a "did you mean"
(argparse printed its usage text first and named no option meant), and an empty value is
refused: ``--out ''`` (an unset shell variable) was ``Path('')``, the working folder, which
the script then wrote its files into."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from helpers import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.py"))


def _refused(path, argv, monkeypatch, capsys) -> str:  # noqa: ANN001
    """The one line on stderr with which ``examples/<path>``'s ``parse_args(argv)`` stops
    (exit status 2, nothing on stdout)."""
    module = sys.modules.get(path.stem)
    if module is None:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, path.stem, module)
        spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exit_:
        module.parse_args(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_a_mistyped_option_is_one_line_with_the_option_meant(path, monkeypatch, capsys) -> None:
    line = _refused(path, ["--quik"], monkeypatch, capsys)
    assert line.endswith("error: unrecognized arguments: --quik (did you mean --quick?)"), line


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_an_empty_out_is_refused(path, monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    line = _refused(path, ["--out", ""], monkeypatch, capsys)
    assert line.endswith("error: --out: expected a value, got an empty string"), line
    assert list(tmp_path.iterdir()) == []


def test_a_count_written_as_a_float_says_how_to_write_it(monkeypatch, capsys) -> None:
    path = REPO / "examples" / "operator_bias.py"
    line = _refused(path, ["--samples", "1e5"], monkeypatch, capsys)
    assert line.endswith("error: --samples: expected a whole number, got '1e5' (write 100000)")
