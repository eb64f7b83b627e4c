/* symshape CUDA emulation shim: the generated kernels, compiled as C++ for the CPU.
 *
 * A launch runs the grid's blocks one after another.  The threads of a block are
 * coroutines (ucontext) on one OS thread: each runs until it reaches __syncthreads()
 * or returns; when every thread of the block waits at the barrier, all resume (in a
 * different, pseudo-random order each phase, so a missing barrier shows as a wrong
 * result rather than hiding behind a lucky order).  A barrier reached by only some
 * threads of a block is reported as an error.  A warp shuffle (__shfl_xor_sync) waits
 * only for the 32 lanes of its own warp: when they have all reached it, every lane gets its
 * partner's value and resumes (a shuffle some lanes of a warp never reach is an error).
 * __shared__ variables are function statics: one copy, shared by the threads of the block
 * that is running.  Kernels without barriers or shuffles run their threads as plain calls.
 */
#ifndef SYMSHAPE_CUDA_SHIM_H
#define SYMSHAPE_CUDA_SHIM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

struct ss_uint3 { unsigned int x, y, z; };
static ss_uint3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
struct uint4 { unsigned int x, y, z, w; };
struct uint2 { unsigned int x, y; };

namespace ss_emu {

enum { READY = 0, AT_BARRIER = 1, DONE = 2, AT_SHFL = 3 };
enum { OK = 0, ERR_DIVERGENT_BARRIER = 1, ERR_BARRIER_IN_PLAIN = 2, ERR_NOMEM = 3,
       ERR_DIVERGENT_SHFL = 4 };

typedef void (*body_fn)(void*);

struct Sched {
  int nthreads;
  int cur;
  int error;
  int coroutines;
  ucontext_t main_ctx;
  ucontext_t* ctx;
  char* stacks;
  int* state;
  int* order;
  unsigned long long* shfl_in;    /* per thread: the value it offers at a shuffle */
  unsigned long long* shfl_out;   /* per thread: its partner's value */
  int* shfl_lane;                 /* per thread: the lane it reads */
  body_fn fn;
  void* arg;
  uint32_t seed;
};

static Sched S;
static const size_t STACK = 64 * 1024;

static void entry() {
  S.fn(S.arg);
  S.state[S.cur] = DONE;          /* uc_link returns to the scheduler */
}

static void set_thread(int t) {
  S.cur = t;
  threadIdx.x = (unsigned int)t % blockDim.x;
  threadIdx.y = ((unsigned int)t / blockDim.x) % blockDim.y;
  threadIdx.z = (unsigned int)t / (blockDim.x * blockDim.y);
}

static uint32_t next_rand() {
  S.seed ^= S.seed << 13; S.seed ^= S.seed >> 17; S.seed ^= S.seed << 5;
  return S.seed;
}

static void shuffle(int n) {
  for (int i = 0; i < n; i++) S.order[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(next_rand() % (uint32_t)(i + 1));
    int t = S.order[i]; S.order[i] = S.order[j]; S.order[j] = t;
  }
}

static int run_block() {
  int n = S.nthreads;
  if (!S.coroutines) {
    for (int t = 0; t < n; t++) {
      set_thread(t);
      S.fn(S.arg);
    }
    return S.error;
  }
  for (int t = 0; t < n; t++) {
    getcontext(&S.ctx[t]);
    S.ctx[t].uc_stack.ss_sp = S.stacks + (size_t)t * STACK;
    S.ctx[t].uc_stack.ss_size = STACK;
    S.ctx[t].uc_link = &S.main_ctx;
    makecontext(&S.ctx[t], (void (*)())entry, 0);
    S.state[t] = READY;
  }
  for (;;) {
    shuffle(n);
    for (int k = 0; k < n; k++) {
      int t = S.order[k];
      if (S.state[t] != READY) continue;
      set_thread(t);
      swapcontext(&S.main_ctx, &S.ctx[t]);
    }
    int done = 0, waiting = 0, shuffling = 0;
    for (int t = 0; t < n; t++) {
      done += S.state[t] == DONE;
      waiting += S.state[t] == AT_BARRIER;
      shuffling += S.state[t] == AT_SHFL;
    }
    if (done == n) return S.error;
    if (shuffling) {              /* complete the shuffles of warps whose lanes all wait */
      int progress = 0;
      for (int base = 0; base < n; base += 32) {
        int end = base + 32 < n ? base + 32 : n, at = 0;
        for (int t = base; t < end; t++) at += S.state[t] == AT_SHFL;
        if (at == 0) continue;
        if (at != end - base) continue;
        for (int t = base; t < end; t++) {
          int src = base + S.shfl_lane[t];
          S.shfl_out[t] = S.shfl_in[src < end ? src : t];
        }
        for (int t = base; t < end; t++) S.state[t] = READY;
        progress = 1;
      }
      if (progress) continue;
      return ERR_DIVERGENT_SHFL;
    }
    if (done != 0) return ERR_DIVERGENT_BARRIER;
    for (int t = 0; t < n; t++) S.state[t] = READY;
  }
}

static int launch(unsigned int gx, unsigned int bx, int coroutines, body_fn fn, void* arg) {
  gridDim.x = gx; gridDim.y = 1; gridDim.z = 1;
  blockDim.x = bx; blockDim.y = 1; blockDim.z = 1;
  S.nthreads = (int)bx;
  S.fn = fn;
  S.arg = arg;
  S.error = OK;
  S.coroutines = coroutines;
  S.seed = 2463534242u;
  S.ctx = 0; S.stacks = 0; S.state = 0; S.order = 0;
  S.shfl_in = 0; S.shfl_out = 0; S.shfl_lane = 0;
  S.order = (int*)malloc(sizeof(int) * bx);
  if (coroutines) {
    S.ctx = (ucontext_t*)malloc(sizeof(ucontext_t) * bx);
    S.stacks = (char*)malloc(STACK * bx);
    S.state = (int*)malloc(sizeof(int) * bx);
    S.shfl_in = (unsigned long long*)malloc(sizeof(unsigned long long) * bx);
    S.shfl_out = (unsigned long long*)malloc(sizeof(unsigned long long) * bx);
    S.shfl_lane = (int*)malloc(sizeof(int) * bx);
  }
  int err = OK;
  if (!S.order || (coroutines && (!S.ctx || !S.stacks || !S.state || !S.shfl_in ||
                                  !S.shfl_out || !S.shfl_lane))) {
    err = ERR_NOMEM;
  } else {
    for (unsigned int b = 0; b < gx && err == OK; b++) {
      blockIdx.x = b; blockIdx.y = 0; blockIdx.z = 0;
      err = run_block();
    }
  }
  free(S.ctx); free(S.stacks); free(S.state); free(S.order);
  free(S.shfl_in); free(S.shfl_out); free(S.shfl_lane);
  return err;
}

}  // namespace ss_emu

static inline void __syncthreads() {
  using namespace ss_emu;
  if (!S.coroutines) {            /* a barrier in a kernel launched as barrier-free */
    S.error = ERR_BARRIER_IN_PLAIN;
    return;
  }
  S.state[S.cur] = AT_BARRIER;
  swapcontext(&S.ctx[S.cur], &S.main_ctx);
}

/* __shfl_xor_sync: the lane reads the value lane ^ lanemask offers (the full mask only:
 * the generated code always shuffles with every lane of the warp) */
template <typename T> static inline T __shfl_xor_sync(unsigned int mask, T v, int lanemask,
                                                      int width = 32) {
  using namespace ss_emu;
  (void)mask; (void)width;
  if (!S.coroutines) {
    S.error = ERR_BARRIER_IN_PLAIN;
    return v;
  }
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof v);
  S.shfl_in[S.cur] = bits;
  S.shfl_lane[S.cur] = (int)((S.cur & 31) ^ (lanemask & 31));
  S.state[S.cur] = AT_SHFL;
  swapcontext(&S.ctx[S.cur], &S.main_ctx);
  T out;
  memcpy(&out, &S.shfl_out[S.cur], sizeof out);
  return out;
}

/* atomics: the emulator runs one CUDA thread at a time, so plain updates are atomic */
template <typename T> static inline T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <typename T> static inline T atomicMax(T* p, T v) {
  T o = *p; if (v > o) *p = v; return o;
}
template <typename T> static inline T atomicMin(T* p, T v) {
  T o = *p; if (v < o) *p = v; return o;
}
template <typename T> static inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
template <typename T> static inline T atomicCAS(T* p, T c, T v) {
  T o = *p; if (o == c) *p = v; return o;
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, sizeof i); return i; }
static inline double __longlong_as_double(long long i) {
  double d; memcpy(&d, &i, sizeof d); return d;
}
static inline long long __double_as_longlong(double d) {
  long long i; memcpy(&i, &d, sizeof i); return i;
}
static inline void __threadfence() {}
static inline void __threadfence_block() {}

/* float16 <-> float / double, round to nearest even (what cvt.rn does on the GPU) */
static inline float ss_emu_h2f(unsigned short h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24)
          : e == 31 ? (m ? __int_as_float(0x7fc00000) : __int_as_float(0x7f800000))
          : ldexpf((float)(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}
static inline unsigned short ss_emu_d2h(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  unsigned short sign = (unsigned short)((b >> 48) & 0x8000u);
  uint64_t ab = b & 0x7fffffffffffffffULL;
  if (ab >= 0x7ff0000000000000ULL)
    return sign | (ab > 0x7ff0000000000000ULL ? 0x7e00 : 0x7c00);
  double a;
  memcpy(&a, &ab, sizeof a);
  if (a < 6.103515625e-05)                       /* subnormal: units of 2**-24 */
    return sign | (unsigned short)nearbyint(a * 16777216.0);
  int e;
  frexp(a, &e);                                   /* a in [2**(e-1), 2**e) */
  double r = nearbyint(ldexp(a, 11 - e));         /* 11 significant bits */
  int E = e - 1 + 15;
  if (r == 2048.0) { r = 1024.0; E += 1; }
  if (E >= 31) return sign | 0x7c00;
  return sign | (unsigned short)(E << 10) | (unsigned short)((int)r - 1024);
}

template <typename T> static inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> static inline T max(T a, T b) { return a > b ? a : b; }

#endif
