"""The vehicle benchmarks reject bad options before any model is built or settled."""

import pytest

from trackdyn.testing.benchmarks_vehicle import m113_stepsize, step_size_arg


@pytest.mark.parametrize("kw, msg", [({"record": "some"}, "record must be 'all' or 'wheels', got 'some'"),
                                     ({"repeats": 0}, "repeats must be a positive integer, got 0"),
                                     ({"repeats": 2.5}, "repeats must be a positive integer, got 2.5"),
                                     ({"perturb": -1e-6}, r"perturb must be a number in \[0, 0.01\), got -1e-06"),
                                     ({"perturb": 0.5}, r"perturb must be a number in \[0, 0.01\), got 0.5"),
                                     ({"perturb": "1e-5"}, r"perturb must be a number in \[0, 0.01\), got '1e-5'")])
def test_stepsize_rejects_bad_options(kw, msg):
    with pytest.raises(ValueError, match=msg):
        m113_stepsize(**kw)


def test_step_sizes_as_numbers_and_fractions():
    """bench/m113_stepsize.py --steps: 1/1100 divides the 10-ms output step, its decimal form 9.0909...e-4 is long."""
    assert step_size_arg("6.25e-4") == 6.25e-4
    assert step_size_arg("1/1100") == 1 / 1100
    assert round(0.01 / step_size_arg("1/1100"), 9) == 11


@pytest.mark.parametrize("text, why", [("x", "not a number"), ("1/0", "not a number"), ("0", "must be positive"),
                                       ("-1e-3", "must be positive")])
def test_bad_step_sizes_name_the_value(text, why):
    with pytest.raises(ValueError, match=f"step '{text}': {why}"):
        step_size_arg(text)
