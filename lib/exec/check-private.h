/* SPDX-License-Identifier: Apache-2.0 */
/* check-private.h: checked mode (check.c, check-cupti.c), which proves that
 * the device work a stage enqueues went where the policy says, through
 * NVIDIA's CUPTI callback API loaded at run time.  Off by default at the cost
 * of a predictable branch before and after each stage.  Private to
 * libtrackgen. */
#ifndef TG_CHECK_PRIVATE_H
#define TG_CHECK_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* What checked mode notes of one CUDA call of a stage's thread
 * (check-cupti.c), for check.c to check. */
typedef enum
{
  TG_NOTE_WORK,       /* enqueued work on @stream */
  TG_NOTE_DONE,       /* synchronous work on @stream: complete on return */
  TG_NOTE_RECORD,     /* recorded @event on @stream */
  TG_NOTE_WAIT,       /* made @stream wait for @event */
  TG_NOTE_BEGIN,      /* began a capture on @stream */
  TG_NOTE_END,        /* ended the capture of @stream */
  TG_NOTE_SYNC,       /* waited on the host for @stream */
  TG_NOTE_SYNC_EVENT, /* waited on the host for @event */
  TG_NOTE_SYNC_ALL,   /* waited on the host for the device */
} TgNoteKind;

typedef struct
{
  TgNoteKind kind;
  const char *call; /* CUPTI's function name, a global constant */
  cudaStream_t stream;
  cudaEvent_t event;
  char *kernel; /* a launch's kernel, owned; else NULL */
} TgNote;

/* The stage running on this thread: only the outermost stage notes (a stage
 * that runs another producer checks that producer's work with its own). */
typedef struct
{
  guint depth;      /* stages entered */
  guint in_runtime; /* runtime calls in progress: their driver calls are theirs */
  GArray *notes;    /* TgNote */
} TgCheckFrame;

extern _Thread_local TgCheckFrame tg__check_frame;

/* Loads CUPTI (once) and subscribes to every runtime and driver API call;
 * TG_STATE_ERROR_FAILED naming TG_CUPTI_PATH when it cannot.  The caller
 * serializes these two. */
gboolean tg__check_cupti_on (GError **error);
void tg__check_cupti_off (void);

/* 1: on, 2: asked for by TG_CHECK=1 but CUPTI failed (every checked stage
 * fails with why), 0: off, -1: TG_CHECK not read yet. */
extern gint tg__check_state;

gboolean tg__check_enter_slow (const TgLaunch *launch);
gboolean tg__check_leave_slow (const TgLaunch *launch, gboolean ok, GError **error);

/* Called by the stage walker before a stage function runs on @launch:
 * starts noting the CUDA calls this thread makes.  Pass what it returns to
 * tg__check_leave(). */
static inline gboolean
tg__check_enter (const TgLaunch *launch)
{
  return G_UNLIKELY (g_atomic_int_get (&tg__check_state) != 0)
         && tg__check_enter_slow (launch);
}

/* Called after the stage function returned @ok (its error in *@error):
 * when @checked, checks what it enqueued and returns FALSE with
 * TG_CAPTURE_ERROR_ESCAPED (or why checking failed) in *@error when work
 * went elsewhere; otherwise returns @ok. */
static inline gboolean
tg__check_leave (gboolean checked, const TgLaunch *launch, gboolean ok, GError **error)
{
  return G_UNLIKELY (checked) ? tg__check_leave_slow (launch, ok, error) : ok;
}

G_END_DECLS

#endif
