"""Deprecated alias of the ``massless`` fidelity's parts (kept one release for users' imports).

The massless track model (agapov-kovalev-pogorelov) now lives in the layers
like every fidelity (DESIGN.md, "Fidelity levels of one vehicle"); select it
with ``Scenario(fidelity="massless")`` or ``--fidelity massless``:

- builder: :func:`trackdyn.assembly.massless.build_massless`;
- track-force law: :class:`trackdyn.contact.massless.MasslessTrack`,
  :class:`~trackdyn.contact.massless.MasslessOptions`,
  :func:`~trackdyn.contact.massless.slice_terrain`;
- stepper: :class:`trackdyn.integrators.realtime.RealtimeStepper`;
- stairs climb: :func:`trackdyn.experiments.stairs.climb_stairs`.

Importing this package warns (``DeprecationWarning``).
"""

import warnings

from ..assembly.massless import MasslessVehicle, build_massless
from ..contact.massless import MasslessOptions, MasslessTrack, slice_terrain
from ..experiments.stairs import OUTCOMES, classify, climb_stairs, stairs_scene

warnings.warn("trackdyn.massless is deprecated: import from trackdyn.assembly.massless, trackdyn.contact.massless "
              "and trackdyn.experiments.stairs (docs/massless.md)", DeprecationWarning, stacklevel=2)

__all__ = ["MasslessVehicle", "build_massless", "MasslessOptions", "MasslessTrack", "climb_stairs", "classify",
           "stairs_scene", "OUTCOMES", "slice_terrain"]
