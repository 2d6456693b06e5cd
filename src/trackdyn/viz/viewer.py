"""``trackdyn view``: one self-contained HTML page that replays a run in 3-D (WebGL, offline).

The page embeds a small WebGL renderer written for trackdyn
(``viewer_template.html``, no third-party code, no network access) and the
run's data as JSON with base64 Float32 arrays:

- one flat-shaded triangle mesh per distinct shape (shoes share one), in the
  body frame, from :func:`trackdyn.viz.geometry.shape_mesh`;
- per body, the meshes and colours of its shapes;
- poses (position, quaternion) of every drawn body per frame, ``(frames,
  bodies, 7)``, decimated to at most ``max_frames`` frames and about
  ``fps`` frames per simulated second;
- the terrain as a mesh (profiles extended flat over the run's x range);
- contact forces of the bodies that recorded ``NAME.contact.force.*``
  (drawn as arrows, toggled in the page);
- the camera: it follows the heaviest body (the hull) when that travels
  farther than the model is long, at a distance that keeps the model at
  about 60 % of the view's width.

A results folder without ``scene.json`` still plays: each body with recorded
``pos.*`` is drawn as a small sphere.
"""

from __future__ import annotations

import base64
import html
import json
import os
from importlib import resources
from pathlib import Path

import numpy as np

from .._version import __version__
from ..io.results import load
from .animate import DEFAULT_COLORS
from .geometry import body_poses, flat_normals, prefetch_poses, shape_mesh

__all__ = ["viewer_data", "viewer_html", "write_viewer"]

TERRAIN_COLOR = "#b9a57e"


def _b64(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def _mesh_entry(d):
    v, f = shape_mesh(d)
    pos, nrm = flat_normals(v, f)
    return {"pos": _b64(pos), "nrm": _b64(nrm)}


def _frames(t, max_frames, fps):
    t = np.asarray(t, float)
    if len(t) <= 1:
        return np.arange(len(t))
    duration = t[-1] - t[0]
    n = int(min(max_frames, max(2, np.ceil(duration * fps) + 1), len(t)))
    want = np.linspace(t[0], t[-1], n)
    return np.unique(np.clip(np.searchsorted(t, want - 1e-12), 0, len(t) - 1))


def _ffill(a):
    """Forward-fill NaN rows along axis 0 (decimated poses), then back-fill the leading ones."""
    a = a.copy()
    ok = ~np.isnan(a[:, 0])
    if not ok.any():
        return a
    idx = np.where(ok, np.arange(len(a)), 0)
    np.maximum.accumulate(idx, out=idx)
    a = a[idx]
    first = int(np.argmax(ok))
    a[:first] = a[first]
    return a


def _terrain_mesh(ter, x_lo, x_hi):
    if ter["type"] == "profile":
        x = np.asarray(ter["x"], float)
        z = np.asarray(ter["z"], float)
        x = np.concatenate([[min(x_lo, x[0] - 1.0)], x, [max(x_hi, x[-1] + 1.0)]])
        z = np.concatenate([[z[0]], z, [z[-1]]])
        y0, y1 = ter["y"]
        tris = []
        for k in range(len(x) - 1):
            a0, a1 = (x[k], y0, z[k]), (x[k + 1], y0, z[k + 1])
            b0, b1 = (x[k], y1, z[k]), (x[k + 1], y1, z[k + 1])
            if x[k + 1] == x[k] and z[k + 1] == z[k]:
                continue
            tris += [a0, a1, b1, a0, b1, b0]
        v = np.array(tris, float)
        faces = np.arange(len(v)).reshape(-1, 3)
    else:
        x = np.asarray(ter["x"], float)
        y = np.asarray(ter["y"], float)
        Z = np.asarray(ter["z"], float)
        X, Y = np.meshgrid(x, y)
        v = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
        nx = len(x)
        faces = []
        for j in range(len(y) - 1):
            for i in range(nx - 1):
                a, b, c, d = j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i
                faces += [[a, b, c], [a, c, d]]
        faces = np.array(faces, dtype=np.int64)
    pos, nrm = flat_normals(v, faces)
    return {"pos": _b64(pos), "nrm": _b64(nrm), "color": ter.get("color") or TERRAIN_COLOR}, v


#: Camera distance when following, in model lengths: the model takes about 60 % of the view's width.
FOLLOW_DISTANCE = 1.5
#: Arrow length of the largest contact force (its 99th percentile over the run), in model lengths.
FORCE_ARROW = 0.18


def _model_size(pose0, bodies, reach) -> float:
    """Largest extent (m) of the model at its first frame: the bodies' positions and their meshes' reach."""
    p = pose0[:, :3]
    ok = np.isfinite(p[:, 0])
    if not ok.any():
        return 1.0
    r = np.array([reach[k] for k in range(len(bodies))])[ok]
    lo = (p[ok] - r).min(axis=0)
    hi = (p[ok] + r).max(axis=0)
    return float(max(np.max(hi - lo), 1e-2))


def _contact_forces(result, bodies, idx, model):
    """Contact forces on the drawn bodies that recorded ``NAME.contact.force.{x,y,z}``, for arrows.

    ``{"bodies": [drawn body index], "f": base64 (frames, n, 3) N, "ref": N, "len": m}`` or ``None``:
    an arrow of length ``len * |f| / ref`` ends at the body's reference point, pointing along the force
    (the push of what touches it); ``ref`` is the 99th percentile of |f| over the run.
    """
    names = [(k, b["name"]) for k, b in enumerate(bodies)
             if all(f"{b['name']}.contact.force.{c}" in result for c in "xyz")]
    if not names:
        return None
    if hasattr(result, "prefetch"):
        result.prefetch([f"{n}.contact.force.{c}" for _, n in names for c in "xyz"])
    F = np.stack([np.column_stack([result[f"{n}.contact.force.{c}"] for c in "xyz"])[idx] for _, n in names],
                 axis=1)
    F = np.where(np.isfinite(F), F, 0.0)
    mag = np.linalg.norm(F, axis=2)
    if not (mag > 0).any():
        return None
    ref = float(np.percentile(mag[mag > 0], 99))
    return {"bodies": [k for k, _ in names], "f": _b64(F), "ref": ref, "len": FORCE_ARROW * model}


def _nice_step(span):
    raw = max(span, 1e-3) / 12
    mag = 10 ** np.floor(np.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)


def viewer_data(result, max_frames: int = 1500, fps: float = 30.0, title: str | None = None) -> dict:
    """The JSON payload of the viewer page for a :class:`~trackdyn.io.results.Result`."""
    scene = result.scene or {}
    idx = _frames(result.t, int(max_frames), float(fps))
    mesh_index: dict[str, int] = {}
    meshes: list[dict] = []
    bodies, pose_cols, missing = [], [], []

    mesh_reach: list[float] = []

    def mesh_of(d):
        key = json.dumps({k: v for k, v in d.items() if k != "color"}, sort_keys=True)
        if key not in mesh_index:
            mesh_index[key] = len(meshes)
            meshes.append(_mesh_entry(d))
            v, _ = shape_mesh(d)
            mesh_reach.append(np.abs(np.asarray(v, float)).max(axis=0))
        return mesh_index[key]

    prefetch_poses(result, [b["name"] for b in scene.get("bodies", [])])
    for k, b in enumerate(scene.get("bodies", [])):
        pose = body_poses(result, b["name"])
        if pose is None:
            missing.append(b["name"])
            continue
        default = DEFAULT_COLORS[k % len(DEFAULT_COLORS)]
        parts, lines = [], []
        for d in b["shapes"]:
            col = d.get("color") or default
            if d["type"] == "polyline":
                p = np.asarray(d["points"], float)
                if d.get("closed"):
                    p = np.vstack([p, p[:1]])
                lines.append({"pts": _b64(p), "color": col})
            else:
                parts.append({"mesh": mesh_of(d), "color": col})
        bodies.append({"name": b["name"], "mass": b.get("mass", 0.0), "parts": parts, "lines": lines})
        pose_cols.append(np.column_stack(pose))
    ground, ground_lines = [], []
    for d in scene.get("ground_shapes", []):
        col = d.get("color") or "#777777"
        if d["type"] == "polyline":
            p = np.asarray(d["points"], float)
            ground_lines.append({"pts": _b64(np.vstack([p, p[:1]]) if d.get("closed") else p), "color": col})
        else:
            ground.append({"mesh": mesh_of(d), "color": col})
    if not bodies:  # no scene: a sphere per body with a recorded position
        names = sorted({c[: -len(".pos.x")] for c in result.columns if c.endswith(".pos.x")})
        names = [n for n in names if f"{n}.pos.y" in result and f"{n}.pos.z" in result]
        if not names:
            raise ValueError("view: nothing to draw: no scene.json shapes with recorded poses and no "
                             "recorded NAME.pos.x/y/z series")
        P = np.stack([np.column_stack([result[f"{n}.pos.{c}"] for c in "xyz"]) for n in names])
        span = np.nanmax(np.ptp(P.reshape(-1, 3), axis=0)) if np.isfinite(P).any() else 1.0
        sph = {"type": "sphere", "radius": float(max(0.01, 0.015 * span)), "center": [0.0, 0.0, 0.0]}
        for k, n in enumerate(names):
            bodies.append({"name": n, "mass": 0.0, "parts": [{"mesh": mesh_of(sph), "color":
                                                               DEFAULT_COLORS[k % len(DEFAULT_COLORS)]}],
                           "lines": []})
            q = np.zeros((len(result.t), 4))
            q[:, 0] = 1.0
            pose_cols.append(np.column_stack([P[k], q]))
    poses = np.stack([_ffill(p)[idx] for p in pose_cols], axis=1)  # (frames, bodies, 7)
    # half-extent (x, y, z) of each body's meshes around its reference point, m
    reach = [np.max([mesh_reach[q["mesh"]] for q in b["parts"]], axis=0) if b["parts"] else np.zeros(3)
             for b in bodies]
    finite = poses[np.isfinite(poses[:, :, 0])][:, :3]
    lo, hi = (finite.min(axis=0), finite.max(axis=0)) if len(finite) else (np.zeros(3), np.ones(3))
    size = float(max(np.max(hi - lo), 0.5))
    terrain = None
    zmin = float(lo[2]) - 0.1 * size
    ter = scene.get("terrain")
    if ter:
        terrain, tv = _terrain_mesh(ter, float(lo[0]) - 0.3 * size, float(hi[0]) + 0.3 * size)
        zmin = float(tv[:, 2].min()) - 1e-3
    step = _nice_step(size)
    pad = 0.25 * size
    grid = {"x0": float(np.floor((lo[0] - pad) / step) * step), "x1": float(np.ceil((hi[0] + pad) / step) * step),
            "y0": float(np.floor((lo[1] - pad) / step) * step), "y1": float(np.ceil((hi[1] + pad) / step) * step),
            "z": zmin, "step": step}
    masses = [b["mass"] for b in bodies]
    follow = int(np.argmax(masses)) if masses and max(masses) > 0 else -1
    model = _model_size(poses[0], bodies, reach)
    # follow by default when the heaviest body travels farther than the model is long (a vehicle driving
    # off); the camera then stands at a distance that shows the model, not the whole run
    if follow >= 0:
        p = poses[:, follow, :3]
        p = p[np.isfinite(p[:, 0])]
        travel = float(np.max(np.ptp(p, axis=0))) if len(p) else 0.0
        follow_on = travel > max(model, 0.5)
    else:
        follow_on = False
    center = 0.5 * (lo + hi)
    view = {"target": center.tolist(), "dist": FOLLOW_DISTANCE * max(model, size) + 0.5}
    if follow_on:
        view = {"target": poses[0, follow, :3].tolist(), "dist": FOLLOW_DISTANCE * model + 0.5}
    forces = _contact_forces(result, bodies, idx, model)
    meta = result.metadata or {}
    scen = meta.get("scenario") or {}
    return {
        "title": title or scen.get("name") or "trackdyn run",
        "t": _b64(result.t[idx]),
        "meshes": meshes,
        "bodies": bodies,
        "ground": ground,
        "ground_lines": ground_lines,
        "poses": _b64(poses),
        "terrain": terrain,
        "grid": grid,
        "follow_on": bool(follow_on),
        "follow_body": follow,
        "view": view,
        "model_size": model,
        "forces": forces,
        "missing": missing,
        "frames": int(len(idx)),
    }


def viewer_html(data: dict) -> str:
    """The viewer page for a :func:`viewer_data` payload."""
    template = resources.files("trackdyn.viz").joinpath("viewer_template.html").read_text(encoding="utf-8")
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (template.replace("__TITLE__", html.escape(data["title"]))
            .replace("__VERSION__", html.escape(__version__))
            .replace("__DATA__", payload))


def write_viewer(result, out, max_frames: int = 1500, fps: float = 30.0, title: str | None = None) -> dict:
    """Write the 3-D viewer page of a result (or results folder) to ``out``; returns a summary dict.

    Returns
    -------
    dict
        ``out``, ``frames``, ``bodies``, ``bytes``, ``warnings``.
    """
    res = load(result) if isinstance(result, (str, os.PathLike)) else result
    if max_frames < 2:
        raise ValueError(f"view: max_frames must be at least 2, got {max_frames}")
    data = viewer_data(res, max_frames=max_frames, fps=fps, title=title)
    text = viewer_html(data)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    warn = [f"body {n!r} has shapes but no recorded pose; not drawn" for n in data["missing"]]
    return {"out": str(out), "frames": data["frames"], "bodies": len(data["bodies"]), "bytes": len(text),
            "warnings": warn}
