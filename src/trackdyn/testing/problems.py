"""Reference problems with closed-form answers, shared by tests, validation and benchmarks.

Each builder returns a :class:`~trackdyn.mbs.model.Model` (and the data its
closed form needs). Frames follow the conventions: z up, gravity -z.
"""

from __future__ import annotations

import numpy as np

from ..mbs import Model, Revolute, RevoluteMotor, Prismatic
from ..math.quaternion import quat_from_axis_angle

__all__ = [
    "pendulum",
    "slider_crank",
    "slider_crank_exact",
    "four_bar",
    "four_bar_output_angle",
    "chain",
    "CHAIN64",
    "chain_loop",
    "torque_free_body",
]

# thesis Table 3.6 track shoe as a chain link
CHAIN64 = dict(n_links=64, mass=8.55, pitch=0.154, inertia=(0.1562, 0.0318, 0.1562))


def pendulum(length=1.0, mass=1.0, theta0=0.1, radius_of_gyration=0.0, gravity=9.81):
    """A body hanging from a revolute about y at the origin, released at angle θ0 from vertical.

    ``radius_of_gyration`` k gives the inertia ``m k²`` about the centre of mass
    (0: a point mass, modelled with a tiny inertia 1e-9 m L²).
    """
    m = Model(gravity=(0.0, 0.0, -gravity))
    pos = [length * np.sin(theta0), 0.0, -length * np.cos(theta0)]
    Ic = mass * max(radius_of_gyration**2, 1e-9 * length**2)
    quat = quat_from_axis_angle([0, 1, 0], -theta0)  # rod axis along the string
    bob = m.add_body("bob", mass=mass, inertia=[Ic, Ic, Ic], pos=pos, quat=quat)
    m.add_joint(Revolute(m.ground, bob, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    return m


def slider_crank(crank=0.1, rod=0.3, speed=2 * np.pi, m_crank=1.0, m_rod=1.0, m_slider=1.0):
    """Crank about y at the origin driven at constant ``speed`` (rad/s), rod, slider along x.

    The crank starts along +x; the slider's pin lies on the x axis at
    ``crank + rod``. Returns the model; see :func:`slider_crank_exact`.
    """
    m = Model(gravity=(0.0, 0.0, -9.81))
    a, b = crank, rod
    c = m.add_body("crank", mass=m_crank, inertia=[1e-3, 1e-3, 1e-3], pos=[a / 2, 0, 0])
    r = m.add_body("rod", mass=m_rod, inertia=[1e-3, m_rod * b**2 / 12, m_rod * b**2 / 12],
                   pos=[a + b / 2, 0, 0])
    s = m.add_body("slider", mass=m_slider, inertia=[1e-3, 1e-3, 1e-3], pos=[a + b, 0, 0])
    # crank turns so that it rises towards +z: rotation about -y
    m.add_joint(RevoluteMotor(m.ground, c, point=[0, 0, 0], axis=[0, -1, 0], speed=speed, name="motor"))
    m.add_joint(Revolute(c, r, point=[a, 0, 0], axis=[0, 1, 0], name="crank_pin"))
    m.add_joint(Revolute(r, s, point=[a + b, 0, 0], axis=[0, 1, 0], name="wrist_pin"))
    m.add_joint(Prismatic(m.ground, s, point=[a + b, 0, 0], axis=[1, 0, 0], name="guide"))
    return m


def slider_crank_exact(t, crank=0.1, rod=0.3, speed=2 * np.pi):
    """Slider position x(t) and velocity ẋ(t) of :func:`slider_crank` (closed form)."""
    th = speed * np.asarray(t)
    s = crank * np.sin(th)
    root = np.sqrt(rod**2 - s**2)
    x = crank * np.cos(th) + root
    xd = -crank * speed * np.sin(th) - s * crank * np.cos(th) * speed / root
    return x, xd


def four_bar(a=0.2, b=0.5, c=0.4, d=0.45, speed=1.0, phi0=np.pi / 3):
    """Planar four-bar in the x-z plane built from four 3-D revolutes (3 rows redundant).

    Ground pivots O2 = (0, 0, 0) and O4 = (d, 0, 0); crank a (driven at
    ``speed`` from angle ``phi0``), coupler b, rocker c. Returns the model and
    the initial rocker angle.
    """
    th2 = phi0
    th4 = four_bar_output_angle(th2, a, b, c, d)
    A = np.array([a * np.cos(th2), 0.0, a * np.sin(th2)])
    B = np.array([d + c * np.cos(th4), 0.0, c * np.sin(th4)])
    O4 = np.array([d, 0.0, 0.0])
    m = Model(gravity=(0.0, 0.0, -9.81))

    def link(name, p, q, mass):
        mid = 0.5 * (p + q)
        L = np.linalg.norm(q - p)
        ang = np.arctan2(q[2] - p[2], q[0] - p[0])
        quat = quat_from_axis_angle([0, 1, 0], -ang)
        return m.add_body(name, mass=mass, inertia=[1e-4, mass * L**2 / 12, mass * L**2 / 12],
                          pos=mid, quat=quat)

    crank = link("crank", np.zeros(3), A, 1.0)
    coupler = link("coupler", A, B, 1.0)
    rocker = link("rocker", O4, B, 1.0)
    m.add_joint(RevoluteMotor(m.ground, crank, point=[0, 0, 0], axis=[0, -1, 0], speed=speed, name="motor"))
    m.add_joint(Revolute(crank, coupler, point=A, axis=[0, 1, 0], name="pin_A"))
    m.add_joint(Revolute(coupler, rocker, point=B, axis=[0, 1, 0], name="pin_B"))
    m.add_joint(Revolute(m.ground, rocker, point=O4, axis=[0, 1, 0], name="pin_O4"))
    return m, th4


def four_bar_output_angle(th2, a=0.2, b=0.5, c=0.4, d=0.45):
    """Rocker angle θ4 for crank angle θ2 (open branch), angles from +x towards +z."""
    th2 = np.asarray(th2, dtype=float)
    # B = O4 + c e(θ4), |B - A| = b, A = a e(θ2)
    Ax, Az = a * np.cos(th2), a * np.sin(th2)
    # (d + c cos θ4 - Ax)² + (c sin θ4 - Az)² = b²  ->  P cos θ4 + Q sin θ4 = R
    P = 2 * c * (d - Ax)
    Q = -2 * c * Az
    Rr = b**2 - (d - Ax) ** 2 - Az**2 - c**2
    amp = np.hypot(P, Q)
    base = np.arctan2(Q, P)
    return base + np.arccos(np.clip(Rr / amp, -1, 1))


def chain(n_links=64, mass=8.55, pitch=0.154, inertia=(0.1562, 0.0318, 0.1562), angle=0.0):
    """A chain of ``n_links`` links on revolutes about y, hung from a fixed pin at the origin.

    The chain starts straight along +x (rotated by ``angle`` about -y), at
    rest; link k's centre of mass is midway between its pins.
    """
    m = Model(gravity=(0.0, 0.0, -9.81))
    e = np.array([np.cos(angle), 0.0, np.sin(angle)])
    quat = quat_from_axis_angle([0, 1, 0], -angle)
    prev = m.ground
    for k in range(n_links):
        body = m.add_body(f"link[{k}]", mass=mass, inertia=list(inertia), pos=(k + 0.5) * pitch * e, quat=quat)
        m.add_joint(Revolute(prev, body, point=k * pitch * e, axis=[0, 1, 0], name=f"pin[{k}]"))
        prev = body
    return m


def chain_loop(n_arc=8, n_strand=24, wheel_mass=20.0, wheel_inertia=(1.0, 2.0, 1.0)):
    """A closed loop of ``2 (n_arc + n_strand)`` CHAIN64 links around two wheels on fixed axles.

    The pins sit on two half circles (radius such that a chord is one pitch)
    joined by straight strands; each wheel turns on a revolute at its centre
    and carries the loop by one pin on its rim (wheel A at its top pin, wheel
    B at its bottom pin: the two halves of the loop between them are 32 links
    each, longer than the rim pins can ever stand apart, d + 2R, so the loop
    never snaps taut). Two independent loops: 66 bodies, 68 joints.
    """
    p, mass, inertia = CHAIN64["pitch"], CHAIN64["mass"], CHAIN64["inertia"]
    R = p / (2.0 * np.sin(np.pi / (2 * n_arc)))
    d = n_strand * p
    pins = [(k * p, R) for k in range(n_strand + 1)]
    pins += [(d + R * np.cos(np.pi / 2 - i * np.pi / n_arc), R * np.sin(np.pi / 2 - i * np.pi / n_arc))
             for i in range(1, n_arc + 1)]
    pins += [(d - k * p, -R) for k in range(1, n_strand + 1)]
    pins += [(R * np.cos(-np.pi / 2 - i * np.pi / n_arc), R * np.sin(-np.pi / 2 - i * np.pi / n_arc))
             for i in range(1, n_arc)]
    pins = np.array([[x, 0.0, z] for x, z in pins])
    n = len(pins)
    m = Model(gravity=(0.0, 0.0, -9.81))
    links = []
    for k in range(n):
        a, b = pins[k], pins[(k + 1) % n]
        ang = np.arctan2(b[2] - a[2], b[0] - a[0])
        links.append(m.add_body(f"link[{k}]", mass=mass, inertia=list(inertia), pos=0.5 * (a + b),
                                quat=quat_from_axis_angle([0, 1, 0], -ang)))
    for k in range(n):
        m.add_joint(Revolute(links[k - 1], links[k], point=pins[k], axis=[0, 1, 0], name=f"pin[{k}]"))
    bottom = n_strand + n_arc
    for name, centre, pin in (("wheel_a", [0.0, 0.0, 0.0], 0), ("wheel_b", [d, 0.0, 0.0], bottom)):
        w = m.add_body(name, mass=wheel_mass, inertia=list(wheel_inertia), pos=centre)
        m.add_joint(Revolute(m.ground, w, point=centre, axis=[0, 1, 0], name=f"{name}.axle"))
        m.add_joint(Revolute(w, links[pin], point=pins[pin], axis=[0, 1, 0], name=f"{name}.rim"))
    return m


def torque_free_body(inertia=(1.0, 2.0, 3.0), omega=(0.01, 2.0, 0.01), mass=1.0):
    """A free body without gravity spinning near its intermediate principal axis."""
    m = Model(gravity=(0.0, 0.0, 0.0))
    m.add_body("body", mass=mass, inertia=list(inertia), omega=list(omega))
    return m
