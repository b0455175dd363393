/* SPDX-License-Identifier: Apache-2.0 */
/* rules.c: stages that follow the capture rules (doc/capture-rules.md). */
#include "snippets.h"

//! [rules-data]
typedef struct
{
  guint32 *device_params; /* device */
  guint32 *pinned_params; /* cudaMallocHost: read again at every replay */
  gint steps_seen;        /* counted by a host function */
  guint32 checksum;
} Rules;

/* A CUDA result as a GError. */
static gboolean
cuda_ok (cudaError_t status, const char *call, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "%s: %s", call, cudaGetErrorName (status));
  return FALSE;
}
//! [rules-data]

//! [host-safe]
/* Runs at every replay of a graph that recorded the producer: no CUDA here. */
static void
count_step (gpointer user_data)
{
  Rules *r = user_data;

  g_atomic_int_inc (&r->steps_seen);
}

/* Capture-safe: only a pinned upload and a host function, both enqueued. */
static gboolean
upload_params (TgHostOps *ops, gpointer user_data, GError **error)
{
  Rules *r = user_data;

  return tg_host_ops_copy_to_device (ops, r->device_params, r->pinned_params,
                                     4 * sizeof (guint32), error)
         && tg_host_ops_enqueue (ops, count_step, r, error);
}
//! [host-safe]

//! [host-readback]
/* Not capture-safe: it waits for the device.  AUTO still replays the
 * producer outside a capture (HOST stages run between its graphs), and
 * refuses it inside one, before recording anything. */
static gboolean
read_checksum (TgHostOps *ops, gpointer user_data, GError **error)
{
  Rules *r = user_data;

  return tg_host_ops_copy_to_host (ops, &r->checksum, r->device_params,
                                   sizeof r->checksum, error);
}
//! [host-readback]

//! [nested]
static gboolean
clear_params (const TgLaunch *launch, gpointer user_data, GError **error)
{
  Rules *r = user_data;

  /* Copies, memsets and kernels may sit in a conditional body. */
  return cuda_ok (cudaMemsetAsync (r->device_params, 0, 4 * sizeof (guint32),
                                   tg_launch_get_stream (launch)),
                  "cudaMemsetAsync", error);
}

/* A device stage that guards part of its work by a device flag: an IF node
 * under a capture (its body captured on a side stream), a readback eagerly. */
static gboolean
maybe_clear (const TgLaunch *launch, gpointer user_data, GError **error)
{
  const gint32 *reset = tg_launch_get_binding (launch, "reset");

  return tg_launch_if (launch, tg_conditional (reset), clear_params, user_data, error);
}
//! [nested]

//! [declare]
TgProducer *
rules_producer_new (guint32 *device_params, guint32 *pinned_params)
{
  TgProducer *p = tg_producer_new ("rules", 0);
  Rules *r = g_new0 (Rules, 1);
  guint clear;

  r->device_params = device_params;
  r->pinned_params = pinned_params;
  tg_producer_add_host_stage (p, "upload", TG_STAGE_CAPTURE_SAFE, upload_params, r,
                              g_free, NULL);
  clear = tg_producer_add_device_stage (p, "maybe-clear", TG_STAGE_CAPTURE_SAFE,
                                        maybe_clear, r, NULL, NULL);
  tg_producer_add_host_stage (p, "checksum", TG_STAGE_NONE, read_checksum, r, NULL,
                              NULL);
  /* The flag maybe-clear looks up: bound before the first run, or every call
   * is refused with TG_STATE_ERROR_UNBOUND. */
  tg_producer_declare_binding (p, clear, "reset", sizeof (gint32), NULL);
  return p;
}
//! [declare]

//! [legacy]
/* A plugin that launches on the legacy default stream and takes no stream. */
extern cudaError_t plugin_launch_on_legacy_stream (void);

static gboolean
plugin_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  return cuda_ok (plugin_launch_on_legacy_stream (), "plugin", error);
}

TgProducer *
legacy_plugin_producer_new (void)
{
  TgProducer *p = tg_producer_new ("plugin", 0);

  /* Declared, since no CUDA error would reveal that its work escapes a
   * capture or the stream the call was given. */
  tg_producer_add_device_stage (p, "plugin", TG_STAGE_LEGACY_STREAM, plugin_stage, NULL,
                                NULL, NULL);
  return p;
}

gboolean
legacy_plugin_run (TgProducer *plugin, GError **error)
{
  /* The only call that is not refused: eager, on the legacy default stream
   * (cudaStreamLegacy, or NULL: the same stream), while no blocking stream
   * captures. */
  return tg_producer_run (plugin, cudaStreamLegacy, TG_POLICY_AUTO, tg_unconditional (),
                          error);
}
//! [legacy]
