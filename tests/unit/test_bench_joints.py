"""``trackdyn bench apc-joints``: the fidelities measured side by side (structure and inputs; timings are never
asserted, they live in bench/README.md)."""

import pytest

from trackdyn.testing.benchmarks import BENCHMARKS, run_benchmark
from trackdyn.testing.benchmarks_joints import JOINT_FIDELITIES


def test_apc_joints_is_registered():
    assert "apc-joints" in BENCHMARKS


@pytest.mark.parametrize("kw, msg", [({"segments": 0}, "segments"), ({"t_end": 0.0}, "t_end"),
                                     ({"ramp": (0.5, 0.2)}, "ramp"), ({"fidelities": ["links", "nope"]}, "nope")])
def test_bad_inputs_are_refused_before_building(kw, msg):
    with pytest.raises(ValueError, match=msg):
        run_benchmark("apc-joints", **kw)


def test_segments_interleave_and_the_models_run_the_same_manoeuvre():
    got = {}
    out = run_benchmark("apc-joints", t_end=0.01, segments=2, ramp=(0.01, 0.03), results=got)
    fids = [r["fidelity"] for r in out["runs"]]
    assert fids[0] == "links" and {"penalty", "bushing"} <= set(fids) <= set(JOINT_FIDELITIES)
    assert out["schedule"] == fids * 2  # one segment per fidelity per round
    assert out["ratio_to_links"]["links"] == 1.0
    for r in out["runs"]:
        assert r["status"] == "complete" and r["steps"] == round(2 * 0.01 / r["step_size_s"])
        assert len(got[r["fidelity"]]) == 2 and r["ratio_to_links"] > 0
        # the same drive on the same vehicle: the chassis stands within a millimetre of the ideal pins' one; the
        # ANCF chain is another track on other contact points (it settles 2.7 mm lower, the conformance rows of
        # the ancf fidelity) and rocks after the drop by a few millimetres more (measured 3.1 mm)
        assert abs(r["chassis_x_minus_links_m"]) < (6e-3 if r["fidelity"] == "ancf" else 1e-3)
    assert out["runs"][1]["chassis_x_minus_links_m"] != 0.0


@pytest.mark.parametrize("kw, msg", [({"t_end": 0.0}, "t_end"), ({"ramp": (0.5, 0.2)}, "ramp"),
                                     ({"steps": (3e-3,)}, "divide"), ({"steps": (5e-6,)}, "larger than h_ref"),
                                     ({"fidelities": ["nope"]}, "nope"),
                                     ({"fidelities": ["penalty"], "integrators": {"bushing": ("theta-linearized", {})}},
                                      "not run")])
def test_stepsize_bad_inputs_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        run_benchmark("apc-joints-stepsize", **kw)


def test_stepsize_errors_shrink_with_the_step():
    """Two fidelities, 0.05 s from the ramp's end: each run's error against its own h_ref run is measured, and is
    smaller at the smaller step; the ratio of links to itself is 1."""
    out = run_benchmark("apc-joints-stepsize", t_end=0.05, ramp=(0.01, 0.05), h_ref=1e-4, steps=(2.5e-4, 5e-4),
                        tol=1.0, fidelities=["links", "penalty"])
    fids = [r["fidelity"] for r in out["fidelities"]]
    assert fids == ["links", "penalty"]
    for r in out["fidelities"]:
        e = {row["step_size_s"]: row["max_error_m"] for row in r["runs"][1:]}
        assert all(row["status"] == "complete" for row in r["runs"])
        assert 0.0 < e[2.5e-4] < e[5e-4], e
        # the road wheels' heights are the measure; the chassis's travel and height errors are reported beside it
        assert all(row["chassis_x_error_m"] >= 0.0 and row["chassis_z_error_m"] >= 0.0 for row in r["runs"][1:])
        assert r["largest_step_s"] == 5e-4  # tol = 1 m: every step passes, the largest is chosen
    assert out["cpu_ratio_to_links"]["links"] == 1.0



def test_stepsize_runs_a_fidelity_on_another_integrator():
    """``integrators`` puts one fidelity's reference and steps on another integrator (recorded in its row); the
    trapezoidal θ = 0.5 and the implicit Euler step are different methods, so the same steps give different
    errors against their own references."""
    kw = dict(t_end=0.05, ramp=(0.01, 0.05), h_ref=1e-4, steps=(5e-4,), tol=1.0, fidelities=["links"])
    euler = run_benchmark("apc-joints-stepsize", **kw)["fidelities"][0]
    theta = run_benchmark("apc-joints-stepsize", integrators={"links": ("theta-linearized", {"theta": 0.5})},
                          **kw)["fidelities"][0]
    assert euler["integrator"] is None and theta["integrator"] == ("theta-linearized", {"theta": 0.5})
    assert all(row["status"] == "complete" for row in theta["runs"])
    assert theta["runs"][1]["max_error_m"] != euler["runs"][1]["max_error_m"]
