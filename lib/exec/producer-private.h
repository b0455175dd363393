/* SPDX-License-Identifier: Apache-2.0 */
/* producer-private.h: the producer, its stages and bindings
 * (producer-stages.c), the launch context, and the producer's lock and
 * private resources (producer.c).
 * Private to libtrackgen. */
#ifndef TG_PRODUCER_PRIVATE_H
#define TG_PRODUCER_PRIVATE_H

#include "capture-private.h"
#include "device-private.h"

G_BEGIN_DECLS

typedef enum
{
  TG_STAGE_KIND_DEVICE,
  TG_STAGE_KIND_HOST,
  TG_STAGE_KIND_LOOP,
  TG_STAGE_KIND_SWITCH,
} TgStageKind;

/* A binding a stage reads, with the fewest bytes it needs. */
typedef struct
{
  char *name;
  gsize min_size;
} TgUse;

typedef struct
{
  char *name;
  TgStageKind kind;
  TgStageFlags flags;
  TgDeviceFunc device; /* DEVICE, and the body of a LOOP */
  TgHostFunc host;
  gpointer user_data;
  GDestroyNotify destroy;
  GArray *uses;           /* TgUse: bindings declared by tg_producer_declare_binding */
  char *condition;        /* binding of the guard flag, or NULL */
  TgDeviceFunc otherwise; /* DEVICE with a condition: its else branch, or NULL */
  char *loop_flag;        /* LOOP: binding of the continue flag */
  char *loop_status;      /* LOOP: binding of the TgLoopStatus */
  guint max_iters;        /* LOOP */
  gboolean
      loop_by_body;    /* LOOP: the body calls tg_loop_next(); loop_flag may be NULL */
  char *index;         /* SWITCH: binding of the gint32 index */
  TgDeviceFunc *cases; /* SWITCH: n_cases bodies */
  guint n_cases;
} TgStage;

typedef struct
{
  gpointer ptr;
  gsize size;
} TgBinding;

struct _TgProducer
{
  /* What a call reads, in the producer's first cache line (the producer is
   * allocated 64-aligned): a REPLAY call of a producer whose stages raised
   * no refusal reads no other line of it.  Everything past this line is read
   * only when a field here says it is needed. */
  _Alignas(64) gpointer owner; /* the thread inside a call (producer.c), or NULL */
  gint n_waiting;              /* threads waiting for it, on @released */
  int device;
  cudaStream_t bound;
  guint64 generation;       /* bumped by every change of a binding */
  guint64 bindings_checked; /* 1 + the generation check_bindings passed at */
  /* REPLAY of an unconditional call: the one own graph while it is current
   * (runner.c sets it; every change of a binding clears it), else NULL. */
  cudaGraphExec_t replay_exec;
  guint64 n_replays; /* TgRunnerStats.n_replays */
  gboolean sealed;   /* the stages are fixed, and the fields below derived */
  gboolean refused;  /* legacy, record_refusal or replay_refusal is set */

  gatomicrefcount ref;
  char *name;
  GPtrArray *stages;    /* TgStage *, owned */
  GHashTable *bindings; /* name -> TgBinding *, owned */

  /* Fixed at the first run, from the stages' declarations. */
  const TgStage *first_host;
  const TgStage *legacy;   /* the first legacy-stream stage, or NULL */
  GError *record_refusal;  /* why it cannot be recorded, or NULL */
  GError *replay_refusal;  /* why it cannot be captured at all, or NULL */
  GError *no_conditionals; /* the driver lacks the conditional nodes used, or NULL */

  const gint32 *flag_checked; /* the last call condition's flag found valid */
  gboolean captured;          /* an own graph exists, or it was recorded */

  /* Lazily created, on the producer's device. */
  cudaStream_t private_stream; /* own captures and RECORD trial captures */
  GPtrArray *side_streams;     /* body captures, one per nesting depth */
  cudaStream_t unit_stream;    /* RECORD: a stage's own capture (record.c) */
  /* Eager decisions (decision.c): blocks of mapped host words, made on
   * first use; the decisions open now (the next one takes word
   * n_decisions_open); the last sequence number handed out; how long a wait
   * spins before it blocks. */
  GPtrArray *decision_words;
  guint n_decisions_open;
  guint32 decision_seq;
  gint64 decision_spin_us;

  GArray *segments;    /* REPLAY's own graphs (runner.c), freed by the array */
  TgRunnerStats stats; /* but for n_replays */

  TgRebindFunc rebind_handler;
  gpointer rebind_data;
  GDestroyNotify rebind_destroy;

  /* Where a thread that finds the producer taken waits (see producer.c). */
  GMutex wait_lock;
  GCond released;
};

G_STATIC_ASSERT (G_STRUCT_OFFSET (TgProducer, refused) + sizeof (gboolean) <= 64);

typedef struct _TgRecordPlan TgRecordPlan;
typedef struct _TgBody TgBody;

struct _TgLaunch
{
  TgProducer *producer;
  const TgStage *stage;
  cudaStream_t stream;
  TgPolicy policy;
  gboolean capturing; /* work enqueued now is captured, not run */
  unsigned long long capture_id;
  cudaGraph_t capture_graph;
  enum cudaStreamCaptureMode mode; /* for body captures */
  guint depth;
  gint switch_case; /* the case of the innermost switch running, or -1 */
  /* What a kernel decides through: the condition, in the decide function of
   * a tg_launch_if_by() or tg_launch_switch_by(); the loop, in the body of a
   * loop whose body decides.  NULL elsewhere (a body's own bodies too). */
  const TgDeviceCondition *condition;
  const TgDeviceLoop *loop;
  /* RECORD: the caller's capturing stream, checked after every stage, so a
   * stage that broke the caller's capture is named. */
  cudaStream_t caller;
  /* What the stages keep alive with the graph they are captured into
   * (tg_launch_keep): a list made on first use, owned by whoever made the
   * slot (the call, an own graph's capture, RECORD). */
  GPtrArray **kept;
  /* RECORD: the call's record plan (record.c), NULL under other policies. */
  TgRecordPlan *plan;
  /* The body of ours that @stream captures (body-private.h), or NULL. */
  TgBody *body;
};

struct _TgHostOps
{
  const TgLaunch *launch;
};

/* launch.c: a list for TgLaunch.kept; dropping it releases what it holds,
 * each in a relaxed section. */
GPtrArray *tg__kept_new (void);

static inline const TgStage *
tg__producer_stage (const TgProducer *producer, guint i)
{
  return (const TgStage *)producer->stages->pdata[i];
}

/* Who holds producers: a record of each thread's, whose address is the
 * thread's identity in TgProducer.owner.  Calls nest (a stage may run
 * another producer), so it lists the producers the thread is inside,
 * innermost last: the first few in @held, the rest in @more. */
#define TG_HOLDER_INLINE 6

typedef struct
{
  guint n; /* producers held */
  /* TG_HOLDER_INLINE once producer.c registered the record, so that the
   * producers held are released if the thread exits; 0 before.  Below it,
   * tg__producer_lock() takes the fast path. */
  guint fast;
  TgProducer *held[TG_HOLDER_INLINE];
  GPtrArray *more; /* held beyond TG_HOLDER_INLINE, or NULL */
} TgHolder;

extern _Thread_local TgHolder tg__holder;

/* The slow halves of the two calls below (producer.c): the thread's first
 * call, a nesting deeper than TG_HOLDER_INLINE, a producer taken (waits for
 * the call of another thread; BUSY when this thread is inside it already);
 * and waking a waiter. */
gboolean tg__producer_lock_slow (TgProducer *producer, GError **error);
void tg__producer_wake (TgProducer *producer);

/* Enters a producer for a call or a change.  Inline, as every call takes
 * one: a free producer costs one compare-and-swap. */
static inline gboolean
tg__producer_lock (TgProducer *producer, GError **error)
{
  TgHolder *h = &tg__holder;

  if (G_LIKELY (h->n < h->fast)
      && g_atomic_pointer_compare_and_exchange (&producer->owner, NULL, h))
    {
      h->held[h->n++] = producer;
      return TRUE;
    }
  return tg__producer_lock_slow (producer, error);
}

/* Frees @producer for the next thread.  A release store with no fence
 * after it (a fence is a locked instruction on x86, as costly as the rest of
 * the release): the load that follows may pass the store and miss a waiter
 * that counted itself meanwhile, so waiters wait with a timeout; a missed
 * wake-up, a window of nanoseconds, costs that waiter a millisecond. */
static inline void
tg__producer_release (TgProducer *producer)
{
  __atomic_store_n (&producer->owner, NULL, __ATOMIC_RELEASE);
  if (G_UNLIKELY (g_atomic_int_get (&producer->n_waiting) > 0))
    tg__producer_wake (producer);
}

static inline void
tg__producer_unlock (TgProducer *producer)
{
  /* Calls nest strictly: the producer released is the last one taken. */
  tg__holder.n--;
  tg__producer_release (producer);
}

/* Takes @producer for a reader outside a call (producer.c): FALSE when
 * this thread is inside it already (a stage), which holds it then; TRUE
 * when taken, to be unlocked after the read. */
gboolean tg__producer_read_lock (TgProducer *producer);

/* Frees a stage the producer owns. */
void tg__stage_free (gpointer stage);

/* The buffer bound as @name, for callers inside a call (producer-stages.c). */
gpointer tg__producer_binding (const TgProducer *producer, const char *name,
                               gsize *size);

/* Lazily made private resources. */
cudaStream_t tg__producer_private_stream (TgProducer *producer, GError **error);
cudaStream_t tg__producer_side_stream (TgProducer *producer, guint depth,
                                       GError **error);
cudaStream_t tg__producer_unit_stream (TgProducer *producer, GError **error);

G_END_DECLS

#endif
