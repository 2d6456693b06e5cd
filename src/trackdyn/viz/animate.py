"""Side-view (x–z) animation of a results folder to GIF (Pillow) or MP4 (imageio-ffmpeg).

The viewer stands on the -y side looking towards +y (the vehicle's right
side), x to the right and z up. Each body's visual shapes (``scene.json``) are
drawn as their silhouettes at the recorded pose, nearer shapes over farther
ones; the terrain profile is filled below; a time stamp sits in the corner.
A folder without a scene still animates: every body with a recorded position
is drawn as a dot.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..io.results import load
from .geometry import SideBatch, SidePrimitive, body_poses, prefetch_poses, quats_to_matrices
from .plots import terrain_profile_xz

__all__ = ["animate", "frame_times", "SideView", "DEFAULT_COLORS"]

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


class SideView:
    """Draws the side view of one results folder frame by frame into a Matplotlib figure.

    Parameters
    ----------
    result : Result
    follow : str or None
        Body to keep centred horizontally; ``"auto"`` follows the heaviest drawn
        body when the motion spans more than the window, ``None`` never.
    window : float, optional
        Width of the view when following, m (default 3x the model's size).
    size : (int, int)
        Frame size in pixels (MP4 wants multiples of 16).
    """

    def __init__(self, result, follow="auto", window: float | None = None, size=(960, 544), dpi: int = 100):
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
                items.append((bi, d, col, _darker(col)))
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
        self._extent(follow, window)

        w, h = size
        self.fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self._background = None
        ax = self.fig.add_axes((0.1, 0.1, 0.88, 0.87))
        self.ax = ax
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("z [m]")
        ax.grid(True, alpha=0.25)
        self._set_limits(0)
        prof = terrain_profile_xz(self.terrain, self.xlim_all[0] - 10, self.xlim_all[1] + 10)
        if prof is not None:
            px, pz = prof
            floor = min(pz.min(), self.zlim[0]) - 10.0
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
        self.stamp = ax.text(0.01, 0.97, "", transform=ax.transAxes, va="top", ha="left", fontsize=11,
                             family="monospace", bbox=dict(boxstyle="round", fc="w", ec="0.6", alpha=0.85),
                             zorder=5)

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
        pad = reach + 0.05 * max(np.ptp(xs), np.ptp(zs), 0.5)
        self.xlim_all = (xs.min() - pad, xs.max() + pad)
        self.zlim = (zs.min() - pad, zs.max() + pad)
        if self.terrain:
            prof = terrain_profile_xz(self.terrain, *self.xlim_all)
            if prof is not None:
                self.zlim = (min(self.zlim[0], prof[1].min() - 0.1 * pad), self.zlim[1])
        self.follow = None
        if follow and self.bodies:
            if follow == "auto":
                heaviest = max(range(len(self.bodies)), key=lambda i: self.bodies[i][3])
                p0 = self.bodies[heaviest][1]
                size = 2 * reach + np.ptp([b[1][0, 0] for b in self.bodies])
                span = np.ptp(p0[:, 0][np.isfinite(p0[:, 0])])
                win = window or max(3.0 * size, self.zlim[1] - self.zlim[0])
                if span > 0.8 * win:
                    self.follow, self.window = heaviest, win
            else:
                names = [b[0] for b in self.bodies]
                if follow not in names:
                    raise ValueError(f"animate: cannot follow {follow!r}: not a drawn body ({', '.join(names)})")
                self.follow = names.index(follow)
                self.window = window or max(3.0 * (2 * reach), 4.0)
        elif follow and not self.bodies and follow != "auto":
            raise ValueError(f"animate: cannot follow {follow!r}: the results folder has no scene")

    def _set_limits(self, i):
        if self.follow is None:
            self.ax.set_xlim(*self.xlim_all)
            self.ax.set_ylim(*self.zlim)
        else:
            xc = self.bodies[self.follow][1][i, 0]
            self.ax.set_xlim(xc - 0.5 * self.window, xc + 0.5 * self.window)
            self.ax.set_ylim(*self.zlim)

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
        self.stamp.set_text(f"t = {self.result.t[i]:7.3f} s")
        dynamic = [a for a in (self.polys, self.lines, self.dot_artist, self.stamp) if a is not None]
        if self.follow is None:  # fixed view: draw axes, terrain and grid once, then only what moves
            if self._background is None:
                for a in dynamic:
                    a.set_visible(False)
                self.canvas.draw()
                self._background = self.canvas.copy_from_bbox(self.fig.bbox)
                for a in dynamic:
                    a.set_visible(True)
            self.canvas.restore_region(self._background)
            for a in dynamic:
                self.ax.draw_artist(a)
        else:
            self._set_limits(i)
            self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()


def animate(result, out, fps: float = 25.0, t0: float | None = None, t1: float | None = None,
            speed: float = 1.0, follow="auto", window: float | None = None, size=(960, 544)) -> dict:
    """Write a side-view animation of a result (or results folder) to ``out`` (``.gif`` or ``.mp4``).

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
    follow, window : see :class:`SideView`

    Returns
    -------
    dict
        ``out``, ``frames``, ``fps``, ``t0``, ``t1``, ``size`` and ``warnings``.
    """
    import imageio.v2 as imageio

    res = load(result) if isinstance(result, (str, os.PathLike)) else result
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"animate: output must end in .gif or .mp4, got {out.name!r}")
    size = (int(size[0]), int(size[1]))
    if suffix == ".mp4":  # H.264 in yuv420p wants even sizes; imageio-ffmpeg prefers multiples of 16
        size = (size[0] // 16 * 16, size[1] // 16 * 16)
    if min(size) < 64:
        raise ValueError(f"animate: frame size {size} is too small (at least 64 x 64 pixels)")
    idx = frame_times(res.t, fps, t0, t1, speed)
    view = SideView(res, follow=follow, window=window, size=size)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp-{os.getpid()}{suffix}")
    if suffix == ".gif":
        writer = imageio.get_writer(tmp, mode="I", duration=1000.0 / fps, loop=0)
    else:
        writer = imageio.get_writer(tmp, fps=fps, codec="libx264", quality=7, macro_block_size=16,
                                    ffmpeg_log_level="error", pixelformat="yuv420p")
    try:
        for i in idx:
            writer.append_data(view.draw(int(i)))
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, out)
    warn = [f"body {n!r} has shapes but no recorded pose; not drawn" for n in view.missing]
    return {"out": str(out), "frames": int(len(idx)), "fps": float(fps), "t0": float(res.t[idx[0]]),
            "t1": float(res.t[idx[-1]]), "size": list(size), "follow": None if view.follow is None
            else view.bodies[view.follow][0], "warnings": warn}
