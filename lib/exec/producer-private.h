/* producer-private.h: the producer, its stages and bindings, the launch
 * context, and the producer's lock and private resources (producer.c).
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

  guint64 generation;         /* bumped by every change of a binding */
  guint64 bindings_checked;   /* 1 + the generation check_bindings passed at */
  const gint32 *flag_checked; /* the last call condition's flag found valid */
  gboolean captured;          /* an own graph exists, or it was recorded */

  /* Lazily created, on the producer's device. */
  cudaStream_t private_stream; /* own captures and RECORD trial captures */
  GPtrArray *side_streams;     /* body captures, one per nesting depth */
  /* Eager decisions (decision.c): blocks of mapped host words, made on
   * first use; the decisions open now (the next one takes word
   * n_decisions_open); the last sequence number handed out; how long a wait
   * spins before it blocks. */
  GPtrArray *decision_words;
  guint n_decisions_open;
  guint32 decision_seq;
  gint64 decision_spin_us;

  GArray *segments; /* REPLAY's own graphs (runner.c), freed by the array */
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

/* Enters a producer for a call (waits for a call on another
 * thread; BUSY when this thread is already inside it). */
gboolean tg__producer_lock (TgProducer *producer, GError **error);
void tg__producer_unlock (TgProducer *producer);

/* The buffer bound as @name, for callers inside a call. */
gpointer tg__producer_binding (const TgProducer *producer, const char *name,
                               gsize *size);

/* Lazily made private resources. */
cudaStream_t tg__producer_private_stream (TgProducer *producer, GError **error);
cudaStream_t tg__producer_side_stream (TgProducer *producer, guint depth,
                                       GError **error);

G_END_DECLS

#endif
