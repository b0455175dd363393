/* SPDX-License-Identifier: Apache-2.0 */
/* runner-private.h: REPLAY, from graphs of the producer's own (runner.c).
 * Private to libtrackgen. */
#ifndef TG_RUNNER_PRIVATE_H
#define TG_RUNNER_PRIVATE_H

#include "driver-private.h"
#include "producer-private.h"

G_BEGIN_DECLS

/* REPLAY's common call, without a launch context: unconditional, of a
 * producer with no HOST stage whose one own graph is current
 * (TgProducer.replay_exec).  Launches it on @stream and sets *@ok; FALSE,
 * having done nothing, when the call needs tg__runner_replay(). */
static inline gboolean
tg__runner_launch_current (TgProducer *producer, cudaStream_t stream,
                           TgCondition condition, gboolean *ok, GError **error)
{
  cudaGraphExec_t exec = producer->replay_exec;

  if (condition.flag != NULL || exec == NULL)
    return FALSE;
  if ((*ok = TG_CUDA_OK (tg__graph_launch (exec, stream), error)))
    producer->n_replays++;
  return TRUE;
}

/* Launches the producer's own graphs on @base's stream, capturing each the
 * first time (and after a rebind or for a new condition flag); HOST stages
 * run on the host between them. */
gboolean tg__runner_replay (TgProducer *producer, const TgLaunch *base,
                            TgCondition condition, GError **error);

G_END_DECLS

#endif
