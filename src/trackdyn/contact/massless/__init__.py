"""The massless track-force law (agapov-kovalev-pogorelov): the ``massless`` fidelity's force provider.

Beside the shoe contacts of :mod:`trackdyn.contact` (DESIGN.md: the
track-force laws of the cheaper fidelities sit beside them): each track is a
force model between its wheels and the terrain in track planes fixed to the
hull (docs/massless.md). Its vehicle comes from
:func:`trackdyn.assembly.massless.build_massless`.

- :class:`MasslessTrack` (the force provider) and :class:`MasslessOptions`
  (``scenario.options["massless.*"]``);
- :func:`slice_terrain` (the terrain-plane intersection, for inspection).
"""

from .slicing import slice_terrain
from .track import MasslessOptions, MasslessTrack

__all__ = ["MasslessOptions", "MasslessTrack", "slice_terrain"]
