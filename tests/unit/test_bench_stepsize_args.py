"""bench/m113_stepsize.py: step sizes given as numbers or fractions (1/1100 divides the 10-ms output step)."""

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("m113_stepsize", ROOT / "bench" / "m113_stepsize.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_step_sizes_as_numbers_and_fractions():
    m = _load()
    assert m.step_size("6.25e-4") == 6.25e-4
    assert m.step_size("1/1100") == 1 / 1100
    assert round(0.01 / m.step_size("1/1100"), 9) == 11  # a whole number of steps per output sample


@pytest.mark.parametrize("text", ["x", "1/0", "0", "-1e-3"])
def test_bad_step_sizes_name_the_value(text):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(repr(text))):
        _load().step_size(text)
