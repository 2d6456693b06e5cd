"""The README's first command: a short, real simulation that writes a results folder and shows it.

The M113 of the thesis (korner-2024, spec ``m113``) starts on flat concrete
1.4 m before a 0.4 m timber step, settles briefly with its brakes on, then
drives over the step at full throttle. The run's folder holds the results,
the side-view animation and the 3-D viewer page.

Nothing here draws on a terminal: the caller passes its own progress display
(the ``trackdyn demo`` command passes its Rich bar,
:class:`trackdyn.cli.progress.RunProgress`).
"""

from __future__ import annotations

from pathlib import Path


from .driver import FullThrottle
from .materials import Material
from .sim.run import prepare
from .spec.scenario import Scenario
from .terrain import Flat, Step
from .viz.animate import animate
from .viz.plots import paths_xz, save_figure
from .viz.viewer import write_viewer

__all__ = ["run_demo", "demo_scenario"]

STEP_HEIGHT = 0.4
STEP_X = 0.6


def demo_scenario(t_end: float = 5.0):
    """The demo's :class:`~trackdyn.spec.scenario.Scenario`."""
    concrete = Material("concrete", young=2e10, poisson=0.3, restitution=0.1, friction=0.8)
    timber = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.8)  # TOP 2-2-611, thesis §4.2.2
    terrain = Flat(material=concrete) + Step(STEP_HEIGHT, x=STEP_X, material=timber)
    return Scenario(vehicle="m113", terrain=terrain, driver=FullThrottle(delay=0.5), t_end=t_end, step=5e-4,
                    output_step=0.02, name="demo-m113-step")


def run_demo(out, t_end: float = 5.0, progress=None, animation: bool = True, viewer: bool = True) -> dict:
    """Run the demo scenario and write its results folder, animation and viewer page.

    Parameters
    ----------
    out : path
        Results folder (``timeseries.parquet``, ``metadata.json``,
        ``scene.json``, ``path.png``, ``animation.gif``, ``view.html``).
    t_end : float
        Simulated time, s.
    progress : callable or context manager, optional
        The run's progress display. A callable is the run's callback
        (``Simulation.run(callback=...)``); a context manager (such as
        :class:`trackdyn.cli.progress.RunProgress`) is entered for the
        duration of the run and what it returns is the callback. ``None`` (or
        ``False``): no progress.
    animation, viewer : bool
        Write the side-view GIF and the 3-D viewer page.

    Returns
    -------
    dict
        ``status``, ``out``, ``files``, ``steps``, ``sim_time_s``,
        ``wall_time_s``, ``climbed``, ``animation``, ``viewer``.
    """
    out = Path(out)
    sc = demo_scenario(t_end)
    prep = prepare(sc, record=["chassis.*", "driver.*", "left.*.pos.*", "left.*.quat.*", "right.*.pos.*",
                               "right.*.quat.*", "left.sprocket.*", "contact.count", "*.contact.force.*"])
    sim = prep.sim
    sim.recorder.extra_metadata["scenario"] = {**sc.to_dict(), "description":
                                               f"M113 climbing a {STEP_HEIGHT} m step at full throttle"}
    if progress is True:
        raise ValueError("run_demo: progress=True no longer draws a bar itself; pass the bar "
                         "(e.g. trackdyn.cli.progress.RunProgress(t_end, label='demo')) or a callback")
    if hasattr(progress, "__enter__"):
        with progress as bar:  # shown during the run only, not while the figures are written
            res = sim.run(t_end, callback=bar, out=out)
    else:
        res = sim.run(t_end, callback=progress if callable(progress) else None, out=out)
    files = [str(out / f) for f in res.metadata.get("files", [])]
    warnings = list(res.metadata.get("warnings", []))
    x, z = res["chassis.pos.x"], res["chassis.pos.z"]
    climbed = bool(x[-1] - prep.spec.chassis.com[0] > STEP_X + 1.0 and z[-1] - z[0] > 0.8 * STEP_HEIGHT)
    summary = {"status": res.status, "out": str(out), "files": files, "steps": sim.steps,
               "sim_time_s": sim.state.t, "wall_time_s": sim.wall_time, "climbed": climbed,
               "animation": None, "viewer": None}
    fig = paths_xz({"chassis centre of mass": (x, z)}, terrain=(res.scene or {}).get("terrain"),
                   title=f"M113 over a {STEP_HEIGHT} m step")
    files.append(str(save_figure(fig, out / "path.png", dpi=100)))
    if animation:
        info = animate(res, out / "animation.gif", fps=12, size=(720, 400))
        summary["animation"] = info["out"]
        warnings += info["warnings"]
        files.append(info["out"])
    if viewer:
        info = write_viewer(res, out / "view.html", title=f"trackdyn demo: M113 over a {STEP_HEIGHT} m step")
        summary["viewer"] = info["out"]
        files.append(info["out"])
    summary["files"] = files
    summary["warnings"] = warnings
    return summary
