"""Validation cases of contact and terrain (also `trackdyn validate CASE`).

Each case must pass its tolerance and measure every documented figure within
10x of docs/validation.md (``documented.run_documented``).
"""

import pytest

import trackdyn.testing.validation_contact  # noqa: F401  (registers the cases)
from documented import run_documented
from trackdyn.testing.validation import CASES

CONTACT = ["drop", "hertz-static", "incline-stick", "incline-slide", "rolling", "winkler", "obstacles"]


def test_cases_registered():
    assert set(CONTACT) <= set(CASES)


@pytest.mark.parametrize("name", CONTACT)
def test_case_passes_and_measures_its_documented_figures(name):
    run_documented(name)
