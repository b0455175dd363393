/* SPDX-License-Identifier: Apache-2.0 */
// tail-probe.cu: can a condition the device decides cost a light step less
// as a device graph launch than as a conditional node (issues 32, 34)?  A
// skipped IF node costs simloop's step ~4.5 us (switch-probe); a kernel
// that decides costs nothing more when the simulator's own kernel decides,
// and a refill made a graph of plain kernels may be launched by it, from
// the device, only when due.  Plain CUDA, no TrackGen:
// make tail-probe && bench/tail-probe.
//
// A step is a memset, a kernel of a thread per env, and a one-thread tally
// that counts the steps (simloop's floor).  The "refill" is one kernel that
// spins --spin-us, then counts itself, due every --every steps.  Variants:
// the floor; an IF node after the tally, the refill its body (the tally
// sets its handle; or a tally with no device launch in its code); the tally
// launching a graph of the refill from the device, as a tail launch or
// fire-and-forget; a kernel node of its own after the tally making the tail
// launch.  Each prints its step times, due
// every --every steps and never, and whether every step saw every refill
// due before it (the step kernel logs the count: a tail launch must run
// before the next step as the IF's body does).
//
// Measured on an H100 (driver 580.159, 2000 steps, a 20 us refill due
// every 16 steps, clocks up): step medians floor 9.06 us; a skipped IF
// 13.82; the tally's tail launch 9.06 never due, 9.25 due, fire-and-forget
// 8.83 / 8.86, a node of its own 10.11 / 10.46; every device launch ran
// before the next step (no step missed one, none refused).  The IF row
// hangs once its body runs, in this build (-rdc, the device runtime
// linked), whether its body is the refill's kernel or one of its own: not
// understood, so make tail-probe runs each row alone under a timeout, the
// floor and IF rows built without -rdc too, and an IF row whose tally has
// no device launch in its code: the three tell -rdc, the launch in the
// kernel, and neither apart.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define PROBE "tail-probe"
#include "probe.cuh"

enum How
{
  FLOOR,
  IF_NODE,
  IF_PLAIN,
  TAIL_IN_TALLY,
  FORGET_IN_TALLY,
  TAIL_NODE,
  N_HOWS
};

// What each How is, in its order.
static const char *const names[N_HOWS] = {
  "floor: memset, a thread per env, a tally",
  "+ an IF node, the refill its body",
  "the same, its tally without device launches",
  "the tally tail-launches the refill",
  "the tally launches it fire-and-forget",
  "+ a kernel node that tail-launches it",
};

struct Probe
{
  int steps = 2000, every = 16, spin_us = 20, n = 4096, only = -1;
  float *work = nullptr;
  unsigned *counts = nullptr;       // [0] steps, [1] refills run, [2] launches refused
  unsigned *log = nullptr;          // the refills each step saw run before it
  cudaGraphExec_t refill = nullptr; // made for device launch
};

static __global__ void
refill_kernel (unsigned *counts, unsigned long long ns)
{
  spin_ns (ns);
  atomicAdd (counts + 1, 1u);
}

static __global__ void
step_kernel (float *work, int n, const unsigned *counts, unsigned *log)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    work[i] = work[i] * 0.999f + 1.f;
  if (i == 0)
    log[counts[0]] = counts[1];
}

// Built without -rdc (bench/tail-probe-nordc), the device launches are out
// and their rows not run: what is left tells whether the IF row's hang is
// the device runtime's.
#ifdef __CUDACC_RDC__
#define DEVICE_LAUNCH 1
#else
#define DEVICE_LAUNCH 0
#endif

static __device__ void
launch (cudaGraphExec_t refill, cudaStream_t how, unsigned *counts)
{
#if DEVICE_LAUNCH
  if (cudaGraphLaunch (refill, how) == cudaSuccess)
    return;
#endif
  atomicAdd (counts + 2, 1u);
}

// Whether step @s (counted from 0) is due a refill: every @every steps, or
// never for 0.
static __device__ bool
due_at (unsigned s, int every)
{
  return every > 0 && s % every == (unsigned)every - 1;
}

// The tally: counts the step; due every @every steps (0: never), as @how
// says: the IF's handle set, or the refill launched from here.
static __global__ void
tally_kernel (unsigned *counts, int every, int how, cudaGraphConditionalHandle handle,
              cudaGraphExec_t refill)
{
  unsigned s = counts[0]++;
  bool due = due_at (s, every);

  if (how == IF_NODE)
    cudaGraphSetConditional (handle, due);
  else if (due && how == TAIL_IN_TALLY)
    launch (refill, cudaStreamGraphTailLaunch, counts);
  else if (due && how == FORGET_IN_TALLY)
    launch (refill, cudaStreamGraphFireAndForget, counts);
}

// IF_PLAIN's tally: the IF's handle set by a kernel with no device launch
// in its code, to tell whether the IF row's hang needs one.
static __global__ void
plain_tally_kernel (unsigned *counts, int every, cudaGraphConditionalHandle handle)
{
  unsigned s = counts[0]++;

  cudaGraphSetConditional (handle, due_at (s, every));
}

// A node of its own after the tally, as a library's kernel that decides
// would be: it reads the step count the tally left.
static __global__ void
decide_kernel (unsigned *counts, int every, cudaGraphExec_t refill)
{
  unsigned s = counts[0] - 1;

  if (due_at (s, every))
    launch (refill, cudaStreamGraphTailLaunch, counts);
}

static bool
add_kernel (cudaGraph_t graph, cudaGraphNode_t *node, cudaGraphNode_t *after,
            void *func, dim3 grid, dim3 block, void **args)
{
  cudaKernelNodeParams k = {};

  k.func = func;
  k.gridDim = grid;
  k.blockDim = block;
  k.kernelParams = args;
  CHECK (cudaGraphAddKernelNode (node, graph, after, after != nullptr, &k));
  return true;
}

// The step graph of @how, built node by node.
static bool
build (Probe &p, How how, int every, cudaGraph_t *out)
{
  cudaGraph_t graph;
  cudaGraphNode_t memset_node, step_node, tally_node, last;
  cudaMemsetParams m = {};
  cudaGraphConditionalHandle handle = 0;
  int tally_how = how == TAIL_NODE ? FLOOR : how;
  void *step_args[] = { &p.work, &p.n, &p.counts, &p.log };
  void *tally_args[] = { &p.counts, &every, &tally_how, &handle, &p.refill };
  void *plain_tally_args[] = { &p.counts, &every, &handle };
  bool has_if = how == IF_NODE || how == IF_PLAIN;
  void *decide_args[] = { &p.counts, &every, &p.refill };

  CHECK (cudaGraphCreate (&graph, 0));
  if (has_if)
    CHECK (cudaGraphConditionalHandleCreate (&handle, graph, 0,
                                             cudaGraphCondAssignDefault));
  m.dst = p.work;
  m.elementSize = 4;
  m.width = 1;
  m.height = 1;
  m.value = 0;
  CHECK (cudaGraphAddMemsetNode (&memset_node, graph, nullptr, 0, &m));
  if (!add_kernel (graph, &step_node, &memset_node, (void *)step_kernel,
                   dim3 ((p.n + 255) / 256), dim3 (256), step_args)
      || !add_kernel (graph, &tally_node, &step_node,
                      how == IF_PLAIN ? (void *)plain_tally_kernel : (void *)tally_kernel,
                      dim3 (1), dim3 (1), how == IF_PLAIN ? plain_tally_args : tally_args))
    return false;
  last = tally_node;
  if (has_if)
    {
      cudaGraphNodeParams params = { cudaGraphNodeTypeConditional };
      cudaGraphNode_t if_node, body_node;
      unsigned long long ns = (unsigned long long)p.spin_us * 1000;
      void *refill_args[] = { &p.counts, &ns };

      params.conditional.handle = handle;
      params.conditional.type = cudaGraphCondTypeIf;
      params.conditional.size = 1;
      CHECK (cudaGraphAddNode (&if_node, graph, &last, nullptr, 1, &params));
      if (!add_kernel (params.conditional.phGraph_out[0], &body_node, nullptr,
                       (void *)refill_kernel, dim3 (1), dim3 (1), refill_args))
        return false;
    }
  else if (how == TAIL_NODE
           && !add_kernel (graph, &last, &tally_node, (void *)decide_kernel, dim3 (1),
                           dim3 (1), decide_args))
    return false;
  *out = graph;
  return true;
}

// Waits for @s, at most @seconds: a row that hangs once its launches are
// queued is named, not waited on forever.  One that hangs sooner blocks in
// cudaGraphLaunch, with the launch queue full: make tail-probe's timeout.
static bool
finish (cudaStream_t s, double seconds, How how, int every)
{
  auto start = std::chrono::steady_clock::now ();
  cudaError_t status;

  while ((status = cudaStreamQuery (s)) == cudaErrorNotReady)
    if (std::chrono::duration<double> (std::chrono::steady_clock::now () - start).count ()
        > seconds)
      {
        fprintf (stderr, "%s: \"%s\", due %s, still running after %.0f s: a hang\n",
                 PROBE, names[how], every > 0 ? "often" : "never", seconds);
        return false;
      }
  CHECK (status);
  return true;
}

// Replays @how's step graph @p.steps times, refills due every @every steps
// (0: never); prints its step times and the steps that missed a refill.
static bool
run (Probe &p, How how, int every)
{
  cudaStream_t s;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  std::vector<cudaEvent_t> ev;
  std::vector<float> times;
  std::vector<unsigned> log (p.steps);
  unsigned counts[3], missed = 0;

  CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  CHECK (cudaMemset (p.counts, 0, 3 * sizeof (unsigned)));
  if (!build (p, how, every, &graph))
    return false;
  if (!replay_timed (graph, s, p.steps, &exec, ev))
    return false;
  if (!finish (s, 10, how, every))
    return false;
  CHECK (cudaGetLastError ());
  if (!step_times (ev, &times) || !events_destroy (ev))
    return false;
  CHECK (cudaMemcpy (counts, p.counts, sizeof counts, cudaMemcpyDeviceToHost));
  CHECK (cudaMemcpy (log.data (), p.log, p.steps * sizeof (unsigned),
                     cudaMemcpyDeviceToHost));
  // Step t saw every refill due in the steps before it: t / every of them.
  for (int t = 0; every > 0 && t < p.steps; t++)
    missed += log[t] != (unsigned)(t / every);
  printf ("%-42s due %-6s step median %6.2f us  p99 %7.2f us  refills %4u, "
          "launches refused %u, steps that missed one %u\n",
          names[how], every > 0 ? "often" : "never", quantile (times, 0.5),
          quantile (times, 0.99), counts[1], counts[2], missed);
  return replay_free (exec, graph, s);
}

static bool
probe (Probe &p)
{
  CHECK (cudaMalloc (&p.work, p.n * sizeof (float)));
  CHECK (cudaMemset (p.work, 0, p.n * sizeof (float)));
  CHECK (cudaMalloc (&p.counts, 3 * sizeof (unsigned)));
  CHECK (cudaMalloc (&p.log, p.steps * sizeof (unsigned)));
  if (!device_graph (&p.refill, [&p] (cudaStream_t s) {
        refill_kernel<<<1, 1, 0, s>>> (p.counts, (unsigned long long)p.spin_us * 1000);
      }))
    return false;
  // Clocks up: each row may run in a process of its own (--only), and the
  // first run's first rows ran slower than the rest.
  spin_kernel<<<1, 1>>> (200ull * 1000 * 1000);
  CHECK (cudaDeviceSynchronize ());
  printf ("tail-probe%s: %d steps of %d envs, a refill of %d us due every %d steps\n",
          DEVICE_LAUNCH ? "" : " (no -rdc: no device launch)", p.steps, p.n, p.spin_us,
          p.every);
  for (int h = 0; h < N_HOWS; h++)
    for (int every : { 0, p.every })
      if ((p.only < 0 || h == p.only) && (h != FLOOR || every == 0)
          && (DEVICE_LAUNCH || h <= IF_PLAIN)
          && !run (p, (How)h, every))
        return false;
  CHECK (cudaGraphExecDestroy (p.refill));
  CHECK (cudaFree (p.work));
  CHECK (cudaFree (p.counts));
  CHECK (cudaFree (p.log));
  return true;
}

int
main (int argc, char **argv)
{
  Probe p;
  int n_devices = 0;

  for (int i = 1; i < argc; i++)
    {
      if (!strcmp (argv[i], "--steps") && i + 1 < argc)
        p.steps = atoi (argv[++i]);
      else if (!strcmp (argv[i], "--every") && i + 1 < argc)
        p.every = atoi (argv[++i]);
      else if (!strcmp (argv[i], "--spin-us") && i + 1 < argc)
        p.spin_us = atoi (argv[++i]);
      else if (!strcmp (argv[i], "--only") && i + 1 < argc)
        p.only = atoi (argv[++i]);
      else
        {
          fprintf (stderr,
                   "usage: %s [--steps N] [--every K] [--spin-us U] [--only ROW]\n",
                   argv[0]);
          return 2;
        }
    }
  if (p.steps < 2 || p.every < 1 || p.spin_us < 0 || p.only >= N_HOWS)
    {
      fprintf (stderr,
               "%s: --steps must be 2 or more, --every 1 or more, "
               "--spin-us 0 or more, --only below %d (a row: 0 the floor)\n",
               PROBE, N_HOWS);
      return 2;
    }
  setvbuf (stdout, nullptr, _IOLBF, 0); // each row as it is measured
  if (cudaGetDeviceCount (&n_devices) != cudaSuccess || n_devices == 0)
    {
      printf ("%s: no CUDA device, nothing measured\n", PROBE);
      return 77;
    }
  return probe (p) ? 0 : 1;
}
