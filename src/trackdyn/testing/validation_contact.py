"""Validation cases of contact and terrain (closed forms), registered with :func:`~trackdyn.testing.validation.case`.

Cases: ``drop`` (rebound/impact speed = restitution), ``hertz-static``
(penetration of a loaded sphere), ``incline-stick`` / ``incline-slide``
(Coulomb friction with history), ``rolling`` (cylinder on an incline),
``winkler`` (plate and wheel on a Winkler foundation), ``obstacles`` (a wheel
pushed slowly over every analytic obstacle follows its offset profile).
Importing this module registers them for ``trackdyn validate``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from .. import terrain as tt
from ..contact import ContactSystem, Material, shapes
from ..conventions import G0 as G
from ..math.quaternion import quat_from_axis_angle
from ..mbs import LinearMotor, Model, PointForce, Prismatic, Profile, Revolute
from ..sim.simulation import Simulation
from .validation import Reference, _result, case

__all__ = ["drop", "hertz_static", "incline_stick", "incline_slide", "rolling", "winkler", "obstacles"]

CONCRETE = Material("concrete", young=2e10, poisson=0.3, restitution=0.1, friction=0.8)


def _crossing_speeds(vz, count):
    """Speed just before the first contact and just after it ends (samples of every step)."""
    k0 = int(np.argmax(count > 0))
    k1 = k0 + int(np.argmax(count[k0:] == 0))
    if count[k0] == 0 or k1 == k0:
        raise RuntimeError("the body did not hit and leave the ground")
    return abs(vz[k0 - 1]), abs(vz[k1]), k1 - k0


@case("drop", Reference({"hertz_e0.3_rel": 1.6e-2, "hertz_e0.6_rel": 1.5e-2, "hertz_e0.9_rel": 1.6e-2,
                         "hooke_e0.3_rel": 8.7e-3, "hooke_e0.6_rel": 1.1e-2, "hooke_e0.9_rel": 1.3e-2}))
def drop(step=2e-5, restitutions=(0.3, 0.6, 0.9)):
    """Sphere hitting a plane at 1 m/s without gravity: rebound/impact speed vs e (Hertz and Hooke)."""
    errs, measured = {}, {}
    for law in ("hertz", "hooke"):
        for e in restitutions:
            m = Model(gravity=(0.0, 0.0, 0.0))
            ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.105], vel=[0, 0, -1.0])
            ground = tt.Flat(material=CONCRETE.with_(restitution=e))
            cs = ContactSystem(m, terrain=ground, law=law)
            cs.add_shape(ball, shapes.Sphere(0.1), material=Material("ball", young=1e7, restitution=e))
            sim = Simulation(m, step=step, output_step=step, providers=[cs],
                             record=["ball.vel.z", "contact.count"])
            res = sim.run(0.03 if law == "hertz" else 0.015)
            v_in, v_out, n = _crossing_speeds(res["ball.vel.z"], res["contact.count"])
            ratio = v_out / v_in
            errs[f"{law}_e{e:g}_rel"] = abs(ratio / e - 1)
            measured[f"{law}_e{e:g}"] = {"ratio": ratio, "steps_in_contact": n}
    return _result("drop", errs, {k: 0.05 for k in errs}, step_size_s=step, measured=measured)


@case("hertz-static", Reference({"m2_rel": 1.4e-12, "m20_rel": 6.7e-13}, upper_only=("m2_rel", "m20_rel")))
def hertz_static(step=1e-4, t_end=0.6):
    """Sphere resting on a plane: penetration vs (9F²/(16E*²R))^(1/3) for two loads."""
    R = 0.05
    ball_mat = Material("ball", young=1e8, poisson=0.3, restitution=0.2)
    E = 1.0 / ((1 - 0.09) / 1e8 + (1 - 0.09) / 2e10)
    errs, measured = {}, {}
    for mass in (2.0, 20.0):
        m = Model()
        ball = m.add_body("ball", mass=mass, inertia=[0.4 * mass * R * R] * 3, pos=[0, 0, R])
        cs = ContactSystem(m, terrain=tt.Flat(material=CONCRETE))
        cs.add_shape(ball, shapes.Sphere(R), material=ball_mat)
        sim = Simulation(m, step=step, output_step=1e-2, providers=[cs],
                         record=["ball.pos.z", "contact.penetration"])
        res = sim.run(t_end)
        F = mass * G
        exact = (9 * F * F / (16 * E * E * R)) ** (1.0 / 3.0)
        pen = R - res["ball.pos.z"][-1]
        errs[f"m{mass:g}_rel"] = abs(pen / exact - 1)
        measured[f"m{mass:g}"] = {"penetration_m": pen, "exact_m": exact,
                                  "recorded_m": float(res["contact.penetration"][-1])}
    return _result("hertz-static", errs, {k: 0.02 for k in errs}, step_size_s=step, measured=measured)


def _incline_block(tan_theta, mu=0.5, step=1e-4, t_end=2.0):
    th = math.atan(tan_theta)
    m = Model()
    h = 0.1
    n = np.array([-math.sin(th), 0.0, math.cos(th)])
    blk = m.add_body("block", mass=1.0, inertia=[0.0042, 0.0042, 0.0067], pos=0.5 * h * n,
                     quat=quat_from_axis_angle([0, 1, 0], -th))
    cs = ContactSystem(m, terrain=tt.Plane.incline(th, material=CONCRETE.with_(friction=mu)))
    cs.add_shape(blk, shapes.Box([0.2, 0.2, h]), material=Material("block", young=1e8, restitution=0.2,
                                                                        friction=mu))
    sim = Simulation(m, step=step, output_step=1e-2, providers=[cs], record=["block.pos.*"])
    res = sim.run(t_end)
    down = np.array([-math.cos(th), 0.0, -math.sin(th)])
    s = np.column_stack([res[f"block.pos.{c}"] for c in "xyz"]) @ down
    return th, res.t, s - s[0]


@case("incline-stick", Reference({"drift_m": 4.3e-6}))
def incline_stick(step=1e-4, t_end=2.0):
    """Block on an incline with tan θ = 0.4 < μ = 0.5: it holds (< 1 mm in 2 s)."""
    th, t, s = _incline_block(0.4, step=step, t_end=t_end)
    drift = float(np.max(np.abs(s)))
    return _result("incline-stick", {"drift_m": drift}, {"drift_m": 1e-3}, step_size_s=step,
                   angle_deg=math.degrees(th), mu=0.5)


@case("incline-slide", Reference({"acceleration_rel": 1.2e-12}, upper_only=("acceleration_rel",)))
def incline_slide(step=1e-4, t_end=2.0):
    """Block on an incline with tan θ = 0.7 > μ = 0.5: slides with g (sin θ - μ cos θ)."""
    th, t, s = _incline_block(0.7, step=step, t_end=t_end)
    m = t > 0.3
    a = 2.0 * np.polyfit(t[m], s[m], 2)[0]
    exact = G * (math.sin(th) - 0.5 * math.cos(th))
    return _result("incline-slide", {"acceleration_rel": abs(a / exact - 1)}, {"acceleration_rel": 0.02},
                   step_size_s=step, acceleration=float(a), exact=exact, angle_deg=math.degrees(th))


@case("rolling", Reference({"acceleration_rel": 6.7e-6}))
def rolling(step=1e-4, t_end=1.5, angle_deg=10.0):
    """Solid cylinder rolling down an incline without slip: a = (2/3) g sin θ."""
    th = math.radians(angle_deg)
    r, w, mass = 0.2, 0.1, 10.0
    n = np.array([-math.sin(th), 0.0, math.cos(th)])
    m = Model()
    Iax = 0.5 * mass * r * r
    Itr = mass * (3 * r * r + w * w) / 12
    cyl = m.add_body("cylinder", mass=mass, inertia=[Itr, Iax, Itr], pos=(r - 1e-5) * n)
    cs = ContactSystem(m, terrain=tt.Plane.incline(th, material=CONCRETE))
    cs.add_shape(cyl, shapes.Cylinder(r, w), material=Material("steel", young=2e11, restitution=0.2,
                                                                  friction=0.6))
    sim = Simulation(m, step=step, output_step=1e-2, providers=[cs],
                     record=["cylinder.pos.*", "cylinder.vel.*", "cylinder.omega.y"])
    res = sim.run(t_end)
    down = np.array([-math.cos(th), 0.0, -math.sin(th)])
    s = np.column_stack([res[f"cylinder.pos.{c}"] for c in "xyz"]) @ down
    v = np.column_stack([res[f"cylinder.vel.{c}"] for c in "xyz"]) @ down
    sel = res.t > 0.2
    a = 2.0 * np.polyfit(res.t[sel], s[sel], 2)[0]
    exact = 2.0 / 3.0 * G * math.sin(th)
    slip = float(np.max(np.abs(v[sel] + res["cylinder.omega.y"][sel] * r)))
    return _result("rolling", {"acceleration_rel": abs(a / exact - 1)}, {"acceleration_rel": 0.02},
                   step_size_s=step, acceleration=float(a), exact=exact, max_slip_speed=slip)


def _segment_area(r, z):
    return r * r * math.acos((r - z) / r) - (r - z) * math.sqrt(2 * r * z - z * z)


@case("winkler", Reference({"plate_rel": 1.5e-13, "wheel_rel": 3.0e-6}, upper_only=("plate_rel",)))
def winkler(step=1e-4, t_end=0.6, k_w=2e6):
    """Plate and wheel on a Winkler foundation: sinkage F/(k A) and k b A_seg(z) = F."""
    errs, measured = {}, {}
    soil = Material.winkler("soil", stiffness=k_w, damping=0.0, friction=0.5)
    # plate
    a, b, h, mass = 0.5, 0.4, 0.05, 100.0
    c_w = 0.8 * 2.0 * math.sqrt(k_w * a * b * mass) / (a * b)
    m = Model()
    plate = m.add_body("plate", mass=mass, inertia=[1.4, 2.1, 3.4], pos=[0, 0, 0.5 * h])
    cs = ContactSystem(m, terrain=tt.Flat(material=soil.with_(damping=c_w)), winkler_grid=3)
    cs.add_shape(plate, shapes.Box([a, b, h]), material=Material("steel", young=2e11))
    res = Simulation(m, step=step, output_step=1e-2, providers=[cs], record=["plate.pos.z"]).run(t_end)
    z = 0.5 * h - res["plate.pos.z"][-1]
    exact = mass * G / (k_w * a * b)
    errs["plate_rel"] = abs(z / exact - 1)
    measured["plate"] = {"sinkage_m": z, "exact_m": exact}
    # wheel
    r, w, mass = 0.3, 0.2, 200.0
    exact = brentq(lambda zz: k_w * w * _segment_area(r, zz) - mass * G, 1e-9, r)
    c_w = 0.8 * 2.0 * math.sqrt(k_w * w * 2 * math.sqrt(2 * r * exact) * mass) / (w * 2 * math.sqrt(2 * r * exact))
    m = Model()
    wheel = m.add_body("wheel", mass=mass, inertia=[5.0, 9.0, 5.0], pos=[0, 0, r])
    cs = ContactSystem(m, terrain=tt.Flat(material=soil.with_(damping=c_w)))
    cs.add_shape(wheel, shapes.Cylinder(r, w), material=Material("steel", young=2e11))
    res = Simulation(m, step=step, output_step=1e-2, providers=[cs], record=["wheel.pos.z"]).run(t_end)
    z = r - res["wheel.pos.z"][-1]
    errs["wheel_rel"] = abs(z / exact - 1)
    measured["wheel"] = {"sinkage_m": z, "exact_m": exact}
    return _result("winkler", errs, {k: 0.02 for k in errs}, step_size_s=step, measured=measured)


TIMBER = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.6)
RUBBER = Material("tyre", young=1e9, poisson=0.45, restitution=0.1, friction=0.8)  # a hard-rubber road wheel


def obstacle_set():
    """The analytic obstacles of the ``obstacles`` case, each on flat concrete."""
    return {
        "half-round": tt.HalfRound(0.1, x=1.0, material=TIMBER),
        "step": tt.Step(0.15, x=1.0, material=TIMBER),
        "gap": tt.Gap(0.3, 0.3, x=1.0, material=TIMBER),
        "barrier": tt.TrapezoidBarrier(0.1, 0.3, math.radians(30), x=1.0, material=TIMBER),
        "ditch": tt.TrapezoidDitch(0.1, 0.8, math.radians(30), x=1.0, material=TIMBER),
    }


@case("obstacles", Reference({"half-round_m": 5.1e-4, "step_m": 7.8e-4, "gap_m": 2.5e-4, "barrier_m": 2.5e-4,
                              "ditch_m": 2.5e-4, "half-round_lost_samples": 0.0, "step_lost_samples": 0.0,
                              "gap_lost_samples": 0.0, "barrier_lost_samples": 0.0, "ditch_lost_samples": 0.0}))
def obstacles(step=1e-3, speed=0.2, radius=0.3, load=2000.0):
    """A loaded wheel pushed at low speed over each obstacle: contact kept, centre on the offset profile."""
    errs, measured = {}, {}
    for name, piece in obstacle_set().items():
        ground = tt.Flat(material=CONCRETE) + piece
        x0 = 0.4
        x1 = piece.x + piece.extent + 0.5
        m = Model()
        car = m.add_body("carriage", mass=1.0, inertia=[0.1] * 3, pos=[x0, 0, radius])
        sld = m.add_body("slider", mass=1.0, inertia=[0.1] * 3, pos=[x0, 0, radius])
        whl = m.add_body("wheel", mass=20.0, inertia=[0.5, 0.9, 0.5], pos=[x0, 0, radius - 1e-4])
        m.add_joint(LinearMotor(m.ground, car, point=[x0, 0, radius], axis=[1, 0, 0],
                                position=Profile.linear(speed), name="drive"))
        m.add_joint(Prismatic(car, sld, point=[x0, 0, radius], axis=[0, 0, 1], name="vertical"))
        m.add_joint(Revolute(sld, whl, point=[x0, 0, radius - 1e-4], axis=[0, 1, 0], name="axle"))
        m.add_force(PointForce(sld, force=[0, 0, -load], frame="world", name="load"))
        cs = ContactSystem(m, terrain=ground)
        cs.add_shape(whl, shapes.Cylinder(radius, 0.2), material=RUBBER)
        sim = Simulation(m, step=step, output_step=step, providers=[cs],
                         record=["wheel.pos.x", "wheel.pos.z", "wheel.contact.count"])
        res = sim.run((x1 - x0) / speed)
        sel = res.t > 0.2
        x = res["wheel.pos.x"][sel]
        z = res["wheel.pos.z"][sel]
        ref = ground.offset_profile(x, radius)
        dev = float(np.max(np.abs(z - ref)))
        lost = int(np.sum(res["wheel.contact.count"][sel] == 0))
        errs[f"{name}_m"] = dev
        errs[f"{name}_lost_samples"] = float(lost)
        measured[name] = {"max_deviation_m": dev, "samples_without_contact": lost, "samples": int(sel.sum())}
    tol = {k: (2e-3 if k.endswith("_m") else 0.0) for k in errs}
    return _result("obstacles", errs, tol, step_size_s=step, speed_mps=speed, measured=measured)
