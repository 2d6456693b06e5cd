"""Plots, the side-view animation, the browser 3-D viewer and HTML reports of results folders.

Everything here reads a results folder (``timeseries.parquet``,
``metadata.json``, ``scene.json``, ``summary.json``) or a
:class:`~trackdyn.io.results.Result`; nothing here runs a simulation.
Matplotlib and imageio are imported lazily by the functions that need them.
"""

from . import shapes
from .shapes import Box, Cylinder, Extrusion, Mesh, Polyline, Sphere, sprocket, sprocket_outline

__all__ = ["shapes", "Box", "Cylinder", "Sphere", "Extrusion", "Polyline", "Mesh", "sprocket",
           "sprocket_outline"]
