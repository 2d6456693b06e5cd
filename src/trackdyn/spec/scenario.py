"""Scenario: a vehicle, a terrain, a driver, a duration and the numerical settings of one run.

A scenario is data like a spec: immutable, validated on construction (a
``ValueError`` names the field, the value and the reason), convertible to and
from a plain dict (scenario files, run metadata). Terrains and drivers are
objects of :mod:`trackdyn.terrain` and :mod:`trackdyn.driver`; in files they
are tables with a ``type`` key.

Example
-------
>>> import trackdyn as td
>>> sc = td.Scenario(vehicle="m113", terrain=td.terrain.Flat(), driver=td.drivers.PID(speed=4.2), t_end=10.0)
>>> sc.replace(t_end=5.0).t_end
5.0
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import tomllib
from pathlib import Path

from .. import driver as D
from ..driver import Brake, Driver
from ..errors import check_number
from ..formulations.contract import formulation_names, get_formulation
from ..terrain.base import as_terrain
from ..terrain.describe import build, describe
from .io import get
from .vehicle import validate_spec

__all__ = ["Scenario", "FIDELITIES"]

# fields whose default is the fidelity's own (FormulationInfo.default_integrator / default_step)
_FIDELITY_DEFAULTS = ("step", "integrator")


def __getattr__(name):
    if name == "FIDELITIES":  # the registered fidelities, at the time of the look-up
        return formulation_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _num(name, value, positive=False, nonneg=False):
    return check_number(f"scenario.{name}", value, positive=positive, nonneg=nonneg)


@dataclass(frozen=True)
class Scenario:
    """One run of a vehicle.

    Parameters
    ----------
    vehicle : VehicleSpec or str
        A spec, a built-in name (``trackdyn vehicles``) or a spec file path.
    terrain : Terrain, optional
        The ground (default: flat, μ 0.8, E 20 GPa — NG-NRMM concrete).
    driver : Driver, optional
        Default: brakes on (the vehicle settles and stays).
    t_end : float
        Simulated time, s.
    fidelity : str
        Track model: a registered fidelity (``trackdyn fidelities``: ``links``,
        ``massless``, ...; DESIGN.md fidelity levels).
    step, output_step : float
        Time step and sampling interval, s. ``step`` defaults to the
        fidelity's own (``links`` 5e-4, a fifth of the thesis's Table 4.1
        1e-4; ``massless`` 1e-2, its real-time step).
    integrator, solver : str
        Names from the registries (``euler-implicit-linearized``, ``direct``);
        ``integrator`` defaults to the fidelity's own.
    start_x : float
        World x of the vehicle frame origin (the sprocket axis), m.
    speed : float
        Initial forward speed, m/s (rolling start).
    drop : float
        Initial gap between the lowest pad and the ground, m (settling, han-sander-mao §3.4).
    record : tuple of str, optional
        Glob patterns of recorded series (default: all).
    options : dict
        Extra integrator options; ``contact.*`` options of the fidelity;
        ``terrain.*`` options of the ground (applied to ``terrain`` here, not
        passed on): ``terrain.ground`` (``"rigid"``, default, or
        ``"winkler"``: every part of the terrain made of the Winkler soil of
        :mod:`trackdyn.terrain.ground`), ``terrain.soil``,
        ``terrain.stiffness`` (N/m³), ``terrain.damping`` (N s/m³),
        ``terrain.friction``; ``terrain.road`` (a road of
        :mod:`trackdyn.terrain.roads`: bump, trough, sinusoid, iso8608)
        starting at ``terrain.road_x`` (m, default ``start_x`` + 5) with
        ``terrain.road_params`` (a table of its sizes). docs/terrain.md.
    """

    vehicle: Any = "m113"
    terrain: Any = None
    driver: Any = None
    t_end: float = 10.0
    fidelity: str = "links"
    step: float | None = None
    output_step: float = 0.01
    integrator: str | None = None
    solver: str = "direct"
    start_x: float = 0.0
    speed: float = 0.0
    drop: float = 0.005
    record: tuple | None = None
    name: str = "scenario"
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        set_ = object.__setattr__
        if not isinstance(self.fidelity, str) or self.fidelity not in formulation_names():
            raise ValueError(f"scenario.fidelity = {self.fidelity!r}: choose one of {formulation_names()}")
        if not isinstance(self.options, dict):
            raise ValueError(f"scenario.options = {self.options!r}: expected a table")
        defaulted = tuple(f for f in _FIDELITY_DEFAULTS if getattr(self, f) is None)
        if defaulted:
            integrator, step = get_formulation(self.fidelity).defaults(self.options)
            if self.step is None:
                set_(self, "step", step)
            if self.integrator is None:
                set_(self, "integrator", integrator)
        set_(self, "_defaulted", defaulted)
        set_(self, "t_end", _num("t_end", self.t_end, positive=True))
        set_(self, "step", _num("step", self.step, positive=True))
        set_(self, "output_step", _num("output_step", self.output_step, positive=True))
        set_(self, "start_x", _num("start_x", self.start_x))
        set_(self, "speed", _num("speed", self.speed))
        set_(self, "drop", _num("drop", self.drop, nonneg=True))
        ratio = self.output_step / self.step
        if ratio < 1 - 1e-9 or abs(ratio - round(ratio)) > 1e-6 * ratio:
            raise ValueError(f"scenario.output_step = {self.output_step}: must be a multiple of step = {self.step}")
        if self.record is not None:
            rec = (self.record,) if isinstance(self.record, str) else self.record
            if not isinstance(rec, (list, tuple)) or not all(isinstance(r, str) for r in rec):
                raise ValueError(f"scenario.record = {self.record!r}: expected glob patterns (strings)")
            set_(self, "record", tuple(rec))
        for name in ("integrator", "solver", "name"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"scenario.{name} = {getattr(self, name)!r}: expected a string")
        if self.driver is None:
            set_(self, "driver", _default_driver())
        elif not isinstance(self.driver, Driver):
            raise ValueError(f"scenario.driver = {self.driver!r}: expected a driver (td.drivers.*)")
        if self.terrain is not None:
            try:
                set_(self, "terrain", as_terrain(self.terrain))
            except (TypeError, ValueError):
                raise ValueError(f"scenario.terrain = {self.terrain!r}: expected a terrain (td.terrain.*)") from None
        terrain_options = {k: v for k, v in self.options.items() if isinstance(k, str) and k.startswith("terrain.")}
        if terrain_options:  # the ground model and road of the run: applied to the terrain, not a fidelity's
            set_(self, "terrain", _terrain_with_options(self.terrain, terrain_options, self.start_x))
            set_(self, "options", {k: v for k, v in self.options.items() if k not in terrain_options})
        if not isinstance(self.vehicle, str) and not hasattr(self.vehicle, "model_dump"):
            raise ValueError(f"scenario.vehicle = {self.vehicle!r}: expected a VehicleSpec or a vehicle name")

    def replace(self, **changes) -> "Scenario":
        """A new scenario with ``changes``; a step or integrator left to the fidelity's default follows the
        (possibly new) fidelity unless given."""
        for f in getattr(self, "_defaulted", ()):
            changes.setdefault(f, None)
        return dataclasses.replace(self, **changes)

    def vehicle_spec(self):
        return get(self.vehicle) if isinstance(self.vehicle, str) else self.vehicle

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["vehicle"] = self.vehicle if isinstance(self.vehicle, str) else self.vehicle.name
        d["terrain"] = _describe(self.terrain)
        d["driver"] = _describe(self.driver)
        d["record"] = list(self.record) if self.record is not None else None
        return d


#: the terrain options of ``scenario.options`` (``--set terrain.ground=winkler``), docs/terrain.md
TERRAIN_OPTIONS = ("ground", "soil", "stiffness", "damping", "friction", "road", "road_x", "road_params")
#: where a road of ``terrain.road`` starts unless ``terrain.road_x`` says: this far ahead of the vehicle
#: frame origin (m; the sprocket axis of the M113, in front)
ROAD_LEAD = 5.0


def _terrain_with_options(terrain, opts: dict, start_x: float):
    """The scenario's terrain with its ``terrain.*`` options applied: a road profile added
    (``terrain.road``, ``terrain.road_x``, ``terrain.road_params``), then the ground model
    (``terrain.ground`` rigid or winkler; ``terrain.soil``, ``terrain.stiffness``, ``terrain.damping``,
    ``terrain.friction`` of the Winkler soil)."""
    from ..terrain import Flat
    from ..terrain.ground import DEFAULT_SOIL, GROUNDS, ground_material, with_ground
    from ..terrain.roads import road

    given = {k[len("terrain."):]: v for k, v in opts.items()}
    unknown = sorted(set(given) - set(TERRAIN_OPTIONS))
    if unknown:
        raise ValueError(f"scenario.options {['terrain.' + k for k in unknown]}: unknown terrain option(s); "
                         f"choose from {['terrain.' + k for k in TERRAIN_OPTIONS]}")
    ground = given.get("ground", "rigid")
    if ground not in GROUNDS:
        raise ValueError(f"scenario.options['terrain.ground'] = {ground!r}: choose one of {list(GROUNDS)}")
    soil_keys = [k for k in ("soil", "stiffness", "damping", "friction") if k in given]
    if soil_keys and ground != "winkler":
        raise ValueError(f"scenario.options {['terrain.' + k for k in soil_keys]}: options of the Winkler soil; "
                         "set terrain.ground = 'winkler' too")
    t = terrain
    if "road" in given:
        name = given["road"]
        x = _num("options['terrain.road_x']", given.get("road_x", start_x + ROAD_LEAD))
        params = given.get("road_params", {})
        if not isinstance(params, dict):
            raise ValueError(f"scenario.options['terrain.road_params'] = {params!r}: expected a table of the "
                             "road's parameters")
        piece = road(name, x=x, **params)
        t = (Flat() if t is None else t) + piece
    elif "road_x" in given or "road_params" in given:
        raise ValueError("scenario.options terrain.road_x / terrain.road_params: give terrain.road (the road's name)")
    if ground == "winkler":
        mat = ground_material(given.get("soil", DEFAULT_SOIL), given.get("stiffness"), given.get("damping"),
                              given.get("friction"), where="scenario.options terrain")
        t = with_ground(t, "winkler", mat)
    return t


def _default_driver():
    return Brake()


def _describe(obj):
    if obj is None:
        return None
    if hasattr(obj, "height") and hasattr(obj, "profile"):
        return describe(obj)
    if hasattr(obj, "to_dict"):
        try:
            return obj.to_dict()
        except Exception:  # a description is best effort; the object's repr always works
            pass
    return {"type": type(obj).__name__, "repr": repr(obj)}


# ---------------------------------------------------------------- scenario files
_DRIVERS = {"full-throttle": "FullThrottle", "pid": "PID", "brake": "Brake", "idle": "Idle",
            "scripted": "Scripted", "sprocket-speed": "SprocketSpeed", "side-speed": "SideSpeed"}


def _terrain_from(table, where="terrain"):
    return as_terrain(build(table, f"scenario.{where}"))


def _driver_from(table):
    if not isinstance(table, dict) or "type" not in table:
        raise ValueError("scenario.driver: expected a table with a 'type' key")
    kind = str(table["type"])
    if kind not in _DRIVERS:
        raise ValueError(f"scenario.driver.type = {kind!r}: choose one of {sorted(_DRIVERS)}")
    params = {k: v for k, v in table.items() if k != "type"}
    cls = getattr(D, _DRIVERS[kind])
    try:
        if kind == "sprocket-speed" and "ramp" in params:
            t0, t1, w = params.pop("ramp")
            return D.SprocketSpeed.ramp(float(t0), float(t1), float(w))
        drv = cls(**params)
    except (TypeError, ValueError, ArithmeticError) as err:
        raise ValueError(f"scenario.driver: {err}") from None
    for k, v in params.items():
        if isinstance(v, bool) or (not isinstance(v, (int, float, str)) and v is not None and kind != "scripted"):
            raise ValueError(f"scenario.driver.{k} = {v!r}: expected a number")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"scenario.driver.{k} = {v!r}: must be finite")
    return drv


def scenario_from_dict(data: dict) -> "Scenario":
    """A Scenario from a plain mapping (a parsed scenario file); errors name the field."""
    if not isinstance(data, dict):
        raise ValueError("scenario: the top level must be a table")
    sc = data.get("scenario", {})
    if not isinstance(sc, dict):
        raise ValueError(f"scenario.scenario = {sc!r}: expected a table")
    d = dict(sc)
    unknown = set(data) - {"scenario", "terrain", "driver", "vehicle"}
    if unknown:
        raise ValueError(f"scenario: unknown table(s) {sorted(unknown)}")
    if "vehicle" in data:
        veh = data["vehicle"]
        if isinstance(veh, dict):
            d["vehicle"] = validate_spec(veh, source="scenario.vehicle")
        elif isinstance(veh, str):
            d["vehicle"] = veh
        else:
            raise ValueError(f"scenario.vehicle = {veh!r}: expected a vehicle name or a spec table")
    if "terrain" in data:
        d["terrain"] = _terrain_from(data["terrain"])
    if "driver" in data:
        d["driver"] = _driver_from(data["driver"])
    fields = {f.name for f in dataclasses.fields(Scenario)}
    bad = set(d) - fields
    if bad:
        raise ValueError(f"scenario: unknown field(s) {sorted(bad)}; known: {sorted(fields)}")
    return Scenario(**d)


def load_scenario(path) -> "Scenario":
    """Load a TOML scenario file: ``[scenario]`` (t_end, step, ...), ``[terrain]``, ``[driver]``, ``vehicle``."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{p}: cannot read the scenario: {err}") from None
    return scenario_from_dict(data)
