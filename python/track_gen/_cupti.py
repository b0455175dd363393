# SPDX-License-Identifier: Apache-2.0
"""Where checked mode finds NVIDIA's CUPTI in a Python installation.

The native module loads ``libcupti.so.13`` with dlopen, by name, when checked
mode is turned on (``TG_CUPTI_PATH`` overrides it).  Wheels put CUPTI where
the loader does not look: loading the ``nvidia-cuda-cupti`` wheel's copy
first makes the native module's dlopen find it by its name.
"""
import ctypes
import glob
import importlib.util
import os


def load_from_wheel() -> None:
    """Loads libcupti from the ``nvidia-cuda-cupti`` wheel, when it is
    installed and no ``TG_CUPTI_PATH`` is set."""
    if os.environ.get("TG_CUPTI_PATH"):
        return
    spec = importlib.util.find_spec("nvidia")
    roots = (spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib", "libcupti.so.13"))):
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            return
