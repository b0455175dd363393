/* SPDX-License-Identifier: Apache-2.0 */
/* track-buffers.c: the track producer's buffers, by mode, and how its
 * stages (track-producer.c, track-refiller.c) find them; CUDA results and
 * devices as both handle them.  See track-buffers.h. */
#include "track-buffers.h"

const char *const track_buffer_names[] = {
  "mask",
  "family",
  "control",
  "points",
  "families",
  "valid",
  "sharpness",
  "flag",
  "generated",
  "loop_status",
  "ids",
  "list",
  "spare_points",
  "spare_control",
  "spare_families",
  "spare_valid",
  "spare_sharpness",
  "slots",
  "refill_ids",
  "refill",
  "claims",
  "slot_states",
  "overlap",
};
G_STATIC_ASSERT (G_N_ELEMENTS (track_buffer_names) == N_BUFFERS);

gsize
track_buffer_size (const TrackConfig *c, TrackBuffer b)
{
  gsize spares = (gsize)c->n_envs * c->lookahead;

  if ((b >= BUF_FLAG && b <= BUF_LIST && c->lookahead > 0)
      || (b >= BUF_SPARE_POINTS && c->lookahead == 0)
      || ((b == BUF_REFILL || b == BUF_CLAIMS) && c->overlap)
      || (b >= BUF_SLOT_STATES && !c->overlap))
    return 0;
  switch (b)
    {
    case BUF_MASK:
    case BUF_FAMILIES:
    case BUF_VALID:
      return c->n_envs;
    case BUF_CONTROL:
      return (gsize)c->n_envs * c->shape.n_control * sizeof (float2);
    case BUF_POINTS:
      return (gsize)c->n_envs * c->shape.n_points * sizeof (float2);
    case BUF_SHARPNESS:
      return c->n_envs * sizeof (float);
    case BUF_IDS:
      return c->n_envs * sizeof (guint32);
    case BUF_CLAIMS:
      return c->n_envs * sizeof (guint32);
    case BUF_REFILL_IDS: /* the envs of two lists, or the slots of one */
      return (c->overlap ? spares : 2 * (gsize)c->n_envs) * sizeof (guint32);
    case BUF_LIST:
      return sizeof (TrackList);
    case BUF_FAMILY:
    case BUF_FLAG:
    case BUF_GENERATED:
      return sizeof (gint32);
    case BUF_SPARE_POINTS:
      return spares * c->shape.n_points * sizeof (float2);
    case BUF_SPARE_CONTROL:
      return spares * c->shape.n_control * sizeof (float2);
    case BUF_SPARE_FAMILIES:
    case BUF_SPARE_VALID:
      return spares;
    case BUF_SPARE_SHARPNESS:
      return spares * sizeof (float);
    case BUF_SLOTS:
      return c->n_envs * sizeof (TrackSlots);
    case BUF_REFILL:
      return sizeof (TrackRefill);
    case BUF_SLOT_STATES:
      return spares * sizeof (guint64);
    case BUF_OVERLAP:
      return sizeof (TrackOverlap);
    case BUF_STATUS:
    default:
      return sizeof (TgLoopStatus);
    }
}

gpointer
track_binding (const TgLaunch *launch, TrackBuffer b)
{
  return tg_launch_get_binding (launch, track_buffer_names[b]);
}

void
track_declare (TgProducer *p, guint stage, const TrackConfig *config, guint set)
{
  for (guint b = 0; b < N_BUFFERS; b++)
    if (set & TRACK_BIT (b))
      tg_producer_declare_binding (p, stage, track_buffer_names[b],
                                   track_buffer_size (config, b), NULL);
}

static gpointer
launch_find (gconstpointer launch, TrackBuffer b)
{
  return track_binding (launch, b);
}

TrackRows
track_rows_found (TrackFind find, gconstpointer where, gboolean spare)
{
  return (TrackRows){
    .points = find (where, spare ? BUF_SPARE_POINTS : BUF_POINTS),
    .control = find (where, spare ? BUF_SPARE_CONTROL : BUF_CONTROL),
    .families = find (where, spare ? BUF_SPARE_FAMILIES : BUF_FAMILIES),
    .valid = find (where, spare ? BUF_SPARE_VALID : BUF_VALID),
    .sharpness = find (where, spare ? BUF_SPARE_SHARPNESS : BUF_SHARPNESS),
  };
}

TrackRows
track_rows (const TgLaunch *launch, gboolean spare)
{
  return track_rows_found (launch_find, launch, spare);
}

TrackSpares
track_spares_found (TrackFind find, gconstpointer where, const TrackConfig *c)
{
  return (TrackSpares){ .n_envs = c->n_envs,
                        .lookahead = c->lookahead,
                        .refill_batch = c->refill_batch,
                        .spares = track_rows_found (find, where, TRUE),
                        .slots = find (where, BUF_SLOTS),
                        .ids = find (where, BUF_REFILL_IDS),
                        .refill = find (where, BUF_REFILL),
                        .claims = find (where, BUF_CLAIMS) };
}

TrackSpares
track_spares (const TgLaunch *launch, const TrackConfig *c)
{
  return track_spares_found (launch_find, launch, c);
}

TrackOverlapSpares
track_overlap_spares_found (TrackFind find, gconstpointer where, const TrackConfig *c)
{
  return (TrackOverlapSpares){ .n_envs = c->n_envs,
                               .lookahead = c->lookahead,
                               .spares = track_rows_found (find, where, TRUE),
                               .states = find (where, BUF_SLOT_STATES),
                               .slots = find (where, BUF_SLOTS),
                               .owed = find (where, BUF_REFILL_IDS),
                               .overlap = find (where, BUF_OVERLAP) };
}

TrackOverlapSpares
track_overlap_spares (const TgLaunch *launch, const TrackConfig *c)
{
  return track_overlap_spares_found (launch_find, launch, c);
}

gboolean
track_enter_device (int device, TrackDeviceScope *saved, GError **error)
{
  if (!TRACK_CUDA_OK (cudaGetDevice (&saved->device), error)
      || !TRACK_CUDA_OK (cudaSetDevice (device), error))
    return FALSE;
  saved->mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode (&saved->mode);
  return TRUE;
}

void
track_leave_device (const TrackDeviceScope *saved)
{
  enum cudaStreamCaptureMode mode = saved->mode;
  cudaError_t status;

  (void)cudaThreadExchangeStreamCaptureMode (&mode);
  status = cudaSetDevice (saved->device);
  if (status != cudaSuccess)
    g_warning ("track producer: cannot restore device %d: %s", saved->device,
               cudaGetErrorName (status));
}

gboolean
track_cuda_ok (cudaError_t status, const char *call, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  /* A launch error is reported once, here; one pending from another call is
   * left to whoever made it. */
  if (cudaPeekAtLastError () == status)
    (void)cudaGetLastError ();
  g_set_error (error, TG_CUDA_ERROR, status, "%s failed: %s (%s)", call,
               cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}
