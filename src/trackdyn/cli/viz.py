"""``trackdyn plot``, ``animate`` and ``view``: figures, side-view animation and the 3-D viewer.

Register with ``viz.register(app)``. Every command takes a results folder,
writes one file (into the folder unless ``--out`` says otherwise), prints
where it is, or one JSON object with ``--json``. Exit codes: 0 success, 1
invalid input, 2 usage.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from ..viz.animate import animate as run_animate
from ..viz.animate import is_event_folder
from ..viz.plots import FORMATS, plot_series, save_figure
from ..viz.viewer import write_viewer
from .results import DIR_HELP, JSON_HELP, expand_series, fail, open_result, print_json

__all__ = ["register", "plot", "animate", "view"]


def _slug(names) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", "+".join(names[:3]) + ("+more" if len(names) > 3 else ""))
    return s.strip("_")[:120] or "plot"


def plot(
    directory: Path = typer.Argument(..., help=DIR_HELP),
    series: Optional[List[str]] = typer.Argument(None, help="Series names or glob patterns "
                                                 "(e.g. 'chassis.pos.z' 'pin[*].force.z'); brackets are literal."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Figure file (default: DIR/figures/SERIES.FORMAT)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="png or svg (default: from --out, else png)."),
    x: Optional[str] = typer.Option(None, "--x", help="Series on the horizontal axis instead of time."),
    t0: Optional[float] = typer.Option(None, "--t0", help="Start of the time window, s."),
    t1: Optional[float] = typer.Option(None, "--t1", help="End of the time window, s."),
    title: Optional[str] = typer.Option(None, "--title", help="Figure title."),
    list_series: bool = typer.Option(False, "--list", help="List the recorded series and exit."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Plot recorded series of a results folder against time (PNG or SVG).

    Series of one quantity (pos, force, ...) share an axes. Example:
    trackdyn plot runs/step060 chassis.pos.z 'left.roadwheel[*].pos.z' --format svg
    """
    res = open_result(directory)
    if list_series:
        if as_json:
            print_json({"directory": str(directory), "series": res.columns})
        else:
            typer.echo("\n".join(res.columns))
        return
    if not series:
        fail("give at least one SERIES (or --list to see them)", code=2)
    if fmt is not None and fmt.lower() not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}", code=2)
    if out is not None and out.suffix and out.suffix.lower().lstrip(".") not in FORMATS:
        fail(f"--out must end in .png or .svg, got {out.name!r}")
    if out is not None and fmt is not None and out.suffix and out.suffix.lower() != f".{fmt.lower()}":
        fail(f"--out {out.name!r} and --format {fmt!r} disagree")
    names = expand_series(res, series)
    if x is not None and x not in res:
        fail(f"--x: no series {x!r} in {directory}")
    if t0 is not None and t1 is not None and t1 < t0:
        fail(f"--t1 {t1} is before --t0 {t0}")
    kind = (fmt or (out.suffix.lstrip(".") if out is not None and out.suffix else "png")).lower()
    target = out if out is not None else directory / "figures" / f"{_slug(names)}.{kind}"
    res.prefetch(names + ([x] if x else []))
    fig = plot_series(res, names, x=x, t0=t0, t1=t1, title=title)
    path = save_figure(fig, target, format=kind)
    if as_json:
        print_json({"out": str(path), "format": kind, "series": names})
    else:
        typer.echo(f"wrote {path} ({len(names)} series)")


def animate(
    directory: Path = typer.Argument(..., help=DIR_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Animation file, .gif or .mp4 "
                                       "(default: DIR/animation.gif)."),
    fps: float = typer.Option(25.0, "--fps", help="Frames per second of the file."),
    t0: Optional[float] = typer.Option(None, "--t0", help="Start of the time window, s."),
    t1: Optional[float] = typer.Option(None, "--t1", help="End of the time window, s."),
    speed: float = typer.Option(1.0, "--speed", help="Simulated seconds per second of video."),
    follow: str = typer.Option("auto", "--follow", help="Body to keep centred, 'auto' (the heaviest body, the "
                               "hull, when it travels farther than the model is long) or 'none' (the whole run "
                               "in one view)."),
    window: Optional[float] = typer.Option(None, "--window", help="Width of the view when following, m (default: "
                                           "the model's length / 0.6)."),
    width: int = typer.Option(960, "--width", help="Frame width, pixels."),
    height: int = typer.Option(544, "--height", help="Frame height, pixels."),
    overlay: bool = typer.Option(True, "--overlay/--no-overlay", help="Time, speed and scenario (an event's "
                                 "trial) in the corner."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Write a side-view (x-z) animation: hull, wheels, sprocket teeth and every shoe over the terrain, to scale.

    The camera follows the vehicle when it drives out of view. An event's folder (trackdyn event ... --out DIR)
    is animated trial after trial, each captioned with its value and outcome. GIF through Pillow, MP4 (H.264)
    through imageio-ffmpeg.
    """
    res = directory if is_event_folder(directory) else open_result(directory)
    target = out or directory / "animation.gif"
    if target.suffix.lower() not in (".gif", ".mp4"):
        fail(f"--out must end in .gif or .mp4, got {target.name!r}")
    if fps <= 0 or speed <= 0:
        fail(f"--fps and --speed must be positive, got {fps} and {speed}")
    if width < 64 or height < 64:
        fail(f"--width and --height must be at least 64 pixels, got {width} x {height}")
    try:
        info = run_animate(res, target, fps=fps, t0=t0, t1=t1, speed=speed,
                           follow=None if follow == "none" else follow, window=window, size=(width, height),
                           overlay=overlay)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(info)
    else:
        if "trials" in info:
            typer.echo(f"wrote {info['out']} ({info['frames']} frames, {len(info['trials'])} trials)")
        else:
            typer.echo(f"wrote {info['out']} ({info['frames']} frames, {info['t0']:.3f}-{info['t1']:.3f} s)")
        for w in info["warnings"]:
            typer.echo(f"warning: {w}", err=True)


def view(
    directory: Path = typer.Argument(..., help=DIR_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file (default: DIR/view.html)."),
    max_frames: int = typer.Option(1500, "--max-frames", help="At most this many frames in the page."),
    fps: float = typer.Option(30.0, "--fps", help="Frames per simulated second kept in the page."),
    title: Optional[str] = typer.Option(None, "--title", help="Page title (default: the scenario name)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Write a self-contained 3-D viewer page (WebGL, works offline) that replays the run.

    Play/pause, scrub, speed, orbit (drag), pan (right-drag), zoom (wheel) and
    a camera that follows a body. Open the file in any browser.
    """
    res = open_result(directory)
    if max_frames < 2 or fps <= 0:
        fail(f"--max-frames must be >= 2 and --fps positive, got {max_frames} and {fps}")
    try:
        info = write_viewer(res, out or directory / "view.html", max_frames=max_frames, fps=fps, title=title)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(info)
    else:
        typer.echo(f"wrote {info['out']} ({info['frames']} frames, {info['bodies']} bodies, "
                   f"{info['bytes'] / 1e6:.1f} MB)")
        for w in info["warnings"]:
            typer.echo(f"warning: {w}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``plot``, ``animate`` and ``view`` to the ``trackdyn`` application."""
    app.command("plot")(plot)
    app.command("animate")(animate)
    app.command("view")(view)
