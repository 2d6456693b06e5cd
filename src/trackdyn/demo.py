"""The README's first command: a short, real simulation that writes a results folder and shows it.

Until the vehicle model lands, the demo is a 64-link track chain (thesis shoe
data, Table 3.6) released from horizontal about a fixed pin. Every link
carries its visual shapes (a shoe plate and its pin), so the run's folder
holds everything the side-view animation and the 3-D viewer need.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .sim.simulation import Simulation
from .testing import problems as P
from .viz import shapes as S

__all__ = ["run_demo", "chain_model"]

SHOE_COLOR = "#4a5560"
PIN_COLOR = "#c0a060"


def chain_model():
    """The 64-link chain of :func:`trackdyn.testing.problems.chain` with shoe and pin shapes."""
    m = P.chain(**P.CHAIN64)
    pitch = P.CHAIN64["pitch"]
    shoe = S.Box(size=(0.92 * pitch, 0.38, 0.03), color=SHOE_COLOR)
    grouser = S.Box(size=(0.25 * pitch, 0.38, 0.025), center=(0.0, 0.0, -0.027), color=SHOE_COLOR)
    pin = S.Cylinder(radius=0.018, length=0.42, axis=(0, 1, 0), center=(-0.5 * pitch, 0, 0), color=PIN_COLOR)
    for k in range(P.CHAIN64["n_links"]):
        for shape in (shoe, grouser, pin):
            m.add_visual(f"link[{k}]", shape)
    # the fixed pin's bracket
    m.add_visual(m.ground, S.Box(size=(0.08, 0.5, 0.08), color="#303030"))
    return m


def run_demo(out, t_end: float = 3.0, progress=False, animation: bool = True, viewer: bool = True) -> dict:
    """Simulate the chain for ``t_end`` s and write its results folder, animation and viewer page.

    Parameters
    ----------
    out : path
        Results folder (``timeseries.parquet``, ``metadata.json``,
        ``scene.json``, ``chain.png``, ``animation.gif``, ``view.html``).
    progress : bool or callable
        ``True`` shows a progress bar on a terminal; a callable is used as the
        run's callback.
    animation, viewer : bool
        Write the side-view GIF and the 3-D viewer page.

    Returns
    -------
    dict
        ``status``, ``out``, ``files``, ``steps``, ``sim_time_s``,
        ``wall_time_s``, ``lowest_tip_z_m``, ``animation``, ``viewer``.
    """
    out = Path(out)
    m = chain_model()
    sim = Simulation(m, step=5e-4, output_step=1e-2)
    sim.recorder.extra_metadata["scenario"] = {"name": "demo-chain64", "t_end": t_end,
                                               "description": "64-link track chain released from horizontal"}
    callback = progress if callable(progress) else None
    if progress is True:
        from .cli.progress import RunProgress

        with RunProgress(t_end, label="demo") as bar:
            res = sim.run(t_end, callback=bar, out=out)
    else:
        res = sim.run(t_end, callback=callback, out=out)
    files = [str(out / f) for f in res.metadata.get("files", [])]
    warnings = list(res.metadata.get("warnings", []))
    n = P.CHAIN64["n_links"]
    tip_z = float(np.min(res[f"link[{n - 1}].pos.z"]))
    summary = {"status": res.status, "out": str(out), "files": files, "steps": sim.steps,
               "sim_time_s": sim.state.t, "wall_time_s": sim.wall_time, "lowest_tip_z_m": tip_z,
               "animation": None, "viewer": None}
    from .viz.plots import paths_xz, save_figure

    every = max(1, int(round(0.25 / 1e-2)))
    paths = {}
    for i in range(0, len(res.t), every):
        x = [0.0] + [res[f"link[{k}].pos.x"][i] for k in range(n)]
        z = [0.0] + [res[f"link[{k}].pos.z"][i] for k in range(n)]
        paths[f"{res.t[i]:.2f} s"] = (x, z)
    fig = paths_xz(paths, title="64-link chain released from horizontal")
    files.append(str(save_figure(fig, out / "chain.png", dpi=100)))
    if animation:
        from .viz.animate import animate

        info = animate(res, out / "animation.gif", fps=15, size=(640, 480))
        summary["animation"] = info["out"]
        warnings += info["warnings"]
        files.append(info["out"])
    if viewer:
        from .viz.viewer import write_viewer

        info = write_viewer(res, out / "view.html", title="trackdyn demo: 64-link chain")
        summary["viewer"] = info["out"]
        files.append(info["out"])
    summary["files"] = files
    summary["warnings"] = warnings
    return summary
