"""The seat of a vehicle: a mass on a vertical spring-damper relative to the cab (han-sander-mao eq. 36).

:func:`add_seat` adds, for a spec with a ``[seat]`` (:class:`~trackdyn.spec.vehicle.SeatSpec`):

- the body ``seat`` (the seat and its occupant) at the seat's position;
- the joint ``seat.slide``: a prismatic joint along the chassis's z axis, so the seat moves relative to the cab
  in the cab's vertical direction only (the direction ``e_2`` of the paper's eq. 36) and turns with the cab;
- the force element ``seat.spring``: a linear spring-damper (TSDA) from a chassis anchor
  :data:`~trackdyn.spec.vehicle.SEAT_SPRING_LENGTH` below the seat to the seat, compressed by the static
  deflection ``mass g / stiffness`` in the assembled pose (its free length is the anchor distance plus that), so
  the seat starts at rest on a level vehicle, as the tensioner's anchor is placed to hold its target tension.

A body on a joint with a force element, rather than a force law of its own, because that is how every other
suspended part of the vehicle is built (the idler carrier on its prismatic joint and tensioner TSDA, the road
arms on revolutes and torsion RSDAs): the absolute formulation's equations of motion then carry the seat's
coupling to the hull exactly (eq. 36's centripetal and Euler terms included), its reaction acts on the hull,
and its series follow DESIGN.md (``seat.pos.z``, ``seat.acc.z``, ``seat.slide.force.z``, ``seat.spring.force``).

:class:`SeatOutputs` (output-only provider) records ``seat.rel.z``: the seat's displacement along the chassis z
axis relative to its assembled position in the chassis frame, m: zero at rest on level ground, as the paper's
``u_S2`` (eq. 36 has no gravity term: it is measured from the static equilibrium); ``+mass g / stiffness`` with
the spring at its free length. ``seat.acc.z`` is the seat body's own series: its absolute
vertical acceleration in the world frame, gravity excluded (zero at rest).
"""

from __future__ import annotations

import numpy as np

from ..mbs import TSDA, Prismatic
from ..mbs.markers import body_points
from ..spec.vehicle import SEAT_SPRING_LENGTH

__all__ = ["add_seat", "SeatOutputs", "SEAT_BODY", "SEAT_SERIES"]

#: Name of the seat body (and prefix of its joint ``seat.slide`` and spring ``seat.spring``).
SEAT_BODY = "seat"
#: The seat's headline series: displacement relative to the cab (m), absolute vertical acceleration (m/s²).
SEAT_SERIES = ("seat.rel.z", "seat.acc.z")


def seat_inertia(mass: float) -> list[float]:
    """Principal moments of the seat body, kg m²: a uniform 0.5 m cube of the seat's mass.

    The prismatic joint turns the seat with the cab, so its inertia only adds to the hull's pitch, roll and yaw
    inertia; 0.5 m is the size of a seat."""
    return [mass * (0.5 ** 2 + 0.5 ** 2) / 12.0] * 3


def add_seat(m, chassis, spec, W, chassis_com):
    """Add the seat of ``spec`` (if any) to model ``m`` on body ``chassis``; returns its :class:`SeatOutputs`.

    ``W(x, y, z)`` maps the vehicle frame to the world at the assembled pose (the builders' own map);
    ``chassis_com`` (3,) is the chassis body's centre of mass in the vehicle frame. Returns
    None when the spec has no seat. The seat's axis is the world z of the assembled pose, which is the chassis
    z axis (the builders assemble the vehicle level).
    """
    seat = getattr(spec, "seat", None)
    if seat is None:
        return None
    x, y, z = seat.position
    Z = np.array([0.0, 0.0, 1.0])
    g = max(0.0, -float(np.asarray(m.gravity, float)[2]))  # the model's gravity along -z, m/s²
    sag = seat.mass * g / seat.stiffness  # static deflection: the spring's compression at rest
    body = m.add_body(SEAT_BODY, mass=seat.mass, inertia=seat_inertia(seat.mass), pos=W(x, y, z))
    m.add_joint(Prismatic(chassis, body, point=W(x, y, z), axis=Z, name=SEAT_BODY + ".slide"))
    m.add_force(TSDA(chassis, body, point_a=W(x, y, z - SEAT_SPRING_LENGTH), point_b=W(x, y, z),
                     stiffness=seat.stiffness, damping=seat.damping, free_length=SEAT_SPRING_LENGTH + sag,
                     name=SEAT_BODY + ".spring"))
    # the seat's assembled position in the chassis frame (the chassis is assembled unrotated)
    s_local = np.array([x, y, z], float) - np.asarray(chassis_com, float)
    return SeatOutputs(chassis.name, body.name, s_local)


class SeatOutputs:
    """Output-only provider (adds no force): ``seat.rel.z``, the seat's displacement relative to the cab.

    ``rel = e_z · (r_seat - p)`` with ``p`` the seat's assembled position fixed in the chassis frame
    (``s_local`` from the chassis centre of mass, chassis frame) and ``e_z`` the chassis z axis, both in the
    world (:func:`~trackdyn.mbs.markers.body_points`).
    """

    name = "seat-outputs"

    def __init__(self, chassis: str, seat: str, s_local):
        self.chassis_name, self.seat_name = chassis, seat
        self.s_local = np.asarray(s_local, float).reshape(1, 3)
        self.rel = np.zeros(1)

    def coupling_pairs(self):
        return []

    def bind(self, system):
        idx = {nm: k for k, nm in enumerate(system.body_names)}
        self.chassis_idx = np.array([idx[self.chassis_name]], dtype=np.int64)
        self.seat_idx = idx[self.seat_name]

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        if ctx.data is not None:  # outputs only: nothing to add to the step
            return
        kin = ctx.kin
        _, p, _ = body_points(kin, self.chassis_idx, self.s_local)
        e_z = kin.R[self.chassis_idx[0]][:, 2]
        self.rel[0] = float(e_z @ (kin.pos[self.seat_idx] - p[0]))

    def commit(self, state):
        pass

    def series(self):
        return {"seat.rel.z": (self.rel, 0)}
