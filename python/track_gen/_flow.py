# SPDX-License-Identifier: Apache-2.0
"""track_gen._flow: device-side control flow for any torch (or CUDA) code with
no producer to build: capture_if, capture_while and capture_switch, which
track_gen.exec exports and documents.

Each call runs a one-stage producer of the package's own, one per thread,
device, kind and nesting depth, made on first use and reused, so repeated
calls create nothing.  The stage reads the call in progress (a _Call) from
a slot only that thread's producer sees.  Outside a capture the producer
runs under EAGER, the package's eager decisions (the flag read back, the
chosen body run on the host); inside one it is recorded into the capture as
an IF, WHILE or SWITCH node.  A call made inside one of these bodies, on the
body's stream, nests in it directly: its node is built on the body's
LaunchContext (ctx.if_ and kin), as a stage's own conditions nest.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from track_gen import _native
from track_gen._errors import CaptureError

_IF, _WHILE, _SWITCH = "capture_if", "capture_while", "capture_switch"
_CAPTURE_SAFE = int(_native.StageFlags.CAPTURE_SAFE)


class _Thread(threading.local):
    """This thread's producers and the bodies of its calls in progress."""

    def __init__(self) -> None:
        #: The LaunchContext of each body running now, innermost last.
        self.bodies: List[Any] = []
        #: (kind, device, depth) -> (producer, slot of the call it runs).
        self.producers: Dict[Tuple[str, int, int], Tuple[Any, list]] = {}
        #: How many of those producers are running (the next one's depth).
        self.depth = 0


_here = _Thread()


class _Call:
    """One call in progress: its node's kind and words, its bodies (None runs
    nothing), and the first exception a body raised, re-raised as it was."""

    __slots__ = ("kind", "flag", "bodies", "kwargs", "max_iters", "status", "keep",
                 "guarded", "error")

    def __init__(self, kind: str, flag: int,
                 bodies: Sequence[Optional[Callable[..., Any]]], kwargs: Dict[str, Any],
                 max_iters: int = 0, status: int = 0, keep: Any = None) -> None:
        self.kind, self.flag, self.bodies, self.kwargs = kind, flag, bodies, kwargs
        self.max_iters, self.status = max_iters, status
        # What the recorded work writes and nobody else may keep: a status
        # the call allocated, which the caller may drop.
        self.keep = keep
        # The producer's call condition is the IF node: the stage is the body.
        self.guarded = False
        self.error: Optional[BaseException] = None

    def body(self, i: int) -> Callable[[Any], None]:
        """Body *i* as a LaunchContext callable."""
        def run(ctx: Any) -> None:
            func = self.bodies[i]
            _here.bodies.append(ctx)
            try:
                if func is not None:
                    func(**self.kwargs)
            except BaseException as e:
                if self.error is None:
                    self.error = e
                raise
            finally:
                _here.bodies.pop()
        return run

    def build(self, ctx: Any) -> None:
        """Builds the call's node on *ctx*: the producer's stage, or the body
        of an enclosing call."""
        if self.guarded:
            self.body(0)(ctx)
        elif self.kind == _IF:
            ctx.if_(self.flag, *[self.body(i) for i in range(len(self.bodies))])
        elif self.kind == _WHILE:
            if self.keep is not None:
                ctx.keep(self.keep)
            ctx.while_(self.flag, self.max_iters, self.status, self.body(0))
        else:
            ctx.switch(self.flag, [self.body(i) for i in range(len(self.bodies))])


def _producer(kind: str, device: int) -> Tuple[Any, list]:
    """This thread's producer of *kind* on *device* at the depth of the next
    call, and its slot."""
    key = (kind, device, _here.depth)
    entry = _here.producers.get(key)
    if entry is None:
        # The stage holds the slot, never the producer: no cycle to collect.
        slot: list = [None]
        producer = _native.Producer(kind, device)
        producer._add_stage(kind, lambda ctx: slot[0].build(ctx), _CAPTURE_SAFE)
        entry = _here.producers[key] = (producer, slot)
    return entry


def _device(device: int) -> int:
    """The device of a flag given by address (-1): torch's current one."""
    if device >= 0:
        return device
    if "torch" in sys.modules:
        return sys.modules["torch"].cuda.current_device()
    return 0


def _run(call: _Call, stream: Any, device: int) -> None:
    """Runs *call* on *stream*: nested in the body running on that stream,
    else through this thread's producer."""
    handle = _native._stream_handle(stream)
    try:
        ctx = _here.bodies[-1] if _here.bodies else None
        device = ctx.device if ctx is not None else _device(device)
        # Inside a body, naming no stream (or the body's) nests in it, as a
        # stage's own ctx.if_ does; elsewhere the producer's call follows
        # the stream rule.  NULL names the legacy stream, which a context
        # calls cudaStreamLegacy.
        if ctx is not None and (handle is None or (handle or 1) == ctx.stream):
            call.build(ctx)
        else:
            _run_producer(call, handle, device)
    except BaseException as e:
        # A capture lost half-way (a body that raised only in RECORD's
        # second pass) says so; otherwise the body's exception is the news.
        if call.error is None or (isinstance(e, CaptureError)
                                  and e.code == _native.CaptureErrorCode.FAILED):
            call.error = None
            raise
    if call.error is not None:
        # The body's exception itself, not the StageError that carried it.
        error, call.error = call.error, None
        try:
            raise error
        finally:
            error = None  # no cycle through this frame


def _run_producer(call: _Call, stream: Any, device: int) -> None:
    producer, slot = _producer(call.kind, device)
    # The stream rule is asked once: the call runs on the stream it chose.
    policy, stream = producer.resolve(stream)
    capturing = policy == _native.Policy.RECORD
    # Outside a capture: EAGER, never the producer's own graph (REPLAY),
    # which would replay the first call's bodies.
    policy = _native.Policy.RECORD if capturing else _native.Policy.EAGER
    call.guarded = call.kind == _IF and len(call.bodies) == 1
    slot[0] = call
    _here.depth += 1
    try:
        producer.run(stream, policy, call.flag if call.guarded else None)
    finally:
        _here.depth -= 1
        slot[0] = None


def capture_if(flag: Any, on_true: Optional[Callable[..., Any]] = None,
               on_false: Optional[Callable[..., Any]] = None, stream: Any = None,
               **kwargs: Any) -> None:
    """Runs ``on_true()`` when a device flag is non-zero, else ``on_false()``,
    decided on the device.

    Warp's ``wp.capture_if`` for any torch code, with no producer to build.
    Inside ``torch.cuda.graph`` (any capture mode) the call is an IF node of
    torch's graph whose bodies hold the callables' work, and every replay
    reads *flag* again; outside a capture it runs now, eagerly: the flag is
    read back (one wait for the stream) and the chosen callable runs.  The
    results are bit-identical both ways.

    The callables enqueue torch ops (or kernels on torch's current stream,
    which is the body's stream during the call) and may call capture_if,
    capture_while and capture_switch themselves: those nest in the body.
    Eagerly only the chosen callable is called.  Under a capture each one is
    called, to record its work: *on_true* once when there is no *on_false*;
    otherwise each twice (RECORD's trial capture and its second pass, as for
    a stage's own ``ctx.if_``), as is any body holding a nested call.  An
    exception a callable raises propagates unchanged; a call refused (a bad
    argument, a body that raised) records nothing into torch's capture,
    which goes on.  Only a body that raises when called again, in RECORD's
    second pass, leaves part of the call recorded: CaptureError, and the
    capture must be discarded.

    Args:
        flag (ArrayLike): An int32 (or uint32) device array (a torch tensor,
            anything with ``__cuda_array_interface__`` or ``__dlpack__``, or
            an int address); its first element decides.
        on_true (Callable[..., Any] | None): Called with *kwargs* (as Warp
            does) when the flag is non-zero; None runs nothing.
        on_false (Callable[..., Any] | None): Called with *kwargs* when the
            flag is 0; None runs nothing.
        stream (StreamLike): Where the work goes.  None: inside a body of
            capture_if, capture_while or capture_switch, that body (the call
            nests in it); elsewhere the stream rule on the flag's device
            (:func:`resolve_stream`: with torch imported, torch's current
            stream, where the torch ops around the call go; inside
            ``torch.cuda.graph`` the capturing stream, inside a stage
            ``ctx.stream``).
        **kwargs (Any): The callables' keyword arguments.

    Raises:
        ArgumentError: *flag* is not an int32 device array (``done.any()``
            is a bool tensor: pass ``done.any().int()``).
        TypeError: A body that is not callable.
        CaptureError: A body raised only in RECORD's second pass: the
            capture is lost.
    """
    _native._callable(on_true, "on_true", True)
    _native._callable(on_false, "on_false", True)
    address, device = _native._int32_array(flag, "flag", 1)
    if on_true is None and on_false is None:
        return
    bodies = (on_true,) if on_false is None else (on_true, on_false)
    _run(_Call(_IF, address, bodies, kwargs), stream, device)


def capture_while(flag: Any, while_body: Callable[..., Any], stream: Any = None, *,
                  max_iters: int, status: Any = None, **kwargs: Any) -> Any:
    """Runs ``while_body()`` while a device flag is non-zero, at most
    *max_iters* times, decided on the device.

    Warp's ``wp.capture_while`` with a cap and an exit reason.  The body
    updates *flag* (on the device) to end the loop.  Inside
    ``torch.cuda.graph`` the loop is a WHILE node of torch's graph; outside a
    capture it runs now, eagerly, reading the flag back before each
    iteration; bit-identical both ways.  The body is called once per
    iteration eagerly; under a capture twice in all, whatever the iterations
    (RECORD's trial capture and its second pass).

    Args:
        flag (ArrayLike): As :func:`capture_if` takes it.
        while_body (Callable[..., Any]): Called with *kwargs*, once per
            iteration.
        stream (StreamLike): As :func:`capture_if` takes it.
        max_iters (int): Required, 1 to ``2**31 - 1`` (libtrackgen checks
            it when the loop is built): bounds every run of the loop.
        status (ArrayLike | None): An int32 device array of two elements
            that each run of the loop fills with (iterations,
            :class:`LoopEnd`): ``SKIPPED`` when *flag* was 0 at entry,
            ``CONVERGED`` when the body cleared it, ``CAPPED`` when
            *max_iters* iterations ran.  None allocates a torch tensor of two
            int32 on the flag's device (from torch's current stream; inside a
            capture, from the graph's pool, and kept as long as the graph).
        **kwargs (Any): The body's keyword arguments.

    Returns:
        Any: *status*, or the tensor allocated for it: read it after the
        work ran (``torch.cuda.synchronize()``, or after ``g.replay()`` and a
        synchronization).

    Raises:
        ArgumentError: *flag* or *status* is not an int32 device array of
            the size needed; *max_iters* out of range.
        TypeError: A body that is not callable, *max_iters* not an int, or
            *status* None without torch.
        OverflowError: *max_iters* negative or past a C unsigned int.
    """
    _native._callable(while_body, "while_body")
    # Its range is libtrackgen's (tg_launch_while()), checked when the loop
    # is built.
    max_iters = _native._uint(max_iters, "max_iters")
    address, device = _native._int32_array(flag, "flag", 1)
    keep = None
    if status is None:
        if "torch" not in sys.modules:
            raise TypeError("status: None needs torch to allocate it; pass an int32 "
                            "device array of two elements")
        torch = sys.modules["torch"]
        status = keep = torch.empty(2, dtype=torch.int32,
                                    device=torch.device("cuda", _device(device)))
    status_address = _native._int32_array(status, "status", 2)[0]
    _run(_Call(_WHILE, address, (while_body,), kwargs, max_iters, status_address, keep),
         stream, device)
    return status


def capture_switch(index: Any, cases: Sequence[Optional[Callable[..., Any]]],
                   stream: Any = None, **kwargs: Any) -> None:
    """Runs ``cases[i]()``, ``i`` the int32 at *index*, decided on the device.

    Nothing runs when ``i`` is out of range (negative, or ``len(cases)`` or
    more).  A SWITCH node of torch's graph inside ``torch.cuda.graph``, the
    index read back and the case run now outside a capture; bit-identical
    both ways.  Eagerly only the chosen case is called; under a capture every
    case is, twice (RECORD's trial capture and its second pass).

    Args:
        index (ArrayLike): As :func:`capture_if` takes its flag.
        cases (Sequence[Callable[..., Any] | None]): A non-empty sequence of
            callables, called with *kwargs*; a None case runs nothing.
        stream (StreamLike): As :func:`capture_if` takes it.
        **kwargs (Any): The cases' keyword arguments.

    Raises:
        ArgumentError: *index* is not an int32 device array; *cases* is
            empty (libtrackgen's refusal, when the switch is built).
        TypeError: *cases* is not a sequence of callables.
    """
    if isinstance(cases, (str, bytes)) or not isinstance(cases, Sequence):
        raise TypeError("cases: a sequence of callables, not %r" % type(cases))
    for i, case in enumerate(cases):
        _native._callable(case, "cases[%d]" % i, True)
    address, device = _native._int32_array(index, "index", 1)
    _run(_Call(_SWITCH, address, tuple(cases), kwargs), stream, device)
