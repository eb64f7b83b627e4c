/* symshape CUDA emulation shim: the generated kernels, compiled as C++ for the CPU.
 *
 * A launch runs the grid's blocks one after another.  The threads of a block are
 * coroutines (ucontext) on one OS thread: each runs until it reaches __syncthreads()
 * or returns; when every thread of the block waits at the barrier, all resume (in a
 * different, pseudo-random order each phase, so a missing barrier shows as a wrong
 * result rather than hiding behind a lucky order).  A barrier reached by only some
 * threads of a block is reported as an error.  __shared__ variables are function
 * statics: one copy, shared by the threads of the block that is running.  Kernels
 * without barriers run their threads as plain calls.
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

namespace ss_emu {

enum { READY = 0, AT_BARRIER = 1, DONE = 2 };
enum { OK = 0, ERR_DIVERGENT_BARRIER = 1, ERR_BARRIER_IN_PLAIN = 2, ERR_NOMEM = 3 };

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
    int done = 0, waiting = 0;
    for (int t = 0; t < n; t++) {
      done += S.state[t] == DONE;
      waiting += S.state[t] == AT_BARRIER;
    }
    if (done == n) return S.error;
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
  S.order = (int*)malloc(sizeof(int) * bx);
  if (coroutines) {
    S.ctx = (ucontext_t*)malloc(sizeof(ucontext_t) * bx);
    S.stacks = (char*)malloc(STACK * bx);
    S.state = (int*)malloc(sizeof(int) * bx);
  }
  int err = OK;
  if (!S.order || (coroutines && (!S.ctx || !S.stacks || !S.state))) {
    err = ERR_NOMEM;
  } else {
    for (unsigned int b = 0; b < gx && err == OK; b++) {
      blockIdx.x = b; blockIdx.y = 0; blockIdx.z = 0;
      err = run_block();
    }
  }
  free(S.ctx); free(S.stacks); free(S.state); free(S.order);
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

template <typename T> static inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> static inline T max(T a, T b) { return a > b ? a : b; }

#endif
