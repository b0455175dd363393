/* seeds-bench.c: a simulator step's seed work, a masked advance then
 * fill_effective, as achieved bandwidth beside a device-to-device copy of
 * the same number of bytes, measured in the same run. */
#include "config.h"
#include "bench.h"

/* Bytes each env moves: advance reads its mask byte and reads and writes its
 * 4-byte epoch; fill reads its 8-byte seed and 4-byte epoch and writes its
 * 8-byte effective seed. */
#define ADVANCE_BYTES (1 + 4 + 4)
#define FILL_BYTES (8 + 4 + 8)
#define ENV_BYTES (ADVANCE_BYTES + FILL_BYTES)

typedef struct
{
  TgSeedState *state;
  guint8 *mask;
  guint64 *out;
  gpointer src, dst; /* the copy floor's buffers */
  gsize copy_bytes;
  guint n;
  cudaStream_t stream;
} Work;

static void
ours (const Work *w)
{
  g_autoptr (GError) error = NULL;

  if (!tg_seed_state_advance (w->state, w->stream, w->mask, w->n, &error)
      || !tg_seed_state_fill_effective (w->state, w->stream, w->out, w->n, &error))
    g_error ("seeds bench: %s", error->message);
}

static void
floor_copy (const Work *w)
{
  TG_BENCH_CUDA (cudaMemcpyAsync (w->dst, w->src, w->copy_bytes,
                                  cudaMemcpyDeviceToDevice, w->stream));
}

/* GPU milliseconds of one call of @op: @reps calls back to back between two
 * events. */
static double
sample_ms (void (*op) (const Work *), const Work *w, cudaEvent_t start,
           cudaEvent_t stop, guint reps)
{
  float ms = 0;

  TG_BENCH_CUDA (cudaEventRecord (start, w->stream));
  for (guint i = 0; i < reps; i++)
    op (w);
  TG_BENCH_CUDA (cudaEventRecord (stop, w->stream));
  TG_BENCH_CUDA (cudaEventSynchronize (stop));
  TG_BENCH_CUDA (cudaEventElapsedTime (&ms, start, stop));
  return (double)ms / reps;
}

static void
bench_size (TgBench *bench, guint log2_n, guint rounds)
{
  const guint n = 1u << log2_n;
  /* About 2^27 envs' worth of traffic per sample, so launches are amortized. */
  const guint reps = CLAMP ((1u << 27) >> log2_n, 4, 512);
  g_autofree double *t_ours = g_new (double, rounds);
  g_autofree double *t_copy = g_new (double, rounds);
  g_autoptr (GError) error = NULL;
  g_autofree char *what = NULL;
  cudaEvent_t start, stop;
  double bytes, gbs_ours, gbs_copy;
  Work w = { NULL };

  w.n = n;
  /* The copy moves what ours moves: it reads and writes copy_bytes each. */
  w.copy_bytes = ((gsize)n * ENV_BYTES / 2 + 255) / 256 * 256;
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&w.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaEventCreate (&start));
  TG_BENCH_CUDA (cudaEventCreate (&stop));
  if ((w.state = tg_seed_state_new (0, n, 0x5EEDB45Eu, &error)) == NULL)
    g_error ("seeds bench: %s", error->message);
  TG_BENCH_CUDA (cudaMalloc ((void **)&w.mask, n));
  TG_BENCH_CUDA (cudaMalloc ((void **)&w.out, (gsize)n * sizeof (guint64)));
  TG_BENCH_CUDA (cudaMalloc (&w.src, w.copy_bytes));
  TG_BENCH_CUDA (cudaMalloc (&w.dst, w.copy_bytes));
  /* The kernels read and write every byte whatever the mask holds. */
  TG_BENCH_CUDA (cudaMemsetAsync (w.mask, 1, n, w.stream));
  TG_BENCH_CUDA (cudaMemsetAsync (w.src, 0x5A, w.copy_bytes, w.stream));

  for (guint i = 0; i < 3; i++)
    {
      ours (&w);
      floor_copy (&w);
    }
  /* Alternate the two so that clocks and neighbours affect both alike. */
  for (guint r = 0; r < rounds; r++)
    {
      t_ours[r] = sample_ms (ours, &w, start, stop, reps);
      t_copy[r] = sample_ms (floor_copy, &w, start, stop, reps);
    }
  bytes = (double)n * ENV_BYTES;
  gbs_ours = bytes / (tg_bench_median (t_ours, rounds) * 1e-3) / 1e9;
  gbs_copy = 2.0 * w.copy_bytes / (tg_bench_median (t_copy, rounds) * 1e-3) / 1e9;
  /* The target is for the large sizes: data that fits in L2 measures the
   * cache, where the copy gains more than our kernels do. */
  {
    int device = 0, l2 = 0;
    gboolean large;
    TG_BENCH_CUDA (cudaGetDevice (&device));
    TG_BENCH_CUDA (cudaDeviceGetAttribute (&l2, cudaDevAttrL2CacheSize, device));
    large = bytes > 4.0 * l2;
    what = g_strdup_printf ("advance (masked) + fill_effective, E = 2^%u%s", log2_n,
                            large ? "" : " (< 4x L2)");
    tg_bench_add (bench, "seeds", what, "GB/s", gbs_ours, gbs_copy,
                  "cudaMemcpyAsync D2D, same bytes read + written",
                  large ? TG_BENCH_HIGHER_IS_BETTER : TG_BENCH_INFO, 0.85);
  }

  TG_BENCH_CUDA (cudaStreamSynchronize (w.stream));
  tg_seed_state_unref (w.state);
  TG_BENCH_CUDA (cudaFree (w.mask));
  TG_BENCH_CUDA (cudaFree (w.out));
  TG_BENCH_CUDA (cudaFree (w.src));
  TG_BENCH_CUDA (cudaFree (w.dst));
  TG_BENCH_CUDA (cudaEventDestroy (start));
  TG_BENCH_CUDA (cudaEventDestroy (stop));
  TG_BENCH_CUDA (cudaStreamDestroy (w.stream));
}

void
tg_bench_seeds (TgBench *bench)
{
  /* E = 2^20 .. 2^26 in powers of 4; --quick keeps the small ones. */
  const guint full[] = { 20, 22, 24, 26 }, quick[] = { 16, 18 };
  gboolean q = tg_bench_quick (bench);
  const guint *sizes = q ? quick : full;
  guint n_sizes = q ? G_N_ELEMENTS (quick) : G_N_ELEMENTS (full);

  for (guint i = 0; i < n_sizes; i++)
    bench_size (bench, sizes[i], q ? 5 : 21);
}
