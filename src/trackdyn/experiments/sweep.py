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
``spec.materials.pad.youngs_modulus``), ``event.<option>`` (an event option,
e.g. ``event.height_in``, ``event.step``), ``scenario.<option>`` (a scenario
option of the fidelity, e.g. ``scenario.contact.implicit = [true, false]``),
``hull`` (``[true, false]``: the spec's hull shapes kept or removed) and
``friction`` (the track–ground friction coefficient: the pad material's μ and,
for events with an obstacle ``material`` and a ``ground_material`` (step
climb), the obstacle's and the flat ground's μ; a pair's μ is the smaller of
its two materials'). Every value is checked when the file is read.

Built-in sweep files (:func:`builtin_sweeps`, ``trackdyn sweep --list``) live
in ``trackdyn/experiments/sweeps/*.toml``; a file may carry a one-line
``description``.

Running (:func:`run_sweep`, ``trackdyn sweep FILE``): every grid point is one
task on a Dask cluster — an embedded ``LocalCluster`` with one single-thread
worker process per core, or an existing scheduler. Output folder::

    manifest.json      the sweep, every point (id, parameters, folder) and its state; rewritten atomically
    sweep.toml         the sweep file as given
    sweep.lock         while a sweep drives the folder: its pid and host (a second one on this host is refused)
    points/<id>/       one folder per point: summary.json (done; the event result without its time
                       series), failed.json (failed) or refused.json (a geometry the assembly refuses),
                       point.json (wall time, worker); trial folders only with ``series=True``
    results.parquet    the combined table: one row per point of the grid, exactly once (and results.csv)
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
- A configuration the assembly refuses (a ``GeometryError``: e.g. a sprocket
  intersecting road wheel 1, which the thesis discarded, §5.2) is recorded as
  *refused* with the reason; a point that fails deterministically (a diverged
  run, bad options) as *failed* with its error; the sweep goes on.
- Points whose assembled vehicle is the same run once (grids with an idler
  axis: the assembly closes each track by moving the idler along its
  tensioner, so with the shoe count a whole number several idler inputs
  close onto one idler position, korner-2024 §5.2's "very similar track
  configurations ... evaluated multiple times"). The others are recorded
  from it: their summary.json is its result plus ``same_as`` (the computed
  point's id) and their wall time 0; ``share=False`` (``--run-duplicates``)
  runs every point.
- :func:`sweep_status` reads a folder alone (done, failed, refused, left,
  in progress, ETA from the measured point times), so a partial study copied
  to another machine can be inspected and resumed there.
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
from ..formulations.contract import event_step, get_formulation
from ..io.results import write_json_atomic
from ..spec import SpecError
from ..spec import scenario as _scenario  # _scenario.FIDELITIES: the fidelities registered at the look-up
from ..viz.plots import grid_by_axis, grid_map, new_figure, peak_vs_parameter, save_figure
from .events import EVENTS, EventDiverged, resolve_vehicle, run_event

__all__ = ["SweepSpec", "load_sweep", "sweep_from_dict", "run_sweep", "run_point", "point_record", "sweep_table",
           "sweep_figures", "sweep_status", "compare_sweeps", "assembly_refuses", "builtin_sweeps", "find_sweep",
           "GEOMETRY_KEYS", "DEFAULT_VALUES", "SWEEPS_DIR"]

GEOMETRY_KEYS = ("sprocket.dx", "sprocket.dz", "idler.dx", "idler.dz")
#: Grid keys that are neither geometry offsets nor prefixed (module docstring).
SPECIAL_KEYS = ("hull", "friction")
#: The built-in sweep files (package data).
SWEEPS_DIR = Path(__file__).resolve().parent / "sweeps"
#: Event-result keys that hold time series or profiles: left out of a point's summary.json unless
#: the sweep keeps series (the per-point summaries stay small enough to copy and commit).
SERIES_KEYS = ("paths", "terrain_profile", "trace", "series", "time_series", "path", "mechanism_series")
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
    description: str = ""

    def points(self) -> list[dict]:
        """Every grid point as ``{"id", "params"}``, in grid order (first axis slowest)."""
        keys = list(self.grid)
        out = []
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            params = dict(zip(keys, combo))
            out.append({"id": point_id(params), "params": params})
        return out

    def identity(self) -> dict:
        """What must match for two runs to share an output folder (the grid may grow).

        ``step`` is the time step every point runs at: the options' ``step``, else the events' default step of
        the fidelity (resolved now, so a folder whose points ran at another default is not continued at this
        one); None where ``event.step`` is a grid axis.
        """
        opts = dict(self.options)
        step = opts.pop("step", None)
        if step is None and "event.step" not in self.grid:
            step = event_step(self.fidelity or "links", _scenario_options(self.options))
        return {"vehicle": self.vehicle, "event": self.event, "options": opts, "step": step,
                "fidelity": self.fidelity, "axes": sorted(self.grid)}

    def to_dict(self) -> dict:
        return {"name": self.name, "vehicle": self.vehicle, "event": self.event, "fidelity": self.fidelity,
                "grid": {k: list(v) for k, v in self.grid.items()}, "options": dict(self.options),
                "values": list(self.values), "description": self.description}

    def shape(self) -> tuple:
        """Number of values per grid axis, in grid order."""
        return tuple(len(v) for v in self.grid.values())


def _scenario_options(options: dict) -> dict:
    """The fidelity's scenario options a sweep's event options name (``scenario_options.options``)."""
    so = options.get("scenario_options") or {}
    return dict(so.get("options") or {}) if isinstance(so, dict) else {}


def normalised_identity(identity: dict) -> dict:
    """A manifest's identity in today's form. Manifests written before the identity named its ``step`` (stop 29,
    2026-12-01) ran at the options' step or the fidelity's default step of then: its ``default_step`` (the
    events' step of ``links`` was its 5e-4 s default until then)."""
    ident = dict(identity)
    if "step" not in ident:
        opts = dict(ident.get("options") or {})
        step = opts.pop("step", None)
        if step is None and "event.step" not in ident.get("axes", []):
            fid = ident.get("fidelity") or "links"
            step = get_formulation(fid).defaults(_scenario_options(opts))[1]
        ident["options"], ident["step"] = opts, step
    return ident


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
        if not isinstance(v, (bool, int, float, str)):
            raise ValueError(f"{where}: value {v!r} is not a number, a string or true/false")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{where}: value {v!r} is not finite")
        if v not in out:
            out.append(v)
    return out


def sweep_from_dict(data: dict) -> SweepSpec:
    """A :class:`SweepSpec` from a parsed sweep file; ``ValueError`` names the field, the value and the reason.

    Every grid value is checked here, before any simulation: ``spec.*`` values
    are applied to the vehicle, ``scenario.*`` values to a scenario of the
    sweep's fidelity, ``hull`` takes true/false and ``friction`` positive
    numbers. (Geometry offsets are checked per point: a configuration the
    assembly refuses is a result of the study, recorded as refused.)
    """
    if not isinstance(data, dict):
        raise ValueError("sweep: the top level must be a table")
    unknown = set(data) - {"name", "description", "vehicle", "event", "fidelity", "grid", "options", "figures"}
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
    fidelity = data.get("fidelity")
    if fidelity is not None:
        fidelities = _scenario.FIDELITIES
        if fidelity not in fidelities:
            raise ValueError(f"sweep.fidelity = {fidelity!r}: choose one of {fidelities}")
    grid = {}
    for k, v in grid_in.items():
        if k in GEOMETRY_KEYS or k in SPECIAL_KEYS:
            pass
        elif k.startswith("spec."):
            if len(k) <= 5:
                raise ValueError(f"sweep.grid.{k}: name a spec field after 'spec.'")
        elif k.startswith("event."):
            if k[6:] not in params or k[6:] in ("vehicle", "out", "progress", "scenario_options"):
                raise ValueError(f"sweep.grid.{k}: {event} has no option {k[6:]!r}")
        elif k.startswith("scenario."):
            if len(k) <= 9:
                raise ValueError(f"sweep.grid.{k}: name a scenario option after 'scenario.' (e.g. contact.implicit)")
        else:
            raise ValueError(f"sweep.grid.{k}: unknown parameter; use {', '.join(GEOMETRY_KEYS)}, "
                             f"{', '.join(SPECIAL_KEYS)}, spec.<field>, event.<option> or scenario.<option>")
        grid[k] = _axis(k, v)
        _check_values(k, grid[k], vehicle, event, params, fidelity or "links")
    options = dict(data.get("options", {}))
    bad = [k for k in options if k not in params or k in ("vehicle", "out", "progress")]
    if bad:
        raise ValueError(f"sweep.options: {event} has no option(s) {bad}")
    figs = data.get("figures", {})
    values = tuple(figs.get("values", DEFAULT_VALUES.get(event, ()))) if isinstance(figs, dict) else ()
    name = str(data.get("name", "sweep"))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ValueError(f"sweep.description = {description!r}: expected a string")
    return SweepSpec(vehicle=vehicle, event=event, grid=grid, options=options, fidelity=fidelity, name=name,
                     values=values, description=description)


def _check_values(key, values, vehicle, event, params, fidelity):
    """Refuse grid values that can never run, naming the key, the value and the reason (no simulation)."""
    where = f"sweep.grid.{key}"
    if key in GEOMETRY_KEYS or key == "friction":
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{where}: value {v!r} is not a number")
        if key == "friction":
            for v in values:
                if not 0 < v <= 2:
                    raise ValueError(f"{where}: value {v!r}: a friction coefficient must be in (0, 2]")
    elif key == "hull":
        for v in values:
            if not isinstance(v, bool):
                raise ValueError(f"{where}: value {v!r}: expected true (the spec's hull) or false (no hull)")
    elif key.startswith("spec."):
        for v in values:
            try:
                resolve_vehicle(vehicle, changes={key[5:]: v})
            except (SpecError, ValueError, KeyError, TypeError) as err:
                raise ValueError(f"{where}: value {v!r}: {err}") from None
    elif key.startswith("scenario."):
        from ..formulations.contract import get_formulation
        from ..spec.scenario import Scenario

        for v in values:
            try:
                sc = Scenario(vehicle=vehicle, fidelity=fidelity, options={key[9:]: v})
                get_formulation(fidelity).check(sc)
            except (ValueError, TypeError) as err:
                raise ValueError(f"{where}: value {v!r}: {err}") from None


def builtin_sweeps() -> dict:
    """The sweep files shipped with trackdyn: ``{name: path}`` (``trackdyn sweep --list``)."""
    return {p.stem: p for p in sorted(SWEEPS_DIR.glob("*.toml"))}


def find_sweep(name_or_path) -> Path:
    """A sweep file's path from a path or a built-in name; ``ValueError`` names the built-ins."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    found = builtin_sweeps().get(str(name_or_path))
    if found is not None:
        return found
    raise ValueError(f"sweep {str(name_or_path)!r}: no such file and no built-in sweep of that name; built-in: "
                     f"{', '.join(builtin_sweeps()) or 'none'}")


def load_sweep(path) -> SweepSpec:
    """Read and validate a TOML sweep file (a path, or a built-in sweep's name)."""
    import tomllib

    p = find_sweep(path)
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
    if params.get("hull") is False:
        changes["chassis.hull"] = []
    if "friction" in params:
        changes["materials.pad.friction"] = float(params["friction"])
    return resolve_vehicle(sweep["vehicle"], changes=changes or None, **geo)


def _event_options(sweep: dict, params: dict) -> dict:
    """The event's keyword options at a point: the file's options, ``event.*``, ``scenario.*``, ``friction``."""
    import inspect

    opts = dict(sweep.get("options", {}))
    opts.update({k[6:]: v for k, v in params.items() if k.startswith("event.")})
    scen = {k[9:]: v for k, v in params.items() if k.startswith("scenario.")}
    if scen:  # the event's scenario_options are Scenario keywords; the fidelity's options sit under "options"
        so = dict(opts.get("scenario_options") or {})
        so["options"] = {**dict(so.get("options") or {}), **scen}
        opts["scenario_options"] = so
    if "friction" in params and "material" in inspect.signature(EVENTS[sweep["event"]]).parameters:
        from dataclasses import replace as _replace

        from .trials import TIMBER

        base = opts.get("material") or TIMBER
        opts["material"] = _replace(base, friction=float(params["friction"]))
        if "ground_material" in inspect.signature(EVENTS[sweep["event"]]).parameters:
            from ..terrain.base import DEFAULT_MATERIAL

            ground = opts.get("ground_material") or DEFAULT_MATERIAL
            opts["ground_material"] = _replace(ground, friction=float(params["friction"]))
    if sweep.get("fidelity"):
        opts["fidelity"] = sweep["fidelity"]
    return opts


def _small(obj):
    """An event result without its time series (:data:`SERIES_KEYS`), for a point's summary.json."""
    if isinstance(obj, dict):
        return {k: _small(v) for k, v in obj.items() if k not in SERIES_KEYS}
    if isinstance(obj, (list, tuple)):
        return [_small(v) for v in obj]
    return obj


def _done_record(folder: Path):
    s, f, r = folder / "summary.json", folder / "failed.json", folder / "refused.json"
    if s.exists():
        return {"status": "ok", "summary": json.loads(s.read_text(encoding="utf-8"))}
    if r.exists():
        d = json.loads(r.read_text(encoding="utf-8"))
        return {"status": "refused", "error": d.get("error"), "error_type": d.get("error_type")}
    if f.exists():
        d = json.loads(f.read_text(encoding="utf-8"))
        # folders written before refusals had their own state: a GeometryError was recorded as failed
        status = "refused" if d.get("error_type") == "GeometryError" else "failed"
        return {"status": status, "error": d.get("error"), "error_type": d.get("error_type")}
    return None


def _rounded(obj, digits: int = 9):
    if isinstance(obj, float):
        return round(obj, digits) + 0.0  # -0.0 -> 0.0
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v, digits) for v in obj]
    return obj


def _vehicle_key(params: dict) -> str:
    """The point's vehicle parameters (all but ``event.*`` and ``scenario.*``), as a key: the assembly
    depends on these only."""
    return json.dumps({k: v for k, v in params.items() if not k.startswith(("event.", "scenario."))},
                      sort_keys=True)


def assembled_key(sweep: dict, params: dict, _cache: dict | None = None) -> str | None:
    """A key equal for two points exactly when they run the same assembled vehicle through the same event.

    The spec (idler location aside), the event and its options, and of each side the shoe count and the
    idler centre the loop closes at (to 1e-9 m): the nominal idler location enters the assembly only
    through that closure (``geometry.side_layout`` -> ``close_track``). ``None`` when the point has no
    closed track to compare (a wheeled vehicle, a geometry the assembly refuses, an invalid spec): it runs
    by itself.
    """
    import hashlib

    from ..assembly.builder import vehicle_geometry

    vehicle_params = _vehicle_key(params)
    cache = {} if _cache is None else _cache
    try:
        opts = _event_options(sweep, params)
        if vehicle_params not in cache:  # the assembly depends on the vehicle's parameters only
            cache[vehicle_params] = None
            spec = _spec_for(sweep, params)
            if getattr(spec, "running_gear", "tracks") == "tracks":
                geo = vehicle_geometry(spec)
                data = spec.model_dump(mode="json")
                data["idler"].pop("location", None)
                data["shoes"].pop("count", None)
                closed = {side: {"shoes": int(t.n_shoes),
                                 "idler": list(geo.layouts[side].idler_center(t.idler_shift))}
                          for side, t in sorted(geo.tracks.items())}
                cache[vehicle_params] = {"spec": data, "closed": closed}
    except (GeometryError, SpecError, ValueError):
        return None
    if cache[vehicle_params] is None:
        return None
    blob = json.dumps(_rounded({"event": sweep["event"], "fidelity": sweep.get("fidelity"), "options": opts,
                                **cache[vehicle_params]}), sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()


def assembly_refuses(sweep: dict, params: dict, _cache: dict | None = None) -> GeometryError | None:
    """The assembly's ``GeometryError`` when it refuses the point's geometry (before anything is simulated:
    the point is recorded as refused), else None. An invalid spec or a wheeled vehicle is not refused here:
    such a point runs, and :func:`run_point` records what happens. ``_cache`` holds the answer per vehicle
    parameters (:func:`_vehicle_key`)."""
    from ..assembly.builder import vehicle_geometry

    key = _vehicle_key(params)
    cache = {} if _cache is None else _cache
    if key not in cache:
        cache[key] = None
        try:
            spec = _spec_for(sweep, params)
            if getattr(spec, "running_gear", "tracks") == "tracks":
                vehicle_geometry(spec)
        except GeometryError as err:
            cache[key] = err
        except (SpecError, ValueError):
            pass
    return cache[key]


def shared_points(sweep: dict, points: list[dict]) -> dict[str, list[str]]:
    """Groups of points (ids, grid order) that run the same assembled vehicle (:func:`assembled_key`).

    Only grids with an idler axis can hold such groups (moving the sprocket or any other input changes the
    assembled vehicle), so others return ``{}`` without assembling anything. Returns ``{key: [ids]}`` for the
    groups of two or more.
    """
    if not any(k.startswith("idler.") for k in sweep.get("grid", {})):
        return {}
    groups: dict[str, list[str]] = {}
    cache: dict = {}
    for p in points:
        k = assembled_key(sweep, p["params"], cache)
        if k is not None:
            groups.setdefault(k, []).append(p["id"])
    return {k: ids for k, ids in groups.items() if len(ids) > 1}


def _record_shared(out: Path, point: dict, source: str) -> dict:
    """Record ``point`` from the computed point ``source`` of the same assembled vehicle (atomic, as run_point)."""
    final = out / "points" / point["id"]
    done = _done_record(final)
    if done is not None:
        return {"id": point["id"], "status": done["status"], "error": done.get("error"), "wall_time_s": 0.0,
                "reused": True}
    summary = json.loads((out / "points" / source / "summary.json").read_text(encoding="utf-8"))
    source = summary.get("same_as") or source
    tmp = out / "points" / f".{point['id']}.tmp-shared-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    write_json_atomic(tmp / "summary.json", {**summary, "same_as": source, "wall_time_s": 0.0,
                                             "run_wall_time_s": 0.0, "build_wall_time_s": 0.0, "wall_per_sim": None})
    write_json_atomic(tmp / "point.json", {"id": point["id"], "params": point["params"], "status": "ok",
                                           "pid": os.getpid(), "wall_time_s": 0.0, "same_as": source})
    try:
        os.rename(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"id": point["id"], "status": "ok", "error": None, "wall_time_s": 0.0, "reused": False,
            "same_as": source}


def run_point(sweep: dict, point: dict, out: str, series: bool = False,
              refused: GeometryError | None = None) -> dict:
    """Compute one grid point (on a Dask worker): the event into a temporary folder, renamed when done.

    Returns ``{"id", "status": "ok" | "failed" | "refused", "error", "pid", "wall_time_s", "reused"}``.
    A geometry the assembly refuses (``GeometryError``, before anything runs)
    is recorded in ``refused.json``; other deterministic errors (spec,
    diverged run, bad options) in ``failed.json``; they are returned, never
    raised. With ``series`` the event writes its trial folders (time series)
    and figures into the point folder; otherwise only ``summary.json``
    without the result's time series. ``refused``: the assembly's error, found
    before (:func:`assembly_refuses`): the point is recorded as refused without
    running the event.
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
        if refused is not None:
            raise refused
        spec = _spec_for(sweep, point["params"])
        opts = _event_options(sweep, point["params"])
        if series:
            res = run_event(sweep["event"], spec, out=tmp, **opts)
        else:
            res = run_event(sweep["event"], spec, **opts)
        write_json_atomic(tmp / "summary.json", _small(dict(res)))
    except GeometryError as err:
        status, error = "refused", f"{type(err).__name__}: {err}"
        write_json_atomic(tmp / "refused.json", {"error": str(err), "error_type": type(err).__name__,
                                                 "params": point["params"]})
    except (SpecError, EventDiverged, ValueError) as err:
        status, error = "failed", f"{type(err).__name__}: {err}"
        write_json_atomic(tmp / "failed.json", {"error": str(err), "error_type": type(err).__name__,
                                                "traceback": traceback.format_exc(), "params": point["params"]})
    if status != "ok" and (tmp / "summary.json").exists():
        (tmp / "summary.json").unlink()
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
    done = _done_record(final)
    if done is not None:
        return {"id": point["id"], "status": done["status"], "error": done.get("error"), "reused": True}
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


def limit_source(summary: dict) -> dict:
    """The mechanism of a half-round point's limit (issue #33: the failure mode in the tables): the first
    speed whose peak exceeds ``limit_g`` and what made that peak (``hull`` striking the obstacle, or the
    road wheel that did), from the summary's ``peaks`` and ``peak_sources``; empty for other events and for
    points that never exceeded the limit. Where the summary keeps that speed's run, two more columns say how
    the impact came: ``limit_source_on_jounce_stop`` (a road wheel's arm reached its jounce stop within the
    impact; None for the hull) and ``limit_source_x_from_obstacle_m`` (where the body was, world x from the
    obstacle's leading edge)."""
    peaks, sources, g = summary.get("peaks"), summary.get("peak_sources"), summary.get("limit_g")
    if not (isinstance(peaks, list) and isinstance(sources, list) and g is not None):
        return {}
    by_speed = {float(s): name for s, name, *_ in sources}
    over = sorted(float(s) for s, a in peaks if a is not None and a > g)
    if not over:
        return {}
    name = by_speed.get(over[0])
    kind = "hull" if name == "hull" else "road wheel" if name and "roadwheel" in name else name
    out = {"limit_source": kind, "limit_source_body": name, "limit_source_speed_mps": over[0]}
    run = next((r for r in summary.get("runs") or () if isinstance(r, dict) and r.get("speed_mps") is not None
                and float(r["speed_mps"]) == over[0]), None)
    src = (run or {}).get("peak_source")
    if isinstance(src, dict):
        out["limit_source_on_jounce_stop"] = src.get("on_jounce_stop")  # a wheel's only (trials.peak_source)
        out["limit_source_x_from_obstacle_m"] = src.get("x_from_obstacle_m")
    return out


def point_record(out, point: str):
    """The record of one point of a sweep folder: ``{"status": "ok", "summary": {...}}``, ``{"status": "failed" |
    "refused", "error", "error_type"}``, or None while the point has no record."""
    return _done_record(Path(out) / "points" / point)


def _recorded_points(spec: SweepSpec, out: Path) -> list[dict]:
    """The folder's points off ``spec``'s grid (``{"id", "params"}`` from their ``point.json``, with ``spec``'s
    axes): several sweep files of one identity may fill one folder (a study's layers, a step check of a few
    configurations), and the folder's table holds all of them."""
    root = out / "points"
    if not root.is_dir():
        return []
    on_grid = {p["id"] for p in spec.points()}
    axes = sorted(spec.grid)
    extra = []
    for d in sorted(root.iterdir()):
        pj = d / "point.json"
        if d.name.startswith(".") or d.name in on_grid or not pj.exists():
            continue
        params = json.loads(pj.read_text(encoding="utf-8")).get("params")
        if isinstance(params, dict) and sorted(params) == axes:
            extra.append({"id": d.name, "params": params})
    return extra


def sweep_table(spec: SweepSpec, out, every_point: bool = False):
    """The combined table (a pandas DataFrame) of a sweep folder: one row per grid point with a record
    (``status`` ok, failed or refused; ``error`` the error or the refusal's reason), missing points omitted.
    ``every_point``: then also the folder's other recorded points of the same axes (another sweep file of the
    same identity ran them), after the grid's."""
    import pandas as pd

    out = Path(out)
    rows = []
    for p in spec.points() + (_recorded_points(spec, out) if every_point else []):
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
            row.update(limit_source(summ))
        rows.append(row)
    df = pd.DataFrame(rows)
    return df


def compare_sweeps(reference, other, values=None) -> dict:
    """Two sweep folders of the same grid axes side by side (issue #33: the massless fidelity against links).

    Over the points that finished (``status`` ok) in both (every point recorded in a folder, also those of
    other sweep files of its identity: a study's layers, rows and columns), per value (default: the reference's figure
    values): the number of points, Spearman's rank correlation of the two (do they rank the configurations
    the same way?) with its p-value, the mean and the largest difference (other − reference), and each
    folder's summed point wall time over those points (the cost of each fidelity). Raises ValueError naming
    a folder that is not a sweep folder or axes that differ.
    """
    import numpy as np
    from scipy.stats import spearmanr

    tables = []
    for d in (Path(reference), Path(other)):
        if not (d / "sweep.toml").is_file():
            raise ValueError(f"compare_sweeps: {d} is not a sweep folder (no sweep.toml)")
        spec = load_sweep(d / "sweep.toml")
        tables.append((d, spec, sweep_table(spec, d, every_point=True)))  # several files may have filled it
    (da, sa, ta), (db, sb, tb) = tables
    if sorted(sa.grid) != sorted(sb.grid):
        raise ValueError(f"compare_sweeps: the folders' grid axes differ ({sorted(sa.grid)} in {da}, "
                         f"{sorted(sb.grid)} in {db})")
    values = list(values or sa.values or DEFAULT_VALUES.get(sa.event, ()))

    def ok(df):
        return df[df["status"] == "ok"] if len(df) else df

    merged = ok(ta).merge(ok(tb), on="point", suffixes=("_ref", "_other")) if len(ta) and len(tb) else None
    rows = []
    for v in values:
        row = {"value": v, "points": 0, "spearman": None, "p_value": None, "mean_difference": None,
               "max_abs_difference": None}
        if merged is not None and f"{v}_ref" in merged and f"{v}_other" in merged:
            x = _numeric(merged[f"{v}_ref"])
            y = _numeric(merged[f"{v}_other"])
            keep = np.isfinite(x) & np.isfinite(y)
            x, y = x[keep], y[keep]
            row["points"] = int(x.size)
            if x.size:
                d = y - x
                row["mean_difference"] = float(d.mean())
                row["max_abs_difference"] = float(np.abs(d).max())
            if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                rho, pv = spearmanr(x, y)
                row["spearman"], row["p_value"] = float(rho), float(pv)
        rows.append(row)
    n = 0 if merged is None else len(merged)
    wall = {}
    for tag in ("ref", "other"):
        col = f"point_wall_time_s_{tag}"
        wall[tag] = float(_numeric(merged[col]).sum()) if merged is not None and col in merged else None
    fid = []
    for _, s_, t in tables:  # the fidelity the points ran at (their records), else the sweep file's
        ran = t["fidelity"].dropna() if len(t) and "fidelity" in t else ()
        fid.append(str(ran.iloc[0]) if len(ran) else (s_.fidelity or "links"))
    return {"reference": str(da), "other": str(db), "fidelities": fid, "axes": sorted(sa.grid),
            "common_points": n, "values": rows, "point_wall_s": wall,
            "cost_ratio": (wall["other"] / wall["ref"]) if wall["ref"] and wall["other"] is not None else None}


def _numeric(series):
    """A table column as float64 (None and text become NaN)."""
    import numpy as np
    import pandas as pd

    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)


def write_tables(spec: SweepSpec, out):
    """The folder's table (:func:`sweep_table`) written as ``results.parquet`` and ``results.csv`` (each to a
    temporary name, then renamed); returns (the table, the Parquet path or None when it has no row)."""
    out = Path(out)
    df = sweep_table(spec, out)
    table = _write_table(df, out / "results.parquet") if len(df) else None
    if table is not None:  # the same table as CSV, for a spreadsheet or a diff
        tmp_csv = out / f".results.csv.tmp-{os.getpid()}"
        df.to_csv(tmp_csv, index=False)
        os.replace(tmp_csv, out / "results.csv")
    return df, table


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
    5.8-5.10 left), the same values one axis at a time (stem ``<value>_by_axis``: against the second axis
    with a line per value of the first, and against the first; Figs. 5.3, 5.7), and the value at the
    configurations' actual idler positions (the figures' right panels) when the rows carry
    ``idler_x_m``/``idler_z_m``. A point whose search ended beyond its range (every speed passed: the
    limit above the fastest; or below the slowest) is marked as such at the range's end, not left blank.
    One numeric axis gives a line plot. Further
    axes with several values (e.g. ``event.height_in`` of the half-round study) give one figure per value
    of them (stem ``<value>__<axis>=<v>``). Refused points are drawn as refused (hatched, "refused").
    A sweep whose only axes are booleans or strings (``hull = [false, true]``) gives a bar per value (per
    combination of values) with the first failing trial's mode, failed and refused points marked
    (:func:`_categorical_figure`).

    Returns ``{stem: Figure}``; with ``out`` they are written to ``out/figures/<stem>.png``.
    """
    multi = [k for k, v in spec.grid.items() if len(v) > 1]
    numeric = [k for k in multi if all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                          for x in spec.grid[k])]
    geo = [k for k in numeric if k in GEOMETRY_KEYS]
    axes = (geo + [k for k in numeric if k not in geo])[:2]
    facets = [k for k in multi if k not in axes]
    figs = {}
    if df is None or len(df) == 0:
        return figs
    if not axes and facets and all(k in df.columns for k in facets):
        # only non-numeric axes (hull = [false, true], scenario.contact.implicit = [false, true]): the value
        # per category instead of nothing
        figs = {val: _categorical_figure(spec, df, facets, val) for val in spec.values
                if val in df.columns or "status" in df.columns}
    elif facets and all(k in df.columns for k in facets):
        for combo in itertools.product(*(spec.grid[k] for k in facets)):
            sel = np.ones(len(df), dtype=bool)
            for k, v in zip(facets, combo):
                sel &= (df[k] == v).to_numpy()
            tag = "_".join(f"{k}={_fmt(v)}" for k, v in zip(facets, combo))
            sub = _figures_on(spec, df[sel], axes, f" ({tag})")
            figs.update({f"{stem}__{tag}": fig for stem, fig in sub.items()})
    else:
        figs = _figures_on(spec, df, axes, "")
    if out is not None:
        for stem, fig in figs.items():
            save_figure(fig, Path(out) / "figures" / f"{re.sub(r'[^A-Za-z0-9._=-]+', '_', stem)}.png", dpi=100)
    return figs


def _category_label(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _finite(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _categorical_figure(spec, df, keys, val):
    """``val`` per value of the sweep's non-numeric axes ``keys`` (every combination, in grid order): a bar
    per point with a value, labelled with it and, when the row carries them, the first failing trial's
    ``failure_mode`` and ``limited_by``; a point without a value is a marker at zero with the reason: red
    ``X`` failed (its error type), black ``x`` refused (geometry), hollow ``o`` done without a value (e.g. a
    limit search below its range: ``search_status``); a point not run yet is only named."""
    combos = list(itertools.product(*(spec.grid[k] for k in keys)))
    labels = [_category_label(c[0]) if len(keys) == 1 else "\n".join(f"{k}={_category_label(v)}"
                                                                        for k, v in zip(keys, c))
              for c in combos]
    per = max(1.6, 0.075 * max(len(line) for lab in labels for line in lab.split("\n")) + 0.4)
    fig, ax = new_figure(max(4.5, per * len(combos) + 1.5), 4.2)
    found = []
    for c in combos:
        sel = np.ones(len(df), dtype=bool)
        for k, v in zip(keys, c):
            sel &= (df[k] == v).to_numpy()
        found.append(df[sel].iloc[0] if sel.any() else None)
    values = [(_finite(r.get(val)) if r is not None and r.get("status", "ok") == "ok" else None) for r in found]
    top = max([abs(v) for v in values if v is not None] or [1.0])
    notes = {"failed": ("X", "tab:red", "failed"), "refused": ("x", "k", "refused (geometry)"),
             "ok": ("o", "none", "no value")}
    seen = set()
    for i, (r, v) in enumerate(zip(found, values)):
        if r is None:
            ax.text(i, 0.02 * top, "not run", ha="center", va="bottom", fontsize=8, color="0.4")
            continue
        status = r.get("status", "ok")
        if v is not None:
            ax.bar(i, v, width=0.6, color="tab:blue", edgecolor="k",
                   label=None if "bar" in seen else f"{val}")
            seen.add("bar")
            text = f"{v:.4g}"
        else:
            marker, colour, what = notes.get(status, notes["failed"])
            style = dict(facecolors="none", edgecolors="k") if marker == "o" else dict(color=colour)
            ax.scatter([i], [0.0], marker=marker, s=110, zorder=3, label=None if status in seen else what,
                       **style)
            seen.add(status)
            why = r.get("error_type") if status == "failed" else r.get("search_status") if status == "ok" else None
            text = what + (f": {why}" if isinstance(why, str) and why else "")
        mode, by = r.get("failure_mode"), r.get("limited_by")
        if status == "ok" and isinstance(mode, str) and mode:
            text += f"\nfirst failure: {mode}"
            if isinstance(by, str) and by and by != mode:
                text += f"\nlimited by: {by}"
        ax.text(i, (v if v is not None and v > 0 else 0.0) + 0.03 * top, text, ha="center", va="bottom",
                fontsize=8)
    ax.set_xticks(range(len(combos)), labels)
    ax.set_xlim(-0.6, len(combos) - 0.4)
    lo = min([v for v in values if v is not None] + [0.0])
    ax.set_ylim(lo * 1.1 if lo < 0 else -0.05 * top, 1.45 * top)  # below zero: the markers at zero show whole
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel(" x ".join(keys))
    ax.set_ylabel(val)
    ax.set_title(f"{spec.name}: {val}")
    ax.grid(True, axis="y", alpha=0.3)
    if seen:
        ax.legend(loc="upper right", fontsize=7)
    return fig


#: the value each event's search finds, and the options that give the range it searched
_SEARCHED = {"limiting_speed_mps": ("speeds",), "limit_m": ("lo", "hi")}


def _out_of_range(spec, ok, val, Z, xs, ys, ax_x, ax_y):
    """Cells of ``Z`` (rows ``ys``, columns ``xs``) whose search for ``val`` ended beyond its range
    (``limit_status``/``search_status`` ``above-range`` or ``below-range``, no finite value), and the range
    ``(lo, hi)`` from the sweep's options (None when they do not give it)."""
    above, below = np.zeros(Z.shape, bool), np.zeros(Z.shape, bool)
    keys = _SEARCHED.get(val)
    if keys is None:
        return above, below, None
    opts = spec.options
    if keys == ("speeds",) and opts.get("speeds"):
        bounds = (float(min(opts["speeds"])), float(max(opts["speeds"])))
    elif keys == ("lo", "hi") and "lo" in opts and "hi" in opts:
        bounds = (float(opts["lo"]), float(opts["hi"]))
    else:
        bounds = None
    col = next((c for c in ("limit_status", "search_status") if c in ok.columns), None)
    if col is None:
        return above, below, bounds
    for _, r in ok.iterrows():
        if _finite(r[val]) is not None or r[col] not in ("above-range", "below-range"):
            continue
        try:
            j, i = ys.index(r[ax_y]), xs.index(r[ax_x])
        except ValueError:
            continue
        (above if r[col] == "above-range" else below)[j, i] = True
    return above, below, bounds


def _figures_on(spec, df, axes, suffix):
    figs = {}
    ok = df[df["status"] == "ok"] if "status" in df else df
    refused = df[df["status"] == "refused"] if "status" in df else df.iloc[:0]
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
            above, below, bounds = _out_of_range(spec, ok, val, Z, xs, ys, ax_x, ax_y)
            fig = grid_map(xs, ys, Z, xlabel=names.get(ax_x, ax_x), ylabel=names.get(ax_y, ax_y),
                           zlabel=val, title=f"{spec.name}: {val}{suffix}", marks=[(0.0, 0.0, "design")]
                           if 0.0 in xs and 0.0 in ys else None)
            ax = fig.axes[0]
            for mask, marker, text in ((above, "^", "above the range searched"),
                                       (below, "v", "below the range searched")):
                if mask.any():
                    jy, jx = np.nonzero(mask)
                    ax.scatter(np.asarray(xs, float)[jx], np.asarray(ys, float)[jy], marker=marker, c="w",
                               edgecolors="k", s=60, label=text + (f" ({bounds[0]:g} .. {bounds[1]:g})"
                                                                   if bounds else ""))
            if len(refused):
                ax.scatter(refused[ax_x].astype(float), refused[ax_y].astype(float), marker="x", c="k", s=60,
                           label="refused (geometry)")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper right", fontsize=7)
            figs[val] = fig
            figs[f"{val}_by_axis"] = grid_by_axis(
                xs, ys, Z, above=above, below=below, bounds=bounds, xlabel=names.get(ax_x, ax_x),
                ylabel=names.get(ax_y, ax_y), zlabel=val, title=f"{spec.name}: {val}{suffix}, one axis at a time")
        elif len(axes) == 1:
            a = axes[0]
            sub = ok.sort_values(a)
            y = np.array([np.nan if v is None else float(v) for v in sub[val]])
            figs[val] = peak_vs_parameter(sub[a].to_numpy(float), y, xlabel=names.get(a, a), ylabel=val,
                                          title=f"{spec.name}: {val}{suffix}")
        if {"idler_x_m", "idler_z_m"} <= set(ok.columns) and val not in ("idler_x_m", "idler_z_m") \
                and any(k.startswith("idler.") for k in axes):
            fig, ax = new_figure(6.5, 4.8)
            v = np.array([np.nan if x is None else float(x) for x in ok[val]])
            sc = ax.scatter(ok["idler_x_m"].astype(float), ok["idler_z_m"].astype(float), c=v, cmap="viridis",
                            s=90, edgecolors="k")
            fig.colorbar(sc, ax=ax, label=val)
            ax.set_xlabel("actual idler x [m] (vehicle frame)")
            ax.set_ylabel("actual idler z [m] (vehicle frame)")
            ax.set_title(f"{spec.name}{suffix}\n{val} at the settled idler positions", fontsize=10)
            ax.grid(True, alpha=0.3)
            figs[f"{val}_actual"] = fig
    return figs


# ---------------------------------------------------------------------------------------------- status
def _point_info(folder: Path) -> dict:
    pj = folder / "point.json"
    try:
        return json.loads(pj.read_text(encoding="utf-8")) if pj.exists() else {}
    except (OSError, json.JSONDecodeError):
        return {}


def _eta(times, left, workers):
    """Seconds left: ``left`` points at the mean measured point time, ``workers`` at a time."""
    if not left:
        return 0.0
    if not times:
        return None
    return float(np.mean(times)) * left / max(1, int(workers or 1))


def sweep_status(out, workers: int | None = None) -> dict:
    """The state of a sweep folder, from its manifest and point folders alone (no cluster, no simulation).

    Returns ``{"sweep", "event", "dir", "points", "done", "failed", "refused", "left", "in_progress",
    "mean_point_s", "workers", "eta_s", "failures": {id: error}, "refusals": {id: reason}, "complete",
    "driver"}``:
    ``done`` counts points with a result, ``failed`` and ``refused`` those recorded so (with the
    error or the reason), ``left`` the rest; ``in_progress`` the unfinished attempts' folders present
    (running now, or left by a killed run). ``shared`` counts the done points recorded from a computed
    point of the same assembled vehicle (``same_as``), ``to_share`` the left points that the driver holds
    for such a point (the manifest's ``same_as``: they will be recorded, not run). ``eta_s`` is ``left``
    less ``to_share`` times the mean wall time of the
    points computed so far (refused and shared points take no time and are not counted), divided by ``workers``
    (default: the manifest's); ``None`` before any point was computed. ``driver`` is the sweep process
    holding the folder's lock (``{"pid", "host", "running"}``; ``running`` is ``None`` when it was
    started on another host), ``None`` when no sweep holds it.
    """
    out = Path(out)
    man_path = out / "manifest.json"
    if not man_path.exists():
        raise ValueError(f"{out}: not a sweep folder (no manifest.json)")
    try:
        man = json.loads(man_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{man_path}: cannot read the manifest: {err}") from None
    points = man.get("points", [])
    counts = {"ok": 0, "failed": 0, "refused": 0}
    failures, refusals, times = {}, {}, []
    shared = to_share = 0
    for p in points:
        folder = out / "points" / p["id"]
        rec = _done_record(folder)
        if rec is None:
            to_share += bool(p.get("same_as"))
            continue
        counts[rec["status"]] += 1
        info = _point_info(folder)  # point.json, read once
        shared += bool(info.get("same_as"))
        if rec["status"] == "failed":
            failures[p["id"]] = rec.get("error")
        elif rec["status"] == "refused":
            refusals[p["id"]] = rec.get("error")
        if rec["status"] != "refused":
            w = info.get("wall_time_s")
            if isinstance(w, (int, float)) and w > 0:
                times.append(float(w))
    pdir = out / "points"
    ids = {p["id"] for p in points}
    in_progress = sorted({d.name[1:].split(".tmp-")[0] for d in pdir.iterdir()
                          if d.is_dir() and d.name.startswith(".") and ".tmp-" in d.name}
                         & ids) if pdir.exists() else []
    left = len(points) - sum(counts.values())
    n_workers = workers if workers else (man.get("workers") or 1)
    driver = None
    lock = out / "sweep.lock"
    if lock.exists():
        try:
            held = json.loads(lock.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            held = {}
        here = held.get("host") == socket.gethostname()
        driver = {"pid": held.get("pid"), "host": held.get("host"),
                  "running": (_pid_alive(held.get("pid")) if here else None)}
    sw = man.get("sweep", {})
    return {"sweep": sw.get("name"), "event": sw.get("event"), "vehicle": sw.get("vehicle"), "dir": str(out),
            "points": len(points), "done": counts["ok"], "failed": counts["failed"], "refused": counts["refused"],
            "left": left, "in_progress": in_progress,
            "shared": shared, "to_share": to_share,
            "mean_point_s": float(np.mean(times)) if times else None, "computed": len(times),
            "workers": int(n_workers), "eta_s": _eta(times, left - to_share, n_workers), "failures": failures,
            "refusals": refusals, "complete": left == 0, "updated": man.get("updated"), "driver": driver}


# ---------------------------------------------------------------------------------------------- running
def _manifest(spec, out, points, states, started, workers, scheduler, held=None):
    """The sweep folder's manifest; ``held`` maps a pending point waiting for a computed point of the same
    assembled vehicle to that point's id (``same_as`` of its entry: ``sweep_status`` counts no run for it)."""
    held = held or {}
    return {"sweep": spec.to_dict(), "identity": spec.identity(), "trackdyn_version": __version__,
            "started": started, "updated": time.time(), "workers": workers, "scheduler": scheduler,
            "points": [{"id": p["id"], "params": p["params"], "folder": f"points/{p['id']}",
                        "state": states.get(p["id"], "pending"),
                        **({"same_as": held[p["id"]]} if p["id"] in held else {})} for p in points],
            "counts": {s: sum(1 for v in states.values() if v == s) for s in ("ok", "failed", "refused")}}


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
              retry_failed: bool = False, figures: bool = True, series: bool = False, on_update=None,
              share: bool = True) -> dict:
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
        Also re-run points recorded as failed (never the refused ones: a refusal is the geometry's).
    series : bool
        Keep every point's trial folders (time series) and event figures; default only the point's
        summary.json without time series (small enough to copy a partial study and resume it elsewhere).
    on_update : callable, optional
        ``on_update(snapshot)`` when the sweep starts and after each point, ``snapshot = {"total",
        "done", "ok", "failed", "refused", "running", "left", "ran", "elapsed_s", "eta_s"}``: the live
        progress display. ``eta_s`` comes from the measured point times (those recorded in the folder
        by earlier runs, then this run's), ``None`` before any.
    share : bool
        Run once the points whose assembled vehicle is the same (:func:`shared_points`) and record the
        others from it (``same_as``); ``False`` runs every point.

    A second sweep on the same folder while one runs on this host is refused (``sweep.lock``).
    """
    if not isinstance(spec, SweepSpec):
        src = find_sweep(spec)
        spec = load_sweep(src)
        text = src.read_text(encoding="utf-8")
    else:
        text = None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    man_path = out / "manifest.json"
    if man_path.exists():
        old = json.loads(man_path.read_text(encoding="utf-8"))
        have, want = normalised_identity(old.get("identity") or {}), json.loads(json.dumps(spec.identity()))
        if have != want:
            diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
            raise ValueError(f"{out}: holds a different sweep ({', '.join(diff)} differ: the folder's "
                             f"{', '.join(f'{k} = {have.get(k)!r}' for k in diff)}, this sweep's "
                             f"{', '.join(f'{k} = {want.get(k)!r}' for k in diff)}); use another --out")
    lock = _take_lock(out)
    try:
        return _run_locked(spec, out, text, man_path, scheduler, workers, progress, retry_failed, figures, series,
                           on_update, share)
    finally:
        _release_lock(lock)


def _pid_alive(pid) -> bool:
    """Whether process ``pid`` runs on this host; a killed process not yet reaped (a zombie) does not."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, ValueError, TypeError):
        return True  # exists but not ours, or unknowable: assume alive
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _take_lock(out: Path) -> Path:
    """Mark ``out`` as driven by this process (``sweep.lock``); refuse when a live sweep on this host holds it.

    A lock left by a killed sweep (its process gone) is taken over; one written on another host (a
    folder copied to this machine) cannot be checked and is taken over too, so copying a partial
    study and resuming it elsewhere keeps working.
    """
    lock = out / "sweep.lock"
    me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
    if lock.exists():
        try:
            held = json.loads(lock.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            held = {}
        if held.get("host") == me["host"] and held.get("pid") != me["pid"] and _pid_alive(held.get("pid")):
            raise ValueError(f"{out}: a sweep is running on this folder (pid {held.get('pid')} on "
                             f"{held.get('host')}); wait for it or stop it, then resume")
    write_json_atomic(lock, me)
    return lock


def _release_lock(lock: Path) -> None:
    try:
        held = json.loads(lock.read_text(encoding="utf-8"))
        if held.get("pid") == os.getpid() and held.get("host") == socket.gethostname():
            lock.unlink()
    except (OSError, json.JSONDecodeError):
        pass


def _run_locked(spec, out, text, man_path, scheduler, workers, progress, retry_failed, figures, series, on_update,
                share=True):
    from distributed import Client, LocalCluster, as_completed

    if text is not None:
        tmp = out / f".sweep.toml.tmp-{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / "sweep.toml")
    removed = _clean_tmp(out)
    points = spec.points()
    states = {}
    pending = []
    prior_times = []
    for p in points:
        folder = out / "points" / p["id"]
        if retry_failed and (folder / "failed.json").exists():
            shutil.rmtree(folder)
        rec = _done_record(folder)
        if rec is None:
            pending.append(p)
        else:
            states[p["id"]] = rec["status"]
            w = _point_info(folder).get("wall_time_s") if rec["status"] != "refused" else None
            if isinstance(w, (int, float)) and w > 0:
                prior_times.append(float(w))  # a resumed study's ETA starts from its recorded point times
    sweep_dict = spec.to_dict()
    # points of one assembled vehicle: the first computed one (or, none yet, the first pending) runs, the
    # other pending ones wait for it and are recorded from it
    waiting: dict[str, list[dict]] = {}
    n_todo = len(pending)
    if share and pending:
        by_id = {p["id"]: p for p in points}
        pending_ids = {p["id"] for p in pending}
        for ids in shared_points(sweep_dict, points).values():
            source = next((i for i in ids if states.get(i) == "ok"), None)
            source = source or next((i for i in ids if i in pending_ids), None)
            if source is None:
                continue
            waiting[source] = [by_id[i] for i in ids if i in pending_ids and i != source]
    held = {q["id"]: source for source, qs in waiting.items() for q in qs}
    pending = [p for p in pending if p["id"] not in held]
    n_workers = int(workers) if workers else (os.cpu_count() or 1)
    started = time.time()
    write_json_atomic(man_path, _manifest(spec, out, points, states, started, n_workers, scheduler, held))
    t0 = time.perf_counter()
    ran = []
    n_slots = n_workers

    def snapshot():
        c = {k: sum(1 for v in states.values() if v == k) for k in ("ok", "failed", "refused")}
        done = sum(c.values())
        left = len(points) - done
        runs_left = left - sum(1 for i in held if i not in states)  # a held point is recorded, not run
        times = prior_times + [r["wall_time_s"] for r in ran if not r.get("reused") and r["status"] != "refused"
                               and r.get("wall_time_s")]
        return {"total": len(points), "done": done, **c, "running": min(runs_left, n_slots), "left": left,
                "runs_left": runs_left, "ran": len(ran), "elapsed_s": time.perf_counter() - t0,
                "eta_s": _eta(times, runs_left, n_slots)}

    n_done = len(points) - len(pending) - len(held)

    def finish(p, rec):
        nonlocal n_done
        states[p["id"]] = rec["status"]
        ran.append(rec)
        n_done += 1
        write_json_atomic(man_path, _manifest(spec, out, points, states, started, n_workers, scheduler, held))
        if progress is not None:
            progress(n_done, len(points), rec)
        if on_update is not None:
            on_update(snapshot())

    for source in [i for i in waiting if states.get(i) == "ok"]:  # computed in an earlier run
        for q in waiting.pop(source):
            finish(q, _record_shared(out, q, source))
    # geometries the assembly refuses are recorded here, before any worker starts: they take no simulation, so
    # the ETA counts only the points that run (a layer of the idler study has 7 of 39 such points)
    refusing: dict = {}
    for p in list(pending):
        err = assembly_refuses(sweep_dict, p["params"], refusing)
        if err is not None:
            pending.remove(p)
            finish(p, run_point(sweep_dict, p, str(out.resolve()), series, refused=err))
    if pending:
        import logging

        cluster = None
        if scheduler:
            client = Client(scheduler)
            n_slots = max(1, len(client.scheduler_info().get("workers", {})))
        else:
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        try:
            token = uuid.uuid4().hex[:8]
            futs = {}
            for p in pending:
                f = client.submit(run_point, sweep_dict, p, str(out.resolve()), series,
                                  key=f"trackdyn-point-{p['id']}-{token}", pure=False)
                futs[f] = p
            if on_update is not None:
                on_update(snapshot())
            queue = as_completed(list(futs))
            for f in queue:
                p = futs[f]
                try:
                    rec = f.result()
                except Exception as err:  # the task kept killing workers, or the cluster refused it
                    rec = _record_failure(out, p, err)
                finish(p, rec)
                for q in waiting.pop(p["id"], []):
                    if rec["status"] == "ok":
                        finish(q, _record_shared(out, q, p["id"]))
                    else:  # the computed point failed: each of its group runs by itself
                        held.pop(q["id"], None)
                        g = client.submit(run_point, sweep_dict, q, str(out.resolve()), series,
                                          key=f"trackdyn-point-{q['id']}-{token}", pure=False)
                        futs[g] = q
                        queue.add(g)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    elif on_update is not None:
        on_update(snapshot())
    wall = time.perf_counter() - t0
    df, table = write_tables(spec, out)
    figs = []
    if figures and len(df):
        figs = [f"figures/{k}.png" for k in sweep_figures(spec, df, out)]
    counts = {s: int(sum(1 for v in states.values() if v == s)) for s in ("ok", "failed", "refused")}
    return {"sweep": spec.name, "event": spec.event, "vehicle": spec.vehicle, "points": len(points),
            "ok": counts["ok"], "failed": counts["failed"], "refused": counts["refused"], "ran": len(ran),
            "reused": int(sum(1 for r in ran if r.get("reused"))),
            "shared": int(sum(1 for r in ran if r.get("same_as"))), "skipped": len(points) - n_todo,
            "missing": len(points) - sum(counts.values()), "removed_partial": removed,
            "workers": n_workers if not scheduler else None, "scheduler": scheduler, "wall_time_s": wall,
            "out": str(out), "table": str(table) if table else None, "figures": figs,
            "failures": {r["id"]: r.get("error") for r in ran if r["status"] == "failed"},
            "refusals": {r["id"]: r.get("error") for r in ran if r["status"] == "refused"}}
