"""Subsystem synthesis (kim-2012): a base body plus subsystems reduced to effective mass and force.

A :class:`SynthesisSystem` is built from a :class:`~trackdyn.mbs.model.Model`
(the same bodies, joints and spring-dampers the absolute formulation steps):
one *base* body and a batch of *subsystems*, each one body hinged to the base
by a :class:`~trackdyn.mbs.joints.Revolute` with an
:class:`~trackdyn.mbs.forces.RSDA` about the same axis and a point tyre
(:mod:`trackdyn.contact.tyre`). Two coordinate choices of the subsystems:

``cartesian``
    The body in absolute coordinates ``(r, quaternion)`` with its joint's five
    rows (the project's constraint primitives). Its effective mass and force
    on the base (kim-2012 eq. 9-10)::

        M̆ = Φ0ᵀ S⁻¹ Φ0,   ğ = Φ0ᵀ S⁻¹ (γ̄ − Φ̄ M̄⁻¹ ḡ),   S = Φ̄ M̄⁻¹ Φ̄ᵀ

    and, once the base acceleration ``a0`` is known, ``λ̄ = S⁻¹(Φ0 a0 + Φ̄ M̄⁻¹ ḡ
    − γ̄)`` and ``ā = M̄⁻¹(ḡ − Φ̄ᵀλ̄)`` (eq. 12-13). Positions are kept on the
    joint's manifold by generalized coordinate partitioning.
``joint``
    The joint angle θ measured from a massless virtual base body fixed to the
    base (kim-2012 eq. 21-30): the body's velocity is ``T Y0 + b θ̇``, its
    acceleration ``T Ẏ0 + b θ̈ + c``; with ``M_yy = TᵀM T``, ``M_yq = TᵀM b``,
    ``M_qq = bᵀ M b``, ``P_y = Tᵀ(g − M c)``, ``P_q = bᵀ(g − M c) + Q_θ``
    (Q_θ the spring-damper torque)::

        M̆ = M_yy − M_yq M_qq⁻¹ M_yqᵀ,   P̆ = P_y − M_yq M_qq⁻¹ P_q,   θ̈ = M_qq⁻¹ (P_q − M_yqᵀ Ẏ0)

    (no cut joints here, so eq. 25-26's Φ_q terms are absent: the subsystem is an ODE).

The base equation (eq. 11 / 28) ``(M0 + Σ M̆) Ẏ0 = g0 + Σ ğ`` is solved on the
base's own freedom ``Y0 = B u``: ``B = I`` for a free base, one column for a
base on a translational joint to the ground along a fixed axis (the 1/6
robot's chassis). Velocities are ``(ṙ world, ω̄ body)`` per body, as in the
rest of the project, so ``Y0`` is the base's own velocity.

All subsystems are one batch evaluated by the compiled kernels of
:mod:`._synthesis_kernels`; the time loops (:meth:`SynthesisSystem.run`) are
compiled too, so the cost measured is the method's, not Python's.

Example
-------
>>> from trackdyn.experiments.synthesis import robot_1_6
>>> sys_ = robot_1_6().synthesis()
>>> a0, sub = sys_.accelerations("joint")
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._compiled import bound_call
from ..mbs.forces import RSDA
from ..mbs.joints import Prismatic, Revolute, perpendicular_frame
from . import _synthesis_kernels as SK
from .absolute import AbsoluteSystem

__all__ = ["COORDINATES", "SCHEMES", "Subsystem", "SynthesisRun", "SynthesisSystem", "ChainSynthesis",
           "SynthesisAbsoluteSystem"]

COORDINATES = ("cartesian", "joint")
SCHEMES = ("explicit", "explicit-implicit")
BASE_PREDICTIONS = ("last", "linear")


@dataclass(frozen=True)
class Subsystem:
    """One subsystem: a body on a revolute to the base, its spring-damper and its tyre.

    ``joint`` and ``spring`` are the names of the model's Revolute and RSDA
    (the Revolute's ``body_a`` must be the base); ``tyre_centre`` the wheel
    centre (world, initial pose); ``radius`` (m), ``stiffness`` (N/m) and
    ``damping`` (N s/m) the tyre's.
    """

    body: str
    joint: str
    spring: str
    tyre_centre: tuple
    radius: float
    stiffness: float
    damping: float


@dataclass
class SynthesisRun:
    """A run's record: base ``z``, ``ż``, ``z̈`` per step (``out`` (nsteps+1, 3)), steps completed, the largest
    Newton count of each step and the Newton-matrix evaluations (explicit-implicit models)."""

    coordinates: str
    scheme: str
    step: float
    steps: int
    completed: int
    out: np.ndarray
    iterations: np.ndarray
    jacobian_evals: int = 0

    @property
    def stable(self) -> bool:
        return self.completed == self.steps

    @property
    def t(self) -> np.ndarray:
        return self.step * np.arange(self.completed + 1)


class SynthesisSystem:
    """A model as base body plus a batch of subsystems (module docstring).

    Parameters
    ----------
    model : Model
    base : str
        The base body's name.
    subsystems : sequence of Subsystem
    road : ndarray (m, 3)
        Sines of the road (:func:`trackdyn.contact.tyre.road_height`).
    road_speed, road_fade : float
        Speed (m/s) of the road under the tyres and its fade-in length (m).
    base_joint : str or None
        A Prismatic joint of the base to the ground (its axis is the base's
        one freedom); None for a free base.
    """

    def __init__(self, model, base, subsystems, road, road_speed=0.0, road_fade=0.0, base_joint=None):
        self.model = model
        self.subsystems = list(subsystems)
        if not self.subsystems:
            raise ValueError("SynthesisSystem: at least one subsystem is needed")
        self.road = np.ascontiguousarray(road, dtype=float).reshape(-1, 3)
        self.road_speed, self.road_fade = float(road_speed), float(road_fade)
        self.absolute = AbsoluteSystem(model, remove_redundant=False)
        names = model.body_names
        self.i_base = names.index(base)
        mass, inertia, q0, v0 = self.absolute.mass, self.absolute.inertia, self.absolute.q0, self.absolute.v0
        self.m0 = float(mass[self.i_base])
        self.I0 = inertia[self.i_base].copy()
        self.gravity = np.asarray(model.gravity, float).copy()
        self.q0_base = q0[self.i_base].copy()
        self.v0_base = v0[self.i_base].copy()
        joints = {j.name: j for j in model.joints}
        forces = {getattr(f, "name", None): f for f in model.forces} if hasattr(model, "forces") else {}
        if base_joint is None:
            self.B = np.eye(6)
        else:
            bj = joints[base_joint]
            if not isinstance(bj, Prismatic) or not (bj.body_a.is_ground or bj.body_b.is_ground):
                raise ValueError(f"SynthesisSystem: base_joint {base_joint!r} must be a Prismatic to the ground")
            self.B = np.zeros((6, 1))
            self.B[:3, 0] = bj.axis
        n = self.n = len(self.subsystems)
        self.sp = np.zeros((n, SK.NP))
        self.Rrel0 = np.zeros((n, 3, 3))
        self.q1_init = np.zeros((n, 7))
        self.v1_init = np.zeros((n, 6))
        self.c_type = np.zeros((n, SK.NR), np.int64)
        self.c_a = np.zeros((n, SK.NR, 2, 3))
        self.c_s = np.zeros((n, SK.NR, 2, 3))
        self.c_c = np.zeros((n, SK.NR, 3))
        self.c_u = np.zeros((n, SK.NR, 2, 3))
        self.c_f = np.zeros((n, SK.NR, 3))
        self.c_body = np.tile(np.array([[0, 1]], np.int64), (SK.NR, 1))
        R0 = self._R(self.q0_base)
        for i, sub in enumerate(self.subsystems):
            ib = names.index(sub.body)
            joint = joints.get(sub.joint)
            if not isinstance(joint, Revolute) or joint.body_a.index != self.i_base or joint.body_b.index != ib:
                raise ValueError(f"SynthesisSystem: subsystem {sub.body!r}: joint {sub.joint!r} must be a Revolute "
                                 f"from the base {base!r} (body_a) to {sub.body!r} (body_b)")
            spring = forces.get(sub.spring)
            if not isinstance(spring, RSDA) or spring.body_a.index != self.i_base or spring.body_b.index != ib:
                raise ValueError(f"SynthesisSystem: subsystem {sub.body!r}: spring {sub.spring!r} must be an RSDA "
                                 f"from the base to the body")
            if np.linalg.norm(np.cross(spring.axis, joint.axis)) > 1e-12:
                raise ValueError(f"SynthesisSystem: subsystem {sub.body!r}: the RSDA's axis must be the joint's")
            q1, v1 = q0[ib], v0[ib]
            R1 = self._R(q1)
            self.q1_init[i], self.v1_init[i] = q1, v1
            self.Rrel0[i] = R0.T @ R1
            axis = np.asarray(joint.axis, float)
            u, _, _ = perpendicular_frame(axis)
            p = self.sp[i]
            p[SK.P_M] = mass[ib]
            p[SK.P_I:SK.P_I + 9] = inertia[ib].ravel()
            p[SK.P_IINV:SK.P_IINV + 9] = np.linalg.inv(inertia[ib]).ravel()
            p[SK.P_S0:SK.P_S0 + 3] = R0.T @ (joint.point - self.q0_base[:3])
            p[SK.P_S1:SK.P_S1 + 3] = R1.T @ (joint.point - q1[:3])
            p[SK.P_A0:SK.P_A0 + 3] = R0.T @ axis
            p[SK.P_U0:SK.P_U0 + 3] = R0.T @ u
            p[SK.P_C1:SK.P_C1 + 3] = R1.T @ (np.asarray(sub.tyre_centre, float) - q1[:3])
            p[SK.P_R], p[SK.P_KT], p[SK.P_CT] = sub.radius, sub.stiffness, sub.damping
            p[SK.P_KR], p[SK.P_CR], p[SK.P_TH0] = spring.stiffness, spring.damping, spring.free_angle
            if spring.spring_table is not None or spring.damper_table is not None or spring.actuation:
                raise ValueError(f"SynthesisSystem: spring {sub.spring!r}: tables and actuation are not supported")
            rows = self.absolute.joint_rows[[j.name for j in model.joints].index(sub.joint)]
            a = self.absolute
            self.c_type[i] = a.row_type[rows]
            self.c_a[i], self.c_s[i], self.c_c[i] = a.row_a[rows], a.row_s[rows], a.row_c[rows]
            self.c_u[i], self.c_f[i] = a.row_u[rows], a.row_f[rows]
        self.th_init, self.thd_init = self.joint_coordinates(self.q0_base, self.v0_base, self.q1_init, self.v1_init)

    @staticmethod
    def _R(q):
        R = np.zeros((3, 3))
        SK._quat_R(np.asarray(q, float), R)
        return R

    # ------------------------------------------------------------------ coordinates
    def joint_coordinates(self, q0, v0, q1, v1):
        """θ, θ̇ (n,) of every subsystem from absolute base and body states."""
        R0 = self._R(q0)
        th, thd = np.zeros(self.n), np.zeros(self.n)
        w0 = R0 @ v0[3:]
        for i in range(self.n):
            p = self.sp[i]
            R1 = self._R(q1[i])
            aw = R0 @ p[SK.P_A0:SK.P_A0 + 3]
            u0w = R0 @ p[SK.P_U0:SK.P_U0 + 3]
            u1w = R1 @ (self.Rrel0[i].T @ p[SK.P_U0:SK.P_U0 + 3])
            th[i] = np.arctan2(np.cross(aw, u0w) @ u1w, u0w @ u1w)
            thd[i] = aw @ (R1 @ v1[i, 3:] - w0)
        return th, thd

    def _state(self, q0, v0, q1, v1):
        q0 = self.q0_base.copy() if q0 is None else np.array(q0, float)
        v0 = self.v0_base.copy() if v0 is None else np.array(v0, float)
        q1 = self.q1_init.copy() if q1 is None else np.array(q1, float).reshape(self.n, 7)
        v1 = self.v1_init.copy() if v1 is None else np.array(v1, float).reshape(self.n, 6)
        return q0, v0, q1, v1

    # ------------------------------------------------------------------ one instant
    def effective(self, coordinates, t=0.0, q0=None, v0=None, q1=None, v1=None):
        """Σ of the subsystems' effective mass (6, 6) and force (6) on the base's (ṙ, ω̄) at one instant.

        States default to the model's initial one; ``q1``, ``v1`` (n, 7), (n, 6)
        are the bodies' absolute states (the joint coordinates are computed
        from them for ``coordinates="joint"``).
        """
        q0, v0, q1, v1 = self._state(q0, v0, q1, v1)
        M, P = np.zeros((6, 6)), np.zeros(6)
        w = SK.make_work(self.n)
        if coordinates == "cartesian":
            for i in range(self.n):
                SK.cart_terms(i, t, self.sp, self.Rrel0, self.c_type, self.c_body, self.c_a, self.c_s, self.c_c,
                              self.c_u, self.c_f, q0, v0, q1[i], v1[i], self.gravity, self.road, self.road_speed,
                              self.road_fade, M, P, w)
        elif coordinates == "joint":
            th, thd = self.joint_coordinates(q0, v0, q1, v1)
            for i in range(self.n):
                SK.joint_terms(i, t, self.sp, self.Rrel0, q0, v0, th[i], thd[i], self.gravity, self.road,
                               self.road_speed, self.road_fade, M, P, w[1], w[2], w[3])
        else:
            raise ValueError(f"coordinates must be one of {COORDINATES}, got {coordinates!r}")
        return M, P

    def accelerations(self, coordinates, t=0.0, q0=None, v0=None, q1=None, v1=None):
        """Base acceleration a0 (6) and the subsystems' accelerations: (n, 6) bodies' ``(r̈, ω̄̇)`` for
        ``cartesian``, ``(θ̈,)`` (n,) for ``joint``."""
        q0, v0, q1, v1 = self._state(q0, v0, q1, v1)
        M, P, a0 = np.zeros((6, 6)), np.zeros(6), np.zeros(6)
        w = SK.make_work(self.n)
        if coordinates == "cartesian":
            a1, lam = np.zeros((self.n, 6)), np.zeros((self.n, SK.NR))
            SK.evaluate_cart(t, q0, v0, q1, v1, self.m0, self.I0, self.B, self.gravity, self.sp, self.Rrel0,
                             self.c_type, self.c_body, self.c_a, self.c_s, self.c_c, self.c_u, self.c_f, self.road,
                             self.road_speed, self.road_fade, w, M, P, a0, a1, lam)
            return a0, a1
        if coordinates == "joint":
            th, thd = self.joint_coordinates(q0, v0, q1, v1)
            thdd = np.zeros(self.n)
            SK.evaluate_joint(t, q0, v0, th, thd, self.m0, self.I0, self.B, self.gravity, self.sp, self.Rrel0,
                              self.road, self.road_speed, self.road_fade, w, M, P, a0, thdd)
            return a0, thdd
        raise ValueError(f"coordinates must be one of {COORDINATES}, got {coordinates!r}")

    # ------------------------------------------------------------------ time loops
    def run(self, coordinates, scheme, step, t_end, alpha=-0.2, newton_rtol=1e-8, newton_atol=1e-10,
            newton_max_iter=20, constraint_tol=1e-12, bound=1.0, base_prediction="last",
            weighted_coupling=False, projection=False):
        """Integrate from the initial state with one of kim-2012's four models (Table 2).

        ``explicit``: AB3 on everything (AB1, AB2 for the first two steps), one
        synthesis evaluation per step. ``explicit-implicit``: AB3 on the base,
        HHT-α (``alpha``) on the subsystems with Newton (``newton_*``) per step,
        the base at ``t_{n+1}`` from AB3 and its acceleration from ``t_n`` in
        the subsystems' equations; the base equation at ``t_{n+1}`` is then
        solved with the new subsystem states (docs/synthesis.md: the coupling).
        Joint model only: ``base_prediction`` is the base acceleration put into
        eq. 31, ``"last"`` (from t_n) or ``"linear"`` (extrapolated from t_n and
        t_{n-1}); ``weighted_coupling`` α-weights the base's inertial coupling
        term like the forces (eq. 31 as printed does not; that makes the scheme
        first order for α ≠ 0, docs/synthesis.md). Cartesian model only:
        ``projection`` puts each subsystem back on its position and velocity
        constraints by coordinate partitioning after its HHT step (the paper
        does not). The defaults are the paper's.
        A run stops early (``completed < steps``) when it becomes non-finite,
        the base leaves ``bound`` (m) of its start or Newton fails.
        """
        if coordinates not in COORDINATES:
            raise ValueError(f"coordinates must be one of {COORDINATES}, got {coordinates!r}")
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
        if base_prediction not in BASE_PREDICTIONS:
            raise ValueError(f"base_prediction must be one of {BASE_PREDICTIONS}, got {base_prediction!r}")
        if not (step > 0 and t_end > 0):
            raise ValueError(f"step and t_end must be positive, got {step!r}, {t_end!r}")
        nsteps = round(t_end / step)
        q0, v0, q1, v1 = self._state(None, None, None, None)
        out = np.full((nsteps + 1, 3), np.nan)
        iters = np.zeros(nsteps, np.int64)
        jac = np.zeros(1, np.int64)
        common = (self.m0, self.I0, self.B, self.gravity, self.sp, self.Rrel0)
        rows = (self.c_type, self.c_body, self.c_a, self.c_s, self.c_c, self.c_u, self.c_f)
        road = (self.road, self.road_speed, self.road_fade)
        if coordinates == "joint":
            th, thd = self.th_init.copy(), self.thd_init.copy()
            if scheme == "explicit":
                done = SK.run_joint_explicit(step, nsteps, q0, v0, th, thd, *common, *road, bound, out)
            else:
                done = SK.run_joint_ei(step, nsteps, q0, v0, th, thd, *common, *road, bound, alpha, newton_rtol,
                                       newton_atol, newton_max_iter, BASE_PREDICTIONS.index(base_prediction),
                                       int(weighted_coupling), out, iters, jac)
        else:
            if scheme == "explicit":
                done = SK.run_cart_explicit(step, nsteps, q0, v0, q1, v1, *common, *rows, *road, bound,
                                            constraint_tol, out)
            else:
                done = SK.run_cart_ei(step, nsteps, q0, v0, q1, v1, *common, *rows, *road, bound, constraint_tol,
                                      alpha, newton_rtol, newton_atol, newton_max_iter, int(projection), out, iters,
                                      jac)
        return SynthesisRun(coordinates, scheme, float(step), nsteps, int(done), out, iters, jac[0].item())


# ====================================================================================================== vehicles
# A free base (6 dof) with subsystems that are small open chains (an arm and its wheel), on the absolute
# system's own forces: :class:`ChainSynthesis` (one instant) and :class:`~trackdyn.integrators.synthesis.SynthesisStepper` (the time step).



class SynthesisAbsoluteSystem(AbsoluteSystem):
    """The absolute system of a model stepped by :class:`~trackdyn.integrators.synthesis.SynthesisStepper`: it supplies the forces (the same
    force elements and providers as the absolute formulation), the recorded series and the initial state.
    The stepper's coordinates are the joints' own, without multipliers, so the system declares no joint
    reactions (``joint_reactions = False``): the recorder writes no ``*.force.*``/``*.torque.*`` series of
    joints, rather than zero-filled ones."""

    formulation = "synthesis"
    joint_reactions = False

    def chain_synthesis(self, base, chains, passive=()) -> "ChainSynthesis":
        """The :class:`ChainSynthesis` of this system (base body, chains of bodies, passive bodies): what
        :class:`~trackdyn.integrators.synthesis.SynthesisStepper` steps."""
        return ChainSynthesis(self, base, chains, passive)


class ChainSynthesis:
    """A model as a free base body plus subsystems that are open chains of bodies on revolute and prismatic
    joints (kim-2012's joint-coordinate subsystems, eq. 21-30, generalised from one body to a chain), and
    optionally *passive* bodies that the synthesis does not step.

    Parameters
    ----------
    system : AbsoluteSystem
        The model's absolute system: its masses, initial pose, and its force evaluation
        (:meth:`AbsoluteSystem.eval_forces`: gravity, gyroscopic terms, force elements and providers), which
        the synthesis projects through its velocity transformation.
    base : str
        The base body (6 dof, free).
    chains : sequence of sequence of str
        Each subsystem's bodies from the base outwards (e.g. ``["left.arm[0]", "left.wheel[0]"]``); each body
        hangs on the one before it (the first on the base) by a :class:`~trackdyn.mbs.joints.Revolute` (its
        coordinate θ the angle about the joint's axis, rad) or a :class:`~trackdyn.mbs.joints.Prismatic` (θ the
        slide along the joint's axis, m, positive along the axis as given in the joint, carried by the parent).
    passive : sequence of str, optional
        Bodies in no chain that the synthesis does not step (e.g. a track's shoes): a caller steps them and
        writes their rows of :attr:`q`, :attr:`v` before each :meth:`evaluate` (:meth:`accelerations` takes
        them from its state). Their forces on the base and chain bodies (force elements, contact) act through
        the absolute system's force evaluation; joints among passive bodies only are left to the caller, a
        joint between a passive body and the base or a chain body is refused (the coupling must be by forces).

    Every body of the model is the base, in exactly one chain, or passive; every joint is one of the chains'
    joints or joins passive bodies only. The joint coordinates are zero at the model's assembled pose.
    Raises ValueError naming the body or joint that does not fit.

    Attributes
    ----------
    passive : numpy.ndarray
        (n_passive,) int64: the model indices of the passive bodies, in the order given.
    ch_type : numpy.ndarray
        (n, NBS) int64: each chain body's joint, 0 revolute, 1 prismatic (-1 unused).

    Example
    -------
    >>> cs = system.chain_synthesis("chassis", [["idler.carrier", "idler.wheel"]], passive=shoes)  # doctest: +SKIP
    """

    def __init__(self, system, base: str, chains, passive=()):
        from . import _synthesis_kernels as K

        self.system = system
        model = system.model
        names = list(model.body_names)
        idx = {nm: k for k, nm in enumerate(names)}
        if base not in idx:
            raise ValueError(f"ChainSynthesis: base {base!r} is not a body of the model")
        self.base = idx[base]
        chains = [list(c) for c in chains]
        if not chains:
            raise ValueError("ChainSynthesis: at least one subsystem is needed")
        if isinstance(passive, str):
            raise ValueError(f"ChainSynthesis: passive = {passive!r}: give a sequence of body names, not one string")
        passive = list(passive)
        n = len(chains)
        for c in chains:
            if not 1 <= len(c) <= K.NBS:
                raise ValueError(f"ChainSynthesis: chain {c}: 1 to {K.NBS} bodies per subsystem")
        seen = [nm for c in chains for nm in c]
        bad = sorted({nm for nm in passive if nm not in idx or nm == base or nm in seen or passive.count(nm) > 1})
        if bad:
            raise ValueError(f"ChainSynthesis: passive = {bad}: unknown bodies, the base, in a chain, or given twice "
                             "(a passive body is in no chain)")
        passive_set = set(passive)
        missing = [nm for nm in names if nm != base and nm not in seen and nm not in passive_set]
        if missing:
            raise ValueError(f"ChainSynthesis: bodies {missing} are in no subsystem (each body but the base "
                             "must be in one chain, or passive)")
        dup = sorted({nm for nm in seen if seen.count(nm) > 1 or nm == base or nm not in idx})
        if dup:
            raise ValueError(f"ChainSynthesis: bodies {dup} are unknown, the base, or in two chains")
        joints = {}
        ignored = set()
        for j in model.joints:
            a, b = j.body_a, j.body_b
            if a.is_ground or b.is_ground:
                raise ValueError(f"ChainSynthesis: joint {j.name!r} ties a body to the ground; the base is free")
            pa, pb = a.name in passive_set, b.name in passive_set
            if pa and pb:
                ignored.add(j.name)
                continue
            if pa or pb:
                inner, outer = (a.name, b.name) if pa else (b.name, a.name)
                raise ValueError(f"ChainSynthesis: joint {j.name!r} ({type(j).__name__}) joins passive body "
                                 f"{inner!r} to {outer!r}, which the synthesis steps; a passive body may be coupled "
                                 "to the base and chains by forces only (spring-dampers, contact)")
            joints[(a.name, b.name)] = j
            joints[(b.name, a.name)] = j
        q0, mass = system.q0, system.mass
        self.ch_body = np.full((n, K.NBS), -1, np.int64)
        self.ch_parent = np.full((n, K.NBS), -1, np.int64)
        self.ch_nb = np.array([len(c) for c in chains], np.int64)
        self.ch_axis = np.zeros((n, K.NBS, 3))
        self.ch_sp = np.zeros((n, K.NBS, 3))
        self.ch_sc = np.zeros((n, K.NBS, 3))
        self.ch_q0 = np.zeros((n, K.NBS, 4))
        self.ch_q0[:, :, 0] = 1.0
        self.ch_type = np.full((n, K.NBS), -1, np.int64)
        used = set()
        for i, c in enumerate(chains):
            for jn, nm in enumerate(c):
                parent = base if jn == 0 else c[jn - 1]
                joint = joints.get((parent, nm))
                # a subclass (a motor) adds rows the chain does not model: the exact types only
                if type(joint) not in (Revolute, Prismatic):
                    raise ValueError(f"ChainSynthesis: body {nm!r} must hang on {parent!r} by a Revolute or a "
                                     "Prismatic; found "
                                     f"{type(joint).__name__ if joint is not None else 'no joint'}"
                                     + (f" {joint.name!r}" if joint is not None else ""))
                used.add(joint.name)
                ip, ib = idx[parent], idx[nm]
                Rp, Rc = self._R(q0[ip]), self._R(q0[ib])
                self.ch_body[i, jn] = ib
                self.ch_parent[i, jn] = jn - 1
                self.ch_type[i, jn] = K.PRISMATIC if type(joint) is Prismatic else K.REVOLUTE
                self.ch_axis[i, jn] = Rp.T @ np.asarray(joint.axis, float)
                self.ch_sp[i, jn] = Rp.T @ (np.asarray(joint.point, float) - q0[ip, :3])
                self.ch_sc[i, jn] = Rc.T @ (np.asarray(joint.point, float) - q0[ib, :3])
                qp = q0[ip, 3:]
                self.ch_q0[i, jn] = _quat_mul(np.array([qp[0], -qp[1], -qp[2], -qp[3]]), q0[ib, 3:])
        extra = sorted({j.name for j in model.joints} - used - ignored)
        if extra:
            raise ValueError(f"ChainSynthesis: joints {extra} are not the chains' joints (the synthesis "
                             "models open chains on a free base)")
        self.n = n
        self.nq = int(self.ch_nb.max())
        self.chains = chains
        self.passive = np.array([idx[nm] for nm in passive], np.int64)
        self.mass, self.inertia = system.mass, system.inertia
        nb_ = system.nb
        self.q = system.q0.copy()
        self.v = system.v0.copy()
        self.f = system.f  # the system's own force array (the divergence monitor reads it)
        self._data = np.zeros(system.pattern.nnz)
        self.Meff = np.zeros((6, 6))
        self.Peff = np.zeros(6)
        self.Myq = np.zeros((n, 6, K.NBS))
        self.Mqq = np.zeros((n, K.NBS, K.NBS))
        self.Pq = np.zeros((n, K.NBS))
        self.Jb = np.zeros((n, K.NBS, 6, 6 + K.NBS))
        self.cb = np.zeros((n, K.NBS, 6))
        self.K = K
        # the evaluation's inputs and outputs: buffers bound once to the compiled calls
        self.q0b, self.v0b, self.a0b = np.zeros(7), np.zeros(6), np.zeros(6)
        self.thb, self.thdb, self.thddb = (np.zeros((n, K.NBS)) for _ in range(3))
        self.chain_args = (self.ch_body, self.ch_parent, self.ch_nb, self.ch_axis, self.ch_sp, self.ch_sc, self.ch_q0,
                           self.ch_type)
        self._pose_call = bound_call(K.chain_pose_full, self.q0b, self.v0b, self.thb, self.thdb, self.base,
                                     *self.chain_args, self.q, self.v)
        self._syn_calls = tuple(
            bound_call(K.chain_evaluate, self.q0b, self.v0b, self.thb, self.thdb, self.f, self.base, self.mass,
                       self.inertia, *self.chain_args, self.q, self.v, self.Meff, self.Peff, self.Myq, self.Mqq,
                       self.Pq, self.Jb, self.cb, self.a0b, self.thddb, sb) for sb in (0, 1))
        self.fused = None  # (no base solve, base solve) zero-argument calls of pose, forces and synthesis
        self.decide = None  # (state, h) -> None: the once-per-step decisions of the providers (the driver's)
        self.at_time = None  # t -> None: time-dependent inputs of the compiled evaluation at its time t

    def set_fused(self, calls, decide, at_time=None) -> None:
        """Use a compiled evaluation of pose, forces and synthesis in one call (``calls``: without and with the
        base solve, reading and writing this object's buffers) instead of the absolute system's force
        evaluation, ``decide(state, h)`` for the providers' once-per-step decisions and ``at_time(t)`` for
        inputs that depend on the evaluation's own time (a prescribed wheel speed's reference). The vehicle's
        fidelity provides them for the force elements it knows (:mod:`trackdyn.assembly.synthesis_fidelity`)."""
        self.fused = tuple(calls)
        self.decide = decide
        self.at_time = at_time

    @staticmethod
    def _R(q):
        R = np.zeros((3, 3))
        SK._quat_R(np.concatenate([[0.0, 0.0, 0.0], np.asarray(q, float)[-4:]]), R)
        return R

    # ------------------------------------------------------------------ coordinates
    def coordinates(self, q, v):
        """``(q0 (7), v0 (6), θ (n, NBS), θ̇ (n, NBS))`` of absolute positions q (nb, 7) and velocities v."""
        th = np.zeros((self.n, self.K.NBS))
        thd = np.zeros((self.n, self.K.NBS))
        self.K.chain_coordinates(np.ascontiguousarray(q), np.ascontiguousarray(v), self.ch_body, self.ch_parent,
                                 self.ch_nb, self.ch_axis, self.ch_sp, self.ch_sc, self.ch_q0, self.ch_type, self.base,
                                 th, thd)
        return q[self.base].copy(), v[self.base].copy(), th, thd

    def pose(self, q0, v0, th, thd, q=None, v=None):
        """Absolute positions and velocities (nb, 7), (nb, 6) of the base state and joint coordinates (into
        ``q``, ``v`` when given; the passive bodies' rows are left as they are)."""
        q = self.q.copy() if q is None else q
        v = self.v.copy() if v is None else v
        q[self.base] = q0
        v[self.base] = v0
        self.K.chain_pose(q0, v0, th, thd, *self.chain_args, q, v)
        return q, v

    # ------------------------------------------------------------------ one instant
    def forces(self, t, state, h=0.0):
        """The absolute formulation's applied forces f (nb, 6) at the pose in ``self.q``, ``self.v`` (the
        providers see ``state`` as the step's state, e.g. the driver's memory)."""
        s = self.system
        s.update_kinematics(self.q, self.v)
        f = s.eval_forces(t, self.v, 0.0, 0.0, self._data, state=state, h=h)
        if f is not self.f:
            self.f[:] = f
        return self.f

    def evaluate(self, t, q0, v0, th, thd, state, h=0.0, a0=None, solve_base=True, fused=False):
        """Pose, forces and the synthesis at one instant: returns ``(a0 (6), θ̈ (n, NBS))`` (this object's
        buffers: copy what you keep). With ``solve_base`` False the base acceleration ``a0`` is given (the
        subsystems' eq. 30 only). ``fused``: the compiled evaluation of :meth:`set_fused` (if set), which
        leaves the providers' decisions (the driver's) as they stand."""
        self.q0b[:] = q0
        self.v0b[:] = v0
        self.thb[:] = th
        self.thdb[:] = thd
        if a0 is not None:
            self.a0b[:] = a0
        sb = int(bool(solve_base))
        if fused and self.fused is not None:
            if self.at_time is not None:
                self.at_time(t)
            self.fused[sb]()
        else:
            self._pose_call()
            self.forces(t, state, h)
            self._syn_calls[sb]()
        return self.a0b, self.thddb

    def body_accelerations(self, a0, thdd, acc=None):
        """Absolute accelerations (nb, 6) = (r̈ world, ω̄̇ body) of the base and every chain body from the last
        :meth:`evaluate` (the passive bodies' rows are left as they are)."""
        acc = np.zeros((self.system.nb, 6)) if acc is None else acc
        self.K.chain_body_acc(a0, thdd, self.base, self.ch_body, self.ch_nb, self.Jb, self.cb, acc)
        return acc

    def accelerations(self, state, h=0.0, fused=False):
        """``(a0, θ̈, acc (nb, 6))`` at an absolute state on the chains' joints (the passive bodies at the
        state's rows of q, v; their rows of acc zero)."""
        q0, v0, th, thd = self.coordinates(state.q, state.v)
        self.q[self.passive] = state.q[self.passive]
        self.v[self.passive] = state.v[self.passive]
        if fused and self.decide is not None:
            self.decide(state, h)
        a0, thdd = self.evaluate(state.t, q0, v0, th, thd, state, h, fused=fused)
        return a0.copy(), thdd.copy(), self.body_accelerations(a0, thdd)

    def effective_mass(self):
        """M0 + Σ M̆ (6, 6) of the last :meth:`evaluate`: the base's effective mass."""
        M = self.Meff.copy()
        M[:3, :3] += self.mass[self.base] * np.eye(3)
        M[3:, 3:] += self.inertia[self.base]
        return M


def _quat_mul(p, q):
    return np.array([p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
                     p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
                     p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
                     p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]])
