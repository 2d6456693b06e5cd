"""Parameter sweeps of mobility events on Dask distributed (korner-2024 chapter 5 studies).

A sweep file (TOML) names a vehicle, an event, the event's options and a
grid of parameters::

    name = "sprocket-step"
    vehicle = "m113"
    event = "step-climb"
    fidelity = "links"                      # optional

    [grid]                                  # lists, or {start, stop, step} / {start, stop, num}
    "sprocket.dx" = [-0.2, 0.0, 0.2]
    "sprocket.dz" = {start = -0.2, stop = 0.2, step = 0.2}

    [options]                               # keyword options of the event (trackdyn.events.*)
    search = "bisect"
    lo = 0.3
    hi = 0.9
    tension = true                          # korner-2024 §5.1 tensioning in every configuration

    [figures]
    values = ["limit_m", "itt_N", "idler_x_m"]   # optional: what the heatmaps show

Grid keys: ``sprocket.dx``, ``sprocket.dz``, ``idler.dx``, ``idler.dz``
(offsets from the spec's positions, m — a new, re-derived spec per point,
thesis §5.1), ``spec.<dotted path>`` (any spec field, e.g.
``spec.shoes.bending_stiffness``) and ``event.<option>`` (an event option,
e.g. ``event.height_in``).

Running (:func:`run_sweep`, ``trackdyn sweep FILE``): every grid point is one
task on a Dask cluster — an embedded ``LocalCluster`` with one single-thread
worker process per core, or an existing scheduler. Output folder::

    manifest.json      the sweep, every point (id, parameters, folder) and its state; rewritten atomically
    sweep.toml         the sweep file as given
    points/<id>/       one event folder per point: summary.json (done) or failed.json (failed), trial folders
    results.parquet    the combined table: one row per point of the grid, exactly once
    figures/*.png      heatmaps of the chosen values over the two grid axes (Figs. 5.2, 5.5, 5.6, 5.8-5.10)

Guarantees:

- A point is computed in a private temporary folder ``points/.<id>.tmp-*``
  and renamed into ``points/<id>`` when done (``os.rename`` is atomic, and
  fails when another attempt already finished that point: the later attempt
  discards its copy). So a point folder is either complete or absent, and no
  point is ever recorded twice.
- Re-running a sweep skips the points whose folder exists; leftover
  temporary folders of a killed run are removed.
- A worker that dies mid-task (killed, out of memory) loses nothing: the
  scheduler re-runs its task on another worker (Dask's ``allowed-failures``,
  3 by default); a task that keeps killing workers is recorded as failed.
- A point that fails deterministically (a refused geometry, a diverged run,
  bad options) is recorded as failed with its error, and the sweep goes on.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import socket
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._version import __version__
from ..assembly.geometry import GeometryError
from ..io.results import write_json_atomic
from ..spec import SpecError
from ..spec import scenario as _scenario  # _scenario.FIDELITIES: the fidelities registered at the look-up
from ..viz.plots import grid_map, new_figure, peak_vs_parameter, save_figure
from .events import EVENTS, EventDiverged, resolve_vehicle, run_event

__all__ = ["SweepSpec", "load_sweep", "sweep_from_dict", "run_sweep", "run_point", "sweep_table", "sweep_figures",
           "GEOMETRY_KEYS", "DEFAULT_VALUES"]

GEOMETRY_KEYS = ("sprocket.dx", "sprocket.dz", "idler.dx", "idler.dz")
#: Values mapped by default, per event (the thesis's figures).
DEFAULT_VALUES = {
    "step-climb": ["limit_m", "limit_over_sprocket_height", "itt_N", "idler_x_m"],
    "gap-crossing": ["limit_m", "itt_N", "idler_x_m"],
    "half-round": ["limiting_speed_mps", "itt_N", "idler_x_m"],
    "trapezoid": ["barriers_passed", "ditches_passed"],
    "ride": ["rms_g", "peak_g"],
}


# ---------------------------------------------------------------------------------------------- spec
@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: vehicle, event, event options, grid axes (name -> values) and figure values."""

    vehicle: str
    event: str
    grid: dict
    options: dict = field(default_factory=dict)
    fidelity: str | None = None
    name: str = "sweep"
    values: tuple = ()

    def points(self) -> list[dict]:
        """Every grid point as ``{"id", "params"}``, in grid order (first axis slowest)."""
        keys = list(self.grid)
        out = []
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            params = dict(zip(keys, combo))
            out.append({"id": point_id(params), "params": params})
        return out

    def identity(self) -> dict:
        """What must match for two runs to share an output folder (the grid may grow)."""
        return {"vehicle": self.vehicle, "event": self.event, "options": self.options, "fidelity": self.fidelity,
                "axes": sorted(self.grid)}

    def to_dict(self) -> dict:
        return {"name": self.name, "vehicle": self.vehicle, "event": self.event, "fidelity": self.fidelity,
                "grid": {k: list(v) for k, v in self.grid.items()}, "options": dict(self.options),
                "values": list(self.values)}


def _fmt(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    s = f"{v:+.6g}" if isinstance(v, float) else f"{v:+d}"
    return s.replace("+", "p").replace("-", "m")


def point_id(params: dict) -> str:
    """A readable, filesystem-safe, deterministic id of a grid point (``sprocket.dx=m0.05_sprocket.dz=p0``)."""
    parts = [f"{k}={_fmt(v)}" for k, v in params.items()]
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", "_".join(parts)) or "point"


def _axis(key, spec):
    where = f"sweep.grid.{key}"
    if isinstance(spec, dict):
        unknown = set(spec) - {"start", "stop", "step", "num"}
        if unknown or "start" not in spec or "stop" not in spec or ("step" in spec) == ("num" in spec):
            raise ValueError(f"{where} = {spec!r}: a range needs start, stop and one of step or num")
        a, b = float(spec["start"]), float(spec["stop"])
        if "num" in spec:
            n = int(spec["num"])
            if n < 1:
                raise ValueError(f"{where}.num = {spec['num']!r}: must be >= 1")
            vals = np.linspace(a, b, n)
        else:
            st = float(spec["step"])
            if not st > 0 or not math.isfinite(st):
                raise ValueError(f"{where}.step = {spec['step']!r}: must be positive")
            n = int(math.floor((b - a) / st + 1e-9)) + 1
            if n < 1:
                raise ValueError(f"{where}: stop {b} is below start {a}")
            vals = a + st * np.arange(n)
        return [round(float(v), 10) for v in vals]
    if not isinstance(spec, (list, tuple)) or not spec:
        raise ValueError(f"{where} = {spec!r}: expected a non-empty list of values or a range table")
    out = []
    for v in spec:
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError(f"{where}: value {v!r} is not a number or a string")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{where}: value {v!r} is not finite")
        if v not in out:
            out.append(v)
    return out


def sweep_from_dict(data: dict) -> SweepSpec:
    """A :class:`SweepSpec` from a parsed sweep file; ``ValueError`` names the field and the reason."""
    if not isinstance(data, dict):
        raise ValueError("sweep: the top level must be a table")
    unknown = set(data) - {"name", "vehicle", "event", "fidelity", "grid", "options", "figures"}
    if unknown:
        raise ValueError(f"sweep: unknown field(s) {sorted(unknown)}")
    for req in ("vehicle", "event", "grid"):
        if req not in data:
            raise ValueError(f"sweep.{req}: missing")
    event = data["event"]
    if event not in EVENTS:
        raise ValueError(f"sweep.event = {event!r}: choose one of {', '.join(EVENTS)}")
    vehicle = data["vehicle"]
    if not isinstance(vehicle, str):
        raise ValueError(f"sweep.vehicle = {vehicle!r}: expected a built-in name or a spec file path")
    grid_in = data["grid"]
    if not isinstance(grid_in, dict) or not grid_in:
        raise ValueError("sweep.grid: expected a table of at least one parameter")
    import inspect

    params = inspect.signature(EVENTS[event]).parameters
    grid = {}
    for k, v in grid_in.items():
        if k in GEOMETRY_KEYS:
            pass
        elif k.startswith("spec."):
            if len(k) <= 5:
                raise ValueError(f"sweep.grid.{k}: name a spec field after 'spec.'")
        elif k.startswith("event."):
            if k[6:] not in params or k[6:] in ("vehicle", "out", "progress"):
                raise ValueError(f"sweep.grid.{k}: {event} has no option {k[6:]!r}")
        else:
            raise ValueError(f"sweep.grid.{k}: unknown parameter; use {', '.join(GEOMETRY_KEYS)}, "
                             "spec.<field> or event.<option>")
        grid[k] = _axis(k, v)
    options = dict(data.get("options", {}))
    bad = [k for k in options if k not in params or k in ("vehicle", "out", "progress")]
    if bad:
        raise ValueError(f"sweep.options: {event} has no option(s) {bad}")
    fidelity = data.get("fidelity")
    if fidelity is not None:
        fidelities = _scenario.FIDELITIES
        if fidelity not in fidelities:
            raise ValueError(f"sweep.fidelity = {fidelity!r}: choose one of {fidelities}")
    figs = data.get("figures", {})
    values = tuple(figs.get("values", DEFAULT_VALUES.get(event, ()))) if isinstance(figs, dict) else ()
    name = str(data.get("name", "sweep"))
    return SweepSpec(vehicle=vehicle, event=event, grid=grid, options=options, fidelity=fidelity, name=name,
                     values=values)


def load_sweep(path) -> SweepSpec:
    """Read and validate a TOML sweep file."""
    import tomllib

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{p}: cannot read the sweep file: {err}") from None
    spec = sweep_from_dict(data)
    if spec.name == "sweep" and "name" not in data:
        spec = SweepSpec(**{**spec.__dict__, "name": p.stem})
    return spec


# ---------------------------------------------------------------------------------------------- one point
def _spec_for(sweep: dict, params: dict):
    geo = {k.replace(".", "_"): float(v) for k, v in params.items() if k in GEOMETRY_KEYS}
    changes = {k[5:]: v for k, v in params.items() if k.startswith("spec.")}
    return resolve_vehicle(sweep["vehicle"], changes=changes or None, **geo)


def _done_record(folder: Path):
    s, f = folder / "summary.json", folder / "failed.json"
    if s.exists():
        return {"status": "ok", "summary": json.loads(s.read_text(encoding="utf-8"))}
    if f.exists():
        d = json.loads(f.read_text(encoding="utf-8"))
        return {"status": "failed", "error": d.get("error"), "error_type": d.get("error_type")}
    return None


def run_point(sweep: dict, point: dict, out: str) -> dict:
    """Compute one grid point (on a Dask worker): the event into a temporary folder, renamed when done.

    Returns ``{"id", "status": "ok" | "failed", "error", "pid", "wall_time_s", "reused"}``.
    Deterministic errors (geometry, spec, diverged run, bad options) are
    recorded in ``failed.json`` and returned, never raised.
    """
    points_dir = Path(out) / "points"
    final = points_dir / point["id"]
    rec = _done_record(final)
    if rec is not None:
        return {"id": point["id"], "status": rec["status"], "error": rec.get("error"), "pid": os.getpid(),
                "wall_time_s": 0.0, "reused": True}
    tmp = points_dir / f".{point['id']}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    write_json_atomic(tmp / "worker.json", {"pid": os.getpid(), "host": socket.gethostname(),
                                            "started": time.time(), "point": point})
    t0 = time.perf_counter()
    status, error = "ok", None
    try:
        spec = _spec_for(sweep, point["params"])
        opts = dict(sweep.get("options", {}))
        opts.update({k[6:]: v for k, v in point["params"].items() if k.startswith("event.")})
        if sweep.get("fidelity"):
            opts["fidelity"] = sweep["fidelity"]
        run_event(sweep["event"], spec, out=tmp, **opts)
    except (GeometryError, SpecError, EventDiverged, ValueError) as err:
        status, error = "failed", f"{type(err).__name__}: {err}"
        write_json_atomic(tmp / "failed.json", {"error": str(err), "error_type": type(err).__name__,
                                                "traceback": traceback.format_exc(), "params": point["params"]})
    wall = time.perf_counter() - t0
    write_json_atomic(tmp / "point.json", {"id": point["id"], "params": point["params"], "status": status,
                                           "pid": os.getpid(), "wall_time_s": wall})
    try:
        os.rename(tmp, final)  # atomic; refuses when another attempt already finished this point
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        rec = _done_record(final)
        if rec is None:
            raise
        return {"id": point["id"], "status": rec["status"], "error": rec.get("error"), "pid": os.getpid(),
                "wall_time_s": wall, "reused": True}
    return {"id": point["id"], "status": status, "error": error, "pid": os.getpid(), "wall_time_s": wall,
            "reused": False}


def _record_failure(out: Path, point: dict, err: BaseException) -> dict:
    """Record a point whose task raised on the cluster (e.g. it kept killing workers) as failed."""
    final = out / "points" / point["id"]
    if _done_record(final) is not None:
        return {"id": point["id"], "status": _done_record(final)["status"], "reused": True}
    tmp = out / "points" / f".{point['id']}.tmp-client-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    msg = f"{type(err).__name__}: {err}"
    write_json_atomic(tmp / "failed.json", {"error": str(err), "error_type": type(err).__name__,
                                            "traceback": "".join(traceback.format_exception(err)),
                                            "params": point["params"]})
    write_json_atomic(tmp / "point.json", {"id": point["id"], "params": point["params"], "status": "failed"})
    try:
        os.rename(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"id": point["id"], "status": "failed", "error": msg, "reused": False}


# ---------------------------------------------------------------------------------------------- table
def _scalars(d: dict, prefix="") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, (bool, int, float, str)) or v is None:
            out[prefix + k] = v
    return out


def sweep_table(spec: SweepSpec, out):
    """The combined table (a pandas DataFrame) of a sweep folder: one row per grid point (done or failed),
    missing points omitted."""
    import pandas as pd

    out = Path(out)
    rows = []
    for p in spec.points():
        folder = out / "points" / p["id"]
        rec = _done_record(folder)
        if rec is None:
            continue
        row = {"point": p["id"], **{k: v for k, v in p["params"].items()}, "status": rec["status"],
               "error": rec.get("error"), "error_type": rec.get("error_type")}
        pj = folder / "point.json"
        if pj.exists():
            info = json.loads(pj.read_text(encoding="utf-8"))
            row["point_wall_time_s"] = info.get("wall_time_s")
            row["worker_pid"] = info.get("pid")
        if rec["status"] == "ok":
            summ = {k: v for k, v in rec["summary"].items() if k not in ("event", "vehicle", "out")}
            row.update(_scalars(summ))
        rows.append(row)
    df = pd.DataFrame(rows)
    return df


def _write_table(df, path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------------------------- figures
def sweep_figures(spec: SweepSpec, df, out=None) -> dict:
    """Heatmaps of each value over the sweep's two numeric grid axes (korner-2024 Figs. 5.2, 5.5, 5.6,
    5.8-5.10 left), and the value at the configurations' actual idler positions (the figures' right
    panels) when the rows carry ``idler_x_m``/``idler_z_m``. One numeric axis gives a line plot.

    Returns ``{stem: Figure}``; with ``out`` they are written to ``out/figures/<stem>.png``.
    """
    axes = [k for k, v in spec.grid.items() if len(v) > 1 and all(isinstance(x, (int, float)) for x in v)]
    figs = {}
    if df is None or len(df) == 0:
        return figs
    ok = df[df["status"] == "ok"] if "status" in df else df
    names = {"sprocket.dx": "sprocket offset x [m]", "sprocket.dz": "sprocket offset z [m]",
             "idler.dx": "idler offset x [m]", "idler.dz": "idler offset z [m]"}
    for val in spec.values:
        if val not in ok.columns:
            continue
        if len(axes) == 2:
            ax_x, ax_y = axes
            xs, ys = list(spec.grid[ax_x]), list(spec.grid[ax_y])
            Z = np.full((len(ys), len(xs)), np.nan)
            for _, r in ok.iterrows():
                v = r[val]
                if v is None or (isinstance(v, float) and not math.isfinite(v)):
                    continue
                try:
                    Z[ys.index(r[ax_y]), xs.index(r[ax_x])] = float(v)
                except (ValueError, TypeError):
                    continue
            figs[val] = grid_map(xs, ys, Z, xlabel=names.get(ax_x, ax_x), ylabel=names.get(ax_y, ax_y),
                                 zlabel=val, title=f"{spec.name}: {val}", marks=[(0.0, 0.0, "design")]
                                 if 0.0 in xs and 0.0 in ys else None)
        elif len(axes) == 1:
            a = axes[0]
            sub = ok.sort_values(a)
            y = np.array([np.nan if v is None else float(v) for v in sub[val]])
            figs[val] = peak_vs_parameter(sub[a].to_numpy(float), y, xlabel=names.get(a, a), ylabel=val,
                                          title=f"{spec.name}: {val}")
        if {"idler_x_m", "idler_z_m"} <= set(ok.columns) and val not in ("idler_x_m", "idler_z_m") \
                and any(k.startswith("idler.") for k in axes):
            fig, ax = new_figure(6.5, 4.8)
            v = np.array([np.nan if x is None else float(x) for x in ok[val]])
            sc = ax.scatter(ok["idler_x_m"].astype(float), ok["idler_z_m"].astype(float), c=v, cmap="viridis",
                            s=90, edgecolors="k")
            fig.colorbar(sc, ax=ax, label=val)
            ax.set_xlabel("actual idler x [m] (vehicle frame)")
            ax.set_ylabel("actual idler z [m] (vehicle frame)")
            ax.set_title(f"{spec.name}: {val} at the settled idler positions")
            ax.grid(True, alpha=0.3)
            figs[f"{val}_actual"] = fig
    if out is not None:
        for stem, fig in figs.items():
            save_figure(fig, Path(out) / "figures" / f"{stem}.png", dpi=100)
    return figs


# ---------------------------------------------------------------------------------------------- running
def _manifest(spec, out, points, states, started, workers, scheduler):
    return {"sweep": spec.to_dict(), "identity": spec.identity(), "trackdyn_version": __version__,
            "started": started, "updated": time.time(), "workers": workers, "scheduler": scheduler,
            "points": [{"id": p["id"], "params": p["params"], "folder": f"points/{p['id']}",
                        "state": states.get(p["id"], "pending")} for p in points],
            "counts": {s: sum(1 for v in states.values() if v == s) for s in ("ok", "failed", "running")}}


def _clean_tmp(out: Path) -> int:
    n = 0
    pdir = out / "points"
    if pdir.exists():
        for d in pdir.iterdir():
            if d.name.startswith(".") and ".tmp-" in d.name and d.is_dir():
                shutil.rmtree(d, ignore_errors=True)
                n += 1
    return n


def run_sweep(spec, out, scheduler: str | None = None, workers: int | None = None, progress=None,
              retry_failed: bool = False, figures: bool = True) -> dict:
    """Run (or resume) a sweep on Dask; returns a JSON-ready summary.

    Parameters
    ----------
    spec : SweepSpec or path of a sweep file
    out : path
        Output folder (see the module docstring).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:8786``); default
        an embedded ``LocalCluster``.
    workers : int, optional
        Worker processes of the embedded cluster (default: one per core).
    progress : callable, optional
        ``progress(done, total, record)`` after each point.
    retry_failed : bool
        Also re-run points recorded as failed.
    """
    from distributed import Client, LocalCluster, as_completed

    if not isinstance(spec, SweepSpec):
        src = Path(spec)
        spec = load_sweep(src)
        text = src.read_text(encoding="utf-8")
    else:
        text = None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    man_path = out / "manifest.json"
    if man_path.exists():
        old = json.loads(man_path.read_text(encoding="utf-8"))
        if old.get("identity") != json.loads(json.dumps(spec.identity())):
            raise ValueError(f"{out}: holds a different sweep (event, vehicle, options or axes differ); "
                             "use another --out")
    if text is not None:
        tmp = out / f".sweep.toml.tmp-{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / "sweep.toml")
    removed = _clean_tmp(out)
    points = spec.points()
    states = {}
    pending = []
    for p in points:
        folder = out / "points" / p["id"]
        if retry_failed and (folder / "failed.json").exists():
            shutil.rmtree(folder)
        rec = _done_record(folder)
        if rec is None:
            pending.append(p)
        else:
            states[p["id"]] = rec["status"]
    n_workers = int(workers) if workers else (os.cpu_count() or 1)
    started = time.time()
    write_json_atomic(man_path, _manifest(spec, out, points, states, started, n_workers, scheduler))
    t0 = time.perf_counter()
    ran = []
    sweep_dict = spec.to_dict()
    if pending:
        import logging

        cluster = None
        if scheduler:
            client = Client(scheduler)
        else:
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        try:
            token = uuid.uuid4().hex[:8]
            futs = {}
            for p in pending:
                f = client.submit(run_point, sweep_dict, p, str(out.resolve()), key=f"trackdyn-point-{p['id']}-{token}",
                                  pure=False)
                futs[f] = p
            done = len(points) - len(pending)
            for f in as_completed(list(futs)):
                p = futs[f]
                try:
                    rec = f.result()
                except Exception as err:  # the task kept killing workers, or the cluster refused it
                    rec = _record_failure(out, p, err)
                states[p["id"]] = rec["status"]
                ran.append(rec)
                done += 1
                write_json_atomic(man_path, _manifest(spec, out, points, states, started, n_workers, scheduler))
                if progress is not None:
                    progress(done, len(points), rec)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    wall = time.perf_counter() - t0
    df = sweep_table(spec, out)
    table = _write_table(df, out / "results.parquet") if len(df) else None
    figs = []
    if figures and len(df):
        figs = [f"figures/{k}.png" for k in sweep_figures(spec, df, out)]
    counts = {s: int(sum(1 for v in states.values() if v == s)) for s in ("ok", "failed")}
    return {"sweep": spec.name, "event": spec.event, "vehicle": spec.vehicle, "points": len(points),
            "ok": counts["ok"], "failed": counts["failed"], "ran": len(ran),
            "reused": int(sum(1 for r in ran if r.get("reused"))), "skipped": len(points) - len(pending),
            "missing": len(points) - counts["ok"] - counts["failed"], "removed_partial": removed,
            "workers": n_workers if not scheduler else None, "scheduler": scheduler, "wall_time_s": wall,
            "out": str(out), "table": str(table) if table else None, "figures": figs,
            "failures": {r["id"]: r.get("error") for r in ran if r["status"] == "failed"}}
