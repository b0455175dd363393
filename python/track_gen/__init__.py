"""TrackGen's execution layer for Python, over libtrackgen.

Importing track_gen never imports torch: torch is for
track_gen.interop.torch alone, which imports it where a torch object is
passed.
"""
from track_gen._native import __version__

__all__ = ["__version__"]
