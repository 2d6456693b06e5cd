"""kim-2012's comparison of subsystem synthesis models on the 1/6 robot: Table 3 and Fig. 8.

:func:`robot_1_6` builds the paper's 1/6 unmanned robot vehicle (its Fig. 6,
Table 1) as a :class:`~trackdyn.mbs.model.Model`: a chassis on a translational
joint to the ground, a suspension housing (with its wheel) on a revolute to
the chassis with a rotational spring-damper, and a point tyre on a rough road
moving under it. :func:`synthesis_study` runs the paper's four models (Table 2)
and the step sweeps of Fig. 8.

Parameters and their sources
----------------------------
kim-2012 Table 1 (the only figures the paper gives):
    rotational spring 31.416 N m/°, rotational damper 10.47 N m s/° (read as
    per degree per second), tyre vertical stiffness 200 kN/m.
kim-2012 Table 3: the simulated time, 35 s (CPU 0.674 s at 1.92 % of the
    simulated time; 4.555 s at 13.02 %).
The paper's vehicle class, a 2-t 6×6 unmanned ground vehicle of the Korean
programmes (Hyundai Rotem's MUGV: 2 t, 2.7 × 1.7 × 0.9 m, 10 km/h off road;
Hanwha's Arion-SMET: 2 t, 6×6; public press data):
    one corner carries 2000/6 kg; it runs at 10 km/h.
Design choices (the paper gives no masses or geometry), each with its reason:
    unsprung mass 50 kg (a ~0.6 m tyre and rim, ~25 kg, and an in-arm housing
    with its reduction gear, ~25 kg), inertia diag(0.8, 1.4, 0.8) kg m² (a
    25 kg disc of radius 0.3 m plus the housing); wheel radius 0.3 m (the
    0.9 m overall height less a ~0.3 m hull); trailing arm 0.35 m at 20°
    below the pivot; tyre damping 2 ζ sqrt(k m_u) with ζ = 0.05 (the
    structural damping of a pneumatic tyre); road ISO 8608 class C (a rough
    track, "rough terrain run"), 24 bands of 0.05-2 cycles/m, seed 0, faded
    in over 2 m. The spring's free angle puts the corner in static
    equilibrium at the start (a derived value, not a choice).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..contact.tyre import TyreForces, iso8608_road
from ..formulations.absolute import AbsoluteSystem
from ..formulations.synthesis import Subsystem, SynthesisSystem
from ..mbs import RSDA, Model, Prismatic, Revolute

__all__ = ["MODELS", "PAPER", "Robot16", "rms_errors", "robot_1_6", "synthesis_study"]

DEG = 180.0 / np.pi
G = 9.81

#: kim-2012's Table 1 and Table 3 figures, and the stable-step limits of its Fig. 8 text
PAPER = {
    "spring_Nm_per_deg": 31.416, "damper_Nms_per_deg": 10.47, "tyre_N_per_m": 200e3, "t_end_s": 35.0,
    "step_s": 7e-4,
    "table3": {  # model -> (pos RMS, vel RMS, acc RMS, CPU s, CPU/sim %, ratio)
        "cartesian explicit": (1.85e-5, 1.18e-5, 1.51e-3, 4.555, 13.02, 6.76),
        "cartesian explicit-implicit": (2.63e-6, 2.94e-4, 2.28e-1, 5.945, 16.99, 8.83),
        "joint explicit": (None, None, None, 0.674, 1.92, 1.0),
        "joint explicit-implicit": (1.31e-5, 4.31e-4, 2.39e-1, 1.143, 5.54, 1.70),
    },
    "stable_step_s": {"explicit": 7e-4, "cartesian explicit-implicit": 2.1e-3, "joint explicit-implicit": 5.6e-3},
    "joint_ei_cpu_at_5.6ms_s": 0.156,
}

#: Fig. 8's steps as multiples of the base step (0.7 ms): the paper's range (to 7 ms) and on to 42 ms
SWEEP_MULTIPLES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 30, 40, 60)

#: Table 2's four models as (coordinates, scheme), in the paper's order
MODELS = (("cartesian", "explicit"), ("cartesian", "explicit-implicit"), ("joint", "explicit"),
          ("joint", "explicit-implicit"))


@dataclass
class Robot16:
    """The 1/6 robot: its model, tyre provider and the synthesis view of it."""

    model: Model
    tyre: TyreForces
    subsystem: Subsystem
    road: np.ndarray
    speed: float
    fade: float
    params: dict

    def synthesis(self) -> SynthesisSystem:
        return SynthesisSystem(self.model, "chassis", [self.subsystem], self.road, self.speed, self.fade,
                               base_joint="slide")

    def absolute(self) -> AbsoluteSystem:
        return AbsoluteSystem(self.model, providers=[self.tyre], remove_redundant=False)


def robot_1_6(unsprung_mass=50.0, unsprung_inertia=(0.8, 1.4, 0.8), corner_mass=2000.0 / 6.0, wheel_radius=0.3, arm_length=0.35, arm_angle_deg=20.0,
              tyre_stiffness=200e3, tyre_damping_ratio=0.05, road_class="C", speed=10.0 / 3.6, fade=2.0,
              seed=0) -> Robot16:
    """kim-2012's 1/6 robot (module docstring: every parameter and its source)."""
    m1 = float(unsprung_mass)
    m0 = float(corner_mass) - m1
    k_rot = PAPER["spring_Nm_per_deg"] * DEG  # N m/rad
    c_rot = PAPER["damper_Nms_per_deg"] * DEG  # N m s/rad
    c_t = 2.0 * tyre_damping_ratio * np.sqrt(tyre_stiffness * m1)
    R = float(wheel_radius)
    phi = np.radians(arm_angle_deg)
    delta0 = (m0 + m1) * G / tyre_stiffness  # static tyre deflection
    wheel = np.array([-arm_length * np.cos(phi), 0.0, R - delta0])
    pivot = wheel + np.array([arm_length * np.cos(phi), 0.0, arm_length * np.sin(phi)])
    chassis_com = pivot + np.array([0.0, 0.0, 0.25])
    # the spring's preload: the housing in moment balance about the pivot with the static tyre load
    arm_c = wheel - np.array([0.0, 0.0, R]) - pivot
    arm_w = wheel - pivot
    y = np.array([0.0, 1.0, 0.0])
    tau = -y @ (np.cross(arm_c, [0.0, 0.0, (m0 + m1) * G]) + np.cross(arm_w, [0.0, 0.0, -m1 * G]))
    free_angle = tau / k_rot
    m = Model()
    chassis = m.add_body("chassis", mass=m0, inertia=[m0 * (1.7 ** 2 + 0.6 ** 2) / 12, m0 * (0.9 ** 2 + 0.6 ** 2) / 12,
                                                      m0 * (0.9 ** 2 + 1.7 ** 2) / 12], pos=chassis_com)
    housing = m.add_body("housing", mass=m1, inertia=list(unsprung_inertia), pos=wheel)
    m.add_joint(Prismatic(m.ground, chassis, point=chassis_com, axis=[0, 0, 1], name="slide"))
    m.add_joint(Revolute(chassis, housing, point=pivot, axis=[0, 1, 0], name="pivot"))
    m.add_force(RSDA(chassis, housing, axis=[0, 1, 0], stiffness=k_rot, damping=c_rot, free_angle=free_angle,
                     name="suspension"))
    road = iso8608_road(road_class, seed=seed)
    tyre = TyreForces(m, [(housing, wheel)], R, tyre_stiffness, c_t, road, speed, fade)
    sub = Subsystem("housing", "pivot", "suspension", tuple(wheel), R, tyre_stiffness, c_t)
    params = {"chassis_mass_kg": m0, "unsprung_mass_kg": m1, "unsprung_inertia_kgm2": list(unsprung_inertia),
              "spring_Nm_per_rad": k_rot,
              "damper_Nms_per_rad": c_rot, "tyre_N_per_m": tyre_stiffness, "tyre_Ns_per_m": c_t,
              "wheel_radius_m": R, "arm_length_m": arm_length, "arm_angle_deg": arm_angle_deg,
              "free_angle_rad": free_angle, "road_class": road_class, "speed_mps": speed, "fade_m": fade,
              "seed": seed}
    return Robot16(m, tyre, sub, road, speed, fade, params)


def rms_errors(run, ref):
    """RMS differences of base z, ż, z̈ of ``run`` from ``ref`` at their common instants.

    The steps must be integer multiples of the reference's (the run's sample k
    is the reference's sample k·ratio); a run that stopped early is compared
    over what it completed.
    """
    ratio = run.step / ref.step
    r = round(ratio)
    if abs(ratio - r) > 1e-9 or r < 1:
        raise ValueError(f"rms_errors: step {run.step} is not a multiple of the reference's {ref.step}")
    n = min(run.completed, ref.completed // r) + 1
    d = run.out[:n] - ref.out[: n * r: r][:n]
    return tuple(float(np.sqrt(np.mean(d[:, k] ** 2))) for k in range(3))


def _timed(sys_, coordinates, scheme, step, t_end, repeats, **options):
    """The run and its best CPU time over ``repeats`` (the compiled loop measured alone; compiled beforehand)."""
    best, run = np.inf, None
    for _ in range(repeats):
        c0 = time.process_time()
        run = sys_.run(coordinates, scheme, step, t_end, **options)
        best = min(best, time.process_time() - c0)
    return run, best


def synthesis_study(t_end=None, step=None, sweep=None, repeats=3, alpha=-0.2, robot=None, progress=None) -> dict:
    """Table 3 and Fig. 8 of kim-2012 on the 1/6 robot.

    Table 3: the four models at ``step`` (default the paper's 0.7 ms) over
    ``t_end`` (default 35 s); RMS errors of the chassis z, ż, z̈ against the
    joint explicit model at the same step; CPU time (process time of the
    compiled loop, best of ``repeats``); CPU over simulated time; CPU relative
    to joint explicit. Fig. 8: both explicit-implicit models (and both explicit
    ones, for their stable limit) over ``sweep`` steps (multiples of ``step``);
    CPU time and acceleration RMS error against the joint explicit reference
    at ``step``; the largest step that completes the run.
    """
    robot = robot or robot_1_6()
    sys_ = robot.synthesis()
    t_end = PAPER["t_end_s"] if t_end is None else float(t_end)
    step = PAPER["step_s"] if step is None else float(step)
    sweep = [step * k for k in SWEEP_MULTIPLES] if sweep is None else list(sweep)
    say = progress or (lambda *_: None)
    opts = {"alpha": alpha}
    for coords, scheme in MODELS:  # compile (cache) before timing
        sys_.run(coords, scheme, step, 10 * step, **opts)
    ref, ref_cpu = _timed(sys_, "joint", "explicit", step, t_end, repeats, **opts)
    if not ref.stable:
        raise RuntimeError(f"synthesis_study: the joint explicit reference diverged at h = {step} s")
    table = {}
    for coords, scheme in MODELS:
        name = f"{coords} {scheme}"
        run, cpu = (ref, ref_cpu) if (coords, scheme) == ("joint", "explicit") else \
            _timed(sys_, coords, scheme, step, t_end, repeats, **opts)
        err = rms_errors(run, ref) if run is not ref else (None, None, None)
        table[name] = {"step_s": step, "stable": run.stable, "rms_pos_m": err[0], "rms_vel_mps": err[1],
                       "rms_acc_mps2": err[2], "cpu_s": cpu, "cpu_per_sim_pct": 100.0 * cpu / t_end,
                       "ratio": cpu / ref_cpu, "newton_max": run.iterations.max() if run.steps else 0}
        say(name, table[name])
    fig8 = {}
    for coords, scheme in MODELS:
        name = f"{coords} {scheme}"
        rows = []
        for h in sweep:
            run, cpu = _timed(sys_, coords, scheme, h, t_end, repeats, **opts)
            err = rms_errors(run, ref)
            rows.append({"step_s": h, "stable": run.stable, "completed_s": run.completed * h, "cpu_s": cpu,
                         "rms_pos_m": err[0], "rms_vel_mps": err[1], "rms_acc_mps2": err[2]})
            say(name, rows[-1])
        stable = [r["step_s"] for r in rows if r["stable"]]
        fig8[name] = {"rows": rows, "largest_stable_step_s": max(stable) if stable else None}
    # the joint explicit-implicit model's coupling (eq. 31): as printed, and with the base acceleration
    # extrapolated and α-weighted; position RMS error at h, 2h, 4h and the observed order
    coupling = {}
    for label, kw in (("eq. 31, last a0", {}), ("eq. 31, a0 extrapolated", {"base_prediction": "linear"}),
                      ("a0 extrapolated and α-weighted",
                       {"base_prediction": "linear", "weighted_coupling": True})):
        errs = [rms_errors(sys_.run("joint", "explicit-implicit", k * step, t_end, **opts, **kw), ref)[0]
                for k in (1, 2, 4)]
        coupling[label] = {"steps_s": [step, 2 * step, 4 * step], "rms_pos_m": errs,
                           "order": float(np.log2(errs[2] / errs[1]))}
        say(label, {"step_s": step, "stable": True})
    # the Cartesian explicit-implicit model with its subsystems put back on their constraints after each HHT
    # step (coordinate partitioning): the paper's index-3 hypothesis tested
    rows = []
    for h in sweep:
        run = sys_.run("cartesian", "explicit-implicit", h, t_end, projection=True, **opts)
        err = rms_errors(run, ref)
        rows.append({"step_s": h, "stable": run.stable, "completed_s": run.completed * h, "rms_pos_m": err[0],
                     "rms_vel_mps": err[1], "rms_acc_mps2": err[2]})
    stable = [r["step_s"] for r in rows if r["stable"]]
    projected = {"rows": rows, "largest_stable_step_s": max(stable) if stable else None}
    say("cartesian explicit-implicit, projected", {"step_s": projected["largest_stable_step_s"], "stable": True})
    ratios = {"cartesian explicit / joint explicit": table["cartesian explicit"]["ratio"],
              "joint explicit-implicit / joint explicit": table["joint explicit-implicit"]["ratio"],
              "cartesian explicit-implicit / joint explicit": table["cartesian explicit-implicit"]["ratio"]}
    je = fig8["joint explicit-implicit"]
    if je["largest_stable_step_s"]:
        h_big = je["largest_stable_step_s"]
        cpu_big = next(r["cpu_s"] for r in je["rows"] if r["step_s"] == h_big)
        ratios["joint explicit at h / joint explicit-implicit at its largest stable step"] = ref_cpu / cpu_big
    return {"vehicle": "robot-1-6", "t_end_s": t_end, "step_s": step, "alpha": alpha, "params": robot.params,
            "table3": table, "fig8": fig8, "coupling": coupling,
            "cartesian_projected": projected, "ratios": ratios, "paper": PAPER,
            "reference": {"z_m": ref.out[:, 0], "t_s": ref.t}}


def plot_fig8(result, path_stem):
    """Fig. 8: CPU time and acceleration RMS error against step for both explicit-implicit models, with the
    explicit models' CPU at the base step as horizontal lines and each model's largest stable step marked.
    Writes ``path_stem.png`` and ``.svg``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    ax2 = ax.twinx()
    colours = {"joint explicit-implicit": "tab:green", "cartesian explicit-implicit": "tab:purple"}
    for name, col in colours.items():
        rows = [r for r in result["fig8"][name]["rows"] if r["stable"]]
        h = [1e3 * r["step_s"] for r in rows]
        ax.plot(h, [r["cpu_s"] for r in rows], "o-", color=col, label=f"CPU, {name}")
        ax2.semilogy(h, [r["rms_acc_mps2"] for r in rows], "s--", color=col, alpha=0.6,
                     label=f"acc. RMS error, {name}")
        hs = result["fig8"][name]["largest_stable_step_s"]
        if hs:
            ax.axvline(1e3 * hs, color=col, lw=0.8, ls=":")
    for name, col in (("joint explicit", "tab:blue"), ("cartesian explicit", "tab:red")):
        ax.axhline(result["table3"][name]["cpu_s"], color=col, lw=1.0,
                   label=f"CPU, {name} at {1e3 * result['step_s']:g} ms")
    ax.set_xlabel("step size, ms")
    ax.set_ylabel("CPU time, s")
    ax2.set_ylabel("chassis acceleration RMS error, m/s²")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.set_title(f"1/6 robot, {result['t_end_s']:g} s simulated (kim-2012 Fig. 8); dotted: largest stable step")
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=7, loc="lower center", ncol=2)
    paths = []
    for ext in ("png", "svg"):
        p = f"{path_stem}.{ext}"
        fig.savefig(p, dpi=120)
        paths.append(p)
    plt.close(fig)
    return paths


def plot_fig7(result, robot_runs, path_stem):
    """Fig. 7: the chassis vertical position of the four models (``robot_runs``: name -> SynthesisRun)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.5))
    for name, run in robot_runs.items():
        ax.plot(run.t, run.out[: run.completed + 1, 0], lw=0.8, label=name)
    ax.set_xlabel("t, s")
    ax.set_ylabel("chassis z, m")
    ax.legend(fontsize=7)
    ax.set_title("1/6 robot: chassis vertical position, four models (kim-2012 Fig. 7)")
    fig.tight_layout()
    paths = []
    for ext in ("png", "svg"):
        p = f"{path_stem}.{ext}"
        fig.savefig(p, dpi=120)
        paths.append(p)
    plt.close(fig)
    return paths
