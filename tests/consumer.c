/* SPDX-License-Identifier: Apache-2.0 */
/* consumer.c: a user's program, built from an installed libtrackgen with
 * nothing but `pkg-config --cflags --libs trackgen`. */
#include <trackgen/trackgen.h>

#include <stdio.h>

static gboolean
fill_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  return tg_seed_state_fill_effective (user_data, tg_launch_get_stream (launch),
                                       tg_launch_get_binding (launch, "out"), 64,
                                       error);
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) producer = NULL;
  guint64 host[64], *out = NULL;
  cudaStream_t stream = NULL;
  int count = 0;

  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0)
    {
      printf ("consumer: linked against libtrackgen %s; no CUDA device to run on\n",
              TG_VERSION_STRING);
      return 77;
    }
  if (!tg_device_check (0, &error)
      || (seeds = tg_seed_state_new (0, 64, 42, &error)) == NULL)
    goto fail;
  if (cudaMalloc ((void **)&out, sizeof host) != cudaSuccess
      || cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking) != cudaSuccess)
    return 1;
  producer = tg_producer_new ("consumer", 0);
  tg_producer_add_device_stage (producer, "fill", TG_STAGE_CAPTURE_SAFE, fill_stage,
                                tg_seed_state_ref (seeds),
                                (GDestroyNotify)tg_seed_state_unref, NULL);
  tg_producer_declare_binding (producer, 0, "out", sizeof host, NULL);
  if (!tg_producer_bind (producer, "out", out, sizeof host, &error)
      || !tg_producer_run (producer, stream, TG_POLICY_AUTO, tg_unconditional (),
                           &error))
    goto fail;
  if (cudaMemcpyAsync (host, out, sizeof host, cudaMemcpyDeviceToHost, stream)
          != cudaSuccess
      || cudaStreamSynchronize (stream) != cudaSuccess)
    return 1;
  for (guint i = 0; i < 64; i++)
    if (host[i] != tg_effective_seed (tg_env_seed (42, i), 0))
      {
        fprintf (stderr, "consumer: env %u has a wrong effective seed\n", i);
        return 1;
      }
  cudaStreamDestroy (stream);
  cudaFree (out);
  printf (
      "consumer: libtrackgen %s ran a producer on the GPU; 64 effective seeds match\n",
      TG_VERSION_STRING);
  return 0;
fail:
  fprintf (stderr, "consumer: %s\n", error->message);
  return 1;
}
