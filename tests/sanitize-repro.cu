/* SPDX-License-Identifier: Apache-2.0 */
// sanitize-repro.cu: a textbook block reduction (__syncthreads in a loop,
// outside any branch, so every thread reaches every barrier) run eagerly,
// from a plain graph, and inside the body of a CUDA graph WHILE node, in
// plain CUDA with no TrackGen code.  make sanitize runs each mode under
// synccheck and racecheck: when only the WHILE mode fails, failures on
// barriers in WHILE bodies are the tool's, not TrackGen's.  On the H200
// (driver 580, compute-sanitizer 2025.3) synccheck reports 128 barrier
// errors and a launch failure there, and racecheck crashes the process.
//
// Usage: sanitize-repro [eager|graph|while]...  (no argument: all three)
// Exit: 0 every result right, 1 a wrong result or a failed CUDA call,
// 77 no device or no conditional nodes (they need CUDA 12.4).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if CUDART_VERSION >= 12040
#define THREADS 128
#define ITERATIONS 4

#define CHECK(call) check ((call), #call, __LINE__)

static void
check (cudaError_t status, const char *call, int line)
{
  if (status == cudaSuccess)
    return;
  fprintf (stderr, "sanitize-repro.cu:%d: %s: %s\n", line, call,
           cudaGetErrorName (status));
  exit (1);
}

struct State
{
  int value;
  unsigned sum;
  unsigned iterations; // WHILE mode only
};

static __global__ void
step_kernel (State *s)
{
  s->value += 1;
}

static __global__ void
block_sum_kernel (State *s)
{
  __shared__ unsigned part[THREADS];
  unsigned t = threadIdx.x;

  part[t] = (unsigned)s->value + t;
  __syncthreads ();
  for (unsigned half = THREADS / 2; half > 0; half >>= 1)
    {
      if (t < half)
        part[t] += part[t + half];
      __syncthreads ();
    }
  if (t == 0)
    s->sum += part[0];
}

// One iteration: value += 1, then sum += the sum of value + t over the block.
static void
enqueue_iteration (State *s, cudaStream_t stream)
{
  step_kernel<<<1, 1, 0, stream>>> (s);
  CHECK (cudaGetLastError ());
  block_sum_kernel<<<1, THREADS, 0, stream>>> (s);
  CHECK (cudaGetLastError ());
}

static void
launch_graph (cudaGraph_t graph, cudaStream_t stream)
{
  cudaGraphExec_t exec;

  CHECK (cudaGraphInstantiate (&exec, graph, 0));
  CHECK (cudaGraphLaunch (exec, stream));
  CHECK (cudaStreamSynchronize (stream));
  CHECK (cudaGraphExecDestroy (exec));
  CHECK (cudaGraphDestroy (graph));
}

static void
run_eager (State *s, cudaStream_t stream)
{
  for (int i = 0; i < ITERATIONS; i++)
    enqueue_iteration (s, stream);
  CHECK (cudaStreamSynchronize (stream));
}

static void
run_graph (State *s, cudaStream_t stream)
{
  cudaGraph_t graph;

  CHECK (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < ITERATIONS; i++)
    enqueue_iteration (s, stream);
  CHECK (cudaStreamEndCapture (stream, &graph));
  launch_graph (graph, stream);
}

#if CUDART_VERSION >= 13000
#define graph_add_node cudaGraphAddNode
#else
#define graph_add_node cudaGraphAddNode_v2
#endif

static __global__ void
loop_tail_kernel (State *s, cudaGraphConditionalHandle handle)
{
  s->iterations += 1;
  cudaGraphSetConditional (handle, s->iterations < ITERATIONS);
}

// A graph of one WHILE node whose body is one iteration and a tail kernel
// that ends the loop after ITERATIONS.
static void
run_while (State *s, cudaStream_t stream)
{
  cudaGraph_t graph, body;
  cudaGraphConditionalHandle handle;
  cudaGraphNode_t node;
  cudaGraphNodeParams params = {};

  CHECK (cudaGraphCreate (&graph, 0));
  // The condition is 1 at each launch: the body runs at least once.
  CHECK (
      cudaGraphConditionalHandleCreate (&handle, graph, 1, cudaGraphCondAssignDefault));
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  CHECK (graph_add_node (&node, graph, NULL, NULL, 0, &params));
  body = params.conditional.phGraph_out[0];

  CHECK (cudaStreamBeginCaptureToGraph (stream, body, NULL, NULL, 0,
                                        cudaStreamCaptureModeThreadLocal));
  enqueue_iteration (s, stream);
  loop_tail_kernel<<<1, 1, 0, stream>>> (s, handle);
  CHECK (cudaGetLastError ());
  CHECK (cudaStreamEndCapture (stream, &body));
  launch_graph (graph, stream);
}

static const struct
{
  const char *name;
  void (*run) (State *s, cudaStream_t stream);
} modes[] = {
  { "eager", run_eager },
  { "graph", run_graph },
  { "while", run_while },
};
#define N_MODES (int)(sizeof modes / sizeof modes[0])

static int
find_mode (const char *name)
{
  for (int m = 0; m < N_MODES; m++)
    if (strcmp (modes[m].name, name) == 0)
      return m;
  return -1;
}

// Runs mode @m from a zeroed state and checks what it left.
static bool
run_mode (int m, State *s, cudaStream_t stream)
{
  State got, want = { ITERATIONS, 0, 0 };
  bool loop = modes[m].run == run_while;

  for (unsigned v = 1; v <= ITERATIONS; v++)
    want.sum += THREADS * v + THREADS * (THREADS - 1) / 2;
  want.iterations = loop ? ITERATIONS : 0;

  CHECK (cudaMemsetAsync (s, 0, sizeof *s, stream));
  modes[m].run (s, stream);
  CHECK (cudaMemcpy (&got, s, sizeof got, cudaMemcpyDeviceToHost));

  bool ok = got.value == want.value && got.sum == want.sum
            && got.iterations == want.iterations;
  printf ("sanitize-repro: %s: %d iterations of a %d-thread block sum%s: "
          "value %d, sum %u, loop iterations %u (want %d, %u, %u): %s\n",
          modes[m].name, ITERATIONS, THREADS, loop ? " in a WHILE body" : "", got.value,
          got.sum, got.iterations, want.value, want.sum, want.iterations,
          ok ? "ok" : "WRONG");
  return ok;
}

int
main (int argc, char **argv)
{
  int count = 0, driver = 0, failed = 0;
  cudaStream_t stream;
  State *s;

  for (int i = 1; i < argc; i++)
    if (find_mode (argv[i]) < 0)
      {
        fprintf (stderr, "usage: sanitize-repro [eager|graph|while]...\n");
        return 1;
      }
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0)
    {
      printf ("sanitize-repro: no CUDA device: skipped\n");
      return 77;
    }
  CHECK (cudaDriverGetVersion (&driver));
  if (driver < 12040)
    {
      printf ("sanitize-repro: driver's CUDA %d has no conditional nodes: skipped\n",
              driver);
      return 77;
    }
  // Capture needs a stream other than the legacy default one.
  CHECK (cudaStreamCreate (&stream));
  CHECK (cudaMalloc (&s, sizeof *s));
  if (argc == 1)
    for (int m = 0; m < N_MODES; m++)
      failed |= !run_mode (m, s, stream);
  for (int i = 1; i < argc; i++)
    failed |= !run_mode (find_mode (argv[i]), s, stream);
  CHECK (cudaFree (s));
  CHECK (cudaStreamDestroy (stream));
  return failed;
}
#else
int
main (void)
{
  printf ("sanitize-repro: built with CUDA %d; conditional nodes need 12.4: skipped\n",
          CUDART_VERSION);
  return 77;
}
#endif
