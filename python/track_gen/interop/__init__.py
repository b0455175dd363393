# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop: captures TrackGen did not begin, and lifetimes tied to
graphs (``trackgen/interop.h``).

:class:`CaptureScope` registers a capture someone else began on a stream
(``cudaStreamBeginCapture``) for the calling thread: calls that name no
stream record into it, and every producer recorded into it is retained by
its graph.  :func:`retain` ties producers, seed states and any object to a
graph's lifetime; TrackGen drops those references on its reaper thread once
the graph and its executable graphs are destroyed.  For PyTorch's
``torch.cuda.graph``, :mod:`track_gen.interop.torch` does both;
:mod:`track_gen.interop.warp` makes NVIDIA Warp kernels stages.
"""
from __future__ import annotations

from typing import Any

from track_gen import _native

__all__ = ["CaptureScope", "CaptureMode", "retain", "retain_capture", "is_registered"]

CaptureScope = _native.CaptureScope
CaptureMode = _native.CaptureMode


def retain(graph: int, *objects: Any) -> None:
    """Makes a CUDA graph hold objects until it and every executable graph made
    from it are destroyed (tg_retain(), tg_retain_full()).

    Args:
        graph (int): The ``cudaGraph_t``.
        *objects (Any): A Producer or SeedState is held through its C object,
            anything else (a tensor) as a Python reference.
    """
    _native.retain(graph, *objects)


def retain_capture(stream: Any, *objects: Any) -> None:
    """Like :func:`retain`, for the graph of the capture in progress on a stream
    (tg_retain_capture_full()).

    All the objects share that graph's one user object.

    Args:
        stream (StreamLike): The capturing stream.
        *objects (Any): As :func:`retain` takes them.

    Raises:
        StateError: *stream* is not capturing.
    """
    _native.retain_capture(stream, *objects)


def is_registered(stream: Any = None) -> bool:
    """Whether a capture is registered on this thread
    (tg_capture_is_registered()).

    Args:
        stream (StreamLike): The capturing stream; None asks for any.

    Returns:
        bool: True when it is registered.
    """
    return _native.is_registered(stream)
