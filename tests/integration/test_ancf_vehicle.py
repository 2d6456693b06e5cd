"""The APC on ANCF tracks (assembly.ancf_track, issue #30): each track a closed chain of 64 cable elements
pinned at the links' pins, settled on flat ground with its brakes on, and held against hand calculations.

- the section: the shoes' mass per length and a solid rectangle of the shoe's width, unless the spec gives one;
- the chain as built: straight elements from pin to pin at the tensioner's strain, so the elastic forces are
  the uniform tension, with no spurious axial force in the wraps (the C1 cable through the same pins had 12 MN);
- the ground carries the whole weight (hull, running gear and both chains) at rest, within 1 %;
- the chain's vertical loads on the running gear (road wheels, idler, sprocket) carry the vehicle less
  its tracks, within 1 %;
- the upper strand carries the tension that balances the tensioner's spring at the free idler (spring
  force / the strands' push per unit tension, the builder's own balance), within 10 %.
"""

import warnings

import numpy as np
import pytest

from trackdyn.assembly.ancf_track import build_ancf_vehicle, cable_section, track_chain
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
    sc = Scenario(vehicle="apc", terrain=Flat(), driver=Brake(), t_end=3.0, step=5e-4, output_step=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = build_ancf_vehicle(sc)
    sim = Simulation(b.model, integrator="euler-implicit-linearized", step=5e-4, output_step=0.01, system=b.system)
    res = sim.run(3.0)
    assert res.metadata["status"] == "complete"
    return b, res.frame()


def test_the_cable_section_is_the_shoes_unless_the_spec_gives_one():
    spec = get("apc")
    area, inertia = cable_section(spec)
    sh = spec.shoes
    assert STEEL.rho * area * sh.pitch == pytest.approx(sh.mass, rel=1e-12)
    t = area / sh.width  # 39.6 mm of steel over the shoe's 0.379 m
    assert inertia == pytest.approx(sh.width * t**3 / 12, rel=1e-12) and t == pytest.approx(0.0396, abs=1e-4)
    given = spec.replace({"shoes.section_area": 0.01, "shoes.section_inertia": 3e-6})
    assert cable_section(given) == (0.01, 3e-6)


def test_the_chain_as_built_carries_the_tension_in_straight_elements():
    from dataclasses import replace

    from trackdyn.assembly.builder import build_vehicle, vehicle_geometry

    spec = get("apc")
    geo = vehicle_geometry(spec)
    vm = build_vehicle(spec, geometry=replace(geo, tracks={s: replace(t, n_shoes=0) for s, t in geo.tracks.items()}))
    vm.geometry = geo
    T = 10e3
    mesh = track_chain(vm, "left", T)
    assert mesh.n_el == 64 and mesh.n_pos == 64 and mesh.closed
    Q, _ = mesh.elastic(mesh.q0)
    Q = Q.reshape(-1, 6)
    # each element pulls its two pins together with T along its chord, nothing else (no bending, no shear)
    ends = Q[1::2, :3]
    assert np.linalg.norm(ends, axis=1) == pytest.approx(np.full(64, T), rel=1e-5)
    assert np.abs(Q[:, 3:]).max() < 1e-6 * T


def test_the_ground_carries_the_weight_at_rest(settled):
    b, df = settled
    cables = [p for p in b.system.providers if type(p).__name__ == "CableForces"]
    # the gradient bodies' "masses" (kg m²) feel no gravity (CableForces takes it off them)
    weight = (float(np.sum(b.model.body_arrays()[0])) - sum(float(c.m_rx.sum()) for c in cables)) * G
    ground = -(df["left.track-contact.ground.force.z"] + df["right.track-contact.ground.force.z"]).values
    last = df["t"].values > 2.0
    # coming to rest: the fore-aft rocking after the drop decays (largest speed after 1 s 11.5 mm/s, after 2 s
    # 1.6 mm/s, after 2.5 s 1.0 mm/s; 0.56 mm/s at 3 s)
    assert np.abs(df["chassis.vel.x"].values[last]).max() < 0.003
    assert abs(df["chassis.vel.x"].values[-1]) < 1e-3
    assert ground[-1] == pytest.approx(weight, rel=0.01)
    assert np.mean(ground[last]) == pytest.approx(weight, rel=0.01)


def test_the_running_gear_carries_the_vehicle_less_its_tracks(settled):
    b, df = settled
    spec = b.spec
    mass = float(np.sum(b.model.body_arrays()[0]))
    cables = [p for p in b.system.providers if type(p).__name__ == "CableForces"]
    cable_mass = sum(float(c.m_r.sum() + c.m_rx.sum()) for c in cables)
    # the chains weigh what the shoes weigh (ε0 = 3.3e-6 of stretch aside)
    assert sum(float(c.m_r.sum()) for c in cables) == pytest.approx(2 * spec.shoes.count * spec.shoes.mass,
                                                                    rel=1e-5)
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


T_SETTLE = 1.0  # s on the brakes: at 0.5 s the chain's first left road wheel still swings (-33 % of links')


def _settled_wheel_loads(fidelity):
    """The trial monitor's road-wheel loads (N, the monitor's wheel order) of the APC on ``fidelity`` after
    T_SETTLE on the brakes at the fidelity's own step."""
    from trackdyn.experiments.trials import Monitor
    from trackdyn.sim.run import prepare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(Scenario(vehicle="apc", fidelity=fidelity, terrain=Flat(), driver=Brake(), t_end=T_SETTLE,
                                output_step=0.05))
    prep.sim.run(T_SETTLE)
    mon = Monitor(prep)
    mon.sample(prep.sim.state)
    return np.array(mon.samples["wheel_loads"][-1])


def test_the_trial_monitor_reads_the_chains_wheel_loads_as_on_links():
    """The events' mechanism summaries read the road wheels' loads through the trial monitor. On ancf the
    chain's loads come from its contact provider (``CableContact.contact_loads``), not the contact system:
    settled on the brakes they match the links fidelity's wheel by wheel (both tracks' ten road wheels;
    measured within 2.4 % of a wheel's load) and they sum alike (0.06 %; 152 kN, the weight and the
    tracks' tension pulling the end wheels down)."""
    ancf, links = _settled_wheel_loads("ancf"), _settled_wheel_loads("links")
    assert len(ancf) == len(links) == 10
    assert np.all(links > 5e3)  # every road wheel carries part of the 11 t APC
    assert ancf.sum() == pytest.approx(links.sum(), rel=0.01)
    assert np.max(np.abs(ancf - links) / links) < 0.04
