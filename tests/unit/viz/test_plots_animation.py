"""Plots, the side-view animation and the report: the pictures show the recorded data."""

import re

import numpy as np
import pytest

import trackdyn as td
from trackdyn.viz import plots
from trackdyn.viz.animate import SideView, animate, frame_times

from viz_test_helpers import red_mask, tip_position


def test_plot_series_draws_the_recorded_samples(chain_run, tmp_path):
    res = td.load(chain_run)
    fig = plots.plot_series(res, ["link[3].pos.z", "link[3].pos.x", "pin[0].force.z"], t0=0.2, t1=0.8)
    pos_ax, force_ax = fig.axes[:2]
    assert pos_ax.get_ylabel() == "pos [m]" and force_ax.get_ylabel() == "force [N]"
    line = pos_ax.lines[0]
    keep = (res.t >= 0.2 - 1e-12) & (res.t <= 0.8 + 1e-12)
    assert np.array_equal(line.get_xdata(), res.t[keep]) and np.array_equal(line.get_ydata(), res["link[3].pos.z"][keep])
    png = plots.save_figure(fig, tmp_path / "a.png")
    svg = plots.save_figure(fig, tmp_path / "b", format="svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert svg.suffix == ".svg" and "link[3].pos.z" in svg.read_text()
    with pytest.raises(ValueError, match="format"):
        plots.save_figure(fig, tmp_path / "c.pdf")
    with pytest.raises(ValueError, match="no series"):
        plots.plot_series(res, ["nope"])


def test_peak_vs_parameter_marks_the_crossing():
    speeds = np.array([2.0, 4.0, 6.0, 8.0])
    peaks = np.array([1.0, 2.0, 3.0, 4.0])  # crosses 2.5 at speed 5 (linear between 4 and 6)
    fig = plots.peak_vs_parameter(speeds, {"driver acc": peaks}, limit=2.5, xlabel="speed [m/s]")
    ax = fig.axes[0]
    vlines = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(vlines) == 1 and np.isclose(vlines[0].get_xdata()[0], 5.0)
    with pytest.raises(ValueError, match="shape"):
        plots.peak_vs_parameter(speeds, {"x": peaks[:2]})


def test_pass_fail_paths_grid_and_timing_figures(chain_run):
    res = td.load(chain_run)
    fig = plots.pass_fail_vs_parameter([0.5, 0.7, 0.6], [True, False, True], limit=0.6)
    assert len(fig.axes[0].collections) == 2
    fig = plots.paths_xz({"tip": (res["link[3].pos.x"], res["link[3].pos.z"])}, terrain=res.scene["terrain"])
    assert np.array_equal(fig.axes[0].lines[0].get_ydata(), res["link[3].pos.z"])
    fig = plots.grid_map([0, 1, 2], [0, 1], np.arange(6.0).reshape(2, 3), marks=[(1, 0, "base")])
    assert fig.axes[0].collections
    with pytest.raises(ValueError, match="shape"):
        plots.grid_map([0, 1], [0, 1], np.zeros((3, 3)))
    fig = plots.timing_split(res.metadata)
    assert len(fig.axes[0].patches) == len(res.metadata["timing_s"])


def test_terrain_profile_is_extended_flat():
    x, z = plots.terrain_profile_xz({"type": "profile", "x": [0, 1], "z": [0.2, 0.4]}, -5, 5)
    assert list(x) == [-5, 0, 1, 5] and list(z) == [0.2, 0.2, 0.4, 0.4]


def test_frame_times():
    t = np.arange(0, 1.0001, 0.01)
    idx = frame_times(t, fps=10)
    assert np.allclose(t[idx], np.arange(0, 1.0001, 0.1))
    assert np.allclose(t[frame_times(t, fps=10, t0=0.5, speed=0.5)], np.arange(0.5, 1.0001, 0.05))
    with pytest.raises(ValueError, match="outside the run"):
        frame_times(t, fps=10, t0=2.0, t1=3.0)
    with pytest.raises(ValueError, match="fps"):
        frame_times(t, fps=0)


def test_side_view_draws_the_tip_where_it_was_recorded(chain_run):
    """The red sphere's pixels sit where the recorded tip position maps to, frame after frame."""
    res = td.load(chain_run)
    view = SideView(res, size=(640, 480))
    for i in (0, 40, 80, 120):
        img = view.draw(i)
        ys, xs = np.nonzero(red_mask(img))
        assert len(xs) > 30, f"no red sphere in frame {i}"
        tip = tip_position(res, i)
        px, py = view.ax.transData.transform((tip[0], tip[2]))
        h = img.shape[0]
        assert abs(xs.mean() - px) < 3 and abs(ys.mean() - (h - py)) < 3, (i, xs.mean(), px, ys.mean(), h - py)
    # the terrain is drawn: the step's sand colour fills the bottom of the frame
    sand = np.all(np.abs(img.astype(int) - [0xc8, 0xb8, 0x9a]) < 6, axis=-1)
    assert sand[int(0.85 * img.shape[0])].any()


def test_gif_and_mp4(chain_run, tmp_path):
    import imageio.v3 as iio

    res = td.load(chain_run)
    info = animate(res, tmp_path / "a.gif", fps=10, size=(320, 240))
    frames = iio.imread(tmp_path / "a.gif", index=None)
    assert info["frames"] == len(frames) == 13 and frames.shape[1:3] == (240, 320)
    assert not np.array_equal(frames[0], frames[-1])
    info = animate(chain_run, tmp_path / "a.mp4", fps=10, t0=0.5, t1=1.0, size=(330, 250))
    assert info["size"] == [320, 240] and info["frames"] == 6
    import imageio.v2 as iio2

    reader = iio2.get_reader(tmp_path / "a.mp4")
    n = sum(1 for _ in reader)
    reader.close()
    assert n == 6
    with pytest.raises(ValueError, match=".gif or .mp4"):
        animate(res, tmp_path / "a.avi")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.gif", "a.mp4"]


def test_animation_without_a_scene_draws_dots(tmp_path):
    from trackdyn.testing import problems as P

    sim = td.Simulation(P.chain(n_links=3, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01)), step=2e-3,
                        output_step=1e-2)
    sim.run(0.2, out=tmp_path / "r")
    res = td.load(tmp_path / "r")
    assert res.scene is None
    view = SideView(res, size=(320, 240))
    assert len(view.dots) == 3
    img = view.draw(10)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 2


def test_report_embeds_everything(chain_run, tmp_path):
    from trackdyn.io.results import write_summary
    from trackdyn.viz.report import write_report

    d = tmp_path / "copy"
    res = td.load(chain_run)
    res.summary = {"limit_m": 0.61, "figures": ["figures/limit.svg"]}
    res.metadata["spec"] = {"name": "m113", "track": {"pitch": 0.154}}
    res.metadata["warnings"] = ["a warning to show"]
    res.save(d)
    fig = plots.pass_fail_vs_parameter([0.5, 0.7], [True, False])
    plots.save_figure(fig, d / "figures" / "limit.svg")
    info = write_report(d, d / "report.html")
    page = (d / "report.html").read_text()
    for text in ["test-chain4", "track.pitch", "0.154", "limit_m", "0.61", "a warning to show", "factorization",
                 "euler-implicit-linearized", "limit.svg"]:
        assert text in page, text
    assert page.count("<svg") >= 3  # series, timing split, the event's figure
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?https?:|@import""", page)  # offline
    assert info["status"] == "complete" and info["warnings"] == []


def test_paths_xz_axes_span_the_data():
    """A 0.7 m rise over 20 m of travel fills the frame's height (stretched, and labelled so), not 9 m of it."""
    x = np.linspace(-2, 19.5, 200)
    z = 1.0 + 0.7 * np.exp(-((x - 2.3) / 1.5) ** 2)
    fig = plots.paths_xz({"hull": (x, z)})
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert lo <= z.min() and hi >= z.max() and (hi - lo) < 1.3 * np.ptp(z)
    assert ax.get_xlim()[0] <= x.min() and ax.get_xlim()[1] - ax.get_xlim()[0] < 1.1 * np.ptp(x)
    assert "stretched" in ax.get_ylabel()
    # with the terrain: the step under the path is in the frame too
    fig = plots.paths_xz({"hull": (x, z)}, terrain={"type": "profile", "x": [0.6, 0.6], "z": [0.0, 0.4],
                                                    "y": [-1, 1]})
    lo, hi = fig.axes[0].get_ylim()
    assert lo <= 0.0 and hi >= z.max() and (hi - lo) < 1.3 * (z.max() - 0.0)
    # a path as high as it is long keeps one scale on both axes
    s = np.linspace(0, np.pi, 50)
    fig = plots.paths_xz({"arc": (np.cos(s), np.sin(s))})
    assert fig.axes[0].get_aspect() == 1.0 and "stretched" not in fig.axes[0].get_ylabel()


def test_grid_by_axis_checks_shapes():
    with pytest.raises(ValueError, match="shape"):
        plots.grid_by_axis([0, 1], [0, 1], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="above must have shape"):
        plots.grid_by_axis([0, 1], [0, 1], np.zeros((2, 2)), above=np.zeros((2, 3), bool))
