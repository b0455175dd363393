/* SPDX-License-Identifier: Apache-2.0 */
// overlap-probe.cu: the prototype behind the overlapped refill's design
// (issue 36, examples/track-refiller.c): can work much longer than a step
// run beside a loop of step graphs without delaying a step, when it is
// started (a) by the step graph itself, with CUDA's device graph launch
// (fire-and-forget), (b) by the host loop, on a stream of the least
// priority, when a flag the step leaves in mapped host memory says so, or
// (c) inside the step graph (today's in-graph refill, the stall it costs)?
// Plain CUDA, no TrackGen: make overlap-probe && bench/overlap-probe.
//
// A step is one small kernel; the "refill" is a kernel of one block per SM
// that spins for --refill-us on the GPU, started every --every steps.  Each
// variant prints the median and p99 of the step times (events after each
// step) and the refills that ran, and (a) whether a step after a device
// launch waited for it.  Then what a graph made for device launch may hold,
// as a refill would: a WHILE node (a relaxation's loop), an allocation.
//
// Then (issue 36's stall) what sharing an SM with a refill costs a step:
// started by the host poll, a refill that keeps its SMs' schedulers busy
// (multiply-adds, not a clock spin) on one block of 128 threads per SM, as
// examples/track-overlap.cu's refill runs, against the same work on a
// quarter of the SMs in blocks that fill an SM's register file (1024
// threads of 64 registers), so that no step block fits beside one; and
// the 128-thread blocks confined to a quarter of the SMs by a green context
// (CUDA's SM partition, a stream of its own), as many as fit there, so
// that the refill fills its SMs whatever its block's shape: launched there,
// captured elsewhere and its graph launched there, and captured there and
// its graph launched on an ordinary stream (which keeps a graph to the
// partition: the stream it is launched on, or its kernels' context?).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#define PROBE "overlap-probe"
#include "probe.cuh"

struct Probe
{
  int steps = 2000, every = 50, refill_us = 2000, n_sms = 0;
  float *work = nullptr;      // the step's data
  unsigned *step = nullptr;   // device: steps so far
  unsigned *refills = nullptr; // device: refills run, a ticket, failed launches
  volatile unsigned *due = nullptr;  // mapped: the step asks for a refill
  volatile unsigned *done = nullptr; // mapped: refills run, for the host
  cudaGraphExec_t refill_exec = nullptr; // (a): device-launchable
  float *sink = nullptr;                 // the busy refills' never-written result
  CUgreenCtx green = nullptr;            // a quarter of the SMs, and its stream
  cudaStream_t green_stream = nullptr;
  int green_sms = 0, green_blocks = 0; // its SMs, the busy blocks that fill them
  cudaGraphExec_t green_exec = nullptr; // those blocks captured on another stream
  cudaGraphExec_t green_captured = nullptr; // captured on the green stream
};

// What a refill does on which SMs: spin on the clock, one block of 128
// threads per SM; multiply-add so, keeping the SM's schedulers busy; or
// multiply-add on a quarter of the SMs, each block filling its SM.
enum Refill
{
  SPIN,
  BUSY_SPREAD,
  BUSY_PACKED,
  BUSY_GREEN,
  BUSY_GREEN_GRAPH,
  BUSY_GREEN_CAPTURED
};

// The refill's end: its last block counts it, for the host's poll.
static __device__ void
refill_done (unsigned *refills, volatile unsigned *done)
{
  __syncthreads ();
  if (threadIdx.x == 0 && atomicAdd (refills + 1, 1u) == gridDim.x - 1)
    {
      refills[1] = 0;
      *done = atomicAdd (refills, 1u) + 1;
      __threadfence_system ();
    }
}

static __global__ void
refill_kernel (unsigned *refills, volatile unsigned *done, unsigned long long ns)
{
  spin_ns (ns);
  refill_done (refills, done);
}

// Independent multiply-add chains a thread keeps: enough for its warp to
// issue at every cycle, and, at 1024 threads a block, about the 64
// registers a thread that fill an SM's register file.
#define CHAINS 48

// A refill that keeps its SMs busy for @ns: every thread multiply-adds on
// its chains, reading the clock once every 64 rounds.
template <int Threads>
static __global__ void
__launch_bounds__ (Threads, 1)
    busy_refill_kernel (unsigned *refills, volatile unsigned *done, unsigned long long ns,
                        float *sink)
{
  float a[CHAINS];
  unsigned long long start, now;

  for (int i = 0; i < CHAINS; i++)
    a[i] = threadIdx.x + i;
  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    {
      for (int k = 0; k < 64; k++)
#pragma unroll
        for (int i = 0; i < CHAINS; i++)
          a[i] = fmaf (a[i], 0.999f, 1e-3f);
      asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
  while (now - start < ns);
  float sum = 0.f;
  for (int i = 0; i < CHAINS; i++)
    sum += a[i];
  if (sum == -1.f) // never: keeps the chains
    *sink = sum;
  refill_done (refills, done);
}

// One step: a little work on every element; every @every steps, thread 0
// asks for a refill: (a) launches it from the device, (b) sets the mapped
// flag, (c) nothing (the host puts it in the step).
static __global__ void
step_kernel (float *work, int n, unsigned *step, int every, int how,
             cudaGraphExec_t refill, volatile unsigned *due)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    work[i] = work[i] * 0.999f + 1.f;
  if (i != 0)
    return;
  unsigned s = (*step)++;
  if (s % every != every - 1)
    return;
  if (how == 0 && cudaGraphLaunch (refill, cudaStreamGraphFireAndForget) != cudaSuccess)
    atomicAdd (step + 1, 1u); // refused: one still running, or no device launch
  else if (how == 1)
    {
      *due = s + 1;
      __threadfence_system ();
    }
}

// The green quarter's busy blocks, on @stream (the green context's, or a
// stream whose capture makes the graph the green rows launch).
static void
launch_green_busy (const Probe &p, cudaStream_t stream)
{
  busy_refill_kernel<128><<<p.green_blocks, 128, 0, stream>>> (
      p.refills, p.done, (unsigned long long)p.refill_us * 1000, p.sink);
}

static void
launch_refill (const Probe &p, Refill refill, cudaStream_t stream)
{
  const unsigned long long ns = (unsigned long long)p.refill_us * 1000;

  if (refill == SPIN)
    refill_kernel<<<p.n_sms, 128, 0, stream>>> (p.refills, p.done, ns);
  else if (refill == BUSY_SPREAD)
    busy_refill_kernel<128><<<p.n_sms, 128, 0, stream>>> (p.refills, p.done, ns, p.sink);
  else if (refill == BUSY_PACKED)
    busy_refill_kernel<1024><<<std::max (1, p.n_sms / 4), 1024, 0, stream>>> (
        p.refills, p.done, ns, p.sink);
  else if (refill == BUSY_GREEN)
    launch_green_busy (p, p.green_stream);
  else if (refill == BUSY_GREEN_GRAPH) // does a graph launched there keep to it?
    (void)cudaGraphLaunch (p.green_exec, p.green_stream);
  else // or does a graph captured there keep to it, launched anywhere?
    (void)cudaGraphLaunch (p.green_captured, stream);
}

// A driver entry point, through the runtime (the probe links no libcuda).
template <typename F>
static bool
driver_entry (const char *symbol, unsigned version, F *fn)
{
  cudaDriverEntryPointQueryResult found;

  CHECK (cudaGetDriverEntryPointByVersion (symbol, (void **)fn, version, cudaEnableDefault,
                                           &found));
  if (found != cudaDriverEntryPointSuccess)
    {
      fprintf (stderr, PROBE ": the driver has no %s\n", symbol);
      return false;
    }
  return true;
}

#define DRIVER(call)                                                                   \
  do                                                                                   \
    {                                                                                  \
      CUresult status_ = (call);                                                       \
      if (status_ != CUDA_SUCCESS)                                                     \
        {                                                                              \
          fprintf (stderr, PROBE ": %s failed: CUresult %d\n", #call, (int)status_);   \
          return false;                                                                \
        }                                                                              \
    }                                                                                  \
  while (0)

// The green quarter's busy blocks captured on @stream into *@exec.
static bool
busy_graph (const Probe &p, cudaStream_t stream, cudaGraphExec_t *exec)
{
  cudaGraph_t graph;

  CHECK (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  launch_green_busy (p, stream);
  CHECK (cudaStreamEndCapture (stream, &graph));
  CHECK (cudaGraphInstantiate (exec, graph, 0));
  CHECK (cudaGraphDestroy (graph));
  return true;
}

// A green context of about a quarter of the SMs (the driver rounds to its
// partition granularity), a least-priority stream of it, and how many busy
// 128-thread blocks fill its SMs.
static bool
green_partition (Probe &p)
{
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceGetDevResource_v12040 get_resource;
  PFN_cuDevSmResourceSplitByCount_v12040 split;
  PFN_cuDevResourceGenerateDesc_v12040 describe;
  PFN_cuGreenCtxCreate_v12040 create;
  PFN_cuGreenCtxStreamCreate_v12050 stream_create;
  CUdevice device;
  CUdevResource all, part, rest;
  CUdevResourceDesc desc;
  unsigned n_groups = 1;
  int per_sm = 0, least = 0, greatest = 0;

  if (!driver_entry ("cuDeviceGet", 2000, &device_get)
      || !driver_entry ("cuDeviceGetDevResource", 12040, &get_resource)
      || !driver_entry ("cuDevSmResourceSplitByCount", 12040, &split)
      || !driver_entry ("cuDevResourceGenerateDesc", 12040, &describe)
      || !driver_entry ("cuGreenCtxCreate", 12040, &create)
      || !driver_entry ("cuGreenCtxStreamCreate", 12050, &stream_create))
    return false;
  CHECK (cudaDeviceGetStreamPriorityRange (&least, &greatest));
  DRIVER (device_get (&device, 0));
  DRIVER (get_resource (device, &all, CU_DEV_RESOURCE_TYPE_SM));
  DRIVER (split (&part, &n_groups, &all, &rest, 0, std::max (1, p.n_sms / 4)));
  DRIVER (describe (&desc, &part, 1));
  DRIVER (create (&p.green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM));
  DRIVER (stream_create ((CUstream *)&p.green_stream, p.green, CU_STREAM_NON_BLOCKING,
                         least));
  CHECK (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, busy_refill_kernel<128>,
                                                        128, 0));
  p.green_sms = (int)part.sm.smCount;
  p.green_blocks = p.green_sms * per_sm;
  {
    cudaStream_t s;

    CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
    if (!busy_graph (p, s, &p.green_exec)
        || !busy_graph (p, p.green_stream, &p.green_captured))
      return false;
    CHECK (cudaStreamDestroy (s));
  }
  printf ("green context: %u SM(s) of %d, %d busy blocks of 128 threads (%d an SM)\n",
          part.sm.smCount, p.n_sms, p.green_blocks, per_sm);
  return true;
}

// Replays a step graph made for variant @how (0: device launch, 1: host
// poll, 2: in the step, 3: no refill), with refills of kind @refill, and
// prints its step times.
static bool
run (Probe &p, int how, const char *name, Refill refill = SPIN)
{
  const int n = 4096;
  int least = 0, greatest = 0;
  cudaStream_t s, side;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  std::vector<cudaEvent_t> ev;
  std::vector<float> times;
  unsigned refills = 0, failed = 0, asked = 0, launched = 0;
  float worst_after = 0;

  CHECK (cudaDeviceGetStreamPriorityRange (&least, &greatest));
  CHECK (cudaStreamCreateWithPriority (&s, cudaStreamNonBlocking, greatest));
  CHECK (cudaStreamCreateWithPriority (&side, cudaStreamNonBlocking, least));
  CHECK (cudaMemset (p.step, 0, 2 * sizeof (unsigned)));
  CHECK (cudaMemset (p.refills, 0, 2 * sizeof (unsigned)));
  *p.due = 0;
  *p.done = 0;
  CHECK (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  step_kernel<<<(n + 255) / 256, 256, 0, s>>> (p.work, n, p.step, p.every, how,
                                               p.refill_exec, p.due);
  CHECK (cudaStreamEndCapture (s, &graph));
  CHECK (cudaGraphInstantiate (&exec, graph, 0));
  if (!events_create (ev, p.steps))
    return false;
  for (int t = 0; t < p.steps; t++)
    {
      if (how == 2 && t % p.every == p.every - 1)
        launch_refill (p, refill, s);
      CHECK (cudaGraphLaunch (exec, s));
      CHECK (cudaEventRecord (ev[t], s));
      // The host loop's poll: two reads; one refill at a time.
      if (how == 1 && *p.due != asked && *p.done == launched)
        {
          asked = *p.due;
          launch_refill (p, refill, side);
          launched++;
        }
    }
  CHECK (cudaDeviceSynchronize ());
  CHECK (cudaGetLastError ());
  if (!step_times (ev, &times) || !events_destroy (ev))
    return false;
  for (int t = 1; t < p.steps; t++) // times[t - 1]: step t's
    if (t % p.every == 0)
      worst_after = std::max (worst_after, times[t - 1]);
  CHECK (cudaMemcpy (&refills, p.refills, sizeof refills, cudaMemcpyDeviceToHost));
  CHECK (cudaMemcpy (&failed, p.step + 1, sizeof failed, cudaMemcpyDeviceToHost));
  printf ("%-36s step median %8.2f us  p99 %9.2f us  max after a refill start "
          "%9.2f us  refills run %u, device launches refused %u\n",
          name, quantile (times, 0.5), quantile (times, 0.99), worst_after, refills,
          failed);
  CHECK (cudaGraphExecDestroy (exec));
  CHECK (cudaGraphDestroy (graph));
  CHECK (cudaStreamDestroy (s));
  CHECK (cudaStreamDestroy (side));
  return true;
}

static __global__ void
countdown_kernel (int *left, cudaGraphConditionalHandle loop)
{
  cudaGraphSetConditional (loop, --*left > 0);
}

// Whether a graph holding a WHILE node (@alloc: an allocation and its free
// instead) instantiates for device launch; prints the driver's answer.
static bool
device_launchable (const char *what, bool alloc)
{
  cudaGraph_t graph;
  cudaGraphExec_t exec = nullptr;
  cudaGraphNode_t node;
  cudaError_t status;
  int *left = nullptr;

  CHECK (cudaGraphCreate (&graph, 0));
  CHECK (cudaMalloc (&left, sizeof (int)));
  if (alloc)
    {
      cudaMemAllocNodeParams params = {};
      cudaGraphNode_t free_node;

      params.poolProps.allocType = cudaMemAllocationTypePinned;
      params.poolProps.location.type = cudaMemLocationTypeDevice;
      params.poolProps.location.id = 0;
      params.bytesize = 1 << 20;
      CHECK (cudaGraphAddMemAllocNode (&node, graph, nullptr, 0, &params));
      CHECK (cudaGraphAddMemFreeNode (&free_node, graph, &node, 1, params.dptr));
    }
  else
    {
      cudaGraphConditionalHandle handle;
      cudaGraphNodeParams params = { cudaGraphNodeTypeConditional };
      cudaKernelNodeParams k = {};
      void *args[2];
      cudaGraphNode_t body_node;

      CHECK (cudaGraphConditionalHandleCreate (&handle, graph, 1,
                                               cudaGraphCondAssignDefault));
      params.conditional.handle = handle;
      params.conditional.type = cudaGraphCondTypeWhile;
      params.conditional.size = 1;
      CHECK (cudaGraphAddNode (&node, graph, nullptr, nullptr, 0, &params));
      args[0] = &left;
      args[1] = &handle;
      k.func = (void *)countdown_kernel;
      k.gridDim = dim3 (1);
      k.blockDim = dim3 (1);
      k.kernelParams = args;
      CHECK (cudaGraphAddKernelNode (&body_node, params.conditional.phGraph_out[0],
                                     nullptr, 0, &k));
    }
  status = cudaGraphInstantiateWithFlags (&exec, graph,
                                          cudaGraphInstantiateFlagDeviceLaunch);
  printf ("a graph for device launch holding %-28s %s (%s)\n", what,
          status == cudaSuccess ? "instantiates" : "is refused",
          cudaGetErrorName (status));
  (void)cudaGetLastError ();
  if (exec != nullptr)
    CHECK (cudaGraphExecDestroy (exec));
  CHECK (cudaGraphDestroy (graph));
  CHECK (cudaFree (left));
  return true;
}

static bool
probe (Probe &p)
{
  unsigned *mapped = nullptr;

  CHECK (cudaDeviceGetAttribute (&p.n_sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK (cudaMalloc (&p.work, 4096 * sizeof (float)));
  CHECK (cudaMemset (p.work, 0, 4096 * sizeof (float)));
  CHECK (cudaMalloc (&p.step, 2 * sizeof (unsigned)));
  CHECK (cudaMalloc (&p.refills, 2 * sizeof (unsigned)));
  CHECK (cudaMalloc (&p.sink, sizeof (float)));
  CHECK (cudaHostAlloc (&mapped, 2 * sizeof (unsigned), cudaHostAllocMapped));
  p.due = mapped;
  p.done = mapped + 1;
  printf ("overlap-probe: %d steps, a refill of %d us on %d blocks every %d steps\n",
          p.steps, p.refill_us, p.n_sms, p.every);
  if (!run (p, 3, "no refill (the floor)") || !run (p, 2, "(c) refill inside the step")
      || !run (p, 1, "(b) host poll, least-priority stream")
      || !run (p, 1, "(b) busy, 128 threads on every SM", BUSY_SPREAD)
      || !run (p, 1, "(b) busy, SMs filled, a quarter", BUSY_PACKED))
    return false;
  // Rows of their own: a driver with no green context says so and goes on.
  if (!green_partition (p))
    printf ("green context: none (above, why); its rows left out\n");
  else if (!run (p, 1, "(b) busy, green quarter, filled", BUSY_GREEN)
           || !run (p, 1, "(b) the same as a graph", BUSY_GREEN_GRAPH)
           || !run (p, 1, "(b) captured green, launched plain", BUSY_GREEN_CAPTURED))
    return false;
  if (!device_graph (&p.refill_exec,
                     [&p] (cudaStream_t s) {
                       refill_kernel<<<p.n_sms, 128, 0, s>>> (
                           p.refills, p.done, (unsigned long long)p.refill_us * 1000);
                     })
      || !run (p, 0, "(a) device launch, fire-and-forget"))
    return false;
  return device_launchable ("a WHILE node:", false)
         && device_launchable ("an allocation and its free:", true);
}

int
main (int argc, char **argv)
{
  Probe p;
  int count = 0;

  for (int i = 1; i + 1 < argc; i += 2)
    {
      if (strcmp (argv[i], "--steps") == 0)
        p.steps = atoi (argv[i + 1]);
      else if (strcmp (argv[i], "--every") == 0)
        p.every = atoi (argv[i + 1]);
      else if (strcmp (argv[i], "--refill-us") == 0)
        p.refill_us = atoi (argv[i + 1]);
    }
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0)
    {
      fprintf (stderr, "overlap-probe: needs a CUDA GPU\n");
      return 77;
    }
  if (p.steps < 2 || p.every < 1 || p.refill_us < 1)
    {
      fprintf (stderr, "overlap-probe: --steps >= 2, --every and --refill-us >= 1\n");
      return 2;
    }
  return probe (p) ? 0 : 1;
}
