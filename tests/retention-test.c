/* SPDX-License-Identifier: Apache-2.0 */
/* retention-test.c: what TrackGen ties to graphs (lib/exec/keep.c),
 * host side, against a stand-in for the driver's user objects: this
 * program defines cudaUserObjectCreate, cudaUserObjectRelease,
 * cudaGraphRetainUserObject and cudaLaunchHostFunc, which take the CUDA
 * runtime's place for the library linked into it.  As the driver does, the
 * stand-in runs destructors and host functions on one thread of its own, in
 * order, a moment after they are due.  So the registry's logic (one user
 * object per capture, none for an owner, tg_release_wait's accounting) is
 * checked on every machine; interop-test checks it against the real driver
 * on a GPU. */
#include "config.h"
#include "tg-test.h"
#include "../lib/exec/keep-private.h"
#include "../lib/exec/tsan-private.h"

/* The stand-in driver: a thread that runs what is posted, in order. */
typedef struct
{
  cudaHostFn_t fn;
  void *data;
} Call;

typedef struct
{
  gint refs;
  void *data;
  cudaHostFn_t destroy;
} FakeObject;

#define GRAPHS 4

static GAsyncQueue *driver;
static GPtrArray *graph_objects[GRAPHS]; /* what each stand-in graph holds */
static GPtrArray *stream_calls;          /* host functions behind a closed gate */
static gboolean stream_open;
static gint released;

static gpointer
driver_main (gpointer unused)
{
  for (;;)
    {
      Call *c = g_async_queue_pop (driver);

      TG_TSAN_ACQUIRE (c);
      g_usleep (2000);
      c->fn (c->data);
      g_free (c);
    }
  return NULL;
}

static void
post (cudaHostFn_t fn, void *data)
{
  Call *c = g_new (Call, 1);

  c->fn = fn;
  c->data = data;
  TG_TSAN_RELEASE (c);
  g_async_queue_push (driver, c);
}

cudaError_t
cudaUserObjectCreate (cudaUserObject_t *object, void *data, cudaHostFn_t destroy,
                      unsigned int count, unsigned int flags)
{
  FakeObject *o = g_new0 (FakeObject, 1);

  o->refs = count;
  o->data = data;
  o->destroy = destroy;
  *object = (cudaUserObject_t)o;
  return cudaSuccess;
}

cudaError_t
cudaUserObjectRelease (cudaUserObject_t object, unsigned int count)
{
  FakeObject *o = (FakeObject *)object;

  if (g_atomic_int_add (&o->refs, -(gint)count) == (gint)count)
    {
      post (o->destroy, o->data);
      g_free (o);
    }
  return cudaSuccess;
}

cudaError_t
cudaGraphRetainUserObject (cudaGraph_t graph, cudaUserObject_t object,
                           unsigned int count, unsigned int flags)
{
  g_assert_cmpuint (flags, ==, cudaGraphUserObjectMove);
  g_ptr_array_add (graph_objects[GPOINTER_TO_INT (graph)], object);
  return cudaSuccess;
}

cudaError_t
cudaLaunchHostFunc (cudaStream_t stream, cudaHostFn_t fn, void *data)
{
  Call *c;

  if (stream_open)
    {
      post (fn, data);
      return cudaSuccess;
    }
  c = g_new (Call, 1);
  c->fn = fn;
  c->data = data;
  g_ptr_array_add (stream_calls, c);
  return cudaSuccess;
}

/* An executable made from stand-in graph @g, as stand-in graph @exec: it
 * holds a reference of its own to each user object @g holds. */
static void
graph_instantiate (int g, int exec)
{
  for (guint i = 0; i < graph_objects[g]->len; i++)
    {
      FakeObject *o = graph_objects[g]->pdata[i];

      g_atomic_int_inc (&o->refs);
      g_ptr_array_add (graph_objects[exec], o);
    }
}

/* Stand-in graph @g destroyed, with its executables: its references go. */
static void
graph_destroy (int g)
{
  for (guint i = 0; i < graph_objects[g]->len; i++)
    cudaUserObjectRelease (graph_objects[g]->pdata[i], 1);
  g_ptr_array_set_size (graph_objects[g], 0);
}

static void
stream_run (void)
{
  stream_open = TRUE;
  for (guint i = 0; i < stream_calls->len; i++)
    {
      Call *c = stream_calls->pdata[i];
      post (c->fn, c->data);
      g_free (c);
    }
  g_ptr_array_set_size (stream_calls, 0);
}

static void
item_release (gpointer data)
{
  g_atomic_int_inc (&released);
}

static void
retain (int graph, unsigned long long capture_id, guint n)
{
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_assert_true (tg__keep_retain ((cudaGraph_t)GINT_TO_POINTER (graph), capture_id,
                                      NULL, item_release, &error));
      g_assert_no_error (error);
    }
}

/* Waits (at most 10 s) until @n releases ran: a destroyed graph's
 * destructor comes a moment later, and tg__keep_release_wait() cannot wait
 * for it alone while another graph lives. */
static void
wait_released (gint n)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_atomic_int_get (&released) < n && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_cmpint (g_atomic_int_get (&released), ==, n);
}

static void
set_up (void)
{
  g_atomic_int_set (&released, 0);
  stream_open = FALSE;
  g_assert_cmpint (tg_test_user_objects (), ==, 0);
}

/* However much one capture keeps, one user object; a bare graph (no
 * capture id) one per call.  What live graphs hold is waited for: a wait
 * lasts its timeout while one lives. */
static void
test_one_per_capture (void)
{
  set_up ();
  retain (1, 7, 5);
  g_assert_cmpint (tg_test_user_objects (), ==, 1);
  retain (2, 0, 2);
  g_assert_cmpint (tg_test_user_objects (), ==, 3);
  g_assert_false (tg__keep_release_wait (0));
  g_assert_false (tg__keep_release_wait (100 * 1000));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 0);

  /* Destroyed: its destructor comes a moment later (the other graph still
   * holds its own). */
  graph_destroy (1);
  wait_released (5);
  g_assert_false (tg__keep_release_wait (0));
  g_assert_cmpint (tg_test_user_objects (), ==, 2);
  graph_destroy (2);
  g_assert_true (tg__keep_release_wait (G_USEC_PER_SEC));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 7);
  g_assert_cmpint (tg_test_user_objects (), ==, 0);
}

/* An owner holds a capture's references: no user object; they go once the
 * stream's work ran; later retentions into the capture get one. */
static void
test_owner (void)
{
  g_autoptr (GError) error = NULL;
  TgHold *hold;

  set_up ();
  hold = tg__keep_hold_new (9, &error);
  g_assert_no_error (error);
  g_assert_null (tg__keep_hold_new (9, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
  retain (3, 9, 3);
  g_assert_cmpint (tg_test_user_objects (), ==, 0);

  tg__keep_hold_release (hold, NULL);
  g_assert_false (tg__keep_release_wait (50 * 1000));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 0);
  stream_run ();
  g_assert_true (tg__keep_release_wait (G_MAXINT64));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 3);

  retain (3, 9, 1);
  g_assert_cmpint (tg_test_user_objects (), ==, 1);
  graph_destroy (3);
  g_assert_true (tg__keep_release_wait (G_USEC_PER_SEC));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 4);
  g_assert_cmpint (tg_test_user_objects (), ==, 0);
}

/* A destroyed graph's handle is reused while an executable made from it
 * still holds its user object: the new graph's capture gets one of its own,
 * released with the new graph, not with the old executable. */
static void
test_graph_handle_reused (void)
{
  set_up ();
  retain (1, 11, 2);
  graph_instantiate (1, 3);
  graph_destroy (1);
  /* Graph 1's handle again, a new capture. */
  retain (1, 12, 3);
  g_assert_cmpint (tg_test_user_objects (), ==, 2);
  graph_destroy (1);
  /* The old executable still holds the first capture's. */
  wait_released (3);
  g_assert_false (tg__keep_release_wait (0));
  graph_destroy (3);
  g_assert_true (tg__keep_release_wait (G_USEC_PER_SEC));
  g_assert_cmpint (g_atomic_int_get (&released), ==, 5);
  g_assert_cmpint (tg_test_user_objects (), ==, 0);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  driver = g_async_queue_new ();
  stream_calls = g_ptr_array_new ();
  for (int g = 0; g < GRAPHS; g++)
    graph_objects[g] = g_ptr_array_new ();
  g_thread_unref (g_thread_new ("driver", driver_main, NULL));
  g_test_add_func ("/retention/registry/one-per-capture", test_one_per_capture);
  g_test_add_func ("/retention/registry/owner", test_owner);
  g_test_add_func ("/retention/registry/graph-handle-reused", test_graph_handle_reused);
  return g_test_run ();
}
