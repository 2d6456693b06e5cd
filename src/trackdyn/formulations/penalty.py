"""Penalty revolute joints as a force provider of the absolute system (wallin-shabana-2013 §6.2).

:class:`PenaltyPins` replaces a set of ideal revolute joints by restoring
forces on their constraint violations (:mod:`._penalty_kernels`): no rows, no
multipliers, five stiff force components per pin whose exact stiffness and
damping Jacobians enter the Newton matrix like the contact forces (coupling
blocks between the pin's two bodies, a fixed pattern). Nothing here knows
about vehicles: a pin is two bodies, a world point and an axis at the model's
initial pose, as for :class:`~trackdyn.mbs.joints.Revolute`.

Paper values (§9): k = 1e9 N/m (and 1e7 N/m, the soft study), c = 1e5 N s/m,
one k and c for all five rows of eq. 11 (the axis rows' k then has units N m
per unit of the dot product, i.e. N m/rad for small tilts).

Recorded per pin ``NAME``: ``NAME.force.{x,y,z}`` (world force on the second
body at the pin, as a joint's reaction), ``NAME.torque.{x,y,z}`` (moment on
the second body), ``NAME.deformation`` (|r_P^ij|, m: the paper's Fig. 16).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mbs.joints import perpendicular_frame
from . import _penalty_kernels as PK
from ..mbs import _force_kernels as FK

__all__ = ["PenaltyPin", "PenaltyPins", "PAPER_K", "PAPER_K_SOFT", "PAPER_C"]

#: wallin-shabana-2013 §9: the penalty stiffness of Figs. 12-13 (N/m) and of Figs. 14-15, and the damping (N s/m)
PAPER_K = 1e9
PAPER_K_SOFT = 1e7
PAPER_C = 1e5


@dataclass(frozen=True)
class PenaltyPin:
    """One pin: bodies a (i) and b (j) of the model, world point and axis at the initial pose."""

    name: str
    body_a: object
    body_b: object
    point: tuple
    axis: tuple


class PenaltyPins:
    """Force provider of penalty revolute pins (module docstring).

    Parameters
    ----------
    model : Model
    pins : sequence of PenaltyPin
    k, c : float
        Stiffness (N/m) and damping (N s/m) of the three point rows.
    k_axis, c_axis : float, optional
        Of the two axis-alignment rows (N m, N m s); default ``k`` and ``c``
        (the paper's single ``k_k``, ``c_k``).
    name : str
    """

    def __init__(self, model, pins, k=PAPER_K, c=PAPER_C, k_axis=None, c_axis=None, name="penalty"):
        self.name = name
        pins = list(pins)
        n = self.n = len(pins)
        for what, val in (("k", k), ("c", c), ("k_axis", k_axis), ("c_axis", c_axis)):
            if val is not None and not (np.isfinite(val) and val >= 0):
                raise ValueError(f"PenaltyPins: {what} = {val!r}: expected a finite number >= 0")
        self.names = [p.name for p in pins]
        self.body = np.array([[model._index(p.body_a), model._index(p.body_b)] for p in pins],
                             dtype=np.int64).reshape(n, 2)
        self.s = np.zeros((n, 2, 3))
        self.axis_j = np.zeros((n, 3))
        self.normal_i = np.zeros((n, 2, 3))
        for e, p in enumerate(pins):
            axis = np.asarray(p.axis, float)
            axis = axis / np.linalg.norm(axis)
            u, w, _ = perpendicular_frame(axis)
            self.s[e, 0] = model._local_point(p.body_a, p.point)
            self.s[e, 1] = model._local_point(p.body_b, p.point)
            self.axis_j[e] = model._local_vec(p.body_b, axis)
            self.normal_i[e, 0] = model._local_vec(p.body_a, u)
            self.normal_i[e, 1] = model._local_vec(p.body_a, w)
        self.k_pos = np.full(n, float(k))
        self.c_pos = np.full(n, float(c))
        self.k_axis = np.full(n, float(k if k_axis is None else k_axis))
        self.c_axis = np.full(n, float(c if c_axis is None else c_axis))
        self.Q = np.zeros((n, 12))
        self.Kx = np.zeros((n, 12, 12))
        self.Kv = np.zeros((n, 12, 12))
        self.slot = np.full((n, 12, 12), -1, dtype=np.int64)
        self.work = np.zeros((7, 3, 12))
        self.d = np.zeros((n, 5))
        self.force = np.zeros((n, 3))
        self.torque = np.zeros((n, 3))
        self.deformation = np.zeros(n)
        self._v = None
        self._f_out = None

    # -- provider protocol
    def coupling_pairs(self):
        return [(int(i), int(j)) for i, j in self.body]

    def bind(self, system) -> None:
        for e in range(self.n):
            self.slot[e] = system._slots(self.body[e], True)
        self._v = np.zeros((system.nb, 6))
        self._f_out = np.zeros((system.nb, 6))
        self._dv_out = np.zeros((system.nb, 6))

    def initial_extra(self) -> dict:
        return {}

    def evaluate(self, kin) -> None:
        """Violations, forces and Jacobians at ``kin`` (the system's current kinematics)."""
        PK.penalty_pins_eval(self.body, self.s, self.axis_j, self.normal_i, self.k_pos, self.c_pos, self.k_axis,
                             self.c_axis, kin.pos, kin.R, kin.vel, kin.omega_w, self.Q, self.Kx, self.Kv, self.d,
                             self.force, self.torque, self.work)

    def accumulate(self, ctx) -> None:
        kin = ctx.kin
        self.evaluate(kin)
        if ctx.data is None:  # outputs only (the deformation is a series); the forces for whoever sums them
            np.sqrt(np.sum(self.d[:, :3] ** 2, axis=1), out=self.deformation)
            for side in range(2):
                b = self.body[:, side]
                on = b >= 0
                np.add.at(ctx.f, b[on], self.Q[on, 6 * side:6 * side + 6])
            return
        # the step's velocities (the iterate the kinematics were updated with), for the Dv and Kxv terms
        PK.body_velocities(kin.R, kin.vel, kin.omega_w, self._v)
        kxv = ctx.Kxv if ctx.Kxv is not None else self._dv_out
        FK.scatter_elements(self.body, self.Q, self.Kx, self.Kv, self.slot, float(ctx.cK), float(ctx.cD), self._v,
                            ctx.f, ctx.data, ctx.Dv, kxv)

    def commit(self, state) -> None:
        pass

    def series(self) -> dict:
        out = {}
        for e, nm in enumerate(self.names):
            for a, ax in enumerate("xyz"):
                out[f"{nm}.force.{ax}"] = (self.force[:, a], e)
                out[f"{nm}.torque.{ax}"] = (self.torque[:, a], e)
            out[f"{nm}.deformation"] = (self.deformation, e)
        return out
