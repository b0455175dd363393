/* SPDX-License-Identifier: Apache-2.0 */
/* snippets-test-seeds.c: the C examples of doc/seeds.md (doc/snippets/), run,
 * with what the page says around them asserted. */
#include "config.h"
#include "snippets-test.h"

#include <glib/gstdio.h>
#include <string.h>

static const guint64 SIM_SEED = G_GUINT64_CONSTANT (20240607);

/* \snippet seeds.c new (seeds.md:69-75): "Env i is seeded tg_env_seed
 * (20240607, i); every epoch starts at 0"; the device arrays "never move
 * while it lives". */
static void
test_seeds_new (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 seeds[TGS_N_ENVS];
  guint32 epochs[TGS_N_ENVS];
  const guint64 *array;

  TG_TEST_REQUIRE_GPU ();
  g_assert_cmpint (tg_seed_state_get_device (f->seeds), ==, 0);
  g_assert_cmpuint (tg_seed_state_get_n_envs (f->seeds), ==, TGS_N_ENVS);
  g_assert_cmpuint (tg_seed_state_get_first_env (f->seeds), ==, 0);
  array = tg_seed_state_get_seeds (f->seeds);
  g_assert_true (tg_seed_state_read (f->seeds, f->gpu.stream, seeds, epochs, &error));
  g_assert_no_error (error);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      g_assert_cmpuint (seeds[e], ==, tg_env_seed (SIM_SEED, e));
      g_assert_cmpuint (epochs[e], ==, 0);
    }
  g_assert_true (
      tg_seed_state_advance (f->seeds, f->gpu.stream, NULL, TGS_N_ENVS, &error));
  g_assert_no_error (error);
  g_assert_true (array == tg_seed_state_get_seeds (f->seeds));
}

/* \snippet seeds.c key-of (seeds.md:76-78): "To reproduce a generation on
 * the host, read the state and apply the definition": the key the device
 * computed, for every env. */
static void
test_seeds_key_of (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 keys[TGS_N_ENVS];

  TG_TEST_REQUIRE_GPU ();
  tgs_set_done_every_third (f);
  for (guint i = 0; i < 2; i++)
    g_assert_true (
        seeds_step (f->seeds, f->gpu.stream, f->sim.done, f->sim.keys, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  tg_test_download (keys, f->sim.keys, sizeof keys);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      guint64 key = 0;

      g_assert_true (seeds_key_of (f->seeds, f->gpu.stream, e, &key, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (key, ==, keys[e]);
      g_assert_cmpuint (
          key, ==, tg_effective_seed (tg_env_seed (SIM_SEED, e), e % 3 == 0 ? 2 : 0));
    }
  /* An env out of range: FALSE (the snippet sets no error for it). */
  g_assert_false (
      seeds_key_of (f->seeds, f->gpu.stream, TGS_N_ENVS, &(guint64){ 0 }, &error));
}

/* \snippet seeds.c advance-fill (seeds.md:114-124): "one kernel ... with the
 * same results as the two calls"; "One kernel, capturable"
 * (seeds.c:58-59): its capture is one kernel node. */
static void
test_seeds_advance_fill (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 keys[TGS_N_ENVS], keys_apart[TGS_N_ENVS];
  guint32 epochs[TGS_N_ENVS], epochs_apart[TGS_N_ENVS];
  cudaGraph_t graph = NULL;
  TgSeedState *apart;
  guint64 *out;

  TG_TEST_REQUIRE_GPU ();
  tgs_set_done_every_third (f);
  apart = seeds_for_sim (TGS_N_ENVS, &error);
  g_assert_no_error (error);
  out = tg_test_device_alloc (TGS_N_ENVS * sizeof (guint64));
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (
          seeds_step (f->seeds, f->gpu.stream, f->sim.done, f->sim.keys, &error));
      g_assert_true (tg_seed_state_advance (apart, f->gpu.stream, f->sim.done,
                                            TGS_N_ENVS, &error));
      g_assert_true (
          tg_seed_state_fill_effective (apart, f->gpu.stream, out, TGS_N_ENVS, &error));
      g_assert_no_error (error);
    }
  tgs_read_epochs (f, epochs);
  g_assert_true (tg_seed_state_read (apart, f->gpu.stream, NULL, epochs_apart, &error));
  g_assert_no_error (error);
  tg_test_download (keys, f->sim.keys, sizeof keys);
  tg_test_download (keys_apart, out, sizeof keys_apart);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      g_assert_cmpuint (epochs[e], ==, e % 3 == 0 ? 3 : 0);
      g_assert_cmpuint (epochs[e], ==, epochs_apart[e]);
      g_assert_cmpuint (keys[e], ==, keys_apart[e]);
    }

  tgs_begin_capture (f->gpu.stream);
  g_assert_true (
      seeds_step (f->seeds, f->gpu.stream, f->sim.done, f->sim.keys, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->gpu.stream, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  g_assert_cmpuint (tg_test_graph_count_nodes (graph, cudaGraphNodeTypeKernel), ==, 1);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_test_device_free (out);
  tg_seed_state_unref (apart);
}

/* \snippet seeds.c reseed-device (seeds.md:131-137): "Recorded once; at
 * every replay the kernel reads n ids and seeds from the device arrays, as
 * earlier work of the same replay wrote them.  An id not below n_envs
 * (G_MAXUINT32, say) is skipped"; a reseeded env restarts at epoch 0
 * (seeds.md:128-131). */
static void
test_seeds_reseed_device (Fixture *f, gconstpointer data)
{
  static const guint32 ids[2][3] = { { 2, G_MAXUINT32, 5 }, { 7, 9, G_MAXUINT32 } };
  static const guint64 new_seeds[2][3] = { { 111, 222, 333 }, { 444, 555, 666 } };
  g_autoptr (GError) error = NULL;
  guint64 want[TGS_N_ENVS], seeds[TGS_N_ENVS];
  guint32 epochs[TGS_N_ENVS], *host_ids, *device_ids;
  guint64 *host_seeds, *device_seeds;
  cudaGraphExec_t exec;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaMallocHost ((void **)&host_ids, sizeof ids[0]));
  TG_TEST_CUDA (cudaMallocHost ((void **)&host_seeds, sizeof new_seeds[0]));
  device_ids = tg_test_device_alloc (sizeof ids[0]);
  device_seeds = tg_test_device_alloc (sizeof new_seeds[0]);
  g_assert_true (
      tg_seed_state_advance (f->seeds, f->gpu.stream, NULL, TGS_N_ENVS, &error));
  g_assert_no_error (error);

  tgs_begin_capture (f->gpu.stream);
  TG_TEST_CUDA (cudaMemcpyAsync (device_ids, host_ids, sizeof ids[0],
                                 cudaMemcpyHostToDevice, f->gpu.stream));
  TG_TEST_CUDA (cudaMemcpyAsync (device_seeds, host_seeds, sizeof new_seeds[0],
                                 cudaMemcpyHostToDevice, f->gpu.stream));
  g_assert_true (seeds_reseed_in_graph (f->seeds, f->gpu.stream, device_ids,
                                        device_seeds, 3, &error));
  g_assert_no_error (error);
  exec = tgs_end_capture (f->gpu.stream, NULL);

  for (guint e = 0; e < TGS_N_ENVS; e++)
    want[e] = tg_env_seed (SIM_SEED, e);
  for (guint r = 0; r < 2; r++)
    {
      memcpy (host_ids, ids[r], sizeof ids[r]);
      memcpy (host_seeds, new_seeds[r], sizeof new_seeds[r]);
      tgs_launch (exec, f->gpu.stream, 1);
      for (guint i = 0; i < 3; i++)
        if (ids[r][i] < TGS_N_ENVS)
          want[ids[r][i]] = new_seeds[r][i];
      g_assert_true (
          tg_seed_state_read (f->seeds, f->gpu.stream, seeds, epochs, &error));
      g_assert_no_error (error);
      for (guint e = 0; e < TGS_N_ENVS; e++)
        {
          g_assert_cmpuint (seeds[e], ==, want[e]);
          g_assert_cmpuint (epochs[e], ==,
                            want[e] == tg_env_seed (SIM_SEED, e) ? 1 : 0);
        }
    }
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_test_device_free (device_ids);
  tg_test_device_free (device_seeds);
  TG_TEST_CUDA (cudaFreeHost (host_ids));
  TG_TEST_CUDA (cudaFreeHost (host_seeds));
}

/* The devices the shards case uses: two at most. */
static int
shard_devices (void)
{
  int count = 0;

  if (cudaGetDeviceCount (&count) != cudaSuccess)
    count = 0;
  return MIN (count, 2);
}

/* A state on device d uses d's default stream, which lives for good: made
 * before the fixture counts the live objects. */
static void
shards_set_up (Fixture *f, gconstpointer data)
{
  if (tg_test_have_gpu ())
    for (int d = 1; d < shard_devices (); d++)
      g_assert_nonnull (tg_default_stream (d, NULL));
  tgs_fixture_set_up (f, data);
}

/* \snippet seeds.c shards (seeds.md:141-149): "env e gets the same seed, so
 * the same tracks, however the population is split": the shards on the
 * first one or two devices against one state of all their envs. */
static void
test_seeds_shards (Fixture *f, gconstpointer data)
{
  const guint per = 16;
  const int n_devices = shard_devices ();
  g_autoptr (GError) error = NULL;
  TgSeedState *shards[2] = { NULL, NULL }, *whole[1] = { NULL };
  guint64 all[2 * 16], seeds[16];

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (seeds_for_devices (n_devices, per, 99, shards, &error));
  g_assert_true (seeds_for_devices (1, n_devices * per, 99, whole, &error));
  g_assert_no_error (error);
  g_assert_true (tg_seed_state_read (whole[0], f->gpu.stream, all, NULL, &error));
  for (int d = 0; d < n_devices; d++)
    {
      g_assert_cmpint (tg_seed_state_get_device (shards[d]), ==, d);
      g_assert_cmpuint (tg_seed_state_get_first_env (shards[d]), ==, d * per);
      g_assert_cmpuint (tg_seed_state_get_n_envs (shards[d]), ==, per);
      g_assert_true (
          tg_seed_state_read (shards[d], TG_STREAM_AUTO, seeds, NULL, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < per; i++)
        {
          g_assert_cmpuint (seeds[i], ==, tg_env_seed (99, d * per + i));
          g_assert_cmpuint (seeds[i], ==, all[d * per + i]);
        }
      tg_seed_state_unref (shards[d]);
    }
  tg_seed_state_unref (whole[0]);
}

static guint32
le32_at (const guint8 *bytes, gsize offset)
{
  guint32 v;

  memcpy (&v, bytes + offset, sizeof v);
  return GUINT32_FROM_LE (v);
}

/* \snippet seeds.c checkpoint (seeds.md:165-183): the file holds the
 * format's 24 + 12 n bytes; resuming puts the state back; "Other envs, or
 * not a snapshot: an error, the state unchanged" (seeds.c:105). */
static void
test_seeds_checkpoint (Fixture *f, gconstpointer data)
{
  const gsize size = 24 + 12 * TGS_N_ENVS;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *path = NULL, *junk = NULL, *missing = NULL;
  g_autofree guint8 *bytes = NULL;
  g_autofree char *garbage = g_malloc (size);
  guint32 saved[TGS_N_ENVS], epochs[TGS_N_ENVS], other_epochs[TGS_N_ENVS + 1];
  TgSeedState *other;
  gsize length = 0;

  TG_TEST_REQUIRE_GPU ();
  dir = g_dir_make_tmp ("snippets-test-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "seeds", NULL);
  junk = g_build_filename (dir, "junk", NULL);
  missing = g_build_filename (dir, "missing", NULL);
  tgs_set_done_every_third (f);
  g_assert_true (
      tg_seed_state_advance (f->seeds, f->gpu.stream, f->sim.done, TGS_N_ENVS, &error));
  g_assert_true (seeds_checkpoint (f->seeds, f->gpu.stream, path, &error));
  g_assert_no_error (error);
  tgs_read_epochs (f, saved);

  g_assert_true (g_file_get_contents (path, (char **)&bytes, &length, &error));
  g_assert_cmpuint (length, ==, size);
  g_assert_cmpmem (bytes, 8, "TGSEEDS\0", 8);
  g_assert_cmpuint (le32_at (bytes, 8), ==, 2);
  g_assert_cmpuint (le32_at (bytes, 12), ==, TGS_N_ENVS);
  g_assert_cmpuint (le32_at (bytes, 16), ==, 0);
  g_assert_cmpuint (le32_at (bytes, 20), ==, 0);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      guint64 seed;

      memcpy (&seed, bytes + 24 + 8 * e, sizeof seed);
      g_assert_cmpuint (GUINT64_FROM_LE (seed), ==, tg_env_seed (SIM_SEED, e));
      g_assert_cmpuint (le32_at (bytes, 24 + 8 * TGS_N_ENVS + 4 * e), ==, saved[e]);
    }

  g_assert_true (
      tg_seed_state_advance (f->seeds, f->gpu.stream, NULL, TGS_N_ENVS, &error));
  g_assert_true (seeds_resume (f->seeds, f->gpu.stream, path, &error));
  g_assert_no_error (error);
  tgs_read_epochs (f, epochs);
  g_assert_cmpmem (epochs, sizeof epochs, saved, sizeof saved);

  other = seeds_for_sim (TGS_N_ENVS + 1, &error);
  g_assert_no_error (error);
  g_assert_false (seeds_resume (other, f->gpu.stream, path, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_true (tg_seed_state_read (other, f->gpu.stream, NULL, other_epochs, &error));
  for (guint e = 0; e <= TGS_N_ENVS; e++)
    g_assert_cmpuint (other_epochs[e], ==, 0);
  tg_seed_state_unref (other);

  memset (garbage, 'x', size);
  g_assert_true (g_file_set_contents (junk, garbage, (gssize)size, &error));
  g_assert_false (seeds_resume (f->seeds, f->gpu.stream, junk, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_VERSION);
  g_clear_error (&error);
  g_assert_false (seeds_resume (f->seeds, f->gpu.stream, missing, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  tgs_read_epochs (f, epochs);
  g_assert_cmpmem (epochs, sizeof epochs, saved, sizeof saved);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_remove (junk), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static const TgsCase cases[] = {
  TGS_CASE ("/snippets/seeds/new", test_seeds_new),
  TGS_CASE ("/snippets/seeds/key-of", test_seeds_key_of),
  TGS_CASE ("/snippets/seeds/advance-fill", test_seeds_advance_fill),
  TGS_CASE ("/snippets/seeds/reseed-device", test_seeds_reseed_device),
  { "/snippets/seeds/shards", test_seeds_shards, shards_set_up, NULL },
  TGS_CASE ("/snippets/seeds/checkpoint", test_seeds_checkpoint),

};

void
tgs_add_seeds_cases (void)
{
  tgs_add_cases (cases, G_N_ELEMENTS (cases));
}
