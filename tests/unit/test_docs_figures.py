"""docs/figures.py: the quick producers run (CI runs them here) and a figure the docs misstate is caught."""

import importlib.util
import json
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("docs_figures", DOCS / "figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_quick_producers_reproduce_the_docs(figures, tmp_path):
    assert figures.main(["--quick", "--out", str(tmp_path)]) == 0
    quick = [n for n, p in figures.PRODUCERS.items() if p["quick"]]
    for n in quick:
        r = json.loads((tmp_path / f"{n}.json").read_text())
        assert r["mismatches"] == [] and "error" not in r and r["wall_time_s"] >= 0
    grid = json.loads((tmp_path / "geometry-grid.json").read_text())["figures"]
    assert grid["sprocket"]["assembled"] + grid["sprocket"]["refused"] == 81


def test_a_misstated_figure_fails_its_producer(figures, tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "_doc_says", lambda path, text: False)
    assert figures.main(["closure", "--out", str(tmp_path)]) == 1
    assert json.loads((tmp_path / "closure.json").read_text())["mismatches"]


def test_every_stated_timing_names_its_producer(figures):
    # a wall time, a cost per step or a real-time factor in docs/ stands in a section that names the
    # figures.py producer which re-measures it
    assert figures.unproduced_timings() == []


def test_an_unproduced_timing_is_caught(figures, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nThe step costs 1.8 ms/step.\n\n# B\n\nIt runs 118× faster than "
                                   "real time (`python docs/figures.py bench-massless`).\n\n# C\n\n"
                                   "| case | wall / sim |\n|---|---|\n| flat | 0.0085 |\n\n# D\n\nOutput every 10 ms.\n")
    assert [(f, h) for f, h, _ in figures.unproduced_timings(tmp_path)] == [("a.md", "A"), ("a.md", "C")]
