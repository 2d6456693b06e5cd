"""Where a scenario's vehicle starts and what drives it: shared by every fidelity's builder.

:func:`vehicle_placement` puts the vehicle frame so that its lowest pad is
``scenario.drop`` above the highest ground under the tracks, with the one
derived geometry of the run (:func:`~trackdyn.assembly.builder.vehicle_geometry`,
computed once); :func:`vehicle_drivetrain` wires the spec's powertrain to a
built model. :func:`default_terrain` is the ground of a scenario that names
none.
"""

from __future__ import annotations

import numpy as np

from ..materials import Material
from ..powertrain import Drivetrain
from ..terrain import Flat
from .builder import vehicle_geometry

__all__ = ["vehicle_placement", "vehicle_drivetrain", "default_terrain"]


def default_terrain():
    """NG-NRMM rigid ground: μ 0.8, E 20 GPa (concrete), korner-2024 §4.2."""
    return Flat(material=Material("concrete", young=2e10, poisson=0.3, restitution=0.1, friction=0.8))


def _ground_under(terrain, x0: float, x1: float, ys) -> float:
    xs = np.linspace(x0, x1, 200)
    return float(max(np.max([terrain.height(x, y) for x in xs]) for y in ys))


def vehicle_placement(sc):
    """``(spec, terrain, geometry, z0)`` of a scenario: the origin height z0 puts the lowest pad
    ``sc.drop`` above the highest ground under the tracks (shared by every fidelity level)."""
    spec = sc.vehicle_spec()
    terrain = sc.terrain if sc.terrain is not None else default_terrain()
    geo = vehicle_geometry(spec)
    xs = np.concatenate([t.pins[:, 0] for t in geo.tracks.values()])
    y = spec.tracks.lateral_offset
    ground = _ground_under(terrain, sc.start_x + xs.min(), sc.start_x + xs.max(), (y, -y))
    return spec, terrain, geo, ground + sc.drop - geo.ground_z()


def vehicle_drivetrain(spec, idx, sides, driver):
    """The spec's powertrain on a built model (``idx``: body name → index; ``sides``: side infos).

    A map against track speed (``map_speed = "track"``) is read at the
    sprocket's speed times its pin-circle (assembly) radius.
    """
    scale = spec.sprocket.assembly_radius if spec.powertrain.map_speed == "track" else 1.0
    return Drivetrain(idx["chassis"], (idx[sides["left"].sprocket], idx[sides["right"].sprocket]),
                      spec.powertrain.torque_map, spec.powertrain.brake_torque, driver, map_scale=scale)
