# SPDX-License-Identifier: Apache-2.0
"""track_gen._frameworks: what the package knows of the frameworks it meets
(torch, NVIDIA Warp), in one module below every other.

Nothing here imports a framework: a framework is one the user loaded, found
in ``sys.modules``.  Three things:

- torch's current stream and torch's view of a stage's stream
  (``interop.torch.current_stream()`` and ``stream_of()`` are these);
- running a stage written in Python under the loaded framework
  (:func:`run_stage`, which the native module calls for every such stage):
  with torch loaded, the context's stream is torch's current stream during
  the call, and a captured call allocates from a pool of its own and runs
  inside what each adapter's stage hook gives (:func:`add_stage_hook`:
  ``interop.warp``'s makes Warp's current stream the stage's inside a
  registered torch capture).  It is here, not in ``interop.torch``, because
  every stage call needs it whether or not that module was imported;
- registering a framework's capture with the others: an adapter
  (``interop.warp``) adds a hook when it is imported
  (:func:`add_capture_hook`); ``interop.torch.registered()`` runs every hook
  (:func:`capture_registered`).  An adapter never imports another.

The ambient stream of the stream rule (torch's, else Warp's current stream)
is read by the native module (python/native, ``tgpy_ambient``), in the same
call that hands it to libtrackgen.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, ContextManager, Dict, List, Optional, Tuple

from track_gen import _native

__all__ = ["torch_current_stream", "torch_stream_of", "run_stage", "add_stage_hook",
           "add_capture_hook", "capture_registered"]


# torch's getter of the current stream's handle without a stream object
# (what torch's compiled code calls), for the torch loaded: (torch, getter);
# builds without it make a stream object.
_raw_stream: Tuple[Any, Any] = (None, None)


def torch_current_stream(device: Optional[int] = None) -> int:
    """torch's current stream on *device* (torch's current device when None),
    as a ``cudaStream_t``; torch must be loaded."""
    global _raw_stream
    torch = sys.modules["torch"]
    if device is None:
        device = torch.cuda.current_device()
    if _raw_stream[0] is not torch:
        _raw_stream = (torch, getattr(torch._C, "_cuda_getCurrentRawStream", None))
    if _raw_stream[1] is not None:
        return _raw_stream[1](device)
    return torch.cuda.current_stream(device).cuda_stream


# torch's wrappers of streams TrackGen made, by (device, handle).
_external: Dict[Tuple[int, int], Any] = {}


def torch_stream_of(ctx: Any) -> Any:
    """torch's view of a stage's stream (``ctx.stream`` on ``ctx.device``): torch's
    default stream for CUDA's legacy stream, else a ``torch.cuda.ExternalStream``
    made once."""
    torch = sys.modules["torch"]
    handle, device = ctx.stream, ctx.device
    if handle in (0, _native._STREAM_LEGACY):  # NULL and cudaStreamLegacy: torch's default
        return torch.cuda.default_stream(device)
    key = (device, handle)
    s = _external.get(key)
    if s is None:
        s = _external[key] = torch.cuda.ExternalStream(handle, device=device)
    return s


# Memory pools no live graph uses, per device: a captured stage's
# allocations come from one, leased for as long as the graph holding its
# work lives (ctx.keep), then it goes back here for the next capture.
# Pools are never destroyed, not even at exit: torch destroys a MemPool by
# emptying it, which asserts that no capture is underway in the process.
# A graph's releases come at any moment (on TrackGen's reaper thread, during
# someone's capture); and once a torch capture failed, torch's allocator
# believes a capture underway for good (CUDAGraph.capture_end raises before
# it ends the capture's allocation to its pool), so a pool destroyed at exit
# would abort the interpreter.  The driver reclaims a pool's memory with the
# process.
_free_pools: Dict[int, list] = {}


class _PoolLease:
    """A pool taken for one captured stage call; returned when released."""

    __slots__ = ("device", "pool")

    def __init__(self, torch: Any, device: int) -> None:
        free = _free_pools.setdefault(device, [])
        self.device = device
        self.pool = (free.pop() if free
                     else _native._keep_until_exit(torch.cuda.MemPool()))

    def __del__(self) -> None:
        _free_pools[self.device].append(self.pool)


def run_stage(func: Callable[[Any], Any], ctx: Any) -> Any:
    """Calls a stage, body or host stage written in Python under the loaded
    framework.  With torch loaded: with the context's stream as torch's
    current stream, and, while its work is captured, from a memory pool that
    the graph holding the work leases (ctx.keep), so that no other tensor
    gets its temporaries' memory.  An eager call on torch's current stream,
    the usual case, needs no stream switch (it costs more than a small
    stage).  Warp's stages set Warp's stream themselves
    (``interop.warp.stage``, ``scope``); a captured call runs inside each
    stage hook's context too (:func:`add_stage_hook`)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return func(ctx)
    if not ctx.is_capturing:
        device = ctx.device
        if (torch.cuda.current_device() == device
                and torch_current_stream(device) == ctx.stream):
            return func(ctx)
        with torch.cuda.stream(torch_stream_of(ctx)):
            return func(ctx)
    lease = _PoolLease(torch, ctx.device)
    ctx.keep(lease)
    with torch.cuda.stream(torch_stream_of(ctx)), torch.cuda.use_mem_pool(
            lease.pool, device=ctx.device), contextlib.ExitStack() as stack:
        for hook in _stage_hooks:
            scope = hook(ctx)
            if scope is not None:
                stack.enter_context(scope)
        return func(ctx)


# What a framework's adapter does around a captured stage written in Python
# (run_stage): a hook per adapter that cares, in the order they were added.
_stage_hooks: List[Callable[[Any], Optional[ContextManager[Any]]]] = []


def add_stage_hook(hook: Callable[[Any], Optional[ContextManager[Any]]]) -> None:
    """Adds *hook*: ``hook(ctx)`` returns a context manager that run_stage
    enters around a captured stage call, or None."""
    _stage_hooks.append(hook)


# What to do when a framework's capture is registered with TrackGen, one
# hook per adapter that cares, in the order they were added.
_capture_hooks: List[Callable[[int, int, int], ContextManager[None]]] = []


def add_capture_hook(hook: Callable[[int, int, int], ContextManager[None]]) -> None:
    """Adds *hook*: ``hook(handle, device, mode)`` returns a context manager that
    registers the capture in progress on the stream *handle* (a
    ``cudaStream_t`` on *device*, captured in CaptureMode *mode*) with the
    hook's framework for the block."""
    _capture_hooks.append(hook)


@contextlib.contextmanager
def capture_registered(handle: int, device: int, mode: int) -> Any:
    """Registers the capture on *handle* with every framework whose adapter
    added a hook, for the block."""
    with contextlib.ExitStack() as stack:
        for hook in list(_capture_hooks):
            stack.enter_context(hook(handle, device, mode))
        yield
