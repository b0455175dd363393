# SPDX-License-Identifier: Apache-2.0
"""track_gen.seeds: per-env seeds and device-side epochs (``trackgen/seeds.h``).

Every generation of an env is keyed by its 64-bit seed and its 32-bit epoch
through :func:`effective_seed`, so any track can be regenerated later from
(seed, epoch) alone.  A :class:`SeedState` keeps both for E envs on the
device; advancing the epochs of the envs in a device mask is a kernel, so
regeneration and auto-reset happen inside a graph.  Its device pointers stay
fixed for its life, since graphs bake them in.

Streams and arrays are taken as in :mod:`track_gen.exec`.  The enqueued calls
(``advance``, ``reset_epochs``, ``set_seeds_device``, ``fill_effective``) can
be captured; the blocking ones (``set_seeds``, ``read``, ``snapshot``,
``restore``) wait for their stream and refuse a capturing one.
"""
from __future__ import annotations

import struct
from typing import Any, Optional, Sequence, Sized

from track_gen import _native

__all__ = ["SeedState", "effective_seed", "env_seed", "mix64"]


def mix64(z: int) -> int:
    """SplitMix64's finalizer (tg_mix64()), a bijection of 64-bit integers.

    Args:
        z (int): From 0 to ``2**64 - 1``.

    Returns:
        int: The mixed value, from 0 to ``2**64 - 1``.
    """
    return _native.mix64(z)


def effective_seed(seed: int, epoch: int) -> int:
    """The seed that keys one generation of an env (tg_effective_seed()).

    Bit-identical to the C host and device functions:
    ``mix64(seed ^ ((epoch + 1) * 0x9E3779B97F4A7C15))``.

    Args:
        seed (int): The env's seed, 64 bits.
        epoch (int): The generation's epoch, 32 bits.

    Returns:
        int: The effective seed, 64 bits.
    """
    return _native.effective_seed(seed, epoch)


def env_seed(base_seed: int, env: int) -> int:
    """The seed a state gives an env of a population (tg_env_seed()).

    Args:
        base_seed (int): The population's seed.
        env (int): The env's global index.

    Returns:
        int: The env's seed, 64 bits.
    """
    return _native.env_seed(base_seed, env)


def _pack(what: str, fmt: str, values: Sequence[int]) -> bytes:
    """*values* as little-endian uint32 ("I") or uint64 ("Q"), each checked:
    OverflowError naming ``what[i]`` for one out of range."""
    return _native._pack_uints(what, values, struct.calcsize(fmt))


class SeedState(_native.SeedState):
    """Per-env seeds and epochs on one device (TgSeedState).

    Env ``e`` is seeded ``env_seed(base_seed, e)``, every epoch 0
    (tg_seed_state_new_shard()).  A population sharded over devices this way
    generates the same tracks as one state of all its envs.  Creating a state
    may happen during a capture: it uses TrackGen's own stream and leaves the
    capture intact.  Also a context manager (closes on exit).

    Args:
        n_envs (int): The envs of this state, ``[first_env, first_env +
            n_envs)`` of the population.
        base_seed (int): The population's seed.
        device (int): The CUDA device.
        first_env (int): The global index of the state's first env.
    """

    def __new__(cls, n_envs: int, base_seed: int = 0, *, device: int = 0,
                first_env: int = 0, _seeds: Optional[bytes] = None):
        return super().__new__(cls, n_envs, base_seed, device, first_env, _seeds)

    def __init__(self, n_envs: int, base_seed: int = 0, *, device: int = 0,
                 first_env: int = 0, _seeds: Optional[bytes] = None) -> None:
        pass

    @classmethod
    def shard(cls, first_env: int, n_envs: int, base_seed: int, *,
              device: int = 0) -> "SeedState":
        """One device's shard of a population (tg_seed_state_new_shard()).

        Args:
            first_env (int): The global index of the shard's first env.
            n_envs (int): The envs of the shard.
            base_seed (int): The population's seed.
            device (int): The CUDA device.

        Returns:
            SeedState: Envs ``[first_env, first_env + n_envs)``.
        """
        return cls(n_envs, base_seed, device=device, first_env=first_env)

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], *, device: int = 0) -> "SeedState":
        """A state with the given seeds, every epoch 0
        (tg_seed_state_new_from_array()).

        Args:
            seeds (Sequence[int]): One 64-bit seed per env.
            device (int): The CUDA device.

        Returns:
            SeedState: A state of ``len(seeds)`` envs.
        """
        if not isinstance(seeds, Sized):
            raise TypeError("seeds: a sequence of ints, not %r" % (type(seeds),))
        return cls(len(seeds), device=device, _seeds=_pack("seeds", "Q", seeds))

    @classmethod
    def at(cls, seeds: Sequence[int], epochs: Sequence[int], *, device: int = 0,
           stream: Any = None) -> "SeedState":
        """A state whose env ``i`` is at ``(seeds[i], epochs[i])``.

        To regenerate given tracks standalone, bit for bit.  Blocks.

        Args:
            seeds (Sequence[int]): One 64-bit seed per env.
            epochs (Sequence[int]): One 32-bit epoch per env.
            device (int): The CUDA device.
            stream (StreamLike): Where the epochs are written.

        Returns:
            SeedState: A state of ``len(seeds)`` envs.
        """
        state = cls.from_seeds(seeds, device=device)
        try:
            state.write(None, epochs, stream)
        except BaseException:
            state.close()
            raise
        return state

    def set_seeds(self, env_ids: Sequence[int], seeds: Sequence[int],
                  stream: Any = None) -> None:
        """Sets the seeds of some envs and resets their epochs to 0
        (tg_seed_state_set_seeds()).

        Blocks; on an error nothing changed.

        Args:
            env_ids (Sequence[int]): Local env ids, distinct.
            seeds (Sequence[int]): One 64-bit seed per id.
            stream (StreamLike): Where the write is ordered.

        Raises:
            ValueError: Not one seed per id.
            OverflowError: A value out of its range.
            ArgumentError: An id out of range, or repeated.
        """
        if len(env_ids) != len(seeds):
            raise ValueError("seeds: %d of them for %d env ids" % (len(seeds), len(env_ids)))
        self._set_seeds(_pack("env_ids", "I", env_ids), _pack("seeds", "Q", seeds),
                        stream)

    def __enter__(self) -> "SeedState":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<track_gen SeedState (closed)>"
        return "<track_gen SeedState of envs %d to %d on device %d>" % (
            self.first_env, self.first_env + self.n_envs - 1, self.device)
