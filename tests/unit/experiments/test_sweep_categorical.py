"""Sweep figures over non-numeric axes (hull = [false, true], scenario.contact.implicit = [false, true]): a bar
per value with the first failure's mode, failed / refused points marked; hand-made tables, no simulation."""

import pandas as pd
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

from trackdyn.experiments.sweep import builtin_sweeps, load_sweep, sweep_figures, sweep_from_dict


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_a_boolean_axis_gives_a_bar_per_value_with_the_failure_mode(tmp_path):
    s = load_sweep(builtin_sweeps()["m113-step-hull"])
    # a step-climb point's row (sweep_table: the summary's scalars): the limit, the first failure's mode
    rows = [{"point": "hull=False", "hull": False, "status": "ok", "limit_m": 0.83, "failure_mode": "stalled",
             "limited_by": "track slip", "search_status": "found", "sim_time_s": 61.0},
            {"point": "hull=True", "hull": True, "status": "ok", "limit_m": 0.61, "failure_mode": "nose-in",
             "limited_by": "geometry", "search_status": "found", "sim_time_s": 58.0}]
    figs = sweep_figures(s, pd.DataFrame(rows), out=tmp_path)
    assert set(figs) == {"limit_m", "sim_time_s"}
    assert (tmp_path / "figures" / "limit_m.png").exists()
    ax = figs["limit_m"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["false", "true"]  # the grid's order
    assert ax.get_xlabel() == "hull" and ax.get_ylabel() == "limit_m"
    assert ax.get_title() == "m113-step-hull: limit_m"
    bars = _bars(ax)
    assert len(bars) == 2
    assert [b.get_height() for b in sorted(bars, key=lambda b: b.get_x())] == [0.83, 0.61]
    texts = _texts(ax)
    assert "0.83\nfirst failure: stalled\nlimited by: track slip" in texts
    assert "0.61\nfirst failure: nose-in\nlimited by: geometry" in texts
    assert ax.get_ylim()[1] > 0.83  # the bars and their labels fit
    # a mode that is its own mechanism is said once
    rows[0].update(failure_mode="torque-limited", limited_by="torque-limited")
    ax = sweep_figures(s, pd.DataFrame(rows))["limit_m"].axes[0]
    assert "0.83\nfirst failure: torque-limited" in _texts(ax)


def test_failed_refused_and_valueless_points_are_marked(tmp_path):
    s = sweep_from_dict({"name": "t", "vehicle": "m113", "event": "step-climb",
                         "grid": {"scenario.contact.implicit": [False, True], "hull": [False, True]},
                         "options": {"search": "bisect", "lo": 0.3, "hi": 1.0},
                         "figures": {"values": ["limit_m"]}})
    rows = [
        {"point": "a", "scenario.contact.implicit": False, "hull": False, "status": "failed",
         "error": "EventDiverged: ...", "error_type": "EventDiverged", "limit_m": None},
        {"point": "b", "scenario.contact.implicit": False, "hull": True, "status": "refused",
         "error": "GeometryError: ...", "error_type": "GeometryError", "limit_m": None},
        {"point": "c", "scenario.contact.implicit": True, "hull": False, "status": "ok", "limit_m": None,
         "search_status": "below-range", "failure_mode": "stalled", "limited_by": "undetermined"},
        # (True, True) not run yet
    ]
    figs = sweep_figures(s, pd.DataFrame(rows))
    ax = figs["limit_m"].axes[0]
    assert len(_bars(ax)) == 0
    markers = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(markers) == 3 and all(len(c.get_offsets()) == 1 for c in markers)  # one per point that ran
    assert sorted(float(c.get_offsets()[0][0]) for c in markers) == [0.0, 1.0, 2.0]
    texts = _texts(ax)
    assert "failed: EventDiverged" in texts and "refused (geometry)" in texts and "not run" in texts
    assert "no value: below-range\nfirst failure: stalled\nlimited by: undetermined" in texts
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "scenario.contact.implicit=false\nhull=false", "scenario.contact.implicit=false\nhull=true",
        "scenario.contact.implicit=true\nhull=false", "scenario.contact.implicit=true\nhull=true"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["failed", "refused (geometry)", "no value"]


def test_a_string_axis_is_categorical_too():
    s = sweep_from_dict({"name": "t", "vehicle": "m113", "event": "step-climb",
                         "grid": {"spec.materials.pad.law": ["hertz", "hooke"]},
                         "figures": {"values": ["limit_m"]}})
    df = pd.DataFrame([{"point": "a", "spec.materials.pad.law": "hertz", "status": "ok", "limit_m": 0.8},
                       {"point": "b", "spec.materials.pad.law": "hooke", "status": "ok", "limit_m": 0.7}])
    ax = sweep_figures(s, df)["limit_m"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["hertz", "hooke"]
    assert sorted(b.get_height() for b in _bars(ax)) == [0.7, 0.8]
    assert "0.8" in _texts(ax) and "0.7" in _texts(ax)  # no failure mode in these rows: the value alone
