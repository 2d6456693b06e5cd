"""Matplotlib figures of results: any recorded series, and the standard figures events and studies share.

Every function returns a :class:`matplotlib.figure.Figure` built without
``pyplot`` (no global state, no display needed); :func:`save_figure` writes
it as PNG or SVG. Event modules call the generic helpers
(:func:`peak_vs_parameter`, :func:`pass_fail_vs_parameter`,
:func:`paths_xz`, :func:`grid_map`) for their standard figures.

Example
-------
>>> import trackdyn as td                                   # doctest: +SKIP
>>> from trackdyn.viz import plots
>>> res = td.load("runs/step060")
>>> fig = plots.plot_series(res, ["chassis.pos.z", "chassis.vel.x"])
>>> plots.save_figure(fig, "runs/step060/chassis.svg")
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "UNITS",
    "unit_of",
    "new_figure",
    "save_figure",
    "plot_series",
    "peak_vs_parameter",
    "pass_fail_vs_parameter",
    "paths_xz",
    "grid_map",
    "grid_by_axis",
    "timing_split",
    "terrain_profile_xz",
    "FORMATS",
]

FORMATS = ("png", "svg")

#: Unit of a series by the part of its name before the component (``chassis.pos.z`` -> ``pos``)
#: or by its last part (``left.shoe[3].tension``).
UNITS = {"pos": "m", "vel": "m/s", "acc": "m/s²", "omega": "rad/s", "quat": "–", "force": "N",
         "torque": "N m", "tension": "N", "length": "m", "angle": "rad", "speed": "m/s", "t": "s"}


def unit_of(name: str) -> str:
    """Unit of a dotted series name from :data:`UNITS` (``""`` when unknown)."""
    parts = name.split(".")
    for p in (parts[-2] if len(parts) > 1 else None, parts[-1]):
        if p in UNITS:
            return UNITS[p]
    return ""


def _quantity(name: str) -> str:
    parts = name.split(".")
    if len(parts) > 1 and parts[-2] in UNITS:
        return parts[-2]
    return parts[-1] if parts[-1] in UNITS else "value"


def new_figure(width: float = 7.0, height: float = 4.0, nrows: int = 1, ncols: int = 1, **kw):
    """A pyplot-free figure and its axes (``Figure``, ``Axes`` or array of axes)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **kw)
    return fig, axes


def save_figure(fig, path, format: str | None = None, dpi: int = 120) -> Path:
    """Write ``fig`` to ``path`` as PNG or SVG (from ``format`` or the suffix); returns the path.

    The file is written under a temporary name and renamed.
    """
    import os

    p = Path(path)
    fmt = (format or p.suffix.lstrip(".") or "png").lower()
    if fmt not in FORMATS:
        raise ValueError(f"save_figure: format must be one of {FORMATS}, got {fmt!r}")
    if p.suffix.lower() != f".{fmt}":
        p = p.with_suffix(f".{fmt}")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
    fig.savefig(tmp, format=fmt, dpi=dpi, metadata={"Software": "trackdyn"} if fmt == "png" else None)
    os.replace(tmp, p)
    return p


def _window(t, t0, t1):
    lo = -np.inf if t0 is None else t0
    hi = np.inf if t1 is None else t1
    return (t >= lo - 1e-12) & (t <= hi + 1e-12)


def plot_series(result, names, x: str | None = None, t0: float | None = None, t1: float | None = None,
                title: str | None = None, width: float = 7.0, height_per_axes: float = 2.4):
    """Recorded series against time (or against another series ``x``), one axes per quantity.

    Series of the same quantity (``pos``, ``force``...) share an axes and its
    unit; decimated series are drawn at their own samples.

    Parameters
    ----------
    result : Result
    names : list of str
        Series names (exact).
    x : str, optional
        Series for the horizontal axis (e.g. ``chassis.pos.x`` for a path); default time.
    t0, t1 : float, optional
        Time window, s.
    """
    names = [names] if isinstance(names, str) else list(names)
    missing = [n for n in names + ([x] if x else []) if n not in result]
    if missing:
        raise ValueError(f"plot_series: no series {missing} in this result")
    if not names:
        raise ValueError("plot_series: no series to plot")
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(_quantity(n), []).append(n)
    fig, axes = new_figure(width, max(2.6, height_per_axes * len(groups)), nrows=len(groups), sharex=True)
    axes = np.atleast_1d(axes)
    xs_all = result["t"] if x is None else result[x]
    for ax, (q, members) in zip(axes, groups.items()):
        for n in members:
            y = result[n]
            ok = _window(result.t, t0, t1) & ~np.isnan(y) & ~np.isnan(xs_all)
            ax.plot(xs_all[ok], y[ok], lw=1.2, label=n, marker="." if ok.sum() < 30 else None)
        u = unit_of(members[0])
        ax.set_ylabel(f"{q} [{u}]" if u else q)
        ax.grid(True, alpha=0.3)
        if len(members) > 1 or len(groups) > 1:
            ax.legend(fontsize=8, loc="best")
        elif len(members) == 1:
            ax.set_title(members[0], fontsize=9, loc="left")
    xu = "s" if x is None else unit_of(x)
    axes[-1].set_xlabel(("t" if x is None else x) + (f" [{xu}]" if xu else ""))
    if title:
        fig.suptitle(title)
    return fig


def peak_vs_parameter(parameter, peaks, limit: float | None = None, xlabel: str = "parameter",
                      ylabel: str = "peak", limit_label: str = "limit", title: str | None = None):
    """Peak value of a response against a parameter, with a horizontal limit line.

    E.g. peak driver vertical acceleration against speed over a half-round
    obstacle, with the 2.5 g ride limit; the crossing of the first curve with
    the limit is marked.

    Parameters
    ----------
    parameter : (n,) array
    peaks : (n,) array, or dict label -> (n,) array for several curves
    limit : float, optional
    """
    x = np.asarray(parameter, float)
    curves = peaks if isinstance(peaks, dict) else {ylabel: peaks}
    fig, ax = new_figure()
    first = None
    for label, y in curves.items():
        y = np.asarray(y, float)
        if y.shape != x.shape:
            raise ValueError(f"peak_vs_parameter: curve {label!r} has shape {y.shape}, parameter {x.shape}")
        ax.plot(x, y, marker="o", lw=1.5, label=str(label))
        first = y if first is None else first
    if limit is not None:
        ax.axhline(limit, color="crimson", ls="--", lw=1.2, label=f"{limit_label} = {limit:g}")
        order = np.argsort(x)
        xs, ys = x[order], first[order] - limit
        cross = np.nonzero(np.signbit(ys[:-1]) != np.signbit(ys[1:]))[0]
        if len(cross):
            k = cross[0]
            xc = xs[k] - ys[k] * (xs[k + 1] - xs[k]) / (ys[k + 1] - ys[k])
            ax.axvline(xc, color="crimson", ls=":", lw=1)
            ax.annotate(f"{xc:.3g}", (xc, limit), textcoords="offset points", xytext=(4, 4), color="crimson")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def pass_fail_vs_parameter(parameter, passed, limit: float | None = None, xlabel: str = "parameter",
                           title: str | None = None):
    """Trials of a limit search: pass (●) and fail (✕) against the parameter, in trial order, with the limit."""
    x = np.asarray(parameter, float)
    ok = np.asarray(passed, bool)
    if x.shape != ok.shape:
        raise ValueError(f"pass_fail_vs_parameter: {x.shape} parameters but {ok.shape} outcomes")
    fig, ax = new_figure(7.0, 3.2)
    k = np.arange(1, len(x) + 1)
    ax.plot(x, k, color="0.7", lw=0.8)
    ax.scatter(x[ok], k[ok], marker="o", color="seagreen", label="pass", zorder=3)
    ax.scatter(x[~ok], k[~ok], marker="x", color="crimson", label="fail", zorder=3)
    if limit is not None:
        ax.axvline(limit, color="k", ls="--", lw=1, label=f"limit {limit:.4g}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("trial")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def terrain_profile_xz(terrain: dict | None, x_min: float, x_max: float, y: float = 0.0):
    """``(x, z)`` polyline of a scene terrain over [x_min, x_max] (profile: flat beyond its ends;
    heightfield: the row nearest ``y``). ``None`` without terrain."""
    if not terrain:
        return None
    if terrain["type"] == "profile":
        x = np.asarray(terrain["x"], float)
        z = np.asarray(terrain["z"], float)
    elif terrain["type"] == "heightfield":
        x = np.asarray(terrain["x"], float)
        ys = np.asarray(terrain["y"], float)
        z = np.asarray(terrain["z"], float)[int(np.argmin(np.abs(ys - y)))]
    else:
        return None
    lo, hi = min(x_min, x[0]), max(x_max, x[-1])
    return np.concatenate([[lo], x, [hi]]), np.concatenate([[z[0]], z, [z[-1]]])


def paths_xz(paths: dict, terrain: dict | None = None, title: str | None = None, equal: bool = True,
             width: float = 8.0, height: float = 3.5):
    """x–z paths of several runs (e.g. the hull's centre over an obstacle), over the terrain profile.

    The axes span the paths (and the terrain under them) with a small margin.
    With ``equal`` the two axes share one scale when the paths' proportions
    allow it within a factor 1.5 of the frame's; a path much longer than it is
    high (1 m of rise over 20 m of travel) is drawn with its height stretched
    instead, and the z label states the vertical exaggeration.

    Parameters
    ----------
    paths : dict label -> (x (n,), z (n,))
    terrain : scene terrain dict, optional
    equal : bool
        One scale on x and z when it fits (see above).
    width, height : float
        Figure size, inches.
    """
    fig, ax = new_figure(width, height)
    xmin, xmax, zmin, zmax = np.inf, -np.inf, np.inf, -np.inf
    for label, (x, z) in paths.items():
        x = np.asarray(x, float)
        z = np.asarray(z, float)
        ok = ~(np.isnan(x) | np.isnan(z))
        ax.plot(x[ok], z[ok], lw=1.4, label=str(label))
        if ok.any():
            xmin, xmax = min(xmin, x[ok].min()), max(xmax, x[ok].max())
            zmin, zmax = min(zmin, z[ok].min()), max(zmax, z[ok].max())
    if not np.isfinite(xmin):
        xmin, xmax, zmin, zmax = 0.0, 1.0, 0.0, 1.0
    prof = terrain_profile_xz(terrain, xmin, xmax)
    if prof is not None:
        px, pz = prof
        inside = (px >= xmin) & (px <= xmax)
        if inside.any():
            zmin, zmax = min(zmin, pz[inside].min()), max(zmax, pz[inside].max())
    dx = max(xmax - xmin, 1e-3)
    dz = max(zmax - zmin, 1e-3)
    x_lim = (xmin - 0.02 * dx, xmax + 0.02 * dx)
    z_lim = (zmin - 0.12 * dz, zmax + 0.12 * dz)
    if prof is not None:
        px, pz = prof
        ax.fill_between(px, pz, min(pz.min(), z_lim[0]) - 1.0, color="0.85", zorder=0)
        ax.plot(px, pz, color="0.4", lw=1, zorder=1)
    ax.set_xlim(*x_lim)
    ax.set_ylim(*z_lim)
    zlabel = "z [m]"
    fig.canvas.draw()  # the constrained layout fixes the axes' size in inches
    bbox = ax.get_window_extent()
    # inches per metre on each axis with the limits above; equal scales when they differ by 1.5x or less
    sx = bbox.width / (x_lim[1] - x_lim[0])
    sz = bbox.height / (z_lim[1] - z_lim[0])
    k = sz / sx
    if equal and k <= 1.5:
        ax.set_aspect("equal", adjustable="datalim")
    elif k > 1.5:
        zlabel = f"z [m] (height stretched {k:.0f}x)" if k >= 9.5 else f"z [m] (height stretched {k:.1f}x)"
    ax.set_xlabel("x [m]")
    ax.set_ylabel(zlabel)
    ax.grid(True, alpha=0.3)
    if paths:
        ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def grid_map(x, y, values, xlabel: str = "x", ylabel: str = "y", zlabel: str = "value",
             title: str | None = None, marks=None):
    """A figure over a 2-D parameter grid (e.g. climbable step height over sprocket dx, dz).

    Parameters
    ----------
    x : (nx,) array
    y : (ny,) array
    values : (ny, nx) array; NaN cells (failed runs) are left blank
    marks : list of (x, y, label), optional
        Points to annotate (the baseline design, the optimum).
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    Z = np.asarray(values, float)
    if Z.shape != (len(y), len(x)):
        raise ValueError(f"grid_map: values must have shape (ny, nx) = ({len(y)}, {len(x)}), got {Z.shape}")
    fig, ax = new_figure(6.5, 4.8)
    mesh = ax.pcolormesh(x, y, np.ma.masked_invalid(Z), shading="nearest", cmap="viridis")
    fig.colorbar(mesh, ax=ax, label=zlabel)
    if np.isfinite(Z).sum() >= 4 and len(x) > 1 and len(y) > 1:
        cs = ax.contour(x, y, np.ma.masked_invalid(Z), colors="w", linewidths=0.7)
        ax.clabel(cs, fontsize=7)
    for mx, my, label in marks or []:
        ax.plot(mx, my, "r*", ms=10)
        ax.annotate(label, (mx, my), textcoords="offset points", xytext=(5, 5), color="r")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return fig


def grid_by_axis(x, y, values, above=None, below=None, bounds=None, xlabel: str = "x", ylabel: str = "y",
                 zlabel: str = "value", title: str | None = None):
    """A 2-D parameter grid one axis at a time (korner-2024 Figs. 5.3 and 5.7): the value against ``y``
    (left panel, one line per ``x``) and against ``x`` (right panel, one line per ``y``).

    Parameters
    ----------
    x : (nx,) array
    y : (ny,) array
    values : (ny, nx) array; NaN cells (refused, failed, not run, out of range) break the lines
    above, below : (ny, nx) bool arrays, optional
        Cells whose limit lies above (below) the range searched: drawn as ``^`` (``v``) at ``bounds``
        (the range's top, bottom) when given, else at the finite values' maximum (minimum).
    bounds : (lo, hi), optional
        The range searched (the speeds tried, the bisection's interval).
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    Z = np.asarray(values, float)
    if Z.shape != (len(y), len(x)):
        raise ValueError(f"grid_by_axis: values must have shape (ny, nx) = ({len(y)}, {len(x)}), got {Z.shape}")
    masks = []
    for name, m in (("above", above), ("below", below)):
        m = np.zeros(Z.shape, bool) if m is None else np.asarray(m, bool)
        if m.shape != Z.shape:
            raise ValueError(f"grid_by_axis: {name} must have shape {Z.shape}, got {m.shape}")
        masks.append(m)
    A, B = masks
    finite = Z[np.isfinite(Z)]
    lo, hi = bounds if bounds is not None else ((finite.min(), finite.max()) if finite.size else (0.0, 1.0))
    fig, axes = new_figure(11.0, 5.2, ncols=2, sharey=True)
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    # left: against y, a line per column (x); right: against x, a line per row (y)
    for ax, along, other, table, ab, be, along_label, other_label in (
            (axes[0], y, x, Z.T, A.T, B.T, ylabel, xlabel), (axes[1], x, y, Z, A, B, xlabel, ylabel)):
        for k, (o, row) in enumerate(zip(other, table)):
            c = cmap(k / max(len(other) - 1, 1))
            ax.plot(along, row, marker="o", ms=4, lw=1.2, color=c, label=f"{o:+g}")
            if ab[k].any():
                ax.plot(along[ab[k]], np.full(ab[k].sum(), hi), ls="none", marker="^", ms=7, color=c, mec="k")
            if be[k].any():
                ax.plot(along[be[k]], np.full(be[k].sum(), lo), ls="none", marker="v", ms=7, color=c, mec="k")
        ax.set_xlabel(along_label)
        ax.grid(True, alpha=0.3)
        ax.legend(title=other_label, fontsize=7, title_fontsize=7, ncols=5, loc="upper center",
                  bbox_to_anchor=(0.5, -0.16))
    axes[0].set_ylabel(zlabel)
    if A.any() or B.any():
        what = "\u25b2 above the range searched, \u25bc below it"
        what += f" ({lo:g} .. {hi:g})" if bounds is not None else " (at the values' extremes)"
        title = f"{title}\n{what}" if title else what
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def timing_split(metadata: dict, title: str | None = "wall time split"):
    """Horizontal bars of ``metadata["timing_s"]`` (s per stage) with percentages of the wall time."""
    timing = {k: float(v) for k, v in (metadata.get("timing_s") or {}).items() if v is not None}
    if not timing:
        raise ValueError("timing_split: the metadata has no timing_s")
    wall = float(metadata.get("wall_time_s") or sum(timing.values()))
    items = sorted(timing.items(), key=lambda kv: kv[1])
    fig, ax = new_figure(6.5, 0.4 * len(items) + 1.2)
    ax.barh([k for k, _ in items], [v for _, v in items], color="steelblue")
    for k, (name, v) in enumerate(items):
        ax.text(v, k, f" {v:.3g} s ({100 * v / wall:.1f} %)" if wall > 0 else f" {v:.3g} s", va="center",
                fontsize=8)
    ax.set_xlabel("wall time [s]")
    ax.set_xlim(0, max(v for _, v in items) * 1.35 or 1)
    if title:
        ax.set_title(f"{title} (total {wall:.3g} s)")
    return fig
