"""``trackdyn bench NAME --peers``: trackdyn and its MuJoCo peer side by side, and the error without MuJoCo.

The runs are tiny (a few hundredths of a simulated second): they check the plumbing, the keys and that the
generated MuJoCo models are trackdyn's models, never a timing.
"""

import json
import sys
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from trackdyn.cli.main import app
from trackdyn.testing import benchmarks_peers as BP
from trackdyn.testing import problems as P

MUJOCO = "MuJoCo is in the peers extra (pip install -e \".[peers]\"); the peer tests need it"


def test_peers_without_mujoco_exit_1_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # `import mujoco` raises ImportError
    r = CliRunner().invoke(app, ["bench", "chain64", "--peers", "--json"])
    assert r.exit_code == 1
    assert 'pip install -e ".[peers]"' in r.output
    assert "{" not in r.stdout  # it stops before running anything: no JSON


def test_peers_for_a_benchmark_without_one_exit_1():
    r = CliRunner().invoke(app, ["bench", "m113-memory", "--peers"])
    assert r.exit_code == 1 and "no peer for benchmark 'm113-memory'" in r.output
    assert "chain64, m113-flat" in r.output


def test_options_that_do_not_apply_exit_1():
    r = CliRunner().invoke(app, ["bench", "m113-memory", "--t-end", "1"])
    assert r.exit_code == 1 and "takes no --t-end" in r.output
    r = CliRunner().invoke(app, ["bench", "chain64", "--peer-step", "1e-3"])
    assert r.exit_code == 1 and "--peer-step needs --peers" in r.output


def test_chain64_peers_tiny_run_prints_both_sides_and_their_ratio():
    pytest.importorskip("mujoco", reason=MUJOCO)
    r = CliRunner().invoke(app, ["bench", "chain64", "--peers", "--t-end", "0.02", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    td, peers = out["trackdyn"], out["peer"]
    assert set(peers) == {"mujoco-maximal", "mujoco-tree"}
    for key, p in peers.items():
        assert p["status"] == "complete" and p["steps"] == td["steps"] == 200
        for k in ("ms_per_step", "wall_per_sim", "step_ms_p10", "step_ms_median"):
            assert p[k] > 0 and td[k] > 0
        assert out["ratio"][key] == pytest.approx(p["wall_per_sim"] / td["wall_per_sim"])
        s = p["settings"]
        assert s["timestep"] == 1e-4 and s["solref"][0] == 2e-4 and len(s["solimp"]) == 5
        acc = p["accuracy"]
        assert acc["penetration_max_m"] is None and 0 <= acc["tip_error_max_m"] < 1e-3
    # the tree's hinges are exact; the maximal chain's pins are soft equalities and open up under load
    assert peers["mujoco-tree"]["accuracy"]["pin_gap_max_m"] == 0.0
    assert 0.0 < peers["mujoco-maximal"]["accuracy"]["pin_gap_max_m"] < 1e-3
    # the same chain: trackdyn's tip is within a millimetre of MuJoCo's converged tree after 0.02 s
    assert 0 <= td["accuracy"]["tip_error_max_m"] < 1e-3
    text = "\n".join(BP.text_lines(out))  # the command's text form
    assert text.count("ms/step") == 3 and f"ratio {out['ratio']['mujoco-tree']:.2f}" in text


def test_chain64_mjcf_is_trackdyns_chain():
    mujoco = pytest.importorskip("mujoco", reason=MUJOCO)
    m = P.chain(**P.CHAIN64)
    mass, J, q0, _ = m.body_arrays()
    for variant, nv, neq in (("maximal", 6 * 64, 2 * 64), ("tree", 64, 0)):
        model = mujoco.MjModel.from_xml_string(BP.chain64_mjcf(variant, 1e-3))
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        assert (model.nv, model.neq) == (nv, neq)
        assert np.allclose(model.body_mass[1:], mass) and np.allclose(model.body_inertia[1:], J[:, [0, 1, 2], [0, 1, 2]])
        assert np.allclose(data.xpos[1:], q0[:, :3], atol=1e-12)
        assert np.allclose(np.abs(np.sum(data.xquat[1:] * q0[:, 3:], axis=1)), 1.0)
    with pytest.raises(ValueError, match="variant must be 'maximal' or 'tree', got 'loop'"):
        BP.chain64_mjcf("loop", 1e-3)


def test_m113_mjcf_has_trackdyns_bodies_and_rolling_start():
    mujoco = pytest.importorskip("mujoco", reason=MUJOCO)
    from trackdyn.assembly.builder import build_vehicle
    from trackdyn.assembly.placement import vehicle_placement
    from trackdyn.testing.benchmarks_vehicle import SPEED, cruise_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xml, info = BP.m113_mjcf(1e-3)
        sc = cruise_scenario(step=1e-3)
        spec, _, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=SPEED)
    mass, _, q0, v0 = vm.model.body_arrays()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    BP._set_qvel(mujoco, model, data, info["qvel"])
    mujoco.mj_forward(model, data)
    assert model.nbody - 1 == vm.model.n_bodies == 152
    assert model.body_mass[1:].sum() == pytest.approx(mass.sum())
    assert len(info["closing"]) == 2 and model.neq == 2  # one connect closes each track's loop
    vel = np.empty(6)
    for i, name in enumerate(vm.model.body_names):
        b = model.body(name).id
        assert np.allclose(data.xpos[b], q0[i, :3], atol=1e-9), name
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, b, vel, 0)
        # the same rolling start at 4.2 m/s: exact off the tracks; along a track the tree's hinges make it
        # consistent, where trackdyn's builder leaves up to 6 cm/s between neighbours on the wraps for its
        # projection at the start of a run (a few % of the top strand's 8.4 m/s after the wraps add up)
        tol = 0.3 if ".shoe[" in name else 1e-9
        assert np.allclose(vel[3:], v0[i, :3], atol=tol), name
    gaps = BP._connect_gaps(model, {"t": np.zeros(1), "xpos": data.xpos[None].copy(),
                                    "xquat": data.xquat[None].copy()}, info["closing"])
    assert gaps.max() < 1e-9  # the loops close at the assembled pose


def test_time_constants_chain_at_the_floor_m113_one_model_at_every_step():
    """MuJoCo clamps time constants below 2 h; the chain sits on that floor, the M113 keeps 2 ms at any step."""
    assert BP.settings(1e-4)["solref"] == [2e-4, 1.0] and BP.settings(1e-3)["solref"] == [2e-3, 1.0]
    assert BP.m113_settings(1e-4)["solref"][0] == BP.m113_settings(1e-3)["solref"][0] == BP.M113_TIMECONST == 2e-3
    assert BP.m113_settings(2e-3)["solref"][0] == 4e-3  # never under MuJoCo's floor


def test_no_ratio_when_a_run_did_not_complete():
    run = {"status": "complete", "wall_per_sim": 2.0, "step_ms_p10": 0.1, "step_size_s": 1e-4}
    ratio, p10 = BP._ratios(run, {"a": {**run, "wall_per_sim": 3.0}, "b": {**run, "status": "diverged"}})
    assert ratio == {"a": 1.5, "b": None} and p10 == {"a": 1.0, "b": None}
    ratio, _ = BP._ratios({**run, "status": "diverged"}, {"a": run})
    assert ratio == {"a": None}
