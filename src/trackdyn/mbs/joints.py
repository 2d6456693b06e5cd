"""Joints and drivers built from the constraint primitives DP1, DP2, D and CD.

Each joint is a description between two bodies (the second one receives the
reported reaction), given in world coordinates at the model's initial pose.
When added to a :class:`~trackdyn.mbs.model.Model` it is converted to
primitive rows with body-fixed vectors (thesis appendix B):

=============  =================================================  ====
joint          rows                                               dof
=============  =================================================  ====
Spherical      3 CD                                               3
Revolute       3 CD + 2 DP1 (axis of j ⟂ two normals on i)        1
Universal      3 CD + 1 DP1 (the two cross axes stay ⟂)           2
Cylindrical    2 DP1 + 2 DP2                                      2
Prismatic      Cylindrical + 1 DP1 (no rotation about the axis)   1
Fixed          3 CD + 3 DP1                                       0
Distance       1 D                                                5
RevoluteMotor  Revolute + rotating DP1 following θ(t)             0
LinearMotor    Prismatic + DP2 following x(t)                     0
=============  =================================================  ====
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._kernels import CD, D, DP1, DP1R, DP2
from .profiles import Profile, as_profile

__all__ = [
    "Joint",
    "Spherical",
    "Revolute",
    "Universal",
    "Cylindrical",
    "Prismatic",
    "Fixed",
    "Distance",
    "RevoluteMotor",
    "LinearMotor",
    "PrimitiveRow",
    "perpendicular_frame",
]


@dataclass
class PrimitiveRow:
    """One scalar constraint, vectors expressed in the frames of bodies i and j."""

    type: int
    body_i: int
    body_j: int
    a_i: np.ndarray = field(default_factory=lambda: np.zeros(3))
    a_j: np.ndarray = field(default_factory=lambda: np.zeros(3))
    s_i: np.ndarray = field(default_factory=lambda: np.zeros(3))
    s_j: np.ndarray = field(default_factory=lambda: np.zeros(3))
    c: np.ndarray = field(default_factory=lambda: np.zeros(3))
    u: np.ndarray = field(default_factory=lambda: np.zeros(3))
    w: np.ndarray = field(default_factory=lambda: np.zeros(3))
    f0: float = 0.0
    profile: Profile | None = None
    profile_kind: str = "value"   # "value" (f = f0 + p(t)) or "integral" (f = f0 + ∫p)


def _unit(v, what: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{what}: expected 3 finite numbers, got {np.asarray(v).tolist()}")
    n = np.linalg.norm(v)
    if n < 1e-12:
        raise ValueError(f"{what}: zero-length axis {v.tolist()}")
    return v / n


def _point(p, what: str) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"{what}: expected 3 finite numbers, got {np.asarray(p).tolist()}")
    return p


def perpendicular_frame(z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A right-handed orthonormal frame (x, y, z) whose z is the given direction."""
    z = np.asarray(z, dtype=float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return x, y, z


class Joint:
    """Base class of joints: two bodies, a name, primitive rows on demand.

    Subclasses implement :meth:`_rows`, given the model (for poses) and the
    body indices. ``point`` is where the reaction is reported.
    """

    n_dof_removed = 0

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), name: str | None = None):
        self.body_a = body_a
        self.body_b = body_b
        self.point = _point(point, f"{type(self).__name__} {name!r}: point")
        self.name = name

    # helpers to express world vectors in body frames at the initial pose
    def _local_vec(self, model, body, a_w):
        return model._initial_R(body).T @ a_w

    def _local_pt(self, model, body, p_w):
        return model._initial_R(body).T @ (p_w - model._initial_pos(body))

    def _spherical_rows(self, model, i, j):
        si = self._local_pt(model, i, self.point)
        sj = self._local_pt(model, j, self.point)
        return [PrimitiveRow(CD, i, j, s_i=si, s_j=sj, c=np.eye(3)[k]) for k in range(3)]

    def _axis_rows(self, model, i, j, axis):
        x, y, z = perpendicular_frame(axis)
        return [
            PrimitiveRow(DP1, i, j, a_i=self._local_vec(model, i, x), a_j=self._local_vec(model, j, z)),
            PrimitiveRow(DP1, i, j, a_i=self._local_vec(model, i, y), a_j=self._local_vec(model, j, z)),
        ]

    def rows(self, model, i: int, j: int) -> list[PrimitiveRow]:
        return self._rows(model, i, j)

    def _rows(self, model, i, j):  # pragma: no cover - abstract
        raise NotImplementedError


class Spherical(Joint):
    """Ball joint: the joint point of both bodies coincides (3 CD)."""

    def _rows(self, model, i, j):
        return self._spherical_rows(model, i, j)


class Revolute(Joint):
    """Pin joint about ``axis`` through ``point`` (3 CD + 2 DP1)."""

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name=None):
        super().__init__(body_a, body_b, point, name)
        self.axis = _unit(axis, f"Revolute {name!r}: axis")

    def _rows(self, model, i, j):
        return self._spherical_rows(model, i, j) + self._axis_rows(model, i, j, self.axis)


class Universal(Joint):
    """Cardan joint: ``axis_a`` on body a stays perpendicular to ``axis_b`` on body b."""

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), axis_a=(1.0, 0.0, 0.0),
                 axis_b=(0.0, 1.0, 0.0), name=None):
        super().__init__(body_a, body_b, point, name)
        self.axis_a = _unit(axis_a, f"Universal {name!r}: axis_a")
        self.axis_b = _unit(axis_b, f"Universal {name!r}: axis_b")
        if abs(self.axis_a @ self.axis_b) > 1e-9:
            raise ValueError(f"Universal {name!r}: axis_a and axis_b must be perpendicular")

    def _rows(self, model, i, j):
        return self._spherical_rows(model, i, j) + [
            PrimitiveRow(DP1, i, j, a_i=self._local_vec(model, i, self.axis_a),
                         a_j=self._local_vec(model, j, self.axis_b))
        ]


class Cylindrical(Joint):
    """Translation along and rotation about ``axis`` (2 DP1 + 2 DP2)."""

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name=None):
        super().__init__(body_a, body_b, point, name)
        self.axis = _unit(axis, f"{type(self).__name__} {name!r}: axis")

    def _cyl_rows(self, model, i, j):
        x, y, _ = perpendicular_frame(self.axis)
        si = self._local_pt(model, i, self.point)
        sj = self._local_pt(model, j, self.point)
        return self._axis_rows(model, i, j, self.axis) + [
            PrimitiveRow(DP2, i, j, a_i=self._local_vec(model, i, x), s_i=si, s_j=sj),
            PrimitiveRow(DP2, i, j, a_i=self._local_vec(model, i, y), s_i=si, s_j=sj),
        ]

    def _rows(self, model, i, j):
        return self._cyl_rows(model, i, j)


class Prismatic(Cylindrical):
    """Translation along ``axis`` only (Cylindrical + 1 DP1)."""

    def _rows(self, model, i, j):
        x, y, _ = perpendicular_frame(self.axis)
        return self._cyl_rows(model, i, j) + [
            PrimitiveRow(DP1, i, j, a_i=self._local_vec(model, i, x), a_j=self._local_vec(model, j, y))
        ]


class Fixed(Joint):
    """Weld: no relative motion (3 CD + 3 DP1)."""

    def _rows(self, model, i, j):
        ex, ey, ez = np.eye(3)
        lv = self._local_vec
        return self._spherical_rows(model, i, j) + [
            PrimitiveRow(DP1, i, j, a_i=lv(model, i, ex), a_j=lv(model, j, ey)),
            PrimitiveRow(DP1, i, j, a_i=lv(model, i, ex), a_j=lv(model, j, ez)),
            PrimitiveRow(DP1, i, j, a_i=lv(model, i, ey), a_j=lv(model, j, ez)),
        ]


class Distance(Joint):
    """Constant distance between ``point_a`` on body a and ``point_b`` on body b (1 D).

    ``distance`` defaults to the initial distance and must be positive.
    """

    def __init__(self, body_a, body_b, point_a, point_b, distance: float | None = None, name=None):
        super().__init__(body_a, body_b, point_b, name)
        self.point_a = _point(point_a, f"Distance {name!r}: point_a")
        self.point_b = _point(point_b, f"Distance {name!r}: point_b")
        d0 = float(np.linalg.norm(self.point_b - self.point_a))
        self.distance = d0 if distance is None else float(distance)
        if not self.distance > 0:
            raise ValueError(f"Distance {name!r}: distance must be positive, got {self.distance}")

    def _rows(self, model, i, j):
        return [
            PrimitiveRow(D, i, j, s_i=self._local_pt(model, i, self.point_a),
                         s_j=self._local_pt(model, j, self.point_b), f0=self.distance)
        ]


class RevoluteMotor(Revolute):
    """Revolute joint whose relative angle follows a prescribed motion.

    Give exactly one of ``angle`` (θ(t), rad, relative to the initial pose) or
    ``speed`` (θ̇(t), rad/s, integrated exactly for the built-in profiles).
    Positive about ``axis`` (right-hand rule): body b turns relative to body a.
    """

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                 angle=None, speed=None, name=None):
        super().__init__(body_a, body_b, point, axis, name)
        if (angle is None) == (speed is None):
            raise ValueError(f"RevoluteMotor {name!r}: give exactly one of angle or speed")
        if angle is not None:
            self.profile, self.kind = as_profile(angle, f"RevoluteMotor {name!r}: angle"), "value"
        else:
            self.profile, self.kind = as_profile(speed, f"RevoluteMotor {name!r}: speed"), "integral"

    def _rows(self, model, i, j):
        x, y, _ = perpendicular_frame(self.axis)
        lv = self._local_vec
        motor = PrimitiveRow(
            DP1R, i, j, a_j=lv(model, j, x), u=lv(model, i, y), w=lv(model, i, x),
            profile=self.profile, profile_kind=self.kind,
        )
        return super()._rows(model, i, j) + [motor]


class LinearMotor(Prismatic):
    """Prismatic joint whose displacement along ``axis`` follows x(t) (or ∫ of a speed)."""

    def __init__(self, body_a, body_b, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                 position=None, speed=None, name=None):
        super().__init__(body_a, body_b, point, axis, name)
        if (position is None) == (speed is None):
            raise ValueError(f"LinearMotor {name!r}: give exactly one of position or speed")
        if position is not None:
            self.profile, self.kind = as_profile(position, f"LinearMotor {name!r}: position"), "value"
        else:
            self.profile, self.kind = as_profile(speed, f"LinearMotor {name!r}: speed"), "integral"

    def _rows(self, model, i, j):
        si = self._local_pt(model, i, self.point)
        sj = self._local_pt(model, j, self.point)
        drive = PrimitiveRow(
            DP2, i, j, a_i=self._local_vec(model, i, self.axis), s_i=si, s_j=sj,
            profile=self.profile, profile_kind=self.kind,
        )
        return super()._rows(model, i, j) + [drive]
