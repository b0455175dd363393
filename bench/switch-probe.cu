/* SPDX-License-Identifier: Apache-2.0 */
// switch-probe.cu: what one always-on kernel costs a light step graph (issue
// 32: the lookahead's switch kernel adds about 6 us to examples/simloop's
// 5 us step, more than the step's own three nodes together).  Plain CUDA,
// no TrackGen: make switch-probe && bench/switch-probe.
//
// The floor is simloop's step without regeneration: a memset, a kernel of a
// thread per env, a one-thread tally.  Each variant appends one node shaped
// a step further towards track-lookahead.cu's kernel (its grid, its dynamic
// shared memory, its block tally and ticket, the overlapped switch's write
// of host memory), or a skipped IF node (simloop_warp.py's refill
// condition), and prints the GPU time of a step, replayed back to back, by
// events around each batch and after each step.  Row 10 asks whether
// shared memory's cost is the SMs' L1/shared split changing between kernels;
// rows 11-12 what a child graph node around the kernel adds (RECORD joins a
// producer's trial to the caller's capture as one).
#define PROBE "switch-probe"
#include "probe.cuh"

enum
{
  ENVS = 4096,
  BLOCK = 128,
  SMEM = 10 * 1024,
  STEPS = 2000
};

// The lookahead kernel's bulk: a parameter block of several hundred bytes
// (its shape, rows and spares by value).
struct Bulk
{
  float *rows[40];
  unsigned n[24];
};

struct Probe
{
  Bulk bulk = {};
  float *work = nullptr;
  int *done = nullptr;               // the step's any-done flag
  unsigned *tally = nullptr;         // [0] spent, [1] urgent, [2] ticket, [3] decision
  volatile unsigned *host = nullptr; // mapped: what the last block writes
  int n_blocks = 0; // the lookahead kernel's: switch blocks + an SM each
};

static __global__ void
step_kernel (float *work, int *done)
{
  const int e = blockIdx.x * blockDim.x + threadIdx.x;

  if (e < ENVS)
    {
      work[e] = work[e] * 0.5f + 1.0f;
      if (work[e] > 1e30f) // never: the floor's end test, no write
        *done = 1;
    }
}

static __global__ void
tally_kernel (const int *done, unsigned *decision)
{
  decision[3] += (unsigned)*done;
}

static __global__ void
empty_kernel (void)
{
}

// The lookahead kernel's frame with no env ended: shared memory reserved,
// the block's tally, the ticket, the last block's decision (and, with
// @host, its write of mapped host memory, as the overlapped switch's).
static __device__ void
tally_blocks (const float *work, unsigned *tally, volatile unsigned *host,
              unsigned smem_bytes)
{
  extern __shared__ float smem[];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  int spent = e < ENVS && work[e] > 1e30f; // never
  int urgent = spent;

  if (threadIdx.x == 0 && smem_bytes > 0)
    smem[0] = 0.f;
  __syncthreads ();
  spent = __syncthreads_count (spent);
  urgent = __syncthreads_or (urgent);
  if (threadIdx.x != 0)
    return;
  if (spent)
    atomicAdd (&tally[0], (unsigned)spent);
  if (urgent)
    atomicOr (&tally[1], 1u);
  if (atomicAdd (&tally[2], 1u) == gridDim.x - 1)
    {
      tally[3] = atomicAdd (&tally[0], 0u) >= 64 || atomicExch (&tally[1], 0u);
      tally[2] = 0;
      if (host != nullptr)
        host[0] = tally[3] + 1;
    }
}

static __global__ void
tally_blocks_kernel (const float *work, unsigned *tally, volatile unsigned *host,
                     unsigned smem_bytes)
{
  tally_blocks (work, tally, host, smem_bytes);
}

// Row 4's kernel with the lookahead kernel's bulk: its parameters, and a
// long, register-hungry path it never takes (make_track's, inlined).
static __global__ void
__launch_bounds__ (BLOCK) bulky_kernel (Bulk b, const float *work, unsigned *tally)
{
  extern __shared__ float smem[];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;

  if (e < ENVS && work[e] > 1e30f) // never
    {
      float acc[32];

      for (int i = 0; i < 32; i++)
        acc[i] = work[(e + i * 97) % ENVS];
      for (unsigned it = 0; it < b.n[0]; it++)
        for (int i = 0; i < 32; i++)
          acc[i] = acc[i] * acc[(i + 7) % 32] + smem[(i + it) % 64];
      for (int i = 0; i < 32; i++)
        b.rows[i % 40][e] = acc[i];
    }
  tally_blocks (work, tally, nullptr, SMEM);
}

// The GPU time of a step of @exec, replayed STEPS times back to back: the
// median of the per-step event gaps, and the batch's mean.
static bool
time_steps (cudaGraphExec_t exec, cudaStream_t s, float *median, float *mean)
{
  std::vector<cudaEvent_t> ev;
  std::vector<float> gaps;
  float ms = 0;

  if (!events_create (ev, STEPS + 1))
    return false;
  for (int t = 0; t < 50; t++) // warm-up
    CHECK (cudaGraphLaunch (exec, s));
  CHECK (cudaEventRecord (ev[0], s));
  for (int t = 1; t <= STEPS; t++)
    {
      CHECK (cudaGraphLaunch (exec, s));
      CHECK (cudaEventRecord (ev[t], s));
    }
  CHECK (cudaStreamSynchronize (s));
  if (!step_times (ev, &gaps))
    return false;
  CHECK (cudaEventElapsedTime (&ms, ev[0], ev[STEPS]));
  *mean = ms * 1e3f / STEPS;
  *median = (float)quantile (gaps, 0.5);
  return events_destroy (ev);
}

// Adds a node made from @params after the node of @graph (a chain) that
// nothing depends on yet.
static bool
append_node (cudaGraph_t graph, cudaGraphNodeParams *params)
{
  cudaGraphNode_t leaf = nullptr, node = nullptr;
  size_t n = 0;

  CHECK (cudaGraphGetNodes (graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes (n);
  CHECK (cudaGraphGetNodes (graph, nodes.data (), &n));
  for (auto node : nodes)
    {
      size_t n_out = 0;
#if CUDART_VERSION >= 13000
      CHECK (cudaGraphNodeGetDependentNodes (node, nullptr, nullptr, &n_out));
#else
      CHECK (cudaGraphNodeGetDependentNodes (node, nullptr, &n_out));
#endif
      if (n_out == 0)
        leaf = node;
    }
#if CUDART_VERSION >= 13000
  CHECK (cudaGraphAddNode (&node, graph, &leaf, nullptr, 1, params));
#else
  CHECK (cudaGraphAddNode (&node, graph, &leaf, 1, params));
#endif
  return true;
}

// Rows 11 and 12: row 2's or row 4's kernel in a child graph node after
// the step, as RECORD joins a producer's trial to the caller's capture.
static bool
add_child (Probe &p, int v, cudaStream_t s, cudaGraph_t graph)
{
  cudaGraphNodeParams params = {};
  cudaGraph_t child;

  CHECK (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  if (v == 11)
    empty_kernel<<<p.n_blocks, BLOCK, 0, s>>> ();
  else
    tally_blocks_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> (p.work, p.tally, nullptr, SMEM);
  CHECK (cudaGetLastError ());
  CHECK (cudaStreamEndCapture (s, &child));
  params.type = cudaGraphNodeTypeGraph;
  params.graph.graph = child;
  if (!append_node (graph, &params))
    return false;
  CHECK (cudaGraphDestroy (child)); // the node holds a copy
  return true;
}

// Captures the floor's step and variant @v's node after it (0: none),
// times it and prints it against @floor_median; its median into *@median.
static bool
run (Probe &p, int v, const char *name, float floor_median, float *median)
{
  cudaStream_t s;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float mean = 0;

  CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  CHECK (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  CHECK (cudaMemsetAsync (p.done, 0, sizeof (int), s));
  step_kernel<<<(ENVS + 255) / 256, 256, 0, s>>> (p.work, p.done);
  tally_kernel<<<1, 1, 0, s>>> (p.done, p.tally);
  switch (v)
    {
    case 1:
      empty_kernel<<<1, 32, 0, s>>> ();
      break;
    case 2:
      empty_kernel<<<p.n_blocks, BLOCK, 0, s>>> ();
      break;
    case 3:
      empty_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> ();
      break;
    case 4:
      tally_blocks_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> (p.work, p.tally, nullptr, SMEM);
      break;
    case 5:
      tally_blocks_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> (p.work, p.tally, p.host, SMEM);
      break;
    case 6:
      tally_blocks_kernel<<<p.n_blocks, BLOCK, 0, s>>> (p.work, p.tally, nullptr, 0);
      break;
    case 8: // the switch blocks alone: what the refill blocks add to row 4
      tally_blocks_kernel<<<ENVS / BLOCK, BLOCK, SMEM, s>>> (p.work, p.tally, nullptr, SMEM);
      break;
    case 9:
      bulky_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> (p.bulk, p.work, p.tally);
      break;
    case 10: // main() made the step's kernels prefer the most shared memory
      empty_kernel<<<p.n_blocks, BLOCK, SMEM, s>>> ();
      break;
    default:
      break;
    }
  CHECK (cudaGetLastError ());
  CHECK (cudaStreamEndCapture (s, &graph));
  if (v == 7)
    {
      // A skipped IF after the step: a one-thread kernel would set its
      // handle from the flag; here the handle's default, 0, skips it.
      cudaGraphConditionalHandle handle;
      cudaGraphNodeParams params = {};

      CHECK (cudaGraphConditionalHandleCreate (&handle, graph, 0,
                                               cudaGraphCondAssignDefault));
      params.type = cudaGraphNodeTypeConditional;
      params.conditional.handle = handle;
      params.conditional.type = cudaGraphCondTypeIf;
      params.conditional.size = 1;
      if (!append_node (graph, &params))
        return false;
      cudaGraphNode_t body_node;
      CHECK (cudaGraphAddEmptyNode (&body_node, params.conditional.phGraph_out[0],
                                    nullptr, 0));
    }
  if ((v == 11 || v == 12) && !add_child (p, v, s, graph))
    return false;
  CHECK (cudaGraphInstantiate (&exec, graph, 0));
  if (!time_steps (exec, s, median, &mean))
    return false;
  printf ("%-60s step median %6.2f us (mean %6.2f): %+6.2f us\n", name, *median, mean,
          v == 0 ? 0.f : *median - floor_median);
  CHECK (cudaGraphExecDestroy (exec));
  CHECK (cudaGraphDestroy (graph));
  CHECK (cudaStreamDestroy (s));
  return true;
}

// The step's kernels' preferred L1/shared split.
static bool
prefer_carveout (int carveout)
{
  CHECK (cudaFuncSetAttribute (step_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               carveout));
  CHECK (cudaFuncSetAttribute (tally_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               carveout));
  return true;
}

int
main (void)
{
  static const char *names[] = {
    "floor: memset, a thread per env, a one-thread tally",
    "+ an empty kernel, one warp",
    "+ an empty kernel, the lookahead's grid",
    "+ the same with 10 KB of dynamic shared memory a block",
    "+ the same, its blocks' tally and ticket (lookahead_kernel)",
    "+ the same, the last block writing mapped host memory",
    "+ the tally and ticket with no dynamic shared memory",
    "+ a skipped IF node (an empty body)",
    "+ row 4's kernel with its switch blocks alone",
    "+ row 4's kernel with 400 bytes of parameters and a long path",
    "row 3, the step's kernels preferring the most shared memory",
    "row 2's kernel in a child graph node",
    "row 4's kernel in a child graph node (as RECORD joins a trial)",
  };
  Probe p;
  int n_sms = 0, dev = 0;
  float floor_median = 0, median = 0;
  unsigned *host = nullptr;

  if (cudaGetDevice (&dev) != cudaSuccess
      || cudaDeviceGetAttribute (&n_sms, cudaDevAttrMultiProcessorCount, dev)
             != cudaSuccess)
    {
      fprintf (stderr, "switch-probe: no CUDA device\n");
      return 77;
    }
  // simloop's: a switch block per 128 envs, a refill block per env of a
  // batch of 64.
  p.n_blocks = (ENVS + BLOCK - 1) / BLOCK + std::min (n_sms, 64);
  if (cudaMalloc (&p.work, ENVS * sizeof (float)) != cudaSuccess
      || cudaMalloc (&p.done, sizeof (int)) != cudaSuccess
      || cudaMalloc (&p.tally, 4 * sizeof (unsigned)) != cudaSuccess
      || cudaMemset (p.work, 0, ENVS * sizeof (float)) != cudaSuccess
      || cudaMemset (p.tally, 0, 4 * sizeof (unsigned)) != cudaSuccess
      || cudaHostAlloc (&host, sizeof (unsigned), cudaHostAllocMapped) != cudaSuccess)
    {
      fprintf (stderr, "switch-probe: no memory\n");
      return 1;
    }
  p.host = host;
  setvbuf (stdout, NULL, _IOLBF, 0); // each row as it is measured
  printf ("switch-probe: %d envs; the floor's step and one node more, %d replays back "
          "to back; the lookahead's grid: %d blocks of %d\n",
          ENVS, STEPS, p.n_blocks, BLOCK);
  for (int v = 0; v < (int)(sizeof names / sizeof *names); v++)
    {
      // Row 10: whether row 3's cost is the SMs' L1/shared carveout
      // changing between the step's kernels and the next; its row alone.
      if ((v == 10 || v == 11)
          && !prefer_carveout (v == 10 ? (int)cudaSharedmemCarveoutMaxShared
                                       : (int)cudaSharedmemCarveoutDefault))
        return 1;
      if (!run (p, v, names[v], floor_median, &median))
        return 1;
      if (v == 0)
        floor_median = median;
    }
  return 0;
}
