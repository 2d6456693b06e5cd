"""The massless track on the terrains of the contact issue: stairs, meshes through the BVH, profiles, planes.

A terrain given two ways (a profile piece and the same shape as a triangle
mesh, sliced through the bounding-volume hierarchy, §3.2) must give the same
track forces; the ``Stairs`` piece must be the flight it describes.
"""

import functools
import math

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn import terrain as tt
from trackdyn.assembly.builder import vehicle_geometry
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.contact.massless import _kernels as K
from trackdyn.assembly.massless import build_massless
from trackdyn.contact.massless.track import MasslessTrack


def test_stairs_piece_is_the_flight_it_describes():
    st = tt.Stairs(riser=0.17, tread=0.28, n=5, x=2.0)
    ground = tt.Flat() + st
    assert st.extent == pytest.approx(4 * 0.28)
    assert st.pitch == pytest.approx(math.atan2(0.17, 0.28))
    for k in range(5):
        x = 2.0 + k * 0.28 + 0.1  # on tread k
        assert float(ground.height(x)) == pytest.approx(0.17 * (k + 1))
    assert float(ground.height(1.9)) == pytest.approx(0.0)
    assert float(ground.height(2.0 + 4 * 0.28 + 2.0)) == pytest.approx(0.85)  # the landing
    assert st.nosings() == [pytest.approx((2.0 + k * 0.28, 0.17 * (k + 1))) for k in range(5)]


@pytest.mark.parametrize("kw, what", [({"riser": 0.0}, "riser"), ({"tread": -0.1}, "tread"), ({"n": 0}, "n"),
                                      ({"n": 2.5}, "n")])
def test_stairs_refuse_bad_input(kw, what):
    with pytest.raises(ValueError, match=what):
        tt.Stairs(**kw)


@functools.lru_cache(maxsize=None)
def _robot():
    spec = S.get("robot")
    return spec, vehicle_geometry(spec)


def _forces(terrain, origin):
    spec, geo = _robot()
    vm = build_massless(spec, origin=origin, geometry=geo)
    tr = MasslessTrack(vm, terrain)
    system = AbsoluteSystem(vm.model, providers=[tr])
    nb = system.nb
    v = np.zeros((nb, 6))
    v[:, 0] = 0.3  # rolling: friction acts
    system.update_kinematics(system.q0, v)
    tr.evaluate(system.kin)
    f = np.zeros((nb, 6))
    K.scatter_absolute(tr.roles, tr.blk, tr.Q, tr.Kx, tr.Kv, tr.on, tr.slot, 0.0, 0.0, v, f, np.zeros(1),
                       np.zeros((nb, 6)), np.zeros((nb, 6)), False)
    return f, tr.wout[:, 0].copy(), tr


def _step_mesh(x0, h, length=3.0, half_width=3.0):
    """A block x0..x0+length, |y| <= half_width, 0..h: its top and front faces (counter-clockwise outside)."""
    V = np.array([[x0, -half_width, 0.0], [x0, half_width, 0.0], [x0, half_width, h], [x0, -half_width, h],
                  [x0 + length, -half_width, h], [x0 + length, half_width, h]])
    F = np.array([[0, 3, 2], [0, 2, 1],      # front face, outward -x
                  [3, 4, 5], [3, 5, 2]])     # top, outward +z
    return tt.TriangleMesh(V, F)


@pytest.mark.parametrize("x_step", [0.30, 0.345, 0.44])
def test_a_step_as_a_mesh_gives_the_forces_of_the_profile_step(x_step):
    """Wheels over the edge, on the top and the irregularity in front of the riser: mesh == profile."""
    h = 0.05
    origin = (0.0, 0.0, 0.105 - 0.003 + h)  # road wheels 3 mm into the step's top, well above the ground
    f_prof, n_prof, tr = _forces(tt.Flat() + tt.Step(h, x=x_step), origin)
    f_mesh, n_mesh, _ = _forces(tt.Flat() + _step_mesh(x_step, h), origin)
    assert n_prof.sum() > 0
    assert np.count_nonzero(n_prof) >= 3
    scale = np.abs(f_prof).max()
    assert np.max(np.abs(f_mesh - f_prof)) <= 1e-9 * scale
    assert np.max(np.abs(n_mesh - n_prof)) <= 1e-9 * n_prof.max()


def test_inclined_plane_carries_the_weight_along_its_normal():
    """On a 10° incline the static track loads are normal to the plane; a plane terrain, no profile."""
    spec, geo = _robot()
    slope = math.radians(10.0)
    ground = tt.Plane.incline(slope)
    vm = build_massless(spec, geometry=geo)
    tr = MasslessTrack(vm, ground)
    system = AbsoluteSystem(vm.model, providers=[tr])
    # put the robot on the plane: rotate the whole model about y by -slope (nose up) and lift it
    from trackdyn.math.quaternion import quat_mul

    q = system.q0.copy()
    c, s = math.cos(-slope / 2), math.sin(-slope / 2)
    rot = np.array([c, 0.0, s, 0.0])
    Ry = np.array([[math.cos(slope), 0, -math.sin(slope)], [0, 1, 0], [math.sin(slope), 0, math.cos(slope)]])
    for b in range(system.nb):
        q[b, :3] = Ry @ q[b, :3]
        q[b, 3:] = quat_mul(rot, q[b, 3:])
    # lowest road wheel point 2 mm into the plane
    R = vm.layout.wheel_radius[vm.layout.wheel_body.index("left.roadwheel[0]")]
    idx = [system.body_names.index(w) for w in vm.layout.wheel_body if "roadwheel" in w]
    n_plane = np.array([-math.sin(slope), 0.0, math.cos(slope)])
    gap = min(float(n_plane @ q[b, :3]) for b in idx) - R  # the plane passes through the origin
    q[:, :3] -= (gap + 0.002) * n_plane
    system.update_kinematics(q, np.zeros((system.nb, 6)))
    tr.evaluate(system.kin)
    F = tr.tout  # total ground force on the vehicle (N, world)
    assert np.linalg.norm(F) > 0
    # normal forces only at rest (no slip): the total is along the plane's normal
    assert np.linalg.norm(np.cross(F, n_plane)) <= 1e-9 * np.linalg.norm(F)
