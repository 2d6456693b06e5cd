"""Runs and fidelities side by side: aligned series, difference metrics, overlay figures, event headlines.

:func:`compare` reads two or more results folders (through
:func:`trackdyn.load`, so any results layout it reads) or event folders
(``summary.json`` of ``trackdyn event ... --out``), aligns the runs on time
or on distance travelled (the chassis's x minus its start) and measures every
chosen series against the first run:

- ``rms`` and ``max_abs``: root mean square and largest absolute difference
  over the samples the runs share (the other run interpolated linearly onto
  the first run's abscissae; identical abscissae are used as they are, so two
  identical runs differ by exactly zero);
- the run's own wall time, steps and step size and their differences to the
  first run (from ``metadata.json``);
- the settings that differ between the runs (vehicle, scenario, solver
  settings, fidelity), flattened to dotted keys;
- for event folders, the headline figures (``limit_m``,
  ``limiting_speed_mps``...) and one table of trials (value -> pass/fail and
  failure mode per run).

Nothing here runs a simulation. Figures are drawn only when ``out`` is given:
one per series group (a ``series`` pattern, or one quantity such as
``pos``), each series an axes of the overlaid runs beside an axes of their
difference to the first run.

Example
-------
>>> import trackdyn as td                                              # doctest: +SKIP
>>> c = td.compare(["runs/base", "runs/heavy"], series=["chassis.pos.z", "chassis.vel.x"], on="x",
...                out="runs/compare")
>>> print(c.text())
>>> c.metrics            # pandas DataFrame: series, run, rms, max_abs, at, n
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..io.results import load, match_series, write_json_atomic

__all__ = ["compare", "Comparison", "DEFAULT_SERIES", "ALIGN", "align", "flatten", "differing_settings"]

#: Series compared when none are named (those every run recorded).
DEFAULT_SERIES = ("chassis.pos.x", "chassis.pos.z", "chassis.vel.x", "chassis.omega.y", "driver.acc.z")
#: Abscissae the runs are aligned on: time, or distance travelled by the chassis.
ALIGN = {"t": ("t", "s"), "x": ("distance travelled (chassis x)", "m")}
#: Metadata keys of a run's cost.
COST_KEYS = ("wall_time_s", "steps", "sim_time_s", "step_size_s", "wall_per_sim")
#: Settings compared between runs (dotted prefixes of the metadata).
SETTINGS_KEYS = ("vehicle", "scenario", "settings", "fidelity.name", "formulation")
#: Event summary keys that are bookkeeping rather than results.
_EVENT_SKIP = {"trials", "paths", "figures", "refinements", "steps_s", "trackdyn_version", "peaks", "spectrum",
               "excluded", "barriers", "ditches", "folder"}
#: At most this many series per figure (a glob over 62 shoes makes many figures, not one unreadable one).
MAX_PER_FIGURE = 6


def _is_event_folder(d: Path) -> bool:
    return not (d / "metadata.json").exists() and (d / "summary.json").exists()


def _abscissa(res, on: str):
    """The run's samples on the alignment axis: time, or chassis x minus its first value."""
    if on == "t":
        return np.asarray(res.t, float)
    if "chassis.pos.x" not in res:
        where = f" in {res.path}" if res.path is not None else ""
        raise ValueError(f"compare: on='x' needs the series chassis.pos.x{where}")
    x = np.asarray(res["chassis.pos.x"], float)
    ok = np.isfinite(x)
    if not ok.any():
        raise ValueError("compare: chassis.pos.x is all NaN")
    return x - x[ok][0]


def align(a_ref, y_ref, a, y):
    """``(abscissae, reference, other)`` of two samplings on the reference's abscissae they share.

    Samples outside the other run's range are dropped; NaN samples of
    either series are skipped. When the abscissae are the same the other
    run's samples are used as they are, else it is interpolated linearly;
    a non-monotonic other abscissa (a vehicle rolling back on ``on="x"``) is
    reduced to its increasing samples.
    """
    a_ref, y_ref, a, y = (np.asarray(v, float) for v in (a_ref, y_ref, a, y))
    if a_ref.shape == a.shape and np.array_equal(a_ref, a):
        ok = np.isfinite(a_ref) & np.isfinite(y_ref) & np.isfinite(y)
        return a_ref[ok], y_ref[ok], y[ok]
    ok = np.isfinite(a) & np.isfinite(y)
    a, y = a[ok], y[ok]
    if len(a) == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    # keep the samples where the abscissa reaches a new maximum: np.interp needs increasing abscissae
    inc = np.concatenate([[True], a[1:] > np.maximum.accumulate(a)[:-1]])
    a, y = a[inc], y[inc]
    ok = np.isfinite(a_ref) & np.isfinite(y_ref) & (a_ref >= a[0]) & (a_ref <= a[-1])
    return a_ref[ok], y_ref[ok], np.interp(a_ref[ok], a, y)


def flatten(d, prefix: str = "") -> dict:
    """Nested dicts to one level with dotted keys (lists are kept as values)."""
    out = {}
    for k, v in (d or {}).items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def differing_settings(metadatas, keys=SETTINGS_KEYS) -> dict:
    """``{dotted key: [value per run]}`` for the settings that are not the same in every run."""
    flats = []
    for md in metadatas:
        f = flatten({k: md.get(k) for k in ("vehicle", "scenario", "settings", "formulation")})
        fid = md.get("fidelity")
        f["fidelity.name"] = fid.get("name") if isinstance(fid, dict) else fid
        flats.append({k: v for k, v in f.items() if any(k == p or k.startswith(p + ".") for p in keys)})
    out = {}
    for k in sorted(set().union(*flats)):
        vals = [f.get(k) for f in flats]
        if any(json.dumps(v, sort_keys=True, default=str) != json.dumps(vals[0], sort_keys=True, default=str)
               for v in vals[1:]):
            out[k] = vals
    return out


def _labels(paths, labels):
    if labels is not None:
        labels = [str(x) for x in labels]
        if len(labels) != len(paths):
            raise ValueError(f"compare: {len(labels)} labels for {len(paths)} runs")
        return labels
    names = [Path(p).name or str(p) for p in paths]
    if len(set(names)) < len(names):
        names = [str(p) for p in paths]
    if len(set(names)) < len(names):  # the same folder twice
        names = [f"{n}#{k}" for k, n in enumerate(names)]
    return names


def _group_key(pattern: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", pattern.replace("[*]", "").replace("[", "").replace("]", "")).strip("_.")[:80] or "series"


def _quantity(name: str) -> str:
    parts = name.split(".")
    return parts[-2] if len(parts) > 1 and parts[-2] in ("pos", "vel", "acc", "omega", "quat", "force",
                                                         "torque") else parts[-1]


@dataclass
class Comparison:
    """What :func:`compare` measured: runs, metrics, settings that differ, event tables, figures.

    Attributes
    ----------
    labels : list of str
        One per run, the first is the reference.
    on : str
        ``"t"`` or ``"x"``.
    runs : pandas.DataFrame
        One row per run: label, path, status, fidelity, the cost figures of
        :data:`COST_KEYS` and their differences to the first run
        (``d_wall_time_s``, ``d_steps``).
    metrics : pandas.DataFrame
        One row per (series, run other than the first): ``rms``, ``max_abs``
        (differences to the first run), ``at`` (abscissa of the largest
        difference), ``n`` (samples compared), ``ref_range`` (peak-to-peak
        of the first run's series).
    groups : dict
        Figure group -> its series names.
    settings : dict
        ``{dotted key: [value per run]}`` of the settings that differ.
    events : dict or None
        For event folders: ``headline`` (DataFrame, one row per figure,
        one column per run) and ``trials`` (DataFrame, one row per trial
        value, one column per run: ``pass``/``fail: MODE``).
    figures : list of str
        Files written (with ``out``).
    """

    labels: list
    on: str
    runs: object
    metrics: object
    groups: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    events: dict | None = None
    figures: list = field(default_factory=list)
    out: str | None = None
    warnings: list = field(default_factory=list)
    aligned: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """A JSON-ready dict (what ``trackdyn compare --json`` prints)."""
        def rows(df):
            return json.loads(df.to_json(orient="records")) if df is not None else []

        ev = None
        if self.events is not None:
            ev = {"headline": json.loads(self.events["headline"].to_json(orient="index")),
                  "trials": json.loads(self.events["trials"].to_json(orient="index")),
                  "events": self.events["names"]}
        return {"labels": self.labels, "on": self.on, "runs": rows(self.runs), "metrics": rows(self.metrics),
                "groups": self.groups, "settings": self.settings, "events": ev, "figures": self.figures,
                "out": self.out, "warnings": self.warnings}

    def text(self) -> str:
        """The tables as plain text: runs and their cost, differing settings, metrics, event tables."""
        import pandas as pd

        lines = []
        with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_rows", 400,
                               "display.float_format", lambda v: f"{v:.6g}"):
            if self.runs is not None and len(self.runs):
                cols = [c for c in ["label", "status", "fidelity", "bodies", "steps", "d_steps", "wall_time_s",
                                    "d_wall_time_s", "step_size_s", "sim_time_s"]
                        if c in self.runs and not self.runs[c].isna().all()]
                lines += ["runs (differences d_ against the first):", self.runs[cols].to_string(index=False), ""]
            if self.settings:
                lines.append("settings that differ:")
                for k, vals in self.settings.items():
                    lines.append(f"  {k}: " + " | ".join(_short(v) for v in vals))
                lines.append("")
            if self.metrics is not None and len(self.metrics):
                unit = ALIGN[self.on][1]
                m = self.metrics.rename(columns={"at": f"at [{unit}]"})
                lines += [f"differences against {self.labels[0]!r} (aligned on {self.on}):",
                          m.to_string(index=False), ""]
            if self.events is not None:
                lines += ["event headline:", self.events["headline"].to_string(), ""]
                if len(self.events["trials"]):
                    lines += ["trials:", self.events["trials"].to_string(), ""]
            for w in self.warnings:
                lines.append(f"warning: {w}")
            if self.figures:
                lines.append("figures: " + ", ".join(self.figures))
        return "\n".join(lines).rstrip() + "\n"


def _short(v, n=40):
    s = json.dumps(v, default=str) if not isinstance(v, str) else v
    return s if len(s) <= n else s[: n - 1] + "…"


def _cost_table(labels, paths, metas):
    import pandas as pd

    rows = []
    for lab, p, md in zip(labels, paths, metas):
        fid = md.get("fidelity")
        if fid is None and isinstance(md.get("scenario"), dict):
            fid = md["scenario"].get("fidelity")
        # an event's summary.json is written last: its presence says the event finished
        row = {"label": lab, "path": str(p), "status": md.get("status") or ("complete" if "event" in md else None),
               "fidelity": fid.get("name") if isinstance(fid, dict) else fid}
        for k in COST_KEYS:
            v = md.get(k)
            row[k] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
        bodies = (md.get("model") or {}).get("bodies") if isinstance(md.get("model"), dict) else None
        row["bodies"] = float(bodies) if isinstance(bodies, (int, float)) else np.nan
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in ("wall_time_s", "steps"):
        df[f"d_{k}"] = df[k] - df[k].iloc[0]
    return df


def _event_tables(labels, summaries):
    """Headline figures (rows) by run (columns), and the trials table: value -> outcome per run."""
    import pandas as pd

    names = [s.get("event") for s in summaries]
    keys = []
    for s in summaries:
        for k, v in s.items():
            if k in _EVENT_SKIP or k in keys:
                continue
            if isinstance(v, (int, float, str, bool)) or v is None:
                keys.append(k)
    head = pd.DataFrame({lab: [s.get(k) for k in keys] for lab, s in zip(labels, summaries)}, index=keys,
                        dtype=object)
    values = sorted({float(t["value"]) for s in summaries for t in s.get("trials", []) or []
                     if isinstance(t, dict) and isinstance(t.get("value"), (int, float))})
    cells = {lab: [""] * len(values) for lab in labels}
    index = {v: k for k, v in enumerate(values)}
    for lab, s in zip(labels, summaries):
        for t in s.get("trials", []) or []:
            if not isinstance(t, dict) or not isinstance(t.get("value"), (int, float)):
                continue
            mode = t.get("mode") or t.get("reason")
            word = "pass" if t.get("passed") else ("fail" + (f": {mode}" if mode else ""))
            k = index[float(t["value"])]
            cells[lab][k] = word if not cells[lab][k] else f"{cells[lab][k]}; {word}"
    trials = pd.DataFrame(cells, index=pd.Index(values, name="value"))
    return {"names": names, "headline": head, "trials": trials}


def compare(runs, series=None, on: str = "t", out=None, labels=None, formats=("png",)) -> Comparison:
    """Compare results folders (or event folders) against the first one.

    Parameters
    ----------
    runs : list of path or Result
        At least two. Results folders are read with :func:`trackdyn.load`
        (lazily: only the compared series are read); event folders (a
        ``summary.json`` without ``metadata.json``) compare their headline
        figures and trials.
    series : list of str, optional
        Series names or glob patterns (brackets literal:
        ``left.roadwheel[*].pos.z``). Default: those of
        :data:`DEFAULT_SERIES` every run recorded. A pattern that matches
        no series common to all runs is an error.
    on : {"t", "x"}
        Align on time, or on distance travelled by the chassis
        (``chassis.pos.x`` minus its first sample).
    out : path, optional
        Folder for the figures (one per series group), ``metrics.csv``,
        ``runs.csv`` and ``comparison.json``; nothing is written without it.
    labels : list of str, optional
        Names of the runs in tables and legends (default: folder names).
    formats : tuple of str
        Figure formats (``png``, ``svg``).

    Returns
    -------
    Comparison
    """
    import pandas as pd

    if on not in ALIGN:
        raise ValueError(f"compare: on must be one of {sorted(ALIGN)}, got {on!r}")
    runs = list(runs)
    if len(runs) < 2:
        raise ValueError(f"compare: give at least two runs, got {len(runs)}")
    paths = [r.path if hasattr(r, "columns") else Path(r) for r in runs]
    labels = _labels([p if p is not None else f"run{k}" for k, p in enumerate(paths)], labels)
    is_event = [p is not None and not hasattr(r, "columns") and _is_event_folder(Path(p))
                for r, p in zip(runs, paths)]
    if any(is_event) and not all(is_event):
        raise ValueError("compare: mix of event folders (summary.json only) and results folders: "
                         + ", ".join(f"{lab}: {'event' if e else 'run'}" for lab, e in zip(labels, is_event)))
    warnings: list[str] = []
    if all(is_event):
        summaries = [json.loads((Path(p) / "summary.json").read_text(encoding="utf-8")) for p in paths]
        events = _event_tables(labels, summaries)
        if len({n for n in events["names"]}) > 1:
            warnings.append(f"the folders hold different events: {events['names']}")
        cost = _cost_table(labels, paths, summaries)
        settings = {}
        for k in ("fidelity", "vehicle", "step_size_s", "search", "tensioning"):
            vals = [s.get(k) for s in summaries]
            if any(v != vals[0] for v in vals[1:]):
                settings[k] = vals
        comp = Comparison(labels=labels, on=on, runs=cost, metrics=pd.DataFrame(
            columns=["series", "run", "rms", "max_abs", "at", "n", "ref_range"]), settings=settings, events=events,
            warnings=warnings)
        if out is not None:
            _write(comp, Path(out), {}, formats)
        return comp

    results = [r if hasattr(r, "columns") else load(r) for r in runs]
    common = [c for c in results[0].columns if all(c in r for r in results[1:])]
    if series is None:
        patterns = [s for s in DEFAULT_SERIES if s in common]
        if not patterns:
            raise ValueError("compare: the runs share none of the default series "
                             f"{', '.join(DEFAULT_SERIES)}; name some with series=[...]")
        groups: dict[str, list[str]] = {}
        for s in patterns:
            groups.setdefault(_quantity(s), []).append(s)
    else:
        patterns = [series] if isinstance(series, str) else list(series)
        groups = {}
        for p in patterns:
            hit = match_series(common, [p])
            if not hit:
                only = [lab for lab, r in zip(labels, results) if r.match([p])]
                why = (f"only in {', '.join(only)}" if only else "in no run")
                raise ValueError(f"compare: no series common to all runs matches {p!r} ({why})")
            groups[_group_key(p)] = hit
    names = list(dict.fromkeys(n for g in groups.values() for n in g))
    for r in results:
        if hasattr(r, "prefetch"):
            r.prefetch(names + (["chassis.pos.x"] if on == "x" else []))
    absc = [_abscissa(r, on) for r in results]
    rows, aligned = [], {}
    for n in names:
        y_ref = np.asarray(results[0][n], float)
        span = np.nanmax(y_ref) - np.nanmin(y_ref) if np.isfinite(y_ref).any() else np.nan
        aligned[n] = []
        for k in range(1, len(results)):
            a, yr, yo = align(absc[0], y_ref, absc[k], results[k][n])
            d = yo - yr
            aligned[n].append((a, yr, yo))
            if len(d) == 0:
                warnings.append(f"{n}: {labels[k]} shares no samples with {labels[0]} on {on}")
                rows.append({"series": n, "run": labels[k], "rms": np.nan, "max_abs": np.nan, "at": np.nan,
                             "n": 0, "ref_range": span})
                continue
            j = int(np.argmax(np.abs(d)))
            rows.append({"series": n, "run": labels[k], "rms": float(np.sqrt(np.mean(d * d))),
                         "max_abs": float(abs(d[j])), "at": float(a[j]), "n": int(len(d)), "ref_range": float(span)})
    metrics = pd.DataFrame(rows, columns=["series", "run", "rms", "max_abs", "at", "n", "ref_range"])
    metas = [r.metadata or {} for r in results]
    for lab, md in zip(labels, metas):
        if md.get("status", "complete") != "complete":
            warnings.append(f"{lab}: run status {md.get('status')!r}")
    cost = _cost_table(labels, paths, metas)
    events = None
    summaries = [r.summary for r in results]
    if all(isinstance(s, dict) and s for s in summaries):
        events = _event_tables(labels, summaries)
    comp = Comparison(labels=labels, on=on, runs=cost, metrics=metrics, groups=groups,
                      settings=differing_settings(metas), events=events, warnings=warnings, aligned=aligned)
    if out is not None:
        _write(comp, Path(out), {"results": results, "abscissae": absc}, formats)
    return comp


def _write(comp: Comparison, out: Path, data: dict, formats) -> None:
    from .plots import save_figure

    out.mkdir(parents=True, exist_ok=True)
    files = []
    if data:
        for key, members in comp.groups.items():
            for part in range(0, len(members), MAX_PER_FIGURE):
                chunk = members[part: part + MAX_PER_FIGURE]
                fig = compare_figure(comp, data["results"], data["abscissae"], chunk, title=key)
                stem = key if len(members) <= MAX_PER_FIGURE else f"{key}-{part // MAX_PER_FIGURE + 1}"
                for fmt in formats:
                    files.append(str(save_figure(fig, out / f"{stem}.{fmt}", format=fmt, dpi=100)))
    if comp.events is not None:
        if len(comp.events["trials"]):
            fig = trials_figure(comp)
            for fmt in formats:
                files.append(str(save_figure(fig, out / f"trials.{fmt}", format=fmt, dpi=100)))
        files.append(_write_csv(comp.events["trials"], out / "trials.csv", index=True))
        files.append(_write_csv(comp.events["headline"], out / "headline.csv", index=True))
    files.append(_write_csv(comp.runs, out / "runs.csv"))
    if len(comp.metrics):
        files.append(_write_csv(comp.metrics, out / "metrics.csv"))
    comp.figures = files
    comp.out = str(out)
    write_json_atomic(out / "comparison.json", comp.to_dict())
    comp.figures.append(str(out / "comparison.json"))


def _write_csv(df, path: Path, index=False) -> str:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    df.to_csv(tmp, index=index)
    os.replace(tmp, path)
    return str(path)


def trials_figure(comp: Comparison):
    """The events' trials side by side: one row per run, pass (●) and fail (✕) at each value tried."""
    from matplotlib.figure import Figure

    trials = comp.events["trials"]
    head = comp.events["headline"]
    fig = Figure(figsize=(8.0, 1.2 + 0.6 * len(comp.labels)), layout="constrained")
    ax = fig.subplots()
    values = np.asarray(trials.index, float)
    for row, lab in enumerate(comp.labels):
        cells = trials[lab].tolist()
        ok = np.array([c.startswith("pass") for c in cells])
        bad = np.array([c.startswith("fail") for c in cells])
        ax.scatter(values[ok], np.full(ok.sum(), row), marker="o", color="seagreen", zorder=3,
                   label="pass" if row == 0 else None)
        ax.scatter(values[bad], np.full(bad.sum(), row), marker="x", color="crimson", zorder=3,
                   label="fail" if row == 0 else None)
        lim = head.loc["limit_m", lab] if "limit_m" in head.index else None
        if isinstance(lim, (int, float)) and np.isfinite(lim):
            ax.plot([lim, lim], [row - 0.35, row + 0.35], color="k", lw=1.5)
    ax.set_yticks(range(len(comp.labels)), comp.labels)
    ax.set_ylim(-0.6, len(comp.labels) - 0.4)
    ax.invert_yaxis()
    names = sorted({n for n in comp.events["names"] if n})
    ax.set_xlabel("value tried" + (f" ({', '.join(names)})" if names else ""))
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("trials (|: the limit found)", fontsize=9, loc="left")
    return fig


def compare_figure(comp: Comparison, results, abscissae, names, title=None):
    """One figure: per series, the runs overlaid (left) and their difference to the first run (right)."""
    from matplotlib.figure import Figure

    from .plots import unit_of

    n = len(names)
    fig = Figure(figsize=(10.0, max(2.8, 2.2 * n)), layout="constrained")
    axes = fig.subplots(n, 2, sharex=True, squeeze=False)
    xname, xunit = ALIGN[comp.on]
    colors = [f"C{k}" for k in range(len(results))]
    for row, name in enumerate(names):
        ax, axd = axes[row, 0], axes[row, 1]
        for k, (r, a) in enumerate(zip(results, abscissae)):
            y = np.asarray(r[name], float)
            ok = np.isfinite(a) & np.isfinite(y)
            ax.plot(a[ok], y[ok], lw=1.2 if k == 0 else 1.0, color=colors[k], ls="-" if k == 0 else "--",
                    label=comp.labels[k])
        for k, (a, yr, yo) in enumerate(comp.aligned.get(name, []), start=1):
            axd.plot(a, yo - yr, lw=1.0, color=colors[k], label=f"{comp.labels[k]} − {comp.labels[0]}")
        u = unit_of(name)
        ax.set_ylabel(f"[{u}]" if u else "")
        ax.set_title(name, fontsize=9, loc="left")
        axd.set_title(f"difference to {comp.labels[0]}", fontsize=9, loc="left")
        axd.axhline(0.0, color="0.6", lw=0.6)
        for a_ in (ax, axd):
            a_.grid(True, alpha=0.3)
        if row == 0:
            ax.legend(fontsize=8, loc="best")
            axd.legend(fontsize=8, loc="best")
    for a_ in axes[-1]:
        a_.set_xlabel(f"{xname} [{xunit}]")
    if title:
        fig.suptitle(title)
    return fig
