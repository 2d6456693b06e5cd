"""The documented figures of the validation cases: the registry, the comparison, the docs (no simulation)."""

import inspect
from pathlib import Path

import pytest

from trackdyn.testing.validation import (CASES, REFERENCES, Reference, documented_comparison, figure,
                                         reference_table)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


def test_every_case_has_documented_figures_at_its_defaults():
    for name, fn in CASES.items():
        assert "full" in REFERENCES.get(name, {}), f"{name}: no documented figures (Reference) at its defaults"
        params = inspect.signature(fn).parameters
        for ref in REFERENCES[name].values():
            assert set(ref.settings) <= set(params), (name, ref.form, ref.settings)
            assert ref.factor == 10.0  # the factor docs/validation.md states


def test_docs_carry_the_registered_figures():
    # docs/validation.md and the tests read the same numbers
    assert reference_table() in DOCS.read_text(encoding="utf-8")


def _result(**errors):
    return {"errors": errors, "measured": {"a": {"list": [0.0, 3.0e-4]}}}


@pytest.mark.parametrize("measured, within", [
    (1e-4, True), (9.9e-4, True), (1.01e-5, True),       # within 10x either way
    (1e-2, False),                                       # a 100x regression
    (1e-6, False),                                       # collapsed towards zero (a check gone vacuous)
    (float("nan"), False), (float("inf"), False),
])
def test_a_figure_is_held_within_the_factor_both_ways(measured, within):
    ref = Reference({"e": 1e-4})
    out = documented_comparison(_result(e=measured), ref)
    assert out["figures"]["e"]["within"] is within and out["within"] is within


def test_round_off_figures_are_held_from_above_and_zero_figures_exactly():
    ref = Reference({"r": 1e-12, "flag": 0.0}, upper_only=("r",))
    assert documented_comparison(_result(r=1e-16, flag=0.0), ref)["within"]
    assert not documented_comparison(_result(r=1e-10, flag=0.0), ref)["within"]
    assert not documented_comparison(_result(r=1e-12, flag=1e-300), ref)["within"]


def test_figures_are_errors_keys_or_paths_into_the_result():
    r = _result(e=2.0)
    r["energy_loss_rel"] = 0.5
    assert figure(r, "e") == 2.0 and figure(r, "energy_loss_rel") == 0.5
    assert figure(r, "measured/a/list/1") == 3.0e-4


def test_bad_references_are_refused():
    with pytest.raises(ValueError, match="factor"):
        Reference({"e": 1.0}, factor=1.0)
    with pytest.raises(ValueError, match="upper_only"):
        Reference({"e": 1.0}, upper_only=("f",))
