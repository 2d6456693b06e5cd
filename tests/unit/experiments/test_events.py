"""Every mobility event on the M113 with cheap settings (short runs, h = 1e-3, few trials).

The settings differ from the procedures' defaults only in duration and step;
the figures checked are what the events compute from the runs: the outcome
of each trial, the failure mode, the peak acceleration against the per-step
record, the folders' completeness.
"""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import trackdyn as td
import trackdyn.sim.run as sim_run
from trackdyn.experiments import events as E
from trackdyn.experiments import trials
from trackdyn.experiments.trials import FAILURE_MODES, G
from trackdyn.io.results import INCOMPLETE_MARKER

FAST = dict(step=1e-3)


def _strict(text):
    """Parse one JSON object, refusing NaN/Infinity (not JSON)."""
    def bad(c):
        raise AssertionError(f"non-JSON constant {c} in the event output")
    return json.loads(text, parse_constant=bad)


def cli_event(*args):
    """``trackdyn event ARGS --json`` through the application's own command table: the one stdout line, parsed."""
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    r = CliRunner().invoke(app, ["event", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return _strict(lines[0])


def _complete_event_folder(out, result):
    assert (out / "summary.json").exists() and not (out / INCOMPLETE_MARKER).exists()
    saved = json.loads((out / "summary.json").read_text())
    assert saved["event"] == result["event"]
    for f in result["figures"]:
        assert (out / f).stat().st_size > 1000
    return saved


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    out = tmp_path_factory.mktemp("step")
    # a 10 cm step that the M113 climbs, and a 1.2 m wall that its hull nose (0.83 m up) runs into
    printed = cli_event("step-climb", "--vehicle", "m113", "--values", "0.1,1.2", "--step", "1e-3",
                        "--set", "settle_time=0.3", "--set", "climb_time=2.5", "--set", "give_up_after=0.6",
                        "--out", out)
    assert printed["event"] == "step-climb" and printed["limit_m"] == 0.1
    return out, E.EventResult.load(out)


def test_step_climb_limit_and_failure_mode(step):
    out, res = step
    assert res["event"] == "step-climb"
    assert res["limit_m"] == 0.1 and res["bracket_m"] == [0.1, 1.2]
    ok, bad = res["trials"]
    assert ok["passed"] and ok["stop_reason"] == "success" and ok["t_success_s"] > 0.3
    assert not bad["passed"] and bad["mode"] == "nose-in"
    assert bad["max_x_m"] < 0.0  # the centre of mass never reached the edge
    # the figure's paths: last success and first failure
    assert len(res["paths"]) == 2 and res["terrain_profile"]["type"] == "profile"
    saved = _complete_event_folder(out, res)
    assert saved["limit_m"] == 0.1
    # trial folders are complete results folders
    r = td.load(out / ok["folder"])
    assert r.summary["passed"] is True and "chassis.pos.x" in r
    assert r["chassis.pos.x"][-1] > 0.0
    # the settle window's track tension is of the order of the 10 kN target, lower under the road wheels
    assert 5e3 < res["itt_N"] < 1.2e4


def test_every_step_trial_records_its_mechanism(step):
    _, res = step
    ok, bad = res["trials"]
    for t in res["trials"]:
        m = t["mechanism"]
        for side in ("left", "right"):
            assert set(m[side]) >= {"slip", "track_speed_mps", "ground_speed_mps", "torque_Nm", "torque_limit_Nm",
                                    "torque_fraction"}
        assert set(m) >= {"hull_force_N", "hull_x_m", "wheel_loads_N", "wheel_load_fraction", "pitch_deg"}
        assert len(m["wheel_loads_N"]) == 10
    # the 10 cm pass: full throttle, so the torque is the map's at the sprocket's speed; no hull contact
    assert ok["mechanism"]["left"]["torque_fraction"] == pytest.approx(1.0, abs=1e-6)
    assert ok["mechanism"]["hull_force_N"] == 0.0 and ok["limited_by"] is None
    assert ok["mechanism"]["tracks"] == "rolling"
    # the 1.2 m wall: the hull's nose (x 0 .. 0.3 m) takes the push: geometry limited the climb
    assert bad["limited_by"] == "geometry" and res["limited_by"] == "geometry"
    assert bad["mechanism"]["hull_force_fraction"] > 0.05 and bad["mechanism"]["hull_x_m"] > 0.0
    # at rest under the brakes every road wheel carries load; the sum exceeds the weight of the chassis, arms
    # and wheels by the track tension's pull where the track wraps under the end wheels towards sprocket/idler
    s = res["mechanism"]["last_success"]["series"]
    t = np.asarray(s["t"])
    L = np.asarray(s["wheel_loads_N"])[(t >= 0.2) & (t <= 0.3)]
    spec = td.vehicles.get("m113")
    sus = spec.suspension
    weight = (spec.chassis.mass + 10 * (sus.arm_mass + sus.wheel_mass)) * G
    assert (L > 0).all() and weight < L.sum(axis=1).mean() < weight + 4 * 1e4
    assert set(res["mechanism"]) == {"last_success", "first_failure"}
    assert res["mechanism"]["first_failure"]["mode"] == "nose-in"


def test_step_event_result_is_json_and_redraws(step):
    out, res = step
    again = E.EventResult.load(out)
    assert set(again.figures()) == {"figure", "trials", "mechanism"}
    assert (out / "mechanism.png").stat().st_size > 1000
    json.loads(res.to_json())


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    out = tmp_path_factory.mktemp("half")
    printed = cli_event("half-round", "--vehicle", "m113", "--height-in", "4", "--speeds", "4", "--step", "1e-3",
                        "--set", "lead_time=0.3", "--set", "clear=0.2", "--set", "filter_window=0.01", "--out", out)
    assert printed["event"] == "half-round" and printed["height_in"] == 4.0
    assert printed["limiting_speed_mps"] is None and [p[0] for p in printed["peaks"]] == [4.0]
    return out, E.EventResult.load(out)


def test_half_round_peak_is_the_per_step_driver_acceleration(half):
    out, res = half
    assert res["event"] == "half-round" and res["height_in"] == 4.0
    (speed, peak), = res["peaks"]
    run = res["runs"][0]
    assert speed == 4.0 and run["completed"]
    assert run["approach_speed_mps"] == pytest.approx(4.0, rel=0.05)  # the PID holds the rolling start
    tab = pq.read_table(out / run["folder"] / "driver_acc.parquet").to_pandas()
    assert len(tab) == pytest.approx(run["sim_time_s"] / 1e-3, abs=2)
    # the peak is the largest |a_z| of every step from the front's arrival at the obstacle on
    after = tab["t"].to_numpy() >= run["t_arrive_s"] - 1e-9
    az = tab["driver.acc.z"].to_numpy()
    assert peak * G == pytest.approx(np.max(np.abs(az[after])), rel=1e-12)
    assert run["t_peak_s"] == pytest.approx(tab["t"].to_numpy()[after][np.argmax(np.abs(az[after]))])
    assert res["peaks_filtered"][0][1] <= peak  # a moving average lowers the peak
    assert res["limiting_speed_mps"] is None and res["limit_status"] == "above-range"
    _complete_event_folder(out, res)
    # the impact that makes the peak: a road wheel or idler hit within 5 ms of it (or the hull)
    src = run["peak_source"]
    assert src["source"] == "hull" or src["source"].split(".")[1].startswith(("roadwheel", "idler"))
    assert abs(src["t_s"] - run["t_peak_s"]) <= 0.005 + 1e-9
    assert src["accel_g"] == max(src["candidates"].values())
    assert res["peak_sources"] == [[4.0, src["source"], src["t_s"]]]
    if src["source"] != "hull" and "roadwheel" in src["source"]:
        # its torsion arm against Table 3.8's jounce stop (-4.59 deg below horizontal), within the arm's travel
        assert src["jounce_limit_deg"] == pytest.approx(-4.59, abs=1e-3)
        assert -10.0 < src["arm_angle_min_deg"] < 50.0
        assert src["on_jounce_stop"] == (src["arm_angle_min_deg"] < src["jounce_limit_deg"])


def test_monitor_acceleration_equals_the_recorded_marker(half):
    # two independent computations of the seat acceleration: the marker provider (recorded every
    # 10 ms) and the event monitor (every step)
    out, res = half
    folder = out / res["runs"][0]["folder"]
    r = td.load(folder)
    tab = pq.read_table(folder / "driver_acc.parquet").to_pandas()
    t_rec, a_rec = r.series("driver.acc.z")
    idx = np.searchsorted(tab["t"].to_numpy(), t_rec[1:] - 1e-9)
    assert np.allclose(tab["t"].to_numpy()[idx], t_rec[1:], atol=1e-9)
    assert np.allclose(tab["driver.acc.z"].to_numpy()[idx], a_rec[1:], rtol=1e-9, atol=1e-9)


def test_crossing_interpolates_between_speeds():
    x = np.array([2.0, 3.0, 4.0, 5.0])
    y = np.array([1.0, 2.0, 3.0, 2.0])
    lim, status = E._crossing(x, y, 2.5)
    assert status == "found" and lim == pytest.approx(3.5)
    assert E._crossing(x, y, 0.5) == (None, "below-range")
    assert E._crossing(x, y, 9.0) == (None, "above-range")


def test_trapezoid_from_the_command_line(tmp_path):
    out = tmp_path / "trap"
    res = cli_event("trapezoid", "--vehicle", "m113", "--height-in", "6", "--speed", "3", "--step", "1e-3",
                    "--set", "top_lengths_in=[6]", "--set", "slopes_deg=[68]", "--set", "approach=0.1",
                    "--set", "clear=0.2", "--out", out)
    assert res["event"] == "trapezoid"
    # a 15 cm, 68-degree barrier and its ditch are crossed
    assert res["barriers"] == ["S"] and res["ditches"] == ["S"]
    assert [row["kind"] for row in res["table"]] == ["barrier", "ditch"]
    assert (out / "figure.png").exists()
    for row in res["table"]:  # every trial carries its mechanism
        assert row["limited_by"] is None and row["mechanism"]["tracks"] in ("rolling", "slipping")
        assert len(row["mechanism"]["wheel_loads_N"]) == 10 and row["mechanism"]["left"]["torque_Nm"] is not None


def test_gap_crossing_from_the_command_line(tmp_path):
    # a 0.3 m gap at 2 m/s (h = 5e-4 s: at 1e-3 s the M113's front shoes striking the far edge at this
    # speed blow up, see docs/events.md), the front 0.1 m before the gap
    out = tmp_path / "gap"
    res = cli_event("gap-crossing", "--vehicle", "m113", "--values", "0.3", "--speed", "2", "--step", "5e-4",
                    "--set", "approach=0.1", "--set", "clear=0.1", "--set", "after_success=0.1", "--out", out)
    assert res["event"] == "gap-crossing" and res["limit_m"] == 0.3 and res["search_status"] == "above-range"
    t, = res["trials"]
    assert t["passed"] and t["stop_reason"] == "success" and t["mode"] is None
    # the success rule against the recorded chassis path: the first sample with the centre of mass
    # past the far edge + clear is the success time, and it never dropped into the gap
    r = td.load(out / t["folder"])
    tt, x, z = r.t, r["chassis.pos.x"], r["chassis.pos.z"]
    k = int(np.argmax(x > 0.3 + 0.1))
    assert x[k] > 0.4 and tt[k] == pytest.approx(t["t_success_s"], abs=1e-9)
    assert z.min() > z[0] - 0.15
    assert tt[-1] == pytest.approx(t["t_success_s"] + 0.1, abs=0.011)
    assert list(res["paths"]) == ["0.300 m (pass)"]
    # its mechanism: rolling over the gap, the hull never touching; kept as the last success's series
    m = t["mechanism"]
    assert m["tracks"] == "rolling" and m["hull_force_max_N"] == 0.0 and len(m["wheel_loads_N"]) == 10
    assert set(res["mechanism"]) == {"last_success"} and res["limited_by"] is None
    assert res["mechanism"]["last_success"]["series"]["t"][-1] == pytest.approx(tt[-1], abs=0.05)  # every 50 ms
    _complete_event_folder(out, res)


def test_ride_statistics_match_the_stored_trace(tmp_path):
    res = E.ride("m113", road="bump", height=0.05, bump_length=1.0, speed=6.0, lead=0.2, out=tmp_path, **FAST)
    tab = pq.read_table(tmp_path / res["folder"] / "driver_acc.parquet").to_pandas()
    t0, t1 = res["window_s"]
    a = tab["driver.acc.z"][(tab["t"] >= t0 - 1e-9) & (tab["t"] <= t1 + 1e-9)].to_numpy()
    assert res["rms_mps2"] == pytest.approx(np.sqrt(np.mean(a ** 2)), rel=1e-12)
    assert res["peak_mps2"] == pytest.approx(np.max(np.abs(a)), rel=1e-12)
    assert 0 < res["rms_mps2"] <= res["peak_mps2"]
    # the seat spends bump_length / speed over the bump
    assert t1 - t0 == pytest.approx(1.0 / 6.0, abs=0.03)
    f = np.asarray(res["spectrum"]["f_hz"])
    assert f[0] == 0.0 and f[-1] <= 50.0 and len(f) == len(res["spectrum"]["psd"])


@pytest.mark.parametrize("call, msg", [
    (lambda: E.half_round("m113", height_in=-4), "height_in"),
    (lambda: E.half_round("m113", speeds=[]), "speeds"),
    (lambda: E.step_climb_limit("m113", search="golden"), "search"),
    (lambda: E.trapezoid("m113", kinds=("moat",)), "kinds"),
    (lambda: E.ride("m113", road="cobbles"), "road"),
    (lambda: E.run_event("wading"), "unknown event"),
    (lambda: E.run_event("ride", wheels=3), "unknown option"),
    (lambda: E.step_climb("m113", fidelity="fem"), "fidelity"),
    (lambda: E.half_round("m113", fidelity="ancf"), "Kelvin-Voigt"),
    (lambda: E.half_round("crawler", fidelity="ancf"), "sprocket.tooth"),
])
def test_bad_event_options_are_refused_before_running(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_failure_modes_are_named():
    assert set(FAILURE_MODES) >= {"nose-in", "high-centred", "track slip", "stalled"}


class _Prepared(Exception):
    """Raised by the spy in place of building the model: the test only needs the scenario."""


@pytest.fixture
def scenarios_seen(monkeypatch):
    seen = []

    def spy(scenario, *args, **kwargs):
        seen.append(scenario)
        raise _Prepared

    # trials imports prepare at its top: replace it where it is looked up (and at its source)
    monkeypatch.setattr(sim_run, "prepare", spy)
    monkeypatch.setattr(trials, "prepare", spy)
    return seen


@pytest.mark.parametrize("event, opts", [
    ("step-climb", {"values": [0.1]}),
    ("gap-crossing", {"values": [0.3]}),
    ("half-round", {"speeds": [2.0]}),
    ("trapezoid", {"top_lengths_in": [6], "slopes_deg": [68]}),
    ("ride", {"road": "bump"}),
])
def test_every_event_builds_its_trials_at_the_requested_fidelity_and_step(scenarios_seen, event, opts):
    with pytest.raises(_Prepared):
        E.run_event(event, "m113", fidelity="massless", step=2e-3, **opts)
    sc, = scenarios_seen
    assert sc.fidelity == "massless" and sc.step == 2e-3
    assert sc.vehicle_spec().name == "m113"


def test_the_command_line_passes_fidelity_and_geometry_offsets(scenarios_seen):
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    r = CliRunner().invoke(app, ["event", "step-climb", "--vehicle", "m113", "--fidelity", "massless",
                                 "--values", "0.2", "--sprocket-dz", "0.05", "--json"])
    assert isinstance(r.exception, _Prepared), r.output
    sc, = scenarios_seen
    assert sc.fidelity == "massless"
    want = E.resolve_vehicle("m113", sprocket_dz=0.05)
    assert sc.vehicle_spec().model_dump() == want.model_dump()
    assert want.model_dump() != E.resolve_vehicle("m113").model_dump()


def _fake_run(status, h, t=0.5):
    """The parts of a TrialRun that the retry reads (the integrator's verdict and timings)."""
    from types import SimpleNamespace as NS

    return NS(status=status, reason=None, prep=NS(sim=NS(state=NS(t=t), h=h)),
              result=NS(metadata={"error": "blew up"}), wall_time_s=1.0, build_time_s=0.1)


def test_a_diverged_trial_is_repeated_with_half_the_step():
    ctx = E._Context("step-climb", "m113", "links", 1e-3, 0.01, False, None, None, None, refine=2)
    seen = []

    def attempt(h):
        seen.append(h)
        return _fake_run("diverged" if h > 3e-4 else "complete", h)

    run = ctx.run("step-climb 0.4", attempt)
    assert seen == [1e-3, 5e-4, 2.5e-4] and run.status == "complete"
    assert [r["step_s"] for r in ctx.refinements] == [1e-3, 5e-4] and ctx.n_trials == 3
    # the scenario of a refined attempt keeps the output grid (a multiple of the step)
    sc = ctx.scenario("s", None, None, 1.0, 0.0, step=2.5e-4)
    assert sc.step == 2.5e-4 and sc.output_step == pytest.approx(0.01)
    # without refinement (or when the last halving diverges too) the event stops with EventDiverged
    ctx0 = E._Context("step-climb", "m113", "links", 1e-3, 0.01, False, None, None, None, refine=0)
    seen.clear()
    with pytest.raises(E.EventDiverged, match="diverged"):
        ctx0.run("step-climb 0.4", attempt)
    assert seen == [1e-3]
    with pytest.raises(ValueError, match="refine"):
        E._Context("step-climb", "m113", "links", 1e-3, 0.01, False, None, None, None, refine=-1)


def test_the_massless_track_records_the_same_mechanism():
    # one failure classifier and one mechanism for every fidelity (DESIGN.md): the massless track's
    # wheel-terrain forces are its road-wheel loads, its hull contacts the hull force
    res = E.step_climb_limit("m113", search="values", values=[1.2], fidelity="massless", settle_time=0.3,
                             climb_time=2.5, give_up_after=0.6)
    (bad,) = res["trials"]
    m = bad["mechanism"]
    assert not bad["passed"] and bad["limited_by"] == "geometry" == res["limited_by"]
    # the nose (the foremost fifth of the hull, x above -0.6 m; the massless hull's centre of force lies at
    # 0.47 m, ahead of the box's 0.3 m face: its contact points are not on the box, see the massless hull)
    assert m["hull_force_fraction"] > 0.05 and m["hull_x_m"] > -0.6
    assert len(m["wheel_loads_N"]) == 10 and m["wheel_load_fraction"] > 1.0
    assert 0.0 < m["left"]["torque_Nm"] <= m["left"]["torque_limit_Nm"] <= 9519.0 + 1e-6
    assert set(res["mechanism"]) == {"first_failure"}
