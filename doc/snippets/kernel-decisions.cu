/* SPDX-License-Identifier: Apache-2.0 */
// kernel-decisions.cu: kernels that decide their own condition and loop
// (doc/capture.md).  Device code on <trackgen/kernel.h> alone: make check
// compiles it with every nvcc warning an error; tests/snippets-test links it.
#include <trackgen/kernel.h>

//! [kernels]
// Steps every env; done[i] = 1 when env i finished its episode.  The block
// knows whether any env finished, so it decides the regeneration's IF
// itself: no flag to copy, no set kernel.
static __global__ void
step_kernel (unsigned n_envs, unsigned char *done, TgDeviceCondition regenerate)
{
  int any = 0;

  for (unsigned e = threadIdx.x; e < n_envs; e += blockDim.x)
    {
      done[e] = (e * 2654435761u) % 97u == 0u; // the simulator's step, elided
      any |= done[e];
    }
  any = __syncthreads_or (any);
  if (threadIdx.x == 0)
    tg_condition_set (regenerate, any);
}

// One relaxation sweep of the new tracks; the block knows whether they
// converged, so it ends the iteration itself: tg_loop_next() counts it,
// applies the cap and decides whether another one runs.
static __global__ void
relax_kernel (unsigned n_envs, const unsigned char *done, float *tracks,
              TgDeviceLoop loop)
{
  int moving = 0;

  for (unsigned e = threadIdx.x; e < n_envs; e += blockDim.x)
    if (done[e])
      {
        float *t = tracks + 64 * (size_t)e, before = t[0];
        t[0] = 0.5f * (t[63] + t[1]); // the sweep, elided
        moving |= t[0] != before;
      }
  moving = __syncthreads_or (moving);
  if (threadIdx.x == 0)
    tg_loop_next (loop, !moving);
}

extern "C" cudaError_t
sim_launch_step_deciding (cudaStream_t stream, unsigned n_envs, unsigned char *done,
                          TgDeviceCondition regenerate)
{
  step_kernel<<<1, 1024, 0, stream>>> (n_envs, done, regenerate);
  return cudaGetLastError ();
}

extern "C" cudaError_t
track_launch_relax_deciding (cudaStream_t stream, unsigned n_envs,
                             const unsigned char *done, float *tracks,
                             TgDeviceLoop loop)
{
  relax_kernel<<<1, 1024, 0, stream>>> (n_envs, done, tracks, loop);
  return cudaGetLastError ();
}
//! [kernels]
