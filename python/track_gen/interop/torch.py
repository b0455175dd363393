# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.torch: TrackGen inside ``torch.cuda.graph``.

Importing this module imports torch (importing track_gen does not).

- :func:`registered`, used inside ``with torch.cuda.graph(g):``, registers
  torch's capture with TrackGen: producer and seed-state calls that name no
  stream record into it, and every producer recorded into it is retained by
  the graph, so the graph replays after your own references are gone.
- :func:`retain` ties producers, seed states and tensors to the torch graph
  being captured.
- :func:`graph` does both of torch's and TrackGen's parts in one ``with``.
- :func:`current_stream`, :func:`stream_of` and :func:`tensor_at` are the
  stream and tensor helpers: torch's current stream as a handle, a context's
  stream as a torch stream, device memory TrackGen hands out as a tensor.

Stages written in Python may use torch ops freely: during a stage call
torch's current stream is the stage's stream, and while the work is captured
(REPLAY's own graphs, RECORD) torch's allocations come from a memory pool of
their own, kept alive exactly as long as the graph that holds the work, so no
temporary of a captured stage is ever handed to another tensor while a
replay may still use it.
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, Optional, Sequence

import torch

from track_gen import _frameworks, _native
from track_gen._errors import StateError
from track_gen.interop import CaptureMode, CaptureScope, retain_capture

__all__ = ["registered", "graph", "retain", "current_stream", "stream_of", "tensor_at"]


def current_stream(device: Optional[int] = None) -> int:
    """torch's current stream on a device, as a ``cudaStream_t``.

    Args:
        device (int | None): The CUDA device; None is torch's current one.

    Returns:
        int: The handle; 0 is CUDA's legacy default stream, torch's default.
    """
    return _frameworks.torch_current_stream(device)


def _capture_mode(capture_error_mode: str) -> int:
    # torch's names are CaptureMode's, in lower case.
    names = sorted(name.lower() for name in CaptureMode.__members__)
    if capture_error_mode not in names:
        raise ValueError("capture_error_mode: %r is not one of %s (as torch.cuda.graph "
                         "takes)" % (capture_error_mode, names))
    return CaptureMode[capture_error_mode.upper()]


@contextlib.contextmanager
def registered(capture_error_mode: str = "global",
               stream: Any = None) -> Iterator[CaptureScope]:
    """Registers the capture ``torch.cuda.graph`` began, for this thread.

    Use it inside ``with torch.cuda.graph(g, capture_error_mode=...)``.
    Inside, calls that pass no stream (``producer.run()``,
    ``state.advance()``) record into the capture, and each producer recorded
    is retained by the graph.

    When warp is imported and set up on the device
    (``track_gen.interop.warp.prepare()``), the capture is registered with
    Warp too, in the same mode, with Warp's current stream set to it, and
    the graph keeps what Warp made for it.

    Args:
        capture_error_mode (str): The one given to ``torch.cuda.graph``
            (torch's default is ``"global"``).
        stream (Any): The capturing stream, torch's current one by default.

    Yields:
        CaptureScope: The registration, ended on leaving the block.

    Raises:
        ValueError: An unknown *capture_error_mode*.
    """
    if stream is None:
        stream = torch.cuda.current_stream()
    mode = _capture_mode(capture_error_mode)
    scope = CaptureScope(stream, mode)
    try:
        with _others_registered(stream, mode):
            yield scope
    finally:
        scope.end()


def _others_registered(stream: Any, mode: int) -> Any:
    """Registers the capture on *stream* with the other frameworks whose
    adapters are imported (track_gen.interop.warp), for the block."""
    handle = _native._stream_handle(stream)
    device = stream.device.index if isinstance(stream, torch.cuda.Stream) \
        else torch.cuda.current_device()
    return _frameworks.capture_registered(handle, device, mode)


@contextlib.contextmanager
def graph(cuda_graph: "torch.cuda.CUDAGraph", pool: Any = None, stream: Any = None,
          capture_error_mode: str = "global") -> Iterator[CaptureScope]:
    """``torch.cuda.graph`` with its capture registered with TrackGen
    (:func:`registered`).

    What TrackGen keeps for the graph (producers recorded into it, what their
    stages keep, :func:`retain`) is held by *cuda_graph* itself rather than by
    a CUDA user object in the graph, so its replays pay no GPU time for one.
    It is handed back when *cuda_graph* is deleted, and released once the work
    enqueued on torch's current stream by then has run: replay the graph on
    torch's current stream (as ``replay()`` does) or synchronize before
    deleting it.

    Args:
        cuda_graph (torch.cuda.CUDAGraph): The graph to capture.
        pool (Any): As ``torch.cuda.graph`` takes it.
        stream (Any): As ``torch.cuda.graph`` takes it.
        capture_error_mode (str): As ``torch.cuda.graph`` takes it.

    Yields:
        CaptureScope: The registration of the capture.
    """
    try:
        with torch.cuda.graph(cuda_graph, pool=pool, stream=stream,
                              capture_error_mode=capture_error_mode):
            device = torch.cuda.current_device()
            held = _native.retained_new(current_stream(device))
            weakref.finalize(cuda_graph, _hand_back, held, device).atexit = False
            with registered(capture_error_mode) as scope:
                yield scope
    finally:
        pending = list(_unreleased)
        _unreleased.clear()
        for held, device in pending:
            _hand_back(held, device)


# References whose graph went while a capture ran on the stream they are
# released after: handed back at the end of the next graph() block.
_unreleased: list = []


def _hand_back(held: Any, device: int) -> None:
    try:
        _native.retained_release(held, current_stream(device))
    except StateError:
        # A capture in progress on that stream: nothing can be ordered after
        # the work it ran before; try again later.
        _unreleased.append((held, device))


def retain(*objects: Any, stream: Any = None) -> None:
    """Ties producers, seed states and tensors to the graph being captured.

    They live until the torch graph and its executable graph are destroyed.
    Call it inside the capture.

    Args:
        *objects (Any): Producers, seed states, tensors.
        stream (Any): The capturing stream, torch's current one by default.

    Raises:
        StateError: The stream is not capturing.
    """
    retain_capture(torch.cuda.current_stream() if stream is None else stream, *objects)


def stream_of(ctx: Any) -> "torch.cuda.Stream":
    """The torch stream of a stage's context (``ctx.stream``).

    Args:
        ctx (LaunchContext): The stage's context.

    Returns:
        torch.cuda.Stream: torch's default stream for CUDA's legacy stream,
        else a ``torch.cuda.ExternalStream``.
    """
    return _frameworks.torch_stream_of(ctx)


class _Memory:
    """A __cuda_array_interface__ over device memory, holding its owner."""

    def __init__(self, ptr: int, shape: Sequence[int], typestr: str, owner: Any) -> None:
        self.__cuda_array_interface__ = {
            "data": (ptr, False),
            "shape": tuple(shape),
            "typestr": typestr,
            "strides": None,
            "version": 3,
        }
        self.owner = owner


_TYPESTR = {
    torch.float32: "<f4", torch.float64: "<f8", torch.float16: "<f2",
    torch.int8: "|i1", torch.int16: "<i2", torch.int32: "<i4", torch.int64: "<i8",
    torch.uint8: "|u1", torch.bool: "|b1",
}


def tensor_at(ptr: int, shape: Sequence[int], dtype: "torch.dtype",
              owner: Any = None) -> "torch.Tensor":
    """A tensor over device memory, without a copy.

    For a binding a C producer owns, or a seed state's arrays.

    Args:
        ptr (int): The device address.
        shape (Sequence[int]): The tensor's shape.
        dtype (torch.dtype): Its element type.
        owner (Any): A Producer or SeedState kept alive as long as the
            tensor.

    Returns:
        torch.Tensor: The tensor.

    Raises:
        ValueError: A dtype without an array-interface type.
    """
    try:
        typestr = _TYPESTR[dtype]
    except KeyError:
        raise ValueError("dtype: %s has no array-interface type" % (dtype,))
    return torch.as_tensor(_Memory(ptr, shape, typestr, owner))
