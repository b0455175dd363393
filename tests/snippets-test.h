/* SPDX-License-Identifier: Apache-2.0 */
/* snippets-test.h: what the files of tests/snippets-test share.  The program
 * links doc/libsnippets.a and doc/snippets/kernel-decisions.o and runs the C
 * examples of the pages, asserting what the pages say around them. */
#ifndef TG_SNIPPETS_TEST_H
#define TG_SNIPPETS_TEST_H

#include "../doc/snippets/snippets.h"
#include "tg-test.h"

G_BEGIN_DECLS

/* The simulator snippets.h declares, defined by snippets-test-kernels.cu:
 * - sim_launch_step: env e finishes at step s (counted from the last
 *   tgs_sim_reset()) when the period is not 0 and (e + s) % period == 0;
 * - track_launch_sample: for every finished env e, track[j] =
 *   tgs_track_value (keys[e], j) for j < 63 and track[63] = 0; *again = 1;
 * - track_launch_relax: for every finished env whose track[63] is below
 *   TGS_RELAX_SWEEPS, track[63] += 1; *again = whether one is still below;
 * - track_launch_layout: track[1] = 1000 + kind for every finished env;
 * - track_launch_scenery: track[2] = 2 (night) or 1 (day), the same;
 * - plugin_launch_on_legacy_stream (rules.c): one kernel on the legacy
 *   stream, counted.
 * A launcher's host calls and its kernels' runs on the device are counted
 * apart: the first are stage-function calls, the second graph launches. */
#define TGS_TRACK_FLOATS 64
#define TGS_RELAX_SWEEPS 3

typedef struct
{
  guint32 steps, samples, sweeps, plugin_runs;
} TgsCounts;

/* Sets the period, zeroes the step number and every count, host and device
 * (waits for the device). */
void tgs_sim_reset (guint period);
/* The kernels' runs since the reset (waits for the device). */
void tgs_sim_device_counts (TgsCounts *counts);
/* The launchers' host calls since the reset. */
void tgs_sim_host_calls (TgsCounts *calls);
/* The next track_launch_sample() returns @status and launches nothing. */
void tgs_sim_fail_next_sample (cudaError_t status);
/* track[j] of a sampled track, j < 63, as the kernel computes it. */
float tgs_track_value (guint64 key, guint j);

/* The fixture: a GPU fixture, the simulator's buffers for TGS_N_ENVS envs
 * (zeroed, in one allocation) and its seed state (seeds_for_sim()); with
 * tgs_tracks_set_up(), also the track producer of producer.c over them,
 * done[e] = (e % 3 == 0) uploaded.  None without a GPU. */
#define TGS_N_ENVS 40
#define TGS_TRACK_ELEMS (TGS_N_ENVS * TGS_TRACK_FLOATS)
#define TGS_TRACKS_SIZE (TGS_TRACK_ELEMS * sizeof (float))

typedef struct
{
  TgTestGpu gpu;
  SimBuffers sim;
  TgSeedState *seeds;
  TgProducer *tracks;
} Fixture;

void tgs_fixture_set_up (Fixture *f, gconstpointer data);
void tgs_tracks_set_up (Fixture *f, gconstpointer data);
void tgs_fixture_tear_down (Fixture *f, gconstpointer data);

/* A case of the program: its path, function, set-up and data. */
typedef struct
{
  const char *path;
  void (*func) (Fixture *f, gconstpointer data);
  void (*set_up) (Fixture *f, gconstpointer data);
  gconstpointer data;
} TgsCase;

/* A case on the fixture, and one on the fixture with the track producer. */
#define TGS_CASE(path, func)                                                           \
  {                                                                                    \
    (path), (func), tgs_fixture_set_up, NULL                                           \
  }
#define TGS_TRACKS_CASE(path, func)                                                    \
  {                                                                                    \
    (path), (func), tgs_tracks_set_up, NULL                                            \
  }

/* Adds @n cases. */
void tgs_add_cases (const TgsCase *cases, gsize n);

/* Uploads done[e] = (e % 3 == 0), the finished envs of most cases. */
void tgs_set_done_every_third (Fixture *f);
/* Unbinds "keys" of a track producer; asserts a call's error about it. */
void tgs_unbind_keys (TgProducer *p);
void tgs_assert_keys_unbound (const GError *error);
/* A gint32 to the device (waits). */
void tgs_set_i32 (gint32 *device, gint32 value);
/* The loop status at @device, read back. */
TgLoopStatus tgs_read_status (const TgLoopStatus *device);
/* Asserts the loop status at @device. */
void tgs_assert_status (const TgLoopStatus *device, gint32 iterations, gint32 end);
/* The epochs of the fixture's state. */
void tgs_read_epochs (Fixture *f, guint32 *epochs);
/* Asserts what the track producer (producer.c) leaves after @n_calls calls
 * with the fixture's done bytes fixed: epoch n_calls for the finished envs,
 * 0 for the others; every key tg_effective_seed (seed, epoch); the finished
 * envs' tracks sampled from their key and relaxed, the others still 0;
 * @tracks: the buffer bound as "tracks" (NULL: the fixture's). */
void tgs_assert_regenerated (Fixture *f, guint n_calls, const float *tracks);

/* Begins a capture on @stream (thread-local mode), for tgs_end_capture(). */
void tgs_begin_capture (cudaStream_t stream);
/* Ends it; returns its graph's conditional nodes in *@n_conditionals
 * (optional) and the executable graph. */
cudaGraphExec_t tgs_end_capture (cudaStream_t stream, guint *n_conditionals);
/* Launches @exec @n times on @stream and waits. */
void tgs_launch (cudaGraphExec_t exec, cudaStream_t stream, guint n);
/* Waits until no user object of TrackGen's is left beyond the fixture's
 * snapshot, as tg_test_assert_no_leaks() does before it checks. */
void tgs_wait_user_objects (Fixture *f);

/* The test's view of the track producer (producer.c): its runner's
 * counters, the simulator's counts, and what regenerations left given
 * each env's expected epoch (@track_of[e]: env e holds a sampled track;
 * @keys_filled: some regeneration wrote the keys; @tracks_buffer: the
 * buffer bound as "tracks", NULL for the fixture's). */
void tgs_assert_stats (TgProducer *p, guint64 n_captures, guint64 n_replays);
void tgs_assert_counts (const TgsCounts *counts, guint32 samples, guint32 sweeps);
void tgs_assert_generation (Fixture *f, const guint32 *want_epochs,
                            const gboolean *track_of, gboolean keys_filled,
                            const float *tracks_buffer);

/* The cases of the other files: snippets-test-capture.c (capture.md),
 * snippets-test-pages.c (capture-rules.md, errors.md), snippets-test-seeds.c
 * (seeds.md). */
void tgs_add_capture_cases (void);
void tgs_add_page_cases (void);
void tgs_add_seeds_cases (void);

G_END_DECLS

#endif
