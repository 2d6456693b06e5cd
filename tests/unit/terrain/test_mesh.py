"""Triangle meshes and height fields: hierarchy queries, heights, adjacency, files."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trackdyn import terrain as tt
from trackdyn.terrain.kernels import bvh_query

seeds = st.integers(0, 2**31 - 1)


def random_field(rng, nx=9, ny=7):
    x = np.cumsum(rng.uniform(0.1, 0.5, nx))
    y = np.cumsum(rng.uniform(0.1, 0.5, ny))
    z = rng.normal(scale=0.1, size=(nx, ny))
    return tt.HeightField(x, y, z)


@given(seed=seeds)
def test_bvh_returns_every_overlapping_face(seed):
    rng = np.random.default_rng(seed)
    h = random_field(rng)
    V, F = h.vertices, h.faces
    lo = np.minimum(np.minimum(V[F[:, 0]], V[F[:, 1]]), V[F[:, 2]])
    hi = np.maximum(np.maximum(V[F[:, 0]], V[F[:, 1]]), V[F[:, 2]])
    c = rng.uniform(V.min(0), V.max(0))
    half = rng.uniform(0.01, 0.4, 3)
    qmin, qmax = c - half, c + half
    out = np.zeros(len(F), np.int64)
    b = h.bvh
    n = bvh_query(b["bvh_min"], b["bvh_max"], b["bvh_left"], b["bvh_right"], b["bvh_start"], b["bvh_count"],
                  b["bvh_faces"], qmin, qmax, out, np.zeros(64, np.int64))
    brute = set(np.nonzero(np.all(lo <= qmax, 1) & np.all(hi >= qmin, 1))[0].tolist())
    assert brute <= set(out[:n].tolist())


@given(seed=seeds)
def test_height_field_matches_its_mesh(seed):
    rng = np.random.default_rng(seed)
    h = random_field(rng)
    px = rng.uniform(h.x[0], h.x[-1], 50)
    py = rng.uniform(h.y[0], h.y[-1], 50)
    np.testing.assert_allclose(h.height(px, py), tt.TriangleMesh.height(h, px, py), atol=1e-12)
    # at the grid nodes, the given heights
    i, j = rng.integers(0, len(h.x)), rng.integers(0, len(h.y))
    assert h.height(h.x[i], h.y[j]) == pytest.approx(h.z[i, j])


def test_edge_convexity_of_ridge_and_valley():
    V = np.array([[-1, -1, 0], [0, -1, 0.2], [1, -1, 0], [-1, 1, 0], [0, 1, 0.2], [1, 1, 0]], float)
    F = np.array([[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]])
    ridge = tt.TriangleMesh(V, F)
    e = [k for k, ed in enumerate(ridge.edges) if set(ed) == {1, 4}][0]
    assert ridge.edge_convex[e]
    V2 = V.copy()
    V2[[1, 4], 2] = -0.2
    valley = tt.TriangleMesh(V2, F)
    assert not valley.edge_convex[e]
    flat = V.copy()
    flat[:, 2] = 0.0
    assert not tt.TriangleMesh(flat, F).edge_convex[e]


def test_bad_meshes_rejected():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    with pytest.raises(ValueError, match="face indices"):
        tt.TriangleMesh(V, [[0, 1, 3]])
    with pytest.raises(ValueError, match="degenerate"):
        tt.TriangleMesh(np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float), [[0, 1, 2]])
    with pytest.raises(ValueError, match="increase strictly"):
        tt.HeightField([0, 1, 1], [0, 1], np.zeros((3, 2)))


def test_mesh_from_file(tmp_path):
    pytest.importorskip("trimesh")
    p = tmp_path / "ramp.obj"
    p.write_text("v 0 0 0\nv 2 0 0.5\nv 0 1 0\nv 2 1 0.5\nf 1 2 4\nf 1 4 3\n")
    m = tt.TriangleMesh.from_file(p)
    assert m.height(1.0, 0.5) == pytest.approx(0.25)
