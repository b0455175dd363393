/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test.c: seeds and epochs.  The effective seed's definition, the
 * snapshot format and every argument check run on the host, here; the state
 * itself runs on a GPU (seeds-test-gpu.c, its snapshots in
 * seeds-test-snapshot.c, the calls on a caller's stream and in its graph in
 * seeds-test-stream.c). */
#include "config.h"
#include "seeds-test.h"
#include "../lib/seeds/seeds-private.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The effective seed (host)                                                 */

/* Computed independently, with Python integers, from the documented
 * definitions (tg_mix64, tg_effective_seed, tg_env_seed). */
static void
test_known_answers (void)
{
  static const struct
  {
    guint64 in, out;
  } mix[] = {
    { 0, 0 },
    { 1, G_GUINT64_CONSTANT (0x5692161D100B05E5) },
    { G_MAXUINT64, G_GUINT64_CONSTANT (0xB4D055FCF2CBBD7B) },
    { G_GUINT64_CONSTANT (0x0123456789ABCDEF),
      G_GUINT64_CONSTANT (0xB2C058E4EBB5112C) },
  };
  static const struct
  {
    guint64 seed;
    guint32 epoch;
    guint64 out;
  } eff[] = {
    { 0, 0, G_GUINT64_CONSTANT (0xE220A8397B1DCDAF) },
    { 0, 1, G_GUINT64_CONSTANT (0x6E789E6AA1B965F4) },
    { 1, 0, G_GUINT64_CONSTANT (0xE4D971771B652C20) },
    { G_MAXUINT64, G_MAXUINT32, G_GUINT64_CONSTANT (0x9011E6053017523E) },
    { G_GUINT64_CONSTANT (0x0123456789ABCDEF), 42,
      G_GUINT64_CONSTANT (0x95F2F51FE5430CE8) },
    { 42, 0, G_GUINT64_CONSTANT (0xBDD732262FEB6E95) },
    { G_GUINT64_CONSTANT (0xDEADBEEFCAFEBABE), 0x80000000u,
      G_GUINT64_CONSTANT (0x8985E64ECFCFDE94) },
    { G_GUINT64_CONSTANT (0x8000000000000000), 7,
      G_GUINT64_CONSTANT (0x6250485B3CDEFBBD) },
    /* doc/seeds.md's: tg_effective_seed (tg_env_seed (42, 0), 0), the env
     * seed as the env table below has it, and tg_effective_seed (42, 7). */
    { G_GUINT64_CONSTANT (0xBDD732262FEB6E95), 0,
      G_GUINT64_CONSTANT (0xE37241C09304F97F) },
    { 42, 7, G_GUINT64_CONSTANT (0xB4346C5A4AC089C3) },
  };
  static const struct
  {
    guint64 base;
    guint32 env;
    guint64 out;
  } env[] = {
    { 0, 0, G_GUINT64_CONSTANT (0xE220A8397B1DCDAF) },
    { 42, 0, G_GUINT64_CONSTANT (0xBDD732262FEB6E95) },
    { 42, 1, G_GUINT64_CONSTANT (0x28EFE333B266F103) },
    { 42, 63, G_GUINT64_CONSTANT (0x0B7DCBD429A0BAAA) },
    { G_MAXUINT64, G_MAXUINT32, G_GUINT64_CONSTANT (0xD3C3FC2C2DE810EC) },
  };

  for (guint i = 0; i < G_N_ELEMENTS (mix); i++)
    g_assert_cmphex (tg_mix64 (mix[i].in), ==, mix[i].out);
  for (guint i = 0; i < G_N_ELEMENTS (eff); i++)
    g_assert_cmphex (tg_effective_seed (eff[i].seed, eff[i].epoch), ==, eff[i].out);
  for (guint i = 0; i < G_N_ELEMENTS (env); i++)
    g_assert_cmphex (tg_env_seed (env[i].base, env[i].env), ==, env[i].out);
}

/* Flipping any one of the 96 input bits flips each output bit with
 * probability 1/2 (within [0.45, 0.55] over 1e5 inputs). */
static void
test_avalanche (void)
{
  const guint n = 100000;
  g_autoptr (GRand) rand = g_rand_new_with_seed (0x5EED5);
  g_autofree guint32 *flips = g_new0 (guint32, 96 * 64);

  for (guint k = 0; k < n; k++)
    {
      guint64 seed = (guint64)g_rand_int (rand) << 32 | g_rand_int (rand);
      guint32 epoch = g_rand_int (rand);
      guint64 base = tg_effective_seed (seed, epoch);

      for (guint b = 0; b < 96; b++)
        {
          guint64 diff
              = base
                ^ (b < 64
                       ? tg_effective_seed (seed ^ (G_GUINT64_CONSTANT (1) << b), epoch)
                       : tg_effective_seed (seed, epoch ^ (1u << (b - 64))));
          guint32 *row = flips + b * 64;
          for (guint o = 0; o < 64; o++)
            row[o] += (diff >> o) & 1;
        }
    }
  for (guint b = 0; b < 96; b++)
    for (guint o = 0; o < 64; o++)
      {
        double p = (double)flips[b * 64 + o] / n;
        if (p < 0.45 || p > 0.55)
          g_error ("input bit %u flips output bit %u with probability %.4f", b, o, p);
      }
}

static int
compare_guint64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

  return (x > y) - (x < y);
}

/* No two of seed 0..9999 x epoch 0..999 share an effective seed. */
static void
test_no_collisions (void)
{
  const guint n_seeds = 10000, n_epochs = 1000;
  g_autofree guint64 *all = g_new (guint64, (gsize)n_seeds * n_epochs);
  gsize n = 0;

  for (guint s = 0; s < n_seeds; s++)
    for (guint e = 0; e < n_epochs; e++)
      all[n++] = tg_effective_seed (s, e);
  qsort (all, n, sizeof *all, compare_guint64);
  for (gsize i = 1; i < n; i++)
    if (all[i] == all[i - 1])
      g_error ("effective seed 0x%016" G_GINT64_MODIFIER "x occurs twice", all[i]);
}

/* Derived per-env seeds are distinct, and none is the base (no broadcast). */
static void
test_env_seeds_distinct (void)
{
  const guint n = 1u << 20;
  const guint64 bases[] = { 0, 42, G_MAXUINT64 };
  g_autofree guint64 *seeds = g_new (guint64, n);

  for (guint b = 0; b < G_N_ELEMENTS (bases); b++)
    {
      for (guint i = 0; i < n; i++)
        seeds[i] = tg_env_seed (bases[b], i);
      qsort (seeds, n, sizeof *seeds, compare_guint64);
      for (guint i = 1; i < n; i++)
        g_assert_cmphex (seeds[i], !=, seeds[i - 1]);
    }
}

/* ------------------------------------------------------------------------ */
/* Argument checks and the snapshot format (host)                            */

GBytes *
tgs_snapshot_forge (guint n_envs, guint32 version, const guint64 *seeds,
                    const guint32 *epochs)
{
  gsize header = version == 1 ? TG__SEEDS_V1_HEADER_SIZE : TG__SEEDS_HEADER_SIZE;
  gsize size = header + (gsize)n_envs * 12;
  guint8 *buf = g_malloc0 (size), current[TG__SEEDS_HEADER_SIZE];
  guint32 v = GUINT32_TO_LE (version);

  /* Version 1's header is the current one's first 16 bytes. */
  tg__seeds_snapshot_write_header (current, n_envs, 0);
  memcpy (buf, current, header);
  memcpy (buf + 8, &v, 4);
  for (guint i = 0; seeds != NULL && i < n_envs; i++)
    {
      guint64 s = GUINT64_TO_LE (seeds[i]);
      guint32 e = GUINT32_TO_LE (epochs[i]);
      memcpy (buf + header + 8 * i, &s, 8);
      memcpy (buf + header + 8 * (gsize)n_envs + 4 * i, &e, 4);
    }
  return g_bytes_new_take (buf, size);
}

static void
assert_check_passes (GBytes *snapshot, guint n_envs, gsize header_size)
{
  g_autoptr (GError) error = NULL;
  gsize size = 0;

  g_assert_true (tg__seeds_snapshot_check (g_bytes_get_data (snapshot, NULL),
                                           g_bytes_get_size (snapshot), n_envs, 0,
                                           &size, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (size, ==, header_size);
}

/* Version 2: the 16 bytes of version 1, then the first env and 4 zero bytes. */
static void
test_snapshot_header (void)
{
  static const guint8 expected[24]
      = { 'T',  'G',  'S',  'E',  'E',  'D',  'S',  0,    2,    0,    0,    0,
          0x03, 0x02, 0x01, 0x00, 0x0C, 0x0B, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00 };
  guint8 header[24];
  g_autoptr (GBytes) v2 = tgs_snapshot_forge (3, 2, NULL, NULL);
  g_autoptr (GBytes) v1 = tgs_snapshot_forge (3, 1, NULL, NULL);

  g_assert_cmpuint (TG__SEEDS_HEADER_SIZE, ==, sizeof header);
  tg__seeds_snapshot_write_header (header, 0x010203, 0x0A0B0C);
  g_assert_cmpmem (header, sizeof header, expected, sizeof expected);
  g_assert_cmpuint (tg__seeds_snapshot_size (3), ==, 24 + 3 * 12);
  assert_check_passes (v2, 3, 24);
  /* Snapshots of 0.1 still restore. */
  g_assert_cmpuint (g_bytes_get_size (v1), ==, 16 + 3 * 12);
  assert_check_passes (v1, 3, 16);
}

static void
assert_check_fails (gconstpointer data, gsize size, guint n_envs, guint first_env,
                    gint code, const char *needle)
{
  g_autoptr (GError) error = NULL;

  g_assert_false (
      tg__seeds_snapshot_check (data, size, n_envs, first_env, NULL, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, code);
  g_assert_nonnull (strstr (error->message, needle));
}

static void
test_snapshot_refused (void)
{
  g_autoptr (GBytes) good = tgs_snapshot_forge (3, 2, NULL, NULL);
  g_autoptr (GBytes) v3 = tgs_snapshot_forge (3, 3, NULL, NULL);
  gsize size = g_bytes_get_size (good);
  g_autofree guint8 *bad = g_malloc0 (size + 1);

  memcpy (bad, g_bytes_get_data (good, NULL), size);
  assert_check_fails (NULL, 0, 3, 0, TG_ARGUMENT_ERROR_VERSION,
                      "not a seed-state snapshot");
  assert_check_fails (bad, 7, 3, 0, TG_ARGUMENT_ERROR_VERSION,
                      "not a seed-state snapshot");
  assert_check_fails (bad, 12, 3, 0, TG_ARGUMENT_ERROR_SIZE_MISMATCH, "truncated");
  assert_check_fails (bad, 20, 3, 0, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                      "shorter than its 24-byte header");
  assert_check_fails (g_bytes_get_data (v3, NULL), size, 3, 0,
                      TG_ARGUMENT_ERROR_VERSION, "version 3");
  assert_check_fails (bad, size, 4, 0, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                      "holds envs 0 to 2 but the state has envs 0 to 3");
  assert_check_fails (bad, size, 3, 1, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                      "holds envs 0 to 2 but the state has envs 1 to 3");
  assert_check_fails (bad, size - 1, 3, 0, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                      "truncated");
  assert_check_fails (bad, size + 1, 3, 0, TG_ARGUMENT_ERROR_SIZE_MISMATCH, "padded");
  bad[7] = '!';
  assert_check_fails (bad, size, 3, 0, TG_ARGUMENT_ERROR_VERSION,
                      "not a seed-state snapshot");
}

static void
test_ids_checked (void)
{
  const guint ok[] = { 4, 0, 9, 3 }, range[] = { 1, 2, 10 }, dup[] = { 5, 1, 7, 1 };
  g_autoptr (GError) error = NULL;

  g_assert_true (tg__seeds_check_ids (ok, G_N_ELEMENTS (ok), 10, &error));
  g_assert_true (tg__seeds_check_ids (NULL, 0, 10, &error));
  g_assert_no_error (error);
  g_assert_false (tg__seeds_check_ids (range, G_N_ELEMENTS (range), 10, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_assert_nonnull (strstr (error->message, "env id 10 (at index 2)"));
  g_clear_error (&error);
  g_assert_false (tg__seeds_check_ids (dup, G_N_ELEMENTS (dup), 10, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DUPLICATE);
  g_assert_nonnull (strstr (error->message, "env id 1 appears more than once"));
}

static void
test_lengths_checked (void)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg__seeds_check_len ("the mask", 8, 8, FALSE, &error));
  g_assert_true (tg__seeds_check_len ("the output", 9, 8, TRUE, &error));
  g_assert_no_error (error);
  g_assert_false (tg__seeds_check_len ("the mask", 9, 8, FALSE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_assert_nonnull (
      strstr (error->message, "the mask has length 9 but the state has 8"));
  g_clear_error (&error);
  g_assert_false (tg__seeds_check_len ("the output", 7, 8, TRUE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_assert_nonnull (strstr (error->message, "at least 8"));
}

/* Refused before any CUDA call: the same error with or without a GPU. */
static void
test_zero_envs (void)
{
  const guint64 seeds[1] = { 1 };
  g_autoptr (GError) error = NULL;

  g_assert_null (tg_seed_state_new (0, 0, 42, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY);
  g_clear_error (&error);
  g_assert_null (tg_seed_state_new_from_array (0, 0, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY);
}

/* More envs than a state holds, as a negative count passed as unsigned
 * gives: refused naming n_envs and the limit, before any CUDA call (a
 * 48 GiB state was made until 0.5). */
static void
test_too_many_envs (void)
{
  const guint64 seeds[1] = { 1 };
  g_autoptr (GError) error = NULL;

  g_assert_null (tg_seed_state_new (0, G_MAXUINT, 42, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_assert_nonnull (strstr (error->message, "n_envs is 4294967295"));
  g_assert_nonnull (strstr (error->message, "2147483647"));
  g_clear_error (&error);
  g_assert_null (
      tg_seed_state_new_shard (0, 0, TG_SEED_STATE_MAX_ENVS + 1, TGS_BASE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_assert_nonnull (strstr (error->message, "n_envs is 2147483648"));
  g_clear_error (&error);
  /* @seeds would be read past its end: the count is refused first. */
  g_assert_null (tg_seed_state_new_from_array (0, (guint)-1, seeds, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
}

/* Refused before any CUDA call: runs without a GPU too. */
static void
test_shard_past_2_32 (void)
{
  g_autoptr (GError) error = NULL;

  g_assert_null (tg_seed_state_new_shard (0, G_MAXUINT32 - 9, 11, TGS_BASE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_clear_error (&error);
  g_assert_null (tg_seed_state_new_shard (0, G_MAXUINT32, 2, TGS_BASE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
}

static void
test_no_device (void)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_NO_GPU ();
  g_assert_null (tg_seed_state_new (0, 16, 42, &error));
  tg_test_assert_cuda_error (error);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/seeds/effective/known-answers", test_known_answers);
  g_test_add_func ("/seeds/effective/avalanche", test_avalanche);
  g_test_add_func ("/seeds/effective/no-collisions", test_no_collisions);
  g_test_add_func ("/seeds/env-seed/distinct", test_env_seeds_distinct);
  g_test_add_func ("/seeds/snapshot/header", test_snapshot_header);
  g_test_add_func ("/seeds/snapshot/refused", test_snapshot_refused);
  g_test_add_func ("/seeds/args/ids", test_ids_checked);
  g_test_add_func ("/seeds/args/lengths", test_lengths_checked);
  g_test_add_func ("/seeds/args/zero-envs", test_zero_envs);
  g_test_add_func ("/seeds/args/too-many-envs", test_too_many_envs);
  g_test_add_func ("/seeds/shard/past-last-global-env-refused", test_shard_past_2_32);
  g_test_add_func ("/seeds/no-device-is-a-cuda-error", test_no_device);
  tgs_add_gpu_tests ();
  tgs_add_snapshot_tests ();
  tgs_add_stream_tests ();
  tgs_add_fused_tests ();
  return g_test_run ();
}
