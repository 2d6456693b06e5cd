"""Validation cases of issue #3 (also ``trackdyn validate CASE``), in full and, where long, in short form.

The long forms are marked ``slow`` and still run in CI; each has a shorter
unmarked form that checks the same property.
"""

import warnings

import pytest

from trackdyn.testing import validation_integrators as V  # registers the cases
from trackdyn.testing.validation import CASES, run_case


def run(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_case(name, **kw)
    assert r["passed"], r
    return r


def test_cases_are_registered():
    for name in ("order-pendulum", "hht-energy-double-pendulum", "hht-torque-free", "abm-tolerance-slider-crank",
                 "projected-chain64", "solvers-chain64"):
        assert name in CASES


def test_convergence_orders_on_the_pendulum():
    r = run("order-pendulum")
    for name, (p, _) in V.EXPECTED_ORDER.items():
        assert abs(r["measured"][name]["order"] - p) <= 0.3


def test_hht_alpha0_conserves_the_double_pendulum_energy():
    run("hht-energy-double-pendulum")


def test_hht_alpha0_torque_free_body():
    r = run("hht-torque-free")
    assert r["sign_changes"] >= 1  # it does pass through the unstable flip


def test_abm_meets_its_tolerance_short():
    run("abm-tolerance-slider-crank", tolerances=(1e-4, 1e-6), t_end=1.0, reference_step=5e-4)


@pytest.mark.slow
def test_abm_meets_its_tolerance():
    run("abm-tolerance-slider-crank")


def test_projected_euler_keeps_chain64_pins_together_short():
    run("projected-chain64", t_end=0.2)


@pytest.mark.slow
def test_projected_euler_keeps_chain64_pins_together():
    run("projected-chain64")


def test_iterative_solvers_on_chain64():
    r = run("solvers-chain64")
    assert r["pair_blocks"] > 0 and r["largest_coupling_entry"] > 0  # H is not block diagonal here
