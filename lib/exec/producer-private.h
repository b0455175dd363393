/* producer-private.h: the producer, its stages, and the launch context.
 * Private to libtrackgen. */
#ifndef TG_PRODUCER_PRIVATE_H
#define TG_PRODUCER_PRIVATE_H

#include "capture-private.h"

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
  char *index;            /* SWITCH: binding of the gint32 index */
  TgDeviceFunc *cases;    /* SWITCH: n_cases bodies */
  guint n_cases;
} TgStage;

typedef struct
{
  gpointer ptr;
  gsize size;
} TgBinding;

/* One instantiated own graph of a device segment. */
typedef struct
{
  cudaGraphExec_t exec;
  guint64 generation; /* the producer's binding generation it was captured at */
  const gint32 *flag; /* the call condition's flag baked in, or NULL */
} TgOwnGraph;

/* A maximal run of device stages; HOST stages lie between segments. */
typedef struct
{
  guint first, n;
  TgOwnGraph graphs[2]; /* [0] unconditional call, [1] conditional call */
} TgSegment;

struct _TgProducer
{
  gatomicrefcount ref;
  char *name;
  int device;
  cudaStream_t bound;
  GPtrArray *stages;    /* TgStage *, owned */
  GHashTable *bindings; /* name -> TgBinding *, owned */

  /* Fixed at the first run, from the stages' declarations. */
  gboolean sealed;
  const TgStage *first_host;
  const TgStage *legacy;   /* the first legacy-stream stage, or NULL */
  GError *record_refusal;  /* why it cannot be recorded, or NULL */
  GError *replay_refusal;  /* why it cannot be captured at all, or NULL */
  GError *no_conditionals; /* the driver lacks the conditional nodes used, or NULL */

  guint64 generation;       /* bumped by every change of a binding */
  guint64 bindings_checked; /* 1 + the generation check_bindings passed at */
  gboolean captured;        /* an own graph exists, or it was recorded */

  /* Lazily created, on the producer's device. */
  cudaStream_t private_stream; /* own captures and RECORD dry runs */
  GPtrArray *side_streams;     /* body captures, one per nesting depth */
  gint64 *readback;            /* pinned scratch for eager readbacks */

  GArray *segments; /* TgSegment, made at the first REPLAY */
  TgRunnerStats stats;

  TgRebindFunc rebind_handler;
  gpointer rebind_data;
  GDestroyNotify rebind_destroy;

  /* One call at a time: the thread inside (see producer.c), or NULL; other
   * threads wait on @released. */
  gpointer owner;
  gint n_waiting;
  GMutex wait_lock;
  GCond released;
};

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
  /* RECORD: the caller's capturing stream, checked after every stage, so a
   * stage that broke the caller's capture is named. */
  cudaStream_t caller;
};

struct _TgHostOps
{
  const TgLaunch *launch;
};

static inline const TgStage *
tg__producer_stage (const TgProducer *producer, guint i)
{
  return (const TgStage *)producer->stages->pdata[i];
}

/* stages.c: runs stages [first, first + n) in order on @launch; under
 * RECORD, checks the caller's capture after each one. */
gboolean tg__run_stages (TgLaunch *launch, guint first, guint n, GError **error);

/* stages.c: captures @body (run on a launch derived from @base) into a new
 * graph of the producer's own, on its private stream, never touching the
 * caller's streams.  A stage the capture cannot hold is NOT_CAPTURABLE; a
 * stage that broke the caller's capture (RECORD) is FAILED. */
gboolean tg__stages_capture (TgProducer *producer, const TgLaunch *base,
                             enum cudaStreamCaptureMode mode, TgDeviceFunc body,
                             gpointer data, cudaGraph_t *graph, GError **error);

/* producer.c: enters a producer for a call (waits for a call on another
 * thread; BUSY when this thread is already inside it). */
gboolean tg__producer_lock (TgProducer *producer, GError **error);
void tg__producer_unlock (TgProducer *producer);

/* producer.c: the buffer bound as @name, for callers inside a call. */
gpointer tg__producer_binding (const TgProducer *producer, const char *name,
                               gsize *size);

/* producer.c: lazily made private resources. */
cudaStream_t tg__producer_private_stream (TgProducer *producer, GError **error);
cudaStream_t tg__producer_side_stream (TgProducer *producer, guint depth,
                                       GError **error);
/* Copies @size (<= 8) bytes of device memory to the host, waiting for them. */
gboolean tg__producer_readback (TgProducer *producer, cudaStream_t stream,
                                gconstpointer device_src, gsize size, gpointer out,
                                GError **error);

/* condition.c: conditions, switches and loops around bodies, captured or
 * eager.  @otherwise may be NULL (no else branch). */
gboolean tg__condition_if (const TgLaunch *launch, const gint32 *flag,
                           TgDeviceFunc body, TgDeviceFunc otherwise, gpointer data,
                           GError **error);
gboolean tg__condition_switch (const TgLaunch *launch, const gint32 *index,
                               guint n_cases, const TgDeviceFunc *cases, gpointer data,
                               GError **error);
gboolean tg__condition_while (const TgLaunch *launch, const gint32 *flag,
                              guint max_iters, TgLoopStatus *status, TgDeviceFunc body,
                              gpointer data, GError **error);

/* runner.c: REPLAY from own graphs; frees them. */
gboolean tg__runner_replay (TgProducer *producer, const TgLaunch *base,
                            TgCondition condition, GError **error);
void tg__runner_free (TgProducer *producer);

/* policy.c: the policy table, a pure function of its inputs. */
gboolean tg__policy_decide (TgPolicy requested, TgCaptureState state,
                            const GError *record_refusal, const GError *replay_refusal,
                            TgPolicy *policy, GError **error);

G_END_DECLS

#endif
