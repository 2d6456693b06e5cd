"""Contact benchmark ``contact-loop``: one closed track loop of 63 shoes on flat ground.

The scene (M113-like, left track, frame at the sprocket centre; data from
``shared/reference/m113.md`` and the thesis): 63 shoes of 8.55 kg, pitch
0.154 m, pads 0.11 x 0.19 m plus side pads (0.38 m wide), pinned to each other
by revolutes; five road wheels (r 0.305 m, two halves 0.065 m wide, 0.051 m
apart), a 10-tooth single-pin sprocket (addendum 0.2605 m, arc centres 0.3 m,
arc radius 0.089 m, gears 0.225 m apart) and an idler (r 0.219 m), all on
revolutes to the ground at their hubs; the idler's position closes the loop
with exact pin spacing. Importing this module registers the benchmark.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import brentq

from .. import terrain as tt
from .._compiled import entry_point
from ..contact import ContactSystem, Material, shapes
from ..contact import _detect as D
from ..math.quaternion import matrix_to_quat
from ..mbs import Model, Revolute
from ..sim.simulation import Simulation
from .benchmarks import bench, machine_info, time_per_step

__all__ = ["contact_loop_scene", "contact_loop"]

PITCH = 0.154
N_SHOES = 63
SHOE_MASS = 8.55
WHEEL_X = (-0.655, -1.322, -1.989, -2.656, -3.322)
WHEEL_Z = -0.215
WHEEL_R = 0.305
IDLER_R = 0.219
IDLER_Z = -0.12
SPROCKET_PITCH_R = 0.245
TOP = 0.02  # the wheels' running surface lies this far above the pin line
PAD = Material("pad", young=1e7, poisson=0.3, restitution=0.1, friction=0.8)
STEEL = Material("steel", young=2e9, poisson=0.3, restitution=0.1, friction=0.4)
GROUND = Material("ground", young=2e10, poisson=0.3, restitution=0.1, friction=0.8)


def _belt(circles):
    """Closed belt around circles (x, z, r) listed counter-clockwise in the x-z plane (x right, z up).

    Returns a function s -> (point, tangent) on the belt and its length.
    """
    n = len(circles)
    segs = []  # (kind, data, length)
    tang = []
    for i in range(n):
        x1, z1, r1 = circles[i]
        x2, z2, r2 = circles[(i + 1) % n]
        d = np.array([x2 - x1, z2 - z1])
        L = np.linalg.norm(d)
        u = d / L
        # outer tangent with the loop on the left when going from circle i to i+1 clockwise
        c = (r1 - r2) / L
        s = math.sqrt(1 - c * c)
        nrm = np.array([c * u[0] + s * u[1], c * u[1] - s * u[0]])  # outward (right-hand) normal of the tangent
        p1 = np.array([x1, z1]) + r1 * nrm
        p2 = np.array([x2, z2]) + r2 * nrm
        tang.append((p1, p2, nrm))
    for i in range(n):
        p1, p2, nrm = tang[i]
        segs.append(("line", (p1, p2), np.linalg.norm(p2 - p1)))
        x2, z2, r2 = circles[(i + 1) % n]
        nxt = tang[(i + 1) % n][2]
        a0 = math.atan2(nrm[1], nrm[0])
        a1 = math.atan2(nxt[1], nxt[0])
        da = (a1 - a0) % (2 * math.pi)
        segs.append(("arc", (np.array([x2, z2]), r2, a0, da), r2 * da))
    total = sum(s[2] for s in segs)

    def at(s):
        s = s % total
        for kind, data, L in segs:
            if s <= L:
                if kind == "line":
                    p1, p2 = data
                    return p1 + (p2 - p1) * (s / L)
                c, r, a0, da = data
                a = a0 + da * (s / L)
                return c + r * np.array([math.cos(a), math.sin(a)])
            s -= L
        return at(0.0)  # pragma: no cover

    return at, total


def _pins(at, total, pitch, n):
    """n points on the belt with consecutive chords equal to ``pitch``; returns points and the closing error."""
    s = 0.0
    pts = [at(0.0)]
    for _ in range(n):
        p = pts[-1]
        s_new = brentq(lambda x: np.linalg.norm(at(x) - p) - pitch, s + 0.5 * pitch, s + 1.5 * pitch)
        pts.append(at(s_new))
        s = s_new
    return np.array(pts[:-1]), s - total


def contact_loop_scene(coupling: str = "full"):
    """The benchmark's model, contact system and terrain (see the module docstring)."""

    def layout(idler_x):
        # counter-clockwise in the x-z plane: sprocket, idler, road wheels from the rear to the front
        circles = [(0.0, 0.0, SPROCKET_PITCH_R), (idler_x, IDLER_Z, IDLER_R + TOP)] + [
            (x, WHEEL_Z, WHEEL_R + TOP) for x in sorted(WHEEL_X)]
        return _belt(circles)

    idler_x = brentq(lambda x: _pins(*layout(x), PITCH, N_SHOES)[1], -4.4, -3.6)
    at, total = layout(idler_x)
    pins, _ = _pins(at, total, PITCH, N_SHOES)
    m = Model()
    ground_z = WHEEL_Z - WHEEL_R - TOP - 0.045 + 3e-4
    shoes = []
    for k in range(N_SHOES):
        p0 = pins[k]
        p1 = pins[(k + 1) % N_SHOES]
        c = 0.5 * (p0 + p1)
        t = (p1 - p0) / np.linalg.norm(p1 - p0)
        x_ax = np.array([t[0], 0.0, t[1]])
        y_ax = np.array([0.0, 1.0, 0.0])
        z_ax = np.cross(x_ax, y_ax)  # towards the inside of the loop (the wheels)
        R = np.column_stack([x_ax, y_ax, z_ax])
        shoes.append(m.add_body(f"shoe[{k}]", mass=SHOE_MASS, inertia=[0.105, 0.0195, 0.12],
                                pos=[c[0], 0.0, c[1]], quat=matrix_to_quat(R)))
    for k in range(N_SHOES):
        p = pins[(k + 1) % N_SHOES]
        m.add_joint(Revolute(shoes[k], shoes[(k + 1) % N_SHOES], point=[p[0], 0.0, p[1]], axis=[0, 1, 0],
                             name=f"pin[{k}]"))
    wheels = []
    hubs = [(x, WHEEL_Z) for x in WHEEL_X]
    for i, (x, z) in enumerate(hubs):
        w = m.add_body(f"roadwheel[{i}]", mass=100.0, inertia=[2.0, 3.5, 2.0], pos=[x, 0.0, z])
        m.add_joint(Revolute(m.ground, w, point=[x, 0, z], axis=[0, 1, 0], name=f"hub[{i}]"))
        wheels.append(w)
    spr = m.add_body("sprocket", mass=200.0, inertia=[6.0, 12.0, 6.0], pos=[0, 0, 0])
    m.add_joint(Revolute(m.ground, spr, point=[0, 0, 0], axis=[0, 1, 0], name="sprocket.axle"))
    idl = m.add_body("idler", mass=200.0, inertia=[6.0, 12.0, 6.0], pos=[idler_x, 0, IDLER_Z])
    m.add_joint(Revolute(m.ground, idl, point=[idler_x, 0, IDLER_Z], axis=[0, 1, 0], name="idler.axle"))
    cs = ContactSystem(m, terrain=tt.Flat(ground_z, material=GROUND))
    for s in shoes:
        cs.add_shape(s, shapes.Box([0.11, 0.19, 0.03], pos=[0, 0, -0.03]), PAD, family="shoes")
        for y in (-0.1425, 0.1425):
            cs.add_shape(s, shapes.Box([0.11, 0.095, 0.03], pos=[0, y, -0.03]), PAD, family="shoes")
        for y in (-0.09, 0.09):
            cs.add_shape(s, shapes.Box([0.12, 0.08, 0.02], pos=[0, y, TOP - 0.01]), STEEL, family="shoes",
                         terrain=False)
        cs.add_shape(s, shapes.Box([0.05, 0.03, 0.06], pos=[0, 0, 0.05]), STEEL, family="shoes", terrain=False)
        cs.add_shape(s, shapes.Cylinder(0.0125, 0.3, pos=[0.5 * PITCH, 0, 0]), STEEL, family="pins",
                     terrain=False)
        cs.add_shape(s, shapes.Sphere(0.015, pos=[0, 0, 0.05]), STEEL, family="guides", terrain=False)
    for w in wheels:
        for y in (-0.058, 0.058):
            cs.add_shape(w, shapes.Cylinder(WHEEL_R, 0.065, pos=[0, y, 0]), STEEL, family="wheels")
    for y in (-0.058, 0.058):
        cs.add_shape(idl, shapes.Cylinder(IDLER_R, 0.065, pos=[0, y, 0]), STEEL, family="wheels")
    # a tooth gap centred on the pin nearest to the sprocket's bottom
    ang = np.array([math.atan2(p[0], -p[1]) for p in pins])
    near = np.abs(np.hypot(pins[:, 0], pins[:, 1]) - SPROCKET_PITCH_R) < 1e-9
    k = int(np.argmin(np.where(near, np.abs(ang), np.inf)))
    cs.add_shape(spr, shapes.Sprocket(10, 0.2605, 0.3, 0.089, 0.225, phase=float(ang[k]), guide_clearance=0.04),
                 STEEL, family="sprocket")
    for a, b in (("shoes", "shoes"), ("pins", "pins"), ("guides", "guides"), ("shoes", "pins"),
                 ("shoes", "guides"), ("pins", "guides"), ("wheels", "wheels"), ("wheels", "sprocket"),
                 ("shoes", "sprocket"), ("pins", "wheels"), ("guides", "wheels")):
        cs.collide(a, b, False)
    if coupling == "diagonal":
        for f in ("shoes", "pins", "guides"):
            for g in ("wheels", "sprocket"):
                cs.coupling(f, g, "diagonal")
    return m, cs


def _time_contact(cs):
    """Wrap the contact system's accumulate to time it (benchmarks may read clocks)."""
    acc = cs.accumulate
    box = {"t": 0.0, "n": 0, "contacts": 0}

    def timed(ctx):
        t0 = time.perf_counter()
        acc(ctx)
        box["t"] += time.perf_counter() - t0
        if ctx.data is not None:
            box["n"] += 1
            box["contacts"] += int(cs.glob_out[0])

    cs.accumulate = timed
    return box


@bench("contact-loop")
def contact_loop(step: float = 1e-3, t_settle: float = 0.05, t_end: float = 0.3, couplings=("full", "diagonal")):
    """Detection plus forces of one 63-shoe loop at rest on flat ground: µs per step of the contact stage."""
    import warnings

    runs = []
    for coupling in couplings:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m, cs = contact_loop_scene(coupling)
            sim = Simulation(m, step=step, output_step=10 * step, providers=[cs], record=["contact.count"])
        sim.run(t_settle)
        box = _time_contact(cs)
        r = time_per_step(sim, t_end)
        s = sim.system
        s.update_kinematics(sim.state.q, sim.state.v)
        args = (cs.rec, cs.shapes, cs.scratch, cs.filters, cs.terrain_arrays, s.kin.pos, s.kin.R, cs.margin,
                cs.default_radius, cs.max_penetration, cs.winkler_grid)
        entry = entry_point(D.detect, args)
        n_det = 200
        t0 = time.perf_counter()
        for _ in range(n_det):
            entry(*args)
        t_det = (time.perf_counter() - t0) / n_det
        r.update({
            "coupling": coupling,
            "contact_us_per_step": 1e6 * box["t"] / max(box["n"], 1),
            "detect_kernel_us": 1e6 * t_det,
            "contacts_mean": box["contacts"] / max(box["n"], 1),
            "coupled_body_pairs": len(cs.coupling_pairs()),
            "kkt_nnz": s.pattern.nnz,
            "ldl_nnz": sim.integrator.solver.nnz_L,
            "shapes": cs.n_shapes,
            "bodies": s.nb,
            "status": "complete" if sim.state.t >= t_settle + t_end - 1e-9 else "diverged",
        })
        runs.append(r)
    out = {"benchmark": "contact-loop", "integrator": sim.integrator.name, "machine": machine_info()}
    out.update(runs[0])
    out["runs"] = runs
    return out
