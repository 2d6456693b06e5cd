"""Results and spec files on disk."""

from .results import load, save_result

__all__ = ["load", "save_result"]
