"""Peers measured side by side (``trackdyn bench NAME --peers``): the same models in MuJoCo, one run each.

The MuJoCo models are generated here from trackdyn's own descriptions, never
written by hand, so that both engines simulate the same bodies:

- ``chain64`` from :func:`trackdyn.testing.problems.chain` with
  :data:`~trackdyn.testing.problems.CHAIN64` (64 links of 8.55 kg, pitch
  0.154 m, hung from a pin at the origin, released horizontal), in two
  formulations: *maximal* coordinates (64 free bodies; each revolute two
  ``connect`` equalities at ±``PIN_HALF_SPAN`` along its axis, a hinge-like
  pair) and a *tree* (64 hinges; the chain is open, so no loop closes);
- ``m113-flat`` from the ``m113`` spec through
  :func:`~trackdyn.assembly.builder.vehicle_geometry` and
  :func:`~trackdyn.assembly.builder.build_vehicle` at the placement and speed
  of trackdyn's benchmark: hull on a free joint; sprockets, tensioner carriers
  (slide), idlers, trailing arms and road wheels as hinges of the hull; each
  track two branches of hinged shoes from its lowest bottom-strand shoe (on a
  free joint) that meet on the top strand, where one ``connect`` equality
  closes the loop (``tracks="maximal"``: every shoe free, two connects per
  pin). The contact shapes are those of
  :func:`~trackdyn.assembly.contact.vehicle_contact` (pads against the ground,
  wheel halves against the shoes' plates and guide horns, the sprocket's tooth
  gaps against the shoe pins, the hull against the ground).

What MuJoCo cannot express the same way, and what it gets instead (reported
in the ``approximations`` list of its result): the torsion bars' piecewise
linear law becomes hinge stiffness between the stops plus joint limits at the
stops; the dampers' asymmetric force-velocity table becomes linear hinge
damping (the mean of the compression and rebound slopes, times the arm's
lever squared); the sprocket's circular tooth gaps become tangent facets
(boxes) in both gear planes, phased to seat the assembled pins (trackdyn's
right sprocket starts with its pins on the tooth tips, which its settling
resolves); the shoe-guide sphere against the sprocket's lateral guide is left
out; the bending spring of the loop-closing pin is left out (no hinge there);
the PID speed and heading driver becomes a velocity servo on each sprocket
limited to the torque map at the cruise speed; MuJoCo combines two geoms'
friction by the larger coefficient.

MuJoCo's constraints are soft: equality, limit and contact time constants are
``2 h`` for the chain (the smallest MuJoCo accepts at step ``h``: its
``refsafe`` floor) and 2e-3 s for the M113 at any step (the floor at MuJoCo's
usual 1 ms step; see :func:`m113_settings`), damping ratio 1, with the
impedance ``solimp`` reported. The accuracy of
each peer is measured next to its timing: the largest separation of the pins
it closes by equalities (``pin_gap_max_m``; the loop-closing pin's for the
M113), the deepest contact penetration, and the error of the chain's tip
(against the tree at a 10x smaller step: exact joints, the converged chain)
or of the M113's ten road-wheel heights (against the same model, the same
time constants, at a 10x smaller step from the same settled state).

Timing: a Python loop of ``mujoco.mj_step`` with a clock read per step, the
state recorded every ``output_step`` (as trackdyn records its series);
``ms_per_step`` and ``wall_per_sim`` are the mean over the whole measured run,
recording included, ``step_ms_p10`` and ``step_ms_median`` the distribution of
single steps. MuJoCo is imported only here and only when a peer runs: without
it :class:`PeerUnavailable` names the extra to install.
"""

from __future__ import annotations

import datetime
import math
import os
import time

import numpy as np

from ..assembly.builder import build_vehicle
from ..assembly.placement import vehicle_placement
from ..math.quaternion import quat_conj, quat_mul, quat_to_matrix
from . import problems as P
from .benchmarks import machine_info, run_benchmark
from .benchmarks_vehicle import SPEED, cruise_scenario

__all__ = ["PEERS", "PEERS_EXTRA", "PeerUnavailable", "import_mujoco", "side_by_side", "text_lines",
           "settings", "m113_settings", "chain64_mjcf", "m113_mjcf", "run_mujoco", "CHRONO_M113"]

PEERS_EXTRA = 'pip install -e ".[peers]"'
PIN_HALF_SPAN = 0.1  # m: the two connect points of a hinge-like pair of equalities lie this far either side
M113_TIMECONST = 2e-3  # s: the M113 peer's constraint time constant at every step (m113_settings)

# Chrono's figure is not measured side by side (Chrono is not pip-installable): cited with its provenance.
CHRONO_M113 = {
    "engine": "Project Chrono (SMC contact, explicit contact forces; the thesis's M113)",
    "ms_per_step": 6.4, "step_size_s": 1e-4, "wall_per_sim": 64.0,
    "source": "issue #6's peer figure, measured on the AMD EPYC (Zen 3) 2-vCPU machine of stops 1-20, "
              "on or before 2026-11-26",
    "measured_side_by_side": False,
}


class PeerUnavailable(RuntimeError):
    """A peer engine is not importable; the message names the extra that installs it."""


def import_mujoco():
    """The ``mujoco`` module, or :class:`PeerUnavailable` naming the ``peers`` extra."""
    try:
        import mujoco
    except ImportError as err:
        raise PeerUnavailable(f"--peers runs MuJoCo, which is not importable ({err}); install the peers extra: "
                              f"{PEERS_EXTRA}") from None
    return mujoco


# ---------------------------------------------------------------------------------------------- MJCF text
def _v(x) -> str:
    return " ".join(f"{float(a):.12g}" for a in np.ravel(x))


def settings(h: float, integrator: str = "implicitfast", timeconst: float | None = None, dampratio: float = 1.0,
             solimp=(0.99, 0.999, 0.001, 0.5, 2.0), cone: str = "pyramidal", solver: str = "Newton",
             iterations: int = 100, tolerance: float = 1e-8) -> dict:
    """MuJoCo's numerical settings at step ``h``, reported with every peer result.

    The constraint time constant ``timeconst`` defaults to ``2 h``, the stiffest MuJoCo accepts at step
    ``h`` (its ``refsafe`` floor: shorter ones are clamped to it); the impedance ``solimp`` (0.99, 0.999) is
    stiffer than MuJoCo's default (0.9, 0.95) and stable for both peers at 1e-4 and 1e-3 s (0.999, 0.9999
    is too, with the same gaps and penetration at twice the Newton iterations). ``implicitfast`` integrates
    the joint damping and the velocity servos implicitly.
    """
    tc = 2.0 * h if timeconst is None else max(float(timeconst), 2.0 * h)
    return {"timestep": float(h), "integrator": integrator, "solver": solver, "cone": cone,
            "iterations": int(iterations), "tolerance": float(tolerance),
            "solref": [tc, float(dampratio)], "solimp": [float(s) for s in solimp]}


def m113_settings(h: float, **kw) -> dict:
    """:func:`settings` of the M113 peer: time constant ``M113_TIMECONST`` (or 2 h, if longer) at any step.

    2e-3 s is MuJoCo's floor at its usual 1 ms step, where the M113 needs it; at 1e-4 s the floor (2e-4 s)
    is stable too, but its nearly rigid contacts make the road wheels bounce on the shoes (35-109 mm in
    0.25 s, and 108 mm from the same model at h/10: not converged), where with 2e-3 s they move 1-5 mm and
    agree with h/10 to 0.2 mm. One time constant keeps one model at every step.
    """
    return settings(h, **{"timeconst": M113_TIMECONST, **kw})


def _option(s: dict, gravity) -> str:
    return (f'<option timestep="{s["timestep"]:.12g}" integrator="{s["integrator"]}" solver="{s["solver"]}" '
            f'cone="{s["cone"]}" iterations="{s["iterations"]}" tolerance="{s["tolerance"]:.3g}" '
            f'gravity="{_v(gravity)}"/>')


def _inertial(mass: float, J: np.ndarray) -> str:
    if np.allclose(J, np.diag(np.diag(J)), rtol=0, atol=1e-12 * np.abs(J).max()):
        return f'<inertial pos="0 0 0" mass="{mass:.12g}" diaginertia="{_v(np.diag(J))}"/>'
    return (f'<inertial pos="0 0 0" mass="{mass:.12g}" '
            f'fullinertia="{_v([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])}"/>')


def _relative(q_parent, q_child):
    """Pose of the child body frame in the parent's (both (7,) world poses; None: the world)."""
    if q_parent is None:
        return q_child[:3], q_child[3:]
    Rp = quat_to_matrix(q_parent[3:])
    return Rp.T @ (q_child[:3] - q_parent[:3]), quat_mul(quat_conj(q_parent[3:]), q_child[3:])


def _local(q_body, point=None, axis=None):
    R = quat_to_matrix(q_body[3:])
    if point is not None:
        return R.T @ (np.asarray(point, float) - q_body[:3])
    return R.T @ np.asarray(axis, float)


def chain64_mjcf(variant: str, h: float, s: dict | None = None) -> str:
    """MJCF of trackdyn's chain64 (``problems.chain(**CHAIN64)``): ``"maximal"`` or ``"tree"`` coordinates."""
    if variant not in ("maximal", "tree"):
        raise ValueError(f"chain64_mjcf: variant must be 'maximal' or 'tree', got {variant!r}")
    s = s or settings(h)
    m = P.chain(**P.CHAIN64)
    mass, J, q0, _ = m.body_arrays()
    names = m.body_names
    out = [f'<mujoco model="chain64-{variant}">', '<compiler angle="radian" autolimits="true"/>',
           _option(s, m.gravity), "<worldbody>"]
    eqs = []
    if variant == "tree":
        parent = None
        for i, jt in enumerate(m.joints):  # joint i hangs link i from link i-1 (the ground for i = 0)
            pos, quat = _relative(parent, q0[i])
            out.append(f'<body name="{names[i]}" pos="{_v(pos)}" quat="{_v(quat)}">{_inertial(mass[i], J[i])}'
                       f'<joint name="{jt.name}" type="hinge" pos="{_v(_local(q0[i], point=jt.point))}" '
                       f'axis="{_v(_local(q0[i], axis=jt.axis))}"/>')
            parent = q0[i]
        out += ["</body>"] * len(names)
    else:
        for i, n in enumerate(names):
            out.append(f'<body name="{n}" pos="{_v(q0[i, :3])}" quat="{_v(q0[i, 3:])}"><freejoint name="{n}.free"/>'
                       f"{_inertial(mass[i], J[i])}</body>")
        for jt in m.joints:
            a, b = m._index(jt.body_a), m._index(jt.body_b)
            for side in (-1.0, 1.0):
                anchor = _local(q0[b], point=jt.point + side * PIN_HALF_SPAN * jt.axis)
                other = "" if a < 0 else f' body2="{names[a]}"'
                eqs.append(f'<connect name="{jt.name}.{"ab"[side > 0]}" body1="{names[b]}"{other} '
                           f'anchor="{_v(anchor)}" solref="{_v(s["solref"])}" solimp="{_v(s["solimp"])}"/>')
    out.append("</worldbody>")
    if eqs:
        out += ["<equality>", *eqs, "</equality>"]
    out.append("</mujoco>")
    return "\n".join(out)


# contact families as MuJoCo collision bits: a pair collides if either's contype meets the other's conaffinity
_GROUND, _PAD, _WHEEL, _PLATE, _SPROCKET, _PIN, _HULL = 1, 2, 4, 8, 16, 32, 64
_AFFINITY = {_GROUND: _PAD | _WHEEL | _HULL, _PAD: _GROUND, _WHEEL: _GROUND | _PLATE, _PLATE: _WHEEL,
             _SPROCKET: _PIN, _PIN: _SPROCKET, _HULL: _GROUND}


def _geom(kind: str, family: int, friction: float, **attrs) -> str:
    extra = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return (f'<geom type="{kind}" contype="{family}" conaffinity="{_AFFINITY[family]}" '
            f'friction="{friction:.6g} 0.005 0.0001" {extra}/>')


def _cylinder_y(radius: float, width: float, y: float, family: int, friction: float) -> str:
    return _geom("cylinder", family, friction, size=f"{radius:.12g}",
                 fromto=_v([0.0, y - 0.5 * width, 0.0, 0.0, y + 0.5 * width, 0.0]))


def _sprocket_facets(sp, phase: float = 0.0, facets: int = 5, thickness: float = 0.02,
                     plate: float = 0.02) -> list[str]:
    """The sprocket's tooth gaps as boxes tangent to each gap's arc, in both gear planes (sprocket frame).

    Gap k is centred on the circle of ``arc_centre_radius`` at angle ``phase`` + 2πk/n from -z towards +x
    (trackdyn's ``shapes.Sprocket`` convention); its arc of ``arc_radius`` runs between the two tooth tips
    on the addendum circle; ``facets`` boxes of ``thickness`` (radially) are tangent to it at equal angles.
    """
    RO, RC, R, n = sp.addendum_radius, sp.arc_centre_radius, sp.arc_radius, sp.n_teeth
    alpha = math.acos((RC * RC + RO * RO - R * R) / (2 * RC * RO))  # tip's angle from the gap centre's ray
    tip = RO * np.array([math.cos(alpha), math.sin(alpha)]) - np.array([RC, 0.0])  # gap-centre frame, x radial
    beta = math.atan2(tip[1], -tip[0])  # the arc's half-angle about the inward direction
    step = 2 * beta / facets
    half_len = R * math.tan(0.5 * step)
    out = []
    for k in range(n):
        a = phase + 2 * math.pi * k / n
        u = np.array([math.sin(a), -math.cos(a)])  # radial direction of the gap in (x, z)
        w = np.array([-u[1], u[0]])
        c = RC * u
        for j in range(facets):
            th = -beta + (j + 0.5) * step  # from the inward direction -u, towards w
            d = -math.cos(th) * u + math.sin(th) * w  # outward normal of the gap circle at the tangent point
            centre = c + (R + 0.5 * thickness) * d
            ang = math.atan2(d[1], d[0])  # box x along d (in the x-z plane): rotation about -y by ang
            quat = [math.cos(-0.5 * ang), 0.0, math.sin(-0.5 * ang), 0.0]
            for y in (-0.5 * sp.gear_separation, 0.5 * sp.gear_separation):
                out.append(_geom("box", _SPROCKET, 0.3, size=_v([0.5 * thickness, 0.5 * plate + 0.01, half_len]),
                                 pos=_v([centre[0], y, centre[1]]), quat=_v(quat)))
    return out


def _seated_phase(m, q_sprocket, side, sp) -> float:
    """Gap phase (rad, from -z towards +x) that seats the assembled pins wrapped on the sprocket in its gaps.

    trackdyn's sprocket shape has phase 0 on both sides; the M113's right pins are assembled half a pitch
    off it (on the tooth tips), which trackdyn's settling resolves and MuJoCo's stiffer settings do not.
    """
    pitch = 2 * math.pi / sp.n_teeth
    offsets = []
    for shoe in side.shoes:
        pin = next(j for j in m.joints if j.name == f"{shoe}.pin")
        d = _local(q_sprocket, point=pin.point)
        if math.hypot(d[0], d[2]) < sp.assembly_radius + 1e-3:
            th = math.atan2(d[0], -d[2])
            offsets.append(th - pitch * round(th / pitch))
    if not offsets:
        return 0.0
    return float(np.angle(np.mean(np.exp(1j * np.array(offsets) * sp.n_teeth))) / sp.n_teeth)


def _torsion_spring(table) -> tuple[float, float, float, float]:
    """(stiffness, springref, lower stop, upper stop) of an RSDA torsion table [[φ, T_s], ...] (4 points)."""
    (p0, _), (p1, t1), (p2, t2), _ = table
    k = (t2 - t1) / (p2 - p1)  # the RSDA's torque on the arm is -T_s(φ) = -k (φ - φ_ref)
    return k, p1 - t1 / k, p1, p2


def m113_mjcf(h: float, s: dict | None = None, spec: str = "m113", speed: float = SPEED,
              kv: float = 5e4, tracks: str = "tree") -> tuple[str, dict]:
    """MJCF of the link-track vehicle ``spec`` at trackdyn's m113-flat start (placement, speed) and its facts.

    Returns ``(xml, info)``: ``info`` holds the initial joint velocities by joint name, the road-wheel body
    names, the loop-closing equalities, the sprocket servo targets and the list of approximations.
    """
    s = s or m113_settings(h)
    sc = cruise_scenario(step=h)
    spec_, terrain, geo, z0 = vehicle_placement(sc)
    vm = build_vehicle(spec_, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=speed)
    m = vm.model
    mass, J, q0, v0 = m.body_arrays()
    idx = {n: i for i, n in enumerate(m.body_names)}
    joints = {j.name: j for j in m.joints}
    forces = {f.name: f for f in m.forces}
    sh, sus, sp = spec_.shoes, spec_.suspension, spec_.sprocket
    mat = spec_.materials
    tc = _v(s["solref"])
    si = _v(s["solimp"])
    qvel = {}

    def omega_w(i):
        return quat_to_matrix(q0[i, 3:]) @ v0[i, 3:]

    def open_body(name, parent):
        i = idx[name]
        pos, quat = _relative(None if parent is None else q0[idx[parent]], q0[i])
        return f'<body name="{name}" pos="{_v(pos)}" quat="{_v(quat)}">{_inertial(mass[i], J[i])}'

    def hinge(name, parent, jname, **attrs):
        i, jt = idx[name], joints[jname]
        qvel[jname] = float((omega_w(i) - (omega_w(idx[parent]) if parent else 0.0)) @ jt.axis)
        extra = " ".join(f'{k}="{v}"' for k, v in attrs.items())
        return (f'<joint name="{jname}" type="hinge" pos="{_v(_local(q0[i], point=jt.point))}" '
                f'axis="{_v(_local(q0[i], axis=jt.axis))}" {extra}/>')

    approximations = [
        "torsion bars: linear hinge stiffness between the stops, joint limits (soft, the same solref) at the stops",
        "dampers: linear hinge damping, mean of the table's compression and rebound slopes x lever^2",
        "sprocket tooth gaps: boxes tangent to each gap arc in both gear planes, phased to seat the assembled "
        "pins (trackdyn's right sprocket starts with its pins on the tooth tips)",
        "no shoe guide sphere against the sprocket's lateral guide",
        "no bending spring at the loop-closing pin of each track",
        "driver: a velocity servo per sprocket (kv) limited to the torque map at the cruise speed; no heading control",
        "MuJoCo combines friction by the larger of two geoms' coefficients (trackdyn: the smaller)",
    ]
    body = []
    # ---- hull with its running gear
    body.append(open_body("chassis", None) + '<freejoint name="chassis.free"/>')
    qvel["chassis.free"] = np.concatenate([v0[idx["chassis"], :3], v0[idx["chassis"], 3:]])
    com = np.asarray(spec_.chassis.com)
    assets = []
    for k, part in enumerate(spec_.chassis.hull):
        if hasattr(part, "vertices"):  # a convex polyhedron: a MuJoCo mesh (convex hull of its vertices)
            assets.append(f'<mesh name="hull{k}" vertex="{_v((np.asarray(part.vertices) - com).ravel())}"/>')
            body.append(_geom("mesh", _HULL, mat[spec_.chassis.material].friction, mesh=f"hull{k}"))
            continue
        body.append(_geom("box", _HULL, mat[spec_.chassis.material].friction, size=_v(0.5 * np.asarray(part.size)),
                          pos=_v(np.asarray(part.center) - com)))
    ten = spec_.idler.tensioner
    torque_speeds, torques = np.array(spec_.powertrain.torque_map).T
    map_scale = sp.assembly_radius if spec_.powertrain.map_speed == "track" else 1.0
    torque_limit = float(np.interp(speed / sp.assembly_radius * map_scale, torque_speeds, torques))
    half = 0.5 * (sus.wheel_width - sus.wheel_gap)
    off = 0.25 * (sus.wheel_width + sus.wheel_gap)
    ihalf = 0.5 * (spec_.idler.width - sus.wheel_gap)
    ioff = 0.25 * (spec_.idler.width + sus.wheel_gap)
    wheel_mu = mat[sus.wheel_material].friction
    for side, info in vm.sides.items():
        body.append(open_body(info.sprocket, "chassis") + hinge(info.sprocket, "chassis", f"{side}.sprocket.axle"))
        body += _sprocket_facets(sp, _seated_phase(m, q0[idx[info.sprocket]], info, sp))
        body.append("</body>")
        slide = joints[f"{side}.carrier.slide"]
        tsda = forces[info.tensioner]
        length = float(np.linalg.norm(tsda.point_b - tsda.point_a))
        push = tsda.actuation - tsda.stiffness * (length - tsda.free_length)  # the spring's push at assembly
        ic = idx[info.carrier]
        qvel[slide.name] = float((v0[ic, :3] - v0[idx["chassis"], :3]) @ slide.axis)
        body.append(open_body(info.carrier, "chassis")
                    + f'<joint name="{slide.name}" type="slide" pos="0 0 0" '
                      f'axis="{_v(_local(q0[ic], axis=slide.axis))}" '
                      f'stiffness="{ten.stiffness:.12g}" springref="{push / ten.stiffness:.12g}" '
                      f'damping="{ten.damping:.12g}"/>')
        body.append(open_body(info.idler, info.carrier) + hinge(info.idler, info.carrier, f"{side}.idler.axle"))
        body += [_cylinder_y(spec_.idler.radius, ihalf, y, _WHEEL, wheel_mu) for y in (ioff, -ioff)]
        body += ["</body>", "</body>"]
        for k, (arm, wheel) in enumerate(zip(info.arms, info.wheels)):
            stiff, ref, lo, hi = _torsion_spring(forces[f"{arm}.torsion"].spring_table)
            attrs = {"stiffness": f"{stiff:.12g}", "springref": f"{ref:.12g}", "range": f"{lo:.12g} {hi:.12g}",
                     "solreflimit": tc, "solimplimit": si}
            if f"{side}.damper[{k}]" in forces:
                table = np.array(sus.damper.table)
                slopes = [t[1] / t[0] for t in table if abs(t[0]) > 0 and abs(t[0]) <= 0.3]
                lever = abs(float(joints[f"{wheel}.axle"].point[0] - joints[f"{arm}.pivot"].point[0]))
                attrs["damping"] = f"{float(np.mean(np.abs(slopes))) * lever**2:.12g}"
            body.append(open_body(arm, "chassis") + hinge(arm, "chassis", f"{arm}.pivot", **attrs))
            body.append(open_body(wheel, arm) + hinge(wheel, arm, f"{wheel}.axle"))
            body += [_cylinder_y(sus.wheel_radius, half, y, _WHEEL, wheel_mu) for y in (off, -off)]
            body += ["</body>", "</body>"]
    body.append("</body>")
    # ---- the tracks: shoe[0] free, every other shoe hinged to the one behind it, the loop closed by a connect
    pad_mu = mat[sh.material].friction
    steel_mu = mat[sh.body_material].friction
    shoe_geoms = [
        _geom("box", _PAD, pad_mu, size=_v([0.5 * sh.pad_length, 0.5 * sh.width, 0.5 * (sh.bottom + sh.top)]),
              pos=_v([0.0, 0.0, 0.5 * (sh.top - sh.bottom)])),
        _geom("box", _PLATE, steel_mu, size=_v([0.49 * sh.pitch, 0.5 * sh.width, 0.5 * sh.top]),
              pos=_v([0.0, 0.0, 0.5 * sh.top])),
        _geom("box", _PLATE, steel_mu, size=_v([0.5 * sh.guide_length, 0.5 * sh.guide_width, 0.5 * sh.guide_height]),
              pos=_v([0.0, 0.0, sh.top + 0.5 * sh.guide_height])),
        _geom("capsule", _PIN, steel_mu, size=f"{sh.pin_radius:.12g}",
              fromto=_v([0.5 * sh.pitch, -0.5 * sp.gear_separation - 0.02, 0.0,
                         0.5 * sh.pitch, 0.5 * sp.gear_separation + 0.02, 0.0])),
    ]
    eqs, closing = [], []
    bend = {"stiffness": f"{sh.bending_stiffness:.12g}", "damping": f"{sh.bending_damping:.12g}"}
    for side, info in vm.sides.items():
        shoes = info.shoes
        n = len(shoes)
        if tracks == "maximal":  # every shoe free, every pin two connects on its axis
            for name in shoes:
                body.append(open_body(name, None) + f'<freejoint name="{name}.free"/>' + "".join(shoe_geoms)
                            + "</body>")
                qvel[f"{name}.free"] = np.concatenate([v0[idx[name], :3], v0[idx[name], 3:]])
            for k, name in enumerate(shoes):
                pin = joints[f"{name}.pin"]
                for sgn in (-1.0, 1.0):
                    anchor = _local(q0[idx[name]], point=pin.point + sgn * PIN_HALF_SPAN * pin.axis)
                    eqs.append(f'<connect name="{pin.name}.{"ab"[sgn > 0]}" body1="{name}" '
                               f'body2="{shoes[(k + 1) % n]}" anchor="{_v(anchor)}" solref="{tc}" solimp="{si}"/>')
                    closing.append(f"{pin.name}.{'ab'[sgn > 0]}")
            continue
        # the root is the lowest shoe of the bottom strand; two branches of hinges run forward and backward from
        # it and meet on the top strand, where one connect closes the loop (half the depth of a single chain:
        # a contact's Jacobian row reaches back to the root through every hinge on the way)
        z = q0[[idx[s] for s in shoes], 2]
        low = np.flatnonzero(z <= z.min() + 1e-3)
        r = int(low[len(low) // 2])
        root = shoes[r]
        body.append(open_body(root, None) + f'<freejoint name="{root}.free"/>' + "".join(shoe_geoms))
        qvel[f"{root}.free"] = np.concatenate([v0[idx[root], :3], v0[idx[root], 3:]])
        ahead = [(r + j) % n for j in range(1, n // 2 + 1)]
        behind = [(r - j) % n for j in range(1, n - n // 2)]
        for k_prev, k in zip([r] + ahead[:-1], ahead):  # shoe k hangs from the shoe behind it (pin k_prev)
            body.append(open_body(shoes[k], shoes[k_prev])
                        + hinge(shoes[k], shoes[k_prev], f"{shoes[k_prev]}.pin", **bend) + "".join(shoe_geoms))
        body += ["</body>"] * len(ahead)
        for k_next, k in zip([r] + behind[:-1], behind):  # shoe k hangs from the shoe ahead of it (pin k)
            body.append(open_body(shoes[k], shoes[k_next])
                        + hinge(shoes[k], shoes[k_next], f"{shoes[k]}.pin", **bend) + "".join(shoe_geoms))
        body += ["</body>"] * (len(behind) + 1)
        last = shoes[ahead[-1]]
        pin = joints[f"{last}.pin"]
        closing.append(pin.name)
        eqs.append(f'<connect name="{pin.name}" body1="{last}" body2="{shoes[behind[-1]]}" '
                   f'anchor="{_v(_local(q0[idx[last]], point=pin.point))}" solref="{tc}" solimp="{si}"/>')
    ground_mu = terrain.material.friction  # the benchmark's flat concrete
    xml = "\n".join([
        f'<mujoco model="{spec_.name}-flat">', '<compiler angle="radian" autolimits="true"/>',
        _option(s, m.gravity),
        f'<default><geom solref="{tc}" solimp="{si}" condim="3" margin="0"/></default>',
        *(["<asset>", *assets, "</asset>"] if assets else []),
        "<worldbody>",
        f'<geom name="ground" type="plane" size="0 0 1" pos="0 0 {getattr(terrain, "z", 0.0):.12g}" '
        f'contype="{_GROUND}" conaffinity="{_AFFINITY[_GROUND]}" friction="{ground_mu:.6g} 0.005 0.0001"/>',
        *body, "</worldbody>",
        "<equality>", *eqs, "</equality>",
        "<actuator>",
        *(f'<velocity name="{side}.drive" joint="{side}.sprocket.axle" kv="{kv:.12g}" '
          f'forcerange="{-torque_limit:.12g} {torque_limit:.12g}"/>' for side in vm.sides),
        "</actuator>", "</mujoco>"])
    info = {"qvel": qvel, "wheels": [w for si_ in vm.sides.values() for w in si_.wheels], "closing": closing,
            "ctrl": {f"{side}.drive": speed / sp.assembly_radius for side in vm.sides},
            "approximations": approximations, "torque_limit_nm": torque_limit, "kv": kv,
            "shoes_per_track": {side: len(info_.shoes) for side, info_ in vm.sides.items()}}
    return xml, info



# ---------------------------------------------------------------------------------------------- running
def _load_model(mujoco, xml: str):
    return mujoco.MjModel.from_xml_string(xml)


def _set_qvel(mujoco, model, data, qvel: dict) -> None:
    for name, value in qvel.items():
        j = model.joint(name)
        width = {0: 6, 1: 3, 2: 1, 3: 1}[int(j.type[0])]
        data.qvel[j.dofadr[0]:j.dofadr[0] + width] = value


def run_mujoco(model, data, t_end: float, output_step: float = 0.01, bodies=None) -> dict:
    """Step ``data`` for ``t_end`` s, recording every ``output_step``; timing and the recorded samples.

    Recorded per sample (outside nothing: the recording is part of the timed loop, as trackdyn's): time,
    qpos, qvel, the world positions and orientations of ``bodies`` (all when None) and the deepest contact
    penetration. ``ms_per_step`` / ``wall_per_sim``: mean over the whole run; ``step_ms_p10`` /
    ``step_ms_median``: single steps.
    """
    mujoco = import_mujoco()
    h = float(model.opt.timestep)
    n = int(round(t_end / h))
    every = max(1, int(round(output_step / h)))
    sel = np.arange(model.nbody) if bodies is None else np.asarray(bodies, dtype=int)
    n_out = n // every
    rec = {"t": np.empty(n_out), "qpos": np.empty((n_out, model.nq)), "qvel": np.empty((n_out, model.nv)),
           "xpos": np.empty((n_out, len(sel), 3)), "xquat": np.empty((n_out, len(sel), 4)),
           "penetration": np.empty(n_out), "ncon": np.empty(n_out, dtype=int)}
    stamps = np.empty(n)
    clk = time.perf_counter
    step = mujoco.mj_step
    cpu0 = time.process_time()
    start = clk()
    j = 0
    for i in range(n):
        step(model, data)
        if (i + 1) % every == 0 and j < n_out:
            rec["t"][j] = data.time
            rec["qpos"][j] = data.qpos
            rec["qvel"][j] = data.qvel
            rec["xpos"][j] = data.xpos[sel]
            rec["xquat"][j] = data.xquat[sel]
            nc = data.ncon
            rec["ncon"][j] = nc
            rec["penetration"][j] = max(0.0, -float(data.contact.dist[:nc].min())) if nc else 0.0
            j += 1
        stamps[i] = clk()
    wall = clk() - start
    cpu = time.process_time() - cpu0
    dt = 1e3 * np.diff(np.concatenate([[start], stamps]))
    finite = bool(np.all(np.isfinite(data.qpos)))
    return {"step_size_s": h, "steps": n, "sim_time_s": n * h, "wall_time_s": wall,
            "ms_per_step": 1e3 * wall / n, "wall_per_sim": wall / (n * h), "cpu_ms_per_step": 1e3 * cpu / n,
            "step_ms_p10": float(np.percentile(dt, 10)), "step_ms_median": float(np.median(dt)),
            "status": "complete" if finite else "diverged", "warnings": _warnings(model, data), "_rec": rec}


def _warnings(model, data) -> dict:
    import mujoco

    out = {}
    for w in mujoco.mjtWarning.__members__.values():
        if int(w) < len(data.warning) and data.warning[int(w)].number:
            out[w.name] = int(data.warning[int(w)].number)
    return out


def _connect_gaps(model, rec, names) -> np.ndarray:
    """(n_samples,) largest separation (m) of the named connect equalities' two points in the recorded samples."""
    worst = np.zeros(len(rec["t"]))
    for name in names:
        e = model.equality(name)
        b1, b2 = int(e.obj1id[0]), int(e.obj2id[0])
        a1, a2 = model.eq_data[e.id, 0:3], model.eq_data[e.id, 3:6]
        p = []
        for b, a in ((b1, a1), (b2, a2)):
            if b == 0:
                p.append(np.broadcast_to(a, (len(rec["t"]), 3)))
                continue
            R = np.array([quat_to_matrix(q) for q in rec["xquat"][:, b]])
            p.append(rec["xpos"][:, b] + R @ a)
        worst = np.maximum(worst, np.linalg.norm(p[0] - p[1], axis=1))
    return worst


def _state(mujoco, model, data):
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    buf = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, buf, spec)
    return buf


def _set_state(mujoco, model, data, buf) -> None:
    mujoco.mj_setState(model, data, buf, mujoco.mjtState.mjSTATE_INTEGRATION)
    mujoco.mj_forward(model, data)


def _refine(model, factor: int) -> float:
    """Make ``model`` its own reference: the same model (constraint time constants unchanged) at step / factor."""
    model.opt.timestep = float(model.opt.timestep) / factor
    return float(model.opt.timestep)


def _tip(rec, body: int, lever) -> np.ndarray:
    R = np.array([quat_to_matrix(q) for q in rec["xquat"][:, body]])
    return rec["xpos"][:, body] + R @ np.asarray(lever, float)


# ---------------------------------------------------------------------------------------------- chain64
def chain64_peer(step: float = 1e-4, t_end: float = 2.0, variants=("maximal", "tree"), reference: bool = True,
                 trackdyn_tip=None, solimp=None) -> dict:
    """MuJoCo's chain64 in each of ``variants`` at ``step``: timing and accuracy.

    The reference for the tip error is the tree at ``step / 10`` (exact joints, no equality to soften);
    ``trackdyn_tip`` ((n, 3) tip positions at the same 10-ms samples) gets its error against it too.
    """
    mujoco = import_mujoco()
    s = settings(step, integrator="Euler", **({} if solimp is None else {"solimp": solimp}))
    lever = [0.5 * P.CHAIN64["pitch"], 0.0, 0.0]
    ref_tip = None
    out = {}
    if reference:
        rm = _load_model(mujoco, chain64_mjcf("tree", step / 10, settings(step / 10, integrator="Euler")))
        rd = mujoco.MjData(rm)
        r = run_mujoco(rm, rd, t_end)
        ref_tip, ref_t = _tip(r["_rec"], rm.nbody - 1, lever), r["_rec"]["t"]
    for variant in variants:
        model = _load_model(mujoco, chain64_mjcf(variant, step, s))
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        r = run_mujoco(model, data, t_end)
        rec = r.pop("_rec")
        eq_names = [model.equality(i).name for i in range(model.neq)]
        acc = {"pin_gap_max_m": float(_connect_gaps(model, rec, eq_names).max()) if eq_names else 0.0,
               "penetration_max_m": None}
        if ref_tip is not None:
            acc.update(_tip_errors(_tip(rec, model.nbody - 1, lever), ref_tip, rec["t"], step))
        r.update({"engine": "mujoco", "version": mujoco.__version__, "model": (
            "64 free bodies, each pin two connect equalities 0.2 m apart on its axis" if variant == "maximal"
            else "64 hinges (open chain: no loop to close)"), "nv": int(model.nv), "neq": int(model.neq),
            "settings": s, "accuracy": acc})
        out[f"mujoco-{variant}"] = r
    if trackdyn_tip is not None and ref_tip is not None:
        out["_trackdyn_accuracy"] = _tip_errors(np.asarray(trackdyn_tip), ref_tip, ref_t, step)
    return out


def _tip_errors(tip: np.ndarray, ref_tip: np.ndarray, t: np.ndarray, step: float) -> dict:
    """Largest tip distance (m) from the reference over the run and over its first second (None if shorter)."""
    n = min(len(tip), len(ref_tip))
    err = np.linalg.norm(tip[:n] - ref_tip[:n], axis=1)
    first = t[:n] <= t[0] - 0.01 + 1.0 + 1e-9
    return {"tip_error_max_m": float(err.max()),
            "tip_error_1s_m": float(err[first].max()) if t[n - 1] >= t[0] - 0.01 + 1.0 - 1e-9 else None,
            "reference": f"the MuJoCo tree at h = {step / 10:g} s (exact joints)"}


# ---------------------------------------------------------------------------------------------- m113
def m113_peer(step: float = 1e-4, t_end: float = 2.0, settle: float = 0.5, reference: bool = True,
              reference_t_end: float = 0.25, tracks: str = "tree", s: dict | None = None) -> dict:
    """MuJoCo's M113 (:func:`m113_mjcf`) cruising at 4.2 m/s: ``settle`` s untimed, then ``t_end`` s timed.

    Accuracy: the loop-closing pins' largest separation and the deepest penetration over the timed run; with
    ``reference``, the ten road-wheel heights' largest error over the first ``reference_t_end`` s against the
    same model (the same time constants) run from the same settled state at ``step / 10``.
    """
    mujoco = import_mujoco()
    s = s or m113_settings(step)
    xml, info = m113_mjcf(step, s, tracks=tracks)
    model = _load_model(mujoco, xml)
    data = mujoco.MjData(model)
    _set_qvel(mujoco, model, data, info["qvel"])
    for act, target in info["ctrl"].items():
        data.actuator(act).ctrl = target
    mujoco.mj_forward(model, data)
    settled = run_mujoco(model, data, settle, bodies=[])
    state0 = _state(mujoco, model, data)
    wheels = [model.body(w).id for w in info["wheels"]]
    r = run_mujoco(model, data, t_end)
    rec = r.pop("_rec")
    acc = {"pin_gap_max_m": float(_connect_gaps(model, rec, info["closing"]).max()),
           "pin_gap_is": "the loop-closing connect of each track (the tree's hinges are exact)",
           "penetration_max_m": float(rec["penetration"].max()),
           "penetration_is": "the deepest overlap of any contact: the softness of MuJoCo's contact constraints",
           "contacts_mean": float(rec["ncon"].mean())}
    if reference:
        t_ref = min(reference_t_end, t_end)
        _set_state(mujoco, model, data, state0)
        h_ref = _refine(model, 10)
        ref = run_mujoco(model, data, t_ref, bodies=wheels)["_rec"]
        n = len(ref["t"])
        err = np.abs(rec["xpos"][:n, wheels, 2] - ref["xpos"][:, :, 2])
        acc.update({"wheel_z_error_max_m": float(err.max()), "reference_window_s": t_ref,
                    "reference": f"the same model (same solref) at h = {h_ref:g} s from the same settled state"})
    r.update({"engine": "mujoco", "version": mujoco.__version__, "nv": int(model.nv), "nbody": int(model.nbody) - 1,
              "model": f"{len(info['wheels'])} road wheels, {sum(info['shoes_per_track'].values())} shoes; tracks as "
                       + ("hinged chains, each loop closed by one connect" if tracks == "tree"
                          else "free shoes, each pin two connects"),
              "settle_s": settle, "settle_status": settled["status"], "settings": s, "kv": info["kv"],
              "torque_limit_nm": info["torque_limit_nm"], "approximations": info["approximations"],
              "chassis_speed_end_mps": float(data.qvel[0]) if not reference else None, "accuracy": acc})
    return {f"mujoco-{tracks}" if tracks != "tree" else "mujoco": r}


# ---------------------------------------------------------------------------------------------- side by side
def _R(quats: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4), scalar first."""
    e0, e1, e2, e3 = quats.T
    return np.stack([
        np.stack([1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)], -1),
        np.stack([2 * (e1 * e2 + e0 * e3), 1 - 2 * (e1 * e1 + e3 * e3), 2 * (e2 * e3 - e0 * e1)], -1),
        np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 1 - 2 * (e1 * e1 + e2 * e2)], -1)], -2)


def _point_series(res, body: str, local) -> np.ndarray:
    """World positions (n, 3) of a point fixed on ``body`` at the recorded samples of trackdyn's ``res``."""
    pos = np.stack([res[f"{body}.pos.{c}"] for c in "xyz"], -1)
    R = _R(np.stack([res[f"{body}.quat.e{k}"] for k in range(4)], -1))
    return pos + R @ np.asarray(local, float)


def _trackdyn_pin_gaps(results, model, joints) -> float:
    """Largest separation (m) of the revolutes ``joints``' two pin points over trackdyn's recorded samples."""
    worst = 0.0
    for res in results:
        for jt in joints:
            pb = _point_series(res, jt.body_b.name, jt._point_b)
            if jt.body_a.is_ground:
                pa = jt.point
            else:
                pa = _point_series(res, jt.body_a.name, model._local_point(jt.body_a, jt.point))
            worst = max(worst, float(np.linalg.norm(pb - pa, axis=-1).max()))
    return worst


_HEADLINE = ("step_size_s", "steps", "sim_time_s", "wall_time_s", "ms_per_step", "wall_per_sim", "step_ms_p10",
             "step_ms_median", "cpu_ms_per_step", "status")


def _ratios(trackdyn: dict, peers: dict) -> tuple[dict, dict]:
    """Peer over trackdyn per simulated second (mean; p10); None where either run did not complete."""
    def ok(r):
        return r["status"] == "complete"

    ratio = {k: p["wall_per_sim"] / trackdyn["wall_per_sim"] if ok(p) and ok(trackdyn) else None
             for k, p in peers.items()}
    p10 = {k: (p["step_ms_p10"] / p["step_size_s"]) / (trackdyn["step_ms_p10"] / trackdyn["step_size_s"])
           if ok(p) and ok(trackdyn) else None for k, p in peers.items()}
    return ratio, p10


def _envelope(name: str, trackdyn: dict, peers: dict, load0, extra: dict | None = None) -> dict:
    ratio, p10 = _ratios(trackdyn, peers)
    out = {"benchmark": name, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine_info(), "load_before": load0, "load_after": _load(),
           "trackdyn": trackdyn, "peer": peers, "ratio": ratio,
           "ratio_is": "the peer's wall time per simulated second / trackdyn's, each the mean over its whole "
                       "measured run, recording included (> 1: trackdyn is faster); at equal steps the same "
                       "as the ratio of ms per step; null if either run did not complete",
           "ratio_step_ms_p10": p10}
    out.update(extra or {})
    return out


def _load() -> list:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def chain64_side_by_side(t_end: float = 2.0, step: float = 1e-4, peer_step: float | None = None,
                         reference: bool = True, solimp=None) -> dict:
    """trackdyn's ``chain64`` at ``step`` and MuJoCo's two chains, one after the other in this process."""
    import_mujoco()
    load0 = _load()
    results = []
    td = run_benchmark("chain64", t_end=t_end, steps=(step,), results=results)
    res = results[0]
    model = P.chain(**P.CHAIN64)
    last = model.joints[-1]
    tip_local = model._local_point(last.body_b, np.asarray(last.point) + P.CHAIN64["pitch"] * np.array([1.0, 0, 0]))
    keep = res.t > res.t[0] + 1e-9
    tip = _point_series(res, last.body_b.name, tip_local)[keep]
    peers = chain64_peer(step=peer_step or step, t_end=t_end, reference=reference, trackdyn_tip=tip, solimp=solimp)
    trackdyn = {k: td[k] for k in _HEADLINE} | {"integrator": td["integrator"], "split_ms": td["split_ms"]}
    trackdyn["accuracy"] = {"pin_gap_max_m": _trackdyn_pin_gaps(results, model, model.joints),
                            "penetration_max_m": None} | peers.pop("_trackdyn_accuracy", {})
    return _envelope("chain64", trackdyn, peers, load0)


def m113_side_by_side(t_end: float = 2.0, step: float = 1e-4, peer_step: float | None = None, settle: float = 0.5,
                      reference: bool = True, reference_t_end: float = 0.25, explicit_contact: bool = False,
                      tracks: str = "tree", solimp=None, integrator: str = "euler-implicit-linearized",
                      options: dict | None = None) -> dict:
    """trackdyn's ``m113-flat`` (one segment of ``t_end`` s) and MuJoCo's M113, one after the other.

    ``integrator`` and ``options`` are trackdyn's (e.g. ``theta-linearized`` at 1/1100 s, its largest step
    within 1 mm in m113-stepsize); ``peer_step`` (default ``step``) is MuJoCo's.
    """
    import_mujoco()
    load0 = _load()
    results = []
    td = run_benchmark("m113-flat", t_end=t_end, step=step, settle=settle, segments=1, results=results,
                       explicit_contact=explicit_contact, integrator=integrator, options=options)
    sc = cruise_scenario(step=step)  # the same build as the benchmark's: its pins, by name
    spec_, _, geo, z0 = vehicle_placement(sc)
    vm = build_vehicle(spec_, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=SPEED)
    pins = [j for j in vm.model.joints if j.name.endswith(".pin")]
    trackdyn = {k: td[k] for k in _HEADLINE} | {
        "integrator": td["integrator"], "options": dict(options or {}), "explicit_contact": td["explicit_contact"],
        "split_ms": td["split_ms"],
        "contacts_at_end": td["contacts_at_end"]}
    trackdyn["accuracy"] = {
        "pin_gap_max_m": _trackdyn_pin_gaps(results, vm.model, pins),
        "pin_gap_is": "every shoe pin (all are constraints, none exact by construction)",
        "penetration_max_m": float(max(np.max(r["contact.penetration"]) for r in results)),
        "penetration_is": "the deepest Hertz deflection of any contact: the model's compliance (the pads' is "
                          "calibrated to 25 mm at rest), not a constraint error",
        "wheel_z_error": "see m113-stepsize (against trackdyn at h = 1e-4)"}
    h = peer_step or step
    peers = m113_peer(step=h, t_end=t_end, settle=settle, reference=reference, reference_t_end=reference_t_end,
                      tracks=tracks, s=m113_settings(h, **({} if solimp is None else {"solimp": solimp})))
    return _envelope("m113-flat", trackdyn, peers, load0, {"not_measured_side_by_side": {"chrono": CHRONO_M113}})


def text_lines(out: dict) -> list[str]:
    """The text form of ``trackdyn bench NAME --peers``: both figures, the ratio, the peers' accuracy."""
    def length(x):
        return "—" if x is None else f"{1e3 * x:.3g} mm" if x >= 1e-3 else f"{1e6 * x:.3g} µm"

    def figures(label, r, ratio=None):
        acc = r.get("accuracy", {})
        parts = [f"pin gap {length(acc.get('pin_gap_max_m'))}", f"penetration {length(acc.get('penetration_max_m'))}"]
        for key, what in (("tip_error_max_m", "tip error"), ("tip_error_1s_m", "tip error ≤ 1 s"),
                          ("wheel_z_error_max_m", "wheel z error")):
            if acc.get(key) is not None:
                parts.append(f"{what} {length(acc[key])}")
        return [f"  {label:16s} h={r['step_size_s']:g}: {r['ms_per_step']:.3f} ms/step, {r['wall_per_sim']:.2f} s per "
                f"simulated s (p10 {r['step_ms_p10']:.3f}, median {r['step_ms_median']:.3f} ms)"
                + ("" if label == "trackdyn" else f"  ratio {ratio:.2f}" if ratio is not None
                   else f"  no ratio: {r['status']} / {out['trackdyn']['status']}"),
                "      " + ", ".join(parts)]

    m = out["machine"]
    lines = [f"{out['benchmark']} side by side, {out['date']}, {m['cpu']} ({m['cores']} cores), "
             f"load {out['load_before']} → {out['load_after']}"]
    lines += figures("trackdyn", out["trackdyn"])
    for key, r in out["peer"].items():
        s = r["settings"]
        lines += figures(key, r, out["ratio"][key])
        lines.append(f"      MuJoCo {r['version']}: {s['integrator']}, {s['solver']}, {s['cone']} cone, "
                     f"solref {s['solref']}, solimp {s['solimp']}")
    lines.append("  ratio: " + out["ratio_is"])
    for key, r in out.get("not_measured_side_by_side", {}).items():
        lines.append(f"  {key} (not measured side by side): {r['ms_per_step']} ms/step at h={r['step_size_s']:g}; "
                     f"{r['source']}")
    return lines


PEERS = {"chain64": chain64_side_by_side, "m113-flat": m113_side_by_side}


def side_by_side(name: str, **kwargs) -> dict:
    """Run benchmark ``name`` and its MuJoCo peer one after the other; :class:`PeerUnavailable` without MuJoCo."""
    if name not in PEERS:
        raise ValueError(f"no peer for benchmark {name!r}; peers exist for: {', '.join(sorted(PEERS))}")
    import_mujoco()
    return PEERS[name](**kwargs)
