/* SPDX-License-Identifier: Apache-2.0 */
// probe.cuh: what the plain-CUDA probes share (fuse-probe.cu,
// overlap-probe.cu, switch-probe.cu, tail-probe.cu): CHECK, which names a
// CUDA call that fails, with PROBE before it, and returns false; a spin of
// a known length, and a kernel of one to bring the clocks up; a step graph
// replayed with an event after each step, the step times and their
// quantiles; a graph for device launch.
#ifndef BENCH_PROBE_CUH
#define BENCH_PROBE_CUH

#include <algorithm>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
  do                                                                                   \
    {                                                                                  \
      cudaError_t status_ = (call);                                                    \
      if (status_ != cudaSuccess)                                                      \
        {                                                                              \
          fprintf (stderr, "%s: %s failed: %s\n", PROBE, #call,                        \
                   cudaGetErrorString (status_));                                      \
          return false;                                                                \
        }                                                                              \
    }                                                                                  \
  while (0)

static inline double
quantile (std::vector<float> v, double q)
{
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  return v[std::min ((size_t)(q * v.size ()), v.size () - 1)];
}

// Spins @ns on the GPU's clock: a kernel of a known length.
static __device__ void
spin_ns (unsigned long long ns)
{
  unsigned long long start, now;

  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

// One thread spinning @ns: clocks up before anything is timed.
static __global__ void
spin_kernel (unsigned long long ns)
{
  spin_ns (ns);
}

// @n events, one to record after each step of a timed loop.
static inline bool
events_create (std::vector<cudaEvent_t> &ev, size_t n)
{
  ev.resize (n);
  for (auto &e : ev)
    CHECK (cudaEventCreate (&e));
  return true;
}

static inline bool
events_destroy (std::vector<cudaEvent_t> &ev)
{
  for (auto &e : ev)
    CHECK (cudaEventDestroy (e));
  ev.clear ();
  return true;
}

// @graph instantiated into *@exec and uploaded, then replayed @steps times
// on @s, an event of @ev (made here) recorded after each step; no wait.
static inline bool
replay_timed (cudaGraph_t graph, cudaStream_t s, size_t steps, cudaGraphExec_t *exec,
              std::vector<cudaEvent_t> &ev)
{
  CHECK (cudaGraphInstantiate (exec, graph, 0));
  CHECK (cudaGraphUpload (*exec, s));
  if (!events_create (ev, steps))
    return false;
  for (auto &e : ev)
    {
      CHECK (cudaGraphLaunch (*exec, s));
      CHECK (cudaEventRecord (e, s));
    }
  return true;
}

// What a timed replay leaves: @exec, @graph and its stream @s.
static inline bool
replay_free (cudaGraphExec_t exec, cudaGraph_t graph, cudaStream_t s)
{
  CHECK (cudaGraphExecDestroy (exec));
  CHECK (cudaGraphDestroy (graph));
  CHECK (cudaStreamDestroy (s));
  return true;
}

// *@times: the GPU time between consecutive events of @ev, in us.
static inline bool
step_times (const std::vector<cudaEvent_t> &ev, std::vector<float> *times)
{
  times->clear ();
  for (size_t t = 1; t < ev.size (); t++)
    {
      float ms = 0;

      CHECK (cudaEventElapsedTime (&ms, ev[t - 1], ev[t]));
      times->push_back (ms * 1e3f);
    }
  return true;
}

// *@exec: a graph of what @enqueue puts on a stream, made for device launch
// (a kernel may launch it) and uploaded.
template <typename Enqueue>
static inline bool
device_graph (cudaGraphExec_t *exec, Enqueue enqueue)
{
  cudaStream_t s;
  cudaGraph_t graph;

  CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  CHECK (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  enqueue (s);
  CHECK (cudaStreamEndCapture (s, &graph));
  CHECK (cudaGraphInstantiateWithFlags (exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
  CHECK (cudaGraphUpload (*exec, s));
  CHECK (cudaStreamSynchronize (s));
  CHECK (cudaGraphDestroy (graph));
  CHECK (cudaStreamDestroy (s));
  return true;
}

#endif // BENCH_PROBE_CUH
