/* SPDX-License-Identifier: Apache-2.0 */
// fuse-probe.cu: would examples/simloop reach 0.6x of its floor (issue 32)
// if the switch of an ended env ran inside the simulator's own step kernel
// and the refill were launched from the device by its tally, with no node
// of its own?  Today the lookahead's always-on kernel is a fourth node on a
// three-node step.  Plain CUDA, no TrackGen: make fuse-probe.
//
// A step: a memset of the any-done flag, a kernel of a thread per env (the
// agent moves; the env ends when a hash of (env, step) says so, about one
// env every other step at the defaults, as in simloop), a one-thread tally.
// An env's track is a row of --points float2; it has two spare rows.
//   floor:     the ends only marked (simloop's floor: no switch, no refill).
//   always-on: + a kernel shaped as the lookahead's: a thread per env reads
//              the mask, a warp copies an ended env's spare row over its
//              current one and lists it, the blocks tally, the last one
//              decides; blocks of an SM each make the listed envs' rows
//              (--make-us each) in the call after a refill was decided.
//   fused:     the step kernel's warp copies the row and lists the env; the
//              tally decides and tail-launches the refill (a graph of two
//              kernels) once --batch rows are spent.
// Each row prints its step times, the floor's mean step over its own (as
// simloop's "runs at Nx its floor"), and the rows copied and made.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define PROBE "fuse-probe"
#include "probe.cuh"

#define BLOCK 128
#define COPY_BATCH 8
#define FULL_WARP 0xffffffffu

enum How
{
  FLOOR,
  ALWAYS_ON,
  FUSED,
  N_HOWS
};

static const char *const names[N_HOWS] = {
  "floor: memset, a thread per env, a tally",
  "+ an always-on switch and refill kernel",
  "the switch in the step, the refill tail-launched",
};

struct Counters
{
  unsigned steps, spent, n[2], cur, go, ticket, copies, made, refused;
  int any_done;
};

// The device side, by value in every kernel.
struct Dev
{
  float2 *current, *spares; // n rows, 2 n rows, of points each
  float *progress;
  uint8_t *mask, *head, *listed;
  unsigned *ids; // two lists of n
  Counters *c;
  unsigned n, points, period, batch;
  unsigned long long make_ns;
};

struct Probe
{
  Dev d = {};
  int steps = 2000, n_sms = 0;
  cudaGraphExec_t refill = nullptr; // made for device launch
};

static __device__ __forceinline__ bool
ends (unsigned e, unsigned s, unsigned period)
{
  unsigned h = e * 0x9E3779B1u ^ (s + 1) * 0x85EBCA77u;

  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h % period == 0;
}

// Row @to of @dst := row @from of @src by the warp's 32 lanes, each batch of
// loads issued before its stores (as track-rows.cuh's copy_row).
static __device__ void
copy_row (float2 *dst, size_t to, const float2 *src, size_t from, unsigned points,
          int lane)
{
  for (unsigned base = 0; base < points; base += 32 * COPY_BATCH)
    {
      float2 v[COPY_BATCH];

#pragma unroll
      for (int k = 0; k < COPY_BATCH; k++)
        {
          const unsigned i = base + k * 32 + lane;

          v[k] = i < points ? __ldcg (src + from * points + i) : make_float2 (0.f, 0.f);
        }
#pragma unroll
      for (int k = 0; k < COPY_BATCH; k++)
        {
          const unsigned i = base + k * 32 + lane;

          if (i < points)
            dst[to * points + i] = v[k];
        }
    }
}

// Env @e ended: it takes its next spare row (copied by its warp: every lane
// calls this) and joins list @list once.  Returns whether it ended.
static __device__ int
switch_env (const Dev &d, unsigned e, bool ended, unsigned list)
{
  long long from = -1;

  if (ended)
    {
      const unsigned h = d.head[e];

      from = 2ll * e + h;
      d.head[e] = (uint8_t)(h ^ 1);
      if (!d.listed[e])
        {
          d.listed[e] = 1;
          d.ids[list * d.n + atomicAdd (&d.c->n[list], 1u)] = e;
        }
    }
  for (unsigned todo = __ballot_sync (FULL_WARP, from >= 0); todo != 0; todo &= todo - 1)
    {
      const int lane = __ffs (todo) - 1;

      copy_row (d.current, e - threadIdx.x % 32 + lane, d.spares,
                (size_t)__shfl_sync (FULL_WARP, from, lane), d.points, threadIdx.x % 32);
    }
  return ended;
}

// Env @e's two spare rows made anew, by the block: its points, then
// --make-us of generation.
static __device__ void
make_rows (const Dev &d, unsigned e)
{
  for (unsigned i = threadIdx.x; i < 2 * d.points; i += blockDim.x)
    d.spares[2ull * e * d.points + i] = make_float2 ((float)e, (float)i);
  spin_ns (d.make_ns);
  __syncthreads ();
  if (threadIdx.x == 0)
    d.listed[e] = 0;
}

// The agents' step (simloop's step kernel, its RNG a hash); @fused: with
// the switch.  Every lane of the last warp takes part in its copies.
static __global__ void
__launch_bounds__ (BLOCK) step_kernel (Dev d, bool fused)
{
  const unsigned e = blockIdx.x * BLOCK + threadIdx.x;
  const bool in = e < d.n;
  const unsigned s = d.c->steps;
  bool end = false;
  int spent;

  if (in)
    {
      d.progress[e] = d.progress[e] * 0.999f + 1.f;
      end = ends (e, s, d.period);
      d.mask[e] = end;
      if (end)
        atomicOr (&d.c->any_done, 1);
    }
  if (!fused)
    return;
  spent = __syncthreads_count (switch_env (d, e, end, 0));
  if (threadIdx.x == 0 && spent)
    {
      atomicAdd (&d.c->spent, (unsigned)spent);
      atomicAdd (&d.c->copies, (unsigned)spent);
    }
}

// The tally (simloop's); @refill: fused, the refill launched from here once
// the batch is spent, to run when this step's graph ends.
static __global__ void
tally_kernel (Dev d, cudaGraphExec_t refill)
{
  d.c->steps++;
  d.c->any_done = 0;
  if (refill == nullptr || d.c->spent < d.batch)
    return;
  d.c->spent = 0;
  if (cudaGraphLaunch (refill, cudaStreamGraphTailLaunch) != cudaSuccess)
    d.c->refused++;
}

// The tail-launched refill: list 0's envs, a block per env at a time.
static __global__ void
__launch_bounds__ (BLOCK) refill_kernel (Dev d)
{
  for (unsigned i = blockIdx.x; i < d.c->n[0]; i += gridDim.x)
    make_rows (d, d.ids[i]);
}

static __global__ void
refill_done_kernel (Dev d)
{
  d.c->made += d.c->n[0];
  d.c->n[0] = 0;
}

// The lookahead's shape: switch blocks, then refill blocks making the list
// the previous call closed; the last block decides the next call's.
static __global__ void
__launch_bounds__ (BLOCK) always_kernel (Dev d, unsigned n_switch)
{
  extern __shared__ float2 smem[]; // its size the lookahead's, unused here
  const unsigned e = blockIdx.x * BLOCK + threadIdx.x;
  const bool masked = blockIdx.x < n_switch && e < d.n && d.mask[e];
  const unsigned cur = d.c->cur, go = d.c->go;
  int spent = 0;

  if (blockIdx.x < n_switch)
    spent = switch_env (d, e, masked, cur);
  else if (go)
    for (unsigned i = blockIdx.x - n_switch; i < d.c->n[1 - cur]; i += gridDim.x - n_switch)
      make_rows (d, d.ids[(1 - cur) * d.n + i]);
  spent = __syncthreads_count (spent);
  if (threadIdx.x != 0)
    return;
  if (spent)
    {
      atomicAdd (&d.c->spent, (unsigned)spent);
      atomicAdd (&d.c->copies, (unsigned)spent);
    }
  if (spent || go)
    __threadfence ();
  if (atomicAdd (&d.c->ticket, 1u) != gridDim.x - 1)
    return;
  __threadfence ();
  if (go)
    {
      d.c->made += d.c->n[1 - cur];
      d.c->n[1 - cur] = 0;
    }
  const bool next = atomicAdd (&d.c->spent, 0u) >= d.batch;
  if (next)
    {
      d.c->cur = 1 - cur;
      d.c->spent = 0;
    }
  d.c->go = next;
  d.c->ticket = 0;
}

// The state every row starts from: progress, mask, heads and lists at 0.
static bool
reset (Probe &p)
{
  const Dev &d = p.d;

  CHECK (cudaMemset (d.progress, 0, d.n * sizeof (float)));
  CHECK (cudaMemset (d.mask, 0, d.n));
  CHECK (cudaMemset (d.head, 0, d.n));
  CHECK (cudaMemset (d.listed, 0, d.n));
  CHECK (cudaMemset (d.c, 0, sizeof (Counters)));
  return true;
}

// Replays @how's step graph p.steps times; prints its step times against
// the floor's mean @floor_us (0: this is the floor), and returns its mean.
static bool
run (Probe &p, How how, double floor_us, double *mean_us)
{
  const unsigned grid = (p.d.n + BLOCK - 1) / BLOCK;
  cudaStream_t s;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  std::vector<cudaEvent_t> ev;
  std::vector<float> times;
  Counters c;
  float total_ms = 0;

  if (!reset (p))
    return false;
  CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  CHECK (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  CHECK (cudaMemsetAsync (&p.d.c->any_done, 0, sizeof (int), s));
  step_kernel<<<grid, BLOCK, 0, s>>> (p.d, how == FUSED);
  tally_kernel<<<1, 1, 0, s>>> (p.d, how == FUSED ? p.refill : nullptr);
  if (how == ALWAYS_ON)
    always_kernel<<<grid + p.n_sms, BLOCK, 10 * 1024, s>>> (p.d, grid);
  CHECK (cudaStreamEndCapture (s, &graph));
  if (!replay_timed (graph, s, p.steps, &exec, ev))
    return false;
  CHECK (cudaStreamSynchronize (s));
  CHECK (cudaGetLastError ());
  CHECK (cudaEventElapsedTime (&total_ms, ev.front (), ev.back ()));
  if (!step_times (ev, &times) || !events_destroy (ev))
    return false;
  CHECK (cudaMemcpy (&c, p.d.c, sizeof c, cudaMemcpyDeviceToHost));
  *mean_us = total_ms * 1e3 / (p.steps - 1);
  printf ("%-48s step median %6.2f us  p99 %6.2f  mean %6.2f  floor/this %.2fx  "
          "rows copied %u, made %u, launches refused %u\n",
          names[how], quantile (times, 0.5), quantile (times, 0.99), *mean_us,
          floor_us > 0 ? floor_us / *mean_us : 1.0, c.copies, c.made, c.refused);
  return replay_free (exec, graph, s);
}

static bool
probe (Probe &p)
{
  Dev &d = p.d;
  double floor_us = 0, us = 0;

  CHECK (cudaDeviceGetAttribute (&p.n_sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK (cudaMalloc (&d.current, (size_t)d.n * d.points * sizeof (float2)));
  CHECK (cudaMalloc (&d.spares, 2ull * d.n * d.points * sizeof (float2)));
  CHECK (cudaMemset (d.spares, 0, 2ull * d.n * d.points * sizeof (float2)));
  CHECK (cudaMalloc (&d.progress, d.n * sizeof (float)));
  CHECK (cudaMalloc (&d.mask, d.n));
  CHECK (cudaMalloc (&d.head, d.n));
  CHECK (cudaMalloc (&d.listed, d.n));
  CHECK (cudaMalloc (&d.ids, 2ull * d.n * sizeof (unsigned)));
  CHECK (cudaMalloc (&d.c, sizeof (Counters)));
  if (!device_graph (&p.refill, [&p] (cudaStream_t s) {
        refill_kernel<<<p.n_sms, BLOCK, 0, s>>> (p.d);
        refill_done_kernel<<<1, 1, 0, s>>> (p.d);
      }))
    return false;
  spin_kernel<<<1, 1>>> (200ull * 1000 * 1000); // clocks up
  CHECK (cudaDeviceSynchronize ());
  printf ("%s: %u envs x %d steps, rows of %u points, an end per env-step 1 in %u, "
          "a refill of %u rows at %llu us a row\n",
          PROBE, d.n, p.steps, d.points, d.period, d.batch, d.make_ns / 1000);
  for (int h = 0; h < N_HOWS; h++)
    {
      if (!run (p, (How)h, floor_us, &us))
        return false;
      if (h == FLOOR)
        floor_us = us;
    }
  CHECK (cudaGraphExecDestroy (p.refill));
  for (void *ptr : { (void *)d.current, (void *)d.spares, (void *)d.progress,
                     (void *)d.mask, (void *)d.head, (void *)d.listed, (void *)d.ids,
                     (void *)d.c })
    CHECK (cudaFree (ptr));
  return true;
}

int
main (int argc, char **argv)
{
  Probe p;
  int n_devices = 0;
  long make_us = 40;

  p.d.n = 4096;
  p.d.points = 128;
  p.d.period = 8192;
  p.d.batch = 64;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;

      if (v != nullptr && !strcmp (a, "--steps"))
        p.steps = atoi (v);
      else if (v != nullptr && !strcmp (a, "--envs"))
        p.d.n = (unsigned)atoi (v);
      else if (v != nullptr && !strcmp (a, "--points"))
        p.d.points = (unsigned)atoi (v);
      else if (v != nullptr && !strcmp (a, "--period"))
        p.d.period = (unsigned)atoi (v);
      else if (v != nullptr && !strcmp (a, "--batch"))
        p.d.batch = (unsigned)atoi (v);
      else if (v != nullptr && !strcmp (a, "--make-us"))
        make_us = atol (v);
      else
        {
          fprintf (stderr,
                   "usage: %s [--steps N] [--envs N] [--points P] [--period K] "
                   "[--batch B] [--make-us U]\n",
                   argv[0]);
          return 2;
        }
      i++;
    }
  if (p.steps < 2 || (int)p.d.n < 1 || (int)p.d.points < 1 || (int)p.d.period < 1
      || (int)p.d.batch < 1 || make_us < 0)
    {
      fprintf (stderr, "%s: --steps must be 2 or more, --envs, --points, --period and "
                       "--batch 1 or more, --make-us 0 or more\n",
               PROBE);
      return 2;
    }
  p.d.make_ns = (unsigned long long)make_us * 1000;
  if (cudaGetDeviceCount (&n_devices) != cudaSuccess || n_devices == 0)
    {
      printf ("%s: no CUDA device, nothing measured\n", PROBE);
      return 77;
    }
  setvbuf (stdout, nullptr, _IOLBF, 0);
  return probe (p) ? 0 : 1;
}
