"""Force elements: descriptions added to a Model, and their struct-of-arrays blocks.

Descriptions (world coordinates at the model's initial pose):

- :class:`TSDA` translational spring-damper-actuator between two points, linear
  or with tables ``F_s(l)``, ``F_d(l̇)``, or a callable ``F(l, l̇, t)``;
- :class:`RSDA` rotational spring-damper-actuator about an axis (tables
  ``T_s(θ)``, ``T_d(θ̇)`` express preload and jounce/rebound stiffening);
- :class:`Bushing` linear 6-dof bushing (wallin-shabana-2013 eq. 15);
- :class:`PointForce` and :class:`PointTorque`, constant or functions of time,
  in the world or the body frame.

Gravity and gyroscopic torques belong to the bodies (see ``Model.gravity``).
Each block evaluates all its elements at once with a Numba kernel that also
returns exact Jacobians; :func:`trackdyn.mbs._force_kernels.scatter_elements`
adds them into the step's matrices.
"""

from __future__ import annotations

import numpy as np

from .._compiled import bound_call
from ..errors import StepFailed
from . import _force_kernels as FK
from .joints import _point, _unit, perpendicular_frame
from ..math.quaternion import matrix_to_quat

__all__ = ["TSDA", "RSDA", "Bushing", "PointForce", "PointTorque", "ForceElement"]


class ForceElement:
    """Base of force-element descriptions.

    ``coupling`` (``"full"``, ``"diagonal"`` or None for the system default)
    says whether the element's Jacobian couples its two bodies in the Newton
    matrix (see :class:`~trackdyn.formulations.absolute.AbsoluteSystem`).
    """

    name: str | None
    body_a: object
    body_b: object
    coupling: str | None = None

    def _set_coupling(self, coupling):
        if coupling not in (None, "full", "diagonal"):
            raise ValueError(f"{type(self).__name__} {self.name!r}: coupling must be 'full', 'diagonal' or None")
        self.coupling = coupling


def _table(tab, what):
    if tab is None:
        return None
    arr = np.asarray(tab, dtype=float)
    if arr.ndim != 2 or (arr.shape[1] != 2 and arr.shape[0] != 2):
        raise ValueError(f"{what}: expected a table of (x, y) pairs, got shape {arr.shape}")
    if arr.shape[1] != 2:
        arr = arr.T
    if len(arr) < 2:
        raise ValueError(f"{what}: a table needs at least 2 points")
    if np.any(np.diff(arr[:, 0]) <= 0):
        raise ValueError(f"{what}: x values must increase strictly, got {arr[:, 0].tolist()}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: table values must be finite")
    return arr


def _finite(x, what, nonneg=False):
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{what}: value {x} is not finite")
    if nonneg and x < 0:
        raise ValueError(f"{what}: must be >= 0, got {x}")
    return x


class TSDA(ForceElement):
    """Spring-damper-actuator between ``point_a`` (body a) and ``point_b`` (body b).

    Tension (positive pulls the points together), N:
    ``F = stiffness (l - free_length) + damping l̇ - actuation + F_s(l) + F_d(l̇)``
    with the optional piecewise-linear tables ``spring_table`` ((l, F) pairs)
    and ``damper_table`` ((l̇, F) pairs). ``force=callable(l, ldot, t)``
    replaces all of it (its partials are taken by central differences).
    ``free_length`` defaults to the initial distance.
    Recorded: ``NAME.force`` (tension), ``NAME.length``.
    """

    def __init__(self, body_a, body_b, point_a, point_b, stiffness=0.0, damping=0.0,
                 free_length=None, actuation=0.0, spring_table=None, damper_table=None,
                 force=None, name=None, coupling=None):
        w = f"TSDA {name!r}"
        self.body_a, self.body_b, self.name = body_a, body_b, name
        self._set_coupling(coupling)
        self.point_a = _point(point_a, f"{w}: point_a")
        self.point_b = _point(point_b, f"{w}: point_b")
        self.stiffness = _finite(stiffness, f"{w}: stiffness")
        self.damping = _finite(damping, f"{w}: damping")
        l0 = float(np.linalg.norm(self.point_b - self.point_a))
        self.free_length = l0 if free_length is None else _finite(free_length, f"{w}: free_length", True)
        self.actuation = _finite(actuation, f"{w}: actuation")
        self.spring_table = _table(spring_table, f"{w}: spring_table")
        self.damper_table = _table(damper_table, f"{w}: damper_table")
        if force is not None and not callable(force):
            raise ValueError(f"{w}: force must be a callable F(l, ldot, t)")
        self.force = force


class RSDA(ForceElement):
    """Rotational spring-damper-actuator between body a and body b about ``axis``.

    The angle θ is body b's rotation relative to body a about ``axis``
    (right-hand rule), zero at the initial pose. Torque on body b, N m:
    ``-(stiffness (θ - free_angle) + damping θ̇ - actuation + T_s(θ) + T_d(θ̇))``
    about ``axis``. Recorded: ``NAME.torque``, ``NAME.angle``.
    """

    def __init__(self, body_a, body_b, axis=(0.0, 0.0, 1.0), stiffness=0.0, damping=0.0,
                 free_angle=0.0, actuation=0.0, spring_table=None, damper_table=None, name=None, coupling=None):
        w = f"RSDA {name!r}"
        self.body_a, self.body_b, self.name = body_a, body_b, name
        self._set_coupling(coupling)
        self.axis = _unit(axis, f"{w}: axis")
        self.stiffness = _finite(stiffness, f"{w}: stiffness")
        self.damping = _finite(damping, f"{w}: damping")
        self.free_angle = _finite(free_angle, f"{w}: free_angle")
        self.actuation = _finite(actuation, f"{w}: actuation")
        self.spring_table = _table(spring_table, f"{w}: spring_table")
        self.damper_table = _table(damper_table, f"{w}: damper_table")


def _mat3(x, what):
    a = np.asarray(x, dtype=float)
    if a.shape == ():
        a = np.eye(3) * float(a)
    elif a.shape == (3,):
        a = np.diag(a)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected a number, 3 numbers or a 3x3 matrix")
    return a


class Bushing(ForceElement):
    """Linear 6-dof bushing at ``point`` (wallin-shabana-2013 eq. 15).

    ``stiffness``/``damping`` (translational, N/m, N s/m) and
    ``rot_stiffness``/``rot_damping`` (N m/rad, N m s/rad) are numbers,
    3-vectors (diagonal) or 3x3 matrices in the bushing frame, whose axes are
    the columns of ``frame`` (world, initial pose; default the world axes) and
    which moves with body b. Recorded: ``NAME.force.{x,y,z}`` and
    ``NAME.torque.{x,y,z}`` on body b (world frame).
    """

    def __init__(self, body_a, body_b, point, stiffness=0.0, damping=0.0, rot_stiffness=0.0,
                 rot_damping=0.0, frame=None, name=None, coupling=None):
        w = f"Bushing {name!r}"
        self.body_a, self.body_b, self.name = body_a, body_b, name
        self._set_coupling(coupling)
        self.point = _point(point, f"{w}: point")
        self.Kr = _mat3(stiffness, f"{w}: stiffness")
        self.Cr = _mat3(damping, f"{w}: damping")
        self.Kt = _mat3(rot_stiffness, f"{w}: rot_stiffness")
        self.Ct = _mat3(rot_damping, f"{w}: rot_damping")
        F = np.eye(3) if frame is None else np.asarray(frame, dtype=float)
        if F.shape != (3, 3) or not np.allclose(F.T @ F, np.eye(3), atol=1e-9) or np.linalg.det(F) < 0:
            raise ValueError(f"{w}: frame must be a right-handed rotation matrix")
        self.frame = F


class PointForce(ForceElement):
    """A force on ``body`` at ``point`` (world coordinates at the initial pose).

    ``force`` is a 3-vector or a callable ``f(t) -> 3-vector``, N, in the world
    frame or, with ``frame="body"``, in the body frame (it turns with the body).
    """

    is_torque = False

    def __init__(self, body, force, point=None, frame="world", name=None):
        w = f"{type(self).__name__} {name!r}"
        self.body_b, self.body_a, self.name = body, None, name
        if frame not in ("world", "body"):
            raise ValueError(f"{w}: frame must be 'world' or 'body', got {frame!r}")
        self.frame = frame
        self.point = None if point is None else _point(point, f"{w}: point")
        if callable(force):
            self.load = force
        else:
            self.load = _point(force, f"{w}: load")


class PointTorque(PointForce):
    """A torque on ``body`` (N m), world or body frame, constant or ``f(t)``."""

    is_torque = True

    def __init__(self, body, torque, frame="world", name=None):
        super().__init__(body, torque, None, frame, name)


# =========================================================================== blocks
class _Tables:
    """Concatenated piecewise-linear tables shared by the elements of a block."""

    def __init__(self):
        self.x, self.y = [], []

    def add(self, tab):
        if tab is None:
            return (0, 0)
        start = sum(len(a) for a in self.x)
        self.x.append(tab[:, 0])
        self.y.append(tab[:, 1])
        return (start, len(tab))

    def arrays(self):
        if not self.x:
            return np.zeros(1), np.zeros(1)
        return np.concatenate(self.x), np.concatenate(self.y)


class ElementBlock:
    """Arrays of one element type plus output buffers; subclasses define ``evaluate``.

    Attributes common to every block: ``names`` (n,), ``body`` (n, 2) int,
    ``Q`` (n, 12), ``Kx``/``Kv`` (n, 12, 12), ``slot`` (n, 12, 12) set by the
    formulation once the KKT pattern is known.
    """

    coupled = True  # the element couples its two bodies in the Newton matrix
    rotational = False  # Kx, Kv are zero outside the rotations' rows and columns (see scatter_rotational)

    def _alloc(self, n, elems=()):
        self.n = n
        self.elem_coupling = [getattr(e, "coupling", None) for e in elems] or [None] * n
        self.Q = np.zeros((n, 12))
        self.Kx = np.zeros((n, 12, 12))
        self.Kv = np.zeros((n, 12, 12))
        self.slot = np.full((n, 12, 12), -1, dtype=np.int64)
        # the kernels' work space (3 x 12 and 3 x 3 partials), owned here so that they allocate nothing
        self.work = np.zeros((13, 3, 12))
        self.w33 = np.zeros((2, 3, 3))

    def _kernel(self, kin, v):
        """The compiled evaluation and its arguments, ``(dispatcher, args)``."""
        raise NotImplementedError  # pragma: no cover - interface

    def evaluate(self, t, kin, v):
        fn, args = self._kernel(kin, v)
        fn(*args)

    def step_call(self, kin, v):
        """The evaluation with ``kin`` and ``v`` bound (:func:`~trackdyn._compiled.bound_call`), or None when
        it runs Python each time (user callables)."""
        fn, args = self._kernel(kin, v)
        return bound_call(fn, *args)

    def series(self):  # pragma: no cover - interface
        return {}


class TSDABlock(ElementBlock):
    def __init__(self, elems, model):
        n = len(elems)
        self._alloc(n, elems)
        self.names = [e.name for e in elems]
        self.body = np.array([[model._index(e.body_a), model._index(e.body_b)] for e in elems],
                             dtype=np.int64).reshape(n, 2)
        self.s = np.zeros((n, 2, 3))
        tabs = _Tables()
        self.spring_tab = np.zeros((n, 2), dtype=np.int64)
        self.damper_tab = np.zeros((n, 2), dtype=np.int64)
        for k, e in enumerate(elems):
            self.s[k, 0] = model._local_point(e.body_a, e.point_a)
            self.s[k, 1] = model._local_point(e.body_b, e.point_b)
            self.spring_tab[k] = tabs.add(e.spring_table)
            self.damper_tab[k] = tabs.add(e.damper_table)
        self.tab_x, self.tab_y = tabs.arrays()
        self.k = np.array([e.stiffness for e in elems], dtype=float)
        self.c = np.array([e.damping for e in elems], dtype=float)
        self.l0 = np.array([e.free_length for e in elems], dtype=float)
        self.f_act = np.array([e.actuation for e in elems], dtype=float)
        self.callables = [(k, e.force) for k, e in enumerate(elems) if e.force is not None]
        self.use_ext = np.zeros(n, dtype=np.bool_)
        for k, _ in self.callables:
            self.use_ext[k] = True
        self.ext_force = np.zeros(n)
        self.ext_dl = np.zeros(n)
        self.ext_dldot = np.zeros(n)
        self.force = np.zeros(n)
        self.length = np.zeros(n)
        self.rate = np.zeros(n)

    def _kernel(self, kin, v):
        return FK.tsda_eval, (self.body, self.s, self.k, self.c, self.l0, self.f_act, self.tab_x, self.tab_y,
                              self.spring_tab, self.damper_tab, self.use_ext, self.ext_force, self.ext_dl,
                              self.ext_dldot, kin.pos, kin.R, kin.vel, kin.omega_w, v, self.Q, self.Kx, self.Kv,
                              self.force, self.length, self.rate, self.work, self.w33)

    def evaluate(self, t, kin, v):
        fn, args = self._kernel(kin, v)
        if self.callables:
            # lengths and rates first (cheap pass), then the user's law
            fn(*args)
            for k, law in self.callables:
                l, ld = self.length[k], self.rate[k]
                el, ed = 1e-7 * max(1.0, abs(l)), 1e-7 * max(1.0, abs(ld))
                self.ext_force[k] = law(l, ld, t)
                self.ext_dl[k] = (law(l + el, ld, t) - law(l - el, ld, t)) / (2 * el)
                self.ext_dldot[k] = (law(l, ld + ed, t) - law(l, ld - ed, t)) / (2 * ed)
        fn(*args)

    def step_call(self, kin, v):
        return None if self.callables else super().step_call(kin, v)

    def series(self):
        out = {}
        for k, nm in enumerate(self.names):
            out[f"{nm}.force"] = (self.force, k)
            out[f"{nm}.length"] = (self.length, k)
        return out


class RSDABlock(ElementBlock):
    rotational = True  # a torque about an axis from orientations and angular velocities only

    def __init__(self, elems, model):
        n = len(elems)
        self._alloc(n, elems)
        self.names = [e.name for e in elems]
        self.body = np.array([[model._index(e.body_a), model._index(e.body_b)] for e in elems],
                             dtype=np.int64).reshape(n, 2)
        self.zi = np.zeros((n, 3))
        self.xi = np.zeros((n, 3))
        self.xj = np.zeros((n, 3))
        tabs = _Tables()
        self.spring_tab = np.zeros((n, 2), dtype=np.int64)
        self.damper_tab = np.zeros((n, 2), dtype=np.int64)
        for k, e in enumerate(elems):
            x, _, z = perpendicular_frame(e.axis)
            self.zi[k] = model._local_vec(e.body_a, z)
            self.xi[k] = model._local_vec(e.body_a, x)
            self.xj[k] = model._local_vec(e.body_b, x)
            self.spring_tab[k] = tabs.add(e.spring_table)
            self.damper_tab[k] = tabs.add(e.damper_table)
        self.tab_x, self.tab_y = tabs.arrays()
        self.k = np.array([e.stiffness for e in elems], dtype=float)
        self.c = np.array([e.damping for e in elems], dtype=float)
        self.theta0 = np.array([e.free_angle for e in elems], dtype=float)
        self.t_act = np.array([e.actuation for e in elems], dtype=float)
        self.torque = np.zeros(n)
        self.angle = np.zeros(n)
        self.rate = np.zeros(n)

    def _kernel(self, kin, v):
        return FK.rsda_eval, (self.body, self.zi, self.xi, self.xj, self.k, self.c, self.theta0, self.t_act,
                              self.tab_x, self.tab_y, self.spring_tab, self.damper_tab, kin.pos, kin.R, kin.vel,
                              kin.omega_w, v, self.Q, self.Kx, self.Kv, self.torque, self.angle, self.rate)

    def series(self):
        out = {}
        for k, nm in enumerate(self.names):
            out[f"{nm}.torque"] = (self.torque, k)
            out[f"{nm}.angle"] = (self.angle, k)
        return out


class BushingBlock(ElementBlock):
    def __init__(self, elems, model):
        n = len(elems)
        self._alloc(n, elems)
        self.names = [e.name for e in elems]
        self.body = np.array([[model._index(e.body_a), model._index(e.body_b)] for e in elems],
                             dtype=np.int64).reshape(n, 2)
        self.s = np.zeros((n, 2, 3))
        self.frame = np.zeros((n, 2, 3, 3))
        self.frame_q = np.zeros((n, 2, 4))
        for k, e in enumerate(elems):
            for side, b in enumerate((e.body_a, e.body_b)):
                self.s[k, side] = model._local_point(b, e.point)
                Fl = model._initial_R(b).T @ e.frame
                self.frame[k, side] = Fl
                self.frame_q[k, side] = matrix_to_quat(Fl)
        self.Kr = np.array([e.Kr for e in elems]).reshape(n, 3, 3)
        self.Cr = np.array([e.Cr for e in elems]).reshape(n, 3, 3)
        self.Kt = np.array([e.Kt for e in elems]).reshape(n, 3, 3)
        self.Ct = np.array([e.Ct for e in elems]).reshape(n, 3, 3)
        self.defl = np.zeros((n, 3))
        self.rot = np.zeros((n, 3))
        self.force = np.zeros((n, 3))
        self.moment = np.zeros((n, 3))

    def _kernel(self, kin, v):
        return FK.bushing_eval, (self.body, self.s, self.frame, self.frame_q, self.Kr, self.Cr, self.Kt, self.Ct,
                                 kin.q_ext, kin.pos, kin.R, kin.vel, kin.omega_w, v, self.Q, self.Kx, self.Kv,
                                 self.defl, self.rot, self.force, self.moment, self.work)

    def series(self):
        out = {}
        for k, nm in enumerate(self.names):
            for a, ax in enumerate("xyz"):
                out[f"{nm}.force.{ax}"] = (self.force[:, a], k)
                out[f"{nm}.torque.{ax}"] = (self.moment[:, a], k)
        return out


class PointLoadBlock(ElementBlock):
    coupled = False

    def __init__(self, elems, model):
        n = len(elems)
        self._alloc(n, elems)
        self.names = [e.name for e in elems]
        self.body = np.array([[-1, model._index(e.body_b)] for e in elems], dtype=np.int64).reshape(n, 2)
        self.bj = self.body[:, 1].copy()
        self.s = np.zeros((n, 3))
        for k, e in enumerate(elems):
            if e.point is not None:
                self.s[k] = model._local_point(e.body_b, e.point)
            else:
                self.s[k] = 0.0
        self.is_torque = np.array([e.is_torque for e in elems], dtype=np.bool_)
        self.body_frame = np.array([e.frame == "body" for e in elems], dtype=np.bool_)
        self.load = np.zeros((n, 3))
        self.fns = []
        for k, e in enumerate(elems):
            if callable(e.load):
                self.fns.append((k, e.load))
            else:
                self.load[k] = e.load

    def _kernel(self, kin, v):
        return FK.point_load_eval, (self.bj, self.s, self.load, self.is_torque, self.body_frame, kin.R,
                                    self.Q, self.Kx, self.Kv, self.work)

    def evaluate(self, t, kin, v):
        for k, fn in self.fns:
            val = np.asarray(fn(t), dtype=float)
            if val.shape != (3,) or not np.all(np.isfinite(val)):
                raise StepFailed(f"t = {t:.6g} s: load {self.names[k]!r}: f({t}) returned {val!r}, expected 3 finite numbers")
            self.load[k] = val
        super().evaluate(t, kin, v)

    def step_call(self, kin, v):
        return None if self.fns else super().step_call(kin, v)

    def series(self):
        return {}


BLOCK_TYPES = [(TSDA, TSDABlock), (RSDA, RSDABlock), (Bushing, BushingBlock), (PointForce, PointLoadBlock)]
