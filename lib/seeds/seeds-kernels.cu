// seeds-kernels.cu: the seed-state kernels.  Advance and fill only stream
// through memory, so each thread takes 4 envs with 16-byte accesses where the
// pointers are aligned (cudaMalloc's always are), and a scalar loop takes the
// tail and any unaligned caller buffer.
#include "seeds-kernels-private.h"
#include "../exec/kernel-private.cuh"

#define THREADS 256
// Grid-stride loops cover what a capped grid does not reach.
#define MAX_BLOCKS (1u << 20)

static unsigned int
grid_for (uint64_t items)
{
  uint64_t blocks = (items + THREADS - 1) / THREADS;

  return (unsigned int)(blocks == 0 ? 1 : blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS);
}

static bool
aligned (const void *ptr, size_t alignment)
{
  return (uintptr_t)ptr % alignment == 0;
}

static __device__ __forceinline__ uint64_t
thread_index (void)
{
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

static __device__ __forceinline__ uint64_t
grid_stride (void)
{
  return (uint64_t)gridDim.x * blockDim.x;
}

static __global__ void
init_kernel (uint64_t *seeds, uint32_t *epochs, unsigned int n, unsigned int first,
             uint64_t base_seed)
{
  for (uint64_t i = thread_index (); i < n; i += grid_stride ())
    {
      seeds[i] = tg_env_seed (base_seed, (uint32_t)(first + i));
      epochs[i] = 0;
    }
}

// Ids come from the device (a graph replays with new ones): out-of-range ids
// are skipped, never written.
static __global__ void
scatter_kernel (uint64_t *seeds, uint32_t *epochs, unsigned int n_envs,
                const uint32_t *ids, const uint64_t *values, unsigned int n)
{
  for (uint64_t k = thread_index (); k < n; k += grid_stride ())
    {
      uint32_t id = ids[k];
      if (id < n_envs)
        {
          seeds[id] = values[k];
          epochs[id] = 0;
        }
    }
}

static __global__ void
reset_kernel (uint32_t *epochs, const uint8_t *mask, unsigned int n)
{
  for (uint64_t i = thread_index (); i < n; i += grid_stride ())
    if (mask[i] != 0)
      epochs[i] = 0;
}

// Every epoch is read and written, masked or not: a branch-free store is
// cheaper than a divergent one, and unsigned addition wraps as documented.
template <bool VEC, bool MASKED>
static __global__ void
advance_kernel (uint32_t *__restrict__ epochs, const uint8_t *__restrict__ mask,
                unsigned int n)
{
  const uint64_t t = thread_index (), stride = grid_stride ();
  const uint64_t n4 = n / 4;

  for (uint64_t g = t; VEC && g < n4; g += stride)
    {
      uint4 e = reinterpret_cast<uint4 *> (epochs)[g];
      if (MASKED)
        {
          uchar4 m = reinterpret_cast<const uchar4 *> (mask)[g];
          e.x += m.x != 0;
          e.y += m.y != 0;
          e.z += m.z != 0;
          e.w += m.w != 0;
        }
      else
        {
          e.x += 1;
          e.y += 1;
          e.z += 1;
          e.w += 1;
        }
      reinterpret_cast<uint4 *> (epochs)[g] = e;
    }
  for (uint64_t i = (VEC ? n4 * 4 : 0) + t; i < n; i += stride)
    epochs[i] += MASKED ? mask[i] != 0 : 1u;
}

template <bool VEC>
static __global__ void
fill_kernel (uint64_t *__restrict__ out, const uint64_t *__restrict__ seeds,
             const uint32_t *__restrict__ epochs, unsigned int n)
{
  const uint64_t t = thread_index (), stride = grid_stride ();
  const uint64_t n4 = n / 4;

  for (uint64_t g = t; VEC && g < n4; g += stride)
    {
      const ulonglong2 *s = reinterpret_cast<const ulonglong2 *> (seeds) + 2 * g;
      ulonglong2 *o = reinterpret_cast<ulonglong2 *> (out) + 2 * g;
      ulonglong2 s0 = s[0], s1 = s[1], o0, o1;
      uint4 e = reinterpret_cast<const uint4 *> (epochs)[g];

      o0.x = tg_effective_seed (s0.x, e.x);
      o0.y = tg_effective_seed (s0.y, e.y);
      o1.x = tg_effective_seed (s1.x, e.z);
      o1.y = tg_effective_seed (s1.y, e.w);
      o[0] = o0;
      o[1] = o1;
    }
  for (uint64_t i = (VEC ? n4 * 4 : 0) + t; i < n; i += stride)
    out[i] = tg_effective_seed (seeds[i], epochs[i]);
}

// Advance, then fill, in one pass: each env's epoch is read once, advanced
// and written, and its effective seed computed from the new epoch: 25 bytes
// an env instead of the 29 of the two kernels, and one launch instead of two,
// which below a few million envs costs more than the bytes.  A thread takes
// GROUPS groups of 4 envs a stride apart, all loads first, so that a smaller
// grid keeps as many loads in flight; bench/seeds-bench.c compares GROUPS.
template <bool VEC, bool MASKED, int GROUPS>
static __global__ void
advance_fill_kernel (uint64_t *__restrict__ out, const uint64_t *__restrict__ seeds,
                     uint32_t *__restrict__ epochs, const uint8_t *__restrict__ mask,
                     unsigned int n)
{
  const uint64_t t = thread_index (), stride = grid_stride ();
  const uint64_t n4 = n / 4;

  for (uint64_t base = t; VEC && base < n4; base += stride * GROUPS)
    {
      uint4 e[GROUPS] = {};
      uchar4 m[GROUPS] = {};
      ulonglong2 s0[GROUPS] = {}, s1[GROUPS] = {};

#pragma unroll
      for (int k = 0; k < GROUPS; k++)
        {
          const uint64_t g = base + k * stride;
          if (g < n4)
            {
              e[k] = reinterpret_cast<const uint4 *> (epochs)[g];
              if (MASKED)
                m[k] = reinterpret_cast<const uchar4 *> (mask)[g];
              s0[k] = reinterpret_cast<const ulonglong2 *> (seeds)[2 * g];
              s1[k] = reinterpret_cast<const ulonglong2 *> (seeds)[2 * g + 1];
            }
        }
#pragma unroll
      for (int k = 0; k < GROUPS; k++)
        {
          const uint64_t g = base + k * stride;
          uint4 v = e[k];
          ulonglong2 o0, o1;

          if (g >= n4)
            continue;
          v.x += MASKED ? m[k].x != 0 : 1u;
          v.y += MASKED ? m[k].y != 0 : 1u;
          v.z += MASKED ? m[k].z != 0 : 1u;
          v.w += MASKED ? m[k].w != 0 : 1u;
          reinterpret_cast<uint4 *> (epochs)[g] = v;
          o0.x = tg_effective_seed (s0[k].x, v.x);
          o0.y = tg_effective_seed (s0[k].y, v.y);
          o1.x = tg_effective_seed (s1[k].x, v.z);
          o1.y = tg_effective_seed (s1[k].y, v.w);
          reinterpret_cast<ulonglong2 *> (out)[2 * g] = o0;
          reinterpret_cast<ulonglong2 *> (out)[2 * g + 1] = o1;
        }
    }
  for (uint64_t i = (VEC ? n4 * 4 : 0) + t; i < n; i += stride)
    {
      uint32_t e = epochs[i] + (MASKED ? mask[i] != 0 : 1u);

      epochs[i] = e;
      out[i] = tg_effective_seed (seeds[i], e);
    }
}

// Threads a launch needs: one per group of 4 plus up to 3 for the tail, or
// one per env when scalar.
static uint64_t
items_for (bool vec, unsigned int n)
{
  return vec ? (n / 4 > n % 4 ? n / 4 : n % 4) : n;
}

// The groups of 4 envs a thread of advance_fill_kernel takes when the
// caller does not say.
#define ADVANCE_FILL_GROUPS 1

template <bool MASKED, int GROUPS>
static cudaError_t
launch_advance_fill (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                     uint32_t *epochs, const uint8_t *mask, unsigned int n)
{
  uint64_t threads = (n / 4 + GROUPS - 1) / GROUPS;

  // The tail's threads: up to 3.
  if (threads < n % 4)
    threads = n % 4;
  return tg__launch (advance_fill_kernel<true, MASKED, GROUPS>, grid_for (threads),
                     THREADS, stream, out, seeds, epochs, mask, n);
}

template <bool MASKED>
static cudaError_t
launch_advance_fill_groups (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                            uint32_t *epochs, const uint8_t *mask, unsigned int n,
                            unsigned int groups)
{
  switch (groups == 0 ? ADVANCE_FILL_GROUPS : groups)
    {
    case 4:
      return launch_advance_fill<MASKED, 4> (stream, out, seeds, epochs, mask, n);
    case 2:
      return launch_advance_fill<MASKED, 2> (stream, out, seeds, epochs, mask, n);
    case 1:
      return launch_advance_fill<MASKED, 1> (stream, out, seeds, epochs, mask, n);
    default:
      return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t
tg__launch_seeds_init (cudaStream_t stream, uint64_t *seeds, uint32_t *epochs,
                       unsigned int n, unsigned int first, uint64_t base_seed)
{
  return tg__launch (init_kernel, grid_for (n), THREADS, stream, seeds, epochs, n,
                     first, base_seed);
}

extern "C" cudaError_t
tg__launch_seeds_scatter (cudaStream_t stream, uint64_t *seeds, uint32_t *epochs,
                          unsigned int n_envs, const uint32_t *ids,
                          const uint64_t *values, unsigned int n)
{
  return tg__launch (scatter_kernel, grid_for (n), THREADS, stream, seeds, epochs,
                     n_envs, ids, values, n);
}

extern "C" cudaError_t
tg__launch_seeds_reset (cudaStream_t stream, uint32_t *epochs, const uint8_t *mask,
                        unsigned int n)
{
  if (mask == NULL)
    return cudaMemsetAsync (epochs, 0, (size_t)n * sizeof *epochs, stream);
  return tg__launch (reset_kernel, grid_for (n), THREADS, stream, epochs, mask, n);
}

extern "C" cudaError_t
tg__launch_seeds_advance (cudaStream_t stream, uint32_t *epochs, const uint8_t *mask,
                          unsigned int n)
{
  bool vec = aligned (epochs, 16) && (mask == NULL || aligned (mask, 4));
  unsigned int grid = grid_for (items_for (vec, n));

  if (mask == NULL && vec)
    return tg__launch (advance_kernel<true, false>, grid, THREADS, stream, epochs, mask,
                       n);
  else if (mask == NULL)
    return tg__launch (advance_kernel<false, false>, grid, THREADS, stream, epochs,
                       mask, n);
  else if (vec)
    return tg__launch (advance_kernel<true, true>, grid, THREADS, stream, epochs, mask,
                       n);
  else
    return tg__launch (advance_kernel<false, true>, grid, THREADS, stream, epochs, mask,
                       n);
}

extern "C" cudaError_t
tg__launch_seeds_fill (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                       const uint32_t *epochs, unsigned int n)
{
  bool vec = aligned (out, 16) && aligned (seeds, 16) && aligned (epochs, 16);
  unsigned int grid = grid_for (items_for (vec, n));

  if (vec)
    return tg__launch (fill_kernel<true>, grid, THREADS, stream, out, seeds, epochs, n);
  else
    return tg__launch (fill_kernel<false>, grid, THREADS, stream, out, seeds, epochs,
                       n);
}

extern "C" cudaError_t
tg__launch_seeds_advance_fill (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                               uint32_t *epochs, const uint8_t *mask, unsigned int n,
                               unsigned int groups)
{
  bool vec = aligned (out, 16) && aligned (seeds, 16) && aligned (epochs, 16)
             && (mask == NULL || aligned (mask, 4));

  if (vec && mask == NULL)
    return launch_advance_fill_groups<false> (stream, out, seeds, epochs, mask, n,
                                              groups);
  else if (vec)
    return launch_advance_fill_groups<true> (stream, out, seeds, epochs, mask, n,
                                             groups);
  else if (mask == NULL)
    return tg__launch (advance_fill_kernel<false, false, 1>, grid_for (n), THREADS,
                       stream, out, seeds, epochs, mask, n);
  else
    return tg__launch (advance_fill_kernel<false, true, 1>, grid_for (n), THREADS,
                       stream, out, seeds, epochs, mask, n);
}
