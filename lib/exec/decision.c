/* SPDX-License-Identifier: Apache-2.0 */
/* decision.c: eager decisions through mapped host memory.  See
 * decision-private.h.
 *
 * Why a word of mapped memory and not a copy: a readback (cudaMemcpyAsync to
 * pinned memory, then cudaStreamSynchronize) enqueues a copy after the
 * kernel that decides, and the host learns the value only once the stream
 * reports the copy complete.  Here the deciding kernel stores the value
 * itself, and the host sees it when the store lands, before the kernel has
 * even retired: one launch fewer per decision, and no completion to wait for.
 *
 * Why a sequence number: the words are reused, so the host must tell this
 * decision's value from an earlier one's.  Value and number travel in one
 * aligned 64-bit store, so the host never sees one without the other: the
 * same bet as NCCL's LL protocol, whose 8-byte stores carry 4 bytes of data
 * and a 4-byte flag that the reader polls, through host memory too. */
#include "config.h"
#include "condition-kernels-private.h"
#include "decision-private.h"
#include "resource-private.h"

#include <string.h>

/* One page of words per block: decisions nest as deep as conditions do. */
#define WORDS_PER_BLOCK 512

/* How long a wait spins before it blocks in cudaStreamSynchronize.  A
 * decision usually follows little work (a set kernel, the last kernel of a
 * loop body): a spin sees its word microseconds after the store.  Longer
 * work before it is waited for the way the application asked the runtime
 * to wait (its device flags), not by burning a core. */
#define SPIN_US 200

typedef struct
{
  guint64 *host;
  guint64 *device;
} Block;

/* The blocks array's free function: the producer frees the blocks by
 * dropping the array, with no call into this file. */
static void
block_free (gpointer data)
{
  Block *b = data;

  tg__host_free (b->host);
  g_free (b);
}

/* The word decision number @slot uses, host and device addresses; the
 * blocks are made on first use, on the producer's device (current during a
 * call). */
static gboolean
word_at (TgProducer *p, guint slot, guint64 **host, guint64 **device, GError **error)
{
  const gsize size = WORDS_PER_BLOCK * sizeof (guint64);
  Block *b;

  if (p->decision_words == NULL)
    {
      gboolean blocks;

      if (!tg__device_blocks_on_sync (&blocks, error))
        return FALSE;
      p->decision_spin_us = blocks ? 0 : SPIN_US;
      p->decision_words = g_ptr_array_new_with_free_func (block_free);
    }
  while (p->decision_words->len <= slot / WORDS_PER_BLOCK)
    {
      gpointer dev = NULL;
      gpointer mem = tg__host_alloc_mapped (size, &dev, error);

      if (mem == NULL)
        return FALSE;
      /* Sequence number 0 is never handed out: no word reads as written. */
      memset (mem, 0, size);
      b = g_new (Block, 1);
      b->host = mem;
      b->device = dev;
      g_ptr_array_add (p->decision_words, b);
    }
  b = p->decision_words->pdata[slot / WORDS_PER_BLOCK];
  *host = b->host + slot % WORDS_PER_BLOCK;
  *device = b->device + slot % WORDS_PER_BLOCK;
  return TRUE;
}

gboolean
tg__decision_open (TgProducer *p, TgDeviceCondition *c, GError **error)
{
  guint64 *host, *device;

  if (!word_at (p, p->n_decisions_open, &host, &device, error))
    return FALSE;
  p->n_decisions_open++;
  if (++p->decision_seq == 0)
    p->decision_seq = 1;
  *c = (TgDeviceCondition){ .how = TG_DEVICE_CONDITION_HOST,
                            .seq = p->decision_seq,
                            .word = (unsigned long long *)device };
  return TRUE;
}

static inline guint64
word_load (const guint64 *word)
{
  /* The GPU's store reaches memory by DMA, which x86 and Arm keep coherent
   * with the CPU's caches; the load must only not be hoisted or torn. */
  return __atomic_load_n (word, __ATOMIC_ACQUIRE);
}

static inline void
cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Spins until @word holds @seq, at most @budget_us; *@out is the word. */
static gboolean
spin (const guint64 *word, guint32 seq, gint64 budget_us, guint64 *out)
{
  gint64 deadline = 0;

  for (guint n = 0;; n++)
    {
      guint64 w = word_load (word);

      if ((guint32)(w >> 32) == seq)
        {
          *out = w;
          return TRUE;
        }
      if (budget_us <= 0)
        return FALSE;
      /* A look costs nanoseconds, a clock read tens: read it now and then. */
      if (n % 64 == 0)
        {
          gint64 now = g_get_monotonic_time ();

          if (n == 0)
            deadline = now + budget_us;
          else if (now >= deadline)
            return FALSE;
        }
      cpu_relax ();
    }
}

gboolean
tg__decision_wait (TgProducer *p, cudaStream_t stream, const TgDeviceCondition *c,
                   const char *writer, guint32 *value, GError **error)
{
  guint64 *host, *device;
  guint64 w = 0;
  gboolean ok = TRUE;

  g_assert (p->n_decisions_open > 0);
  /* The innermost open decision's word exists: tg__decision_open made it. */
  (void)word_at (p, p->n_decisions_open - 1, &host, &device, NULL);
  g_assert ((unsigned long long *)device == c->word);
  if (!spin (host, c->seq, p->decision_spin_us, &w))
    {
      /* Long work ahead of the writer, or no writer: once the stream is
       * idle, every store of its kernels is visible. */
      ok = tg__stream_synchronize (stream, error);
      w = word_load (host);
      if (ok && (guint32)(w >> 32) != c->seq)
        {
          tg__set_error (
              error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
              "%s set no decision: one thread of a kernel it enqueues on the launch "
              "context's stream must call tg_condition_set() (tg_loop_next() in a "
              "loop body) with the value tg_launch_get_condition() "
              "(tg_launch_get_loop()) gave, once per decision",
              writer);
          ok = FALSE;
        }
    }
  p->n_decisions_open--;
  if (ok)
    *value = (guint32)w;
  return ok;
}

void
tg__decision_abandon (TgProducer *p, cudaStream_t stream)
{
  GError *ignored = NULL;

  g_assert (p->n_decisions_open > 0);
  /* The call already failed with its own error; this one adds nothing. */
  if (!tg__stream_synchronize (stream, &ignored))
    g_error_free (ignored);
  p->n_decisions_open--;
}

gboolean
tg__decision_read_flag (TgProducer *p, cudaStream_t stream, const gint32 *flag,
                        gboolean *set, GError **error)
{
  TgDeviceCondition c;
  guint32 value = 0;

  if (!tg__decision_open (p, &c, error))
    return FALSE;
  if (!TG_CUDA_OK (tg__launch_if_set (stream, c, flag), error))
    {
      tg__decision_abandon (p, stream);
      return FALSE;
    }
  if (!tg__decision_wait (p, stream, &c, "TrackGen's set kernel", &value, error))
    return FALSE;
  *set = value != 0;
  return TRUE;
}
