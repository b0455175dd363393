/* SPDX-License-Identifier: Apache-2.0 */
/* runner.c: REPLAY.  Each maximal run of device stages is captured once into
 * a graph of the producer's own (thread-local mode, on its private stream,
 * never the caller's), instantiated once, and launched on the caller's
 * stream; HOST stages run on the host between the launches.  A rebind
 * refreshes a graph in place with cudaGraphExecUpdate when the topology
 * allows, else re-instantiates it. */
#include "config.h"
#include "decision-private.h"
#include "driver-private.h"
#include "keep-private.h"
#include "resource-private.h"
#include "runner-private.h"
#include "stages-private.h"

/* One instantiated own graph of a device segment. */
typedef struct
{
  cudaGraphExec_t exec;
  guint64 generation; /* the producer's binding generation it was captured at */
  const gint32 *flag; /* the call condition's flag baked in, or NULL */
  GPtrArray *kept;    /* what its stages kept (tg_launch_keep), or NULL */
} OwnGraph;

/* A maximal run of device stages; HOST stages lie between segments. */
typedef struct
{
  guint first, n;
  OwnGraph graphs[2]; /* [0] unconditional call, [1] conditional call */
} Segment;

/* The segments array's clear function: the producer frees its segments by
 * dropping the array, with no call into this file. */
static void
segment_clear (gpointer data)
{
  Segment *seg = data;

  for (guint v = 0; v < G_N_ELEMENTS (seg->graphs); v++)
    {
      tg__graph_exec_free (seg->graphs[v].exec);
      g_clear_pointer (&seg->graphs[v].kept, g_ptr_array_unref);
    }
}

static void
make_segments (TgProducer *p)
{
  Segment seg = { 0 };

  p->segments = g_array_new (FALSE, TRUE, sizeof (Segment));
  g_array_set_clear_func (p->segments, segment_clear);
  for (guint i = 0; i <= p->stages->len; i++)
    {
      gboolean host = i < p->stages->len
                      && ((TgStage *)p->stages->pdata[i])->kind == TG_STAGE_KIND_HOST;
      if (i == p->stages->len || host)
        {
          if (seg.n > 0)
            g_array_append_val (p->segments, seg);
          seg = (Segment){ 0 };
          seg.first = i + 1;
        }
      else
        seg.n++;
    }
}

/* Makes @og current: first capture, or refresh after a rebind or a new flag. */
static gboolean
own_graph_ensure (TgProducer *p, const TgLaunch *base, const Segment *seg, OwnGraph *og,
                  const gint32 *flag, GError **error)
{
  gboolean rebind = og->generation != p->generation, ok = TRUE;
  TgStagesCall call = { seg->first, seg->n, flag };
  TgLaunch capture;
  GPtrArray *kept = NULL;
  cudaGraph_t graph = NULL;

  if (og->exec != NULL && !rebind && og->flag == flag)
    return TRUE;
  capture = *base;
  /* What the stages keep lives as long as this graph's executable holds
   * their work: until the next capture replaces it. */
  capture.kept = &kept;
  if (!tg__stages_capture (p, &capture, cudaStreamCaptureModeThreadLocal,
                           tg__stages_call, &call, &graph, error))
    {
      g_clear_pointer (&kept, g_ptr_array_unref);
      return FALSE;
    }
  p->stats.n_captures++;
  if (og->exec == NULL)
    ok = tg__graph_instantiate (graph, &og->exec, error);
  else if (tg__graph_exec_update (og->exec, graph))
    {
      p->stats.n_updates++;
      if (rebind)
        p->stats.last_rebind = TG_REBIND_UPDATED;
    }
  else
    {
      g_clear_pointer (&og->exec, tg__graph_exec_free);
      ok = tg__graph_instantiate (graph, &og->exec, error);
      p->stats.n_recaptures++;
      if (rebind)
        p->stats.last_rebind = TG_REBIND_RECAPTURED;
    }
  tg__graph_free (graph);
  if (!ok)
    {
      g_clear_pointer (&kept, g_ptr_array_unref);
      return FALSE;
    }
  /* A launch of the graph's old work may still be in flight on the stream. */
  if (og->kept != NULL)
    tg__keep_release_after (base->stream, og->kept, (GDestroyNotify)g_ptr_array_unref);
  og->kept = kept;
  og->generation = p->generation;
  og->flag = flag;
  p->captured = TRUE;
  return TRUE;
}

gboolean
tg__runner_replay (TgProducer *p, const TgLaunch *base, TgCondition condition,
                   GError **error)
{
  const gint32 *flag = condition.flag;
  guint next = 0;

  if (p->segments == NULL)
    make_segments (p);
  if (flag != NULL && p->first_host != NULL)
    {
      /* HOST stages cannot sit in an IF node: decide on the host, once. */
      gboolean set = FALSE;
      if (!tg__decision_read_flag (p, base->stream, flag, &set, error))
        return FALSE;
      if (!set)
        {
          p->n_replays++;
          return TRUE;
        }
      flag = NULL;
    }
  for (guint s = 0; s <= p->segments->len; s++)
    {
      Segment *seg
          = s < p->segments->len ? &g_array_index (p->segments, Segment, s) : NULL;
      TgStagesCall host
          = { next, (seg != NULL ? seg->first : p->stages->len) - next, NULL };
      OwnGraph *og;

      if (host.n > 0 && !tg__stages_call (base, &host, error))
        return FALSE;
      if (seg == NULL)
        break;
      og = &seg->graphs[flag != NULL];
      if (!own_graph_ensure (p, base, seg, og, flag, error)
          || !TG_CUDA_OK (tg__graph_launch (og->exec, base->stream), error))
        return FALSE;
      next = seg->first + seg->n;
    }
  /* With no HOST stage there is one segment, and the next unconditional
   * call only launches its graph (tg__runner_launch_current()). */
  if (condition.flag == NULL && p->first_host == NULL && p->segments->len == 1)
    p->replay_exec = g_array_index (p->segments, Segment, 0).graphs[0].exec;
  p->n_replays++;
  return TRUE;
}
