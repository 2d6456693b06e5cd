"""The analytic validation cases of the multibody core (also `trackdyn validate`).

Each case must pass its tolerance and measure every documented figure within
10x of docs/validation.md (``documented.run_documented``).
"""

import pytest

from documented import run_documented

CORE = ["pendulum-small", "pendulum-large", "slider-crank", "torque-free", "four-bar", "chain64"]


@pytest.mark.parametrize("name", CORE)
def test_case_passes_and_measures_its_documented_figures(name):
    run_documented(name)
