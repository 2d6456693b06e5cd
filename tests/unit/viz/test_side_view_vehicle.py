"""The side view of a vehicle: big enough to see, followed by the camera, shoes, wheels and hull drawn."""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.io.results import Result
from trackdyn.viz.animate import FOLLOW_FILL, SideView, animate
from trackdyn.viz.geometry import SideBatch

from viz_test_helpers import columns_share, drawn_bodies_mask


def test_the_vehicle_covers_a_quarter_of_the_frame_width_and_stays_inside(m113_run):
    res = td.load(m113_run)
    view = SideView(res, size=(720, 400))
    n = len(res.t)
    for i in (0, n // 2, n - 1):
        img, mask = drawn_bodies_mask(view, i)
        c0, c1, share = columns_share(mask)
        assert share >= 0.25, (i, share)
        # the whole vehicle is inside the axes, not clipped by their edges
        (ax0, ay0), (ax1, ay1) = view.ax.bbox.get_points()
        h = img.shape[0]
        rows = np.nonzero(mask.any(axis=1))[0]
        assert ax0 + 2 < c0 and c1 < ax1 - 2 and h - ay1 + 2 < rows[0] and rows[-1] < h - ay0 - 2, (i, c0, c1, rows)


def _shifted(res, speed):
    """The recorded run with every body moved on by ``speed * t`` in x: a vehicle travelling far."""
    cols = [c for c in res.columns if ".pos." in c or ".quat." in c or c.startswith("chassis.vel")]
    res.prefetch(cols)
    values = np.column_stack([res[c] + (speed * res.t if c.endswith(".pos.x") else 0.0) for c in cols])
    return Result(res.t, cols, values, metadata=res.metadata, scene=res.scene)


def test_the_camera_follows_a_vehicle_that_travels_far(m113_run):
    res = _shifted(td.load(m113_run), speed=30.0)  # 18 m in 0.6 s: three times the vehicle's length
    view = SideView(res, size=(720, 400))
    assert view.follow is not None and view.bodies[view.follow][0] == "chassis"
    n = len(res.t)
    centres = []
    for i in (0, n // 2, n - 1):
        img, mask = drawn_bodies_mask(view, i)
        c0, c1, share = columns_share(mask)
        assert share == pytest.approx(FOLLOW_FILL * (1 - 58 / 720), abs=0.08)  # axes: 720 - 58 pixels wide
        centres.append(0.5 * (c0 + c1))
    assert np.ptp(res["chassis.pos.x"]) > 17.0
    assert np.ptp(centres) < 0.03 * 720  # the vehicle stays put on the screen while it travels 18 m
    # not following: the whole run in one view makes the vehicle small
    fixed = SideView(res, size=(720, 400), follow=None)
    assert columns_share(drawn_bodies_mask(fixed, 0)[1])[2] < 0.25


def test_every_shoe_is_outlined_so_neighbours_can_be_told_apart(m113_run):
    """Along the bottom run of the near track, the shoes' light outlines alternate with their dark faces."""
    res = td.load(m113_run)
    view = SideView(res, size=(960, 544))
    img = view.draw(0)
    # the near (right) track's shoes: centres in pixels, from the recorded poses
    shoes = [c[: -len(".pos.x")] for c in res.columns if c.startswith("right.shoe[") and c.endswith(".pos.x")]
    x = np.array([res[f"{s}.pos.x"][0] for s in shoes])
    z = np.array([res[f"{s}.pos.z"][0] for s in shoes])
    bottom = z < z.min() + 0.05
    assert bottom.sum() >= 15
    # through the middle of the shoes' ground pads (0.03 m thick, centred 0.015 m below the shoe's centre)
    px = view.ax.transData.transform(np.column_stack([x[bottom], z[bottom] - 0.015]))
    row = int(round(img.shape[0] - np.median(px[:, 1])))
    lo, hi = int(px[:, 0].min()), int(px[:, 0].max())
    line = img[row, lo:hi].astype(int).sum(axis=-1)
    dark = line < 3 * 90
    light = line > np.median(line) + 3 * 25
    # a light outline between every pair of neighbouring shoes: at least one light run per shoe
    runs = np.count_nonzero(np.diff(light.astype(int)) == 1)
    assert dark.any() and runs >= bottom.sum() - 2, (runs, bottom.sum())


def test_the_overlay_shows_time_speed_and_scenario(m113_run):
    res = td.load(m113_run)
    view = SideView(res, size=(480, 272))
    i = len(res.t) - 1
    view.draw(i)
    text = view.stamp.get_text()
    v = np.hypot(res["chassis.vel.x"][i], res["chassis.vel.y"][i])
    assert f"t = {res.t[i]:7.3f} s" in text and f"v = {v:5.2f} m/s" in text and "viz-m113" in text
    assert v > 0.5
    view = SideView(res, size=(480, 272), overlay=False)
    img_off = view.draw(i)
    view_on = SideView(res, size=(480, 272), caption="trial 3: step 0.60 m")
    img_on = view_on.draw(i)
    assert "trial 3: step 0.60 m" in view_on.stamp.get_text()
    top_left = (slice(0, 40), slice(0, 200))
    assert np.any(img_on[top_left] != img_off[top_left])


def test_a_mesh_is_drawn_as_its_shaded_front_faces():
    from trackdyn.viz import shapes as S

    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    cube = S.Mesh(vertices=v, faces=faces, color="#808080").to_dict()
    batch = SideBatch([(0, cube, "#808080", "#000000")])
    polys, cols, _, _, _, _ = batch.project(np.eye(3)[None], np.zeros((1, 3)))
    assert len(polys) == 2  # the two triangles of the face towards the viewer (-y)
    assert np.allclose(cols, [(0x80 / 255,) * 3] * 2)  # squarely faced: full shade
    # turned 30 degrees about z: two faces seen, the one seen obliquely darker
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    polys, cols, _, _, _, _ = batch.project(Rz[None], np.zeros((1, 3)))
    assert len(polys) == 4 and len({tuple(np.round(x, 6)) for x in cols}) == 2


def test_animate_writes_the_followed_vehicle(m113_run, tmp_path):
    import imageio.v3 as iio

    info = animate(m113_run, tmp_path / "a.gif", fps=10, size=(480, 272))
    frames = iio.imread(tmp_path / "a.gif", index=None)
    assert len(frames) == info["frames"] == 7
    assert not np.array_equal(frames[0], frames[-1])


def test_an_event_folder_is_animated_trial_after_trial(chain_run, tmp_path):
    import json
    import shutil

    import imageio.v3 as iio

    from trackdyn.cli.main import app
    from typer.testing import CliRunner

    ev = tmp_path / "event"
    for label in ("h0.3000", "h0.6000"):
        shutil.copytree(chain_run, ev / "trials" / label)
    (ev / "summary.json").write_text(json.dumps({"event": "step-climb", "limit_m": 0.3, "trials": [
        {"value": 0.3, "passed": True, "folder": "trials/h0.3000"},
        {"value": 0.6, "passed": False, "mode": "hull-strike", "folder": "trials/h0.6000"},
        {"value": 0.45, "passed": False, "mode": "slip"}]}))  # no folder kept: not animated
    info = animate(ev, tmp_path / "ev.gif", fps=5, size=(320, 240), t1=0.6)
    assert [p["caption"] for p in info["trials"]] == ["step-climb trial 1/2: 0.3 - pass",
                                                      "step-climb trial 2/2: 0.6 - fail (hull-strike)"]
    frames = iio.imread(tmp_path / "ev.gif", index=None)
    assert len(frames) == info["frames"] == 8  # 0, 0.2, 0.4, 0.6 s of each trial
    # the same pose, another caption: the overlay differs between the trials' first frames
    assert not np.array_equal(frames[0], frames[4])
    r = CliRunner().invoke(app, ["animate", str(ev), "--out", str(tmp_path / "cli.gif"), "--fps", "5", "--t1",
                                 "0.2", "--width", "320", "--height", "240", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["frames"] == 4
