# SPDX-License-Identifier: Apache-2.0
"""track_gen.exec: how TrackGen's device work reaches the GPU.

Every piece of device work is a :class:`Producer`: ordered stages that
launch kernels (DEVICE), run on the host between them (HOST), iterate a body
on the device until a flag clears (LOOP) or pick one of several bodies
(SWITCH).  One call, :meth:`Producer.run`, decides from the stream's capture
state and the stages how the work runs (:class:`Policy`): launched eagerly,
replayed from a graph of the producer's own (:class:`GraphRunner`), or
recorded into the capture in progress on the stream (a ``torch.cuda.graph``),
with bit-identical results.  :func:`capture_if`, :func:`capture_while` and
:func:`capture_switch` bring the same device-side decisions to any torch
code, with no producer to build.  This module maps libtrackgen's exec layer
(``trackgen/exec.h``) one to one; each name says the C function it calls.

Streams are taken as the ecosystem passes them: ``None`` lets TrackGen choose
by the stream rule (see :func:`resolve_stream`: torch's current stream when
torch is imported, as torch's own calls do, else Warp's when warp is); an
``int`` is a ``cudaStream_t`` (``0`` is
CUDA's legacy default stream); a ``torch.cuda.Stream``, or any object with
``__cuda_stream__`` (cuda.core, CuPy), is its handle.  Device arrays are any
object with ``__cuda_array_interface__`` or ``__dlpack__`` (torch tensors,
CuPy arrays), or an ``int`` address with a size.

A stage written in Python is a callable taking a :class:`LaunchContext`; it
enqueues its work on ``ctx.stream``.  When torch is loaded, TrackGen makes
that stream torch's current stream during the call, and while the work is
captured it serves torch's allocations from a memory pool of their own that
lives as long as the graph holding the work (see ``LaunchContext.keep``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

from track_gen import _cupti, _frameworks, _native
from track_gen._errors import (
    ArgumentError,
    CaptureError,
    CudaError,
    LegacyPluginStreamError,
    NotCapturableError,
    RebindAfterCaptureWarning,
    StageError,
    StateError,
    TrackGenError,
)
from track_gen._flow import capture_if, capture_switch, capture_while

__all__ = [
    "Policy",
    "StageFlags",
    "CaptureState",
    "LoopEnd",
    "RebindOutcome",
    "CaptureErrorCode",
    "ArgumentErrorCode",
    "StateErrorCode",
    "Condition",
    "unconditional",
    "conditional",
    "LaunchContext",
    "HostOps",
    "Producer",
    "Binding",
    "GraphRunner",
    "RunnerStats",
    "LiveObjects",
    "live_objects",
    "release_wait",
    "set_nvtx",
    "nvtx_enabled",
    "set_checks",
    "checks_enabled",
    "resolve_stream",
    "resolve",
    "is_capturing",
    "capture_state",
    "default_stream",
    "device_check",
    "TrackGenError",
    "CaptureError",
    "NotCapturableError",
    "LegacyPluginStreamError",
    "CudaError",
    "ArgumentError",
    "StateError",
    "StageError",
    "RebindAfterCaptureWarning",
    "capture_if",
    "capture_while",
    "capture_switch",
]

#: What a stream argument takes; None (TrackGen chooses), a cudaStream_t as
#: an int, a torch stream, or an object with ``__cuda_stream__``.
StreamLike = Any
#: A device array; anything with ``__cuda_array_interface__`` or
#: ``__dlpack__``, or an int address.
ArrayLike = Any


# The C headers' enums, exported by the native module (values never
# retyped here).
Policy = _native.Policy
StageFlags = _native.StageFlags
CaptureState = _native.CaptureState
LoopEnd = _native.LoopEnd
RebindOutcome = _native.RebindOutcome
CaptureErrorCode = _native.CaptureErrorCode
ArgumentErrorCode = _native.ArgumentErrorCode
StateErrorCode = _native.StateErrorCode

Condition = _native.Condition
LaunchContext = _native.LaunchContext
HostOps = _native.HostOps


def unconditional() -> Condition:
    """The condition that always runs (tg_unconditional()).

    Returns:
        Condition: The condition every call takes when it is given none.
    """
    return _native.UNCONDITIONAL


def conditional(flag: ArrayLike) -> Condition:
    """Guards work by a device flag, one int32; non-zero runs (tg_conditional()).

    Under a capture the work sits in a CUDA conditional IF node that a replay
    skips on the device when the flag is 0; eagerly the flag is read back
    (one synchronization).  The condition keeps *flag* alive.

    Args:
        flag (ArrayLike): An int32 (or uint32) device array; its first
            element decides.

    Returns:
        Condition: The condition, for :meth:`Producer.run` and
        :meth:`LaunchContext.if_`.

    Raises:
        ArgumentError: *flag* is not an int32 or uint32 device array: a bool
            or uint8 flag such as ``done.any()`` is refused; pass
            ``done.any().int()``.
    """
    return Condition(flag)


@dataclass(frozen=True)
class RunnerStats:
    """The own-graph runner's counters (TgRunnerStats)."""

    #: Device segments (graphs) between HOST stages.
    n_segments: int
    #: Stream captures of own graphs made (REPLAY; RECORD's trial captures
    #: are not counted).
    n_captures: int
    #: Calls served by replaying own graphs.
    n_replays: int
    #: Own graphs updated in place (cudaGraphExecUpdate).
    n_updates: int
    #: Own graphs re-instantiated after a rebind.
    n_recaptures: int
    #: Rebinds after capture.
    n_rebinds: int
    #: How the latest rebind was absorbed.
    last_rebind: RebindOutcome


class GraphRunner:
    """The own-graph runner of a producer: REPLAY's graphs and their counters.

    Each maximal run of device stages is captured once into a graph of the
    producer's own, instantiated once and launched at every REPLAY call; HOST
    stages run between the launches.  A rebind refreshes a graph in place
    (``cudaGraphExecUpdate``) when the topology allows.
    """

    __slots__ = ("_producer",)

    def __init__(self, producer: "Producer") -> None:
        self._producer = producer

    @property
    def producer(self) -> "Producer":
        """The producer whose graphs these are."""
        return self._producer

    @property
    def stats(self) -> RunnerStats:
        """The counters now (tg_producer_get_runner_stats())."""
        return RunnerStats(*self._producer._runner_stats())

    def __repr__(self) -> str:
        return "GraphRunner(%r, %r)" % (self._producer.name, self.stats)


@dataclass(frozen=True)
class Binding:
    """A binding a producer's stages declared (:meth:`Producer.declare_binding`)."""

    #: The name it is bound under (:meth:`Producer.bind`).
    name: str
    #: The stages that declared it, by index.
    stages: Tuple[int, ...]
    #: The bytes the largest declaration needs.
    min_size: int
    #: The dtype :meth:`Producer.bind` checks, or None.
    dtype: Optional[str]


def _itemsize(dtype: str) -> int:
    """The bytes of one element of *dtype* ("float32", "uint8", "bool")."""
    match = re.fullmatch(r"(?:u?int|float|bfloat|complex)(8|16|32|64|128)|bool", dtype)
    if match is None:
        raise ValueError("dtype: %r; pass a name such as 'float32' or 'int64'" % dtype)
    return int(match.group(1)) // 8 if match.group(1) else 1


def _flags(capture_safe: bool, legacy_stream: bool = False) -> int:
    # A truthy "no" must not declare a stage capture-safe.
    return int((StageFlags.CAPTURE_SAFE if _native._switch(capture_safe, "capture_safe")
                else StageFlags.NONE)
               | (StageFlags.LEGACY_STREAM if _native._switch(legacy_stream, "legacy_stream")
                  else StageFlags.NONE))


class Producer(_native.Producer):
    """A producer of device work (TgProducer), with stages written in Python
    or in C.

    ``Producer(name, device=0, *, stream=None)``: a producer with no stages on
    CUDA device *device*; *stream*, when given, is bound
    (:meth:`set_stream`).  Add stages, declare and bind the buffers they use,
    then :meth:`run` it.  A producer is also a context manager: leaving the
    ``with`` block closes it (graphs that retained it keep it alive).
    """

    def __new__(cls, name: str, device: int = 0, *, stream: StreamLike = None):
        return super().__new__(cls, name, device)

    def __init__(self, name: str, device: int = 0, *, stream: StreamLike = None) -> None:
        self._init_declarations()
        if stream is not None:
            self.set_stream(stream)

    def _init_declarations(self) -> None:
        """What the Python side knows of the bindings: their dtypes and the
        declarations :attr:`bindings` lists."""
        self._dtypes: Dict[str, str] = {}
        self._declared: Dict[str, Binding] = {}

    # -- stages ------------------------------------------------------------

    def add_device_stage(self, name: str, func: Callable[[LaunchContext], Any], *,
                         capture_safe: bool = False,
                         legacy_stream: bool = False) -> int:
        """Appends a DEVICE stage (tg_producer_add_device_stage()).

        Stages are added before the first run.

        Args:
            name (str): The stage's name, unique in the producer.
            func (Callable[[LaunchContext], Any]): ``func(ctx)`` enqueues the
                stage's work on ``ctx.stream``.
            capture_safe (bool): The stage only enqueues work, so the
                producer can be replayed and recorded.
            legacy_stream (bool): The stage launches only on the legacy
                default stream (see :class:`LegacyPluginStreamError`).

        Returns:
            int: The stage's index.

        Raises:
            TypeError: *capture_safe* or *legacy_stream* is not True or False.
            ArgumentError: An empty or duplicate name.
            StateError: The producer already ran (``SEALED``).
        """
        return self._add_stage(name, func, _flags(capture_safe, legacy_stream))

    def add_host_stage(self, name: str, func: Callable[[HostOps], Any], *,
                       capture_safe: bool = False) -> int:
        """Appends a HOST stage (tg_producer_add_host_stage()).

        The stage runs on the host at its place in the order.  Under RECORD
        it runs at record time, so it must be *capture_safe* to be recorded.

        Args:
            name (str): The stage's name, unique in the producer.
            func (Callable[[HostOps], Any]): ``func(ops)`` runs on the host and
                uses *ops* for every stream operation.
            capture_safe (bool): The stage only enqueues host functions and
                pinned copies, so it can be recorded.

        Returns:
            int: The stage's index.

        Raises:
            TypeError: *capture_safe* is not True or False.
            ArgumentError: An empty or duplicate name.
            StateError: The producer already ran (``SEALED``).
        """
        return self._add_stage(name, func, _flags(capture_safe), True)

    def add_loop_stage(self, name: str, body: Callable[[LaunchContext], Any], *,
                       flag: str, status: str, max_iters: int,
                       capture_safe: bool = False) -> int:
        """Appends a bounded LOOP stage (tg_producer_add_loop_stage()).

        A WHILE node under a capture, a host loop eagerly.

        Args:
            name (str): The stage's name, unique in the producer.
            body (Callable[[LaunchContext], Any]): ``body(ctx)``, run while the
                int32 bound as *flag* is non-zero; it updates the flag.
            flag (str): The binding of the int32 flag.
            status (str): The binding of two int32 that each run fills with
                the iterations and the :class:`LoopEnd`.
            max_iters (int): The most iterations of one run, at least 1.
            capture_safe (bool): *body* only enqueues work.

        Returns:
            int: The stage's index.

        Raises:
            TypeError: *capture_safe* is not True or False.
            ValueError: *flag* or *status* is declared with another dtype.
            ArgumentError: An invalid name or *max_iters*.
            StateError: The producer already ran (``SEALED``).
        """
        for binding, what in ((flag, "flag"), (status, "status")):
            self._check_dtype(binding, "int32", what)
        stage = self._add_loop_stage(name, body, flag, status, max_iters,
                                     _flags(capture_safe))
        self._dtypes.update(dict.fromkeys((flag, status), "int32"))
        return stage

    def add_switch_stage(self, name: str, cases: Sequence[Callable[[LaunchContext], Any]],
                         *, index: str, capture_safe: bool = False) -> int:
        """Appends a SWITCH stage (tg_producer_add_switch_stage()).

        Args:
            name (str): The stage's name, unique in the producer.
            cases (Sequence[Callable[[LaunchContext], Any]]): ``cases[i](ctx)``
                runs, ``i`` the int32 bound as *index*; nothing runs when
                ``i`` is out of range.
            index (str): The binding of the int32 index.
            capture_safe (bool): The cases only enqueue work.

        Returns:
            int: The stage's index.

        Raises:
            TypeError: *capture_safe* is not True or False.
            ValueError: *index* is declared with another dtype.
            ArgumentError: An invalid name, or no case.
            StateError: The producer already ran (``SEALED``).
        """
        self._check_dtype(index, "int32", "index")
        if not isinstance(cases, Iterable):
            raise TypeError("cases: a sequence of callables, not %r" % (type(cases),))
        stage = self._add_switch_stage(name, list(cases), index, _flags(capture_safe))
        self._dtypes[index] = "int32"
        return stage

    def set_stage_condition(self, stage: int, flag_binding: Optional[str]) -> None:
        """Guards a stage by a device flag (tg_producer_set_stage_condition()).

        An IF node under a capture, a readback eagerly.

        Args:
            stage (int): The stage's index.
            flag_binding (str | None): The binding of the int32 flag; None
                removes the guard.

        Raises:
            ValueError: *flag_binding* is declared with another dtype.
            ArgumentError: *stage* is out of range.
        """
        if flag_binding is not None:
            self._check_dtype(flag_binding, "int32", "flag_binding")
        super().set_stage_condition(stage, flag_binding)
        if flag_binding is not None:
            self._dtypes[flag_binding] = "int32"

    def declare_binding(self, stage: int, name: str, min_size: Optional[int] = None, *,
                        dtype: Optional[str] = None, like: Optional[ArrayLike] = None,
                        shape: Optional[Sequence[int]] = None) -> None:
        """Declares that a stage reads a binding (tg_producer_declare_binding()).

        Every call then checks, before anything runs or is recorded, that the
        binding is bound and large enough.  Pass at most one of *min_size*,
        *like* and *shape*.  :attr:`bindings` lists the declarations.

        Args:
            stage (int): The stage's index.
            name (str): The binding's name.
            min_size (int | None): The bytes the stage reads, at least 1
                (the default).
            dtype (str | None): ``"float32"``, ``"int32"``, ...: checked by
                :meth:`bind` for arrays that carry a dtype.
            like (ArrayLike | None): An array of the size (and dtype) the stage
                reads, such as a tensor of its shape.
            shape (Sequence[int] | None): With *dtype*: ``prod(shape)``
                elements of *dtype*.

        Raises:
            TypeError: More than one of *min_size*, *like* and *shape*,
                *shape* without *dtype*, or an argument of the wrong type.
            ValueError: A dtype TrackGen has no name for or other than the
                binding's, or a bad shape.
            ArgumentError: *stage* is out of range.
        """
        if sum(x is not None for x in (min_size, like, shape)) > 1:
            raise TypeError("declare_binding: pass one of min_size, like and shape")
        if dtype is not None:
            if not isinstance(dtype, str):
                raise TypeError("dtype: a str such as 'float32', not %r" % (type(dtype),))
            _itemsize(dtype)  # a name TrackGen knows
        if like is not None:
            _ptr, min_size, like_dtype, _device = _native.array_info(like, "like")
            if dtype is not None and like_dtype and like_dtype != dtype:
                raise ValueError("dtype: %s, but like is an array of %s"
                                 % (dtype, like_dtype))
            dtype = dtype or like_dtype or None
        elif shape is not None:
            if dtype is None:
                raise TypeError("declare_binding: shape needs a dtype")
            if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
                raise TypeError("shape: a sequence of ints, not %r" % (type(shape),))
            min_size = _itemsize(dtype)
            for extent in shape:
                if not isinstance(extent, int) or isinstance(extent, bool) or extent < 1:
                    raise ValueError("shape: %r; pass positive int extents" % (shape,))
                min_size *= extent
        elif min_size is None:
            min_size = 1
        self._check_dtype(name, dtype)
        # Recorded once libtrackgen took the declaration: a refused one leaves none.
        try:
            self._declare_binding(stage, name, min_size)
        except ValueError as e:
            if shape is None:
                raise
            raise ValueError("shape: %r of %s: %s" % (shape, dtype, e)) from None
        if dtype is not None:
            self._dtypes[name] = dtype
        known = self._declared.get(name)
        stages = known.stages if known else ()
        self._declared[name] = Binding(
            name, stages if stage in stages else stages + (stage,),
            max(min_size, known.min_size) if known else min_size, self._dtypes.get(name))

    @property
    def bindings(self) -> Tuple["Binding", ...]:
        """The bindings declared so far, in the order of their first
        declaration (:class:`Binding`)."""
        return tuple(self._declared.values())

    def _check_dtype(self, name: str, dtype: Optional[str], what: str = "name") -> None:
        if not isinstance(name, str):
            raise TypeError("%s: a str, not %r" % (what, type(name)))
        known = self._dtypes.get(name, dtype)
        if dtype is not None and known != dtype:
            raise ValueError("dtype: binding %r is declared as %s and as %s"
                             % (name, known, dtype))

    # -- bindings ----------------------------------------------------------

    def bind(self, name: str, array: Optional[ArrayLike], size: Optional[int] = None) -> None:
        """Binds (or rebinds) device memory under a name (tg_producer_bind()).

        The producer keeps *array* alive while it is bound.  Rebinding a
        producer that was already captured issues
        :class:`RebindAfterCaptureWarning`: its own graphs are updated at the
        next call, the old array is kept alive for graphs of yours that
        recorded it, which must be captured again.

        Args:
            name (str): The binding's name.
            array (ArrayLike | None): A torch tensor, a CuPy array, anything
                with ``__cuda_array_interface__`` or ``__dlpack__``
                (C-contiguous), or an int address with *size*; None unbinds.
            size (int | None): The bytes at an int address.

        Raises:
            ArgumentError: Memory that is not device memory or is another
                device's, a *size* larger than the array, or an array whose
                dtype is not the declared one.  A binding smaller than a
                declaration is refused by the call (StateError).
        """
        if not isinstance(name, str):
            raise TypeError("name: a str, not %r" % (type(name),))
        self._bind(name, array, size, self._dtypes.get(name))

    def unbind(self, name: str) -> None:
        """Unbinds a binding (tg_producer_bind() with NULL).

        Args:
            name (str): The binding's name.
        """
        self.bind(name, None)

    # -- the runner --------------------------------------------------------

    @property
    def runner(self) -> GraphRunner:
        """The own-graph runner (REPLAY) and its counters."""
        return GraphRunner(self)

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<track_gen Producer (closed)>"
        return "<track_gen Producer %r on device %d, %d stages>" % (
            self.name, self.device, self.n_stages)


def resolve(producer: Producer, stream: StreamLike = None, policy: int = Policy.AUTO,
            condition: Optional[Condition] = None) -> Tuple[Policy, int]:
    """The policy and the stream a call would use, without running it
    (tg_producer_resolve()).

    Args:
        producer (Producer): The producer.
        stream (StreamLike): As :meth:`Producer.run` takes it.
        policy (Policy): As :meth:`Producer.run` takes it.
        condition (Condition | None): As :meth:`Producer.run` takes it.

    Returns:
        tuple[Policy, int]: The policy the call would take and its stream
        (``0`` for the legacy default stream, as in :func:`resolve_stream`).
    """
    return producer.resolve(stream, policy, condition)


def resolve_stream(stream: StreamLike = None, device: int = 0) -> int:
    """The stream a TrackGen call would use on a device
    (tg_stream_resolve_full()).

    The stream rule, the one every call that takes a stream follows
    (:meth:`Producer.run` and :meth:`Producer.resolve`, every
    :class:`~track_gen.seeds.SeedState` call, :func:`capture_if`,
    :func:`capture_while`, :func:`capture_switch`).  It lives in
    libtrackgen (``TgCallStream`` in ``trackgen/exec.h``); the package only
    reads the framework's current stream and passes it down as the
    *ambient* stream.  A call uses, in order:

    1. the stream it names (``0`` is the legacy default stream; a stream of
       another device raises ArgumentError);
    2. the capture registered on this thread (``interop.torch.registered()``
       or ``graph()``), except in a call a stage makes, which goes to the
       stage's stream (torch's current stream during a stage);
    3. the producer's bound stream (``Producer(stream=...)``, ``set_stream``);
    4. the ambient stream: torch's current stream on the call's device when
       torch is imported, as torch's own calls do; else, when warp is
       imported and has set the device up, Warp's current stream there
       (``wp.get_stream()``, what a ``wp.launch`` without ``stream=`` uses);
    5. TrackGen's default stream of the device, ordered with nothing of
       yours.

    Frameworks are found in ``sys.modules``: nothing is imported, and Warp
    is never initialized, to find out.  With both imported, torch's stream
    is the ambient one: it is per thread (Warp's is per device, shared by
    every thread), it is the stream ``interop.torch.graph()`` captures on
    (which also makes it Warp's current stream for the block), the stream
    of the torch ops in :func:`capture_if` bodies, and a stage's stream
    during a stage.  A Warp user who also imports torch names Warp's stream:
    ``stream=wp.get_stream()``.

    Inside ``torch.cuda.graph`` torch's current stream is capturing, so
    ``Policy.AUTO`` records into it and the graph retains the producer, as
    under ``registered()`` (register it yourself for a
    ``capture_error_mode="relaxed"`` capture).  Work never runs beside a
    capture in progress on the ambient stream: a call that names no stream
    and would (``Policy.EAGER`` or ``REPLAY``, a producer bound to another
    stream, a ``SeedState`` call that waits for its stream) raises
    StateError naming the fix.  ``resolve_stream`` itself is a call that
    can be recorded, with no bound stream.

    Args:
        stream (StreamLike): The stream a call names, or None.
        device (int): The CUDA device.

    Returns:
        int: The ``cudaStream_t`` the call would use; ``0`` for the legacy
        default stream, as torch names it (``torch.cuda.default_stream()``).

    Raises:
        ArgumentError: *stream* belongs to another device.
    """
    return _native.resolve_stream(stream, device)


def capture_state(stream: StreamLike) -> Tuple[CaptureState, int]:
    """A stream's capture state, without disturbing a capture in progress
    (tg_stream_get_capture_state()).

    Args:
        stream (StreamLike): The stream.

    Returns:
        tuple[CaptureState, int]: The state and the capture's id (0 when
        none).
    """
    state, capture_id, _graph = _native.capture_info(stream)
    return state, capture_id


def is_capturing(stream: StreamLike) -> bool:
    """Whether a stream is capturing (tg_stream_is_capturing()).

    Work enqueued on a capturing stream is recorded, never run.

    Args:
        stream (StreamLike): The stream.

    Returns:
        bool: True when its capture is active or invalidated.
    """
    return capture_state(stream)[0] in (CaptureState.ACTIVE, CaptureState.INVALIDATED)


def default_stream(device: int = 0) -> int:
    """TrackGen's default stream of a device (tg_default_stream()).

    Args:
        device (int): The CUDA device.

    Returns:
        int: The stream, a ``cudaStream_t`` ordered with nothing of yours.
    """
    return _native.default_stream(device)


def device_check(device: int = 0) -> None:
    """Checks that a device runs TrackGen's kernels (tg_device_check()).

    Args:
        device (int): The CUDA device.

    Raises:
        CudaError: The kernels do not run there (no kernel image for it).
    """
    _native.device_check(device)


@dataclass(frozen=True)
class LiveObjects:
    """What TrackGen created and has not destroyed yet (TgLiveObjects)."""

    producers: int
    graphs: int
    graph_execs: int
    streams: int
    captures: int
    #: Releases CUDA refused since the process started (each logged).
    failed_releases: int
    #: Streams of freed producers kept idle for later producers' captures
    #: (not counted in *streams*).
    idle_streams: int
    #: CUDA user objects TrackGen tied to graphs that still hold them; at
    #: most one per graph, none where nothing is kept or the graph's owner
    #: holds the references.
    user_objects: int


def live_objects() -> LiveObjects:
    """The live-object counters, for leak checks (tg_get_live_objects()).

    Returns:
        LiveObjects: What TrackGen created and has not destroyed yet.
    """
    return LiveObjects(*_native.live_objects())


def set_nvtx(on: bool) -> None:
    """Turns NVTX ranges on or off, for every thread (tg_set_nvtx()).

    A range named after the producer goes around each call, and
    ``"producer/stage"`` around each stage run on the host, so that Nsight
    Systems (``nsys profile --trace=cuda,nvtx``) shows TrackGen's work by
    name.  Off by default at the cost of one branch per call and stage; the
    environment variable ``TG_NVTX=1`` turns them on until this is called.

    Args:
        on (bool): Whether the ranges are on.

    Raises:
        TypeError: *on* is not True or False (a truthy ``"no"`` or ``1`` is
            refused, not taken for True).
    """
    _native.set_nvtx(on)


def nvtx_enabled() -> bool:
    """Whether NVTX ranges are on (tg_get_nvtx()).

    Returns:
        bool: What :func:`set_nvtx` set, else whether ``TG_NVTX=1``.
    """
    return _native.get_nvtx()


def set_checks(on: bool) -> None:
    """Turns checked mode on or off, for every thread (tg_set_checks()).

    With it on, every CUDA call a stage's thread makes while the stage runs
    that enqueues device work (torch's, Warp's, TrackGen's, the stage's own)
    is checked when the stage returns: under REPLAY and RECORD it must be in
    the stage's capture, under EAGER on ``ctx.stream`` or joined back to it;
    else the call raises :class:`NotCapturableError` (code ``ESCAPED``)
    naming the stage, the CUDA call, the kernel and the stream, and nothing
    is recorded.  It uses NVIDIA's CUPTI, loaded only when the mode is turned
    on: from ``TG_CUPTI_PATH`` when set, else from the ``nvidia-cuda-cupti``
    wheel when installed, else ``libcupti.so.13`` by name.  Off by default; ``TG_CHECK=1`` in the
    environment turns it on when the first producer is made, until this is
    called.

    Args:
        on (bool): Whether to check.

    Raises:
        TypeError: *on* is not True or False (a truthy ``"no"`` or ``1`` is
            refused, not taken for True).
        StateError: CUPTI cannot be loaded or subscribed to (a profiler
            holds it); the message names ``TG_CUPTI_PATH``.  Checked mode is
            off then.
    """
    if on is True:  # anything else is refused below, with nothing loaded
        _cupti.load_from_wheel()
    _native.set_checks(on)


def checks_enabled() -> bool:
    """Whether checked mode is on (tg_get_checks()).

    Returns:
        bool: What :func:`set_checks` set, else whether ``TG_CHECK=1``.
    """
    return _native.get_checks()


def release_wait(timeout: Optional[float] = None) -> bool:
    """Waits until every reference that graphs held was released
    (tg_release_wait()).

    Graphs hold retained producers, seed states and objects.  Delete your
    graphs first, since a live graph holds its references (the wait then
    lasts the whole timeout; what ``interop.torch.graph(g)`` keeps is held
    by ``g`` and waited for only once ``g`` is deleted); a graph deleted
    with replays in flight releases once they completed (synchronize first).

    Args:
        timeout (float | None): The most seconds to wait, >= 0; None (or
            ``math.inf``) waits for ever.

    Returns:
        bool: True when no release is outstanding.

    Raises:
        ValueError: A negative or NaN *timeout*.
    """
    return _native.release_wait(timeout)


# Every stage, body or host stage written in Python runs under the loaded
# framework (torch's current stream is the stage's during the call).
_native._set_stage_runner(_frameworks.run_stage)
