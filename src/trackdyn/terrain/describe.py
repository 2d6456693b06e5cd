"""Plain-dict descriptions of terrains (run metadata, scenario files) and back.

``describe(terrain)`` gives a JSON-ready dict with a ``type`` key;
``build(description)`` rebuilds flat/inclined planes, profile terrains with
their pieces, and composites. Meshes and height fields are described by
their size and bounds only (their arrays belong in a file, not in metadata).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import terrain as T  # the package namespace: build() looks terrain classes up by name
from ..materials import Material
from . import base, mesh, profile
from .base import ProfileTerrain

__all__ = ["describe", "build", "material_dict"]


def _kebab(name: str) -> str:
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out += "-"
        out += ch.lower()
    return out


def material_dict(m) -> dict | None:
    if m is None:
        return None
    d = {f.name: getattr(m, f.name) for f in dataclasses.fields(m) if f.name != "extra"}
    return {k: v for k, v in d.items() if v is not None}


def describe(terrain) -> dict:
    t = terrain
    if isinstance(t, profile.Piece):
        d = {"type": _kebab(type(t).__name__)}
        for f in dataclasses.fields(t):
            v = getattr(t, f.name)
            d[f.name] = material_dict(v) if f.name == "material" else v
        return {k: v for k, v in d.items() if v is not None}
    if isinstance(t, base.Flat):
        return {"type": "flat", "z": float(t.point[2]), "material": material_dict(t.material)}
    if isinstance(t, base.Plane):
        return {"type": "plane", "normal": [float(x) for x in t.normal], "point": [float(x) for x in t.point],
                "material": material_dict(t.material)}
    if isinstance(t, base.ProfileTerrain):
        return {"type": "profile", "base": t.base, "origin": [float(t.origin[0]), float(t.origin[1])],
                "heading": t.heading, "material": material_dict(t.material),
                "pieces": [describe(p) for p in t.pieces]}
    if isinstance(t, base.Composite):
        return {"type": "composite", "parts": [describe(p) for p in t.parts()]}
    if isinstance(t, mesh.TriangleMesh):
        V = np.asarray(getattr(t, "vertices", np.zeros((0, 3))))
        return {"type": _kebab(type(t).__name__), "n_vertices": int(len(V)),
                "n_faces": int(len(getattr(t, "faces", []))),
                "bounds": [V.min(0).tolist(), V.max(0).tolist()] if len(V) else None,
                "material": material_dict(t.material)}
    if hasattr(t, "to_dict"):
        return t.to_dict()
    return {"type": type(t).__name__, "repr": repr(t)}


def build(desc: dict, where: str = "terrain"):
    """Rebuild a terrain from :func:`describe`'s output (or a scenario file's ``[terrain]`` table)."""
    if not isinstance(desc, dict) or "type" not in desc:
        raise ValueError(f"{where}: expected a table with a 'type' key")
    params = {k: v for k, v in desc.items() if k != "type"}
    kind = desc["type"]
    if not isinstance(kind, str) or not kind.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"{where}.type = {kind!r}: unknown terrain")
    if "material" in params:
        if params["material"] is None:
            params.pop("material")
        elif not isinstance(params["material"], dict):
            raise ValueError(f"{where}.material = {params['material']!r}: expected a table")
        else:
            try:
                params["material"] = Material(**params["material"])
            except (TypeError, ValueError) as err:
                raise ValueError(f"{where}.material: {err}") from None
    try:
        if kind == "composite":
            parts = params.get("parts")
            if not isinstance(parts, list) or not parts:
                raise ValueError(f"{where}.parts: a composite needs a list of parts")
            out = None
            for k, p in enumerate(parts):
                t = build(p, f"{where}.parts[{k}]")
                out = t if out is None else out + t
            return out
        if kind == "profile":
            pieces = params.pop("pieces", [])
            if not isinstance(pieces, list):
                raise ValueError(f"{where}.pieces: expected a list")
            return ProfileTerrain([build(p, f"{where}.pieces[{k}]") for k, p in enumerate(pieces)], **params)
        cls = getattr(T, "".join(w.capitalize() for w in kind.replace("_", "-").split("-")), None)
        if cls is None or not isinstance(cls, type):
            raise ValueError(f"{where}.type = {kind!r}: unknown terrain")
        return cls(**params)
    except (TypeError, ArithmeticError) as err:
        raise ValueError(f"{where}: {err}") from None
