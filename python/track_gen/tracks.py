# SPDX-License-Identifier: Apache-2.0
"""track_gen.tracks: TrackGen's example track generator, a producer written in
C (examples/track-producer.c), from Python.

Each env's track is keyed by its (seed, epoch) in a
:class:`~track_gen.seeds.SeedState` and by its shape family: K control
points drawn by the family, a closed Catmull-Rom centerline resampled to N
points evenly spaced by arc length, a bounded relaxation that smooths sharp
turns away (a WHILE loop on the device), and a validity test.  Only envs whose
mask byte is non-zero are (re)generated.  With ``lookahead=L``, each env
keeps its L next tracks ready, made ahead in batches: an env that ends
switches to its next track in one always-on kernel, bit for bit the track
on-demand generation would make (see :class:`TrackProducer`).  The
family of a call is a device value (``"family"``), so a graph that recorded
the producer can change it between replays.

The producer is compiled into the package's native module, beside its copy
of libtrackgen, and wrapped in the same :class:`track_gen.exec.Producer` as a
producer built in Python: run it, record it, guard it by a condition like
any other.  Its buffers are its bindings (``"mask"``, ``"family"``,
``"points"``, ``"families"``, ``"valid"``, ...); :meth:`TrackProducer.tensor`
gives one as a torch tensor over the producer's memory.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from track_gen import _native
from track_gen.exec import Producer, StreamLike, resolve_stream
from track_gen.seeds import SeedState

__all__ = ["TrackProducer", "FAMILIES", "MAX_LOOKAHEAD", "family_name", "write_svg"]

#: The shape families, by index; what ``"family"`` selects.
FAMILIES = tuple(_native.track_family_name(f) for f in range(_native.TRACK_N_FAMILIES))

#: The most spare tracks an env may keep ready (``lookahead``'s upper bound).
MAX_LOOKAHEAD = _native.TRACK_MAX_LOOKAHEAD

# Element types of the bindings, for TrackProducer.tensor(): (torch dtype
# name, elements per env, or None for one element in all).
_LAYOUT = {
    "mask": ("uint8", 1),
    "families": ("uint8", 1),
    "valid": ("uint8", 1),
    "sharpness": ("float32", 1),
    "family": ("int32", None),
    "flag": ("int32", None),
    "generated": ("int32", None),
    "loop_status": ("int32", None),
    "ids": ("int32", 1),
    "list": ("int32", None),
}


def family_name(family: int) -> str:
    """A shape family's name.

    Args:
        family (int): The family's index.

    Returns:
        str: ``"polar"``, ``"stadium"``, ``"star"``, or ``"none"`` out of
        range.
    """
    return _native.track_family_name(family)


class TrackProducer(Producer):
    """The track producer for the envs of a seed state (track_producer_new()).

    The producer keeps *seeds* alive and owns its buffers, initialized every
    env masked, family 0.

    Args:
        seeds (SeedState): The envs and their (seed, epoch) keys.
        stream (StreamLike): Where the buffers are initialized; TrackGen's
            stream of the seeds' device by default.
        **config (Any): ``advance=False`` (each generation first advances
            the masked envs' epochs), ``max_iters=32``, ``min_iters=0``,
            ``lookahead=0``,
            ``refill_batch=64``, ``overlap=False``, ``n_points=128``,
            ``n_control=12``,
            ``radius=100.0``, ``radius_jitter=0.3``, ``angle_jitter=0.5``,
            ``width=12.0``, ``min_turn_radius=20.0``.

    With ``lookahead=L`` (1 to :data:`MAX_LOOKAHEAD`, and ``advance=True``), every env keeps
    its next L tracks ready, made from (seed, epoch + 1) ... (seed, epoch +
    L), each of the ``"family"`` of the end that freed its slot (a family
    set now reaches an env's tracks L episodes later).  Each
    :meth:`~track_gen.exec.Producer.run` is then one always-on kernel:
    every masked env moves on to its next epoch and takes
    its next track (``"points"``, ``"families"``, ``"valid"``, ...), the
    same bit for bit as on-demand generation makes; the same kernel, when
    the previous call decided so (``refill_batch`` spares spent, or an env
    with none left), refills the spent spares, each track made whole in
    it.  No conditional node: one kernel a step.  The first call makes
    every env's track, the next one their spares.  Run it unconditionally
    on every step, with no :func:`~track_gen.exec.conditional`.
    ``lookahead=2`` lets the refills batch; with 1, every end starts one.
    ``min_iters=N`` (up to ``max_iters``, lookahead only) relaxes every
    spare track N times, smooth or not: a smooth track does not move, so
    the tracks are the same, each at a set cost (a stand-in for a slow
    generator, to see what one does to a loop).  The kernel has a refill
    block per env of a batch (up to what the SMs hold at once), launched at
    every call: a refill takes about one track's time whatever its size, so
    a step of a millisecond gains from a larger
    ``refill_batch`` (``examples/race_mjwarp.py``: 512), a step of a few
    microseconds from a small one (the default, 64).

    With ``overlap=True`` as well, the refills run beside the steps instead,
    on a stream of the device's least priority (give the steps' stream a
    greater one: ``torch.cuda.Stream(priority=-1)``), for generators far
    slower than a step: each call then only switches, and :meth:`poll`,
    called by the host loop after each step, starts a refill when one is
    due.  An env whose next spare is not made yet when it ends gets that
    track made at once, the same track: a run is reproducible whatever the
    timing.
    """

    def __new__(cls, seeds: SeedState, *, stream: StreamLike = None, **config: Any):
        return _native._track_producer_new(cls, seeds, stream, **config)

    def __init__(self, seeds: SeedState, *, stream: StreamLike = None,
                 **config: Any) -> None:
        self._init_declarations()
        self._seeds = seeds
        full = _native._track_config(seeds.n_envs)
        full.update(config)
        self.n_envs = seeds.n_envs
        self.lookahead = int(full["lookahead"])
        self._refiller = (_native._track_refiller_new(self, seeds, **config)
                          if full.get("overlap") else None)
        self.n_points = int(full["n_points"])
        self.n_control = int(full["n_control"])
        self.width = float(full["width"])

    @property
    def seeds(self) -> SeedState:
        """The seed state the producer generates for."""
        return self._seeds

    def tensor(self, name: str) -> Any:
        """A binding as a torch tensor over the producer's memory.

        No copy; the tensor keeps the producer alive.

        Args:
            name (str): ``"points"``: (n_envs, n_points, 2) float32;
                ``"control"``: (n_envs, n_control, 2); the per-env bytes
                ``"mask"``, ``"families"``, ``"valid"``: (n_envs,) uint8;
                ``"sharpness"``: float32; ``"family"`` and ``"flag"``: one
                int32; ``"loop_status"``: two int32 (iterations, end);
                ``"ids"``: (n_envs,) int32, the envs the last call
                regenerated, in any order; ``"list"``: four int32 (how many,
                then the kernels' tallies).

        Returns:
            torch.Tensor: The tensor.

        Raises:
            KeyError: The producer has no such binding.
        """
        import torch
        from track_gen.interop.torch import tensor_at

        found = self.get_binding(name)
        if found is None:
            raise KeyError("the track producer has no binding %r" % name)
        ptr, size = found
        if name in ("points", "control"):
            n = self.n_points if name == "points" else self.n_control
            return tensor_at(ptr, (self.n_envs, n, 2), torch.float32, self)
        dtype, per_env = _LAYOUT[name]
        torch_dtype = getattr(torch, dtype)
        item = torch.tensor([], dtype=torch_dtype).element_size()
        shape = (self.n_envs,) if per_env else (size // item,)
        return tensor_at(ptr, shape, torch_dtype, self)

    def reset(self, stream: StreamLike = None) -> None:
        """Drops every env's spare tracks (with ``lookahead``; nothing
        otherwise), ordered on *stream*: each env's next end makes its track
        and spares anew, as after construction, so that a run does not
        depend on what an earlier one left.

        Args:
            stream (StreamLike): Where; the stream rule's stream when None
                (:func:`~track_gen.exec.resolve_stream`).
        """
        _native._track_producer_reset(self, resolve_stream(stream, self.device))

    def _the_refiller(self) -> Any:
        from track_gen.exec import StateError
        if self.closed:
            raise StateError("the track producer is closed")
        if self._refiller is None:
            raise StateError("the producer refills in its own calls: poll() and the "
                             "refill methods need TrackProducer(overlap=True)")
        return self._refiller

    def poll(self) -> bool:
        """With ``overlap=True``: starts a refill beside the steps when one is
        due (track_refiller_poll()): ``refill_batch`` spares spent since the
        last one, or an env's next spare not made, and none running.  Call it
        after launching each step; a read of host memory that the steps'
        kernels write, no CUDA call unless a refill is due.  Call it,
        :meth:`wait_refill` and :meth:`refill_stats` from one thread at a
        time (the loop's; a call of another thread may not overlap them),
        though another thread may capture meanwhile.

        Returns:
            bool: Whether it started one.

        Raises:
            StateError: The producer was made without ``overlap``, or closed.
        """
        return _native._track_refiller_poll(self._the_refiller())

    def wait_refill(self) -> None:
        """With ``overlap=True``: waits for the running refill, if any.

        Raises:
            StateError: The producer was made without ``overlap``, or closed.
        """
        _native._track_refiller_wait(self._the_refiller())

    def refill_stats(self) -> dict:
        """With ``overlap=True``: what the refills did so far.

        Returns:
            dict: ``freed`` (slots freed by ends), ``misses`` (ends whose next
            spare was not made: made at once), ``urgent``, ``made`` (spares
            made by refills), ``refills`` (done), ``started`` (the first,
            at construction, included), ``gpu_ms`` (the GPU time of the
            refills after the first, start to end on their stream),
            ``busy_ms`` (the time their blocks were resident, summed),
            ``blocks`` (a refill's blocks, one an SM: ``busy_ms`` over
            ``blocks`` times a span is the share of the GPU's SM time the
            refills held in it), ``stream`` (the refills' stream handle).
            Counts wrap at 2**32.

        Raises:
            StateError: The producer was made without ``overlap``, or closed.
        """
        return _native._track_refiller_stats(self._the_refiller())

    def close(self) -> None:
        """Frees the refiller (waiting for its refill), then the producer."""
        self._refiller = None
        super().close()

    def write_svg(self, path: str, envs: Sequence[int] = range(16),
                  labels: Optional[Sequence[str]] = None) -> None:
        """Draws tracks, their current points and validity, to an SVG grid.

        Waits for the device.

        Args:
            path (str): The SVG file to write.
            envs (Sequence[int]): The envs to draw.
            labels (Sequence[str] | None): One caption per track.
        """
        points = self.tensor("points")[list(envs)].contiguous().cpu()
        valid = self.tensor("valid")[list(envs)].contiguous().cpu()
        write_svg(path, points.numpy().tobytes(), bytes(valid.tolist()), len(envs),
                  self.n_points, self.width, labels)

    def __repr__(self) -> str:
        if self.closed:
            return "<track_gen TrackProducer (closed)>"
        return "<track_gen TrackProducer of %d envs, %d points each>" % (self.n_envs,
                                                                         self.n_points)


def write_svg(path: str, points: bytes, valid: bytes, n_tracks: int, n_points: int,
              width: float, labels: Optional[Sequence[str]] = None) -> None:
    """Writes closed tracks as an SVG grid (track_svg_write()).

    Args:
        path (str): The SVG file to write.
        points (bytes): float32 (x, y) pairs, track-major.
        valid (bytes): One byte per track, non-zero when valid.
        n_tracks (int): The tracks, 1 or more.
        n_points (int): The points of each track, 3 or more.
        width (float): The track's width, positive.
        labels (Sequence[str] | None): One caption per track.

    Raises:
        TypeError: An argument of the wrong type, named.
        ValueError: A count out of range, a width not positive, or *points*
            and *valid* not 8 bytes a point and one a track.
        OSError: The file could not be written.
    """
    _native._track_svg_write(path, points, valid, n_tracks, n_points, width,
                             None if labels is None else list(labels))

