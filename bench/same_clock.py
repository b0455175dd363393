# SPDX-License-Identifier: Apache-2.0
"""same_clock: bench/same-clock.so as ctypes calls it, for the scripts that
load it (warp-bench.py, python-bench.py): each exported name with the C
signature of bench/same-clock.c."""
import ctypes

_vp, _cp, _u, _i, _d = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_int,
                        ctypes.c_double)
# name (after tgb_clock_): restype, argtypes
SIGNATURES = {
    "new": (_vp, []), "free": (None, [_vp]), "constant": (_i, [_cp]),
    "stream": (_vp, [_vp]), "address": (_vp, [_vp, _cp]),
    "set": (None, [_vp, _cp, ctypes.c_int32]), "ours": (_vp, [_vp, _cp]),
    "floor": (_vp, [_vp, _cp]), "instantiate": (_vp, [_vp, _i]),
    "instantiate_kept": (_vp, [_vp]), "begin": (None, [_vp]), "end": (_vp, [_vp]),
    "exec_destroy": (None, [_vp]), "chain": (_vp, [_vp]),
    "string_free": (None, [_vp]), "dot": (_i, [_vp, _cp]),
    "tiny": (None, [_vp, _vp, _u]), "reset": (None, [_vp, _vp]),
    "relax": (None, [_vp, _vp]), "runs": (_u, [_vp, _vp]), "converged": (_i, [_vp]),
    "sync": (None, [_vp]), "replay_us": (_d, [_vp, _u]),
    "time": (_d, [_vp, ctypes.POINTER(_vp), _u, _u, _u, _d, ctypes.POINTER(_d),
                  ctypes.POINTER(_d)]),
}


def load(path):
    """The library at *path*, each tgb_clock_* function declared."""
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, "tgb_clock_" + name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib
