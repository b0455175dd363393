/* SPDX-License-Identifier: Apache-2.0 */
/* decision-private.h: eager decisions (decision.c).  Eagerly, whatever
 * decides a condition, a switch or a loop's continuation -- TrackGen's set,
 * entry and tail kernels, or a user's kernel through tg_condition_set() and
 * tg_loop_next() -- stores its value with a sequence number in one 64-bit
 * word of mapped pinned host memory of the producer.  The host waits for
 * that word (spins briefly, then synchronizes the stream) and reads the
 * value: no copy is enqueued, and a user's kernel that decides costs no
 * kernel at all.  Private to libtrackgen. */
#ifndef TG_DECISION_PRIVATE_H
#define TG_DECISION_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* Opens a decision of @producer: *@c is what the device writes it through
 * (TG_DEVICE_CONDITION_HOST).  Decisions nest, as the calls that make them
 * do: each one opened is closed, innermost first, by tg__decision_wait() or
 * tg__decision_abandon(). */
gboolean tg__decision_open (TgProducer *producer, TgDeviceCondition *c, GError **error);

/* Waits until the work enqueued on @stream wrote the innermost open decision
 * @c, closes it and sets *@value.  The work before the writer has then run
 * (stream order).  @writer names what had to write it, for the
 * TG_STATE_ERROR_FAILED when nothing did. */
gboolean tg__decision_wait (TgProducer *producer, cudaStream_t stream,
                            const TgDeviceCondition *c, const char *writer,
                            guint32 *value, GError **error);

/* Closes the innermost open decision without its value, on a failure after
 * it was handed out: waits for @stream first, so that nothing enqueued
 * writes the word once another decision uses it. */
void tg__decision_abandon (TgProducer *producer, cudaStream_t stream);

/* *@set := (*@flag != 0), read on the host in stream order (a set kernel
 * and a wait). */
gboolean tg__decision_read_flag (TgProducer *producer, cudaStream_t stream,
                                 const gint32 *flag, gboolean *set, GError **error);

G_END_DECLS

#endif
