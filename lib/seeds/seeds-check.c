/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-check.c: the seed calls' pure checks (no CUDA): snapshots, env ids
 * and lengths, which the host tests also call directly. */
#include "config.h"
#include "seeds-private.h"
#include "../exec/error-private.h"

#include <stdlib.h>
#include <string.h>

gsize
tg__seeds_snapshot_size (guint n_envs)
{
  return TG__SEEDS_HEADER_SIZE + (gsize)n_envs * (sizeof (guint64) + sizeof (guint32));
}

void
tg__seeds_snapshot_write_header (guint8 *dst, guint n_envs, guint first_env)
{
  guint32 fields[4] = { GUINT32_TO_LE (TG__SEEDS_VERSION), GUINT32_TO_LE (n_envs),
                        GUINT32_TO_LE (first_env), 0 };

  memcpy (dst, TG__SEEDS_MAGIC, 8);
  memcpy (dst + 8, fields, sizeof fields);
}

gboolean
tg__seeds_snapshot_check (gconstpointer data, gsize size, guint n_envs, guint first_env,
                          gsize *header_size, GError **error)
{
  const guint8 *p = data;
  guint32 version, n, first = 0;
  gsize header, expected;

  g_return_val_if_fail (data != NULL || size == 0, FALSE);

  if (size < 8 || memcmp (p, TG__SEEDS_MAGIC, 8) != 0)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_VERSION,
                     "not a seed-state snapshot: the data does not start with "
                     "\"TGSEEDS\\0\"; pass bytes made by tg_seed_state_snapshot()");
      return FALSE;
    }
  if (size < TG__SEEDS_V1_HEADER_SIZE)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "seed-state snapshot truncated: %" G_GSIZE_FORMAT
                     " bytes, shorter than its header",
                     size);
      return FALSE;
    }
  memcpy (&version, p + 8, 4);
  memcpy (&n, p + 12, 4);
  version = GUINT32_FROM_LE (version);
  n = GUINT32_FROM_LE (n);
  if (version != 1 && version != TG__SEEDS_VERSION)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_VERSION,
                     "seed-state snapshot of version %u: this libtrackgen reads "
                     "versions 1 and %u",
                     version, TG__SEEDS_VERSION);
      return FALSE;
    }
  header = version == 1 ? TG__SEEDS_V1_HEADER_SIZE : TG__SEEDS_HEADER_SIZE;
  if (size < header)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "seed-state snapshot truncated: %" G_GSIZE_FORMAT
                     " bytes, shorter than its %" G_GSIZE_FORMAT "-byte header",
                     size, header);
      return FALSE;
    }
  if (version != 1)
    {
      memcpy (&first, p + 16, 4);
      first = GUINT32_FROM_LE (first);
    }
  if (n != n_envs || first != first_env)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "the snapshot holds envs %u to %u but the state has envs %u to "
                     "%u; restore it into a state of the same envs",
                     first, first + n - 1, first_env, first_env + n_envs - 1);
      return FALSE;
    }
  expected = header + (gsize)n * (sizeof (guint64) + sizeof (guint32));
  if (size != expected)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "seed-state snapshot of %u envs has %" G_GSIZE_FORMAT
                     " bytes, expected %" G_GSIZE_FORMAT " (truncated or padded)",
                     n, size, expected);
      return FALSE;
    }
  if (header_size != NULL)
    *header_size = header;
  return TRUE;
}

static int
compare_guint (const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;

  return (x > y) - (x < y);
}

gboolean
tg__seeds_check_ids (const guint *ids, guint n, guint n_envs, GError **error)
{
  g_autofree guint *sorted = NULL;

  g_return_val_if_fail (ids != NULL || n == 0, FALSE);

  for (guint k = 0; k < n; k++)
    if (ids[k] >= n_envs)
      {
        tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                       "env id %u (at index %u) is out of range: the state has %u "
                       "envs, ids 0 to %u",
                       ids[k], k, n_envs, n_envs - 1);
        return FALSE;
      }
  /* Sorting a copy costs O(n log n) in the ids given, not in n_envs. */
  if (n < 2)
    return TRUE;
  sorted = g_memdup2 (ids, (gsize)n * sizeof *ids);
  qsort (sorted, n, sizeof *sorted, compare_guint);
  for (guint k = 1; k < n; k++)
    if (sorted[k] == sorted[k - 1])
      {
        tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DUPLICATE,
                       "env id %u appears more than once: each id may appear once "
                       "per call",
                       sorted[k]);
        return FALSE;
      }
  return TRUE;
}

gboolean
tg__seeds_check_len (const char *what, gsize len, guint n_envs, gboolean at_least,
                     GError **error)
{
  if (at_least ? len >= n_envs : len == n_envs)
    return TRUE;
  tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                 "%s has length %" G_GSIZE_FORMAT " but the state has %u envs: pass "
                 "a length of %s%u",
                 what, len, n_envs, at_least ? "at least " : "", n_envs);
  return FALSE;
}
