/* SPDX-License-Identifier: Apache-2.0 */
/* tg-test.h: shared helpers of libtrackgen's test programs. */
#ifndef TG_TEST_H
#define TG_TEST_H

#include <trackgen/trackgen.h>

G_BEGIN_DECLS

/* g_test_init plus TrackGen's test conventions. */
void tg_test_init (int *argc, char ***argv);

/* Whether a CUDA device is usable, decided once per process. */
gboolean tg_test_have_gpu (void);

#define TG_TEST_REQUIRE_GPU()                                                          \
  G_STMT_START                                                                         \
  {                                                                                    \
    if (!tg_test_have_gpu ())                                                          \
      {                                                                                \
        g_test_skip ("no CUDA device");                                                \
        return;                                                                        \
      }                                                                                \
  }                                                                                    \
  G_STMT_END

/* For the cases that check behaviour without a device. */
#define TG_TEST_REQUIRE_NO_GPU()                                                       \
  G_STMT_START                                                                         \
  {                                                                                    \
    if (tg_test_have_gpu ())                                                           \
      {                                                                                \
        g_test_skip ("a CUDA device is present");                                      \
        return;                                                                        \
      }                                                                                \
  }                                                                                    \
  G_STMT_END

/* Asserts @error is a TG_CUDA_ERROR whose message names the failing call,
 * cudaGetErrorName and cudaGetErrorString. */
void tg_test_assert_cuda_error (const GError *error);

/* Asserts a CUDA call succeeded, naming it. */
#define TG_TEST_CUDA(call)                                                             \
  G_STMT_START                                                                         \
  {                                                                                    \
    cudaError_t tg_test_status_ = (call);                                              \
    if (tg_test_status_ != cudaSuccess)                                                \
      g_error ("%s failed: %s", #call, cudaGetErrorName (tg_test_status_));            \
  }                                                                                    \
  G_STMT_END

/* The CUDA user objects TrackGen made that graphs still hold. */
gint tg_test_user_objects (void);

/* The fixture of GPU test cases: a non-blocking stream and a leak check.
 * Set-up and tear-down do nothing without a GPU (the case then skips). */
typedef struct
{
  TgLiveObjects live;
  cudaStream_t stream;
} TgTestGpu;

void tg_test_gpu_set_up (TgTestGpu *gpu, gconstpointer data);
void tg_test_gpu_tear_down (TgTestGpu *gpu, gconstpointer data);

/* Adds a GPU test case @func (TgTestGpu *, gconstpointer) at @path. */
#define TG_TEST_ADD_GPU(path, func)                                                    \
  g_test_add (path, TgTestGpu, NULL, tg_test_gpu_set_up, func, tg_test_gpu_tear_down)

/* The fixture of GPU cases that keep their device values in one allocation:
 * the TgTestGpu fixture, and @n elements of @Type at @field, zeroed (none
 * without a GPU).  Defines, static in the file, the type Fixture { gpu,
 * field } and its fixture_set_up() and fixture_tear_down(). */
#define TG_TEST_DEFINE_GPU_FIXTURE(Type, field, n)                                     \
  typedef struct                                                                       \
  {                                                                                    \
    TgTestGpu gpu;                                                                     \
    Type *field;                                                                       \
  } Fixture;                                                                           \
                                                                                       \
  static void fixture_set_up (Fixture *f, gconstpointer data)                          \
  {                                                                                    \
    tg_test_gpu_set_up (&f->gpu, data);                                                \
    if (tg_test_have_gpu ())                                                           \
      f->field = tg_test_device_alloc ((n) * sizeof (Type));                           \
  }                                                                                    \
                                                                                       \
  static void fixture_tear_down (Fixture *f, gconstpointer data)                       \
  {                                                                                    \
    if (tg_test_have_gpu ())                                                           \
      tg_test_device_free (f->field);                                                  \
    tg_test_gpu_tear_down (&f->gpu, data);                                             \
  }

/* Adds a case @func (Fixture *, gconstpointer) of the file's
 * TG_TEST_DEFINE_GPU_FIXTURE at @path, with @data. */
#define TG_TEST_ADD_FIXTURE(path, data, func)                                          \
  g_test_add (path, Fixture, data, fixture_set_up, func, fixture_tear_down)

/* Leak checks: take a snapshot at the start of a test, check at its end that
 * no producer, graph, exec, stream or capture of TrackGen's outlived it. */
void tg_test_live_snapshot (TgLiveObjects *before);
void tg_test_assert_no_leaks (const TgLiveObjects *before);

/* Asserts that @stream is not capturing. */
void tg_test_assert_not_capturing (cudaStream_t stream);

/* Begins a capture on @stream (global mode) holding one kernel node, which
 * adds 1 to *@counter; returns the graph it captures into. */
cudaGraph_t tg_test_begin_caller_capture (cudaStream_t stream, guint32 *counter);
/* Ends that capture and instantiates its graph, for
 * tg_test_replay_caller_capture(), which replays it once, checks that its
 * node ran once (*@counter == 1), and destroys it. */
cudaGraphExec_t tg_test_end_caller_capture (cudaStream_t stream);
void tg_test_replay_caller_capture (cudaGraphExec_t exec, cudaStream_t stream,
                                    guint32 *counter);

/* Runs @producer into a capture begun on @stream (holding one kernel node),
 * expects the call to fail with @domain/@code, and checks that the capture
 * kept exactly its nodes, is still active, and still instantiates and runs. */
void tg_test_expect_refusal (TgProducer *producer, cudaStream_t stream, TgPolicy policy,
                             TgCondition condition, GQuark domain, gint code);

/* Runs @p once under @policy and @condition on @stream, through a capture
 * of the test's (instantiated and launched once) for RECORD, and waits. */
void tg_test_run_once (cudaStream_t stream, TgProducer *p, TgPolicy policy,
                       TgCondition condition);

/* A kernel launcher's result as a stage's result: FALSE with a
 * TG_CUDA_ERROR on failure. */
gboolean tg_test_launched (cudaError_t status, GError **error);

/* Number of nodes of @graph. */
gsize tg_test_graph_n_nodes (cudaGraph_t graph);
/* How many nodes of @graph have type @type (not looking into children). */
guint tg_test_graph_count_nodes (cudaGraph_t graph, enum cudaGraphNodeType type);

/* Device buffer helpers (abort on failure); allocations start zeroed. */
gpointer tg_test_device_alloc (gsize size);
void tg_test_device_clear (gpointer device_ptr, gsize size);
void tg_test_device_free (gpointer ptr);
void tg_test_upload (gpointer device_dst, gconstpointer host_src, gsize size);
void tg_test_download (gpointer host_dst, gconstpointer device_src, gsize size);
cudaStream_t tg_test_stream_new (void);

/* Downloads one guint32 from the device. */
guint32 tg_test_read_u32 (const guint32 *device);

/* Stages that count their runs on the device.  tg_test_count_stage:
 * *@data += 1.  tg_test_count_bound_stage: the binding "counter" += 1.
 * tg_test_optional_count_stage: the same, and first, when the producer has
 * a binding "extra" (not declared, since it may be unbound), "extra" += 1:
 * its topology depends on a binding. */
gboolean tg_test_count_stage (const TgLaunch *launch, gpointer data, GError **error);
gboolean tg_test_count_bound_stage (const TgLaunch *launch, gpointer data,
                                    GError **error);
gboolean tg_test_optional_count_stage (const TgLaunch *launch, gpointer data,
                                       GError **error);

/* A producer "count" of one DEVICE stage "count" (@func, @flags) that
 * declares the binding "counter" (a guint32), bound to @counter. */
TgProducer *tg_test_counter_producer (guint32 *counter, TgStageFlags flags,
                                      TgDeviceFunc func);

/* What stages keep: tg_test_keep_token() keeps a token with tg_launch_keep(),
 * tg_test_kept_alive() is the number kept and not yet released since
 * tg_test_kept_reset().  tg_test_keeping_stage() keeps one and counts as
 * tg_test_count_bound_stage() does. */
void tg_test_keep_token (const TgLaunch *launch);
gint tg_test_kept_alive (void);
void tg_test_kept_reset (void);
gboolean tg_test_keeping_stage (const TgLaunch *launch, gpointer data, GError **error);

/* DEVICE stages over the loop kernels below, on the bindings "value",
 * "loop_flag", "target" and "setup_at": a loop's set-up for the next replay
 * (tgt_launch_loop_setup; @data: its cap, GINT_TO_POINTER) and one step of
 * its relaxation (tgt_launch_relax), a loop body. */
gboolean tg_test_loop_setup_stage (const TgLaunch *launch, gpointer data,
                                   GError **error);
gboolean tg_test_relax_stage (const TgLaunch *launch, gpointer data, GError **error);

/* Test kernels (test-kernels.cu), every one a launcher returning cudaError_t. */
/* out[i] = hash(i, *param) */
cudaError_t tgt_launch_seed (cudaStream_t s, guint32 *out, guint32 n,
                             const guint32 *param);
/* buf[i] = buf[i] * k + (buf[i] >> 7) ^ i */
cudaError_t tgt_launch_mix (cudaStream_t s, guint32 *buf, guint32 n, guint32 k);
/* b[i] += a[(i * 7) % n] */
cudaError_t tgt_launch_combine (cudaStream_t s, const guint32 *a, guint32 *b,
                                guint32 n);
/* *dst = value */
cudaError_t tgt_launch_set (cudaStream_t s, gint32 *dst, gint32 value);
/* *counter += 1 */
cudaError_t tgt_launch_count (cudaStream_t s, guint32 *counter);
/* *flag = pattern bit (*counter % 32) of @pattern; then *counter += 1 */
cudaError_t tgt_launch_flag_pattern (cudaStream_t s, gint32 *flag, guint32 *counter,
                                     guint32 pattern);
/* *value += 1; *flag = (*value < *target) */
cudaError_t tgt_launch_relax (cudaStream_t s, gint32 *value, gint32 *flag,
                              const gint32 *target);
/* Loop set-up per replay: *target = {max - 2, max, max + 3, 0}[*counter % 4];
 * *value = 0; *flag = (*target > 0); *counter += 1 */
cudaError_t tgt_launch_loop_setup (cudaStream_t s, gint32 *value, gint32 *flag,
                                   gint32 *target, guint32 *counter, gint32 max);
/* One block of 128 threads, a shared-memory reduction with barriers:
 * *sum += sum over t < 128 of (*value + t) */
cudaError_t tgt_launch_block_sum (cudaStream_t s, const gint32 *value, guint32 *sum);
/* *flag = *value & 1 */
cudaError_t tgt_launch_parity (cudaStream_t s, const gint32 *value, gint32 *flag);
/* A kernel on the legacy default stream (a "plugin" that ignores streams). */
cudaError_t tgt_launch_mix_legacy (guint32 *buf, guint32 n, guint32 k);

/* The host version of tgt_launch_seed's hash. */
guint32 tgt_hash (guint32 i, guint32 param);

/* The test producer "chain": a = mix(seed(param)); [HOST: upload k]; b =
 * seed(k) + a[(i * 7) % n].  Four DEVICE stages, and optionally one HOST
 * stage between them that uploads k from pinned memory and enqueues a host
 * function counting its runs. */
typedef struct
{
  guint32 n;
  guint32 *param;  /* device */
  guint32 *k;      /* device */
  guint32 *a, *b;  /* device, n each */
  guint32 *host_k; /* pinned */
  gint host_runs;  /* runs of the enqueued host function */
  TgProducer *producer;
} TgTestChain;

#define TG_TEST_CHAIN_MIX 0x9E37u

TgTestChain *tg_test_chain_new (const char *name, guint32 n, gboolean with_host,
                                TgStageFlags host_flags);
void tg_test_chain_free (TgTestChain *chain);
/* The inputs of call @call of the chain's multi-call cases. */
guint32 tg_test_chain_param (guint call);
guint32 tg_test_chain_k (guint call);
/* Sets the inputs of the next call or replay (blocks). */
void tg_test_chain_set_inputs (TgTestChain *chain, guint32 param, guint32 k);
/* Downloads b. */
void tg_test_chain_read (TgTestChain *chain, guint32 *b);
/* The expected b for inputs (param, k), computed on the host. */
void tg_test_chain_expect (guint32 n, guint32 param, guint32 k, guint32 *b);

/* The test producer "counted": one DEVICE stage "seed" that counts its
 * calls in @calls: out[i] = hash(i, *param), TG_TEST_COUNTED_N elements,
 * bound as "out" and "param". */
#define TG_TEST_COUNTED_N 1024

typedef struct
{
  guint32 *out, *param; /* device */
  gint calls;
} TgTestCounted;

/* Allocates the buffers, uploads @param, zeroes the count. */
void tg_test_counted_init (TgTestCounted *c, guint32 param);
/* A new producer over @c's buffers, its stage flagged @flags. */
TgProducer *tg_test_counted_new (TgTestCounted *c, TgStageFlags flags);
void tg_test_counted_clear (TgTestCounted *c);
/* Asserts that out holds hash(i, @param). */
void tg_test_counted_expect (TgTestCounted *c, guint32 param);

G_END_DECLS

#endif
