"""The korner-2024 §5.1 tensioning procedure on the M113 settling on flat ground."""

import numpy as np
import pytest

from trackdyn.driver import Brake
from trackdyn.experiments.tensioning import Tensioning, strand_tensions, vehicle_frame, window_means
from trackdyn.experiments.trials import EVENT_RECORD
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario


LOCKED_TIME = 1.0  # s of the run after the spring is re-anchored


@pytest.fixture(scope="module")
def settled():
    # locked by 1.0 s at the latest (0.7 s spring-less, 0.3 s averaging); the run ends 1 s after the lock
    sc = Scenario(vehicle="m113", driver=Brake(), t_end=2.2, step=1e-3, output_step=0.01,
                  record=EVENT_RECORD + ("*.idler.contact.force.*", "*.shoe[*].pos.*"))
    prep = prepare(sc)
    ten = Tensioning(prep, free_time=0.5, max_free_time=0.7, average_time=0.3)
    forces = []

    def cb(sim):
        ten(sim)
        blk, k = ten.sides[0]["block"], ten.sides[0]["k"]
        forces.append((sim.state.t, ten.phase, float(blk.force[k]), float(blk.length[k]), float(blk.rate[k])))
        return ten.phase == "locked" and sim.state.t >= ten.t_lock + LOCKED_TIME - 1e-9

    res = prep.sim.run(sc.t_end, callback=cb)
    return prep, ten, res, forces


def test_free_phase_pushes_with_the_target_force(settled):
    prep, ten, res, forces = settled
    info = ten.info()
    assert info["phase"] == "locked" and 0.5 <= info["free_end_s"] <= 0.7 + 1e-9
    side = ten.sides[0]
    push = side["push"]
    # the assembled spring holds 10 kN of track tension: about twice that on the idler (two strands)
    assert 1.6e4 < push < 2.1e4
    c = side["block"].c[side["k"]]
    free = np.array([f - c * rate for t, ph, f, _, rate in forces if ph == "free"])
    # spring-less: apart from the damper, the tensioner's force is the constant push (TSDA tension = -push)
    assert len(free) > 400 and np.allclose(free, -push, rtol=1e-12, atol=1e-9 * push)


def test_after_locking_the_idler_holds_and_the_strands_carry_the_target_tension(settled):
    # korner-2024 §5.1: the re-anchored spring holds the idler where the constant push had it, at the target
    # track tension. Over the locked second, on both sides: the idler centre (vehicle frame) stays within
    # 1 mm of where it was at the lock (measured 0.89 / 0.58 mm left / right at stop 28), and the two strands leaving
    # the idler carry the target tension within 5 % at the idler's height. A hanging chain's tension changes
    # by w dz between two of its points (w = m_shoe g / pitch = 545 N/m): the upper strand lies 0.58 m above
    # the lower one and carries 317 N more from its weight alone. Measured at stop 28, strand means upper
    # 10.60 / 10.53 kN and lower 9.97 / 10.00 kN (left / right; +6.0 / +5.3 % and -0.3 / 0.0 %, which an
    # earlier version of this test compared with the target directly and marked as an unexplained excess);
    # at the idler's height upper 10.48 / 10.41 kN (+4.8 / +4.1 %), lower 10.16 / 10.19 kN (+1.6 / +1.9 %).
    # What remains between the two, 0.31 / 0.22 kN, arises across the idler's wrap (the shoes there carry the
    # idler's contact loads; docs/vehicle.md). Only these strands: the tensioner sets their tension through
    # the freely turning idler; the shoes wrapped on the sprocket or the idler or pressed under a road wheel
    # also carry contact loads in their pins, and the braked sprocket holds whatever tension difference the
    # drop left between its two sides.
    prep, ten, res, _ = settled
    assert ten.phase == "locked" and res.t[-1] >= ten.t_lock + LOCKED_TIME - 1e-9
    target = prep.spec.idler.tensioner.target_tension
    assert target == 1e4
    w = res.t >= ten.t_lock - 1e-9
    com = np.asarray(prep.spec.chassis.com)
    for side in ("left", "right"):
        info = prep.vehicle.sides[side]
        idler = vehicle_frame(res, info.idler, com)[w]
        moved = np.linalg.norm(idler - idler[0], axis=1).max()
        st = strand_tensions(prep.spec, info, res, ten.t_lock, res.t[-1])
        up, lo = st["upper"], st["lower"]
        print(f"{side}: idler moved {1e3 * moved:.2f} mm; w dz = {st['gravity_N']:.0f} N; strand tension upper "
              f"{up['tension_N']:.0f} N at z {up['z_m']:.3f} m ({up['tension_at_idler_N']:.0f} N at the idler's "
              f"height), lower {lo['tension_N']:.0f} N at z {lo['z_m']:.3f} m ({lo['tension_at_idler_N']:.0f} N)")
        assert moved < 1e-3, side
        assert len(up["shoes"]) > 15 and len(lo["shoes"]) >= 3, (side, up["shoes"], lo["shoes"])  # upper spans the hull
        assert st["w_N_per_m"] == pytest.approx(8.55 * 9.81 / 0.154)  # Table 3.6 shoe mass and pitch
        assert 0.5 < up["z_m"] - lo["z_m"] < 0.7, side  # the upper run on the road wheels' tops
        for strand in (up, lo):
            assert strand["tension_at_idler_N"] == pytest.approx(target, rel=0.05), (side, strand)
        # the strands' difference: the chain's weight is its larger share
        assert 0.5 < st["gravity_N"] / (up["tension_N"] - lo["tension_N"]) < 1.0, (side, st)


def test_the_track_carries_the_push_and_the_mean_tension_is_below_the_target(settled):
    # at rest the idler and its carrier are in equilibrium along the slide: the shoes' contact forces on
    # the idler balance the push of the tensioner (now the re-anchored spring's)
    prep, ten, res, _ = settled
    d = np.array(prep.spec.idler.tensioner.direction)
    for s in ten.sides:
        name = s["name"]
        f = np.array([res[f"{name}.idler.contact.force.{c}"][-1] for c in "xz"])
        assert -(f @ d) == pytest.approx(s["push"], rel=0.03)
    w = window_means(res, ten.t_free_end, ten.t_lock, prep.spec.chassis.com)
    # the mean over all shoes is of the order of the target (thesis Fig. 5.5: within a few per cent); the
    # loop's tension is not uniform (wheel loads, bending springs, friction), so no closer bound holds
    assert 0.75 * ten.target_tension < w["itt_N"] < 1.25 * ten.target_tension
    assert w["idler_x_m"] == pytest.approx(-3.95, abs=0.1) and w["idler_z_m"] == pytest.approx(-0.12, abs=0.02)


def test_tensioning_refuses_a_locked_tensioner():
    from types import SimpleNamespace

    from trackdyn.spec import get

    prep = SimpleNamespace(spec=get("m113").replace({"idler.tensioner.mode": "locked"}))
    with pytest.raises(ValueError, match="needs a spring tensioner"):
        Tensioning(prep)
    with pytest.raises(ValueError, match="free_time"):
        Tensioning(prep, free_time=-1.0)


def test_a_moved_sprocket_starts_at_the_same_track_tension(settled):
    # korner-2024 §5.1 / Fig. 5.5: the point of the procedure. Moving the sprocket 0.1 m forward adds a
    # shoe and changes where the spring-held idler sits: without the procedure the settled mean shoe
    # tension is 8.9 kN against 5.9 kN at the design (measured, docs/events.md); with it both loops
    # carry the same push and their mean shoe tensions agree to a few per cent, the idler
    # standing wherever that tension puts it
    from trackdyn.experiments.events import resolve_vehicle

    prep0, ten0, res0, _ = settled
    w0 = window_means(res0, ten0.t_free_end, ten0.t_lock, prep0.spec.chassis.com)
    spec = resolve_vehicle("m113", sprocket_dx=0.1)
    sc = Scenario(vehicle=spec, driver=Brake(), t_end=1.2, step=1e-3, output_step=0.01, record=EVENT_RECORD)
    prep = prepare(sc)
    ten = Tensioning(prep, free_time=0.5, max_free_time=0.7, average_time=0.3)
    res = prep.sim.run(sc.t_end, callback=ten)
    assert ten.phase == "locked"
    # the same track tension T behind the push: F = T (u_in + u_out)·d differs only by the strand angles
    assert ten.sides[0]["push"] == pytest.approx(ten0.sides[0]["push"], rel=0.01)
    w = window_means(res, ten.t_free_end, ten.t_lock, spec.chassis.com)
    assert w["itt_N"] == pytest.approx(w0["itt_N"], rel=0.05)
    # the loop needs about 2 x 0.1 m more track (both strands leaving the sprocket lengthen) and gets one more
    # shoe (pitch 0.154 m): the spring-held idler stands about (0.2 - 0.154) / 2 = 0.023 m further forward
    assert prep.vehicle.geometry.n_shoes() == prep0.vehicle.geometry.n_shoes() + 1
    assert w["idler_x_m"] - w0["idler_x_m"] == pytest.approx((2 * 0.1 - spec.shoes.pitch) / 2, abs=0.01)
