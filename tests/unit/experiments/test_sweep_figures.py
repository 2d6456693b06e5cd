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
    assert set(figs) == {"limiting_speed_mps__event.height_in=p8", "limiting_speed_mps__event.height_in=p10"}
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
