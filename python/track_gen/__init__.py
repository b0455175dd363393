# SPDX-License-Identifier: Apache-2.0
"""TrackGen's execution layer for Python, over libtrackgen.

- :mod:`track_gen.exec`: producers, policies, launch contexts, the own-graph
  runner, conditions and loops, host operations, errors;
- :mod:`track_gen.seeds`: per-env seeds and device-side epochs;
- :mod:`track_gen.interop`: captures TrackGen did not begin, and lifetimes
  tied to graphs; :mod:`track_gen.interop.torch` for ``torch.cuda.graph``,
  :mod:`track_gen.interop.warp` for NVIDIA Warp kernels as stages.

Importing track_gen imports neither torch nor warp: torch is for
track_gen.interop.torch alone, which is imported where a torch object is
passed (a stage run while torch is loaded uses it), warp for
track_gen.interop.warp.
"""
import os as _os

if _os.environ.get("TG_CHECK") == "1":
    # Checked mode (doc/capture-rules.md) finds the wheel's CUPTI by name.
    from track_gen import _cupti

    _cupti.load_from_wheel()
from track_gen._native import __version__  # noqa: E402
from track_gen import exec, seeds  # noqa: F401  (the modules of the reference)

__all__ = ["__version__", "exec", "seeds"]
