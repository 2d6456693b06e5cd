"""The joints' geometric stiffness added in closed form equals the generic element path.

:func:`trackdyn.mbs._force_kernels.constraint_stiffness_add` writes the
blocks of CD and DP1 rows in closed form and takes the generic path for the
other rows; the reference is :func:`constraint_stiffness_eval` (whose Jacobian
is checked against finite differences in test_constraint_jacobians.py)
followed by :func:`scatter_elements`.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.mbs import _force_kernels as FK
from trackdyn.testing import problems as P

BUILDERS = {"chain": lambda: P.chain(n_links=6), "slider_crank": P.slider_crank,
            "four_bar": lambda: P.four_bar()[0]}


def reference(s, lam, cK, v):
    s.constraint_forces(lam)
    f = np.zeros((s.nb, 6))
    data = np.zeros(s.pattern.nnz)
    kxv = np.zeros((s.nb, 6))
    FK.scatter_elements(s.row_body, s._cs_Q, s._cs_Kx, s._cs_Kv, s.row_slot12, cK, 0.0, v, f, data, f, kxv)
    return data, kxv


@pytest.mark.parametrize("joint_coupling", ["diagonal", "full"])
@pytest.mark.parametrize("builder", sorted(BUILDERS))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_closed_form_matches_generic_path(builder, joint_coupling, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = AbsoluteSystem(BUILDERS[builder](), joint_coupling=joint_coupling)
    rng = np.random.default_rng(seed)
    q = s.q0.copy()
    q[:, 3:] += 0.2 * rng.normal(size=(s.nb, 4))
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1)[:, None]
    q[:, :3] += 0.1 * rng.normal(size=(s.nb, 3))
    v = rng.normal(size=(s.nb, 6))
    s.update_kinematics(q, v)
    s.update_drivers(float(rng.uniform(0, 1)))
    lam = 100.0 * rng.normal(size=s.nc)
    lam[rng.random(s.nc) < 0.2] = 0.0
    cK = float(rng.uniform(1e-8, 1e-4))
    d_ref, k_ref = reference(s, lam, cK, v)
    data = np.zeros(s.pattern.nnz)
    s.Kxv[:] = 0.0
    s.add_constraint_stiffness(lam, cK, data, v)
    assert np.abs(data - d_ref).max() <= 1e-12 * max(1.0, np.abs(d_ref).max())
    assert np.abs(s.Kxv - k_ref).max() <= 1e-12 * max(1.0, np.abs(k_ref).max())
    if joint_coupling == "full":
        assert np.all(s.Kxv == 0.0)
