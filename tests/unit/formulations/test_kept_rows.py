"""The constraint rows ``AbsoluteSystem`` keeps of redundant closed loops stay independent as the loops move.

A planar loop of 3-D revolutes has three redundant rows (its self-equilibrated out-of-plane reactions). The rows
dropped are the closing joint's out-of-plane translation row and its two perpendicularity rows, a set that stays
independent of the kept rows at every pose (docs/recursive.md, "The rows kept of redundant loops"); three
perpendicularity rows of three joints, which the global pivoted QR used to pick, lose rank when their moment axes
meet in one point. The references here are independent of the row choice: the recursive formulation
(relative joint coordinates, its own cut rows) and every one of the loops' rows, the dropped ones included.
"""

from __future__ import annotations

import warnings

import numpy as np
from _recursive_helpers import absolute
from test_recursive_spatial import spatial, sprung_hull_with_two_loops

from trackdyn.formulations.absolute import AbsoluteSystem, RedundantConstraintWarning
from trackdyn.integrators import make_integrator
from trackdyn.integrators.recursive import RecursiveRK4
from trackdyn.testing.problems import chain_loop


def _dropped(a):
    """(joint name, row index within the joint) of every row ``a`` dropped."""
    out = []
    for r in sorted(set(range(len(a._all_rows))) - set(a.row_index.tolist())):
        jk = a._all_row_joint[r]
        first = int(np.argmax(a._all_row_joint == jk))
        out.append((a.model.joints[jk].name, r - first))
    return out


def test_planar_loops_drop_the_closing_joints_out_of_plane_rows():
    """The chain loop (two loops: the links' ring, and wheel, links, wheel through the ground) and the sprung
    hull drop, per loop, rows 1 (the world y translation: the loops' normal) and 3, 4 (the two DP1 rows) of the
    joint that closes it, in model order."""
    a = absolute(chain_loop())
    assert _dropped(a) == [(j, k) for j in ("pin[63]", "wheel_b.rim") for k in (1, 3, 4)]
    h = absolute(sprung_hull_with_two_loops())
    assert _dropped(h) == [(f"{side}.{j}", k) for side in ("left", "right")
                           for j in ("pin[63]", "wheel_b.rim") for k in (1, 3, 4)]


def test_sprung_hull_absolute_rk4_runs_past_the_former_stop():
    """The absolute RK4 (coordinate partitioning of the kept rows) on the sprung hull, h = 1e-4 through 0.2 s:
    it stopped at 0.1821 s ("dependent velocities") while its kept rows' smallest singular value (unit rows) fell
    from 2.1e-2 to zero; now its lowest is 8.15e-3 (asserted >= 5e-3 every 20 ms), every one of
    the 680 rows of the loops, the 12 dropped ones included, holds to 1e-9 (measured 2.3e-12), and every centre
    stays within 1e-9 m of recursive-rk4 (measured 5.3e-11 m). The KKT regularisation is 1e-14 here: its bias
    (δ λ through the kept rows) alone parts the two by 5.3e-9 m at 0.2 s at the default 1e-12, 100 times this
    figure, whatever h (docs/recursive.md)."""
    model = sprung_hull_with_two_loops()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RedundantConstraintWarning)
        a = AbsoluteSystem(model, regularization=1e-14)
    every = AbsoluteSystem(model, remove_redundant=False)  # all the rows: the dropped ones are checked too
    assert (a.nc, every.nc) == (668, 680)
    rec = spatial(model)
    ia, ir = make_integrator("rk4", a, 1e-4), RecursiveRK4(rec, 1e-4)
    sa, sr = a.initial_state(), rec.initial_state()
    err = worst_phi = 0.0
    smallest = np.inf
    for k in range(2000):
        sa, sr = ia.step(sa), ir.step(sr)
        err = max(err, float(np.max(np.linalg.norm(sa.q[:, :3] - sr.q[:, :3], axis=1))))
        if k % 10 == 9:
            every.update_kinematics(sa.q, sa.v)
            every.eval_constraints()
            worst_phi = max(worst_phi, float(np.max(np.abs(every.phi))))
        if k % 200 == 199:
            J = every.dense_jacobian()[a.row_index]
            smallest = min(smallest, np.linalg.svd(J / np.linalg.norm(J, axis=1)[:, None], compute_uv=False)[-1])
    assert abs(sa.t - 0.2) < 1e-9 and abs(sr.t - 0.2) < 1e-9
    assert np.max(np.abs(sa.q[0, 4:6])) > 1e-3  # the hull has rolled and pitched: the loops left their plane
    print(f"centres {err:.3g} m, rows {worst_phi:.3g}, smallest singular value {smallest:.3g}")
    assert smallest >= 5e-3, smallest
    assert worst_phi <= 1e-9, worst_phi
    assert err <= 1e-9, err


def test_rows_without_redundancy_are_all_kept():
    """An open chain keeps every row, no warning (the selection by joint runs only when rows depend)."""
    from trackdyn.testing.problems import chain

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = AbsoluteSystem(chain(8))
    assert a.removed_rows == [] and a.nc == len(a._all_rows)
