/* SPDX-License-Identifier: Apache-2.0 */
// snippets-test-kernels.cu: the simulator that doc/snippets/snippets.h
// declares and the pages never define, and the legacy-stream plugin of
// doc/snippets/rules.c: trivial kernels whose effects tests/snippets-test
// checks (snippets-test.h says what each does).  One block each: the test
// sizes are small, and a block-wide vote needs no atomics on the data.
#include "snippets-test.h"

#define BLOCK 256

// What ran on the device since tgs_sim_reset(), and the simulator's step.
static __device__ unsigned steps, samples, sweeps, plugin_runs, period;
// The launchers' host calls.
static int host_steps, host_samples, host_sweeps;
static cudaError_t fail_next_sample = cudaSuccess;

static inline __host__ __device__ float
track_value (unsigned long long key, unsigned j)
{
  return (float)((key >> (j % 48u)) & 0xFFFFu);
}

static __global__ void
step_kernel (unsigned n_envs, unsigned char *done, int *any_done)
{
  unsigned s = steps, p = period;
  int any = 0;

  for (unsigned e = threadIdx.x; e < n_envs; e += blockDim.x)
    {
      done[e] = p != 0u && (e + s) % p == 0u;
      any |= done[e];
    }
  any = __syncthreads_or (any);
  if (threadIdx.x == 0)
    {
      *any_done = any;
      steps = s + 1u;
    }
}

static __global__ void
sample_kernel (unsigned n_envs, const unsigned char *done,
               const unsigned long long *keys, float *tracks, int *again)
{
  for (unsigned i = threadIdx.x; i < n_envs * TGS_TRACK_FLOATS; i += blockDim.x)
    {
      unsigned e = i / TGS_TRACK_FLOATS, j = i % TGS_TRACK_FLOATS;

      if (done[e])
        tracks[i] = j < TGS_TRACK_FLOATS - 1 ? track_value (keys[e], j) : 0.0f;
    }
  if (threadIdx.x == 0)
    {
      *again = 1;
      samples++;
    }
}

static __global__ void
relax_kernel (unsigned n_envs, const unsigned char *done, float *tracks, int *again)
{
  int moving = 0;

  for (unsigned e = threadIdx.x; e < n_envs; e += blockDim.x)
    if (done[e])
      {
        float *sweep = tracks + (size_t)e * TGS_TRACK_FLOATS + TGS_TRACK_FLOATS - 1;

        if (*sweep < (float)TGS_RELAX_SWEEPS)
          *sweep += 1.0f;
        moving |= *sweep < (float)TGS_RELAX_SWEEPS;
      }
  moving = __syncthreads_or (moving);
  if (threadIdx.x == 0)
    {
      *again = moving;
      sweeps++;
    }
}

static __global__ void
mark_kernel (unsigned n_envs, const unsigned char *done, float *tracks, unsigned at,
             float value)
{
  for (unsigned e = threadIdx.x; e < n_envs; e += blockDim.x)
    if (done[e])
      tracks[(size_t)e * TGS_TRACK_FLOATS + at] = value;
}

static __global__ void
plugin_kernel (void)
{
  plugin_runs++;
}

extern "C" cudaError_t
sim_launch_step (cudaStream_t stream, guint n_envs, guint8 *done, gint32 *any_done)
{
  g_atomic_int_inc (&host_steps);
  step_kernel<<<1, BLOCK, 0, stream>>> (n_envs, done, any_done);
  return cudaGetLastError ();
}

extern "C" cudaError_t
track_launch_sample (cudaStream_t stream, guint n_envs, const guint8 *done,
                     const guint64 *keys, float *tracks, gint32 *again)
{
  cudaError_t fail = fail_next_sample;

  g_atomic_int_inc (&host_samples);
  fail_next_sample = cudaSuccess;
  if (fail != cudaSuccess)
    return fail;
  sample_kernel<<<1, BLOCK, 0, stream>>> (
      n_envs, done, (const unsigned long long *)keys, tracks, again);
  return cudaGetLastError ();
}

extern "C" cudaError_t
track_launch_relax (cudaStream_t stream, guint n_envs, const guint8 *done,
                    float *tracks, gint32 *again)
{
  g_atomic_int_inc (&host_sweeps);
  relax_kernel<<<1, BLOCK, 0, stream>>> (n_envs, done, tracks, again);
  return cudaGetLastError ();
}

extern "C" cudaError_t
track_launch_layout (cudaStream_t stream, guint n_envs, gint kind, const guint8 *done,
                     float *tracks)
{
  mark_kernel<<<1, BLOCK, 0, stream>>> (n_envs, done, tracks, 1, 1000.0f + kind);
  return cudaGetLastError ();
}

extern "C" cudaError_t
track_launch_scenery (cudaStream_t stream, guint n_envs, gboolean night,
                      const guint8 *done, float *tracks)
{
  mark_kernel<<<1, BLOCK, 0, stream>>> (n_envs, done, tracks, 2, night ? 2.0f : 1.0f);
  return cudaGetLastError ();
}

extern "C" cudaError_t
plugin_launch_on_legacy_stream (void)
{
  plugin_kernel<<<1, 1, 0, cudaStreamLegacy>>> ();
  return cudaGetLastError ();
}

extern "C" void
tgs_sim_reset (guint p)
{
  const unsigned zero = 0;

  TG_TEST_CUDA (cudaDeviceSynchronize ());
  TG_TEST_CUDA (cudaMemcpyToSymbol (period, &p, sizeof p));
  TG_TEST_CUDA (cudaMemcpyToSymbol (steps, &zero, sizeof zero));
  TG_TEST_CUDA (cudaMemcpyToSymbol (samples, &zero, sizeof zero));
  TG_TEST_CUDA (cudaMemcpyToSymbol (sweeps, &zero, sizeof zero));
  TG_TEST_CUDA (cudaMemcpyToSymbol (plugin_runs, &zero, sizeof zero));
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  g_atomic_int_set (&host_steps, 0);
  g_atomic_int_set (&host_samples, 0);
  g_atomic_int_set (&host_sweeps, 0);
  fail_next_sample = cudaSuccess;
}

extern "C" void
tgs_sim_device_counts (TgsCounts *counts)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  TG_TEST_CUDA (cudaMemcpyFromSymbol (&counts->steps, steps, sizeof (unsigned)));
  TG_TEST_CUDA (cudaMemcpyFromSymbol (&counts->samples, samples, sizeof (unsigned)));
  TG_TEST_CUDA (cudaMemcpyFromSymbol (&counts->sweeps, sweeps, sizeof (unsigned)));
  TG_TEST_CUDA (
      cudaMemcpyFromSymbol (&counts->plugin_runs, plugin_runs, sizeof (unsigned)));
}

extern "C" void
tgs_sim_host_calls (TgsCounts *calls)
{
  calls->steps = (guint32)g_atomic_int_get (&host_steps);
  calls->samples = (guint32)g_atomic_int_get (&host_samples);
  calls->sweeps = (guint32)g_atomic_int_get (&host_sweeps);
  calls->plugin_runs = 0;
}

extern "C" void
tgs_sim_fail_next_sample (cudaError_t status)
{
  fail_next_sample = status;
}

extern "C" float
tgs_track_value (guint64 key, guint j)
{
  return track_value (key, j);
}
