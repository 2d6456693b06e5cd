"""The mechanism figure of a limit search: why the last success passed and the first failure failed.

One column per trial (the last success, the first failure), five rows
against time, drawn from the ``mechanism`` entry of an event result
(:func:`trackdyn.experiments.events.step_climb_limit`,
``gap_crossing_limit``), so a saved ``summary.json`` redraws it:

1. the slip ratio of each track (1: the track runs, the hull stands; 0: no slip);
2. the sprocket torque of each track against the torque map's limit at that
   sprocket speed (dashed): at the limit the map is saturated;
3. the hull's contact force with the terrain (kN) and, on the right axis,
   where it acts (vehicle-frame x of its centre of force, m);
4. the road-wheel loads (kN, each wheel; left solid, right dotted);
5. the pitch (deg, nose up positive).

The column titles carry the failure mode and what limited the trial
(geometry, track slip, torque-limited).
"""

from __future__ import annotations

import numpy as np

from .plots import new_figure

__all__ = ["mechanism_figure"]

_SIDES = (("left", "tab:blue"), ("right", "tab:red"))


def _arr(series, key):
    v = series.get(key)
    if v is None:
        return None
    return np.array([np.nan if x is None else x for x in v], float)


def mechanism_figure(result: dict, what: str = "value"):
    """Figure of ``result["mechanism"]`` (last success and first failure); ``None`` when it has none.

    Parameters
    ----------
    result : dict
        An event result with ``"mechanism": {"last_success": {"value",
        "mode", "limited_by", "series": {...}}, "first_failure": {...}}``.
    what : str
        Name of the searched parameter for the column titles (``"step height"``).
    """
    mech = result.get("mechanism") or {}
    cols = [(k, mech[k]) for k in ("last_success", "first_failure") if mech.get(k) and mech[k].get("series")]
    if not cols:
        return None
    fig, axes = new_figure(5.0 * len(cols) + 0.5, 10.5, nrows=5, ncols=len(cols))
    axes = np.asarray(axes).reshape(5, len(cols))
    for j, (key, m) in enumerate(cols):
        s = m["series"]
        t = _arr(s, "t")
        ax = axes[:, j]
        verdict = "passed" if m.get("passed") else f"failed: {m.get('mode')} (limited by {m.get('limited_by')})"
        ax[0].set_title(f"{what} {m['value']:.3f} m — {verdict}", fontsize=9)
        for side, col in _SIDES:
            y = _arr(s, f"{side}_slip")
            if y is not None:
                ax[0].plot(t, y, color=col, lw=0.9, label=side)
            T = _arr(s, f"{side}_torque_Nm")
            L = _arr(s, f"{side}_torque_limit_Nm")
            if T is not None:
                ax[1].plot(t, T / 1e3, color=col, lw=0.9, label=f"{side} torque")
            if L is not None:
                ax[1].plot(t, L / 1e3, color=col, lw=0.8, ls="--", label=f"{side} map limit")
        ax[0].set_ylim(-1.05, 1.05)
        ax[0].set_ylabel("track slip ratio [-]")
        ax[1].set_ylabel("sprocket torque [kN m]")
        fn = _arr(s, "hull_force_N")
        if fn is not None:
            ax[2].plot(t, fn / 1e3, color="k", lw=0.9, label="hull contact force")
        ax[2].set_ylabel("hull contact [kN]")
        xh = _arr(s, "hull_x_m")
        if xh is not None and np.isfinite(xh).any():
            tw = ax[2].twinx()
            tw.plot(t, xh, ls="none", marker=".", ms=2.5, color="tab:orange", label="where (vehicle x)")
            tw.set_ylabel("hull force at x [m]", color="tab:orange", fontsize=8)
            tw.tick_params(axis="y", labelsize=7, colors="tab:orange")
        loads = s.get("wheel_loads_N")
        if loads:
            L = np.asarray(loads, float)
            names = s.get("wheel_names") or [f"wheel {k}" for k in range(L.shape[1])]
            n_left = sum(1 for n in names if n.startswith("left"))
            from matplotlib import colormaps

            cmap = colormaps["viridis"]
            for k in range(L.shape[1]):
                station = k if k < n_left else k - n_left
                n_st = max(n_left, L.shape[1] - n_left, 1)
                ax[3].plot(t, L[:, k] / 1e3, lw=0.8, ls="-" if k < n_left else ":",
                           color=cmap(station / max(n_st - 1, 1)),
                           label=f"station {station}" if k < n_left else None)
        ax[3].set_ylabel("road-wheel load [kN]")
        p = _arr(s, "pitch_deg")
        if p is not None:
            ax[4].plot(t, p, color="k", lw=0.9)
        ax[4].set_ylabel("pitch [deg]")
        ax[4].set_xlabel("t [s]")
        for a in ax:
            a.grid(True, alpha=0.3)
        if j == 0:
            ax[0].legend(fontsize=7, loc="lower right")
            ax[1].legend(fontsize=6, loc="upper right", ncol=2)
            if loads:
                ax[3].legend(fontsize=6, loc="upper right", ncol=3, title="left solid, right dotted",
                             title_fontsize=6)
    lim = result.get("limited_by")
    fig.suptitle(f"{result.get('vehicle', '')} {result.get('event', '')}: "
                 + (f"limited by {lim}" if lim else "no failure in the search"), fontsize=10)
    return fig
