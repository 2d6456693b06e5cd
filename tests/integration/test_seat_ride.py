"""The seat on the M113: a short ride over a bump records seat.rel.z and seat.acc.z, and the ride event reports
them (RMS, peak, FFT amplitude spectrum) in its result, its summary.json and its figure seat.png.

Seat values: m 100 kg, k 1e4 N/m, c 600 N s/m (f_n 1.59 Hz, zeta 0.3), at the M113's driver point 0.39 m higher
(docs/vehicle.md, "Seat": the paper gives none).
"""

import json

import numpy as np
import pytest

import trackdyn as td
from trackdyn.experiments import events as E
from trackdyn.math.quaternion import quat_to_matrix

SEAT = {"mass": 100.0, "stiffness": 1e4, "damping": 600.0, "position": (-1.73, 0.5, 0.9)}


@pytest.fixture(scope="module")
def ride(tmp_path_factory):
    out = tmp_path_factory.mktemp("seat-ride")
    spec = td.vehicles.get("m113").replace({"seat": SEAT})
    res = E.ride(spec, road="bump", height=0.05, bump_length=1.0, speed=6.0, lead=0.2, step=1e-3, out=out)
    return out, res


def test_the_ride_records_both_seat_series(ride):
    out, res = ride
    r = td.load(out / res["folder"])
    assert "seat.acc.z" in r.columns
    seat = res["seat"]
    # seat.rel.z as recorded (the links fidelity passes the builder's providers to its system)
    rel_name = seat["rel_source"]
    assert rel_name == "seat.rel.z" and rel_name in r.columns
    t = r.t
    rel = r[rel_name] - (1.0 if rel_name == "seat.spring.length" else 0.0)
    # the same displacement from the recorded poses: the seat relative to its place in the chassis frame,
    # along the chassis z axis (the chassis is assembled unrotated)
    spec = td.vehicles.get("m113")
    s_local = np.array(SEAT["position"]) - np.array(spec.chassis.com)
    q = np.column_stack([r[f"chassis.quat.e{k}"] for k in range(4)])
    pc = np.column_stack([r[f"chassis.pos.{a}"] for a in "xyz"])
    ps = np.column_stack([r[f"seat.pos.{a}"] for a in "xyz"])
    R = np.array([quat_to_matrix(qq) for qq in q])
    rel_pose = np.einsum("ni,ni->n", R[:, :, 2], ps - pc - np.einsum("nij,j->ni", R, s_local))
    assert np.max(np.abs(rel - rel_pose)) < 1e-7
    assert abs(rel[0]) < 1e-9  # assembled at rest
    # the seat moves over the bump: some millimetres relative to the cab, accelerations of a few tenths of g
    assert 1e-3 < seat["rel"]["peak"] < 0.1
    assert 0.05 * 9.81 < seat["acc"]["peak"] < 2 * 9.81
    k = (t >= seat["window_s"][0] - 1e-9)
    assert seat["acc"]["peak"] == pytest.approx(np.max(np.abs(r["seat.acc.z"][k])), rel=1e-12)
    assert seat["acc"]["rms"] == pytest.approx(np.sqrt(np.mean(r["seat.acc.z"][k] ** 2)), rel=1e-12)
    d = rel[k] - rel[k].mean()
    assert seat["rel"]["rms"] == pytest.approx(np.sqrt(np.mean(d ** 2)), rel=1e-9)


def test_the_ride_result_has_the_seat_spectra_and_figure(ride):
    out, res = ride
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in ("rel", "acc"):
        sp = summary["seat"][key]["spectrum"]
        f, A = np.asarray(sp["f_hz"]), np.asarray(sp["amplitude"])
        assert f[0] == 0.0 and len(f) == len(A) and f[-1] <= 50.0 + 1e-9
        assert summary["seat"][key]["peak_frequency_hz"] == pytest.approx(f[1:][np.argmax(A[1:])], abs=1e-3)
    assert res["figures"] == ["figure.png", "seat.png"] and (out / "seat.png").stat().st_size > 0


def test_no_seat_no_seat_results():
    # the spec without [seat] builds no seat body and the ride result has no "seat" (existing keys unchanged)
    from trackdyn.assembly.builder import build_vehicle

    vm = build_vehicle(td.vehicles.get("m113"))
    assert "seat" not in vm.model.body_names and vm.providers == []
    vm = build_vehicle(td.vehicles.get("m113").replace({"seat": SEAT}))
    assert "seat" in vm.model.body_names and [type(p).__name__ for p in vm.providers] == ["SeatOutputs"]
