"""td.compare: runs aligned on time or distance, differences where the physics changed and nowhere else."""

import json

import numpy as np
import pytest

import trackdyn as td
from trackdyn.viz.compare import align, compare, differing_settings


def _scenario(spec, name):
    from trackdyn.driver import FullThrottle
    from trackdyn.terrain import Flat, Step

    # massless (real-time) fidelity: 1.2 s of driving onto a 0.15 m step costs well under a second
    return td.Scenario(vehicle=spec, terrain=Flat() + Step(0.15, x=2.6), driver=FullThrottle(delay=0.1),
                       t_end=1.2, fidelity="massless", output_step=0.02, name=name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    base = td.vehicles.get("m113")
    heavy = base.replace({"chassis.mass": 1.25 * base.chassis.mass})
    td.run(_scenario(base, "base"), out=d / "base")
    td.run(_scenario(base, "base"), out=d / "again")
    td.run(_scenario(heavy, "heavy"), out=d / "heavy")
    return d


def test_identical_runs_differ_by_exactly_zero(runs, tmp_path):
    c = compare([runs / "base", runs / "again"], series=["chassis.*", "left.roadwheel[*].pos.z"], out=tmp_path)
    assert len(c.metrics) > 20
    assert (c.metrics["rms"] == 0).all() and (c.metrics["max_abs"] == 0).all()
    assert (c.metrics["n"] == len(td.load(runs / "base").t)).all()
    assert c.runs["d_steps"].tolist() == [0, 0]
    assert c.settings == {}  # same vehicle, scenario and settings
    # on distance travelled too
    c = compare([runs / "base", runs / "again"], series=["chassis.pos.z"], on="x")
    assert c.metrics["max_abs"].iloc[0] == 0


def test_a_heavier_hull_sits_lower_and_the_table_says_so(runs, tmp_path):
    base, heavy = td.load(runs / "base"), td.load(runs / "heavy")
    c = compare([runs / "base", runs / "heavy"], series=["chassis.pos.z", "chassis.pos.x", "left.roadwheel[*].pos.z"],
                out=tmp_path / "cmp")
    m = c.metrics.set_index("series")
    # the heavier hull compresses the suspension: its z differs, as the recorded series say
    dz = heavy["chassis.pos.z"] - base["chassis.pos.z"]
    assert m.loc["chassis.pos.z", "max_abs"] == pytest.approx(np.abs(dz).max(), rel=1e-12)
    assert m.loc["chassis.pos.z", "rms"] == pytest.approx(np.sqrt(np.mean(dz ** 2)), rel=1e-12)
    assert m.loc["chassis.pos.z", "max_abs"] > 1e-3
    assert np.mean(dz[len(dz) // 4:]) < 0  # lower on average once settled
    # the wheels ride the same ground: their heights differ far less than the hull's
    assert m.loc["left.roadwheel[2].pos.z", "rms"] < m.loc["chassis.pos.z", "rms"]
    # the mass change is named among the settings that differ, and nothing else of the vehicle
    keys = [k for k in c.settings if k.startswith("vehicle.")]
    assert keys == ["vehicle.chassis.mass"]
    assert c.settings["vehicle.chassis.mass"][1] == pytest.approx(1.25 * c.settings["vehicle.chassis.mass"][0])
    # cost columns come from the metadata
    assert c.runs["steps"].tolist() == [base.metadata["steps"], heavy.metadata["steps"]]
    assert c.runs["d_wall_time_s"].iloc[1] == pytest.approx(heavy.metadata["wall_time_s"] - base.metadata["wall_time_s"])
    # one figure per series group, the tables and the JSON
    names = sorted(p.name for p in (tmp_path / "cmp").iterdir())
    assert names == ["chassis.pos.x.png", "chassis.pos.z.png", "comparison.json", "left.roadwheel.pos.z.png",
                     "metrics.csv", "runs.csv"]
    js = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert js["labels"] == ["base", "heavy"] and len(js["metrics"]) == 7
    text = c.text()
    assert "chassis.pos.z" in text and "vehicle.chassis.mass" in text


def test_the_figure_overlays_both_runs_and_their_difference(runs):
    from trackdyn.viz.compare import compare_figure

    res = [td.load(runs / "base"), td.load(runs / "heavy")]
    c = compare(res, series=["chassis.pos.z"], labels=["base", "heavy"])
    fig = compare_figure(c, res, [r.t for r in res], ["chassis.pos.z"])
    ax, axd = fig.axes[:2]
    assert [ln.get_label() for ln in ax.lines] == ["base", "heavy"]
    assert np.allclose(axd.lines[0].get_ydata(), res[1]["chassis.pos.z"] - res[0]["chassis.pos.z"])


def test_align_interpolates_onto_the_reference_and_drops_what_is_not_shared():
    a_ref = np.linspace(0, 1, 11)
    a = np.linspace(-0.05, 0.73, 27)
    x, yr, yo = align(a_ref, 3 * a_ref + 1, a, 3 * a + 1)
    assert np.allclose(x, a_ref[a_ref <= 0.73]) and np.allclose(yo, yr)  # linear: interpolation is exact
    # a vehicle rolling back (non-monotonic x) keeps its increasing samples
    a = np.array([0.0, 0.5, 0.4, 1.0])
    x, yr, yo = align(np.array([0.25, 0.75]), np.zeros(2), a, np.array([0.0, 1.0, 9.0, 2.0]))
    assert np.allclose(yo, [0.5, 1.5])
    # NaN samples (decimated series) are skipped
    x, yr, yo = align(a_ref, np.where(a_ref > 0.5, np.nan, a_ref), a_ref, a_ref)
    assert len(x) == 6


def test_errors_name_the_problem(runs):
    with pytest.raises(ValueError, match="at least two"):
        compare([runs / "base"])
    with pytest.raises(ValueError, match="on must be"):
        compare([runs / "base", runs / "heavy"], on="y")
    with pytest.raises(ValueError, match="no series common to all runs matches 'nope"):
        compare([runs / "base", runs / "heavy"], series=["nope*"])


def _event(d, fidelity, limit, trials, wall):
    d.mkdir(parents=True)
    summary = {"event": "step-climb", "limit_m": limit, "vehicle": "m113", "fidelity": fidelity,
               "step_size_s": 5e-4 if fidelity == "links" else 1e-2, "wall_time_s": wall, "trials_run": len(trials),
               "trials": [{"value": v, "passed": p, **({} if p else {"mode": m})} for v, p, m in trials]}
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def test_two_step_climb_events_become_one_table_of_trials(tmp_path):
    a = _event(tmp_path / "links", "links", 0.6, [(0.6, True, None), (0.9, False, "hull-strike"),
                                                  (0.75, False, "slip")], 300.0)
    b = _event(tmp_path / "massless", "massless", 0.75, [(0.6, True, None), (0.9, False, "slip"),
                                                         (0.75, True, None)], 12.0)
    c = compare([a, b], out=tmp_path / "cmp")
    head, trials = c.events["headline"], c.events["trials"]
    assert head.loc["limit_m"].tolist() == [0.6, 0.75]
    assert head.loc["fidelity"].tolist() == ["links", "massless"]
    assert trials.index.tolist() == [0.6, 0.75, 0.9]
    assert trials["links"].tolist() == ["pass", "fail: slip", "fail: hull-strike"]
    assert trials["massless"].tolist() == ["pass", "pass", "fail: slip"]
    assert c.runs["d_wall_time_s"].tolist() == [0.0, -288.0]
    assert c.settings["fidelity"] == ["links", "massless"]
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == ["comparison.json", "headline.csv", "runs.csv",
                                                                   "trials.csv", "trials.png"]
    from trackdyn.viz.compare import trials_figure

    ax = trials_figure(c).axes[0]
    passes, fails = ax.collections[0::2], ax.collections[1::2]
    assert [len(p.get_offsets()) for p in passes] == [1, 2] and [len(f.get_offsets()) for f in fails] == [2, 1]
    assert "fail: hull-strike" in c.text()
    with pytest.raises(ValueError, match="mix of event folders"):
        compare([a, _results_like(tmp_path)])


def _results_like(tmp_path):
    d = tmp_path / "res"
    sim = td.Simulation(_pendulum(), step=1e-2, output_step=1e-2)
    sim.run(0.05, out=d)
    return d


def _pendulum():
    from trackdyn.testing import problems as P

    return P.chain(n_links=1, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01))


def test_differing_settings_flattens_and_keeps_only_differences():
    a = {"vehicle": {"chassis": {"mass": 1.0, "com": [0, 0, 1]}}, "settings": {"step": 1e-3}, "fidelity": {"name": "links"}}
    b = {"vehicle": {"chassis": {"mass": 2.0, "com": [0, 0, 1]}}, "settings": {"step": 1e-3}, "fidelity": {"name": "massless"}}
    assert differing_settings([a, b]) == {"fidelity.name": ["links", "massless"], "vehicle.chassis.mass": [1.0, 2.0]}
