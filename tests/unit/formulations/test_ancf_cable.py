"""ANCF cable elements (wallin-shabana-2013 §8): the element against closed forms.

- the elastic force is minus the gradient of the elastic energy and its Jacobian matches finite differences
  (random large deformations: the exact curvature's every term counts);
- the mass matrix is eq. 18 (Gauss quadrature of ρA SᵀS) and carries the mass in translation;
- a simply supported steel beam sags under gravity by the Euler-Bernoulli 5 q L⁴ / (384 EI) (within 1 %);
- its axial waves travel at √(E/ρ) (within 2 %): the fixed-free bar's axial frequencies are (2n-1) c / (4 L).
"""

import math

import numpy as np
import pytest

from trackdyn.formulations import _ancf_kernels as AK
from trackdyn.formulations.ancf import STEEL, CableMesh, element_mass, gauss_legendre

# a steel bar of the paper's steel; b x h cross-section, h vertical (bending in the x-z plane)
B_WIDTH, H_DEPTH = 0.05, 0.02
AREA = B_WIDTH * H_DEPTH
I_BEND = B_WIDTH * H_DEPTH**3 / 12.0


def _fd(fun, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d[i] = eps
        cols.append((np.asarray(fun(x + d)) - np.asarray(fun(x - d))) / (2 * eps))
    return np.array(cols).T


@pytest.mark.parametrize("seed", range(5))
def test_elastic_force_and_jacobian_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    m = CableMesh.straight([0, 0, 0], [1.0, 0.2, -0.1], 3, area=1e-3, inertia=2e-7)
    q = m.q0.ravel() + rng.normal(scale=0.1, size=m.n_dof)
    Q, K = m.elastic(q)
    K = K.toarray()
    grad = _fd(lambda x: m.elastic_energy(x), q)
    assert np.abs(Q + grad).max() < 1e-7 * np.abs(Q).max()
    Kfd = _fd(lambda x: m.elastic(x)[0], q)
    assert np.abs(K - Kfd).max() < 1e-7 * np.abs(K).max()
    assert np.abs(K - K.T).max() < 1e-12 * np.abs(K).max()


def test_straight_stress_free_cable_has_no_force_and_rigid_motion_costs_nothing():
    m = CableMesh.straight([0, 0, 0], [2.0, 0, 0], 4, area=AREA, inertia=I_BEND)
    Q, _ = m.elastic(m.q0)
    assert np.abs(Q).max() < 1e-6
    # a rigid rotation of positions and gradients and a translation: still stress-free
    c, s = math.cos(0.7), math.sin(0.7)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    q = m.q0.copy()
    q[:, :3] = q[:, :3] @ R.T + [0.3, -1.0, 2.0]
    q[:, 3:] = q[:, 3:] @ R.T
    assert abs(m.elastic_energy(q)) < 1e-6 and np.abs(m.elastic(q)[0]).max() < 1e-5


def test_mass_matrix_is_the_quadrature_of_shape_functions_and_carries_the_mass():
    l, rho_a = 0.7, 3.0
    x, w = gauss_legendre(6)
    M = np.zeros((12, 12))
    for xi, wi in zip(x, w):
        s, _, _ = AK.hermite(xi, l)
        S = np.kron(s[None, :], np.eye(3))
        M += wi * l * rho_a * S.T @ S
    assert np.allclose(M, element_mass(l, rho_a), rtol=0, atol=1e-14)
    mesh = CableMesh.straight([0, 0, 0], [3.0, 0, 0], 5, area=AREA, inertia=I_BEND)
    u = np.zeros((mesh.n_node, 6))
    u[:, 2] = 1.0  # unit translation along z: positions move, gradients do not
    mass = STEEL.rho * AREA * 3.0
    assert u.ravel() @ (mesh.M @ u.ravel()) == pytest.approx(mass, rel=1e-12)
    assert mesh.gravity_force().reshape(-1, 6)[:, 2].sum() == pytest.approx(-9.81 * mass, rel=1e-12)


def test_simply_supported_beam_sags_like_euler_bernoulli():
    """A 4 m steel bar on a pin (x = 0) and a roller (x = L) under its weight: mid-span sag within 1 % of
    5 q L⁴ / (384 EI) (q = ρ A g), about 38 mm."""
    L, n_el = 4.0, 8
    m = CableMesh.straight([0, 0, 0], [L, 0, 0], n_el, area=AREA, inertia=I_BEND)
    last = m.n_node - 1
    fixed = [0, 1, 2, 6 * last + 1, 6 * last + 2]  # pin: r(0); roller: r_y, r_z at x = L
    q = m.static(fixed)
    mid = q[n_el // 2, 2]
    closed = 5.0 * STEEL.rho * AREA * 9.81 * L**4 / (384.0 * STEEL.E * I_BEND)
    assert -mid == pytest.approx(closed, rel=0.01), (mid, closed)
    # and a coarser mesh converges towards it: Hermite beams are exact at the nodes for the linear beam
    assert abs(-mid / closed - 1.0) < 2e-3


def test_axial_wave_speed_is_sqrt_e_over_rho():
    """A 2 m bar held at x = 0 (its position; the gradient, i.e. the strain there, stays free), every
    transverse coordinate held (pure axial motion): its axial natural frequencies are (2n-1) c / (4 L),
    c = √(E/ρ) = 5064 m/s; the first two give c within 2 % (measured: 2e-10 and 2e-7 with 10 elements)."""
    L, n_el = 2.0, 10
    m = CableMesh.straight([0, 0, 0], [L, 0, 0], n_el, area=AREA, inertia=I_BEND)
    fixed = [0, 1, 2] + [6 * k + j for k in range(m.n_node) for j in (1, 2, 4, 5)]
    f = m.modes(sorted(set(fixed)), n=2)
    c = math.sqrt(STEEL.E / STEEL.rho)
    assert 4.0 * L * f[0] == pytest.approx(c, rel=0.02), (f, c)
    assert 4.0 * L * f[1] / 3.0 == pytest.approx(c, rel=0.02), (f, c)
    assert abs(4.0 * L * f[0] / c - 1.0) < 1e-6  # the Hermite cubic is far inside the acceptance


def test_axial_wave_front_travels_at_sqrt_e_over_rho():
    """Time domain: a step force F on the free end of the same bar (pure axial motion, trapezoidal rule,
    Newton each step). The end moves at the impedance speed F / (ρ A c) until the wave, reflected at the
    held end, comes back at 2 L / c, where the end's displacement peaks at 2 F L / (EA): c from the end's
    speed within 2 % and the peak's time within 2 % of 2 L / c."""
    L, n_el, F = 2.0, 20, 1e4
    m = CableMesh.straight([0, 0, 0], [L, 0, 0], n_el, area=AREA, inertia=I_BEND)
    fixed = sorted(set([0, 1, 2] + [6 * k + j for k in range(m.n_node) for j in (1, 2, 4, 5)]))
    end = 6 * (m.n_node - 1)

    def load(t):
        f = np.zeros(m.n_dof)
        f[end] = F
        return f

    c = math.sqrt(STEEL.E / STEEL.rho)
    t_back = 2.0 * L / c
    t, q = m.newmark(fixed, h=t_back / 200, n_steps=300, load=load)
    u = q[:, -1, 0] - L
    k = int(np.argmax(u))
    assert t[k] == pytest.approx(t_back, rel=0.02), (t[k], t_back)
    assert u[k] == pytest.approx(2.0 * F * L / (STEEL.E * AREA), rel=0.02)
    window = (t > 0.1 * t_back) & (t < 0.9 * t_back)
    speed = np.polyfit(t[window], u[window], 1)[0]
    assert F / (STEEL.rho * AREA * speed) == pytest.approx(c, rel=0.02)


def test_closed_loop_mesh_joins_its_last_element_to_its_first():
    """A track loop of 16 pins on a 0.3 m circle: 16 nodes, 16 elements, the last ending at node 0 (the ANCF
    pin r^i = r^j, r_x^i = r_x^j by numbering); its mass is ρA times the chords' length and its elastic
    energy (bending of a straight-at-rest cable into the loop) is unchanged by a rigid motion."""
    n, R = 16, 0.3
    ang = 2 * np.pi * np.arange(n) / n
    pins = np.c_[R * np.cos(ang), np.zeros(n), R * np.sin(ang)]
    m = CableMesh.closed_loop(pins, area=AREA, inertia=I_BEND)
    assert m.n_node == n and m.n_el == n and tuple(m.conn[-1]) == (n - 1, 0)
    chord = 2 * R * math.sin(math.pi / n)
    u = np.zeros((n, 6))
    u[:, 0] = 1.0
    assert u.ravel() @ (m.M @ u.ravel()) == pytest.approx(STEEL.rho * AREA * n * chord, rel=1e-12)
    U0 = m.elastic_energy(m.q0)
    assert U0 > 0
    c, s = math.cos(1.1), math.sin(1.1)
    Rm = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    q = m.q0.copy()
    q[:, :3] = q[:, :3] @ Rm.T + [1.0, 2.0, 3.0]
    q[:, 3:] = q[:, 3:] @ Rm.T
    assert m.elastic_energy(q) == pytest.approx(U0, rel=1e-9)
