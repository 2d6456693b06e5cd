"""Convergence studies: one scenario over step sizes × integrators × solvers (thesis §4.1, Figs. 4.1-4.2).

For every combination (integrator, solver) the scenario runs at every step
size; one series (e.g. a road wheel's ``pos.z``) is recorded on a common
output grid, and each run's deviation from the *finest* run of its own
combination is measured (max and RMS over the grid). The thesis picks its
stepper, solver and step by looking at these curves: a combination whose
curves collapse as the step shrinks has converged.

Scenarios are looked up by name in :data:`SCENARIOS`; register more with
:func:`register_scenario`. A scenario's ``build`` returns a
:class:`~trackdyn.mbs.model.Model`, or ``(model, providers)`` when force
providers (contact) take part, or — a *vehicle scenario* — a
:class:`~trackdyn.spec.scenario.Scenario`: every run is then that scenario
with the run's step, integrator, solver and options, built by its fidelity
(:func:`trackdyn.sim.run.prepare`) and started as a vehicle run (rolling
start, contact, powertrain, driver). A vehicle scenario's ``build`` takes
the vehicle (``build(vehicle="m113-alternative")``; ``trackdyn study
convergence m113-half-round --vehicle NAME``).

The thesis's §4.1 study: ``m113-half-round`` — the M113 over a 12 in
(0.3048 m) half-round at 4.2 m/s, a PID driver holding speed and heading;
the series is the front left road wheel's height (Figs. 4.3-4.6), the
combinations the Linearized and Projected Euler steppers with the PSOR and
Barzilai-Borwein solvers.

Example
-------
>>> from trackdyn.experiments import convergence_study, get_scenario
>>> sc = get_scenario("pendulum")
>>> study = convergence_study(sc.build, steps=[4e-3, 2e-3, 1e-3], integrators=["hht"],
...                           t_end=0.5, series=sc.series)
>>> bool(study.table["max_dev"].iloc[0] > study.table["max_dev"].iloc[1])
True
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..integrators import INTEGRATORS
from ..linsolve import SOLVERS
from ..sim.run import prepare
from ..sim.simulation import Simulation
from ..testing import problems as P
from ..testing.validation_integrators import double_pendulum, free_slider_crank

__all__ = ["StudyScenario", "SCENARIOS", "register_scenario", "get_scenario", "convergence_study",
           "ConvergenceStudy"]


@dataclass(frozen=True)
class StudyScenario:
    """A named problem for convergence studies.

    Attributes
    ----------
    name : str
        Lookup name (``trackdyn study convergence NAME``).
    build : callable
        ``build() -> Model`` or ``(Model, providers)``; called once per run.
    series : str
        Default recorded series (a dotted name such as ``link[63].pos.z``).
    t_end : float
        Default simulated time, s.
    steps : tuple of float
        Default step sizes, s (a multiple of each other is convenient).
    integrators, solvers : tuple of str
        Default combinations.
    description : str
        One line for listings.
    vehicle : str, optional
        Set for a vehicle scenario: its default vehicle (``build(vehicle=...)`` returns a
        :class:`~trackdyn.spec.scenario.Scenario`).
    """

    name: str
    build: Callable
    series: str
    t_end: float
    steps: tuple = (1e-3, 5e-4, 2.5e-4)
    integrators: tuple = ("euler-implicit-linearized", "euler-implicit-projected")
    solvers: tuple = ("direct",)
    description: str = ""
    vehicle: str | None = None


SCENARIOS: dict[str, StudyScenario] = {}


def register_scenario(scenario: StudyScenario) -> StudyScenario:
    """Add a scenario to :data:`SCENARIOS` (replacing one of the same name)."""
    if not isinstance(scenario, StudyScenario):
        raise TypeError(f"register_scenario expects a StudyScenario, got {type(scenario).__name__}")
    SCENARIOS[scenario.name] = scenario
    return scenario


def get_scenario(name: str) -> StudyScenario:
    """The registered scenario ``name``; ``ValueError`` listing the choices otherwise."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; choose one of {sorted(SCENARIOS)}") from None


# --------------------------------------------------------------------------- built-in reference problems
def _pendulum():
    return P.pendulum(theta0=1.0)


def _double_pendulum():
    return double_pendulum()


def _slider_crank():
    return P.slider_crank(speed=np.pi)


def _free_slider_crank():
    return free_slider_crank()


def _chain64():
    return P.chain(**P.CHAIN64)


_ALL = ("euler-implicit-linearized", "euler-implicit", "euler-implicit-projected", "hht", "rk4", "ab3")
register_scenario(StudyScenario("pendulum", _pendulum, "bob.pos.x", 2.0, (4e-3, 2e-3, 1e-3, 5e-4), _ALL,
                                description="1 m pendulum released at 1 rad"))
register_scenario(StudyScenario("double-pendulum", _double_pendulum, "lower.pos.z", 2.0,
                                (2e-3, 1e-3, 5e-4, 2.5e-4), _ALL,
                                description="two 1 m rods, released horizontal (chaotic)"))
register_scenario(StudyScenario("slider-crank", _slider_crank, "slider.vel.x", 2.0, (1e-3, 5e-4, 2.5e-4),
                                _ALL, description="crank driven at π rad/s (0 dof)"))
register_scenario(StudyScenario("slider-crank-free", _free_slider_crank, "slider.pos.x", 2.0,
                                (2e-3, 1e-3, 5e-4, 2.5e-4), _ALL,
                                description="undriven slider-crank with a spring on the slider (1 dof)"))
register_scenario(StudyScenario("chain64", _chain64, "link[63].pos.z", 2.0, (1e-3, 5e-4, 2.5e-4),
                                ("euler-implicit-linearized", "euler-implicit-projected"),
                                description="64 thesis track shoes on pins released horizontal"))


# --------------------------------------------------------------------------- vehicle scenarios
INCH = 0.0254
#: korner-2024 §4.1: "driving over a 12 inch (30.48 cm) half round obstacle at around 4.2 m/s"
HALF_ROUND_STUDY = {"height_in": 12.0, "speed": 4.2, "lead": 1.0, "clear": 0.5}


def m113_half_round(vehicle: str = "m113", height_in: float = HALF_ROUND_STUDY["height_in"],
                    speed: float = HALF_ROUND_STUDY["speed"], lead: float = HALF_ROUND_STUDY["lead"],
                    clear: float = HALF_ROUND_STUDY["clear"], t_end: float | None = None):
    """The §4.1 convergence scenario: ``vehicle`` over a ``height_in`` half-round at ``speed`` m/s.

    The vehicle starts rolling at ``speed`` (PID holding speed and heading,
    as the thesis) with its front ``lead`` m before the obstacle; the
    default ``t_end`` lasts until its rear is ``clear`` m past it.
    Returns a :class:`~trackdyn.spec.scenario.Scenario` (step, integrator and
    solver are set per run by :func:`convergence_study`).
    """
    from .. import terrain as T
    from ..assembly.extent import vehicle_extent
    from ..driver import PID
    from ..spec import get as get_spec
    from ..spec.scenario import Scenario

    spec = get_spec(vehicle) if isinstance(vehicle, str) else vehicle
    ext = vehicle_extent(spec)
    H = float(height_in) * INCH
    x_obs = ext.front_x + float(lead)  # the vehicle frame starts at x = 0
    if t_end is None:
        t_end = (float(lead) + 2 * H + ext.length + float(clear)) / float(speed)
    return Scenario(vehicle=spec, terrain=T.Flat() + T.HalfRound(H, x=x_obs), driver=PID(speed=float(speed), y=0.0),
                    t_end=float(t_end), start_x=0.0, speed=float(speed),
                    name=f"{spec.name} over a {float(height_in):g} in half-round at {float(speed):g} m/s")


# The thesis's solvers, PSOR and Barzilai-Borwein, are dual (Schur complement) methods: they need a positive
# definite H, and the vehicle's is not (the first step stops: "H is not positive definite", the sprocket's
# 6x6 block with its contact and drive terms); they can be asked for (--solvers psor,bb) and are then
# reported as diverged with that reason. The default pairs the thesis's two steppers with the direct solver.
register_scenario(StudyScenario(
    "m113-half-round", m113_half_round, "left.roadwheel[0].pos.z", 2.5, (5e-4, 2.5e-4, 1e-4, 5e-5),
    ("euler-implicit-linearized", "euler-implicit-projected"), ("direct",),
    description="korner-2024 §4.1: M113 over a 12 in half-round at 4.2 m/s, front road wheel height "
                "(--vehicle m113-alternative for §4.1.2)", vehicle="m113"))


def _is_scenario(obj) -> bool:
    from ..spec.scenario import Scenario

    return isinstance(obj, Scenario)


# --------------------------------------------------------------------------- the study
def _check_names(kind, names, registry):
    out = []
    for n in names:
        if isinstance(n, str) and n not in registry:
            raise ValueError(f"convergence_study: unknown {kind} {n!r}; choose one of {sorted(registry)}")
        out.append(n)
    if not out:
        raise ValueError(f"convergence_study: give at least one {kind}")
    return out


def _common_output_step(steps, output_step):
    hmax = max(steps)
    out = hmax if output_step is None else float(output_step)
    if not (np.isfinite(out) and out > 0):
        raise ValueError(f"convergence_study: output_step must be positive, got {output_step!r}")
    for h in steps:
        ratio = out / h
        if ratio < 1 - 1e-9 or abs(ratio - round(ratio)) > 1e-6 * ratio:
            raise ValueError(f"convergence_study: output_step {out:g} s is not a multiple of step {h:g} s; "
                             "give an output_step that every step divides")
    return out


@dataclass
class ConvergenceStudy:
    """Result of :func:`convergence_study`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per run: ``integrator``, ``solver``, ``step_s``, ``status``,
        ``max_dev``, ``rms_dev`` (against the finest run of the same
        combination, on the common grid), ``reference_step_s``,
        ``wall_time_s``, ``wall_per_sim``, ``steps`` and the integrator's
        counters (``residual_evals``, ``factorizations``, ``iterations``,
        ``linear_iterations`` when iterative).
    runs : dict
        ``(integrator, solver, step) -> (t, y)`` recorded samples.
    series : str
    t_end, output_step : float
    """

    table: object
    runs: dict
    series: str
    t_end: float
    output_step: float
    scenario: str | None = None
    figures: list = field(default_factory=list)

    def combinations(self):
        seen = []
        for key in self.runs:
            if key[:2] not in seen:
                seen.append(key[:2])
        return seen

    def plot(self, path, formats=("png", "svg"), title=None) -> list[str]:
        """Draw Fig. 4.2 (one panel per combination, every step overlaid) plus a Fig. 4.1 panel
        (the finest run of every combination) and save ``path.<fmt>`` for each format."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        combos = self.combinations()
        n = len(combos) + (1 if len(combos) > 1 else 0)
        ncol = min(3, n)
        nrow = math.ceil(n / ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.2 * nrow), squeeze=False, sharex=True)
        steps = sorted({k[2] for k in self.runs}, reverse=True)
        cmap = plt.get_cmap("viridis")
        colour = {h: cmap(i / max(1, len(steps) - 1)) for i, h in enumerate(steps)}
        for ax, (integ, solver) in zip(axes.flat, combos):
            for h in steps:
                if (integ, solver, h) in self.runs:
                    t, y = self.runs[(integ, solver, h)]
                    ax.plot(t, y, lw=1.0, color=colour[h], label=f"h = {h:g} s")
            ax.set_title(f"{integ} + {solver}", fontsize=9)
            ax.grid(alpha=0.3)
        if len(combos) > 1:
            ax = axes.flat[len(combos)]
            for integ, solver in combos:
                hs = [k[2] for k in self.runs if k[:2] == (integ, solver)]
                t, y = self.runs[(integ, solver, min(hs))]
                ax.plot(t, y, lw=1.0, label=f"{integ} + {solver} ({min(hs):g} s)")
            ax.set_title("finest step of every combination", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
        for ax in axes.flat[n:]:
            ax.set_visible(False)
        axes.flat[0].legend(fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        for ax in axes[:, 0]:
            ax.set_ylabel(self.series)
        import textwrap

        text = title or f"Convergence: {self.series}" + (f" ({self.scenario})" if self.scenario else "")
        fig.suptitle("\n".join(textwrap.wrap(text, width=max(40, int(13 * 4.6 * ncol)))), fontsize=10)
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        written = []
        for fmt in formats:
            out = path.with_suffix(f".{fmt}")
            fig.savefig(out, dpi=110)
            written.append(str(out))
        plt.close(fig)
        self.figures.extend(written)
        return written

    def to_dict(self) -> dict:
        """JSON-ready summary (the table as a list of rows)."""
        rows = self.table.replace({np.nan: None}).to_dict(orient="records")
        return {"scenario": self.scenario, "series": self.series, "t_end": self.t_end,
                "output_step": self.output_step, "runs": rows, "figures": list(self.figures)}


def convergence_study(build, steps: Sequence[float], integrators: Sequence[str] = ("euler-implicit-linearized",),
                      solvers: Sequence[str] = ("direct",), t_end: float = 1.0, series: str | None = None,
                      output_step: float | None = None, options: dict | None = None,
                      integrator_options: dict | None = None, solver_options: dict | None = None,
                      scenario: str | None = None,
                      progress: Callable | None = None) -> ConvergenceStudy:
    """Run ``build`` over step sizes × integrators × solvers and measure convergence of one series.

    Parameters
    ----------
    build : callable
        ``build() -> Model`` or ``(Model, providers)``, or a vehicle
        :class:`~trackdyn.spec.scenario.Scenario`; called for every run.
    steps : sequence of float
        Step sizes, s.
    integrators, solvers : sequence of str
        Names from :data:`~trackdyn.integrators.INTEGRATORS` and
        :data:`~trackdyn.linsolve.SOLVERS`.
    t_end : float
        Simulated time of every run, s.
    series : str
        Recorded series to compare (required).
    output_step : float, optional
        Common sampling interval; default the largest step (every step must divide it).
    options : dict, optional
        Options passed to every run (integrator and solver options).
    integrator_options : dict, optional
        ``{integrator name: {option: value}}`` for options of one integrator only.
    solver_options : dict, optional
        ``{solver name: {option: value}}`` for options of one solver only (e.g.
        ``{"bb": {"max_iter": 200}}``, the thesis's Table 4.1 setting).
    scenario : str, optional
        Name stored in the result (for titles and JSON).
    progress : callable, optional
        ``progress(i, n, integrator, solver, step)`` before each run.

    Returns
    -------
    ConvergenceStudy
        ``.table`` (pandas) and ``.runs``; ``.plot(path)`` draws the figures.
    """
    import pandas as pd

    if series is None:
        raise ValueError("convergence_study: give the series to compare (e.g. 'link[63].pos.z')")
    try:
        steps = sorted({float(h) for h in steps}, reverse=True)
    except (TypeError, ValueError):
        raise ValueError(f"convergence_study: steps must be numbers, got {steps!r}") from None
    if not steps or any(not (np.isfinite(h) and h > 0) for h in steps):
        raise ValueError(f"convergence_study: steps must be positive numbers, got {steps!r}")
    t_end = float(t_end)
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"convergence_study: t_end must be positive, got {t_end!r}")
    integrators = _check_names("integrator", integrators, INTEGRATORS)
    solvers = _check_names("solver", solvers, SOLVERS)
    out_step = _common_output_step(steps, output_step)
    if t_end < out_step:
        raise ValueError(f"convergence_study: t_end {t_end:g} s is shorter than the output step {out_step:g} s")
    options = dict(options or {})
    per_integ = dict(integrator_options or {})
    per_solver = dict(solver_options or {})
    for kind, per, names in (("integrator", per_integ, integrators), ("solver", per_solver, solvers)):
        for key in per:
            if key not in names:
                raise ValueError(f"convergence_study: options given for {kind} {key!r}, which is not in the study "
                                 f"({', '.join(map(str, names))})")
    rows = []
    runs = {}
    n_total = len(integrators) * len(solvers) * len(steps)
    i = 0
    for integ in integrators:
        for solver in solvers:
            combo_rows = []
            for h in steps:
                if progress is not None:
                    progress(i, n_total, integ, solver, h)
                i += 1
                built = build()
                opts = {**options, **per_integ.get(integ, {}), **per_solver.get(solver, {})}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        if _is_scenario(built):
                            # a vehicle run: its fidelity builds it, with this run's numerics
                            sc = built.replace(step=h, integrator=integ, solver=solver, output_step=out_step,
                                               record=(series,), options={**built.options, **opts})
                            sim = prepare(sc).sim
                        else:
                            model, providers = (built if isinstance(built, tuple) else (built, ()))
                            sim = Simulation(model, integrator=integ, step=h, output_step=out_step, solver=solver,
                                             record=[series], providers=providers, **opts)
                    except TypeError as err:
                        raise ValueError(f"convergence_study: {integ} + {solver}: {err}") from None
                if series not in sim.recorder.columns:
                    raise ValueError(f"convergence_study: no series {series!r} in the model; e.g. "
                                     f"{sim.recorder.all_columns[:4]}")
                t0 = time.perf_counter()
                res = sim.run(t_end)
                wall = time.perf_counter() - t0
                runs[(integ, solver, h)] = (np.asarray(res.t), np.asarray(res[series]))
                row = {"integrator": integ, "solver": solver, "step_s": h, "status": res.status,
                       "wall_time_s": wall, "wall_per_sim": wall / sim.state.t if sim.state.t > 0 else float("nan"),
                       "steps": sim.steps}
                for k, v in sim.integrator.counters.items():
                    if k != "steps":
                        row[k] = v
                if res.status != "complete":
                    row["error"] = res.metadata.get("error")
                combo_rows.append(row)
            # deviations from the finest complete run of this combination
            h_ref = steps[-1]
            t_ref, y_ref = runs[(integ, solver, h_ref)]
            ref_ok = combo_rows[-1]["status"] == "complete"
            for row in combo_rows:
                t, y = runs[(integ, solver, row["step_s"])]
                row["reference_step_s"] = h_ref
                if not ref_ok or row["status"] != "complete" or len(t) != len(t_ref):
                    row["max_dev"] = row["rms_dev"] = float("nan")
                    continue
                d = y - y_ref
                row["max_dev"] = float(np.max(np.abs(d)))
                row["rms_dev"] = float(np.sqrt(np.mean(d * d)))
            rows.extend(combo_rows)
    table = pd.DataFrame(rows)
    first = ["integrator", "solver", "step_s", "status", "max_dev", "rms_dev", "reference_step_s", "wall_time_s",
             "wall_per_sim", "steps"]
    table = table[first + [c for c in table.columns if c not in first]]
    return ConvergenceStudy(table, runs, series, t_end, out_step, scenario)
