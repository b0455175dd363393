// simloop-kernels.cu: agents driving laps of their tracks.
#include <curand_kernel.h>

#include "simloop-kernels.h"

// Philox subsequences of a key: the track generator uses [0, K) of the
// effective seed; the agents use these, far above.
#define SUBSEQ_INIT (1ull << 32)
#define SUBSEQ_STEP ((1ull << 32) + 1)

G_STATIC_ASSERT (sizeof (guint64) == sizeof (unsigned long long));

static __global__ void
init_kernel (SimParams params, const guint64 *seeds, float *progress)
{
  guint e = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t rng;

  if (e >= params.n_envs)
    return;
  curand_init (seeds[e], SUBSEQ_INIT, 0, &rng);
  progress[e] = (float) params.n_points * (1.f - curand_uniform (&rng)); // [0, n)
}

static __global__ void
step_kernel (SimParams params, const guint64 *seeds, const guint32 *epochs,
             const guint8 *valid, float *progress, guint8 *mask, gint32 *any_done,
             SimCounters *counters)
{
  guint e = blockIdx.x * blockDim.x + threadIdx.x;
  guint64 *cause = NULL;
  float p;

  if (e >= params.n_envs)
    return;
  p = progress[e];
  if (!valid[e])
    cause = &counters->invalid;
  else
    {
      curandStatePhilox4_32_10_t rng;
      float4 u;

      curand_init (tg_effective_seed (seeds[e], epochs[e]), SUBSEQ_STEP + counters->steps,
                   0, &rng);
      u = curand_uniform4 (&rng);
      p += params.mean_speed * (0.5f + u.x);
      if (u.y < params.crash_prob)
        cause = &counters->crashes;
      else if (p >= (float) params.n_points)
        cause = &counters->laps;
    }
  if (cause != NULL)
    {
      atomicAdd ((unsigned long long *) cause, 1ull);
      atomicOr (any_done, 1);
      p = 0.f;
    }
  progress[e] = p;
  mask[e] = cause != NULL;
}

static __global__ void
tally_kernel (const gint32 *any_done, SimCounters *counters)
{
  if (*any_done)
    counters->regen_steps++;
  else
    counters->skipped_steps++;
  counters->steps++;
}

#define GRID(n) ((n) + 255) / 256, 256

extern "C" cudaError_t
sim_launch_init (cudaStream_t stream, SimParams params, const guint64 *seeds,
                 float *progress)
{
  init_kernel<<<GRID (params.n_envs), 0, stream>>> (params, seeds, progress);
  return cudaGetLastError ();
}

extern "C" cudaError_t
sim_launch_step (cudaStream_t stream, SimParams params, const guint64 *seeds,
                 const guint32 *epochs, const guint8 *valid, float *progress,
                 guint8 *mask, gint32 *any_done, SimCounters *counters)
{
  step_kernel<<<GRID (params.n_envs), 0, stream>>> (params, seeds, epochs, valid,
                                                    progress, mask, any_done, counters);
  return cudaGetLastError ();
}

extern "C" cudaError_t
sim_launch_tally (cudaStream_t stream, const gint32 *any_done, SimCounters *counters)
{
  tally_kernel<<<1, 1, 0, stream>>> (any_done, counters);
  return cudaGetLastError ();
}
