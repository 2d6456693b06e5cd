"""Two sweep folders side by side (issue #33, the massless fidelity against links): Spearman's rank
correlation per value over the points finished in both, differences, costs; the CLI's ``sweep compare``."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from trackdyn.experiments.sweep import compare_sweeps, sweep_from_dict

GRID = {"sprocket.dx": [-0.1, 0.0, 0.1], "sprocket.dz": [0.0, 0.1]}


def _folder(path, limits, fidelity, wall, skip=()):
    """A sweep folder with a step-climb record per point (limit_m from ``limits``), one refused point (skip)."""
    spec = sweep_from_dict({"vehicle": "m113", "event": "step-climb", "grid": GRID, "fidelity": fidelity})
    (path / "points").mkdir(parents=True)
    (path / "sweep.toml").write_text('vehicle = "m113"\nevent = "step-climb"\n'
                                     f'fidelity = "{fidelity}"\n[grid]\n"sprocket.dx" = [-0.1, 0.0, 0.1]\n'
                                     '"sprocket.dz" = [0.0, 0.1]\n')
    for k, p in enumerate(spec.points()):
        d = path / "points" / p["id"]
        d.mkdir()
        if k in skip:
            (d / "refused.json").write_text(json.dumps({"error": "intersects", "error_type": "GeometryError"}))
            continue
        (d / "summary.json").write_text(json.dumps({"event": "step-climb", "limit_m": limits[k],
                                                    "itt_N": 1e4 + k, "fidelity": fidelity}))
        (d / "point.json").write_text(json.dumps({"id": p["id"], "params": p["params"], "wall_time_s": wall, "pid": 1}))
    return path


def test_spearman_and_differences_over_the_points_finished_in_both(tmp_path):
    links = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83]
    cheap = [0.70, 0.75, 0.69, 0.60, 0.72, 0.74]  # one point (index 3) ranked differently
    a = _folder(tmp_path / "links", links, "links", 100.0)
    b = _folder(tmp_path / "massless", cheap, "massless", 2.0, skip=(5,))
    c = compare_sweeps(a, b)
    assert c["fidelities"] == ["links", "massless"] and c["common_points"] == 5
    row = {r["value"]: r for r in c["values"]}["limit_m"]
    x, y = np.array(links[:5]), np.array(cheap[:5])
    assert row["points"] == 5
    assert row["spearman"] == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
    assert row["mean_difference"] == pytest.approx(float(np.mean(y - x)), abs=1e-12)
    assert row["max_abs_difference"] == pytest.approx(0.25, abs=1e-12)
    assert c["point_wall_s"] == {"ref": 500.0, "other": 10.0} and c["cost_ratio"] == pytest.approx(0.02)
    # the fidelity is that of the points' records even when the first point of the grid was refused
    e = compare_sweeps(a, _folder(tmp_path / "first-refused", cheap, "massless", 2.0, skip=(0,)))
    assert e["fidelities"] == ["links", "massless"] and e["common_points"] == 5
    # the same ranking gives 1
    d = compare_sweeps(a, _folder(tmp_path / "same", [v - 0.1 for v in links], "massless", 1.0))
    assert {r["value"]: r for r in d["values"]}["limit_m"]["spearman"] == pytest.approx(1.0)


def test_a_folder_filled_by_several_files_is_compared_over_every_recorded_point(tmp_path):
    """A study folder filled row by row: its sweep.toml names only the last file's grid (here dz = 0.1),
    yet the points the earlier files recorded there are compared too."""
    links = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83]
    a = _folder(tmp_path / "links", links, "links", 100.0)
    (a / "sweep.toml").write_text('vehicle = "m113"\nevent = "step-climb"\nfidelity = "links"\n[grid]\n'
                                  '"sprocket.dx" = [-0.1, 0.0, 0.1]\n"sprocket.dz" = [0.1]\n')
    b = _folder(tmp_path / "massless", [v - 0.1 for v in links], "massless", 2.0, skip=(5,))
    c = compare_sweeps(a, b)
    assert c["common_points"] == 5  # three of them from the grid the folder's sweep.toml no longer names


def test_folders_of_other_axes_or_no_sweep_are_refused(tmp_path):
    a = _folder(tmp_path / "a", [0.5] * 6, "links", 1.0)
    with pytest.raises(ValueError, match="not a sweep folder"):
        compare_sweeps(a, tmp_path)
    other = tmp_path / "b"
    other.mkdir()
    (other / "sweep.toml").write_text('vehicle = "m113"\nevent = "step-climb"\n[grid]\n"idler.dx" = [0.0]\n')
    with pytest.raises(ValueError, match="grid axes differ"):
        compare_sweeps(a, other)


def test_cli_sweep_compare(tmp_path):
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    a = _folder(tmp_path / "links", [0.80, 0.82, 0.79, 0.85, 0.81, 0.83], "links", 100.0)
    b = _folder(tmp_path / "massless", [0.70, 0.72, 0.69, 0.75, 0.71, 0.73], "massless", 2.0)
    r = CliRunner().invoke(app, ["sweep", "compare", str(a), str(b), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert {v["value"]: v for v in out["values"]}["limit_m"]["spearman"] == pytest.approx(1.0)
    r = CliRunner().invoke(app, ["sweep", "compare", str(a)])
    assert r.exit_code == 1 and "two sweep folders" in r.output


def test_half_round_limit_source_in_the_table():
    """The mechanism of a half-round point's limit: the source of the first peak above the limit."""
    from trackdyn.experiments.sweep import limit_source

    summ = {"limit_g": 2.5, "peaks": [[1.0, 0.6], [1.5, 2.4], [2.0, 87.7]],
            "peak_sources": [[1.0, "right.roadwheel[0]", 7.1], [1.5, "left.roadwheel[4]", 6.0], [2.0, "hull", 5.5]]}
    assert limit_source(summ) == {"limit_source": "hull", "limit_source_body": "hull", "limit_source_speed_mps": 2.0}
    summ["peaks"][1][1] = 3.0
    assert limit_source(summ)["limit_source"] == "road wheel" and limit_source(summ)["limit_source_speed_mps"] == 1.5
    # how the impact came, from the run of that speed where the summary keeps it
    summ["runs"] = [{"speed_mps": 1.5, "peak_source": {"source": "left.roadwheel[4]", "on_jounce_stop": True,
                                                        "x_from_obstacle_m": 0.31}},
                    {"speed_mps": 2.0, "peak_source": {"source": "hull", "x_from_obstacle_m": 0.05}}]
    got = limit_source(summ)
    assert got["limit_source_on_jounce_stop"] is True and got["limit_source_x_from_obstacle_m"] == 0.31
    summ["peaks"][1][1] = 2.4
    got = limit_source(summ)
    assert got["limit_source_on_jounce_stop"] is None and got["limit_source_x_from_obstacle_m"] == 0.05
    summ["peaks"] = [[1.0, 0.6]]
    assert limit_source(summ) == {} and limit_source({"limit_m": 0.5}) == {}
