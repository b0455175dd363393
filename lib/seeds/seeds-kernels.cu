/* SPDX-License-Identifier: Apache-2.0 */
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
// which below a few million envs costs more than the bytes.  The kernels
// below take envs by groups of 4, with 16-byte loads and stores (the mask as
// one 4-byte word); bench/seeds-bench.c compares their shapes.
typedef struct
{
  uint4 epochs;
  uint32_t mask; // its 4 bytes, the first env's lowest
  ulonglong2 seeds[2];
} Group;

template <bool MASKED>
static __device__ __forceinline__ Group
load_group (const uint64_t *__restrict__ seeds, const uint32_t *__restrict__ epochs,
            const uint8_t *__restrict__ mask, uint64_t g)
{
  Group r;

  r.epochs = reinterpret_cast<const uint4 *> (epochs)[g];
  r.mask = MASKED ? reinterpret_cast<const uint32_t *> (mask)[g] : 0;
  r.seeds[0] = reinterpret_cast<const ulonglong2 *> (seeds)[2 * g];
  r.seeds[1] = reinterpret_cast<const ulonglong2 *> (seeds)[2 * g + 1];
  return r;
}

// What env @byte of a group advances by.
template <bool MASKED>
static __device__ __forceinline__ uint32_t
step_of (uint32_t mask, int byte)
{
  return MASKED ? (mask >> (8 * byte) & 0xffu) != 0 : 1u;
}

template <bool MASKED>
static __device__ __forceinline__ void
store_group (uint64_t *__restrict__ out, uint32_t *__restrict__ epochs, uint64_t g,
             const Group &r)
{
  uint4 v = r.epochs;
  ulonglong2 o0, o1;

  v.x += step_of<MASKED> (r.mask, 0);
  v.y += step_of<MASKED> (r.mask, 1);
  v.z += step_of<MASKED> (r.mask, 2);
  v.w += step_of<MASKED> (r.mask, 3);
  reinterpret_cast<uint4 *> (epochs)[g] = v;
  o0.x = tg_effective_seed (r.seeds[0].x, v.x);
  o0.y = tg_effective_seed (r.seeds[0].y, v.y);
  o1.x = tg_effective_seed (r.seeds[1].x, v.z);
  o1.y = tg_effective_seed (r.seeds[1].y, v.w);
  reinterpret_cast<ulonglong2 *> (out)[2 * g] = o0;
  reinterpret_cast<ulonglong2 *> (out)[2 * g + 1] = o1;
}

// Envs from @first on, a @stride apart, one at a time: the tail past the
// groups, or every env of an unaligned call.
template <bool MASKED>
static __device__ __forceinline__ void
advance_fill_envs (uint64_t *__restrict__ out, const uint64_t *__restrict__ seeds,
                   uint32_t *__restrict__ epochs, const uint8_t *__restrict__ mask,
                   unsigned int n, uint64_t first, uint64_t stride)
{
  for (uint64_t i = first; i < n; i += stride)
    {
      uint32_t e = epochs[i] + (MASKED ? mask[i] != 0 : 1u);

      epochs[i] = e;
      out[i] = tg_effective_seed (seeds[i], e);
    }
}

// A block per THREADS * GROUPS groups: a thread takes GROUPS groups a stride
// apart, all loads first.  Scalar when not VEC.
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
      Group r[GROUPS];

#pragma unroll
      for (int k = 0; k < GROUPS; k++)
        if (base + k * stride < n4)
          r[k] = load_group<MASKED> (seeds, epochs, mask, base + k * stride);
#pragma unroll
      for (int k = 0; k < GROUPS; k++)
        if (base + k * stride < n4)
          store_group<MASKED> (out, epochs, base + k * stride, r[k]);
    }
  advance_fill_envs<MASKED> (out, seeds, epochs, mask, n, (VEC ? n4 * 4 : 0) + t, stride);
}

// A persistent grid, BLOCKS_PER_SM blocks on every SM: a thread walks its
// groups a grid apart and loads the next one before it stores the current
// one, so its loads stay in flight while it computes and stores, with two
// groups (104 bytes) a thread at all times and no wave of blocks ending
// while another starts.  Where a launch fills a single wave of the kernel
// above (E = 2^20 on an H200), every thread loads, then computes, then
// stores, and the device's compute and its memory wait for each other.
template <bool MASKED, int BLOCKS_PER_SM>
static __global__ void __launch_bounds__ (THREADS, BLOCKS_PER_SM)
advance_fill_stream_kernel (uint64_t *__restrict__ out, const uint64_t *__restrict__ seeds,
                            uint32_t *__restrict__ epochs, const uint8_t *__restrict__ mask,
                            unsigned int n)
{
  const uint64_t t = thread_index (), stride = grid_stride ();
  const uint64_t n4 = n / 4;
  Group cur = {};

  if (t < n4)
    cur = load_group<MASKED> (seeds, epochs, mask, t);
  for (uint64_t g = t; g < n4; g += stride)
    {
      Group next = {};

      if (g + stride < n4)
        next = load_group<MASKED> (seeds, epochs, mask, g + stride);
      store_group<MASKED> (out, epochs, g, cur);
      cur = next;
    }
  advance_fill_envs<MASKED> (out, seeds, epochs, mask, n, n4 * 4 + t, stride);
}

// Threads a launch needs: one per group of 4 plus up to 3 for the tail, or
// one per env when scalar.
static uint64_t
items_for (bool vec, unsigned int n)
{
  return vec ? (n / 4 > n % 4 ? n / 4 : n % 4) : n;
}

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

template <bool MASKED, int BLOCKS_PER_SM>
static cudaError_t
launch_advance_fill_stream (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                            uint32_t *epochs, const uint8_t *mask, unsigned int n)
{
  unsigned int grid = grid_for (items_for (true, n));
  int device = 0, sms = 0;
  cudaError_t status;

  // Not stream-ordered, and allowed during a capture: they only read what
  // the runtime knows of the device.
  if ((status = cudaGetDevice (&device)) != cudaSuccess
      || (status = cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, device))
             != cudaSuccess)
    return status;
  if (grid > (unsigned int) sms * BLOCKS_PER_SM)
    grid = (unsigned int) sms * BLOCKS_PER_SM;
  return tg__launch (advance_fill_stream_kernel<MASKED, BLOCKS_PER_SM>, grid, THREADS,
                     stream, out, seeds, epochs, mask, n);
}

template <bool MASKED>
static cudaError_t
launch_advance_fill_shape (cudaStream_t stream, uint64_t *out, const uint64_t *seeds,
                           uint32_t *epochs, const uint8_t *mask, unsigned int n,
                           TgSeedsShape shape)
{
  switch (shape == TG_SEEDS_SHAPE_DEFAULT ? TG_SEEDS_ADVANCE_FILL_SHAPE : shape)
    {
    case TG_SEEDS_SHAPE_GROUPS_1:
      return launch_advance_fill<MASKED, 1> (stream, out, seeds, epochs, mask, n);
    case TG_SEEDS_SHAPE_GROUPS_2:
      return launch_advance_fill<MASKED, 2> (stream, out, seeds, epochs, mask, n);
    case TG_SEEDS_SHAPE_GROUPS_4:
      return launch_advance_fill<MASKED, 4> (stream, out, seeds, epochs, mask, n);
    case TG_SEEDS_SHAPE_STREAM_2:
      return launch_advance_fill_stream<MASKED, 2> (stream, out, seeds, epochs, mask, n);
    case TG_SEEDS_SHAPE_STREAM_4:
      return launch_advance_fill_stream<MASKED, 4> (stream, out, seeds, epochs, mask, n);
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
                               TgSeedsShape shape)
{
  bool vec = aligned (out, 16) && aligned (seeds, 16) && aligned (epochs, 16)
             && (mask == NULL || aligned (mask, 4));

  if (shape < TG_SEEDS_SHAPE_DEFAULT || shape >= TG_SEEDS_N_SHAPES)
    return cudaErrorInvalidValue;
  if (vec && mask == NULL)
    return launch_advance_fill_shape<false> (stream, out, seeds, epochs, mask, n, shape);
  else if (vec)
    return launch_advance_fill_shape<true> (stream, out, seeds, epochs, mask, n, shape);
  else if (mask == NULL)
    return tg__launch (advance_fill_kernel<false, false, 1>, grid_for (n), THREADS,
                       stream, out, seeds, epochs, mask, n);
  else
    return tg__launch (advance_fill_kernel<false, true, 1>, grid_for (n), THREADS,
                       stream, out, seeds, epochs, mask, n);
}
