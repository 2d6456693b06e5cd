"""The multibody model: bodies, joints and force elements, validated on entry.

A :class:`Model` is built once (``add_body``, ``add_joint``, ``add_force``)
and then handed to a :class:`~trackdyn.sim.simulation.Simulation`, which turns
it into arrays and equations (:mod:`trackdyn.formulations`). Geometry of joints
and forces is given in world coordinates at the initial pose and converted to
body-fixed vectors when the element is added. Bad input raises ``ValueError``
naming the element and the reason.

Example
-------
>>> import trackdyn as td
>>> m = td.Model()
>>> link = m.add_body("link", mass=1.0, inertia=[0.1, 0.1, 0.1], pos=[0.5, 0, 0])
>>> j = m.add_joint(td.Revolute(m.ground, link, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..conventions import GRAVITY, GROUND
from ..math.quaternion import quat_to_matrix
from .forces import ForceElement
from .joints import Joint

__all__ = ["Model", "Body", "State"]


@dataclass(frozen=True)
class Body:
    """Handle of a body in a model (or of the ground, index -1)."""

    model: "Model" = field(repr=False, compare=False)
    index: int
    name: str

    @property
    def is_ground(self) -> bool:
        return self.index == GROUND


@dataclass
class State:
    """Plain-data state of a model at time ``t``.

    Attributes
    ----------
    t : float
        Time, s.
    q : ndarray (nb, 7)
        Per body: centre-of-mass position (world, m) and quaternion (e0..e3).
    v : ndarray (nb, 6)
        Per body: world-frame linear velocity (m/s) and body-frame angular
        velocity (rad/s).
    lam : ndarray (nc,)
        Constraint multipliers of the last step.
    acc : ndarray (nb, 6)
        Last step's mean accelerations ``(v_new - v_old)/h``.
    extra : dict
        Plain arrays of other subsystems (contact history, controller memory).
    """

    t: float
    q: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    acc: np.ndarray
    extra: dict = field(default_factory=dict)

    def copy(self) -> "State":
        return State(
            float(self.t), self.q.copy(), self.v.copy(), self.lam.copy(), self.acc.copy(),
            {k: (v.copy() if hasattr(v, "copy") else v) for k, v in self.extra.items()},
        )


def _vec3(x, what):
    a = np.array(x, dtype=float)  # a copy: a model must not share (and mutate) the caller's array, e.g. GRAVITY
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected 3 finite numbers, got {np.asarray(x).tolist()}")
    return a


def _inertia(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape == (3,):
        a = np.diag(a)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected 3 principal moments or a 3x3 matrix, got shape {a.shape}")
    if not np.allclose(a, a.T, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(a).max())):
        raise ValueError(f"{what}: inertia matrix is not symmetric: {a.tolist()}")
    ev = np.linalg.eigvalsh(a)
    if ev.min() <= 0:
        raise ValueError(f"{what}: inertia is not positive definite (eigenvalues {ev.tolist()})")
    # triangle inequality of principal moments (physical rigid body)
    s = np.sort(ev)
    if s[0] + s[1] < s[2] * (1 - 1e-9):
        raise ValueError(
            f"{what}: principal moments {s.tolist()} violate the triangle inequality "
            "(no rigid body has them)"
        )
    return a


class Model:
    """Bodies, joints and force elements of a multibody system.

    The ground is ``model.ground`` (fixed, index -1). Names of bodies, joints
    and force elements are the prefixes of the recorded series and must be
    unique.
    """

    def __init__(self, gravity=GRAVITY):
        self.gravity = _vec3(gravity, "Model: gravity")
        self._names: list[str] = []
        self._mass: list[float] = []
        self._inertia: list[np.ndarray] = []
        self._q0: list[np.ndarray] = []
        self._v0: list[np.ndarray] = []
        self.joints: list[Joint] = []
        self.forces: list[ForceElement] = []
        self.visuals: list[tuple[int, object]] = []
        self.markers: list[tuple[str, int, np.ndarray]] = []
        self._all_names: set[str] = {"ground"}
        self.ground = Body(self, GROUND, "ground")
        self._version = 0

    # ------------------------------------------------------------------ bodies
    @property
    def n_bodies(self) -> int:
        return len(self._names)

    @property
    def body_names(self) -> list[str]:
        return list(self._names)

    def _claim(self, name, kind):
        if not isinstance(name, str) or not name:
            raise ValueError(f"{kind} name must be a non-empty string, got {name!r}")
        if name in self._all_names:
            raise ValueError(f"{kind} {name!r}: the name is already used in this model")
        self._all_names.add(name)

    def add_body(self, name: str, mass: float, inertia, pos=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0),
                 vel=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0)) -> Body:
        """Add a rigid body.

        Parameters
        ----------
        name : str
            Unique name, the prefix of its series (``NAME.pos.z``).
        mass : float
            kg, positive.
        inertia : array (3,) or (3, 3)
            Inertia about the centre of mass in the body frame, kg m²:
            principal moments or a symmetric positive-definite matrix.
        pos, quat : array
            Initial centre-of-mass position (m, world) and orientation
            (unit quaternion, scalar first).
        vel, omega : array
            Initial world linear velocity (m/s) and body-frame angular velocity (rad/s).
        """
        what = f"body {name!r}"
        self._claim(name, "body")
        try:
            m = float(mass)
            if not np.isfinite(m) or m <= 0:
                raise ValueError(f"{what}: mass must be positive and finite, got {mass!r}")
            J = _inertia(inertia, what)
            p = _vec3(pos, f"{what}: pos")
            q = np.asarray(quat, dtype=float)
            if q.shape != (4,) or not np.all(np.isfinite(q)):
                raise ValueError(f"{what}: quat must be 4 finite numbers, got {np.asarray(quat).tolist()}")
            nq = np.linalg.norm(q)
            if abs(nq - 1.0) > 1e-3:
                raise ValueError(f"{what}: quat {q.tolist()} is not a unit quaternion (norm {nq:.6g})")
            q = q / nq
            vv = _vec3(vel, f"{what}: vel")
            w = _vec3(omega, f"{what}: omega")
        except ValueError:
            self._all_names.discard(name)
            raise
        self._names.append(name)
        self._mass.append(m)
        self._inertia.append(J)
        self._q0.append(np.concatenate([p, q]))
        self._v0.append(np.concatenate([vv, w]))
        self._version += 1
        return Body(self, len(self._names) - 1, name)

    def body(self, name: str) -> Body:
        """Handle of the body called ``name`` (``"ground"`` for the ground)."""
        if name == "ground":
            return self.ground
        try:
            return Body(self, self._names.index(name), name)
        except ValueError:
            raise ValueError(f"unknown body {name!r}") from None

    def _index(self, body) -> int:
        if isinstance(body, Body):
            if body.model is not self:
                raise ValueError(f"body {body.name!r} belongs to another model")
            return body.index
        if isinstance(body, str):
            return self.body(body).index
        if isinstance(body, (int, np.integer)) and -1 <= int(body) < self.n_bodies:
            return int(body)
        raise ValueError(f"expected a Body handle or a body name, got {body!r}")

    def _initial_R(self, body) -> np.ndarray:
        i = self._index(body)
        return np.eye(3) if i == GROUND else quat_to_matrix(self._q0[i][3:])

    def _initial_pos(self, body) -> np.ndarray:
        i = self._index(body)
        return np.zeros(3) if i == GROUND else self._q0[i][:3].copy()

    def _local_point(self, body, p_w) -> np.ndarray:
        return self._initial_R(body).T @ (np.asarray(p_w, float) - self._initial_pos(body))

    def _local_vec(self, body, a_w) -> np.ndarray:
        return self._initial_R(body).T @ np.asarray(a_w, float)

    def set_initial_pose(self, body, pos=None, quat=None, vel=None, omega=None):
        """Change a body's initial pose or velocity (before elements reference it)."""
        i = self._index(body)
        if i == GROUND:
            raise ValueError("the ground cannot move")
        if pos is not None:
            self._q0[i][:3] = _vec3(pos, f"body {self._names[i]!r}: pos")
        if quat is not None:
            q = np.asarray(quat, float)
            self._q0[i][3:] = q / np.linalg.norm(q)
        if vel is not None:
            self._v0[i][:3] = _vec3(vel, f"body {self._names[i]!r}: vel")
        if omega is not None:
            self._v0[i][3:] = _vec3(omega, f"body {self._names[i]!r}: omega")
        self._version += 1

    # ------------------------------------------------------------------ elements
    def _check_pair(self, a, b, what):
        ia = self._index(a)
        ib = self._index(b)
        if ia == ib:
            name = "ground" if ia == GROUND else self._names[ia]
            raise ValueError(f"{what}: connects body {name!r} to itself")
        return ia, ib

    def add_joint(self, joint: Joint) -> Joint:
        """Add a joint (or driver); returns it. Its name defaults to ``joint<k>``."""
        if not isinstance(joint, Joint):
            raise ValueError(f"add_joint expects a joint (e.g. td.Revolute), got {type(joint).__name__}")
        if joint.name is None:
            joint.name = f"joint{len(self.joints)}"
        what = f"{type(joint).__name__} {joint.name!r}"
        ia, ib = self._check_pair(joint.body_a, joint.body_b, what)
        self._claim(joint.name, "joint")
        try:
            joint._rows_cache = joint.rows(self, ia, ib)
            joint._point_b = self._local_point(joint.body_b, joint.point)
            joint._ib = ib
        except Exception:
            self._all_names.discard(joint.name)
            raise
        self.joints.append(joint)
        self._version += 1
        return joint

    def add_force(self, element: ForceElement) -> ForceElement:
        """Add a force element (TSDA, RSDA, Bushing, PointForce, PointTorque)."""
        if not isinstance(element, ForceElement):
            raise ValueError(f"add_force expects a force element, got {type(element).__name__}")
        if element.name is None:
            element.name = f"force{len(self.forces)}"
        what = f"{type(element).__name__} {element.name!r}"
        if element.body_a is not None:
            self._check_pair(element.body_a, element.body_b, what)
        else:
            if self._index(element.body_b) == GROUND:
                raise ValueError(f"{what}: a load on the ground has no effect")
        self._claim(element.name, "force element")
        self.forces.append(element)
        self._version += 1
        return element

    def add_marker(self, name: str, body, point) -> None:
        """A named point fixed on a body (world coordinates at the initial pose).

        Recorded as ``NAME.pos.{x,y,z}``, ``NAME.vel.*`` and ``NAME.acc.*``
        (world frame; the acceleration of the point, e.g. at the driver's seat).
        """
        self._claim(name, "marker")
        try:
            i = self._index(body)
            if i == GROUND:
                raise ValueError(f"marker {name!r}: a point on the ground does not move")
            p = self._local_point(body, _vec3(point, f"marker {name!r}: point"))
        except ValueError:
            self._all_names.discard(name)
            raise
        self.markers.append((name, i, p))

    def add_visual(self, body, shape) -> None:
        """Attach a visual shape to a body (drawn by plots, animations and the 3-D viewer).

        ``shape`` is any object with ``to_dict()`` (see :mod:`trackdyn.mbs.visuals`);
        it has no effect on the dynamics.
        """
        if not hasattr(shape, "to_dict"):
            raise ValueError(f"add_visual: shape {shape!r} has no to_dict()")
        self.visuals.append((self._index(body), shape))

    # ------------------------------------------------------------------ arrays
    def body_arrays(self):
        """``(mass (nb,), inertia (nb,3,3), q0 (nb,7), v0 (nb,6))`` as new arrays."""
        nb_ = self.n_bodies
        if nb_ == 0:
            raise ValueError("the model has no bodies")
        return (
            np.array(self._mass, dtype=float),
            np.array(self._inertia, dtype=float).reshape(nb_, 3, 3),
            np.array(self._q0, dtype=float).reshape(nb_, 7),
            np.array(self._v0, dtype=float).reshape(nb_, 6),
        )

    def __repr__(self) -> str:
        return f"Model({self.n_bodies} bodies, {len(self.joints)} joints, {len(self.forces)} force elements)"
