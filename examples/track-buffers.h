/* SPDX-License-Identifier: Apache-2.0 */
/* track-buffers.h: the track producer's buffers, each a binding of its
 * stages (the names of track-producer.h), which a mode uses or not, and
 * how a stage finds them.  Private to the example's C files. */
#ifndef TRACK_BUFFERS_H
#define TRACK_BUFFERS_H

#include "track-kernels.h"
#include "track-producer.h"

G_BEGIN_DECLS

typedef enum
{
  BUF_MASK,
  BUF_FAMILY,
  BUF_CONTROL,
  BUF_POINTS,
  BUF_FAMILIES,
  BUF_VALID,
  BUF_SHARPNESS,
  BUF_FLAG,
  BUF_GENERATED,
  BUF_STATUS,
  BUF_IDS,
  BUF_LIST,
  /* With lookahead only (the ones above from BUF_FLAG on without) */
  BUF_SPARE_POINTS,
  BUF_SPARE_CONTROL,
  BUF_SPARE_FAMILIES,
  BUF_SPARE_VALID,
  BUF_SPARE_SHARPNESS,
  BUF_SLOTS,
  BUF_REFILL_IDS, /* the refill's lists: of envs in the step graph, of slots beside */
  /* With an in-graph refill only */
  BUF_REFILL,
  BUF_CLAIMS,
  /* With an overlapped refill only */
  BUF_SLOT_STATES,
  BUF_OVERLAP,
  N_BUFFERS
} TrackBuffer;

/* The binding name of each buffer. */
extern const char *const track_buffer_names[];

#define TRACK_BIT(b) (1u << (b))
/* The spares and their rings, whatever refills them. */
#define TRACK_SPARE_BUFFERS                                                            \
  (TRACK_BIT (BUF_SPARE_POINTS) | TRACK_BIT (BUF_SPARE_CONTROL)                        \
   | TRACK_BIT (BUF_SPARE_FAMILIES) | TRACK_BIT (BUF_SPARE_VALID)                      \
   | TRACK_BIT (BUF_SPARE_SHARPNESS) | TRACK_BIT (BUF_SLOTS))

/* The bytes of buffer @b under @c: 0 for a buffer the mode does not use
 * (the relaxation's and the list's with lookahead, the spares' on demand,
 * the in-graph refill's or the overlapped one's). */
gsize track_buffer_size (const TrackConfig *c, TrackBuffer b);

/* Declares the buffers in @set (TRACK_BIT()s) for @stage. */
void track_declare (TgProducer *p, guint stage, const TrackConfig *config, guint set);

/* The buffer bound as @b: declared by the running stage, so TrackGen has
 * checked it is bound and large enough. */
gpointer track_binding (const TgLaunch *launch, TrackBuffer b);

/* The buffer bound as @b where @where (a TgLaunch, a TgProducer) holds it. */
typedef gpointer (*TrackFind) (gconstpointer where, TrackBuffer b);

/* The envs' current tracks, or their spare slots, as the running stage's
 * bindings; _found: as @find finds them. */
TrackRows track_rows (const TgLaunch *launch, gboolean spare);
TrackRows track_rows_found (TrackFind find, gconstpointer where, gboolean spare);

/* The spares as the in-graph refill's kernel takes them (with the claims
 * only a fused call uses: the producer's own kernel ignores them). */
TrackSpares track_spares (const TgLaunch *launch, const TrackConfig *c);
TrackSpares track_spares_found (TrackFind find, gconstpointer where, const TrackConfig *c);

/* The spares as an overlapped refill and its switch share them. */
TrackOverlapSpares track_overlap_spares (const TgLaunch *launch, const TrackConfig *c);
TrackOverlapSpares track_overlap_spares_found (TrackFind find, gconstpointer where,
                                               const TrackConfig *c);

/* What track_enter_device() changed on this thread. */
typedef struct
{
  int device;
  enum cudaStreamCaptureMode mode;
} TrackDeviceScope;

/* Makes @device current and this thread's capture mode relaxed, saving
 * both into *@saved: the producer's and the refiller's host calls may run
 * while another thread captures in global mode (PyTorch's default), which
 * their allocations, synchronizations and frees would otherwise invalidate
 * (they never touch a capturing stream). */
gboolean track_enter_device (int device, TrackDeviceScope *saved, GError **error);
/* Gives this thread back what @saved holds (a warning if it cannot). */
void track_leave_device (const TrackDeviceScope *saved);

G_END_DECLS

#endif /* TRACK_BUFFERS_H */
