"""Side-view (x–z) animation of a results folder to GIF (Pillow) or MP4 (imageio-ffmpeg).

The viewer stands on the -y side looking towards +y (the vehicle's right
side), x to the right and z up, with one scale on both axes. Each body's
visual shapes (``scene.json``) are drawn as their silhouettes at the recorded
pose, nearer shapes over farther ones: every track shoe outlined, wheels,
sprocket teeth (extrusions seen end-on keep their outline), meshes (a hull)
as their shaded front faces; the terrain profile is filled below. The camera
follows the vehicle and keeps it at :data:`FOLLOW_FILL` of the frame width
unless the whole motion fits in about twice its length. An overlay shows the
time, the speed and the scenario or an event's trial. A folder without a
scene still animates: every body with a recorded position is drawn as a dot.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..io.results import load
from .geometry import SideBatch, SidePrimitive, body_poses, prefetch_poses, quats_to_matrices, wheel_hub
from .plots import terrain_profile_xz

__all__ = ["animate", "animate_event", "frame_times", "SideView", "DEFAULT_COLORS", "is_event_folder"]

DEFAULT_COLORS = ("#5b6770", "#8a6d3b", "#3d6e8f", "#6b8e23", "#8f3d5a", "#4f4f8f")
FORMATS = (".gif", ".mp4")


def frame_times(t, fps: float, t0: float | None = None, t1: float | None = None, speed: float = 1.0):
    """Indices into the samples ``t`` for frames every ``speed / fps`` simulated seconds in [t0, t1]."""
    t = np.asarray(t, float)
    if len(t) == 0:
        raise ValueError("animate: the result has no samples")
    if not fps > 0:
        raise ValueError(f"animate: fps must be positive, got {fps!r}")
    if not speed > 0:
        raise ValueError(f"animate: speed must be positive, got {speed!r}")
    a = t[0] if t0 is None else float(t0)
    b = t[-1] if t1 is None else float(t1)
    if b < a:
        raise ValueError(f"animate: t1 {b} is before t0 {a}")
    if a > t[-1] + 1e-12 or b < t[0] - 1e-12:
        raise ValueError(f"animate: the window [{a}, {b}] s lies outside the run [{t[0]}, {t[-1]}] s")
    times = np.arange(a, b + 1e-9, speed / fps)
    idx = np.clip(np.searchsorted(t, times - 1e-9), 0, len(t) - 1)
    # nearest sample, keep order, drop repeats (a run sampled more coarsely than the frame rate)
    prev = np.clip(idx - 1, 0, len(t) - 1)
    idx = np.where(np.abs(t[prev] - times) < np.abs(t[idx] - times), prev, idx)
    return np.unique(idx)


def _darker(hex_color: str, f: float = 0.6) -> tuple:
    c = np.array([int(hex_color[k: k + 2], 16) for k in (1, 3, 5)]) / 255.0
    return tuple(c * f)


def _edge(hex_color: str) -> tuple:
    """Outline colour of a face: darker for light faces, lighter for dark ones (track shoes are near black:
    a darker outline would not tell one shoe from the next)."""
    c = np.array([int(hex_color[k: k + 2], 16) for k in (1, 3, 5)]) / 255.0
    lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    return tuple(c + 0.45 * (1.0 - c)) if lum < 0.3 else tuple(c * 0.6)


#: Margins of the axes in pixels (left, bottom, right, top): room for the tick labels and axis labels only.
AXES_MARGINS = (50, 38, 8, 6)


def axes_rect(size) -> tuple:
    """Axes rectangle (left, bottom, width, height) in figure fractions for a frame ``size`` in pixels."""
    w, h = size
    left, bottom, right, top = AXES_MARGINS
    return (left / w, bottom / h, 1.0 - (left + right) / w, 1.0 - (bottom + top) / h)


#: Share of the frame width the vehicle takes when the camera follows it.
FOLLOW_FILL = 0.6


class SideView:
    """Draws the side view of one results folder frame by frame into a Matplotlib figure.

    The camera either shows the whole motion at once (when the model stays
    within about twice its own length) or follows a body, keeping the model
    at :data:`FOLLOW_FILL` of the frame width; either way x and z share one
    scale (terrain and obstacles to scale) and the limits are fitted to the
    frame, so no part of the frame is left empty.

    Parameters
    ----------
    result : Result
    follow : str or None
        Body to keep centred (horizontally and vertically); ``"auto"`` follows
        the heaviest drawn body when the motion spans more than about twice the
        model's length, ``None`` never.
    window : float, optional
        Width of the view when following, m (default: the model's length
        divided by :data:`FOLLOW_FILL`).
    size : (int, int)
        Frame size in pixels (MP4 wants multiples of 16).
    overlay : bool
        Draw the time, the followed body's speed and the scenario (or
        ``caption``) in the top-left corner.
    caption : str, optional
        Second line of the overlay (an event's trial, say); default the
        scenario's name.
    """

    def __init__(self, result, follow="auto", window: float | None = None, size=(960, 544), dpi: int = 100,
                 overlay: bool = True, caption: str | None = None):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection, PolyCollection
        from matplotlib.figure import Figure

        self.result = result
        scene = result.scene or {}
        items = []  # (body index, shape dict, face colour, edge colour)
        self.bodies = []  # (name, pos (n,3), quat (n,4))
        self.dots = []
        missing = []
        prefetch_poses(result, [b["name"] for b in scene.get("bodies", [])])
        for k, b in enumerate(scene.get("bodies", [])):
            pose = body_poses(result, b["name"])
            if pose is None:
                missing.append(b["name"])
                continue
            bi = len(self.bodies)
            self.bodies.append((b["name"], pose[0], pose[1], b.get("mass", 0.0)))
            for d in b["shapes"]:
                col = d.get("color") or DEFAULT_COLORS[k % len(DEFAULT_COLORS)]
                items.append((bi, d, col, _edge(col)))
                hub = wheel_hub(d)
                if hub is not None:
                    light = "#%02x%02x%02x" % tuple(int(255 * v) for v in _edge(col))
                    items.append((bi, hub, light, light))
        self.static = [(SidePrimitive(d), d.get("color") or "#777777") for d in scene.get("ground_shapes", [])]
        self.missing = missing
        self.batch = SideBatch(items)
        if self.bodies:
            self._pos = np.stack([b[1] for b in self.bodies], axis=1)  # (n, nb, 3)
            self._quat = np.stack([b[2] for b in self.bodies], axis=1)  # (n, nb, 4)
        if not self.bodies:
            names = sorted({c.rsplit(".", 2)[0] for c in result.columns if c.endswith(".pos.x")})
            for n in names:
                if f"{n}.pos.z" in result:
                    self.dots.append((n, result[f"{n}.pos.x"], result[f"{n}.pos.z"]))
            if not self.dots:
                raise ValueError("animate: nothing to draw: no scene.json shapes with recorded poses "
                                 "and no recorded NAME.pos.x/z series")
        self.terrain = scene.get("terrain")

        w, h = size
        self.size = (int(w), int(h))
        self.fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self._background = None
        rect = axes_rect(self.size)
        ax = self.fig.add_axes(rect)
        self.ax = ax
        # height / width of the axes in pixels: limits fitted to it keep one scale on x and z without
        # shrinking the axes
        self.aspect = (rect[3] * h) / (rect[2] * w)
        self._extent(follow, window)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("x [m]", labelpad=1, fontsize=9)
        ax.set_ylabel("z [m]", labelpad=1, fontsize=9)
        ax.tick_params(labelsize=8, pad=2)
        ax.grid(True, alpha=0.25)
        self._set_limits(0)
        lo, hi = self.xlim_all
        margin = (self.window if self.follow is not None else hi - lo) + 10.0
        prof = terrain_profile_xz(self.terrain, lo - margin, hi + margin)
        if prof is not None:
            px, pz = prof
            floor = min(pz.min(), self.zlim[0]) - 10.0 - (self.window if self.follow is not None else 0.0)
            # a closed polygon down to the floor: also right for profiles whose x goes back (overhangs)
            ax.fill(np.concatenate([px, [px[-1], px[0]]]), np.concatenate([pz, [floor, floor]]),
                    color="#c8b89a", zorder=0, lw=0)
            ax.plot(px, pz, color="#6b5b3e", lw=1.2, zorder=1)
        for prim, col in self.static:
            for poly in prim.polygons(np.eye(3), np.zeros(3))[0]:
                ax.fill(poly[:, 0], poly[:, 1], color=col, zorder=1)
        self.polys = PolyCollection([], zorder=3, linewidths=0.6)
        ax.add_collection(self.polys)
        self.lines = LineCollection([], zorder=4, linewidths=1.2)
        ax.add_collection(self.lines)
        self.dot_artist = ax.plot([], [], "o", color="#3d6e8f", ms=4, zorder=4)[0] if self.dots else None
        self.overlay = bool(overlay)
        meta = result.metadata or {}
        scen = meta.get("scenario") if isinstance(meta.get("scenario"), dict) else {}
        self.caption = caption if caption is not None else (scen.get("description") or scen.get("name") or "")
        self._speed = self._speed_series()
        self.stamp = ax.text(0.008, 0.985, "", transform=ax.transAxes, va="top", ha="left",
                             fontsize=10 if w >= 700 else 8,
                             family="monospace", bbox=dict(boxstyle="round", fc="w", ec="0.6", alpha=0.85),
                             zorder=5, visible=self.overlay)

    def _speed_series(self):
        """Horizontal speed of the followed (else the heaviest) body, m/s: recorded ``vel`` or differenced."""
        if not self.bodies:
            return None
        k = self.follow if self.follow is not None else max(range(len(self.bodies)),
                                                            key=lambda i: self.bodies[i][3])
        name, pos = self.bodies[k][0], self.bodies[k][1]
        if f"{name}.vel.x" in self.result:
            vx = np.asarray(self.result[f"{name}.vel.x"], float)
            vy = np.asarray(self.result[f"{name}.vel.y"], float) if f"{name}.vel.y" in self.result else 0 * vx
            return np.hypot(vx, vy)
        t = np.asarray(self.result.t, float)
        if len(t) < 2:
            return None
        return np.abs(np.gradient(pos[:, 0], t))

    def _box_at(self, i):
        """Bounding box (x0, x1, z0, z1) of the drawn model's polygons at sample ``i``, or ``None``."""
        q = self._quat[i]
        good = np.isfinite(q).all(axis=1) & (np.abs(q).sum(axis=1) > 0) & np.isfinite(self._pos[i]).all(axis=1)
        if not good.any():
            return None
        R = np.full((len(q), 3, 3), np.nan)
        R[good] = quats_to_matrices(q[good])
        polys = self.batch.project(R, self._pos[i])[0]
        if not polys:
            return None
        pts = np.concatenate([np.asarray(p) for p in polys])
        return pts[:, 0].min(), pts[:, 0].max(), pts[:, 1].min(), pts[:, 1].max()

    def _model_extent(self, n_samples: int = 40):
        """``(first index, its box, box swept over the run)`` from the polygons at up to ``n_samples`` samples."""
        n = len(self._pos)
        first, box = None, None
        for i in range(n):
            box = self._box_at(i)
            if box is not None:
                first = i
                break
        if box is None:
            return None, None, None
        sweep = np.array(box, float)
        for i in np.unique(np.linspace(first, n - 1, n_samples).astype(int)):
            b = self._box_at(int(i))
            if b is not None:
                sweep = np.array([min(sweep[0], b[0]), max(sweep[1], b[1]), min(sweep[2], b[2]),
                                  max(sweep[3], b[3])])
        return first, box, tuple(sweep)

    def _fit(self, x0, x1, z0, z1):
        """Limits around the box (x0, x1, z0, z1) with the axes' aspect: the shorter side grows."""
        xc, zc = 0.5 * (x0 + x1), 0.5 * (z0 + z1)
        half_w = max(0.5 * (x1 - x0), 0.5 * (z1 - z0) / self.aspect, 1e-3)
        half_h = half_w * self.aspect
        return (xc - half_w, xc + half_w), (zc - half_h, zc + half_h)

    def _extent(self, follow, window):
        if self.bodies:
            xs = np.concatenate([p[:, 0] for _, p, _, _ in self.bodies])
            zs = np.concatenate([p[:, 2] for _, p, _, _ in self.bodies])
            # size of the shapes, from their body-frame points
            reach = self.batch.reach
        else:
            xs = np.concatenate([x for _, x, _ in self.dots])
            zs = np.concatenate([z for _, _, z in self.dots])
            reach = 0.05
        ok = np.isfinite(xs) & np.isfinite(zs)
        xs, zs = xs[ok], zs[ok]
        if len(xs) == 0:
            raise ValueError("animate: the recorded positions are all NaN")
        box = sweep = None
        if self.bodies:
            i0, box, sweep = self._model_extent()
        if box is not None:
            # the whole motion: the model's polygons over the run, and the bodies' reference points
            pad = 0.06 * max(box[1] - box[0], box[3] - box[2])
            x0, x1 = min(sweep[0], xs.min()) - pad, max(sweep[1], xs.max()) + pad
            z0, z1 = min(sweep[2], zs.min()) - pad, max(sweep[3], zs.max()) + pad
        else:
            pad = reach + 0.05 * max(np.ptp(xs), np.ptp(zs), 0.5)
            x0, x1, z0, z1 = xs.min() - pad, xs.max() + pad, zs.min() - pad, zs.max() + pad
        if self.terrain:
            prof = terrain_profile_xz(self.terrain, x0, x1)
            if prof is not None:
                inside = (prof[0] >= x0) & (prof[0] <= x1)
                zt = prof[1][inside] if inside.any() else prof[1]
                # the ground under the model, and a strip of it, stays in the fixed view
                z0 = min(z0, zt.min() - 0.05 * (z1 - z0))
        self.xlim_all, self.zlim = self._fit(x0, x1, z0, z1)
        self.follow, self.window, self.box = None, None, box
        if follow and self.bodies:
            names = [b[0] for b in self.bodies]
            if follow == "auto":
                k = max(range(len(self.bodies)), key=lambda i: self.bodies[i][3])
            elif follow in names:
                k = names.index(follow)
            else:
                raise ValueError(f"animate: cannot follow {follow!r}: not a drawn body ({', '.join(names)})")
            size_x = (box[1] - box[0]) if box is not None else 2 * reach
            size_z = (box[3] - box[2]) if box is not None else 2 * reach
            win = float(window) if window else max(size_x / FOLLOW_FILL, 1.3 * size_z / self.aspect, 1e-2)
            # "auto": follow only a body that travels farther than the model is long, when showing the whole
            # motion would make the model small (a swinging pendulum is better seen whole)
            p = self.bodies[k][1]
            p = p[np.isfinite(p[:, 0])]
            travel = float(np.hypot(np.ptp(p[:, 0]), np.ptp(p[:, 2]))) if len(p) else 0.0
            small = (x1 - x0) > 1.15 * win or (z1 - z0) > 1.15 * win * self.aspect
            if follow != "auto" or (small and travel > max(size_x, size_z)):
                self.follow, self.window = k, win
                p = self.bodies[k][1]
                # keep the model's box (not the body's reference point) centred
                self._offset = (np.array([0.5 * (box[0] + box[1]), 0.5 * (box[2] + box[3])])
                                - p[i0][[0, 2]]) if box is not None else np.zeros(2)
        elif follow and not self.bodies and follow != "auto":
            raise ValueError(f"animate: cannot follow {follow!r}: the results folder has no scene")

    def camera(self, i):
        """``(xlim, zlim)`` of the view at sample ``i``."""
        if self.follow is None:
            return self.xlim_all, self.zlim
        p = self.bodies[self.follow][1]
        c = p[i][[0, 2]] if np.isfinite(p[i][[0, 2]]).all() else p[np.isfinite(p[:, 0])][0][[0, 2]]
        c = c + self._offset
        half_w = 0.5 * self.window
        half_h = half_w * self.aspect
        return (c[0] - half_w, c[0] + half_w), (c[1] - half_h, c[1] + half_h)

    def _set_limits(self, i):
        xl, zl = self.camera(i)
        self.ax.set_xlim(*xl)
        self.ax.set_ylim(*zl)

    def _stamp_text(self, i):
        lines = [f"t = {self.result.t[i]:7.3f} s"]
        if self._speed is not None and np.isfinite(self._speed[i]):
            lines[0] += f"   v = {self._speed[i]:5.2f} m/s"
        if self.caption:
            lines.append(self.caption)
        return "\n".join(lines)

    def draw(self, i: int) -> np.ndarray:
        """Render sample ``i``; returns the RGB frame (h, w, 3) uint8."""
        if self.bodies:
            q = self._quat[i]
            good = np.isfinite(q).all(axis=1) & (np.abs(q).sum(axis=1) > 0)
            R = np.full((len(q), 3, 3), np.nan)
            if good.any():
                R[good] = quats_to_matrices(q[good])
            polys, faces, edges, depth, lines, line_cols = self.batch.project(R, self._pos[i])
        else:
            polys, faces, edges, depth, lines, line_cols = [], [], [], [], [], []
        order = np.argsort(-np.asarray(depth), kind="stable")  # far (large y) first
        self.polys.set_verts([polys[k] for k in order])
        self.polys.set_facecolor([faces[k] for k in order])
        self.polys.set_edgecolor([edges[k] for k in order])
        self.lines.set_segments(lines)
        self.lines.set_color(line_cols)
        if self.dot_artist is not None:
            self.dot_artist.set_data([x[i] for _, x, _ in self.dots], [z[i] for _, _, z in self.dots])
        self.stamp.set_text(self._stamp_text(i))
        dynamic = [a for a in (self.polys, self.lines, self.dot_artist, self.stamp) if a is not None]
        if self.follow is None:  # fixed view: draw axes, terrain and grid once, then only what moves
            if self._background is None:
                shown = [a.get_visible() for a in dynamic]
                for a in dynamic:
                    a.set_visible(False)
                self.canvas.draw()
                self._background = self.canvas.copy_from_bbox(self.fig.bbox)
                for a, v in zip(dynamic, shown):
                    a.set_visible(v)
            self.canvas.restore_region(self._background)
            for a in dynamic:
                self.ax.draw_artist(a)
        else:
            self._set_limits(i)
            self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()


def _check_out(out, size):
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"animate: output must end in .gif or .mp4, got {out.name!r}")
    size = (int(size[0]), int(size[1]))
    if suffix == ".mp4":  # H.264 in yuv420p wants even sizes; imageio-ffmpeg prefers multiples of 16
        size = (size[0] // 16 * 16, size[1] // 16 * 16)
    if min(size) < 64:
        raise ValueError(f"animate: frame size {size} is too small (at least 64 x 64 pixels)")
    return out, suffix, size


def _write_frames(out: Path, suffix: str, fps: float, frames) -> None:
    """Write the frames (an iterable of RGB arrays) under a temporary name, then rename."""
    import imageio.v2 as imageio

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp-{os.getpid()}{suffix}")
    if suffix == ".gif":
        writer = imageio.get_writer(tmp, mode="I", duration=1000.0 / fps, loop=0)
    else:
        writer = imageio.get_writer(tmp, fps=fps, codec="libx264", quality=7, macro_block_size=16,
                                    ffmpeg_log_level="error", pixelformat="yuv420p")
    try:
        for img in frames:
            writer.append_data(img)
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, out)


def is_event_folder(path) -> bool:
    """True for an event's folder (``summary.json`` with trials, no ``metadata.json`` of its own)."""
    d = Path(path)
    return d.is_dir() and not (d / "metadata.json").exists() and (d / "summary.json").exists()


def animate(result, out, fps: float = 25.0, t0: float | None = None, t1: float | None = None,
            speed: float = 1.0, follow="auto", window: float | None = None, size=(960, 544),
            overlay: bool = True, caption: str | None = None) -> dict:
    """Write a side-view animation of a result (or results folder) to ``out`` (``.gif`` or ``.mp4``).

    An event's folder (``trackdyn event ... --out DIR``) is animated trial
    after trial by :func:`animate_event`.

    Parameters
    ----------
    result : Result or path
    out : path
        ``.gif`` (Pillow) or ``.mp4`` (H.264 through imageio-ffmpeg).
    fps : float
        Frames per second of the file.
    t0, t1 : float, optional
        Time window, s (default the whole run).
    speed : float
        Simulated seconds per second of video.
    follow, window, overlay, caption : see :class:`SideView`

    Returns
    -------
    dict
        ``out``, ``frames``, ``fps``, ``t0``, ``t1``, ``size`` and ``warnings``.
    """
    if isinstance(result, (str, os.PathLike)) and is_event_folder(result):
        return animate_event(result, out, fps=fps, speed=speed, follow=follow, window=window, size=size,
                             overlay=overlay, t0=t0, t1=t1)
    res = load(result) if isinstance(result, (str, os.PathLike)) else result
    out, suffix, size = _check_out(out, size)
    idx = frame_times(res.t, fps, t0, t1, speed)
    view = SideView(res, follow=follow, window=window, size=size, overlay=overlay, caption=caption)
    _write_frames(out, suffix, fps, (view.draw(int(i)) for i in idx))
    warn = [f"body {n!r} has shapes but no recorded pose; not drawn" for n in view.missing]
    return {"out": str(out), "frames": int(len(idx)), "fps": float(fps), "t0": float(res.t[idx[0]]),
            "t1": float(res.t[idx[-1]]), "size": list(size), "follow": None if view.follow is None
            else view.bodies[view.follow][0], "warnings": warn}


def trial_caption(summary: dict, k: int, n: int, trial: dict) -> str:
    """Overlay line of an event's trial: ``step-climb trial 2/6: 0.75 - fail (hull-strike)``."""
    mode = trial.get("mode") or trial.get("reason")
    outcome = "pass" if trial.get("passed") else ("fail" + (f" ({mode})" if mode else ""))
    return f"{summary.get('event', 'event')} trial {k}/{n}: {trial.get('value', '?'):g} - {outcome}" \
        if isinstance(trial.get("value"), (int, float)) else f"{summary.get('event', 'event')} trial {k}/{n} - {outcome}"


def animate_event(folder, out, fps: float = 25.0, speed: float = 1.0, follow="auto", window: float | None = None,
                  size=(960, 544), overlay: bool = True, t0: float | None = None, t1: float | None = None) -> dict:
    """Animate an event's trials one after the other, each captioned with its value and outcome.

    The trials are those of ``summary.json`` with a results folder
    (``trials/<label>/``), in the order they were run; each is framed by its own
    camera (:class:`SideView`). ``t0`` and ``t1`` window every trial.

    Returns
    -------
    dict
        ``out``, ``frames``, ``fps``, ``trials`` (one ``{caption, folder, frames}`` per trial),
        ``size`` and ``warnings``.
    """
    import json

    folder = Path(folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    trials = [t for t in summary.get("trials", []) or [] if isinstance(t, dict) and t.get("folder")
              and (folder / t["folder"] / "metadata.json").exists()]
    if not trials:
        raise ValueError(f"animate: the event folder {folder} has no trial with a results folder "
                         "(run the event with --out to keep them)")
    out, suffix, size = _check_out(out, size)
    parts, warn = [], []

    def frames():
        for k, t in enumerate(trials, start=1):
            res = load(folder / t["folder"])
            a = None if t0 is None else max(t0, float(res.t[0]))
            b = None if t1 is None else min(t1, float(res.t[-1]))
            idx = frame_times(res.t, fps, a, b, speed)
            cap = trial_caption(summary, k, len(trials), t)
            view = SideView(res, follow=follow, window=window, size=size, overlay=overlay, caption=cap)
            warn.extend(f"{t['folder']}: body {n!r} has shapes but no recorded pose; not drawn" for n in view.missing)
            parts.append({"caption": cap, "folder": t["folder"], "frames": int(len(idx))})
            for i in idx:
                yield view.draw(int(i))

    _write_frames(out, suffix, fps, frames())
    return {"out": str(out), "frames": int(sum(p["frames"] for p in parts)), "fps": float(fps), "trials": parts,
            "size": list(size), "warnings": warn}
