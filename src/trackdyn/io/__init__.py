"""Results folders on disk (a Parquet dataset of parts, metadata, scene, event summary), :class:`Result`, and
filters of recorded series (:func:`lowpass_fft`)."""

from .checkpoint import load_state, save_state
from .filters import lowpass_fft, sample_interval
from .results import (Result, ResultWriter, is_complete, load, match_series, part_files, save_result,
                      write_json_atomic, write_summary)
from .scene import read_scene, scene_from_model, terrain_to_scene

__all__ = ["Result", "load", "save_result", "write_json_atomic", "write_summary", "ResultWriter", "is_complete",
           "match_series", "part_files", "read_scene", "scene_from_model", "terrain_to_scene", "save_state",
           "load_state", "lowpass_fft", "sample_interval"]
