/* runner-private.h: REPLAY, from graphs of the producer's own (runner.c).
 * Private to libtrackgen. */
#ifndef TG_RUNNER_PRIVATE_H
#define TG_RUNNER_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* Launches the producer's own graphs on @base's stream, capturing each the
 * first time (and after a rebind or for a new condition flag); HOST stages
 * run on the host between them. */
gboolean tg__runner_replay (TgProducer *producer, const TgLaunch *base,
                            TgCondition condition, GError **error);

G_END_DECLS

#endif
