"""``scene.json``: what a results folder needs to be drawn without the model.

A scene lists, per body name, the visual shapes attached with
:meth:`Model.add_visual <trackdyn.mbs.model.Model.add_visual>` (body-frame
``to_dict()`` forms, see :mod:`trackdyn.mbs.visuals`), the body masses (the
viewers follow the heaviest body by default), the shapes fixed to the ground,
and the terrain to draw::

    {"version": 1,
     "bodies": [{"name": "chassis", "mass": 10800.0, "shapes": [{"type": "box", ...}]}, ...],
     "ground_shapes": [...],
     "terrain": {"type": "profile", "x": [...], "z": [...], "y": [-2.0, 2.0]} | null}

Terrain descriptions (world frame, m):

- ``{"type": "profile", "x": [...], "z": [...], "y": [y_min, y_max]}``: a
  polyline in the x–z plane ordered along the path (a height profile z(x);
  a vertical step repeats an x), constant beyond its ends, the same for every
  y in ``y`` (default ±2 m);
- ``{"type": "heightfield", "x": [nx], "y": [ny], "z": [ny][nx]}``: heights
  on a grid.

A terrain object plugs in by a ``to_scene()`` method that returns one of these
dicts, or by a ``profile(x0, x1) -> (x, z)`` drawing polyline (as
:class:`trackdyn.terrain.Terrain` has); :func:`terrain_to_scene` also accepts
the dict itself or a pair of arrays ``(x, z)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["SCENE_VERSION", "scene_from_model", "terrain_to_scene", "find_terrain", "read_scene"]

SCENE_VERSION = 1


def _finite_list(x, what, ndim):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected numbers, got {x!r}") from None
    if a.ndim != ndim or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected a non-empty {ndim}-d array of finite numbers, got shape {a.shape}")
    return a


def terrain_to_scene(terrain, x_range=(-10.0, 10.0), y_range=(-2.0, 2.0)) -> dict | None:
    """A terrain description for ``scene.json`` (see the module docstring), or ``None``.

    Parameters
    ----------
    terrain : None, dict, (x, z) pair, or an object with ``to_scene()`` or ``profile(x0, x1)``
        A ``profile(x0, x1) -> (x, z)`` (as :class:`trackdyn.terrain.Terrain`
        has) is sampled over ``x_range`` and drawn across ``y_range``.
    x_range, y_range : (float, float)
        World extent to draw, m (the recorder passes the bodies' range plus a margin).
    """
    if terrain is None:
        return None
    if hasattr(terrain, "to_scene"):
        terrain = terrain.to_scene()
    elif hasattr(terrain, "profile") and callable(terrain.profile):
        x, z = terrain.profile(float(x_range[0]), float(x_range[1]))
        terrain = {"type": "profile", "x": x, "z": z, "y": list(y_range),
                   "name": type(terrain).__name__}
    elif isinstance(terrain, (tuple, list)) and len(terrain) == 2:
        terrain = {"type": "profile", "x": terrain[0], "z": terrain[1]}
    if not isinstance(terrain, dict) or "type" not in terrain:
        raise ValueError(f"terrain: expected a dict with 'type', an (x, z) pair or an object with to_scene(), "
                         f"got {type(terrain).__name__}")
    kind = terrain["type"]
    if kind == "profile":
        x = _finite_list(terrain.get("x"), "terrain profile x", 1)
        z = _finite_list(terrain.get("z"), "terrain profile z", 1)
        if len(x) != len(z):
            raise ValueError(f"terrain profile: x has {len(x)} points and z {len(z)}")
        y = _finite_list(terrain.get("y", (-2.0, 2.0)), "terrain profile y", 1)
        if len(y) != 2 or y[1] <= y[0]:
            raise ValueError(f"terrain profile: y must be [y_min, y_max] with y_min < y_max, got {y.tolist()}")
        out = {"type": "profile", "x": x.tolist(), "z": z.tolist(), "y": y.tolist()}
    elif kind == "heightfield":
        x = _finite_list(terrain.get("x"), "terrain heightfield x", 1)
        y = _finite_list(terrain.get("y"), "terrain heightfield y", 1)
        z = _finite_list(terrain.get("z"), "terrain heightfield z", 2)
        if z.shape != (len(y), len(x)):
            raise ValueError(f"terrain heightfield: z must have shape (ny, nx) = ({len(y)}, {len(x)}), got {z.shape}")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
            raise ValueError("terrain heightfield: x and y must be increasing")
        out = {"type": "heightfield", "x": x.tolist(), "y": y.tolist(), "z": z.tolist()}
    else:
        raise ValueError(f"terrain: unknown type {kind!r}; expected 'profile' or 'heightfield'")
    for key in ("name", "color"):
        if key in terrain:
            out[key] = terrain[key]
    return out


def find_terrain(system):
    """The first drawable ``terrain`` attribute (``to_scene()`` or ``profile()``) among a system's force
    providers, or ``None``."""
    for prov in getattr(system, "providers", ()):
        terrain = getattr(prov, "terrain", None)
        if terrain is not None and (hasattr(terrain, "to_scene") or hasattr(terrain, "profile")):
            return terrain
    return None


def scene_from_model(model, terrain=None, x_range=(-10.0, 10.0), y_range=(-2.0, 2.0)) -> dict | None:
    """The scene of a model (its visual shapes and masses) and a terrain; ``None`` when nothing is drawable."""
    shapes_by_body: dict[int, list] = {}
    ground = []
    for index, shape in model.visuals:
        d = shape.to_dict()
        if index < 0:
            ground.append(d)
        else:
            shapes_by_body.setdefault(index, []).append(d)
    ter = terrain_to_scene(terrain, x_range, y_range)
    if not shapes_by_body and not ground and ter is None:
        return None
    mass = model.body_arrays()[0] if model.n_bodies else []
    names = model.body_names
    bodies = [{"name": names[i], "mass": float(mass[i]), "shapes": shapes_by_body[i]}
              for i in sorted(shapes_by_body)]
    return {"version": SCENE_VERSION, "bodies": bodies, "ground_shapes": ground, "terrain": ter}


def read_scene(directory) -> dict | None:
    """``scene.json`` of a results folder, or ``None`` when the run stored no scene."""
    p = Path(directory) / "scene.json"
    if not p.exists():
        return None
    return json.loads(p.read_text(encoding="utf-8"))
