"""The APC on ANCF cable tracks (assembly.ancf_track, issue #30): built, settled on flat ground with its
brakes on, and held against hand calculations.

- the ground carries the whole weight (hull, running gear and both cable loops) at rest, within 1 %;
- the cable's vertical loads on the running gear (road wheels, idler, sprocket) carry the vehicle less
  its tracks, within 1 %: the loop's tension pulls down at the sprocket and idler as much as it adds on
  the wheels;
- the upper strand carries the tension that balances the tensioner's spring at the free idler (spring
  force / the strands' push per unit tension, the builder's own balance), within 10 %.

Measured at 1.5 s (h = 5e-4): ground / weight 1.0001, running gear / (weight less tracks) 0.995, upper
strand 7.82 / 8.07 kN against 7.65 / 7.95 kN from the springs (left / right), hull 9.3 mm lower than
assembled. Elements bent round the sprocket and idler (0.6 rad each) and under the road wheels carry a
spurious axial force (up to 0.38 MN) that a cubic element cannot shed (docs/joints/ancf.md); the upper
strand's free spans do not.
"""

import warnings

import numpy as np
import pytest

from trackdyn.assembly.ancf_track import build_ancf_vehicle, cable_section
from trackdyn.assembly.builder import _strand_push
from trackdyn.driver import Brake
from trackdyn.formulations.ancf import STEEL
from trackdyn.sim.simulation import Simulation
from trackdyn.spec.io import get
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat

G = 9.81


@pytest.fixture(scope="module")
def settled():
    sc = Scenario(vehicle="apc", terrain=Flat(), driver=Brake(), t_end=1.5, step=5e-4, output_step=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = build_ancf_vehicle(sc)
    sim = Simulation(b.model, integrator="euler-implicit-linearized", step=5e-4, output_step=0.01, system=b.system)
    res = sim.run(1.5)
    assert res.metadata["status"] == "complete"
    return b, res.frame()


def test_the_cable_section_matches_the_shoes():
    spec = get("apc")
    area, inertia = cable_section(spec)
    assert STEEL.rho * area * spec.shoes.pitch == pytest.approx(spec.shoes.mass, rel=1e-12)
    assert STEEL.E * inertia == pytest.approx(spec.shoes.bending_stiffness * spec.shoes.pitch, rel=1e-12)


def test_the_ground_carries_the_weight_at_rest(settled):
    b, df = settled
    cables = [p for p in b.system.providers if type(p).__name__ == "CableForces"]
    # the gradient bodies' "masses" (kg m²) feel no gravity (CableForces takes it off them)
    weight = (float(np.sum(b.model.body_arrays()[0])) - sum(float(c.m_rx.sum()) for c in cables)) * G
    ground = -(df["left.track-contact.ground.force.z"] + df["right.track-contact.ground.force.z"]).values
    last = df["t"].values > 1.0
    # coming to rest: the fore-aft rocking after the drop decays (5.0 mm/s at 1.15 s, 0.35 at 1.5 s)
    assert np.abs(df["chassis.vel.x"].values[last]).max() < 0.01
    assert abs(df["chassis.vel.x"].values[-1]) < 1e-3
    assert ground[-1] == pytest.approx(weight, rel=0.01)
    assert np.mean(ground[last]) == pytest.approx(weight, rel=0.01)


def test_the_running_gear_carries_the_vehicle_less_its_tracks(settled):
    b, df = settled
    spec = b.spec
    mass = float(np.sum(b.model.body_arrays()[0]))
    cables = [p for p in b.system.providers if type(p).__name__ == "CableForces"]
    cable_mass = sum(float(c.m_r.sum() + c.m_rx.sum()) for c in cables)
    # the loops weigh what the shoes weigh, on the smooth curve's length (0.2 % over the chain's chords)
    assert sum(float(c.m_r.sum()) for c in cables) == pytest.approx(2 * spec.shoes.count * spec.shoes.mass,
                                                                    rel=0.003)
    up = 0.0
    for side, info in b.vehicle.sides.items():
        for w in [*info.wheels, info.idler, info.sprocket]:
            up += df[f"{side}.track-contact.{w}.force.z"].values[-1]
    assert up == pytest.approx((mass - cable_mass) * G, rel=0.01)


def test_the_upper_strand_balances_the_tensioner(settled):
    b, df = settled
    vm = b.vehicle
    for side in vm.sides:
        trk, lay = vm.geometry.tracks[side], vm.geometry.layouts[side]
        push = _strand_push(trk, lay.idler_center(trk.idler_shift), vm.spec.idler.tensioner.direction)
        spring = -df[f"{side}.tensioner.force"].values[-1]
        # the upper strand between the sprocket's and the idler's wraps (it rests on the road wheels' tops,
        # as the M113's does); the idler turns freely, so both strands leave it at one tension
        x = np.array([df[f"{side}.track.node[{k}].pos.x"].values[-1] for k in range(64)])
        z = np.array([df[f"{side}.track.node[{k}].pos.z"].values[-1] for k in range(64)])
        xs, xi = df[f"{side}.sprocket.pos.x"].values[-1], df[f"{side}.idler.pos.x"].values[-1]
        upper = [k for k in range(64) if z[k] > z.max() - 0.15 and z[(k + 1) % 64] > z.max() - 0.15
                 and xi + 0.4 < min(x[k], x[(k + 1) % 64]) and max(x[k], x[(k + 1) % 64]) < xs - 0.4]
        T = np.median([df[f"{side}.track.element[{k}].tension"].values[-1] for k in upper])
        assert len(upper) > 15
        assert T == pytest.approx(spring / push, rel=0.10)


def test_the_wrapped_loops_axial_imbalance_falls_with_more_elements_per_shoe():
    # the loop as built (nodes on the smooth curve, gradients relaxed, before any step): the largest departure
    # of EA ε from the tension T at the Gauss points, from a cubic that cannot follow the wraps at uniform
    # stretch; measured 12 MN, 1.9 MN and 0.70 MN at 1, 2 and 4 elements per shoe
    from dataclasses import replace

    from trackdyn.assembly.ancf_track import track_cable
    from trackdyn.assembly.builder import build_vehicle, vehicle_geometry
    from trackdyn.formulations import _ancf_kernels as AK

    spec = get("apc")
    geo = vehicle_geometry(spec)
    vm = build_vehicle(spec, geometry=replace(geo, tracks={s: replace(t, n_shoes=0) for s, t in geo.tracks.items()}))
    vm.geometry = geo
    T = 10e3
    worst = []
    for per_shoe in (1, 2, 4):
        mesh = track_cable(vm, "left", T, per_shoe=per_shoe)
        assert mesh.n_el == 64 * per_shoe
        q, dev = mesh.q0, 0.0
        for k, (a, c) in enumerate(mesh.conn):
            e = np.r_[q[a], q[c]]
            for x in mesh.gauss_x:
                _, sx, _ = AK.hermite(x, mesh.length[k])
                rx = sx[0] * e[0:3] + sx[1] * e[3:6] + sx[2] * e[6:9] + sx[3] * e[9:12]
                dev = max(dev, abs(mesh.EA * 0.5 * (rx @ rx - 1.0) - T))
        worst.append(dev)
    assert worst[0] > 100 * T  # one cubic per 0.6-rad pitch: far from the tension
    assert worst[0] > 4 * worst[1] and worst[1] > 2 * worst[2]
