/* SPDX-License-Identifier: Apache-2.0 */
/* tsan-private.h: the orderings ThreadSanitizer cannot see by itself.
 *
 * GLib's GMutex, GCond, GOnce and GAsyncQueue synchronize inside libglib
 * (futexes and atomics that TSan does not instrument), so a TSan build sees
 * no happens-before through them and reports races on the data they guard.
 * TrackGen states each such ordering with TSan's own annotations: a release
 * where a thread hands state over (unlock, push, once done), an acquire where
 * another takes it (lock, pop, once passed).  Without -fsanitize=thread
 * these are the plain GLib calls.  Private to libtrackgen. */
#ifndef TG_TSAN_PRIVATE_H
#define TG_TSAN_PRIVATE_H

#include <glib.h>

#if defined(__SANITIZE_THREAD__)
#define TG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TG_TSAN 1
#endif
#endif

#ifdef TG_TSAN
#include <sanitizer/tsan_interface.h>
#define TG_TSAN_ACQUIRE(addr) __tsan_acquire ((void *)(addr))
#define TG_TSAN_RELEASE(addr) __tsan_release ((void *)(addr))
#else
#define TG_TSAN_ACQUIRE(addr) ((void)0)
#define TG_TSAN_RELEASE(addr) ((void)0)
#endif

G_BEGIN_DECLS

static inline void
tg__mutex_lock (GMutex *mutex)
{
  g_mutex_lock (mutex);
  TG_TSAN_ACQUIRE (mutex);
}

static inline void
tg__mutex_unlock (GMutex *mutex)
{
  TG_TSAN_RELEASE (mutex);
  g_mutex_unlock (mutex);
}

/* A wait unlocks @mutex and locks it again. */
static inline void
tg__cond_wait (GCond *cond, GMutex *mutex)
{
  TG_TSAN_RELEASE (mutex);
  g_cond_wait (cond, mutex);
  TG_TSAN_ACQUIRE (mutex);
}

static inline gboolean
tg__cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  gboolean signalled;

  TG_TSAN_RELEASE (mutex);
  signalled = g_cond_wait_until (cond, mutex, end_time);
  TG_TSAN_ACQUIRE (mutex);
  return signalled;
}

G_END_DECLS

#endif
