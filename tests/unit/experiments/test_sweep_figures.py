"""Sweep figures: heatmaps over the two geometry axes, one per value of a third axis (the half-round
height), refused points marked on them."""

import pandas as pd

from trackdyn.experiments.sweep import sweep_figures, sweep_from_dict


def test_a_third_axis_gives_one_heatmap_per_value_with_refused_points_marked(tmp_path):
    s = sweep_from_dict({"vehicle": "m113", "event": "half-round",
                         "grid": {"sprocket.dx": [-0.2, 0.0], "sprocket.dz": [0.0, 0.1],
                                  "event.height_in": [8, 10]},
                         "figures": {"values": ["limiting_speed_mps"]}})
    rows = []
    for p in s.points():
        q = p["params"]
        refused = q["sprocket.dx"] == -0.2 and q["sprocket.dz"] == 0.0
        rows.append({"point": p["id"], **q, "status": "refused" if refused else "ok",
                     "limiting_speed_mps": None if refused else 3.0 + q["sprocket.dz"] - 0.1 * q["event.height_in"]})
    figs = sweep_figures(s, pd.DataFrame(rows), out=tmp_path)
    assert set(figs) == {f"limiting_speed_mps{kind}__event.height_in=p{h}" for kind in ("", "_by_axis")
                         for h in (8, 10)}
    import numpy as np
    from matplotlib.collections import QuadMesh

    for h in (8, 10):
        stem = f"limiting_speed_mps__event.height_in=p{h}"
        ax = figs[stem].axes[0]
        assert f"event.height_in=p{h}" in ax.get_title() and (tmp_path / "figures" / f"{stem}.png").exists()
        assert "refused (geometry)" in [t.get_text() for t in ax.get_legend().get_texts()]
        mesh, = [c for c in ax.collections if isinstance(c, QuadMesh)]
        Z = np.ma.filled(mesh.get_array().reshape(2, 2).astype(float), np.nan)  # rows dz 0, 0.1; columns dx -0.2, 0
        expect = np.array([[np.nan, 3.0 - 0.1 * h], [3.1 - 0.1 * h, 3.1 - 0.1 * h]])
        np.testing.assert_allclose(Z, expect)  # the facet's own values, the refused cell blank


def test_one_axis_at_a_time_figure_and_out_of_range_cells(tmp_path):
    """korner-2024 Figs. 5.3/5.7 kind: the value against dz (a line per dx) and against dx (a line per dz);
    a point whose search passed every speed is drawn as above the range (at its top), not left out."""
    import numpy as np

    speeds = [1.0, 2.0, 3.0]
    s = sweep_from_dict({"vehicle": "m113", "event": "half-round",
                         "grid": {"sprocket.dx": [-0.1, 0.0, 0.1], "sprocket.dz": [0.0, 0.1]},
                         "options": {"speeds": speeds}, "figures": {"values": ["limiting_speed_mps"]}})
    rows = []
    for p in s.points():
        q = p["params"]
        top = q["sprocket.dx"] == 0.1 and q["sprocket.dz"] == 0.0
        rows.append({"point": p["id"], **q, "status": "ok", "limit_status": "above-range" if top else "found",
                     "limiting_speed_mps": None if top else 1.5 + q["sprocket.dx"] + 2 * q["sprocket.dz"]})
    figs = sweep_figures(s, pd.DataFrame(rows), out=tmp_path)
    assert set(figs) == {"limiting_speed_mps", "limiting_speed_mps_by_axis"}
    assert (tmp_path / "figures" / "limiting_speed_mps_by_axis.png").exists()
    left, right = figs["limiting_speed_mps_by_axis"].axes[:2]
    lines = [ln for ln in left.lines if ln.get_linestyle() != "None"]
    assert [ln.get_label() for ln in lines] == ["-0.1", "+0", "+0.1"]  # a line per dx, against dz
    np.testing.assert_allclose(lines[0].get_ydata(), [1.4, 1.6])
    np.testing.assert_allclose(lines[2].get_ydata(), [np.nan, 1.8])  # the above-range cell breaks the line
    marks = [ln for ln in right.lines if ln.get_marker() == "^"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [0.1] and list(marks[0].get_ydata()) == [3.0]
    heat = figs["limiting_speed_mps"].axes[0]
    assert "above the range searched (1 .. 3)" in [t.get_text() for t in heat.get_legend().get_texts()]
