"""The benchmark scripts' number options (benchmarks/_cli.py's positive_int and
positive_float, their own argparse types, which e388d2c's registry of int and float does not
reach) take ASCII digits only: int('١٠') is 10 and float('١.٥') 1.5, so such a value ran a
benchmark with a number nobody typed."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import REPO

spec = importlib.util.spec_from_file_location("_bench_cli", REPO / "benchmarks" / "_cli.py")
assert spec is not None and spec.loader is not None
bench_cli = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_cli)


def _parser() -> object:
    parser = bench_cli.Parser(prog="bench")
    parser.add_argument("--seeds", type=bench_cli.positive_int, default=1)
    parser.add_argument("--seconds", type=bench_cli.positive_float, default=2.0)
    return parser


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--seeds", "\u0661\u0660"], "bench: error: --seeds: expected an integer >= 1, got '١٠'"),
        (
            ["--seconds", "\u0661.\u0665"],
            "bench: error: --seconds: expected a number > 0, got '١.٥'",
        ),
    ],
)
def test_digits_of_other_scripts_are_refused(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _parser().parse_args(argv)  # type: ignore[attr-defined]
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == said + "\n"


def test_ascii_numbers_still_parse() -> None:
    args = _parser().parse_args(["--seeds", "10", "--seconds", "1.5"])  # type: ignore[attr-defined]
    assert (args.seeds, args.seconds) == (10, 1.5)
