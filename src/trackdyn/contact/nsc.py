"""NscContact: non-smooth (rigid) contact with Coulomb friction, solved as a cone complementarity problem.

Where :class:`~trackdyn.contact.ContactSystem` (SMC) turns penetration into a
force, NSC treats bodies as rigid: every contact ``i`` carries an impulse
``γ_i = (γ_n, γ_t1, γ_t2)`` over the step, in the Coulomb cone
``|γ_t| ≤ μ γ_n``, and the stepper (``integrator="nsc-euler"``,
:mod:`trackdyn.integrators.nsc`) finds the impulses and the new velocities
together, joints included (Anitescu 2006; Tasora & Anitescu 2011; Chrono's
NSC). It is not a force provider in the usual sense: the stepper asks it for
the contacts of the step's start (:meth:`NscContact.detect`) and gives back
the impulses (:meth:`NscContact.stage`), which are kept in ``State.extra``
(keys and world impulses) to warm-start the next step.

Shapes, materials, families and terrain are declared as for SMC (it is a
``ContactSystem`` subclass and reuses its narrow phase); detection runs on
the shapes inflated by ``envelope`` so that contacts are known before they
touch (:mod:`trackdyn.contact._nsc_kernels`). Supported: spheres, boxes,
capsules and cylinders on plane and profile terrains (steps, half-rounds, ditches, ...), every pair of them
that the SMC narrow phase has, convex polyhedra (a hull) on plane and profile terrains, and pins (capsules, cylinders) and guide spheres against
sprockets (the sprocket itself is not inflated: the pin's radius carries the
envelope); other shape types are refused when the simulation is built. Materials give friction (the smaller
of the pair's); the restitution of NSC impacts is ``restitution`` (default 0)
or, per material pair, :meth:`NscContact.set_impact` -- a material's
``restitution`` sets SMC damping and is not used here unless
``restitution="material"``. Rolling friction (``rolling_friction``, m) adds a
rolling block to each contact of the pair, spinning friction (``spinning_friction``, m) a spinning block. docs/contact-nsc.md has the
equations and the measured validation.

Example
-------
>>> import trackdyn as td
>>> from trackdyn.contact import Material, shapes
>>> from trackdyn.contact.nsc import NscContact
>>> from trackdyn import terrain
>>> m = td.Model()
>>> ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.3])
>>> nsc = NscContact(m, terrain=terrain.Flat(), restitution=0.5)
>>> _ = nsc.add_shape(ball, shapes.Sphere(0.1), material=Material("steel", friction=0.3))
>>> res = td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc]).run(0.5)

Recorded series as for SMC (``contact.count``, ``contact.penetration``,
``NAME.contact.force.{x,y,z}``, ...; forces are the step's impulses over
``h``), plus ``contact.iterations`` and ``contact.residual`` of the contact
solver.
"""

from __future__ import annotations

import math

import numpy as np

from .._compiled import entry_point
from ..terrain.base import Plane, ProfileTerrain
from . import _kernels as CK
from . import _nsc_kernels as NK
from ._buffers import new_records
from ._detect import detect
from ._stage import summaries
from .materials import Material
from .shapes import S_BOX, S_CAPSULE, S_CYLINDER, S_POLY, S_SPHERE, S_SPROCKET, TYPE_NAMES, ConvexPolyhedron
from .system import ContactSystem, Filters

__all__ = ["NscContact"]

# convex polyhedra against plane and profile terrains only (no shape pair of theirs has an envelope correction)
_NSC_TYPES = (S_SPHERE, S_BOX, S_CAPSULE, S_CYLINDER, S_SPROCKET, S_POLY)
# shape pairs whose records the envelope correction knows (correct_records)
_NSC_PAIRS = {(S_SPHERE, S_SPHERE), (S_SPHERE, S_BOX), (S_SPHERE, S_CAPSULE), (S_SPHERE, S_CYLINDER),
              (S_BOX, S_BOX), (S_BOX, S_CAPSULE), (S_BOX, S_CYLINDER), (S_CAPSULE, S_CAPSULE),
              (S_CAPSULE, S_CYLINDER), (S_SPHERE, S_SPROCKET), (S_CYLINDER, S_SPROCKET), (S_CAPSULE, S_SPROCKET)}


def _positive(what, val, allow_zero=False):
    ok = isinstance(val, (int, float)) and not isinstance(val, bool) and math.isfinite(val)
    ok = ok and (val >= 0 if allow_zero else val > 0)
    if not ok:
        raise ValueError(f"NscContact: {what} must be {'non-negative' if allow_zero else 'positive'}, got {val!r}")
    return float(val)


class NscContact(ContactSystem):
    """Shapes, materials and terrain of a model in rigid (non-smooth) contact; used by ``"nsc-euler"``.

    Parameters
    ----------
    model : trackdyn.Model
    terrain : Terrain, optional
        The ground: planes (``terrain.Flat``, ``terrain.Plane``, ``Plane.incline``) and profile terrains
        (``terrain.ProfileTerrain``: steps, half-rounds, ditches, ...); mesh terrains are refused.
    envelope : float
        Collision envelope, m: contacts are detected while their gap is below about this distance
        (shapes inflated by it), so that a body resting on another never loses its contact for a step.
        It should exceed the largest approach speed times the step (Chrono's default: 0.03 m).
    recovery_speed : float
        Largest speed (m/s) at which a penetration is pushed out (Chrono's
        ``max_penetration_recovery_speed``, 0.6 m/s); a gap closes at any speed.
    restitution : float or "material"
        Newton's coefficient of normal impacts, in [0, 1] (default 0: plastic impacts), or
        ``"material"`` for the smaller of the two materials' ``restitution``.
    bounce_speed : float
        Impacts slower than this (m/s) are plastic whatever the restitution (Chrono's
        ``min_bounce_speed``), so that resting contacts do not chatter.
    rolling_friction : float
        Rolling friction coefficient ``c_r`` (m) of every pair (default 0, none): a torque opposing the
        relative rolling of the two bodies, at most ``c_r`` times the normal force (Chrono's rolling
        friction). Per pair: :meth:`set_impact`.
    spinning_friction : float
        Spinning friction coefficient ``c_s`` (m) of every pair (default 0, none): a torque about the
        contact normal opposing the relative spin of the two bodies, at most ``c_s`` times the normal force
        (Chrono's spinning friction). Per pair: :meth:`set_impact`.
    name : str
        Prefix of the recorded series and of the warm-start arrays in ``State.extra``.
    Other parameters as :class:`~trackdyn.contact.ContactSystem` (``exclude_jointed``,
    ``default_material``, ``max_penetration``, ``capacity``).
    """

    #: How far (sine of the angle) a face's push may lie outside a profile edge's normal cone for the edge
    #: to hold the face (``_detect.detect``'s ``cone_tol``; SMC: 1e-12). A face resting flat across a step's
    #: edge sits on the cone's boundary; with round-off's 1e-12 the edge dropped in and out from one step
    #: to the next (a box across an edge cycled between 0, 22.1 and 66.2 N on the edge over 5 steps). An
    #: edge so held is a true constraint on the face (its gap is the edge's distance to the face's plane);
    #: a face turned by more than 1e-3 rad away from the cone has its far corners on the terrain instead.
    CONE_TOL = 1e-3

    def __init__(self, model, terrain=None, *, envelope: float = 0.01, recovery_speed: float = 0.6,
                 restitution=0.0, bounce_speed: float = 0.01, rolling_friction: float = 0.0,
                 spinning_friction: float = 0.0,
                 exclude_jointed: bool = True,
                 default_material: Material | None = None, max_penetration: float = 0.05, name: str = "contact",
                 capacity: int = 256):
        super().__init__(model, terrain, margin=0.0, exclude_jointed=exclude_jointed,
                         default_material=default_material, max_penetration=max_penetration, name=name,
                         capacity=capacity, implicit=False)
        self.envelope = _positive("envelope", envelope)
        self.recovery_speed = _positive("recovery_speed", recovery_speed)
        self.bounce_speed = _positive("bounce_speed", bounce_speed, allow_zero=True)
        self.rolling_friction = _positive("rolling_friction", rolling_friction, allow_zero=True)
        self.spinning_friction = _positive("spinning_friction", spinning_friction, allow_zero=True)
        if isinstance(restitution, str):
            if restitution != "material":
                raise ValueError(f"NscContact: restitution must be a number in [0, 1] or 'material', "
                                 f"got {restitution!r}")
        elif not (isinstance(restitution, (int, float)) and 0.0 <= restitution <= 1.0):
            raise ValueError(f"NscContact: restitution must be a number in [0, 1] or 'material', got {restitution!r}")
        self.restitution = restitution
        self._impact: dict[tuple[str, str], tuple] = {}
        self.stepper = None  # set by the NSC integrator that steps this contact
        self._nsc_built = False

    # ------------------------------------------------------------------ building
    def set_impact(self, material_a: Material, material_b: Material, *, friction: float | None = None,
                   restitution: float | None = None, rolling_friction: float | None = None,
                   spinning_friction: float | None = None) -> None:
        """NSC friction coefficient, Newton restitution, rolling and/or spinning friction (m) of the material
        pair (a, b)."""
        self._check_open("set_impact")
        for mtl in (material_a, material_b):
            if not isinstance(mtl, Material):
                raise ValueError(f"set_impact: expected Materials, got {type(mtl).__name__}")  # noqa: TRY004
        if friction is not None:
            _positive("set_impact friction", friction, allow_zero=True)
        if restitution is not None and not (isinstance(restitution, (int, float)) and 0 <= restitution <= 1):
            raise ValueError(f"NscContact: set_impact restitution must be in [0, 1], got {restitution!r}")
        if rolling_friction is not None:
            _positive("set_impact rolling_friction", rolling_friction, allow_zero=True)
        if spinning_friction is not None:
            _positive("set_impact spinning_friction", spinning_friction, allow_zero=True)
        self._impact[tuple(sorted((material_a.name, material_b.name)))] = (friction, restitution, rolling_friction,
                                                                           spinning_friction)

    @staticmethod
    def check_terrain(terrain) -> None:
        """Raise ValueError naming the first part of ``terrain`` that NSC does not support (planes and
        profiles only)."""
        for part in terrain.parts():
            if not isinstance(part, (Plane, ProfileTerrain)):
                raise ValueError(f"NscContact: terrain part {type(part).__name__} is not supported (plane and "  # noqa: TRY004
                                 f"profile terrains only: the envelope correction of mesh terrains is not "
                                 f"written yet, issue #29)")

    def set_terrain(self, terrain) -> None:
        super().set_terrain(terrain)
        self.check_terrain(terrain)

    def _build_nsc(self):
        if self._nsc_built:
            return
        self._build()
        st = self.shapes
        ns = len(st.s_type)
        for t in set(st.s_type.tolist()):
            if t not in _NSC_TYPES:
                raise ValueError(f"NscContact: shape type {TYPE_NAMES[t]!r} is not supported by NSC (sphere, box, "
                                 f"capsule, cylinder, sprocket, polyhedron on plane and profile terrains)")
        if np.any((self.pair_law == CK.L_WINKLER) | (self.pair_law == CK.L_KV)):
            raise ValueError("NscContact: Winkler and Kelvin-Voigt materials are compliant-contact laws; "
                             "NSC contact is rigid (use ContactSystem for them)")
        fam_ok, excl, type_ok, _ = self._filters_base
        for i in range(ns):
            for j in range(i + 1, ns):
                bi, bj = int(st.s_body[i]), int(st.s_body[j])
                if bi == bj or not fam_ok[st.s_fam[i], st.s_fam[j]]:
                    continue
                if bi >= 0 and bj >= 0 and excl[bi, bj]:
                    continue
                ti, tj = sorted((int(st.s_type[i]), int(st.s_type[j])))
                if not type_ok[ti, tj]:
                    continue
                if (ti, tj) not in _NSC_PAIRS:
                    raise ValueError(f"NscContact: shapes {i} and {j} ({TYPE_NAMES[ti]}, {TYPE_NAMES[tj]}) may "
                                     f"touch, but NSC has no envelope correction for this pair; keep them apart "
                                     f"with collide(family_a, family_b, False) or exclude()")
        # the shapes inflated by the envelope, for detection
        env = self.envelope
        par = st.s_par.copy()
        rbound = st.s_rbound + 2.0 * env
        self.pv_offset = np.zeros_like(st.pv)
        pf = st.pf.copy()  # face planes grown by env: a polyhedron's faces against terrain lines (_poly_line)
        self.s_v0 = st.s_par[:, 0].astype(np.int64)
        for s in range(ns):
            t = st.s_type[s]
            if t in (S_SPHERE, S_CAPSULE, S_CYLINDER):
                par[s, 0] += env
            elif t == S_BOX:
                par[s, :3] += env
            elif t == S_POLY:
                sh = self._shapes[s][1]
                assert isinstance(sh, ConvexPolyhedron)
                v0, nv = int(st.s_par[s, 0]), int(st.s_par[s, 1])
                off = NK.poly_vertex_offsets(sh.vertices, sh.face_normal, sh.face_vertices, env)
                self.pv_offset[v0:v0 + nv] = off
                grow = float(np.max(np.linalg.norm(off, axis=1)))
                par[s, 4] += grow
                rbound[s] = st.s_rbound[s] + grow
                f0, nf = int(st.s_par[s, 2]), int(st.s_par[s, 3])
                pf[f0:f0 + nf, 3] += env
        self.shapes_inflated = st._replace(s_par=par, s_rbound=rbound, pv=st.pv + self.pv_offset, pf=pf)
        # NSC parameters of the material pairs (indices as the records' pair column)
        mats = self.materials
        nm = len(mats)
        npair = len(self.pair_law)
        self.pair_mu = self.pair_par[:, CK.P_MU].copy() if npair else np.zeros(0)
        self.pair_e = np.zeros(npair)
        self.pair_roll = np.full(npair, self.rolling_friction)
        self.pair_spin = np.full(npair, self.spinning_friction)
        mat_pair = self._filters_base[3]
        for i in range(nm):
            for j in range(i, nm):
                p = mat_pair[i, j]
                if p < 0:
                    continue
                e = min(mats[i].restitution, mats[j].restitution) if self.restitution == "material" else \
                    float(self.restitution)
                fr, er, rr, sr = self._impact.get(tuple(sorted((mats[i].name, mats[j].name))), (None,) * 4)
                if fr is not None:
                    self.pair_mu[p] = fr
                if rr is not None:
                    self.pair_roll[p] = rr
                if sr is not None:
                    self.pair_spin[p] = sr
                if er is not None:
                    e = er
                self.pair_e[p] = e
        self._nsc_built = True

    # ------------------------------------------------------------------ ForceProvider
    def coupling_pairs(self):
        """None: impulses enter the step's right-hand side only (the matrix pattern is the joints')."""
        self._build_nsc()
        return []

    def bind(self, system) -> None:
        self._build_nsc()
        self.system = system
        nb_ = system.nb
        self.mass = np.asarray(system.mass, float)
        self.inv_inertia = np.linalg.inv(np.asarray(system.inertia, float)) if nb_ else np.zeros((0, 3, 3))
        fam_ok, excl, type_ok, mat_pair = self._filters_base
        pidx = np.full((max(nb_, 1), max(nb_, 1)), -1, np.int64)
        self.filters = Filters(fam_ok, excl, type_ok, mat_pair, self.pair_law, pidx, self._may)
        self.scratch = self._new_scratch()
        self.body_out = np.zeros((nb_ + 1, 8))
        self.glob_out = np.zeros(4)
        self._key_name = f"{self.name}.key"
        self._imp_name = f"{self.name}.impulse"
        self._slip_name = f"{self.name}.slip"
        self._alloc(self._capacity)
        self.m = 0
        self._staged = None
        self._forces = None  # the last staged step's (normal, tangential) forces per block
        self._bound = True

    def _alloc(self, cap):
        self.rec = new_records(cap)
        self._bad = np.zeros(8, np.int64)
        cap = 3 * cap  # a contact, its rolling block and its spinning block
        self.c_kind = np.zeros(cap, np.int64)
        self.c_parent = np.zeros(cap, np.int64)
        self.c_roll = np.zeros(cap)
        self.c_body = np.zeros((cap, 2), np.int64)
        self.c_frame = np.zeros((cap, 3, 3))
        self.c_point = np.zeros((cap, 3))
        self.c_phi = np.zeros(cap)
        self.c_mu = np.zeros(cap)
        self.c_e = np.zeros(cap)
        self.c_un = np.zeros(cap)
        self.c_D = np.zeros((cap, 3, 12))
        self.c_key = np.zeros((cap, 2), np.int64)
        self._entry = {}

    def _call(self, name, fn, args):
        ep = self._entry.get(name)
        if ep is None:
            ep = self._entry[name] = entry_point(fn, args)
        return ep(*args)

    def initial_extra(self) -> dict:
        return {f"{self.name}.key": np.zeros((0, 2), np.int64), f"{self.name}.impulse": np.zeros((0, 3)),
                f"{self.name}.slip": np.zeros(0)}

    def accumulate(self, ctx) -> None:
        if ctx.data is not None and self.stepper is None:
            raise ValueError(f"NscContact {self.name!r}: non-smooth contact needs the integrator 'nsc-euler' "
                             f"(another integrator would step as if there were no contact)")
        # outputs were written by the stepper with the step's impulses (stage): nothing to evaluate

    def divergence_hint(self) -> str | None:
        return None

    def commit(self, state) -> None:
        if self._staged is not None:
            keys, imp, slip = self._staged
            state.extra[self._key_name] = keys
            state.extra[self._imp_name] = imp
            state.extra[self._slip_name] = slip

    def series(self) -> dict:
        res = super().series()
        res[f"{self.name}.iterations"] = (self.glob_out, 2)
        res[f"{self.name}.residual"] = (self.glob_out, 3)
        return res

    # ------------------------------------------------------------------ the stepper's interface
    def detect(self, kin, h: float) -> int:
        """Contacts of the pose in ``kin`` (the system's kinematics) with gap below twice the envelope: their
        frames, gaps, Jacobian rows and normal velocities in ``c_*``, each followed by its rolling block when
        its pair has rolling friction (``c_kind`` 1) and its spinning block when it has spinning friction
        (``c_kind`` 2); returns the count of blocks ``m``."""
        while True:
            rec = self.rec
            n = self._call("detect", detect, (rec, self.shapes_inflated, self.scratch, self.filters,
                                              self.terrain_arrays, kin.pos, kin.R, 0.0, self.default_radius,
                                              self.max_penetration + self.envelope, self.winkler_grid,
                                              self.CONE_TOL))
            if n <= rec.kind.shape[0]:
                break
            cap = rec.kind.shape[0]
            while cap < n:
                cap *= 2
            self._alloc(cap)
        nbad = self._call("correct", NK.correct_records, (n, rec, self.shapes.s_type, self.shapes.s_rot,
                                                          np.int64(len(self._shapes)), self.envelope, self._bad, self.s_v0,
                                                          self.pv_offset))
        if nbad:
            r = int(self._bad[0])
            raise RuntimeError(f"NscContact {self.name!r}: a contact record (kind {int(rec.kind[r])}, keys "
                               f"{rec.key[r].tolist()}) has no envelope correction")
        m = self._call("frames", NK.contact_frames,
                       (n, rec, kin.pos, kin.R, kin.vel, kin.omega_w, self.pair_mu, self.pair_e, self.pair_roll,
                        self.pair_spin,
                        2.0 * self.envelope, self.c_body, self.c_frame, self.c_point, self.c_phi, self.c_mu,
                        self.c_e, self.c_un, self.c_D, self.c_key, self.c_kind, self.c_parent, self.c_roll,
                        self.scratch.S))
        self.m = m
        return m

    def warm_start(self, state, gamma, slip=None) -> int:
        """γ (3m,) from the impulses of the previous step's contacts with the same keys (world impulses
        projected on today's frames, then on the cone); ``slip`` (m,), if given, gets their last slip speeds
        ``|u_t|`` (m/s; -1 where unknown: a new contact, or a state without them). Returns how many contacts
        were found."""
        keys = state.extra.get(self._key_name)
        imp = state.extra.get(self._imp_name)
        old = state.extra.get(self._slip_name)
        gamma[:] = 0.0
        if slip is not None:
            slip[:] = -1.0
        if keys is None or len(keys) == 0:
            return 0
        if old is None or len(old) != len(keys):
            old = np.full(len(keys), -1.0)
        out = np.empty(self.m) if slip is None else slip
        return int(NK.warm_start(self.m, self.c_key, self.c_frame, self.c_kind, self.c_mu, keys, imp, gamma, old,
                                 out))

    def stage(self, gamma, h: float, pos, iterations: int, residual: float, slip=None) -> None:
        """Keep the step's impulses (sorted by key, world frame) and slip speeds (``slip`` (m,), m/s; -1:
        none) for :meth:`commit` and the outputs."""
        m = self.m
        imp = np.einsum("ikj,ik->ij", self.c_frame[:m], gamma[:3 * m].reshape(m, 3))
        keys = self.c_key[:m]
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        slip = np.full(m, -1.0) if slip is None else np.asarray(slip, float)[:m]
        self._staged = (keys[order].copy(), imp[order].copy(), slip[order].copy())
        fn = gamma[0:3 * m:3] / h
        ft = (imp - fn[:, None] * h * self.c_frame[:m, 0]) / h
        # rolling and spinning blocks carry torque impulses, not forces: out of the force summaries
        torque = self.c_kind[:m] != 0
        fn[torque] = 0.0
        ft[torque] = 0.0
        self._forces = (fn.copy(), ft.copy())  # per contact block, in detection order (contacts())
        summaries(m, self.c_body[:m], np.ascontiguousarray(fn), np.ascontiguousarray(ft),
                  np.ascontiguousarray(self.c_frame[:m, 0]), self.c_point[:m], -self.c_phi[:m], pos,
                  self.body_out, self.glob_out)
        self.glob_out[2] = iterations
        self.glob_out[3] = residual

    def contacts(self) -> dict:
        """The contacts of the last step (rolling blocks left out): ``body_a``, ``body_b``, ``point``,
        ``normal`` (direction in which body_b is pushed), ``gap`` (m, negative: penetration), ``penetration``
        (``-gap``, as SMC's :meth:`~trackdyn.contact.ContactSystem.contacts` names it), ``friction``,
        ``restitution``, and, once a step has staged its impulses, ``normal_force`` (N, the step's normal
        impulse over h; zero for a contact that did not act) and ``tangential_force`` (n, 3, N, world, on
        body_b), as SMC's :meth:`~trackdyn.contact.ContactSystem.contacts` names them. Every detected contact
        is listed, acting or not (SMC lists the penetrating ones)."""
        c = np.nonzero(self.c_kind[:self.m] == 0)[0]
        out = {"body_a": self.c_body[c, 0].copy(), "body_b": self.c_body[c, 1].copy(),
               "point": self.c_point[c].copy(), "normal": self.c_frame[c, 0].copy(), "gap": self.c_phi[c].copy(), "penetration": -self.c_phi[c],
               "friction": self.c_mu[c].copy(), "restitution": self.c_e[c].copy()}
        forces = self._forces
        if forces is not None and len(forces[0]) == self.m:
            out["normal_force"] = forces[0][c].copy()
            out["tangential_force"] = forces[1][c].copy()
        return out

    def records(self):
        """Not available: NSC keeps contact blocks (:meth:`contacts`), not SMC's force records."""
        raise ValueError(f"NscContact {self.name!r}: no SMC contact records (non-smooth contact); use contacts()")
