/* track-producer.h: a polar track generator for E envs, as a TrackGen
 * producer built on the public API alone.
 *
 * Each env's track is keyed by tg_effective_seed(seed, epoch) of a
 * TgSeedState: K control points around a circle with angle and radius jitter
 * (cuRAND Philox, keyed by the effective seed), a closed Catmull-Rom
 * centerline resampled to N points evenly spaced by arc length, a bounded
 * relaxation that smooths the sharp turns away, and a validity test.  Only
 * envs whose mask byte is non-zero are (re)generated; the others keep their
 * track.
 *
 * Stages, in order:
 *   advance   (optional) the masked envs' epochs grow by one
 *   generate  control points, centerline, sharpness; the "flag" reduction
 *   relax     LOOP while "flag", at most max_iters: smooth, re-measure, reduce
 *   validate  no self-intersection, clearance for the track width: "valid"
 *   svg       (optional) HOST stage writing an SVG; not capture-safe
 *
 * Bindings, allocated by track_producer_new() and freed with the producer:
 *   "mask"        guint8[E]    envs to (re)generate, all 1 at creation
 *   "points"      float2[E*N]  centerlines, env-major
 *   "valid"       guint8[E]    1 when the env's track passed the validity test
 *   "sharpness"   float[E]     sharpest curvature times min_turn_radius
 *                              (> 1: too sharp)
 *   "flag"        gint32       relaxation goes on (a masked env is too sharp)
 *   "loop_status" TgLoopStatus outcome of the last relaxation
 * Each stage declares the bindings it uses with their sizes, so a binding may
 * be rebound to a buffer of the caller's (for example "mask") before the
 * producer is captured: TrackGen checks it is bound and large enough before
 * every call.
 *
 * Every kernel is deterministic: no float atomics, no order-dependent sums,
 * and each env's relaxation stops when that env is smooth enough, so an
 * env's track depends on (seed, epoch) and the shape alone, never on the
 * policy or on the other envs of the batch. */
#ifndef TRACK_PRODUCER_H
#define TRACK_PRODUCER_H

#include <trackgen/trackgen.h>

#include "track-shape.h"

G_BEGIN_DECLS

typedef struct
{
  guint n_envs; /* E */
  TrackShape shape;
  guint max_iters;      /* relaxation cap, >= 1 */
  gboolean advance;     /* add the "advance" stage (epochs of masked envs + 1) */
  const char *svg_path; /* when set, add the "svg" HOST stage writing this file */
  guint svg_tracks;     /* tracks the SVG shows: envs 0 .. svg_tracks-1 */
  const char *const *svg_labels; /* optional NULL-terminated labels of those tracks */
} TrackConfig;

/* Fills @config with the defaults for @n_envs envs (no advance, no SVG). */
void track_config_init (TrackConfig *config, guint n_envs);

/* TG_ARGUMENT_ERROR_EMPTY or _INVALID naming the first bad field. */
gboolean track_config_check (const TrackConfig *config, GError **error);

/* Builds the producer on @seeds' device for its envs (config->n_envs must
 * match).  The producer holds a reference to @seeds and owns its buffers,
 * which are initialized on @stream (a stream of that device); waits for it.
 * Returns NULL with TG_ARGUMENT_ERROR or TG_CUDA_ERROR. */
TgProducer *track_producer_new (const TrackConfig *config, TgSeedState *seeds,
                                cudaStream_t stream, GError **error);

/* A seed state of @n envs whose env i is at (@seeds[i], @epochs[i]), to
 * regenerate given tracks standalone.  Ordered on @stream; blocks. */
TgSeedState *track_seed_state_new_at (int device, cudaStream_t stream, guint n,
                                      const guint64 *seeds, const guint32 *epochs,
                                      GError **error);

/* Writes @n_tracks closed tracks (@points: n_tracks * @n_points, env-major)
 * as an SVG grid, each drawn @width wide with its centerline, start point
 * and label (@labels may be NULL); tracks whose @valid byte is 0 are marked
 * invalid.  G_FILE_ERROR on failure. */
gboolean track_svg_write (const char *path, const float2 *points, const guint8 *valid,
                          guint n_tracks, guint n_points, float width,
                          const char *const *labels, GError **error);

/* A CUDA result as a GError: TG_CUDA_ERROR, the code is the cudaError_t.
 * Clears the runtime's last error only when it is @status, so an error
 * pending from someone else's call stays theirs. */
gboolean track_cuda_ok (cudaError_t status, const char *call, GError **error);
#define TRACK_CUDA_OK(call, error) track_cuda_ok ((call), #call, (error))

G_END_DECLS

#endif /* TRACK_PRODUCER_H */
