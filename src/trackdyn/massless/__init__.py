"""The ``massless`` track fidelity (agapov-kovalev-pogorelov, real-time tracked-vehicle model; issue #8).

A vehicle spec built without shoe bodies: hull, sprockets, idlers, road arms
and wheels, rollers; each track is a force model between its wheels and the
terrain in track planes fixed to the hull (see docs/massless.md).

Select it per run with ``Scenario(fidelity="massless")`` (or ``fidelity =
"massless"`` in a scenario file, ``--fidelity massless`` on the CLI); the
pieces are:

- :func:`~trackdyn.massless.builder.build_massless` → :class:`~trackdyn.massless.builder.MasslessVehicle`;
- :class:`~trackdyn.massless.track.MasslessTrack` (force provider) and
  :class:`~trackdyn.massless.track.MasslessOptions` (``scenario.options["massless.*"]``);
- :class:`~trackdyn.massless.stepper.RealtimeStepper` (minimal coordinates, the default);
- :func:`~trackdyn.massless.climb.climb_stairs` (the stairs scene and its outcome classes);
- :func:`~trackdyn.massless.slicing.slice_terrain` (the terrain-plane intersection, for inspection).
"""

from .builder import MasslessVehicle, build_massless
from .climb import OUTCOMES, classify, climb_stairs, stairs_scene
from .slicing import slice_terrain
from .track import MasslessOptions, MasslessTrack

__all__ = ["MasslessVehicle", "build_massless", "MasslessOptions", "MasslessTrack", "climb_stairs", "classify",
           "stairs_scene", "OUTCOMES", "slice_terrain"]
