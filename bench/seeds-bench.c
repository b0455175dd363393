/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-bench.c: a simulator step's seed work, a masked advance then
 * fill_effective, as achieved bandwidth beside a device-to-device copy of
 * the same number of bytes, measured in the same run: as two calls, and as
 * one (tg_seed_state_advance_fill), which moves fewer bytes and is held to a
 * copy of its own bytes.  Beside them, the fused kernel in each of its
 * shapes (TgSeedsShape), launched without the call's checks, so that one
 * run says which shape the library should take.  tg-bench --seeds-ranges
 * runs the kernel's shapes and the copy for a profiler instead
 * (bench/advance-fill-ncu.sh). */
#include "config.h"
#include "bench.h"
#include "../lib/seeds/seeds-kernels-private.h"
#include <cuda_profiler_api.h>

/* Bytes each env moves: advance reads its mask byte and reads and writes its
 * 4-byte epoch; fill reads its 8-byte seed and 4-byte epoch and writes its
 * 8-byte effective seed.  The fused kernel reads the epoch once. */
#define ADVANCE_BYTES (1 + 4 + 4)
#define FILL_BYTES (8 + 4 + 8)
#define ENV_BYTES (ADVANCE_BYTES + FILL_BYTES)
#define FUSED_BYTES (ENV_BYTES - 4)

typedef struct
{
  TgSeedState *state;
  guint8 *mask;
  guint64 *out;
  gpointer src, dst;            /* the copy floors' buffers */
  gsize copy_bytes, fused_copy; /* what the two calls move, and the one */
  guint n;
  TgSeedsShape shape; /* of kernel_shape() */
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
ours_fused (const Work *w)
{
  g_autoptr (GError) error = NULL;

  if (!tg_seed_state_advance_fill (w->state, w->stream, w->mask, w->n, w->out, w->n,
                                   &error))
    g_error ("seeds bench: %s", error->message);
}

static void
kernel_shape (const Work *w)
{
  TG_BENCH_CUDA (tg__launch_seeds_advance_fill (
      w->stream, w->out, tg_seed_state_get_seeds (w->state),
      tg_seed_state_get_epochs (w->state), w->mask, w->n, w->shape));
}

static void
floor_copy (const Work *w)
{
  TG_BENCH_CUDA (cudaMemcpyAsync (w->dst, w->src, w->copy_bytes,
                                  cudaMemcpyDeviceToDevice, w->stream));
}

static void
floor_copy_fused (const Work *w)
{
  TG_BENCH_CUDA (cudaMemcpyAsync (w->dst, w->src, w->fused_copy,
                                  cudaMemcpyDeviceToDevice, w->stream));
}

/* Buffers and a stream for the ops at E = 2^@log2_n, the mask all ones. */
static void
work_init (Work *w, guint log2_n)
{
  const guint n = 1u << log2_n;
  g_autoptr (GError) error = NULL;

  *w = (Work){ NULL };
  w->n = n;
  /* Each copy moves what its work moves: it reads and writes half each. */
  w->copy_bytes = ((gsize)n * ENV_BYTES / 2 + 255) / 256 * 256;
  w->fused_copy = ((gsize)n * FUSED_BYTES / 2 + 255) / 256 * 256;
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&w->stream, cudaStreamNonBlocking));
  if ((w->state = tg_seed_state_new (0, n, 0x5EEDB45Eu, &error)) == NULL)
    g_error ("seeds bench: %s", error->message);
  TG_BENCH_CUDA (cudaMalloc ((void **)&w->mask, n));
  TG_BENCH_CUDA (cudaMalloc ((void **)&w->out, (gsize)n * sizeof (guint64)));
  TG_BENCH_CUDA (cudaMalloc (&w->src, w->copy_bytes));
  TG_BENCH_CUDA (cudaMalloc (&w->dst, w->copy_bytes));
  /* The kernels read and write every byte whatever the mask holds. */
  TG_BENCH_CUDA (cudaMemsetAsync (w->mask, 1, n, w->stream));
  TG_BENCH_CUDA (cudaMemsetAsync (w->src, 0x5A, w->copy_bytes, w->stream));
}

static void
work_clear (Work *w)
{
  TG_BENCH_CUDA (cudaStreamSynchronize (w->stream));
  tg_seed_state_unref (w->state);
  TG_BENCH_CUDA (cudaFree (w->mask));
  TG_BENCH_CUDA (cudaFree (w->out));
  TG_BENCH_CUDA (cudaFree (w->src));
  TG_BENCH_CUDA (cudaFree (w->dst));
  TG_BENCH_CUDA (cudaStreamDestroy (w->stream));
}

/* Calls a sample makes at E = 2^@log2_n: about 2^27 envs' worth of traffic,
 * so that launches are amortized. */
static guint
reps_for (guint log2_n)
{
  return CLAMP ((1u << 27) >> log2_n, 4, 512);
}

/* The target of the one call at @log2_n (issue 20 item 6), 0: none. */
static double
fused_target (guint log2_n)
{
  return log2_n == 20 ? 0.85 : log2_n == 22 ? 0.95 : log2_n > 22 ? 0.85 : 0;
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

typedef void (*Op) (const Work *);

/* The kernel's shapes, each a row of its own. */
static const struct
{
  TgSeedsShape shape;
  const char *name;
} shapes[] = {
  { TG_SEEDS_SHAPE_GROUPS_1, "a thread per group of 4 envs" },
  { TG_SEEDS_SHAPE_GROUPS_2, "a thread per 2 groups of 4 envs" },
  { TG_SEEDS_SHAPE_GROUPS_4, "a thread per 4 groups of 4 envs" },
  { TG_SEEDS_SHAPE_STREAM_2, "2 blocks an SM, next group loaded first" },
  { TG_SEEDS_SHAPE_STREAM_4, "4 blocks an SM, next group loaded first" },
};
G_STATIC_ASSERT (G_N_ELEMENTS (shapes) == TG_SEEDS_N_SHAPES - 1);

/* The shape of op @o of @n_ops, the last of which take the shapes in turn. */
static TgSeedsShape
shape_of_op (guint o, guint n_ops)
{
  guint first_shape = n_ops - G_N_ELEMENTS (shapes);

  return o >= first_shape ? shapes[o - first_shape].shape : TG_SEEDS_SHAPE_DEFAULT;
}

static void
bench_size (TgBench *bench, guint log2_n, guint rounds)
{
  const guint n = 1u << log2_n;
  const guint reps = reps_for (log2_n);
  /* Sampled in turn, so that clocks and neighbours affect them alike; the
   * last ones are kernel_shape() in each of the shapes. */
  static const Op ops[]
      = { ours,         floor_copy,   ours_fused,   floor_copy_fused, kernel_shape,
          kernel_shape, kernel_shape, kernel_shape, kernel_shape };
  const guint first_shape = G_N_ELEMENTS (ops) - G_N_ELEMENTS (shapes);
  g_autofree double *t = g_new (double, G_N_ELEMENTS (ops) * rounds);
  double gbs[G_N_ELEMENTS (ops)];
  cudaEvent_t start, stop;
  gboolean large;
  int device = 0, l2 = 0;
  Work w;

  work_init (&w, log2_n);
  TG_BENCH_CUDA (cudaEventCreate (&start));
  TG_BENCH_CUDA (cudaEventCreate (&stop));

  for (guint i = 0; i < 3; i++)
    for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
      {
        w.shape = shape_of_op (o, G_N_ELEMENTS (ops));
        ops[o](&w);
      }
  for (guint r = 0; r < rounds; r++)
    for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
      {
        w.shape = shape_of_op (o, G_N_ELEMENTS (ops));
        t[o * rounds + r] = sample_ms (ops[o], &w, start, stop, reps);
      }
  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      double bytes = ops[o] == floor_copy         ? 2.0 * w.copy_bytes
                     : ops[o] == floor_copy_fused ? 2.0 * w.fused_copy
                     : ops[o] == ours             ? (double)n * ENV_BYTES
                                                  : (double)n * FUSED_BYTES;

      gbs[o] = bytes / (tg_bench_median (t + o * rounds, rounds) * 1e-3) / 1e9;
    }

  /* The two calls' target is for the large sizes: data that fits in L2
   * measures the cache, where the copy gains more than our kernels do.  The
   * one call is held at every size the issue names. */
  TG_BENCH_CUDA (cudaGetDevice (&device));
  TG_BENCH_CUDA (cudaDeviceGetAttribute (&l2, cudaDevAttrL2CacheSize, device));
  large = (double)n * ENV_BYTES > 4.0 * l2;
  {
    g_autofree char *what
        = g_strdup_printf ("advance (masked) + fill_effective, E = 2^%u%s", log2_n,
                           large ? "" : " (< 4x L2)");
    tg_bench_add (bench, "seeds", what, "GB/s", gbs[0], gbs[1],
                  "cudaMemcpyAsync D2D, same bytes read + written",
                  large ? TG_BENCH_HIGHER_IS_BETTER : TG_BENCH_INFO, 0.85);
  }
  {
    g_autofree char *what
        = g_strdup_printf ("advance_fill (one call), E = 2^%u", log2_n);
    double target = fused_target (log2_n);

    tg_bench_add (bench, "seeds", what, "GB/s", gbs[2], gbs[3],
                  "cudaMemcpyAsync D2D, same bytes read + written",
                  target > 0 ? TG_BENCH_HIGHER_IS_BETTER : TG_BENCH_INFO, target);
  }
  for (guint o = first_shape; o < G_N_ELEMENTS (ops); o++)
    {
      g_autofree char *what = g_strdup_printf (
          "  its kernel alone, %s%s, E = 2^%u", shapes[o - first_shape].name,
          shapes[o - first_shape].shape == TG_SEEDS_ADVANCE_FILL_SHAPE ? " (the call's)"
                                                                       : "",
          log2_n);

      tg_bench_add (bench, "seeds", what, "GB/s", gbs[o], gbs[3],
                    "cudaMemcpyAsync D2D, same bytes read + written", TG_BENCH_INFO, 0);
    }

  TG_BENCH_CUDA (cudaEventDestroy (start));
  TG_BENCH_CUDA (cudaEventDestroy (stop));
  work_clear (&w);
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

/* What tg-bench --seeds-ranges measures: an op of this file on a shape of
 * the kernel, with the mask of the bench's rows or none. */
typedef struct
{
  Op op;
  TgSeedsShape shape;
  gboolean masked;
} Probe;

/* The one call's kernel, masked as the rows are and unmasked; each other
 * shape of it, masked; and the copy its row is held to. */
static guint
probes_init (Probe *probes)
{
  guint n = 0;

  probes[n++] = (Probe){ kernel_shape, TG_SEEDS_SHAPE_DEFAULT, TRUE };
  probes[n++] = (Probe){ kernel_shape, TG_SEEDS_SHAPE_DEFAULT, FALSE };
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    if (shapes[i].shape != TG_SEEDS_ADVANCE_FILL_SHAPE)
      probes[n++] = (Probe){ kernel_shape, shapes[i].shape, TRUE };
  probes[n++] = (Probe){ floor_copy_fused, TG_SEEDS_SHAPE_DEFAULT, TRUE };
  return n;
}

static char *
probe_what (const Probe *p)
{
  TgSeedsShape shape
      = p->shape == TG_SEEDS_SHAPE_DEFAULT ? TG_SEEDS_ADVANCE_FILL_SHAPE : p->shape;
  const char *name = NULL;

  if (p->op == floor_copy_fused)
    return g_strdup ("cudaMemcpyAsync D2D, same bytes");
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    if (shapes[i].shape == shape)
      name = shapes[i].name;
  return g_strdup_printf (
      "%s: %s, %s", p->shape == TG_SEEDS_SHAPE_DEFAULT ? "the call's kernel" : "kernel",
      name, p->masked ? "masked" : "unmasked");
}

/* Bytes one launch of @p moves at @w's size, as the rows count them. */
static gsize
probe_bytes (const Probe *p, const Work *w)
{
  if (p->op == floor_copy_fused)
    return 2 * w->fused_copy;
  /* Unmasked, no mask byte is read. */
  return (gsize)w->n * (p->masked ? FUSED_BYTES : FUSED_BYTES - 1);
}

void
tg_bench_seeds_ranges (guint launches)
{
  static const guint sizes[] = { 20, 22 };
  const guint rounds = 21;
  struct cudaDeviceProp prop;
  cudaEvent_t start, stop;
  int device = 0;
  guint index = 0;

  TG_BENCH_CUDA (cudaGetDevice (&device));
  TG_BENCH_CUDA (cudaGetDeviceProperties (&prop, device));
  TG_BENCH_CUDA (cudaEventCreate (&start));
  TG_BENCH_CUDA (cudaEventCreate (&stop));
  g_print ("# seeds ranges: %s, %d SMs, %d MiB of L2, %u launches a range\n", prop.name,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, launches);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      Probe probes[G_N_ELEMENTS (shapes) + 2];
      const guint n_probes = probes_init (probes);
      g_autofree double *t = g_new (double, n_probes * rounds);
      Work w, u[G_N_ELEMENTS (probes)];

      work_init (&w, sizes[s]);
      for (guint p = 0; p < n_probes; p++)
        {
          u[p] = w;
          u[p].shape = probes[p].shape;
          u[p].mask = probes[p].masked ? w.mask : NULL;
        }
      /* Modules load on first launch, caches and clocks settle. */
      for (guint i = 0; i < 3; i++)
        for (guint p = 0; p < n_probes; p++)
          probes[p].op (&u[p]);
      TG_BENCH_CUDA (cudaStreamSynchronize (w.stream));
      for (guint p = 0; p < n_probes; p++, index++)
        {
          g_autofree char *what = probe_what (&probes[p]);

          g_print ("range\t%u\t%u\t%s\t%" G_GSIZE_FORMAT "\t%u\t%s\n", index, sizes[s],
                   probes[p].op == floor_copy_fused ? "copy" : "kernel",
                   probe_bytes (&probes[p], &w), launches, what);
          TG_BENCH_CUDA (cudaProfilerStart ());
          for (guint k = 0; k < launches; k++)
            probes[p].op (&u[p]);
          TG_BENCH_CUDA (cudaProfilerStop ());
          TG_BENCH_CUDA (cudaStreamSynchronize (w.stream));
        }
      /* Outside the ranges, as bench_size() times its rows. */
      for (guint r = 0; r < rounds; r++)
        for (guint p = 0; p < n_probes; p++)
          t[p * rounds + r]
              = sample_ms (probes[p].op, &u[p], start, stop, reps_for (sizes[s]));
      for (guint p = 0; p < n_probes; p++)
        {
          g_autofree char *what = probe_what (&probes[p]);

          g_print ("time\t%u\t%.4f\t%s\n", sizes[s],
                   1e3 * tg_bench_median (t + p * rounds, rounds), what);
        }
      work_clear (&w);
    }
  TG_BENCH_CUDA (cudaEventDestroy (start));
  TG_BENCH_CUDA (cudaEventDestroy (stop));
}
