/* SPDX-License-Identifier: Apache-2.0 */
// track-env.cuh: one env's track, made by a block of TRACK_BLOCK threads:
// its control points, its centerline, the relaxation of its sharp turns and
// its validity.  C++, for the .cu files of the track producer: the staged
// kernels of on-demand generation (track-kernels.cu) and the fused kernel of
// the lookahead's refill (track-lookahead.cu).
//
// Deterministic by construction: each value is computed by one thread in a
// fixed order, sums go through a fixed-order block scan, reductions are
// maxima or ORs (exact in any order), and there are no float atomics.  The
// random numbers come from cuRAND's Philox, keyed by the env's effective
// seed: control point k draws from subsequence k, the env-wide draws of a
// family from ENV_SUBSEQ, so no draw depends on which thread makes it.
//
// The functions that compute a track's floats are __noinline__: each is
// compiled once per .cu file, the same code whichever kernel calls it, so a
// track made by the staged kernels and one made by the fused kernel are the
// same bit for bit (inlined, the compiler could contract or order the
// arithmetic differently in each caller).  Each ends past a barrier, so the
// block can go on to another env.
#ifndef TRACK_ENV_CUH
#define TRACK_ENV_CUH

#include <cfloat>
#include <curand_kernel.h>
#include <stdint.h>

#include "track-shape.h"

#define PI_F 3.14159265358979f
#define DENSE 4            // Catmull-Rom samples per output point, before resampling
#define SMOOTH_PASSES 8    // Laplacian passes per relaxation iteration
#define SMOOTH_LAMBDA 0.5f // how far a pass moves a point towards its neighbours' mean
#define ENV_SUBSEQ TRACK_MAX_CONTROL // past every control point's subsequence

static __device__ __forceinline__ float2
sub (float2 a, float2 b)
{
  return make_float2 (a.x - b.x, a.y - b.y);
}

static __device__ __forceinline__ float
length (float2 a)
{
  return sqrtf (a.x * a.x + a.y * a.y);
}

static __device__ __forceinline__ float
cross (float2 a, float2 b)
{
  return a.x * b.y - a.y * b.x;
}

// Curvature at @b: turning angle over the mean length of the two segments.
static __device__ float
curvature (float2 a, float2 b, float2 c)
{
  float2 u = sub (b, a), v = sub (c, b);
  float len = length (u) + length (v);
  float turn = atan2f (fabsf (cross (u, v)), u.x * v.x + u.y * v.y);

  return len > 0.f ? 2.f * turn / len : FLT_MAX;
}

// The neighbours of point @i (0 <= i < n) of a closed polyline: the same
// indices as (i + n - 1) % n and (i + 1) % n, without an integer division
// by the run-time n in the kernels' inner loops.
static __device__ __forceinline__ int
prev_of (int i, int n)
{
  return i > 0 ? i - 1 : n - 1;
}

static __device__ __forceinline__ int
next_of (int i, int n)
{
  return i + 1 < n ? i + 1 : 0;
}

static __device__ float
block_max (float v, float *scratch)
{
  scratch[threadIdx.x] = v;
  __syncthreads ();
  for (int s = TRACK_BLOCK / 2; s > 0; s >>= 1)
    {
      if (threadIdx.x < s)
        scratch[threadIdx.x] = fmaxf (scratch[threadIdx.x], scratch[threadIdx.x + s]);
      __syncthreads ();
    }
  v = scratch[0];
  __syncthreads ();
  return v;
}

// Inclusive prefix sum of @vals[0, n) into @cum, in a fixed order (a
// sequential run per thread, then a Hillis-Steele scan of the runs), so
// every launch adds the same floats in the same order.  Returns the total.
static __device__ float
block_scan (const float *vals, float *cum, int n, float *scratch)
{
  int t = threadIdx.x;
  int chunk = (n + TRACK_BLOCK - 1) / TRACK_BLOCK;
  int lo = min (t * chunk, n), hi = min (lo + chunk, n);
  float run = 0.f, base, total;

  for (int m = lo; m < hi; m++)
    cum[m] = run += vals[m];
  scratch[t] = run;
  __syncthreads ();
  for (int off = 1; off < TRACK_BLOCK; off <<= 1)
    {
      float v = t >= off ? scratch[t - off] : 0.f;
      __syncthreads ();
      scratch[t] += v;
      __syncthreads ();
    }
  base = t > 0 ? scratch[t - 1] : 0.f;
  for (int m = lo; m < hi; m++)
    cum[m] += base;
  total = scratch[TRACK_BLOCK - 1];
  __syncthreads ();
  return total;
}

// The sharpest curvature of the closed polyline @pts, times @min_turn_radius.
static __device__ float
sharpness_of (const float2 *pts, int n, float min_turn_radius, float *scratch)
{
  float m = 0.f;

  for (int i = threadIdx.x; i < n; i += TRACK_BLOCK)
    m = fmaxf (m, curvature (pts[prev_of (i, n)], pts[i], pts[next_of (i, n)]));
  return block_max (m, scratch) * min_turn_radius;
}

static __device__ float2
catmull_rom (float2 p0, float2 p1, float2 p2, float2 p3, float u)
{
  float u2 = u * u, u3 = u2 * u;
  float2 r;

  r.x = 0.5f
        * (2.f * p1.x + (p2.x - p0.x) * u
           + (2.f * p0.x - 5.f * p1.x + 4.f * p2.x - p3.x) * u2
           + (3.f * p1.x - p0.x - 3.f * p2.x + p3.x) * u3);
  r.y = 0.5f
        * (2.f * p1.y + (p2.y - p0.y) * u
           + (2.f * p0.y - 5.f * p1.y + 4.f * p2.y - p3.y) * u2
           + (3.f * p1.y - p0.y - 3.f * p2.y + p3.y) * u3);
  return r;
}

static __device__ float2
rotate (float2 p, float angle)
{
  float s, c;

  sincosf (angle, &s, &c);
  return make_float2 (c * p.x - s * p.y, s * p.x + c * p.y);
}

// Polar: point k in its sector of the circle, with angle and radius jitter.
static __device__ float2
polar_point (const TrackShape &shape, int k, float4 u)
{
  float a = 2.f * PI_F * ((float)k + shape.angle_jitter * (u.x - 0.5f))
            / (float)shape.n_control;
  float r = shape.radius * (1.f + shape.radius_jitter * (2.f * u.y - 1.f));
  float s, c;

  sincosf (a, &s, &c);
  return make_float2 (r * c, r * s);
}

// The point at arc length @l of the stadium whose half circles of radius @re
// are centred at (-@half, 0) and (@half, 0), counter-clockwise from the left
// end of its bottom straight, and the outward normal there.
static __device__ float2
stadium_at (float re, float half, float l, float2 *normal)
{
  float s, c;

  if (l < 2.f * half)
    {
      *normal = make_float2 (0.f, -1.f);
      return make_float2 (l - half, -re);
    }
  l -= 2.f * half;
  if (l < PI_F * re)
    {
      sincosf (l / re - 0.5f * PI_F, &s, &c);
      *normal = make_float2 (c, s);
      return make_float2 (half + re * c, re * s);
    }
  l -= PI_F * re;
  if (l < 2.f * half)
    {
      *normal = make_float2 (0.f, 1.f);
      return make_float2 (half - l, re);
    }
  l -= 2.f * half;
  sincosf (l / re + 0.5f * PI_F, &s, &c);
  *normal = make_float2 (c, s);
  return make_float2 (re * c - half, re * s);
}

// Stadium: K points at evenly spaced arc lengths from a random phase, each
// pushed along the normal by up to half the radius jitter of the end
// radius, then the stadium turned by a random heading.  Point k + K/2 (K
// even) lies opposite point k, up to those pushes.
static __device__ float2
stadium_point (const TrackShape &shape, int k, float4 u, float4 env)
{
  float re = shape.radius * (0.45f + 0.15f * env.x);
  float half = shape.radius * (0.35f + 0.45f * env.y);
  float perimeter = 4.f * half + 2.f * PI_F * re;
  float push = 0.5f * shape.radius_jitter * re * (2.f * u.y - 1.f);
  float2 normal, p;

  p = stadium_at (re, half, perimeter * ((float)k + env.w) / (float)shape.n_control,
                  &normal);
  return rotate (make_float2 (p.x + push * normal.x, p.y + push * normal.y),
                 2.f * PI_F * env.z);
}

// Star: alternating outer (even k) and inner (odd k) radii 15 to 25 % off
// the mean, a tenth of the radius jitter, and half the angle jitter, turned
// by a random angle.  Even points always lie outside the mean radius, odd
// ones inside.  The tips are hairpins for the relaxation to open.
static __device__ float2
star_point (const TrackShape &shape, int k, float4 u, float4 env)
{
  float depth = 0.15f + 0.1f * env.x;
  float a = 2.f * PI_F
            * ((float)k + 0.5f * shape.angle_jitter * (u.x - 0.5f) + 2.f * env.y)
            / (float)shape.n_control;
  float r = shape.radius * (k % 2 == 0 ? 1.f + depth : 1.f - depth)
            * (1.f + 0.1f * shape.radius_jitter * (2.f * u.y - 1.f));
  float s, c;

  sincosf (a, &s, &c);
  return make_float2 (r * c, r * s);
}

// Control point k of family F for the env of effective seed @key.
template <int F>
static __device__ float2
control_point (const TrackShape &shape, uint64_t key, int k)
{
  curandStatePhilox4_32_10_t rng;
  float4 u, env;

  curand_init (key, k, 0, &rng);
  u = curand_uniform4 (&rng);
  if (F == TRACK_FAMILY_POLAR)
    return polar_point (shape, k, u);
  curand_init (key, ENV_SUBSEQ, 0, &rng);
  env = curand_uniform4 (&rng);
  return F == TRACK_FAMILY_STADIUM ? stadium_point (shape, k, u, env)
                                   : star_point (shape, k, u, env);
}

// The control points of @family (a TrackFamily) for the env of effective
// seed @key, a thread each, into @ctrl (shared) and @control (the env's row).
static __device__ __noinline__ void
control_env (TrackShape shape, int family, uint64_t key, float2 *ctrl, float2 *control)
{
  for (int k = threadIdx.x; k < (int)shape.n_control; k += TRACK_BLOCK)
    {
      float2 p = family == TRACK_FAMILY_POLAR
                     ? control_point<TRACK_FAMILY_POLAR> (shape, key, k)
                 : family == TRACK_FAMILY_STADIUM
                     ? control_point<TRACK_FAMILY_STADIUM> (shape, key, k)
                     : control_point<TRACK_FAMILY_STAR> (shape, key, k);

      ctrl[k] = p;
      control[k] = p;
    }
  __syncthreads ();
}

// The shared memory centerline_env() takes, in bytes; the largest of a track.
static inline size_t
track_env_smem (TrackShape shape)
{
  size_t d_n = (size_t)DENSE * shape.n_points;

  return (shape.n_control + d_n + shape.n_points) * sizeof (float2)
         + (2 * d_n + TRACK_BLOCK) * sizeof (float);
}

// The env's centerline into @points (its row), from its control points,
// which @smem (track_env_smem() bytes) starts with; returns its sharpness,
// on every thread.
static __device__ __noinline__ float
centerline_env (TrackShape shape, float2 *points, float2 *smem)
{
  const int t = threadIdx.x, n = shape.n_points, k_n = shape.n_control;
  const int d_n = DENSE * n;
  float2 *ctrl = smem, *dense = ctrl + k_n, *pts = dense + d_n;
  float *len = (float *)(pts + n), *cum = len + d_n, *scratch = cum + d_n;
  float total;

  // A dense closed Catmull-Rom curve through the control points ...
  for (int j = t; j < d_n; j += TRACK_BLOCK)
    {
      int q = j * k_n, seg = q / d_n;
      float u = (float)(q % d_n) / (float)d_n;

      dense[j]
          = catmull_rom (ctrl[prev_of (seg, k_n)], ctrl[seg], ctrl[next_of (seg, k_n)],
                         ctrl[next_of (next_of (seg, k_n), k_n)], u);
    }
  __syncthreads ();
  for (int j = t; j < d_n; j += TRACK_BLOCK)
    len[j] = length (sub (dense[next_of (j, d_n)], dense[j]));
  __syncthreads ();
  total = block_scan (len, cum, d_n, scratch);

  // ... resampled to n points evenly spaced by arc length.
  for (int i = t; i < n; i += TRACK_BLOCK)
    {
      float s = total * (float)i / (float)n, f;
      int lo = 0, hi = d_n - 1;
      float2 a, b, p;

      while (lo < hi) // the first dense segment that ends past s
        {
          int mid = (lo + hi) / 2;
          if (cum[mid] > s)
            hi = mid;
          else
            lo = mid + 1;
        }
      f = len[lo] > 0.f ? (s - (cum[lo] - len[lo])) / len[lo] : 0.f;
      f = fminf (fmaxf (f, 0.f), 1.f);
      a = dense[lo];
      b = dense[next_of (lo, d_n)];
      p = make_float2 (a.x + f * (b.x - a.x), a.y + f * (b.y - a.y));
      pts[i] = p;
      points[i] = p;
    }
  __syncthreads ();
  return sharpness_of (pts, n, shape.min_turn_radius, scratch);
}

// Smooths the env's track @env (its row) around the points that turn too
// sharply, in @cur and @nxt (n points each), @hot (n) and @scratch
// (TRACK_BLOCK); returns its new sharpness, on every thread.
static __device__ __noinline__ float
relax_env (TrackShape shape, float2 *env, float2 *cur, float2 *nxt, uint8_t *hot,
           float *scratch)
{
  const int t = threadIdx.x, n = shape.n_points;

  for (int i = t; i < n; i += TRACK_BLOCK)
    cur[i] = env[i];
  __syncthreads ();

  for (int pass = 0; pass < SMOOTH_PASSES; pass++)
    {
      float2 *tmp;

      for (int i = t; i < n; i += TRACK_BLOCK)
        hot[i] = curvature (cur[prev_of (i, n)], cur[i], cur[next_of (i, n)])
                     * shape.min_turn_radius
                 > 1.f;
      __syncthreads ();
      // Jacobi update: every point moves from the previous pass's positions.
      for (int i = t; i < n; i += TRACK_BLOCK)
        {
          int prev = prev_of (i, n), next = next_of (i, n);
          float2 p = cur[i];

          if (hot[prev] | hot[i] | hot[next])
            {
              p.x += SMOOTH_LAMBDA * (0.5f * (cur[prev].x + cur[next].x) - p.x);
              p.y += SMOOTH_LAMBDA * (0.5f * (cur[prev].y + cur[next].y) - p.y);
            }
          nxt[i] = p;
        }
      __syncthreads ();
      tmp = cur;
      cur = nxt;
      nxt = tmp;
    }

  for (int i = t; i < n; i += TRACK_BLOCK)
    env[i] = cur[i];
  return sharpness_of (cur, n, shape.min_turn_radius, scratch);
}

static __device__ bool
opposite (float p, float q)
{
  return (p < 0.f && q > 0.f) || (p > 0.f && q < 0.f);
}

// Whether segments ab and cd cross at a point inside both.
static __device__ bool
segments_cross (float2 a, float2 b, float2 c, float2 d)
{
  return opposite (cross (sub (b, a), sub (c, a)), cross (sub (b, a), sub (d, a)))
         && opposite (cross (sub (d, c), sub (a, c)), cross (sub (d, c), sub (b, c)));
}

// Whether the env's track @points (its row) is valid, on every thread, with
// @pts (n points), @seg and @arc (n each) and @scratch (TRACK_BLOCK).
static __device__ __noinline__ bool
valid_env (TrackShape shape, const float2 *points, float2 *pts, float *seg, float *arc,
           float *scratch)
{
  const int t = threadIdx.x, n = shape.n_points;
  // Two centerline points closer than the width overlap the track, unless
  // they are near along it: a turn of radius >= width/2 brings points half
  // a circle apart (pi * width / 2 along) no closer than the width.
  const float w = shape.width, near = 0.5f * PI_F * w;
  float total;
  int bad = 0;

  for (int i = t; i < n; i += TRACK_BLOCK)
    pts[i] = points[i];
  __syncthreads ();
  for (int i = t; i < n; i += TRACK_BLOCK)
    seg[i] = length (sub (pts[next_of (i, n)], pts[i]));
  __syncthreads ();
  total = block_scan (seg, arc, n, scratch); // arc[i]: length up to point i + 1

  // Every pair of points once, the same share for every thread (a pair's
  // tests are symmetric, so which point leads does not change the result):
  // point i with the d = 1 .. n/2 points after it around the loop, d = n/2
  // from the first half only.  A thread per point and its j > i took up to
  // n - 1 pairs on one thread, and one masked env waited for that thread.
  for (int i = t; i < n && !bad; i += TRACK_BLOCK)
    {
      float2 a = pts[i], b = pts[next_of (i, n)];
      float at = i > 0 ? arc[i - 1] : 0.f;
      int last = i < n / 2 ? n / 2 : n / 2 - 1;

      for (int d = 1, j = next_of (i, n); d <= last && !bad; d++, j = next_of (j, n))
        {
          float along = fabsf ((j > 0 ? arc[j - 1] : 0.f) - at);

          along = fminf (along, total - along);
          if (along > near && length (sub (pts[j], a)) < w)
            bad = 1;
          // Segments i and j, unless they share a point (n >= 32: d >= 2
          // leaves them apart on both sides).
          else if (d >= 2 && segments_cross (a, b, pts[j], pts[next_of (j, n)]))
            bad = 1;
        }
    }
  return !__syncthreads_or (bad);
}

#endif // TRACK_ENV_CUH
