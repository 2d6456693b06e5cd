"""The 3-D viewer page: its data round-trips, it stays offline, and it runs in a real headless Chromium."""

import base64
import json
import re

import numpy as np
import pytest

import trackdyn as td
from trackdyn.viz.viewer import viewer_data, write_viewer

from viewer_driver import drive_viewer
from viz_test_helpers import BOB_COLOR, LINK_COLOR, tip_position


def f32(s):
    return np.frombuffer(base64.b64decode(s), dtype="<f4")


def test_viewer_data_carries_the_recorded_poses(chain_run):
    res = td.load(chain_run)
    data = viewer_data(res, max_frames=50, fps=30)
    t = f32(data["t"])
    assert 2 <= len(t) <= 50 and np.isclose(t[0], 0) and np.isclose(t[-1], 1.2)
    poses = f32(data["poses"]).reshape(len(t), len(data["bodies"]), 7)
    idx = np.searchsorted(res.t, t.astype(float) - 1e-6)
    for b, body in enumerate(data["bodies"]):
        for c, comp in enumerate(["pos.x", "pos.y", "pos.z", "quat.e0", "quat.e1", "quat.e2", "quat.e3"]):
            assert np.allclose(poses[:, b, c], res[f"{body['name']}.{comp}"][idx], atol=1e-6)
    # one mesh per distinct shape: 4 links share their box
    assert len(data["meshes"]) == 3  # link box, tip sphere, ground bracket
    assert [p["color"] for p in data["bodies"][3]["parts"]] == [LINK_COLOR, BOB_COLOR]
    tri = f32(data["terrain"]["pos"]).reshape(-1, 3)
    assert np.isclose(tri[:, 2].min(), -1.3) and np.isclose(tri[:, 2].max(), -1.1)


def test_the_page_is_self_contained(chain_run, tmp_path):
    info = write_viewer(chain_run, tmp_path / "v.html")
    page = (tmp_path / "v.html").read_text()
    assert info["bytes"] == len(page) and info["bodies"] == 4
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?https?:|@import|fetch\(|XMLHttpRequest""",
                         page)
    payload = re.search(r'<script type="application/json" id="td-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(payload)["title"] == "test-chain4"


def _png(path):
    import imageio.v3 as iio

    return iio.imread(path)[..., :3]


def test_viewer_runs_in_headless_chromium(chain_run, tmp_path, browser):
    """Load the page, play, scrub, screenshot: the chain is drawn, it moved, and the console is clean."""
    page = tmp_path / "view.html"
    write_viewer(chain_run, page)
    out = drive_viewer(page, tmp_path, 0, 0.9, browser["chromium"])
    assert "driverError" not in out, out.get("driverError")
    assert out["status"] == "ready" and out["statusEnd"] == "ready"
    assert out["pageErrors"] == []
    assert [m for m in out["console"] if m["type"] == "error"] == []
    assert out["requests"] == []  # nothing fetched: the page works offline
    assert out["frames"] > 10 and out["frame0"] == 0
    assert out["framePlayed"] > 0  # playing advanced the replay
    assert abs(out["time1"] - 0.9) < 0.05
    assert out["follow"] is False and out["hasForces"] is False  # a swinging chain is shown whole
    img0, img1 = _png(tmp_path / "view0.png"), _png(tmp_path / "view1.png")
    for img in (img0, img1):
        assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # not blank, not one colour
        blue = (img[..., 2] > 150) & (img[..., 0] < 80) & (img[..., 1] < 80)
        red = (img[..., 0] > 150) & (img[..., 1] < 80) & (img[..., 2] < 80)
        assert blue.sum() > 200 and red.sum() > 30  # the links and the tip sphere are drawn
    # the chain swung between the two frames: the red tip moved on the screen the way it moved in x
    # (the default camera looks from -y, so world +x is screen right)
    res = td.load(chain_run)
    x0_w = tip_position(res, 0)[0]
    x1_w = tip_position(res, int(np.searchsorted(res.t, out["time1"] - 1e-9)))[0]
    x0 = np.nonzero((img0[..., 0] > 150) & (img0[..., 1] < 80) & (img0[..., 2] < 80))[1].mean()
    x1 = np.nonzero((img1[..., 0] > 150) & (img1[..., 1] < 80) & (img1[..., 2] < 80))[1].mean()
    assert abs(x1_w - x0_w) > 0.5 and np.sign(x1 - x0) == np.sign(x1_w - x0_w) and abs(x1 - x0) > 100


def test_viewer_data_follows_the_vehicle_and_carries_its_contact_forces(m113_run):
    res = td.load(m113_run)
    data = viewer_data(res, max_frames=40, fps=30)
    names = [b["name"] for b in data["bodies"]]
    assert sum(n.startswith(("left.shoe[", "right.shoe[")) for n in names) > 120  # every shoe is drawn
    assert names[data["follow_body"]] == "chassis"
    assert 4.0 < data["model_size"] < 6.0  # the M113 is 4.9 m long
    assert not data["follow_on"]  # 0.8 m of travel: the whole run is in view
    # driving far (the same run moved on by 30 m/s): the camera follows the hull, at a distance set by the
    # vehicle's size, not by the 18 m run
    far = _shifted(res, 30.0)
    d2 = viewer_data(far, max_frames=40, fps=30)
    assert d2["follow_on"] and names[d2["follow_body"]] == "chassis"
    assert d2["view"]["dist"] == pytest.approx(1.5 * d2["model_size"] + 0.5)
    assert d2["view"]["dist"] < 0.5 * (d2["grid"]["x1"] - d2["grid"]["x0"])
    fc = data["forces"]
    t = f32(data["t"])
    F = f32(fc["f"]).reshape(len(t), len(fc["bodies"]), 3)
    idx = np.searchsorted(res.t, t.astype(float) - 1e-6)
    k = [data["bodies"][b]["name"] for b in fc["bodies"]].index("right.shoe[30]")
    assert np.allclose(F[:, k, 2], np.nan_to_num(res["right.shoe[30].contact.force.z"][idx]), rtol=1e-5, atol=1e-2)
    mag = np.linalg.norm(F, axis=2)
    assert fc["ref"] == pytest.approx(np.percentile(mag[mag > 0], 99), rel=1e-4)


def _shifted(res, speed):
    """The recorded run with every body moved on by ``speed * t`` in x: a vehicle travelling far."""
    from trackdyn.io.results import Result

    cols = [c for c in res.columns if ".pos." in c or ".quat." in c or ".contact.force." in c]
    res.prefetch(cols)
    values = np.column_stack([res[c] + (speed * res.t if c.endswith(".pos.x") else 0.0) for c in cols])
    return Result(res.t, cols, values, metadata=res.metadata, scene=res.scene)


def test_viewer_of_a_vehicle_in_headless_chromium(m113_run, tmp_path, browser):
    """The M113's page: the camera follows it, it sits inside the frame, pixels change, forces are arrows."""
    res = td.load(m113_run)
    page = tmp_path / "view.html"
    write_viewer(res, page)
    t1 = float(res.t[-1])
    out = drive_viewer(page, tmp_path, 0, t1, browser["chromium"], layers=True)
    assert "driverError" not in out, out.get("driverError")
    assert out["status"] == "ready" and out["pageErrors"] == []
    assert [m for m in out["console"] if m["type"] == "error"] == [] and out["requests"] == []
    assert out["hasForces"] is True and out["forcesAfterKey"] is False
    img0, img1 = _png(tmp_path / "view0.png"), _png(tmp_path / "view1.png")
    bare, noforces = _png(tmp_path / "view1_bare.png"), _png(tmp_path / "view1_noforces.png")
    h = img1.shape[0] - 46  # the canvas above the control bar
    # pixels change between the two times (the wheels turned, the ground moved past, the forces changed)
    changed = np.any(img0[:h] != img1[:h], axis=-1)
    assert changed.mean() > 0.02, changed.mean()
    # the vehicle: what the bodies cover (the frame with and without them); inside the frame, and large
    vehicle = np.any(noforces[:h] != bare[:h], axis=-1)
    rows, cols = np.nonzero(vehicle.any(axis=1))[0], np.nonzero(vehicle.any(axis=0))[0]
    assert len(cols) and cols[0] > 5 and cols[-1] < img1.shape[1] - 6 and rows[0] > 5 and rows[-1] < h - 6
    share = (cols[-1] - cols[0] + 1) / img1.shape[1]
    assert 0.35 < share < 0.95, share
    # the arrows: red pixels present with forces on, absent with them off
    def red(img):
        return ((img[:h, :, 0] > 170) & (img[:h, :, 1] < 80) & (img[:h, :, 2] < 80)).sum()
    assert red(img1) > 100 and red(noforces) < 0.2 * red(img1), (red(img1), red(noforces))
