# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.warp: NVIDIA Warp kernels as TrackGen stages.

Importing this module imports warp (importing track_gen does not).

A stage that launches Warp kernels runs them through :func:`stage` (a
decorator) or :func:`scope` (a ``with`` inside the stage).  During the call:

- Warp's current stream on the stage's device is Warp's view of
  ``ctx.stream`` (:func:`stream_of`): one ``wp.Stream`` per (device, handle),
  made once and never dropped, so a launch with or without ``stream=`` lands
  on the stage's stream, in the capture when there is one;
- every capture the stage runs under that Warp does not know (REPLAY's own
  graphs, RECORD's captures, condition and loop bodies) is registered with
  Warp for the call (``wp.capture_begin(external=True)``), and what Warp made
  during it (its ``Graph``: modules, allocations) is kept as long as the
  graph holding the work (``ctx.keep``); ``wp.capture_if``,
  ``wp.capture_while`` and Warp's temporaries then record correctly;
- inside a captured condition or loop body, where CUDA forbids allocations,
  a Warp allocation is refused with NotCapturableError naming the stage,
  before it reaches CUDA; :func:`scratch` gives memory kept with the graph.

Warp sets its CUDA context up lazily on first use, with calls that break a
capture: :func:`prepare` does it outside any capture (the decorator does it
for the device it is given).  :func:`array` reads a binding of a stage's
context or of a producer as a ``wp.array``; :func:`launch_graph` places a
Warp graph in the stage's capture as a child graph node.
``interop.torch.registered()`` and ``graph()`` register torch's capture
with Warp on the device once :func:`prepare` ran there, with Warp's current
stream set to it; inside such a capture every captured stage written in
Python runs as in :func:`scope`, so that a Warp launch without ``stream=``
in a plain stage lands in the producer's work, not beside it.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import (Any, Callable, ContextManager, Dict, Iterator, Optional, Sequence, Set,
                    Tuple, Union)

import warp as wp

from track_gen import _frameworks, _native
from track_gen.interop import retain_capture
from track_gen._errors import NotCapturableError
from track_gen.exec import (CaptureErrorCode, CaptureState, LaunchContext, Producer,
                            StateErrorCode)

__all__ = ["prepare", "stage", "scope", "stream_of", "array", "scratch", "launch_graph"]

# The errors of this module are made as the native module makes libtrackgen's
# (class, domain, code and fields from the code): _native._error.
_error = _native._error

# Devices prepare() set Warp up on, by ordinal.
_prepared: Set[int] = set()

# Warp's view of each stream, by (device, handle): never dropped, since a
# wp.Stream's __del__ unregisters its handle from Warp for every wrapper of
# it, which loses a capture Warp knows on it ("unknown capture stream") and
# stops Warp's frees for good.  A handle CUDA reuses reuses its wrapper.
_streams: Dict[Tuple[int, int], "wp.Stream"] = {}
_streams_lock = threading.Lock()

# Warp's current stream is one per device, shared by every thread: a stage
# that sets it while another thread's stage has it set sends that thread's
# launches (those without stream=) to its own stream, into its own capture,
# and the other thread's graph replays nothing.  So a thread holds its
# device's lock while its Warp work has the current stream set: Warp stages
# of several threads on one device run one at a time (re-entrant: a stage's
# nested calls and a registered torch capture's stages take it again).
_current_locks: Dict[int, "threading.RLock"] = {}


def _current_lock(ordinal: int) -> "threading.RLock":
    lock = _current_locks.get(ordinal)
    if lock is None:
        with _streams_lock:
            lock = _current_locks.setdefault(ordinal, threading.RLock())
    return lock

# The capture modes torch's captures were registered with on this thread
# (interop.torch.registered()), innermost last: TrackGen's own captures
# inside a relaxed one are relaxed too, and Warp resumes a capture it paused
# (capture_if) in the mode it was told.
_modes = threading.local()


def _device(ordinal: int) -> Any:
    return wp.get_device("cuda:%d" % ordinal)


def prepare(device: int = 0) -> None:
    """Sets Warp up on CUDA device *device* outside any capture: ``wp.init()``,
    the device's context and streams, and Warp's first stream-ordered
    allocation there (Warp's lazy set-up touches CUDA's legacy stream and
    makes calls a capture forbids).  Call it once, outside any capture,
    before the first capture that runs Warp work on the device; :func:`stage`
    calls it for its *device*, and a stage run outside a capture for its
    own."""
    if device in _prepared:
        return
    wp.init()
    dev = _device(device)
    with wp.ScopedDevice(dev):
        wp.empty(1, dtype=wp.int32)  # freed at once, on the legacy stream
        wp.synchronize_device(dev)
    _prepared.add(device)


def stream_of(ctx: Union[LaunchContext, int], device: Optional[int] = None) -> "wp.Stream":
    """Warp's view of a stage's stream (``ctx.stream`` on ``ctx.device``), or of
    the stream handle *ctx* (an int ``cudaStream_t``) on *device*: the
    ``wp.Stream`` a capture in progress on it is registered with Warp on,
    else the one TrackGen keeps for it, never dropped.  Use it rather than
    ``wp.Stream(cuda_stream=...)`` or ``wp.stream_from_torch()``, which make a
    new wrapper at each call (dropping one unregisters the handle from Warp
    for every wrapper)."""
    if isinstance(ctx, int):
        handle, ordinal = ctx, 0 if device is None else device
    else:
        handle, ordinal = ctx.stream, ctx.device
    dev = _device(ordinal)
    for ws in dev.captures:
        if ws.cuda_stream == handle:
            return ws  # Warp finds its capture by this very object (capture_if)
    key = (ordinal, handle)
    ws = _streams.get(key)
    if ws is None:
        with _streams_lock:
            ws = _streams.get(key)
            if ws is None:
                if handle == 0:  # the legacy stream: Warp's own wrapper
                    ws = dev.null_stream
                elif handle == dev.stream.cuda_stream:
                    ws = dev.stream
                else:
                    ws = wp.Stream(dev, cuda_stream=handle)
                _streams[key] = ws
    return ws


def _where(ctx: LaunchContext) -> str:
    return "stage %r of producer %r" % (ctx.stage_name, ctx.producer_name)


def _not_capturable(ctx: LaunchContext, what: str) -> NotCapturableError:
    return _error(CaptureErrorCode.NOT_CAPTURABLE, "%s: %s" % (_where(ctx), what),
                  ctx.producer_name, ctx.stage_name)


class _BodyAllocator:
    """Warp's allocator inside a captured condition or loop body: CUDA forbids
    allocation nodes there (the driver crashes on one), so each allocation is
    refused before it reaches CUDA; frees go to the allocator it replaced."""

    def __init__(self, ctx: LaunchContext, replaced: Any) -> None:
        self.ctx = ctx
        self.replaced = replaced

    def allocate(self, size_in_bytes: int) -> int:
        raise _not_capturable(
            self.ctx, "a Warp allocation of %d bytes inside a captured condition or loop "
            "body, where CUDA forbids allocations; allocate it before the capture, or use "
            "track_gen.interop.warp.scratch(ctx, shape, dtype)" % size_in_bytes)

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        self.replaced.deallocate(ptr, size_in_bytes)


def _known(ws: "wp.Stream", capture_id: int) -> bool:
    """Whether Warp knows the capture *capture_id* on *ws*: registered on
    that wrapper (under an older id, maybe: a capture Warp paused and
    resumed for capture_if has a new one), or by its id (Warp's own capture,
    or one registered with it, such as torch's under registered())."""
    captures = ws.device.captures
    return ws in captures or any(g.capture_id == capture_id for g in captures.values())


def _check_capture(ctx: LaunchContext) -> None:
    """Raises CaptureError naming the stage when its work broke the capture."""
    if _native.capture_info(ctx.stream)[0] == CaptureState.INVALIDATED:
        raise _error(
            CaptureErrorCode.FAILED,
            "%s: the capture of its stream was invalidated during the stage's Warp work "
            "(a synchronization, a free or a launch on CUDA's legacy stream)" % _where(ctx),
            ctx.producer_name, ctx.stage_name)


def _mode() -> "wp.CaptureMode":
    """The mode of TrackGen's own captures: thread-local, relaxed inside a
    relaxed registered torch capture."""
    modes = getattr(_modes, "stack", None)
    return modes[-1] if modes else wp.CaptureMode.THREAD_LOCAL


@contextlib.contextmanager
def scope(ctx: LaunchContext) -> Iterator["wp.Stream"]:
    """Gives the stage's Warp work its stream for a ``with`` block inside a
    stage: yields :func:`stream_of`\\ (ctx), Warp's current stream on the
    stage's device during the block, and registers the stage's capture with
    Warp when Warp does not know it (see the module's docstring)."""
    ordinal = ctx.device
    if ordinal not in _prepared:
        if ctx.is_capturing:
            raise _error(
                StateErrorCode.FAILED,
                "%s: Warp is not set up on device %d, and setting it up inside a capture "
                "breaks it; call track_gen.interop.warp.prepare(%d) before the capture, or "
                "decorate the stage with track_gen.interop.warp.stage(device=%d)"
                % (_where(ctx), ordinal, ordinal, ordinal), ctx.producer_name,
                ctx.stage_name)
        prepare(ordinal)
    ws = stream_of(ctx)
    dev = ws.device
    known = ctx.is_capturing and _known(ws, ctx.capture_id)
    # sync_enter=False: the default makes ws wait for Warp's previous stream,
    # an event wait a capture refuses (CUDA error 905).
    with _current_lock(ordinal), wp.ScopedStream(ws, sync_enter=False):
        if not ctx.is_capturing:
            yield ws
            return
        with (_registration(ws, _mode(), ctx.keep, _where(ctx),
                            ctx.producer_name, ctx.stage_name)
              if not known else contextlib.nullcontext()), \
             (wp.ScopedAllocator(dev, _BodyAllocator(ctx, dev.get_allocator()))
              if ctx.depth > 0 else contextlib.nullcontext()):
            yield ws
    _check_capture(ctx)


@contextlib.contextmanager
def _registration(ws: "wp.Stream", mode: "wp.CaptureMode", keep: Callable[[Any], Any],
                  where: str, *about: Optional[str]) -> Iterator[None]:
    """Registers the capture in progress on *ws* with Warp, in *mode*, for the
    block (the capture goes on after it), then hands Warp's Graph, which
    holds what Warp made for the capture, to *keep*.  *where* and *about*
    (producer, stage) name the caller in a CaptureError."""
    wp.capture_begin(stream=ws, external=True, capture_mode=mode)
    graph = ws.device.captures[ws]
    try:
        try:
            yield
        except BaseException:
            with contextlib.suppress(RuntimeError):
                wp.capture_end(stream=ws)
            raise
        try:
            wp.capture_end(stream=ws)
        except RuntimeError as e:
            # Warp could not read the capture's graph: the block broke it.
            raise _error(CaptureErrorCode.FAILED, "%s: Warp lost the capture: %s"
                         % (where, e), *about) from e
    finally:
        # The CUDA graph is the capture's owner's: a pause (capture_if) left
        # its handle in Warp's Graph, which would destroy it when dropped
        # after a failed capture_end (a successful one clears it).
        graph.graph = None
    keep(graph)


def stage(func: Optional[Callable[[LaunchContext], Any]] = None, *,
          device: Optional[int] = 0) -> Any:
    """Makes ``func(ctx)`` a stage whose Warp work runs in :func:`scope`\\ (ctx):
    ``@track_gen.interop.warp.stage`` or ``@track_gen.interop.warp.stage(device=1)``.

    *device* (an ordinal) is prepared (:func:`prepare`) now, outside any
    capture, when it exists (the stage then records on its first call); None
    prepares nothing.  The function is called as ``func(ctx)``; Warp's
    current stream is the stage's (``wp.get_stream()``)."""
    if device is not None:
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError("device: an int (a CUDA ordinal) or None, not %r" % (type(device),))
        if device < 0:
            raise ValueError("device: %d; pass a CUDA ordinal, 0 or more, or None" % device)
    if func is None:
        return functools.partial(stage, device=device)
    if not callable(func):
        raise TypeError("func: a callable taking the stage's LaunchContext, not %r"
                        % (type(func),))
    if device is not None and device < wp.get_cuda_device_count():
        prepare(device)

    @functools.wraps(func)
    def run(ctx: LaunchContext) -> Any:
        with scope(ctx):
            return func(ctx)

    return run


def array(source: Union[LaunchContext, Producer], name: str, dtype: Any = None,
          shape: Optional[Sequence[int]] = None) -> "wp.array":
    """The binding *name* of a stage's context or of a producer (*source*) as a
    ``wp.array`` (no copy): the array itself when a ``wp.array`` of *dtype*
    (any, when None) is bound, else a view of *shape* (all the binding, 1-D,
    by default) and *dtype* over the bound memory (a tensor's, a C
    producer's such as ``TrackProducer``'s), valid while the binding is.  A
    view of a producer's binding keeps the producer alive, as
    ``TrackProducer.tensor()`` does."""
    if isinstance(source, LaunchContext):
        bound, owner = source.binding(name), None
        ptr, size = source.binding_ptr(name), source.binding_size(name)
    else:
        found = source.get_binding(name)
        if found is None:
            raise KeyError("array: producer %r has no binding %r" % (source.name, name))
        (ptr, size), bound, owner = found, source.binding_owner(name), source
    if isinstance(bound, wp.array) and (dtype is None or bound.dtype == dtype) and (
            shape is None or tuple(shape) == bound.shape):
        return bound
    if dtype is None:
        raise TypeError("array: binding %r is not a wp.array; pass its dtype" % name)
    itemsize = wp.types.type_size_in_bytes(dtype)
    if shape is None:
        shape = (size // itemsize,)
    need = itemsize
    for extent in shape:
        need *= extent
    if need > size:
        raise ValueError("array: %s of %s needs %d bytes, binding %r has %d"
                         % (tuple(shape), wp.types.type_repr(dtype), need, name, size))
    # The deleter frees nothing: it holds the producer while the view lives.
    return wp.array(ptr=ptr, dtype=dtype, shape=tuple(shape),
                    device="cuda:%d" % source.device,
                    deleter=None if owner is None else lambda _p, _s, _o=owner: None)


@contextlib.contextmanager
def _relaxed() -> Iterator[None]:
    """This thread's CUDA calls in relaxed capture mode for the block, for
    scratch(): cudaMalloc is refused during a global or thread-local capture
    on this thread."""
    saved = _native._relaxed_begin()
    try:
        yield
    finally:
        _native._relaxed_end(saved)


def scratch(ctx: LaunchContext, shape: Union[int, Sequence[int]], dtype: Any) -> "wp.array":
    """Device memory for a stage's temporaries where a capture forbids
    allocating (condition and loop bodies): a ``wp.array`` (uninitialized)
    allocated outside the stream's order and kept as long as the graph
    holding the stage's work may run (``ctx.keep``); outside a capture, an
    ordinary temporary."""
    dev = _device(ctx.device)
    if not ctx.is_capturing:
        return wp.empty(shape, dtype=dtype, device=dev)
    # Not a stream-ordered allocation (a graph node): cudaMalloc, in relaxed
    # mode so that this thread's capture allows it.
    with _relaxed(), wp.ScopedAllocator(dev, dev.default_allocator):
        arr = wp.empty(shape, dtype=dtype, device=dev)
    ctx.keep(arr)
    return arr


def launch_graph(ctx: LaunchContext, graph: "wp.Graph") -> None:
    """Runs the Warp graph *graph* (from ``wp.capture_end``) as part of the
    stage's work, inside :func:`scope` or a :func:`stage`: launched on the
    stage's stream outside a capture, a child graph node of the capture
    otherwise (``wp.capture_launch`` there would be a plain graph launch,
    which a capture refuses).  CUDA refuses a child graph holding
    allocations or conditional nodes: NotCapturableError, before anything is
    added.  The stage keeps *graph* as long as the graph holding its work."""
    if not ctx.is_capturing:
        wp.capture_launch(graph, stream=stream_of(ctx))
        return
    ws = wp.get_stream("cuda:%d" % ctx.device)
    if ws.cuda_stream != ctx.stream or ws.device.captures.get(ws) is None:
        raise _error(StateErrorCode.FAILED,
                     "%s: launch_graph() outside track_gen.interop.warp.scope(ctx); call "
                     "it inside the stage's scope" % _where(ctx), ctx.producer_name,
                     ctx.stage_name)
    core = wp._src.context.runtime.core
    # Warp's own insertion of a child graph into a capture it knows (what
    # capture_if does with a Graph body): checks the child first.
    if not core.wp_cuda_graph_insert_child_graph(ws.device.context, ws.cuda_stream,
                                                 graph.graph):
        raise _not_capturable(ctx, "the Warp graph cannot be a child graph node: %s"
                              % wp._src.context.runtime.get_error_string())
    ctx.keep(graph)


@contextlib.contextmanager
def _torch_capture(handle: int, device: int, mode: int) -> Iterator[None]:
    """For interop.torch.registered() (a capture hook, _frameworks): registers
    torch's capture on *handle* with Warp, in *mode*, with Warp's current
    stream set to it, once Warp is set up on *device* (before that, no Warp
    work can run in the capture anyway); at the end, the torch graph keeps Warp's Graph (retain_capture:
    held by the CUDAGraph under interop.torch.graph())."""
    ws = stream_of(handle, device) if device in _prepared else None
    if ws is None or _known(ws, _native.capture_info(handle)[1]):
        yield
        return
    stack = _modes.__dict__.setdefault("stack", [])
    stack.append(wp.CaptureMode(mode))
    try:
        with _current_lock(device), \
             _registration(ws, stack[-1], lambda graph: retain_capture(handle, graph),
                           "track_gen.interop.torch.registered()"), \
             wp.ScopedStream(ws, sync_enter=False):
            yield
    finally:
        stack.pop()


def _in_torch_capture(ctx: LaunchContext) -> Optional[ContextManager[Any]]:
    """For run_stage (a stage hook, _frameworks): inside a torch capture
    registered with Warp on this thread, Warp's current stream is that
    capture, where a captured stage's Warp launch without ``stream=`` would
    land beside the producer's work, not in it; so every captured stage runs
    in :func:`scope`\\ (ctx) there, as a Warp stage does."""
    if getattr(_modes, "stack", None) and ctx.device in _prepared:
        return scope(ctx)
    return None


_frameworks.add_capture_hook(_torch_capture)
_frameworks.add_stage_hook(_in_torch_capture)
