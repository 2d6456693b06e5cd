"""Fixtures of the viz tests: a small drawable results folder, and a real headless Chromium.

The browser tests need Debian's ``chromium`` and the npm package
``playwright-core`` (driver only; it uses /usr/bin/chromium and downloads no
browser). When missing they are installed here: ``apt-get install -y
chromium`` when running as root with apt-get (as CI does), and ``npm install
playwright-core@1`` into a cache folder (``$TRACKDYN_TEST_CACHE``, default
``~/.cache/trackdyn-tests``). Otherwise the tests are skipped with the reason.
An exclusive file lock keeps parallel pytest workers from installing twice.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

import trackdyn as td
from viz_test_helpers import pendulum_chain_model

CACHE = Path(os.environ.get("TRACKDYN_TEST_CACHE", Path.home() / ".cache" / "trackdyn-tests"))


@contextmanager
def _install_lock():
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "install.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _ensure_chromium() -> str:
    exe = shutil.which("chromium")
    if exe:
        return exe
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("Debian's chromium is not installed and cannot be installed here (needs root and apt-get): "
                    "run `apt-get install -y chromium`")
    with _install_lock():
        exe = shutil.which("chromium")
        if exe:
            return exe
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
            if r.returncode != 0:
                pytest.skip(f"`{' '.join(cmd)}` failed: {r.stderr.strip()[-500:]}")
    exe = shutil.which("chromium")
    if not exe:
        pytest.skip("apt-get installed chromium but no `chromium` is on PATH")
    return exe


def _ensure_playwright() -> Path:
    node_dir = CACHE / "node"
    mod = node_dir / "node_modules" / "playwright-core"
    if (mod / "package.json").exists():
        return node_dir / "node_modules"
    if not shutil.which("npm"):
        pytest.skip("npm is not installed: it is needed to install playwright-core")
    with _install_lock():
        if not (mod / "package.json").exists():
            node_dir.mkdir(parents=True, exist_ok=True)
            r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(node_dir),
                                "playwright-core@1"], capture_output=True, text=True, timeout=600)
            if r.returncode != 0 or not (mod / "package.json").exists():
                pytest.skip(f"`npm install playwright-core@1` failed: {r.stderr.strip()[-500:]}")
    return node_dir / "node_modules"


@pytest.fixture(scope="session")
def browser():
    """``dict(node=..., chromium=..., node_path=...)`` for driving the viewer in headless Chromium."""
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed: the browser test drives Chromium with playwright-core")
    chromium = _ensure_chromium()
    node_path = _ensure_playwright()
    return {"node": node, "chromium": chromium, "node_path": str(node_path)}


@pytest.fixture(scope="session")
def chain_run(tmp_path_factory):
    """A streamed 1.2 s run of a 4-link chain with shapes and a terrain profile below it."""
    d = tmp_path_factory.mktemp("viz") / "chain"
    m = pendulum_chain_model()
    sim = td.Simulation(m, step=2e-3, output_step=1e-2)
    terrain = {"type": "profile", "x": [-2.0, 0.3, 0.3, 2.0], "z": [-1.3, -1.3, -1.1, -1.1], "y": [-1.0, 1.0]}
    sim.recorder.open(d, metadata={"scenario": {"name": "test-chain4"}}, terrain=terrain)
    res = sim.run(1.2)
    assert res.status == "complete"
    return d




@pytest.fixture(scope="session")
def m113_run(tmp_path_factory):
    """0.6 s of the M113 (links fidelity: every shoe drawn) pulling away on flat ground, poses and contact forces."""
    from trackdyn.driver import FullThrottle

    d = tmp_path_factory.mktemp("viz") / "m113"
    sc = td.Scenario(vehicle="m113", driver=FullThrottle(delay=0.05), t_end=0.6, fidelity="links", output_step=0.02,
                     record=("*.pos.*", "*.quat.*", "chassis.vel.*", "*.contact.force.*"), name="viz-m113")
    res = td.run(sc, out=d)
    assert res.status == "complete"
    return d
