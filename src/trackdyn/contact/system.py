"""ContactSystem: smooth contact between shapes and with the terrain, as a force provider.

A :class:`ContactSystem` collects shapes on the bodies of a model, their
materials and collision families, and a terrain. Given to a simulation
(``td.Simulation(model, providers=[cs])``) it runs inside every implicit
step: detection (broad and narrow phase), contact forces into ``f`` and their
exact Jacobians ``∂Q/∂q``, ``∂Q/∂v`` into the KKT values, and the tangential
displacement history of persistent contacts in ``State.extra`` (plain arrays,
so states copy and checkpoint).

Example
-------
>>> import trackdyn as td
>>> from trackdyn.contact import ContactSystem, Material, shapes
>>> from trackdyn import terrain
>>> m = td.Model()
>>> ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.2])
>>> cs = ContactSystem(m, terrain=terrain.Flat())
>>> _ = cs.add_shape(ball, shapes.Sphere(0.1), material=Material("rubber", young=1e7, restitution=0.5))
>>> res = td.Simulation(m, step=1e-4, providers=[cs]).run(0.01)

Recorded series (dotted names): ``contact.count``, ``contact.penetration``
(largest, m) and, for every body with shapes and for the ground,
``NAME.contact.force.{x,y,z}`` (total contact force on it, world, N),
``NAME.contact.torque.{x,y,z}`` (about its centre of mass, world, N m),
``NAME.contact.count`` and ``NAME.contact.penetration``.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from .._compiled import entry_point
from ..terrain.base import Plane, ProfileTerrain
from ..terrain.mesh import TriangleMesh
from . import _stage
from . import _kernels as CK
from ._buffers import new_outputs, new_records
from .materials import Material, combine
from .shapes import (
    S_BOX,
    S_CAPSULE,
    S_CYLINDER,
    S_POLY,
    S_SEGMENT,
    S_SPHERE,
    S_SPROCKET,
    S_TOOTH,
    TYPE_NAMES,
    ConvexPolyhedron,
    Shape,
)

__all__ = ["ContactSystem"]

# polyhedra (S_POLY): s_par[s] = (first vertex, vertex count, first face, face count, bounding radius, half
# extents along its x, y, z) into
# pv (vertices, shape frame), pf (face: outward normal (3), offset, first Winkler probe, probe count, probe area)
# and pw (Winkler probes on the faces, shape frame)
ShapeArrays = namedtuple("ShapeArrays",
                         "s_type s_body s_pos s_rot s_par s_mat s_fam s_rbound s_terrain b_list b_ptr b_shapes s_rid "
                         "pv pf pw")
# qmin, qmax: a mesh query box; S, Kx, Kv: one element of the force stage (owned here: the kernels allocate nothing)
Scratch = namedtuple("Scratch", "sw_c sw_R bb_min bb_max b_min b_max order cand stack qmin qmax S Kx Kv")
Filters = namedtuple("Filters", "fam_ok excl type_ok mat_pair pair_law pidx may")
TerrainArrays = namedtuple(
    "TerrainArrays",
    "part_kind part_index part_mat pl_n pl_p pr_O pr_u pr_w pr_start pr_count ptype pa pn psmin psmax_cum pmat "
    "me_root mV mF mFN mFE mE mEF mEC mVP mVF bvh_min bvh_max bvh_left bvh_right bvh_start bvh_count bvh_faces",
)

# shape type pairs handled by the narrow phase
_SUPPORTED = {
    (S_SPHERE, S_SPHERE), (S_SPHERE, S_BOX), (S_SPHERE, S_CYLINDER), (S_SPHERE, S_CAPSULE), (S_SPHERE, S_SEGMENT),
    (S_SPHERE, S_SPROCKET), (S_BOX, S_BOX), (S_BOX, S_CYLINDER), (S_BOX, S_CAPSULE), (S_BOX, S_SEGMENT),
    (S_CYLINDER, S_CAPSULE), (S_CYLINDER, S_SEGMENT), (S_CYLINDER, S_SPROCKET), (S_CAPSULE, S_CAPSULE),
    (S_CAPSULE, S_SEGMENT), (S_CAPSULE, S_SPROCKET), (S_CYLINDER, S_TOOTH), (S_CAPSULE, S_TOOTH),
}
_TERRAIN_TYPES = (S_SPHERE, S_BOX, S_CYLINDER, S_CAPSULE, S_POLY)


class ContactSystem:
    """Shapes, materials, families and terrain of a model; a force provider of smooth contact.

    Parameters
    ----------
    model : trackdyn.Model
    terrain : Terrain, optional
        The ground (``trackdyn.terrain``); None: no ground contact.
    law : {"hertz", "hooke"}
        Smooth-contact law of pairs of SMC materials (thesis eq. 2.16-2.19).
    damping : {"exact", "chrono"}
        How SMC damping follows the restitution: ``"exact"`` gives the
        restitution of the material pair with the force clamped at zero;
        ``"chrono"`` uses Chrono's formula (livelier rebounds, see
        :mod:`trackdyn.contact._restitution`).
    use_material_properties : bool
        Derive SMC coefficients from E, ν, e (Chrono's default) or use ``kn..gt``.
    characteristic_velocity : float
        Impact speed of Chrono's Hooke law from material properties, m/s.
    default_radius : float
        Effective radius of contacts without curvature (box corners on faces), m (Chrono's 0.1).
    max_penetration : float
        Deepest penetration accepted for points and one-sided features, m; deeper ones
        are taken as coming from the other side.
    damping_ramp : float
        Below this penetration (m) the Hertz damping's ``δ^(1/4)`` (``δ^(1/2)`` for
        given coefficients, the chord of a Winkler wheel) is replaced by its chord,
        so that its slope stays bounded at first touch.
    margin : float
        Growth of the shapes' bounding boxes in the broad phase, m.
    exclude_jointed : bool
        Bodies connected by a joint never collide (a wheel and its arm, neighbouring shoes).
    winkler_grid : int
        Probes per box side on Winkler ground (``n x n`` points over the face).
    default_material : Material
        Material of shapes added without one (Chrono's defaults).
    name : str
        Prefix of the recorded series and of the history in ``State.extra``.
    implicit : bool
        True (default): the contact stiffness and damping enter the implicit
        step's matrix (``coupling``). False: the forces act explicitly, from
        the step's start, and add nothing to the matrix or its pattern --
        Chrono's SMC systems without "stiff contact". Cheaper per step
        (no Jacobians); stable only below the contacts' explicit step limit
        (the M113 on concrete: between 1e-3 and 2e-3 s, docs/contact.md).
    """

    def __init__(self, model, terrain=None, *, law: str = "hertz", damping: str = "exact",
                 use_material_properties: bool = True, characteristic_velocity: float = 1.0,
                 default_radius: float = 0.1, max_penetration: float = 0.05, margin: float = 0.005,
                 damping_ramp: float = 1e-5,
                 exclude_jointed: bool = True, winkler_grid: int = 4, default_material: Material | None = None,
                 name: str = "contact", capacity: int = 256, implicit: bool = True):
        if law not in ("hertz", "hooke"):
            raise ValueError(f"ContactSystem: law must be 'hertz' or 'hooke', got {law!r}")
        if damping not in ("exact", "chrono"):
            raise ValueError(f"ContactSystem: damping must be 'exact' or 'chrono', got {damping!r}")
        for what, val in (("characteristic_velocity", characteristic_velocity), ("default_radius", default_radius),
                          ("max_penetration", max_penetration), ("damping_ramp", damping_ramp)):
            if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
                raise ValueError(f"ContactSystem: {what} must be positive, got {val!r}")
        if not (isinstance(margin, (int, float)) and margin >= 0):
            raise ValueError(f"ContactSystem: margin must be non-negative, got {margin!r}")
        if not (isinstance(winkler_grid, (int, np.integer)) and 1 <= winkler_grid <= 32):
            raise ValueError(f"ContactSystem: winkler_grid must be an integer in [1, 32], got {winkler_grid!r}")
        if not isinstance(implicit, (bool, np.bool_)):
            raise ValueError(f"ContactSystem: implicit must be True or False, got {implicit!r}")
        self.model = model
        self._implicit = bool(implicit)
        self.name = str(name)
        self.law = law
        self.damping = damping
        self.use_material_properties = bool(use_material_properties)
        self.characteristic_velocity = float(characteristic_velocity)
        self.default_radius = float(default_radius)
        self.max_penetration = float(max_penetration)
        self.damping_ramp = float(damping_ramp)
        self.margin = float(margin)
        self.exclude_jointed = bool(exclude_jointed)
        self.winkler_grid = int(winkler_grid)
        self.default_material = default_material if default_material is not None else Material("default")
        self._built = False
        self.terrain = None
        if terrain is not None:
            self.set_terrain(terrain)
        self._shapes: list[tuple[int, Shape, Material, str, bool]] = []
        self._families: dict[str, int] = {"default": 0}
        self._fam_rules: dict[tuple[str, str], bool] = {}
        self._coupling_rules: dict[tuple[str, str], str] = {}
        self._exclusions: set[tuple[int, int]] = set()
        self._pair_materials: dict[tuple[str, str], Material] = {}
        self._bound = False
        self._capacity = int(capacity)
        self._h = 0.0
        self._staged = 0

    # ------------------------------------------------------------------ building
    def _check_open(self, what):
        if self._built:
            raise ValueError(f"ContactSystem {self.name!r}: {what} after the simulation was built")

    def add_shape(self, body, shape: Shape, material: Material | None = None, family: str = "default",
                  terrain: bool = True) -> int:
        """Attach ``shape`` to ``body`` (handle, name or index; the ground is allowed); returns its index.

        ``family`` names a collision family (:meth:`collide`, :meth:`coupling`);
        ``terrain=False`` keeps the shape from touching the terrain.
        """
        self._check_open("add_shape")
        if not isinstance(shape, Shape):
            raise ValueError(f"add_shape: expected a shape from trackdyn.contact.shapes, got {type(shape).__name__}")
        b = self.model._index(body)
        mat = self.default_material if material is None else material
        if not isinstance(mat, Material):
            raise ValueError(f"add_shape: material must be a Material, got {type(mat).__name__}")
        if not isinstance(family, str) or not family:
            raise ValueError(f"add_shape: family must be a non-empty string, got {family!r}")
        self._families.setdefault(family, len(self._families))
        tflag = bool(terrain) and shape.type_code in _TERRAIN_TYPES and b >= 0
        self._shapes.append((b, shape, mat, family, tflag))
        return len(self._shapes) - 1

    def set_terrain(self, terrain) -> None:
        """Use ``terrain`` (anything from :mod:`trackdyn.terrain`) as the ground."""
        self._check_open("set_terrain")
        if not hasattr(terrain, "parts"):
            raise ValueError(f"set_terrain: expected a terrain from trackdyn.terrain, got {type(terrain).__name__}")
        self.terrain = terrain

    def collide(self, family_a: str, family_b: str, enabled: bool = True) -> None:
        """Let shapes of two families collide or not (default: every family collides with every family)."""
        self._check_open("collide")
        for f in (family_a, family_b):
            self._families.setdefault(f, len(self._families))
        self._fam_rules[tuple(sorted((family_a, family_b)))] = bool(enabled)

    def coupling(self, family_a: str, family_b: str, mode: str) -> None:
        """How contacts between two families enter the implicit step's matrix.

        ``"full"`` (default): the exact Jacobian including the coupling block of
        the two bodies (declared in the KKT pattern for every body pair that
        may touch); ``"diagonal"``: only each body's own block (fewer pattern
        entries and less fill-in; the step is then only partly implicit in
        these contacts).
        """
        self._check_open("coupling")
        if mode not in ("full", "diagonal"):
            raise ValueError(f"coupling: mode must be 'full' or 'diagonal', got {mode!r}")
        for f in (family_a, family_b):
            self._families.setdefault(f, len(self._families))
        self._coupling_rules[tuple(sorted((family_a, family_b)))] = mode

    def exclude(self, body_a, body_b) -> None:
        """Bodies that never collide with each other."""
        self._check_open("exclude")
        a = self.model._index(body_a)
        b = self.model._index(body_b)
        if a == b:
            raise ValueError("exclude: a body never collides with itself")
        self._exclusions.add((min(a, b), max(a, b)))

    def set_pair(self, material_a: Material, material_b: Material, material: Material) -> None:
        """Use ``material`` (its law and values) whenever ``material_a`` touches ``material_b``."""
        self._check_open("set_pair")
        for m in (material_a, material_b, material):
            if not isinstance(m, Material):
                raise ValueError(f"set_pair: expected Materials, got {type(m).__name__}")
        self._pair_materials[tuple(sorted((material_a.name, material_b.name)))] = material

    # ------------------------------------------------------------------ build
    def _build(self):
        if self._built:
            return
        model = self.model
        nb_ = model.n_bodies
        ns = len(self._shapes)
        # materials
        mats: list[Material] = []

        def mat_index(m):
            for k, x in enumerate(mats):
                if x is m or x == m:
                    return k
            mats.append(m)
            return len(mats) - 1

        s_type = np.zeros(ns, np.int64)
        s_body = np.zeros(ns, np.int64)
        s_pos = np.zeros((ns, 3))
        s_rot = np.zeros((ns, 3, 3))
        s_par = np.zeros((ns, 8))
        s_mat = np.zeros(ns, np.int64)
        s_fam = np.zeros(ns, np.int64)
        s_rb = np.zeros(ns)
        s_ter = np.zeros(ns, np.bool_)
        pv, pf, pw = [], [], []
        for k, (b, sh, mat, fam, tflag) in enumerate(self._shapes):
            s_type[k] = sh.type_code
            s_body[k] = b
            s_pos[k] = sh.pos
            s_rot[k] = sh.rot
            s_par[k] = sh.params()
            if isinstance(sh, ConvexPolyhedron):
                s_par[k, :4] = (len(pv), len(sh.vertices), len(pf), len(sh.face_normal))
                pv.extend(sh.vertices.tolist())
                for f, poly in enumerate(sh.face_vertices):
                    probes, area = _face_probes(sh.vertices[poly], sh.face_normal[f], self.winkler_grid)
                    pf.append([*sh.face_normal[f], sh.face_offset[f], len(pw), len(probes), area])
                    pw.extend(probes)
            s_mat[k] = mat_index(mat)
            s_fam[k] = self._families[fam]
            s_rb[k] = sh.bounding_radius()
            s_ter[k] = tflag
        # bodies carrying shapes (the ground too, for shapes fixed to it), with their shapes (CSR)
        b_list = np.array(sorted(set(s_body.tolist())), np.int64)
        b_ptr = np.zeros(len(b_list) + 1, np.int64)
        b_shapes = []
        for k, b in enumerate(b_list):
            idx = np.nonzero(s_body == b)[0]
            b_shapes.extend(idx.tolist())
            b_ptr[k + 1] = b_ptr[k] + len(idx)
        s_rid = np.array([np.array_equal(r, np.eye(3)) for r in s_rot], np.bool_).reshape(ns)  # no product
        self.shapes = ShapeArrays(s_type, s_body, s_pos, s_rot, s_par, s_mat, s_fam, s_rb, s_ter, b_list, b_ptr,
                                  np.array(b_shapes, np.int64), s_rid, np.array(pv, float).reshape(-1, 3),
                                  np.array(pf, float).reshape(-1, 7), np.array(pw, float).reshape(-1, 3))
        # terrain
        parts = self.terrain.parts() if self.terrain is not None else []
        self.terrain_parts = parts
        ter = self._pack_terrain(parts, mat_index)
        self.terrain_arrays = ter
        # material pairs
        nm = len(mats)
        mat_pair = np.full((nm, nm), -1, np.int64)
        laws, pars = [], []
        for i in range(nm):
            for j in range(i, nm):
                ov = self._pair_materials.get(tuple(sorted((mats[i].name, mats[j].name))))
                law, par = combine(mats[i], mats[j], self.law, self.use_material_properties, self.damping,
                                   self.characteristic_velocity, ov, self.damping_ramp)
                mat_pair[i, j] = mat_pair[j, i] = len(laws)
                laws.append(law)
                pars.append(par)
        self.materials = mats
        self.pair_law = np.array(laws, np.int64)
        self.pair_par = np.array(pars, float).reshape(-1, CK.N_PAR)
        # families
        nf = len(self._families)
        names = sorted(self._families, key=self._families.get)
        fam_ok = np.ones((nf, nf), np.bool_)
        full = np.ones((nf, nf), np.bool_)
        for (a, b), ok in self._fam_rules.items():
            ia, ib = self._families[a], self._families[b]
            fam_ok[ia, ib] = fam_ok[ib, ia] = ok
        for (a, b), mode in self._coupling_rules.items():
            ia, ib = self._families[a], self._families[b]
            full[ia, ib] = full[ib, ia] = mode == "full"
        self.family_names = names
        # exclusions
        excl = np.zeros((max(nb_, 1), max(nb_, 1)), np.bool_)
        for a, b in self._exclusions:
            if a >= 0:
                excl[a, b] = excl[b, a] = True
        if self.exclude_jointed:
            for j in model.joints:
                a, b = model._index(j.body_a), model._index(j.body_b)
                if a >= 0 and b >= 0:
                    excl[a, b] = excl[b, a] = True
        type_ok = np.zeros((len(TYPE_NAMES), len(TYPE_NAMES)), np.bool_)
        for a, b in _SUPPORTED:
            type_ok[a, b] = type_ok[b, a] = True
        # candidate shape pairs -> coupled body pairs, unsupported type pairs
        pairs = set()
        unsupported = set()
        if ns:
            B = s_body
            same = B[:, None] == B[None, :]
            bodies_ok = (B[:, None] >= 0) & (B[None, :] >= 0)
            ok = fam_ok[s_fam[:, None], s_fam[None, :]] & ~same
            exc = np.zeros_like(ok)
            if bodies_ok.any():
                bi = np.where(bodies_ok, B[:, None], 0)
                bj = np.where(bodies_ok, B[None, :], 0)
                exc = bodies_ok & excl[bi, bj]
            ok &= ~exc
            tok = type_ok[s_type[:, None], s_type[None, :]]
            for i, j in zip(*np.nonzero(ok & ~tok)):
                if i < j:
                    unsupported.add(tuple(sorted((TYPE_NAMES[s_type[i]], TYPE_NAMES[s_type[j]]))))
            cpl = ok & tok & full[s_fam[:, None], s_fam[None, :]] & bodies_ok
            for i, j in zip(*np.nonzero(np.triu(cpl, 1))):
                a, b = int(B[i]), int(B[j])
                pairs.add((min(a, b), max(a, b)))
            # body pairs (in the list of bodies with shapes) that may touch at all
            pos_in_list = {int(b): k for k, b in enumerate(self.shapes.b_list)}
            may = np.zeros((len(self.shapes.b_list),) * 2, np.bool_)
            for i, j in zip(*np.nonzero(ok & tok)):
                may[pos_in_list[int(B[i])], pos_in_list[int(B[j])]] = True
        else:
            may = np.zeros((0, 0), np.bool_)
        self._may = may
        if unsupported:
            warnings.warn(f"ContactSystem {self.name!r}: no narrow phase for shape pairs "
                          f"{sorted(unsupported)}; they do not touch (separate them with collide())",
                          stacklevel=3)
        # explicit contact has no Jacobian in the step matrix: no coupling blocks in the pattern either
        self._pairs = sorted(pairs) if self.implicit else []
        self._filters_base = (fam_ok, excl, type_ok, mat_pair)
        self._new_buffers(self._capacity)
        self._built = True

    def _pack_terrain(self, parts, mat_index):
        kind, index, pmat = [], [], []
        pl_n, pl_p = [], []
        pr_O, pr_u, pr_w, pr_start, pr_count = [], [], [], [], []
        ptype, pa, pn, psmin, psmax_cum, prim_mat = [], [], [], [], [], []
        meshes = []
        for part in parts:
            if isinstance(part, Plane):
                kind.append(0)
                index.append(len(pl_n))
                pl_n.append(part.normal)
                pl_p.append(part.point)
                pmat.append(mat_index(part.material))
            elif isinstance(part, ProfileTerrain):
                kind.append(1)
                index.append(len(pr_O))
                ch = part.chain
                gm = np.array([mat_index(m) for m in part.materials], np.int64)
                pr_O.append(part.origin)
                pr_u.append(part.u)
                pr_w.append(part.w)
                pr_start.append(len(ptype))
                pr_count.append(len(ch.prim_type))
                ptype.extend(ch.prim_type.tolist())
                pa.append(ch.prim_a)
                pn.append(ch.prim_n)
                psmin.append(ch.prim_smin)
                psmax_cum.append(ch.prim_smax_cum)
                prim_mat.append(gm[ch.prim_mat])
                pmat.append(int(gm[0]))
            elif isinstance(part, TriangleMesh):
                kind.append(2)
                index.append(len(meshes))
                meshes.append(part)
                pmat.append(mat_index(part.material))
            else:
                raise ValueError(f"ContactSystem: unsupported terrain part {type(part).__name__}")
        f3 = lambda x: np.array(x, float).reshape(-1, 3)  # noqa: E731
        cat = lambda xs, shape, dt=float: (np.concatenate(xs).astype(dt) if xs else np.zeros(shape, dt))  # noqa
        # meshes, concatenated with offsets
        mV, mF, mFN, mFE, mE, mEF, mEC, mVF = [], [], [], [], [], [], [], []
        bmin, bmax, bl, br, bs, bc, bf, roots = [], [], [], [], [], [], [], []
        nv = nfc = ne = nn = nvf = 0
        vp_acc = [np.zeros(1, np.int64)]
        for m in meshes:
            mV.append(m.vertices)
            mF.append(m.faces + nv)
            mFN.append(m.face_normal)
            mFE.append(m.face_edges + ne)
            mE.append(m.edges + nv)
            ef = m.edge_faces.copy()
            ef[ef >= 0] += nfc
            mEF.append(ef)
            mEC.append(m.edge_convex)
            vp_acc.append(m.vertex_face_ptr[1:] + nvf)
            mVF.append(m.vertex_faces + nfc)
            bv = m.bvh
            roots.append(nn)
            bmin.append(bv["bvh_min"])
            bmax.append(bv["bvh_max"])
            left = bv["bvh_left"].copy()
            right = bv["bvh_right"].copy()
            left[left >= 0] += nn
            right[right >= 0] += nn
            bl.append(left)
            br.append(right)
            bs.append(bv["bvh_start"] + len(np.concatenate(bf)) if bf else bv["bvh_start"])
            bc.append(bv["bvh_count"])
            bf.append(bv["bvh_faces"] + nfc)
            nv += len(m.vertices)
            nfc += len(m.faces)
            ne += len(m.edges)
            nn += len(bv["bvh_min"])
            nvf += len(m.vertex_faces)
        depth = max([m.bvh_depth for m in meshes], default=1)
        self._stack_size = 2 * depth + 8
        return TerrainArrays(
            np.array(kind, np.int64), np.array(index, np.int64), np.array(pmat, np.int64),
            f3(pl_n), f3(pl_p), f3(pr_O), f3(pr_u), f3(pr_w), np.array(pr_start, np.int64),
            np.array(pr_count, np.int64), np.array(ptype, np.int64), cat(pa, (0, 4)), cat(pn, (0, 4)),
            cat(psmin, (0,)), cat(psmax_cum, (0,)), cat(prim_mat, (0,), np.int64),
            np.array(roots, np.int64), cat(mV, (0, 3)), cat(mF, (0, 3), np.int64), cat(mFN, (0, 3)),
            cat(mFE, (0, 3), np.int64), cat(mE, (0, 2), np.int64), cat(mEF, (0, 2), np.int64),
            cat(mEC, (0,), np.bool_), np.concatenate(vp_acc).astype(np.int64), cat(mVF, (0,), np.int64),
            cat(bmin, (0, 3)), cat(bmax, (0, 3)), cat(bl, (0,), np.int64), cat(br, (0,), np.int64),
            cat(bs, (0,), np.int64), cat(bc, (0,), np.int64), cat(bf, (0,), np.int64),
        )

    def _new_buffers(self, cap):
        self.rec = new_records(cap)
        self.out = new_outputs(cap)
        self.rec_o = new_records(cap)
        self.out_o = new_outputs(cap)
        self._new_history_buffers(cap)

    def _new_history_buffers(self, cap):
        """The committed history (sorted keys, displacements) and the commit's work space, ``cap`` records."""
        self._hist_key = np.zeros((cap, 2), np.int64)
        self._hist_disp = np.zeros((cap, 3))
        self._hist_work = (np.zeros((cap, 2), np.int64), np.zeros((cap, 3)), np.zeros((2, cap), np.int64),
                           np.zeros(cap + 1, np.int64))

    # ------------------------------------------------------------------ ForceProvider
    @property
    def implicit(self) -> bool:
        """Contact stiffness and damping in the step matrix (fixed at construction: the pattern depends on it)."""
        return self._implicit

    def coupling_pairs(self):
        """Body pairs whose contact Jacobian couples them (families with "full" coupling)."""
        self._build()
        return list(self._pairs)

    def touch_pairs(self) -> list[tuple[int, int]]:
        """Every pair of bodies (i < j, both not the ground) that may touch at all: their families collide,
        they are not excluded and the narrow phase has their shapes' pair."""
        self._build()
        B = self.shapes.b_list
        out = set()
        for i, j in zip(*np.nonzero(self._may)):
            a, b = int(B[i]), int(B[j])
            if a >= 0 and b >= 0 and a != b:
                out.add((min(a, b), max(a, b)))
        return sorted(out)


    def _new_scratch(self) -> Scratch:
        """The narrow phase's work arrays for this system's shapes and broad-phase lists."""
        ns = len(self._shapes)
        nbl = len(self.shapes.b_list)
        return Scratch(np.zeros((ns, 3)), np.zeros((ns, 3, 3)), np.zeros((ns, 3)), np.zeros((ns, 3)),
                       np.zeros((nbl, 3)), np.zeros((nbl, 3)), np.arange(nbl, dtype=np.int64),
                       np.zeros(4096, np.int64), np.zeros(self._stack_size, np.int64), np.zeros(3),
                       np.zeros(3), np.zeros((10, 3, 12)), np.zeros((12, 12)), np.zeros((12, 12)))
    def bind(self, system) -> None:
        self._build()
        nb_ = system.nb
        pat = system.pattern
        self.system = system
        self.mass = np.asarray(system.mass, float)
        self.body_slot = pat.body_slot
        self.pair_slot = pat.pair_slot
        self._dummy_kxv = np.zeros((system.nb, 6))
        pidx = np.full((max(nb_, 1), max(nb_, 1)), -1, np.int64)
        for p, (i, j) in enumerate(system.pair_blocks):
            pidx[i, j] = pidx[j, i] = p
        fam_ok, excl, type_ok, mat_pair = self._filters_base
        self.filters = D_Filters(fam_ok, excl, type_ok, mat_pair, self.pair_law, pidx, self._may)
        self.scratch = self._new_scratch()
        self.coupled_pairs = len(self._pairs)
        # outputs
        self.body_out = np.zeros((nb_ + 1, 8))
        self.glob_out = np.zeros(2)
        self._dummy_data = np.zeros(1)
        self._entry = {}
        self._key_name = f"{self.name}.key"
        self._disp_name = f"{self.name}.disp"
        self._empty_key = np.zeros((0, 2), np.int64)
        self._empty_disp = np.zeros((0, 3))
        self._o_state = None  # the state of the last output evaluation (its records serve the next step)
        self._o_q = self._o_n = None
        self._bound = True

    def initial_extra(self) -> dict:
        return {f"{self.name}.key": np.zeros((0, 2), np.int64), f"{self.name}.disp": np.zeros((0, 3))}

    def _call(self, name, fn, args):
        """Call a compiled kernel through its entry point (typed once; no per-call type dispatch)."""
        ep = self._entry.get(name)
        if ep is None:
            ep = self._entry[name] = entry_point(fn, args)
        return ep(*args)

    def accumulate(self, ctx) -> None:
        stepping = ctx.data is not None
        kin = ctx.kin
        st = ctx.state
        if st is not None:
            hk = st.extra.get(self._key_name, self._empty_key)
            hd = st.extra.get(self._disp_name, self._empty_disp)
            v = st.v if st.v.flags.c_contiguous else np.ascontiguousarray(st.v)
        else:
            hk, hd = self._empty_key, self._empty_disp
            nb_ = self.system.nb
            v = np.zeros((nb_, 6))
            v[:, :3] = kin.vel[:nb_]
            v[:, 3:] = np.einsum("bji,bj->bi", kin.R[:nb_], kin.omega_w[:nb_])
        if stepping:
            self._h = ctx.h
        h = self._h
        # the shear spring looks ahead by hist_weight·h (θ-method); the history itself advances by h (commit)
        h_force = h * ctx.hist_weight if stepping else h
        data = ctx.data if stepping else self._dummy_data
        n_detected = -1
        if stepping and st is not None and self._o_state is st and np.array_equal(st.q, self._o_q):
            # a recorded sample evaluated the outputs at these very positions: its records are this step's
            self.rec, self.rec_o = self.rec_o, self.rec
            self.out, self.out_o = self.out_o, self.out
            n_detected = self._o_n
        self._o_state = None
        # explicit contact: a step's forces only (the history is staged all the same)
        want_jac = stepping and self.implicit
        while True:
            rec, out = (self.rec, self.out) if stepping else (self.rec_o, self.out_o)
            n = self._call("evaluate", _stage.evaluate,
                           (rec, out, self.shapes, self.scratch, self.filters, self.terrain_arrays, self.pair_par,
                            self.mass, hk, hd, kin.pos, kin.R, kin.vel, kin.omega_w, v, float(h_force), float(ctx.cK),
                            float(ctx.cD), want_jac, self.body_slot, self.pair_slot, ctx.f, ctx.Dv, data,
                            ctx.Kxv if ctx.Kxv is not None else self._dummy_kxv,
                            self.margin, self.default_radius, self.max_penetration, self.winkler_grid,
                            self.body_out, self.glob_out, n_detected))
            cap = rec.kind.shape[0]
            if n <= cap:
                break
            n_detected = -1
            while cap < n:
                cap *= 2
            if stepping:
                self.rec, self.out = new_records(cap), new_outputs(cap)
            else:
                self.rec_o, self.out_o = new_records(cap), new_outputs(cap)
        if stepping:
            self._staged = n
        elif st is not None:
            self._o_state, self._o_q, self._o_n = st, st.q.copy(), n
        self._last = (rec, out, n)

    def divergence_hint(self) -> str | None:
        """Said with a diverged run's diagnostic: explicit contact has a step limit."""
        if self.implicit:
            return None
        return (f"{self.name} is explicit (contact.implicit = false): the step may exceed the contacts' explicit "
                f"limit; try a smaller step or implicit contact")

    def commit(self, state) -> None:
        n = self._staged
        if self._hist_key.shape[0] < n:
            # as large as the records' buffers (grown by doubling): not one reallocation per new largest count
            self._new_history_buffers(max(n, self.rec.kind.shape[0]))
        v = state.v if state.v.flags.c_contiguous else np.ascontiguousarray(state.v)
        m = self._call("commit", CK.commit_history,
                       (n, self.rec.key, self.rec.body, self.out.s_hist, self.out.s_d0, self.out.s_Tv, self.out.s_kt,
                        self.out.s_cap, v, float(self._h), self._hist_key, self._hist_disp, *self._hist_work))
        state.extra[self._key_name] = self._hist_key[:m].copy()
        state.extra[self._disp_name] = self._hist_disp[:m].copy()

    def series(self) -> dict:
        self._build()
        bodies = sorted({b for b, *_ in self._shapes})
        names = self.model.body_names
        rows = []
        for b in bodies:
            rows.append(("ground" if b < 0 else names[b], b))
        if self.terrain is not None and -1 not in bodies:
            rows.append(("ground", -1))
        res = {}
        self._series_rows = rows
        if not self._bound:
            # the recorder asks after bind; keep a consistent answer
            raise RuntimeError("ContactSystem.series() is available after bind()")
        res[f"{self.name}.count"] = (self.glob_out, 0)
        res[f"{self.name}.penetration"] = (self.glob_out, 1)
        for nm, b in rows:
            r = b if b >= 0 else self.system.nb
            for k, c in enumerate("xyz"):
                res[f"{nm}.contact.force.{c}"] = (self.body_out[r], k)
            if b >= 0:
                for k, c in enumerate("xyz"):
                    res[f"{nm}.contact.torque.{c}"] = (self.body_out[r], 3 + k)
            res[f"{nm}.contact.count"] = (self.body_out[r], 6)
            res[f"{nm}.contact.penetration"] = (self.body_out[r], 7)
        return res

    # ------------------------------------------------------------------ inspection
    def contacts(self) -> dict:
        """The active contacts of the last evaluation (a step or a recorded sample), as arrays.

        Keys: ``body_a``, ``body_b`` (indices, -1 ground), ``point`` (n, 3),
        ``normal`` (n, 3, direction in which body_b is pushed), ``penetration``,
        ``normal_force``, ``tangential_force`` (n, 3, on body_b),
        ``relative_velocity`` (n, 3, of body_b relative to body_a at the point),
        ``shape`` (probe shape index), ``target`` (shape index, or
        ``n_shapes + terrain part``).
        """
        if not hasattr(self, "_last"):
            raise ValueError("ContactSystem.contacts(): nothing evaluated yet")
        rec, out, n = self._last
        act = np.nonzero(out.fn[:n] > 0)[0]
        return {
            "body_a": rec.body[act, 0].copy(), "body_b": rec.body[act, 1].copy(),
            "point": out.point[act].copy(), "normal": out.normal[act].copy(),
            "penetration": out.delta[act].copy(), "normal_force": out.fn[act].copy(),
            "tangential_force": out.ft[act].copy(), "relative_velocity": out.vrel[act].copy(),
            "shape": (rec.key[act, 0] >> 16).copy(), "target": (rec.key[act, 1] >> 32).copy(),
        }

    def records(self):
        """``(records, outputs, n)`` of the last evaluation: the buffers themselves, to be read only.

        For tools that need each contact's law inputs (pair, radius, weight) and staged history, which
        :meth:`contacts` leaves out (:mod:`trackdyn.experiments.power`); fields in
        :mod:`trackdyn.contact._buffers`.
        """
        if not hasattr(self, "_last"):
            raise ValueError("ContactSystem.records(): nothing evaluated yet")
        return self._last

    def shape_families(self) -> list[str]:
        """The collision family of every shape, by shape index (the probe and target ids of record keys)."""
        return [fam for _, _, _, fam, _ in self._shapes]

    @property
    def n_shapes(self) -> int:
        return len(self._shapes)


D_Filters = Filters


def _face_probes(P, n, grid):
    """Winkler probes of a convex face (vertices P (k, 3) in order, outward normal n): the centres of a
    ``grid x grid`` lattice over the face's bounding rectangle that lie inside it, and their cell area."""
    c = P.mean(axis=0)
    e1 = P[1] - P[0]
    e1 = e1 / np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    u, w = (P - c) @ e1, (P - c) @ e2
    du, dw = (u.max() - u.min()) / grid, (w.max() - w.min()) / grid
    out = []
    for i in range(grid):
        for j in range(grid):
            a, b = u.min() + (i + 0.5) * du, w.min() + (j + 0.5) * dw
            x = c + a * e1 + b * e2
            if all(np.cross(P[(k + 1) % len(P)] - P[k], x - P[k]) @ n >= -1e-12 for k in range(len(P))):
                out.append(x.tolist())
    if not out:  # a sliver: one probe at its centre carries its area
        area = 0.5 * abs(sum(np.cross(P[k], P[(k + 1) % len(P)]) @ n for k in range(len(P))))
        return [c.tolist()], float(area)
    return out, float(du * dw)
