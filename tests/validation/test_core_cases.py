"""The analytic validation cases of the multibody core (also `trackdyn validate`)."""

import warnings

import pytest

from trackdyn.testing.validation import run_case

CORE = ["pendulum-small", "pendulum-large", "slider-crank", "torque-free", "four-bar", "chain64"]


@pytest.mark.parametrize("name", CORE)
def test_case_passes(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_case(name)
    assert r["passed"], r
