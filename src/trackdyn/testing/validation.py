"""Validation cases: closed-form checks of the multibody core.

Each case is a function returning a :class:`CaseResult` (JSON-ready dict with
``case``, ``errors`` (measured), ``tolerances``, ``passed``). They are run by
the test suite and by ``trackdyn validate [CASE] --json``. Register new cases
with :func:`case`.

Two lines per figure. The *tolerance* is the physical pass/fail line of the
case (``passed``). The *documented figure* (:class:`Reference`, registered
with the case and listed in docs/validation.md) is what the case measured
when it was documented; the tests hold every measured figure within
``factor`` (10) of it in both directions, so a 100× regression fails even
where the tolerance is far above the measured error, and so does a figure that
collapses towards zero (a check that has become the code compared with
itself). ``run_case`` adds the comparison under ``"documented"`` when it runs
a case at the settings of one of its references.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.special import ellipk

from ..sim.simulation import Simulation
from . import problems as P

__all__ = ["CASES", "REFERENCES", "Reference", "case", "run_case", "run_all", "figure", "documented_comparison",
           "reference_table"]

CASES: dict[str, Callable[[], dict]] = {}


@dataclass(frozen=True)
class Reference:
    """The documented figures of a validation case at given settings (docs/validation.md).

    Parameters
    ----------
    figures : dict
        ``{figure: documented value}``. A figure is a key of the result's
        ``errors``, else a ``/``-separated path into the result (list items by
        index), e.g. ``"energy_loss_rel"``, ``"measured/rk4/max_angle_error_rad/2"``.
    factor : float
        A measured figure ``m`` is within its documented value ``d`` when
        ``d / factor <= m <= d * factor``; a documented 0 must be measured 0.
    settings : dict
        Keyword arguments of the case for these figures; ``{}`` is the
        defaults (what ``trackdyn validate`` runs).
    form : str
        ``"full"`` (the defaults) or a name for reduced settings (``"short"``).
    upper_only : tuple of str
        Figures at round-off level, held from above only (their size below
        the documented value is noise, not a change of the method).
    """

    figures: dict
    factor: float = 10.0
    settings: dict = field(default_factory=dict)
    form: str = "full"
    upper_only: tuple = ()

    def __post_init__(self):
        if not self.factor > 1:
            raise ValueError(f"Reference: factor = {self.factor!r} must exceed 1")
        bad = [k for k in self.upper_only if k not in self.figures]
        if bad:
            raise ValueError(f"Reference: upper_only names figures {bad} that are not documented")


#: ``{case: {form: Reference}}``: the documented figures of each case
REFERENCES: dict[str, dict[str, Reference]] = {}


def case(name, *references: Reference):
    """Register a validation case under ``name`` with its documented figures (one :class:`Reference` per form)."""
    def deco(fn):
        CASES[name] = fn
        fn.case_name = name
        forms = REFERENCES.setdefault(name, {})
        for ref in references:
            if ref.form in forms:
                raise ValueError(f"validation case {name!r}: two references of form {ref.form!r}")
            forms[ref.form] = ref
        return fn

    return deco


def figure(result: dict, path: str) -> float:
    """The figure ``path`` of a case result: a key of ``errors``, else a ``/``-separated path into the result."""
    if path in result["errors"]:
        return float(result["errors"][path])
    node = result
    for part in path.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return float(node)


def documented_comparison(result: dict, reference: Reference) -> dict:
    """Each documented figure of ``reference`` against the measured one of ``result``.

    Returns ``{"form", "factor", "figures": {figure: {"measured", "documented", "ratio",
    "within"}}, "within": bool}`` (``ratio`` = measured / documented; ``None`` for a
    documented 0).
    """
    rows = {}
    for path, doc in reference.figures.items():
        m = figure(result, path)
        doc = float(doc)
        if doc == 0.0:
            ok, ratio = m == 0.0, None
        else:
            ratio = m / doc
            low = 0.0 if path in reference.upper_only else 1.0 / reference.factor
            ok = bool(math.isfinite(ratio) and low <= ratio <= reference.factor)
        rows[path] = {"measured": m, "documented": doc, "ratio": ratio, "within": bool(ok)}
    return {"form": reference.form, "factor": reference.factor, "figures": rows,
            "within": all(r["within"] for r in rows.values())}


def _result(name, errors: dict, tolerances: dict, **extra):
    passed = all(bool(errors[k] <= tolerances[k]) for k in tolerances)
    return {"case": name, "errors": {k: float(v) for k, v in errors.items()},
            "tolerances": {k: float(v) for k, v in tolerances.items()}, "passed": passed, **extra}


def _period_from_crossings(t, x):
    """Mean period from upward zero crossings (linear interpolation)."""
    s = np.sign(x)
    idx = np.nonzero((s[:-1] < 0) & (s[1:] >= 0))[0]
    tc = t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])
    if len(tc) < 2:
        raise RuntimeError("fewer than two zero crossings: the run is too short")
    return float(np.mean(np.diff(tc)))


def _pendulum_angle(res):
    return np.arctan2(res["bob.pos.x"], -res["bob.pos.z"])


@case("pendulum-small", Reference({"point_period_rel": 2.7e-5, "compound_period_rel": 2.7e-5}))
def pendulum_small(step=1e-3):
    """Small-amplitude period vs 2π√(I_O/(m g L)) for a point and a compound pendulum."""
    L, g = 1.0, 9.81
    errs = {}
    measured = {}
    for label, k in (("point", 0.0), ("compound", L / np.sqrt(3.0))):
        m = P.pendulum(length=L, theta0=0.02, radius_of_gyration=k)
        sim = Simulation(m, step=step, output_step=step, record=["bob.pos.*"])
        T_exact = 2 * np.pi * np.sqrt((L**2 + k**2) / (g * L))
        res = sim.run(4.2 * T_exact)
        T = _period_from_crossings(res.t, _pendulum_angle(res))
        errs[f"{label}_period_rel"] = abs(T / T_exact - 1)
        measured[f"{label}_period_s"] = T
        measured[f"{label}_period_exact_s"] = T_exact
    return _result("pendulum-small", errs, {k: 1e-3 for k in errs}, step_size_s=step, measured=measured)


@case("pendulum-large", Reference({"period_rel": 7.9e-4, "tension_rel": 7.7e-4}))
def pendulum_large(step=1e-4):
    """Released horizontally: period vs 4√(L/g) K(sin²(θ0/2)); rod tension 3mg at the bottom."""
    L, g, mass = 1.0, 9.81, 1.0
    theta0 = np.pi / 2
    m = P.pendulum(length=L, mass=mass, theta0=theta0)
    T_exact = 4 * np.sqrt(L / g) * ellipk(np.sin(theta0 / 2) ** 2)
    sim = Simulation(m, step=step, output_step=step, record=["bob.pos.*", "pin.force.*"])
    res = sim.run(2.2 * T_exact)
    th = _pendulum_angle(res)
    # the angle is odd around the swing: period from downward-then-upward crossings of θ
    T = _period_from_crossings(res.t, -th)
    k0 = int(np.argmax(np.abs(np.diff(np.sign(th))) > 0))  # first pass through the bottom
    Fz = res["pin.force.z"]
    Fx = res["pin.force.x"]
    tension = np.hypot(Fx[k0:k0 + 2], Fz[k0:k0 + 2]).mean()
    errs = {"period_rel": abs(T / T_exact - 1), "tension_rel": abs(tension / (3 * mass * g) - 1)}
    return _result("pendulum-large", errs, {"period_rel": 5e-3, "tension_rel": 1e-2}, step_size_s=step,
                   measured={"period_s": T, "period_exact_s": float(T_exact), "tension_N": float(tension),
                             "tension_exact_N": 3 * mass * g})


@case("slider-crank", Reference({"position_m": 6.6e-11, "velocity_mps": 6.6e-6}))
def slider_crank(step=1e-5, speed=np.pi, t_end=2.0):
    """Driven crank: slider position and velocity vs the closed form over 2 s."""
    m = P.slider_crank(speed=speed)
    sim = Simulation(m, step=step, output_step=1e-3, record=["slider.pos.x", "slider.vel.x"])
    res = sim.run(t_end)
    x, xd = P.slider_crank_exact(res.t, speed=speed)
    errs = {"position_m": np.max(np.abs(res["slider.pos.x"] - x)),
            "velocity_mps": np.max(np.abs(res["slider.vel.x"] - xd))}
    return _result("slider-crank", errs, {"position_m": 1e-6, "velocity_mps": 1e-5}, step_size_s=step,
                   crank_speed_rad_s=speed)


@case("torque-free", Reference({"energy_drift_rel": 2.3e-4, "momentum_drift_rel": 1.2e-4, "no_flip": 0.0}))
def torque_free(step=1e-4, t_end=10.0):
    """Free body near its intermediate axis: flip within 10 s; energy and |L| drift."""
    m = P.torque_free_body()
    sim = Simulation(m, step=step, output_step=1e-2, record=["body.omega.*", "body.quat.*"])
    s = sim.system
    E0 = s.kinetic_energy(sim.state.v)
    L0 = np.linalg.norm(s.angular_momentum(sim.state.q, sim.state.v))
    res = sim.run(t_end)
    wy = res["body.omega.y"]
    flipped = bool(np.any(wy < 0))
    q = np.column_stack([res[f"body.quat.e{k}"] for k in range(4)])
    w = np.column_stack([res[f"body.omega.{c}"] for c in "xyz"])
    E = np.array([s.kinetic_energy(np.concatenate([np.zeros((1, 3)), w[i:i + 1]], 1)) for i in range(len(w))])
    Ls = []
    for i in range(len(w)):
        qq = np.zeros((1, 7))
        qq[0, 3:] = q[i]
        Ls.append(np.linalg.norm(s.angular_momentum(qq, np.concatenate([np.zeros((1, 3)), w[i:i + 1]], 1))))
    Ls = np.array(Ls)
    errs = {"energy_drift_rel": np.max(np.abs(E / E0 - 1)), "momentum_drift_rel": np.max(np.abs(Ls / L0 - 1)),
            "no_flip": 0.0 if flipped else 1.0}
    tol = {"energy_drift_rel": 1e-2, "momentum_drift_rel": 1e-2, "no_flip": 0.5}
    t_flip = float(res.t[np.argmax(wy < 0)]) if flipped else None
    return _result("torque-free", errs, tol, step_size_s=step, first_flip_s=t_flip)


@case("four-bar", Reference({"rocker_angle_rad": 7.9e-9}))
def four_bar(step=1e-4, t_end=2 * np.pi):
    """Planar four-bar of 3-D revolutes (redundant rows removed): rocker angle vs closed form."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, _ = P.four_bar()
        sim = Simulation(m, step=step, output_step=1e-2, record=["rocker.quat.*"])
    res = sim.run(t_end)
    e0, e2 = res["rocker.quat.e0"], res["rocker.quat.e2"]
    # rotation about y by -θ4: q = (cos(θ4/2), 0, -sin(θ4/2), 0)
    th4 = -2 * np.arctan2(e2, e0)
    th2 = np.pi / 3 + 1.0 * res.t
    exact = P.four_bar_output_angle(th2)
    err = np.max(np.abs(np.angle(np.exp(1j * (th4 - exact)))))
    return _result("four-bar", {"rocker_angle_rad": err}, {"rocker_angle_rad": 1e-4}, step_size_s=step,
                   removed_rows=dict(sim.system.removed_rows))


@case("chain64", Reference({"pin_separation_m": 9.4e-6, "energy_growth_rel": 0.0,
                                "energy_loss_rel": 2.1e-3}))
def chain64(step=1e-4, t_end=2.0, **options):
    """64-link chain released horizontally: largest pin separation and energy growth.

    ``options`` go to the integrator (``constraint_stiffness=False``: the Newton matrix without the joints'
    geometric stiffness, the thesis's eq. 2.13 as printed; docs/validation.md's note, ``python docs/figures.py
    chain64-no-geometric-stiffness``).
    """
    m = P.chain(**P.CHAIN64)
    sim = Simulation(m, step=step, output_step=1e-2, record=["link*.pos.*", "link*.quat.*", "link*.vel.*",
                                                             "link*.omega.*"], **options)
    s = sim.system
    cd = np.nonzero(s.row_type == 3)[0].reshape(-1, 3)  # the 3 CD rows of each pin
    worst = [0.0]

    def watch(simu):
        sep = np.sqrt(np.sum(s.phi[cd] ** 2, axis=1)).max()
        if sep > worst[0]:
            worst[0] = sep

    E0 = s.kinetic_energy(sim.state.v) + s.potential_energy(sim.state.q)
    t0 = time.perf_counter()
    res = sim.run(t_end, callback=watch)
    wall = time.perf_counter() - t0
    # the last state's separation
    s.update_kinematics(sim.state.q, sim.state.v)
    s.eval_constraints()
    watch(sim)
    n = P.CHAIN64["n_links"]
    E = []
    for i in range(len(res.t)):
        q = np.column_stack([res[f"link[{k}].pos.{c}"][i] for k in range(n) for c in "xyz"]).reshape(n, 3)
        qq = np.column_stack([q, np.array([[res[f"link[{k}].quat.e{c}"][i] for c in range(4)] for k in range(n)])])
        vv = np.array([[res[f"link[{k}].vel.{c}"][i] for c in "xyz"] + [res[f"link[{k}].omega.{c}"][i] for c in "xyz"]
                       for k in range(n)])
        E.append(s.kinetic_energy(vv) + s.potential_energy(qq))
    E = np.array(E)
    scale = n * P.CHAIN64["mass"] * 9.81 * n * P.CHAIN64["pitch"]
    growth = max(0.0, float(np.max(E - E0))) / scale
    errs = {"pin_separation_m": worst[0], "energy_growth_rel": growth}
    return _result("chain64", errs, {"pin_separation_m": 1e-4, "energy_growth_rel": 1e-6}, step_size_s=step,
                   energy_loss_rel=float((E0 - E[-1]) / scale),
                   energy_swing_rel=float(np.max(np.abs(E - E0)) / scale), wall_time_s=wall)


def _fmt(v) -> str:
    """A documented value as docs/validation.md prints it: two significant digits, short exponent."""
    v = float(v)
    text = f"{v:.1e}" if v != 0 and abs(v) < 0.01 else f"{v:.2g}"
    if "e" in text:
        mant, exp = text.split("e")
        text = f"{mant}e{int(exp)}"
    return text


def reference_table() -> str:
    """The markdown table of every registered documented figure (docs/validation.md carries it verbatim)."""
    lines = ["| case | form (settings) | figure | documented | held within |", "|---|---|---|---|---|"]
    for name in CASES:
        for ref in REFERENCES.get(name, {}).values():
            form = ref.form if not ref.settings else (
                f"{ref.form} ({', '.join(f'{k}={v}' for k, v in ref.settings.items())})")
            for path, doc in ref.figures.items():
                if doc == 0:
                    held = "exactly 0"
                elif path in ref.upper_only:
                    held = f"≤ {_fmt(doc * ref.factor)} (round-off: from above only)"
                else:
                    held = f"{_fmt(doc / ref.factor)} – {_fmt(doc * ref.factor)}"
                lines.append(f"| `{name}` | {form} | `{path}` | {_fmt(doc)} | {held} |")
    return "\n".join(lines) + "\n"


def _same_settings(a: dict, b: dict) -> bool:
    def norm(v):
        return [norm(x) for x in v] if isinstance(v, (list, tuple)) else v

    return set(a) == set(b) and all(norm(a[k]) == norm(b[k]) for k in a)


def run_case(name: str, **kwargs) -> dict:
    """Run case ``name`` with ``kwargs``; at the settings of one of its references the result also
    carries ``"documented"`` (:func:`documented_comparison`; ``passed`` is the tolerances' verdict alone)."""
    try:
        fn = CASES[name]
    except KeyError:
        raise ValueError(f"unknown validation case {name!r}; choose one of {sorted(CASES)}") from None
    t0 = time.perf_counter()
    out = fn(**kwargs)
    out["wall_time_s"] = out.get("wall_time_s", time.perf_counter() - t0)
    ref = next((r for r in REFERENCES.get(name, {}).values() if _same_settings(r.settings, kwargs)), None)
    if ref is not None:
        out["documented"] = documented_comparison(out, ref)
    return out


def run_all() -> list[dict]:
    return [run_case(n) for n in CASES]


from . import validation_integrators  # noqa: E402,F401  (registers the integrator cases)
from . import validation_contact  # noqa: E402,F401  (registers the contact cases)
