"""Cross-fidelity conformance (Brax style): the same scenarios on every registered fidelity, held against
``links`` with the tolerances each fidelity declares beside their physical reasons
(``FormulationInfo.conformance``). A new fidelity joins by registering; nothing here names one but the
reference."""

import math
import warnings

import pytest

from trackdyn.formulations.contract import formulation_names, get_formulation
from trackdyn.testing.conformance import REFERENCE, compare, conformance_plans, run_conformance


_REFERENCE_RUNS: dict = {}


def _reference_on(vehicle):
    """The reference's conformance figures on ``vehicle`` (run once per vehicle in this module)."""
    if vehicle not in _REFERENCE_RUNS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the closed track loops' redundant pin rows
            _REFERENCE_RUNS[vehicle] = run_conformance(REFERENCE, vehicle)
    return _REFERENCE_RUNS[vehicle]


@pytest.fixture(scope="module")
def reference():
    return _reference_on("m113")


def test_the_reference_runs_and_settles(reference):
    settle = reference["settle"]
    assert settle["status"] == "complete" and reference["bump"]["status"] == "complete"
    # at rest on flat ground, level within a degree, the bump lifted it and it kept about its 4 m/s
    assert abs(settle["speed_mps"]) < 0.005 and abs(settle["pitch_deg"]) < 1.0
    assert reference["bump"]["rise_m"] > 0.03
    assert reference["bump"]["speed_mean_mps"] == pytest.approx(4.0, abs=0.3)


@pytest.mark.parametrize("fidelity", [f for f in formulation_names() if f != REFERENCE])
def test_every_fidelity_conforms_to_the_reference(fidelity):
    info = get_formulation(fidelity).info
    assert info.conformance, f"{fidelity!r} declares no conformance tolerances (FormulationInfo.conformance)"
    for _, _, tol, reason in info.conformance:
        assert tol > 0 and len(reason) > 20  # every tolerance carries its physical reason
    reference = _reference_on(info.conformance_vehicle)
    got = run_conformance(fidelity)
    assert all(got[s]["status"] == "complete" for s in got), got
    bad = [c for c in compare(fidelity, got, reference) if not c.ok]
    assert not bad, "\n".join(f"{c.scenario}.{c.metric}: {c.value:.4g} vs {c.reference:.4g} "
                               f"(|diff| {abs(c.difference):.3g} > {c.tolerance:g}: {c.reason})" for c in bad)
    # the checks can fail: a tolerance of zero is broken by any real difference
    assert any(not math.isclose(c.value, c.reference, rel_tol=0, abs_tol=1e-12)
               for c in compare(fidelity, got, reference))


@pytest.mark.parametrize("fidelity,vehicle", [(f, v) for f in formulation_names() if f != REFERENCE
                                              for v, _, _ in conformance_plans(f)[1:]])
def test_further_vehicles_conform_to_the_reference(fidelity, vehicle):
    """A fidelity's further conformance vehicles (``FormulationInfo.extra_conformance``), each against the
    reference on that vehicle with its own rows."""
    plan = next(p for p in conformance_plans(fidelity)[1:] if p[0] == vehicle)
    _, scenarios, rows = plan
    for _, _, tol, reason in rows:
        assert tol > 0 and len(reason) > 20
    reference = _reference_on(vehicle)
    got = run_conformance(fidelity, vehicle, scenarios)
    assert all(got[s]["status"] == "complete" for s in got), got
    checks = compare(fidelity, got, reference, rows)
    bad = [c for c in checks if not c.ok]
    assert not bad, "\n".join(f"{c.scenario}.{c.metric}: {c.value:.4g} vs {c.reference:.4g} "
                               f"(|diff| {abs(c.difference):.3g} > {c.tolerance:g}: {c.reason})" for c in bad)
    assert any(not math.isclose(c.value, c.reference, rel_tol=0, abs_tol=1e-12) for c in checks)
