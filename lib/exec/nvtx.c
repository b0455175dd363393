/* SPDX-License-Identifier: Apache-2.0 */
/* nvtx.c: NVTX ranges named "producer/stage", with the header-only NVTX 3 of
 * the CUDA toolkit: with no tool attached (Nsight Systems injects one) each
 * call is a no-op of NVTX's own. */
#include "config.h"
#include "nvtx-private.h"

#include <nvtx3/nvToolsExt.h>

gint tg__nvtx_state = -1;

void
tg_set_nvtx (gboolean on)
{
  g_atomic_int_set (&tg__nvtx_state, on ? 1 : 0);
}

gboolean
tg_get_nvtx (void)
{
  gint state = g_atomic_int_get (&tg__nvtx_state);

  if (state < 0)
    {
      /* Once: the first call that asks, unless tg_set_nvtx() came first. */
      const char *env = g_getenv ("TG_NVTX");

      state = env != NULL && g_str_equal (env, "1");
      (void)g_atomic_int_compare_and_exchange (&tg__nvtx_state, -1, state);
      state = g_atomic_int_get (&tg__nvtx_state);
    }
  return state == 1;
}

gboolean
tg__nvtx_push_slow (const char *producer, const char *stage)
{
  char name[256];

  if (!tg_get_nvtx ())
    return FALSE;
  if (stage != NULL)
    g_snprintf (name, sizeof name, "%s/%s", producer, stage);
  else
    g_strlcpy (name, producer, sizeof name);
  nvtxRangePushA (name);
  return TRUE;
}

void
tg__nvtx_pop_slow (void)
{
  nvtxRangePop ();
}
