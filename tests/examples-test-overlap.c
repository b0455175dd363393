/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-overlap.c: the track producer with a heavy refill
 * overlapped with the steps (TrackRefiller) gives every env, at every step,
 * the track of on-demand generation or of the in-graph refill, bit for bit,
 * eagerly and replayed; its polls start refills as they end, its calls
 * never break another thread's capture, and a refiller of the wrong
 * producer is refused. */
#include "config.h"
#include "examples-test.h"

#include <string.h>

/* A heavy generator: a relaxation that runs far longer than a step (a
 * tighter turn radius, a high iteration cap), the same for both sides; with
 * lookahead, every spare track runs all its iterations (min_iters), which
 * must change no track: on demand, each stops once smooth. */
static void
heavy_config (TrackConfig *config, guint lookahead, gboolean overlap)
{
  track_config_init (config, N_ENVS);
  config->advance = TRUE;
  config->shape.min_turn_radius = 45.f;
  config->max_iters = 400;
  config->min_iters = lookahead > 0 ? config->max_iters : 0;
  config->lookahead = lookahead;
  config->refill_batch = 4;
  config->overlap = overlap;
}

/* The family of step @t of test_overlap (and of its first call, @t = 0):
 * one that stays against on demand, a new one every step against the
 * in-graph refill. */
static gint32
overlap_family (gboolean against_in_graph, guint t)
{
  return against_in_graph ? (gint32)(t % TRACK_N_FAMILIES) : 1;
}

/* Polls @refiller (it must not fail): whether it started a refill. */
static gboolean
poll_ok (TrackRefiller *refiller)
{
  g_autoptr (GError) error = NULL;
  gboolean started = FALSE;

  g_assert_true (track_refiller_poll (refiller, &started, &error));
  g_assert_no_error (error);
  return started;
}

/* Waits for @refiller's running refill (it must not fail). */
static void
wait_ok (TrackRefiller *refiller)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (track_refiller_wait (refiller, &error));
  g_assert_no_error (error);
}

/* The overlapped refill: a heavy refill running beside the steps on its
 * own stream gives every env, at every step, the track of the reference
 * (@data: on demand with one family, or the in-graph refill with a family
 * that changes every step: an env's tracks do not depend on when refills
 * run), eagerly (against on demand) or replayed from its own graph
 * (against the in-graph refill), then replayed from a caller's graph, the
 * host polling the refiller after each step as a loop does. */
static void
test_overlap (TgTestGpu *gpu, gconstpointer data)
{
  const gboolean against_in_graph = GPOINTER_TO_INT (data);
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  cudaStream_t s = gpu->stream;
  TrackRefiller *refiller;
  TrackConfig config, ref_config;
  TrackRefillerStats first, stats;
  guint8 mask[N_ENVS];
  Pair pair;

  TG_TEST_REQUIRE_GPU ();
  heavy_config (&config, 2, TRUE);
  heavy_config (&ref_config, against_in_graph ? 2 : 0, FALSE);
  /* The refiller comes after the pair's first calls: its first refill
   * makes their spares. */
  pair_init (&pair, s, 31, &ref_config, &config, overlap_family (against_in_graph, 0));
  pair.policy = against_in_graph ? TG_POLICY_REPLAY : TG_POLICY_EAGER;
  refiller = track_refiller_new (pair.p[1], &config, pair.seeds[1], &error);
  g_assert_no_error (error);
  track_refiller_get_stats (refiller, &first);
  for (guint t = 0; t < 80; t++)
    {
      mask_of_step (t, rand, mask);
      pair_run (&pair, mask, overlap_family (against_in_graph, t), t == 40, s);
      (void)poll_ok (refiller);
      pair_check (&pair, t, s);
    }
  wait_ok (refiller);
  track_refiller_get_stats (refiller, &stats);
  g_test_message ("%u slots freed, %u ends made at once, %u refills of %u started "
                  "made %u in %.1f ms, their %u blocks resident %.1f ms",
                  stats.totals.freed, stats.totals.misses, stats.totals.refills,
                  stats.started, stats.totals.made, stats.gpu_ms, stats.blocks,
                  stats.totals.busy_ns / 1e6);
  /* Not vacuous: refills ran beside the steps (not only the refiller's
   * first) and made spares that ends took. */
  g_assert_cmpuint (stats.totals.refills, ==, stats.started);
  g_assert_cmpuint (stats.started, >=, first.started + 3);
  g_assert_cmpuint (stats.totals.made, >, first.totals.made);
  g_assert_cmpuint (stats.totals.freed, >, stats.totals.misses);
  /* The blocks were timed: the longest of each refill about as long as it,
   * none longer (1 ms for the two clocks; the first refill's left out of
   * both). */
  g_assert_cmpuint (stats.blocks, >, 0);
  g_assert_cmpfloat (stats.totals.busy_ns / 1e6, >=, 0.5 * stats.gpu_ms);
  g_assert_cmpfloat (stats.totals.busy_ns / 1e6, <=, stats.blocks * (stats.gpu_ms + 1.0));
  track_refiller_free (refiller);
  pair_clear (&pair);
}

/* A heavy overlapped producer of a new seed state's envs, and its refiller. */
static TrackRefiller *
overlap_new (guint64 base_seed, cudaStream_t s, TgSeedState **seeds, TgProducer **p)
{
  g_autoptr (GError) error = NULL;
  TrackRefiller *refiller;
  TrackConfig config;

  heavy_config (&config, 2, TRUE);
  *seeds = tg_seed_state_new (0, N_ENVS, base_seed, &error);
  g_assert_no_error (error);
  *p = track_new_with (*seeds, s, &config);
  refiller = track_refiller_new (*p, &config, *seeds, &error);
  g_assert_no_error (error);
  return refiller;
}

/* Runs @p once with the envs [@from, @to) ending, and waits for it. */
static void
end_envs (TgProducer *p, guint from, guint to, cudaStream_t s)
{
  guint8 mask[N_ENVS] = { 0 };

  memset (mask + from, 1, to - from);
  upload (p, "mask", mask, sizeof mask, s);
  run_ok (p, s, TG_POLICY_EAGER);
}

/* Polls in a tight loop as refills end: a refill's last block counts it
 * done in host memory before its kernel, and so its end event, completes.
 * A poll in between starts nothing yet, and fails on nothing (taking the
 * refill's time then gave cudaErrorNotReady); a later poll starts the next.
 * Two groups of envs end in turn, each step taking spares made (no step
 * makes a track: it ends long before the refill it made due), and the host
 * spins on the poll while the refill that the first group made due runs. */
static void
test_poll_as_refill_ends (TgTestGpu *gpu, gconstpointer data)
{
  const guint group = 8, rounds = 8;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (TrackRefiller) refiller = NULL;
  cudaStream_t s = gpu->stream;
  TrackRefillerStats stats;
  gboolean started = FALSE;

  TG_TEST_REQUIRE_GPU ();
  refiller = overlap_new (9, s, &seeds, &p);
  /* Both groups' first tracks (made at once), then every spare made. */
  end_envs (p, 0, 2 * group, s);
  g_assert_true (poll_ok (refiller));
  wait_ok (refiller);
  for (guint round = 0; round < rounds; round++)
    {
      const gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

      end_envs (p, 0, group, s);
      g_assert_true (poll_ok (refiller));
      /* Due again at once; started when the running refill has ended. */
      end_envs (p, group, 2 * group, s);
      started = FALSE;
      while (!started && g_get_monotonic_time () < until)
        started = poll_ok (refiller);
      g_assert_true (started);
      wait_ok (refiller);
    }
  track_refiller_get_stats (refiller, &stats);
  /* The refiller's own first refill, the first spares', two a round. */
  g_assert_cmpuint (stats.started, ==, 2 + 2 * rounds);
  g_assert_cmpuint (stats.totals.refills, ==, stats.started);
  /* Only the first tracks were made by a step. */
  g_assert_cmpuint (stats.totals.misses, ==, 2 * group);
}

/* Kept spans: one per refill started while kept, in order, the events its
 * refill ran between: an event recorded on another stream while the refill
 * runs lies before its end; keeping anew or stopping drops them. */
static void
test_spans (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (TrackRefiller) refiller = NULL;
  cudaStream_t s = gpu->stream;
  const TrackRefillSpan *spans;
  cudaEvent_t during;
  float ms = 0.f;
  guint n = 1;

  TG_TEST_REQUIRE_GPU ();
  refiller = overlap_new (21, s, &seeds, &p);
  g_assert_null (track_refiller_get_spans (refiller, &n));
  g_assert_cmpuint (n, ==, 0);
  g_assert_true (track_refiller_keep_spans (refiller, TRUE, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaEventCreate (&during));
  for (guint round = 0; round < 2; round++)
    {
      end_envs (p, 0, N_ENVS, s);
      g_assert_true (poll_ok (refiller));
      TG_TEST_CUDA (cudaEventRecord (during, s));
      wait_ok (refiller);
      spans = track_refiller_get_spans (refiller, &n);
      g_assert_cmpuint (n, ==, round + 1);
      TG_TEST_CUDA (cudaEventSynchronize (during));
      TG_TEST_CUDA (cudaEventElapsedTime (&ms, spans[round].begin, spans[round].end));
      g_assert_cmpfloat (ms, >, 0.f);
      /* The heavy refill runs for milliseconds after it was started. */
      TG_TEST_CUDA (cudaEventElapsedTime (&ms, during, spans[round].end));
      g_assert_cmpfloat (ms, >, 0.f);
    }
  TG_TEST_CUDA (cudaEventElapsedTime (&ms, spans[0].end, spans[1].begin));
  g_assert_cmpfloat (ms, >=, 0.f);
  g_assert_true (track_refiller_keep_spans (refiller, TRUE, &error));
  (void)track_refiller_get_spans (refiller, &n);
  g_assert_cmpuint (n, ==, 0);
  g_assert_true (track_refiller_keep_spans (refiller, FALSE, &error));
  g_assert_null (track_refiller_get_spans (refiller, &n));
  g_assert_cmpuint (n, ==, 0);
  /* Not kept: the refiller's own events again. */
  end_envs (p, 0, N_ENVS, s);
  g_assert_true (poll_ok (refiller));
  wait_ok (refiller);
  g_assert_null (track_refiller_get_spans (refiller, &n));
  TG_TEST_CUDA (cudaEventDestroy (during));
}

/* A refiller made after ends: its first refill makes every slot owed by
 * then, so a poll with no end since starts nothing; the next ends of a
 * batch start one. */
static void
test_made_after_ends (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (TrackRefiller) refiller = NULL;
  cudaStream_t s = gpu->stream;
  TrackRefillerStats stats;
  TrackConfig config;

  TG_TEST_REQUIRE_GPU ();
  heavy_config (&config, 2, TRUE);
  seeds = tg_seed_state_new (0, N_ENVS, 13, &error);
  g_assert_no_error (error);
  p = track_new_with (seeds, s, &config);
  /* Every env's first track, twice: the second takes no spare (none made)
   * and leaves an urgent call. */
  end_envs (p, 0, N_ENVS, s);
  end_envs (p, 0, N_ENVS, s);
  refiller = track_refiller_new (p, &config, seeds, &error);
  g_assert_no_error (error);
  g_assert_false (poll_ok (refiller));
  track_refiller_get_stats (refiller, &stats);
  g_assert_cmpuint (stats.started, ==, 1);
  g_assert_cmpuint (stats.totals.made, ==, 2 * N_ENVS);
  end_envs (p, 0, config.refill_batch, s);
  g_assert_true (poll_ok (refiller));
  wait_ok (refiller);
  track_refiller_get_stats (refiller, &stats);
  g_assert_cmpuint (stats.started, ==, 2);
  /* The first tracks and the second calls' were made at once, no later. */
  g_assert_cmpuint (stats.totals.misses, ==, 2 * N_ENVS);
}

/* What the refiller's user does on a thread of its own. */
static gpointer
poll_wait_free (gpointer refiller)
{
  g_assert_true (poll_ok (refiller));
  wait_ok (refiller);
  track_refiller_free (refiller);
  return NULL;
}

/* The refiller's calls never break a capture another thread runs in global
 * mode (PyTorch's default), in which their event query, synchronizations
 * and frees would be unsafe calls: a refill due is started, waited for and
 * the refiller freed on another thread while this one captures, and the
 * capture keeps its node and replays it. */
static void
test_beside_a_global_capture (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;
  TrackRefiller *refiller;
  cudaStream_t s = gpu->stream, capturing;
  guint32 *counter;
  cudaGraph_t graph;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  refiller = overlap_new (5, s, &seeds, &p);
  /* A refill done but not yet timed (its end event to query), and one due. */
  end_envs (p, 0, N_ENVS, s);
  (void)poll_ok (refiller);
  TG_TEST_CUDA (cudaStreamSynchronize (track_refiller_get_stream (refiller)));
  end_envs (p, 0, N_ENVS, s);
  TG_TEST_CUDA (cudaStreamCreateWithFlags (&capturing, cudaStreamNonBlocking));
  graph = tg_test_begin_caller_capture (capturing, counter);
  g_thread_join (g_thread_new ("refiller", poll_wait_free, refiller));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  tg_test_replay_caller_capture (tg_test_end_caller_capture (capturing), capturing,
                                 counter);
  TG_TEST_CUDA (cudaStreamDestroy (capturing));
  tg_test_device_free (counter);
}

/* A refiller of a producer that does not overlap, or of another config
 * (its buffers, or its generator: the refills would make other tracks than
 * a step makes at once), is refused naming what differs; nothing is left
 * behind. */
static void
test_refiller_refused (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) in_graph = NULL;
  g_autoptr (TgProducer) overlapped = NULL;
  TrackConfig config;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 3, &error);
  g_assert_no_error (error);
  in_graph = lookahead_new (seeds, gpu->stream, 2, 8);
  track_config_init (&config, N_ENVS);
  config.advance = TRUE;
  config.lookahead = 2;
  g_assert_null (track_refiller_new (in_graph, &config, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "overlap"));
  g_clear_error (&error);
  config.overlap = TRUE;
  g_assert_null (track_refiller_new (in_graph, &config, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "slot_states"));
  g_clear_error (&error);
  heavy_config (&config, 2, TRUE);
  overlapped = track_new_with (seeds, gpu->stream, &config);
  config.max_iters++;
  g_assert_null (track_refiller_new (overlapped, &config, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "max_iters"));
  g_clear_error (&error);
  config.max_iters--;
  config.min_iters--;
  g_assert_null (track_refiller_new (overlapped, &config, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "min_iters"));
}

void
examples_test_add_overlap (void)
{
  g_test_add ("/examples/overlap/heavy-equals-on-demand", TgTestGpu, GINT_TO_POINTER (0),
              tg_test_gpu_set_up, test_overlap, tg_test_gpu_tear_down);
  g_test_add ("/examples/overlap/heavy-equals-in-graph-refill", TgTestGpu,
              GINT_TO_POINTER (1), tg_test_gpu_set_up, test_overlap,
              tg_test_gpu_tear_down);
  TG_TEST_ADD_GPU ("/examples/overlap/poll-as-refill-ends", test_poll_as_refill_ends);
  TG_TEST_ADD_GPU ("/examples/overlap/made-after-ends", test_made_after_ends);
  TG_TEST_ADD_GPU ("/examples/overlap/spans", test_spans);
  TG_TEST_ADD_GPU ("/examples/overlap/beside-a-global-capture",
                   test_beside_a_global_capture);
  TG_TEST_ADD_GPU ("/examples/overlap/refiller-refused", test_refiller_refused);
}
