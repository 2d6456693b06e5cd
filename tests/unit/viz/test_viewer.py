"""The 3-D viewer page: its data round-trips, it stays offline, and it runs in a real headless Chromium."""

import base64
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import trackdyn as td
from trackdyn.viz.viewer import viewer_data, write_viewer

from viz_test_helpers import BOB_COLOR, LINK_COLOR, tip_position

CHECK = Path(__file__).with_name("viewer_check.cjs")


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
    env = {**os.environ, "NODE_PATH": browser["node_path"], "CHROMIUM": browser["chromium"]}
    r = subprocess.run([browser["node"], str(CHECK), str(page), str(tmp_path), "0", "0.9"], capture_output=True,
                       text=True, timeout=180, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "driverError" not in out, out.get("driverError")
    assert out["status"] == "ready" and out["statusEnd"] == "ready"
    assert out["pageErrors"] == []
    assert [m for m in out["console"] if m["type"] == "error"] == []
    assert out["requests"] == []  # nothing fetched: the page works offline
    assert out["frames"] > 10 and out["frame0"] == 0
    assert out["framePlayed"] > 0  # playing advanced the replay
    assert abs(out["time1"] - 0.9) < 0.05
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
