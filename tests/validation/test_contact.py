"""Validation cases of contact and terrain (also `trackdyn validate CASE`)."""

import warnings

import pytest

import trackdyn.testing.validation_contact  # noqa: F401  (registers the cases)
from trackdyn.testing.validation import CASES, run_case

CONTACT = ["drop", "hertz-static", "incline-stick", "incline-slide", "rolling", "winkler", "obstacles"]


def test_cases_registered():
    assert set(CONTACT) <= set(CASES)


@pytest.mark.parametrize("name", CONTACT)
def test_case_passes(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_case(name)
    assert r["passed"], r
