// compiler_abi.cc - the entry points compiled artifacts call.
//
// Generated code has no structs or pointers at the point it calls a kernel:
// it passes addresses as integers and every parameter as a scalar, and these
// adapters rebuild the kernels' arguments. The thread pool the caller of an
// artifact offers (tcc_run_args_t::host) reaches the kernels through a
// thread-local set by the artifact's entry point for the duration of a run.
// Only linked into artifacts (LLVM bitcode), never into the test variants.

#include "ukernels.h"

#include <stdarg.h>
#include <stddef.h>

namespace {
__thread const tcc_host_api_t *currentHost;

template <typename T> T *ptr(int64_t address) {
  return reinterpret_cast<T *>(static_cast<intptr_t>(address));
}

tcc_uk_epilogue_t epilogue(int64_t bias, int64_t biasPerRow, int64_t hasClamp,
                           float clampMin, float clampMax, int64_t residual,
                           int64_t ldr) {
  tcc_uk_epilogue_t e = {};
  e.bias = ptr<const float>(bias);
  e.bias_per_row = static_cast<int32_t>(biasPerRow);
  e.has_clamp = static_cast<int32_t>(hasClamp);
  e.clamp_min = clampMin;
  e.clamp_max = clampMax;
  e.residual = ptr<const float>(residual);
  e.ldr = ldr;
  return e;
}

/// A convolution's sizes, window and pads as the adapters receive them.
tcc_uk_conv2d_params_t
convParams(int64_t n, int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh,
           int64_t kw, int64_t strideH, int64_t strideW, int64_t dilationH,
           int64_t dilationW, int64_t padTop, int64_t padLeft,
           int64_t padBottom, int64_t padRight, int64_t groups) {
  tcc_uk_conv2d_params_t p = {};
  p.n = n, p.c = c, p.h = h, p.w = w, p.f = f, p.kh = kh, p.kw = kw;
  p.stride_h = strideH, p.stride_w = strideW;
  p.dilation_h = dilationH, p.dilation_w = dilationW;
  p.pad_top = padTop, p.pad_left = padLeft;
  p.pad_bottom = padBottom, p.pad_right = padRight;
  p.groups = groups;
  return p;
}

/// One product of a batch (see tcc_ukabi_sgemm).
struct BatchedGemm {
  int64_t m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, flags,
      bias, biasPerRow, hasClamp, residual, ldr, strideR, scratch,
      scratchStride, activation;
  float clampMin, clampMax;
  int32_t failed;

  int32_t run(const tcc_host_api_t *host, int64_t i) const {
    tcc_uk_epilogue_t e =
        epilogue(bias, biasPerRow, hasClamp, clampMin, clampMax,
                 residual ? residual + 4 * i * strideR : 0, ldr);
    e.activation = static_cast<int32_t>(activation);
    return tcc_uk_sgemm(host, m, n, k, ptr<const float>(a) + i * strideA, lda,
                        ptr<const float>(b) + i * strideB, ldb,
                        ptr<float>(c) + i * strideC, ldc,
                        static_cast<uint32_t>(flags), &e,
                        ptr<void>(scratch ? scratch + i * scratchStride : 0));
  }
};

void runBatchRange(void *ctx, int64_t begin, int64_t end) {
  BatchedGemm &g = *static_cast<BatchedGemm *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    if (g.run(nullptr, i))
      __atomic_store_n(&g.failed, 1, __ATOMIC_RELAXED);
}

/// Whether a batch goes one product a thread: allowed by the compiler
/// (each product has its own scratch), enough products to share evenly,
/// or products too small to split well.
bool splitBatch(const tcc_host_api_t *host, int64_t batch, int64_t work) {
  if (!host || !host->parallel_for || host->num_threads <= 1)
    return false;
  const int64_t threads = host->num_threads;
  return batch >= threads && (batch % threads == 0 || batch >= 4 * threads ||
                              work < (int64_t(1) << 22));
}
/// A pooling's window as the compiler passes it.
tcc_uk_pool2d_params_t poolWindow(int64_t n, int64_t c, int64_t h, int64_t w,
                                  int64_t kh, int64_t kw, int64_t strideH,
                                  int64_t strideW, int64_t dilationH,
                                  int64_t dilationW, int64_t padTop,
                                  int64_t padLeft, int64_t oh, int64_t ow) {
  tcc_uk_pool2d_params_t p = {};
  p.n = n, p.c = c, p.h = h, p.w = w, p.kh = kh, p.kw = kw;
  p.stride_h = strideH, p.stride_w = strideW;
  p.dilation_h = dilationH, p.dilation_w = dilationW;
  p.pad_top = padTop, p.pad_left = padLeft, p.oh = oh, p.ow = ow;
  return p;
}
} // namespace

extern "C" {

void tcc_ukabi_set_host(const tcc_host_api_t *host) { currentHost = host; }

/// Called around each kernel by artifacts compiled with tcc --profile.
void tcc_ukabi_profile(int64_t kernel, int64_t name, int64_t end) {
  const tcc_host_api_t *host = currentHost;
  if (host &&
      host->struct_size >=
          offsetof(tcc_host_api_t, profile) + sizeof(host->profile) &&
      host->profile)
    host->profile(host->self, kernel, ptr<const char>(name),
                  static_cast<int32_t>(end));
}

/// `batch` products C_i = act(A_i * B_i + ...) (the epilogue; activation a
/// TCC_UK_ACT_*), the i-th operands at
/// element offsets i * stride (a stride of 0 broadcasts an operand). With
/// batchParallel the i-th product's scratch is at i * scratchStride bytes,
/// and the products may run on different threads at once.
int32_t tcc_ukabi_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                        int64_t a, int64_t lda, int64_t strideA, int64_t b,
                        int64_t ldb, int64_t strideB, int64_t c, int64_t ldc,
                        int64_t strideC, int64_t flags, int64_t bias,
                        int64_t biasPerRow, int64_t hasClamp, float clampMin,
                        float clampMax, int64_t residual, int64_t ldr,
                        int64_t strideR, int64_t scratch, int64_t batchParallel,
                        int64_t scratchStride, int64_t activation) {
  BatchedGemm g = {m,          n,        k,
                   a,          lda,      strideA,
                   b,          ldb,      strideB,
                   c,          ldc,      strideC,
                   flags,      bias,     biasPerRow,
                   hasClamp,   residual, ldr,
                   strideR,    scratch,  batchParallel ? scratchStride : 0,
                   activation, clampMin, clampMax,
                   0};
  if (batchParallel && batch > 1 &&
      splitBatch(currentHost, batch, m * n * (k > 0 ? k : 1))) {
    currentHost->parallel_for(currentHost->self, batch, 1, runBatchRange, &g);
    return g.failed ? -1 : 0;
  }
  for (int64_t i = 0; i < batch; ++i)
    if (int32_t rc = g.run(currentHost, i))
      return rc;
  return 0;
}

int32_t tcc_ukabi_conv2d(
    int64_t input, int64_t weight, int64_t output, int64_t bias,
    int64_t residual, int64_t scratch, int64_t n, int64_t c, int64_t h,
    int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t strideH,
    int64_t strideW, int64_t dilationH, int64_t dilationW, int64_t padTop,
    int64_t padLeft, int64_t padBottom, int64_t padRight, int64_t groups,
    int64_t flags, int64_t hasClamp, float clampMin, float clampMax,
    int64_t activation, int64_t pool, int64_t inScale, int64_t inShift,
    int64_t inRelu, int64_t poolKh, int64_t poolKw, int64_t poolStrideH,
    int64_t poolStrideW, int64_t poolPadTop, int64_t poolPadLeft,
    int64_t poolOh, int64_t poolOw, int64_t planeMeans) {
  tcc_uk_conv2d_params_t p =
      convParams(n, c, h, w, f, kh, kw, strideH, strideW, dilationH, dilationW,
                 padTop, padLeft, padBottom, padRight, groups);
  p.flags = static_cast<uint32_t>(flags);
  p.pool = pool;
  tcc_uk_pool2d_params_t &q = p.pool_window;
  q.kh = poolKh, q.kw = poolKw;
  q.stride_h = poolStrideH, q.stride_w = poolStrideW;
  q.pad_top = poolPadTop, q.pad_left = poolPadLeft;
  q.oh = poolOh, q.ow = poolOw;
  p.in_scale = ptr<const float>(inScale);
  p.in_shift = ptr<const float>(inShift);
  p.in_relu = static_cast<int32_t>(inRelu);
  p.scratch = ptr<void>(scratch);
  p.plane_means = ptr<float>(planeMeans);
  tcc_uk_epilogue_t e =
      epilogue(bias, 1, hasClamp, clampMin, clampMax, residual, 0);
  e.activation = static_cast<int32_t>(activation);
  return tcc_uk_conv2d_nchw(currentHost, &p, ptr<const float>(input),
                            ptr<const float>(weight), ptr<float>(output), &e);
}

/// softmax(scale Q K^T + mask) V for `batch` problems (the mask's kind,
/// fill and strides as tcc_uk_attention_params_t says).
int32_t tcc_ukabi_attention(int64_t q, int64_t k, int64_t v, int64_t mask,
                            int64_t out, int64_t scratch, int64_t batch,
                            int64_t sq, int64_t sk, int64_t d, int64_t dv,
                            int64_t ldq, int64_t strideQ, int64_t ldk,
                            int64_t strideK, int64_t ldv, int64_t strideV,
                            int64_t ldo, int64_t strideO, int64_t ldm,
                            int64_t strideM, float scale, float fill,
                            int64_t maskKind, int64_t flags) {
  tcc_uk_attention_params_t p = {};
  p.batch = batch, p.sq = sq, p.sk = sk, p.d = d, p.dv = dv;
  p.ldq = ldq, p.stride_q = strideQ, p.ldk = ldk, p.stride_k = strideK;
  p.ldv = ldv, p.stride_v = strideV, p.ldo = ldo, p.stride_o = strideO;
  p.ldm = ldm, p.stride_m = strideM;
  p.scale = scale, p.fill = fill;
  p.mask_kind = static_cast<int32_t>(maskKind);
  p.flags = static_cast<uint32_t>(flags);
  p.scratch = ptr<void>(scratch);
  return tcc_uk_attention(currentHost, &p, ptr<const float>(q),
                          ptr<const float>(k), ptr<const float>(v),
                          ptr<const void>(mask), ptr<float>(out));
}

/// A depthwise convolution (groups == c == f, its epilogue a bias and a
/// clamp) and the 1x1 convolution to `f` channels after it, as one call.
int32_t tcc_ukabi_dwpw_conv2d(
    int64_t input, int64_t dwWeight, int64_t dwBias, int64_t pwWeight,
    int64_t output, int64_t bias, int64_t residual, int64_t scratch, int64_t n,
    int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t strideH,
    int64_t strideW, int64_t dilationH, int64_t dilationW, int64_t padTop,
    int64_t padLeft, int64_t padBottom, int64_t padRight, int64_t dwHasClamp,
    float dwClampMin, float dwClampMax, int64_t f, int64_t flags,
    int64_t hasClamp, float clampMin, float clampMax) {
  tcc_uk_dwpw_params_t p = {};
  p.dw = convParams(n, c, h, w, c, kh, kw, strideH, strideW, dilationH,
                    dilationW, padTop, padLeft, padBottom, padRight, c);
  p.f = f;
  p.dw_bias = ptr<const float>(dwBias);
  p.dw_has_clamp = static_cast<int32_t>(dwHasClamp);
  p.dw_clamp_min = dwClampMin;
  p.dw_clamp_max = dwClampMax;
  p.flags = static_cast<uint32_t>(flags);
  p.scratch = ptr<void>(scratch);
  tcc_uk_epilogue_t e =
      epilogue(bias, 1, hasClamp, clampMin, clampMax, residual, 0);
  return tcc_uk_dwpw_conv2d_nchw(
      currentHost, &p, ptr<const float>(input), ptr<const float>(dwWeight),
      ptr<const float>(pwWeight), ptr<float>(output), &e);
}

/// A convolution from `expC` to `c` channels with one group (its epilogue
/// a bias and a clamp; an expanding 1x1 or a stem), the depthwise
/// convolution after it and the 1x1 convolution to `f` channels after
/// that, as one call.
int32_t tcc_ukabi_block_conv2d(
    int64_t input, int64_t expWeight, int64_t expBias, int64_t dwWeight,
    int64_t dwBias, int64_t pwWeight, int64_t output, int64_t bias,
    int64_t residual, int64_t scratch, int64_t n, int64_t expC, int64_t expH,
    int64_t expW, int64_t expKh, int64_t expKw, int64_t expStrideH,
    int64_t expStrideW, int64_t expDilationH, int64_t expDilationW,
    int64_t expPadTop, int64_t expPadLeft, int64_t expPadBottom,
    int64_t expPadRight, int64_t expFlags, int64_t expHasClamp,
    float expClampMin, float expClampMax, int64_t c, int64_t h, int64_t w,
    int64_t kh, int64_t kw, int64_t strideH, int64_t strideW, int64_t dilationH,
    int64_t dilationW, int64_t padTop, int64_t padLeft, int64_t padBottom,
    int64_t padRight, int64_t dwHasClamp, float dwClampMin, float dwClampMax,
    int64_t f, int64_t flags, int64_t hasClamp, float clampMin,
    float clampMax) {
  tcc_uk_block_params_t p = {};
  p.pair.dw = convParams(n, c, h, w, c, kh, kw, strideH, strideW, dilationH,
                         dilationW, padTop, padLeft, padBottom, padRight, c);
  p.pair.f = f;
  p.pair.dw_bias = ptr<const float>(dwBias);
  p.pair.dw_has_clamp = static_cast<int32_t>(dwHasClamp);
  p.pair.dw_clamp_min = dwClampMin;
  p.pair.dw_clamp_max = dwClampMax;
  p.pair.flags = static_cast<uint32_t>(flags);
  p.pair.scratch = ptr<void>(scratch);
  p.exp = convParams(n, expC, expH, expW, c, expKh, expKw, expStrideH,
                     expStrideW, expDilationH, expDilationW, expPadTop,
                     expPadLeft, expPadBottom, expPadRight, 1);
  p.exp.flags = static_cast<uint32_t>(expFlags);
  p.exp_bias = ptr<const float>(expBias);
  p.exp_has_clamp = static_cast<int32_t>(expHasClamp);
  p.exp_clamp_min = expClampMin;
  p.exp_clamp_max = expClampMax;
  tcc_uk_epilogue_t e =
      epilogue(bias, 1, hasClamp, clampMin, clampMax, residual, 0);
  return tcc_uk_block_conv2d_nchw(
      currentHost, &p, ptr<const float>(input), ptr<const float>(expWeight),
      ptr<const float>(dwWeight), ptr<const float>(pwWeight),
      ptr<float>(output), &e);
}

/// 2-D max pooling (no epilogue).
int32_t tcc_ukabi_maxpool2d(int64_t input, int64_t output, int64_t n, int64_t c,
                            int64_t h, int64_t w, int64_t kh, int64_t kw,
                            int64_t strideH, int64_t strideW, int64_t dilationH,
                            int64_t dilationW, int64_t padTop, int64_t padLeft,
                            int64_t oh, int64_t ow) {
  const tcc_uk_pool2d_params_t p =
      poolWindow(n, c, h, w, kh, kw, strideH, strideW, dilationH, dilationW,
                 padTop, padLeft, oh, ow);
  return tcc_uk_maxpool2d_nchw(currentHost, &p, ptr<const float>(input),
                               ptr<float>(output));
}

/// 2-D average pooling (no epilogue).
int32_t tcc_ukabi_avgpool2d(int64_t input, int64_t output, int64_t n, int64_t c,
                            int64_t h, int64_t w, int64_t kh, int64_t kw,
                            int64_t strideH, int64_t strideW, int64_t dilationH,
                            int64_t dilationW, int64_t padTop, int64_t padLeft,
                            int64_t oh, int64_t ow, int64_t padBottom,
                            int64_t padRight, int64_t countIncludePad) {
  tcc_uk_avgpool2d_params_t p = {};
  p.window = poolWindow(n, c, h, w, kh, kw, strideH, strideW, dilationH,
                        dilationW, padTop, padLeft, oh, ow);
  p.pad_bottom = padBottom, p.pad_right = padRight;
  p.count_include_pad = static_cast<int32_t>(countIncludePad);
  return tcc_uk_avgpool2d_nchw(currentHost, &p, ptr<const float>(input),
                               ptr<float>(output));
}

/// out[b, c, r] = in[b, r, c]: a batch of rows x cols transposes of 32-bit
/// elements.
int32_t tcc_ukabi_transpose(int64_t input, int64_t output, int64_t batch,
                            int64_t rows, int64_t cols) {
  return tcc_uk_transpose32(currentHost, batch, rows, cols,
                            ptr<const void>(input), ptr<void>(output));
}

} // extern "C"

//===----------------------------------------------------------------------===//
// Parallel loops: the few OpenMP runtime entry points that MLIR's OpenMP
// lowering of a worksharing loop calls (tcc-parallelize-loops makes them),
// implemented on the caller's thread pool. A "team" is one task per pool
// thread; each task takes its static share of the iterations. There is no
// code between a loop and the end of its parallel region, so the barrier
// closing the loop has nothing to order and the join of parallel_for is the
// only synchronization needed. Without a pool (or inside a team) the loop
// runs on the calling thread. Hidden, like everything in this object: an
// artifact never clashes with a real OpenMP runtime in the same process.
//===----------------------------------------------------------------------===//

namespace {
typedef void (*Microtask)(int32_t *gtid, int32_t *btid, ...);

__thread int32_t teamRank; // this task's rank in its team
__thread int32_t teamSize = 1;

struct Team {
  Microtask task;
  int32_t argc;
  void *args[4];
  int32_t size;
};

void runMicrotask(const Team &team, int32_t rank) {
  int32_t gtid = rank, btid = rank;
  switch (team.argc) {
  case 0:
    team.task(&gtid, &btid);
    break;
  case 1:
    team.task(&gtid, &btid, team.args[0]);
    break;
  case 2:
    team.task(&gtid, &btid, team.args[0], team.args[1]);
    break;
  case 3:
    team.task(&gtid, &btid, team.args[0], team.args[1], team.args[2]);
    break;
  default:
    team.task(&gtid, &btid, team.args[0], team.args[1], team.args[2],
              team.args[3]);
    break;
  }
}

void runTeamTasks(void *ctx, int64_t begin, int64_t end) {
  const Team &team = *static_cast<const Team *>(ctx);
  int32_t savedRank = teamRank, savedSize = teamSize;
  for (int64_t r = begin; r < end; ++r) {
    teamRank = static_cast<int32_t>(r);
    teamSize = team.size;
    runMicrotask(team, teamRank);
  }
  teamRank = savedRank;
  teamSize = savedSize;
}

template <typename T, typename S>
void staticInit(int32_t *lastIter, T *lower, T *upper, S *stride) {
  // Iterations [*lower, *upper] (inclusive), step 1 after MLIR's
  // normalization; this rank gets a contiguous share.
  T total = *upper - *lower + 1;
  T size = static_cast<T>(teamSize), rank = static_cast<T>(teamRank);
  T base = total / size, extra = total % size;
  T first = *lower + rank * base + (rank < extra ? rank : extra);
  T count = base + (rank < extra ? 1 : 0);
  *lower = first;
  *upper = first + count - 1; // count 0: upper = lower - 1, an empty range
  if (stride)
    *stride = static_cast<S>(total);
  if (lastIter)
    *lastIter = rank == size - 1;
}
} // namespace

extern "C" {

int32_t __kmpc_global_thread_num(void *) { return teamRank; }

void __kmpc_fork_call(void *, int32_t argc, Microtask task, ...) {
  Team team;
  team.task = task;
  team.argc = argc;
  va_list ap;
  va_start(ap, task);
  for (int32_t i = 0; i < argc && i < 4; ++i)
    team.args[i] = va_arg(ap, void *);
  va_end(ap);
  const tcc_host_api_t *host = currentHost;
  team.size =
      host && host->parallel_for && host->num_threads > 1 && teamSize == 1
          ? host->num_threads
          : 1;
  if (team.size == 1) {
    runTeamTasks(&team, 0, 1);
    return;
  }
  host->parallel_for(host->self, team.size, 1, runTeamTasks, &team);
}

void __kmpc_for_static_init_8u(void *, int32_t, int32_t, int32_t *lastIter,
                               uint64_t *lower, uint64_t *upper,
                               int64_t *stride, int64_t, int64_t) {
  staticInit(lastIter, lower, upper, stride);
}
void __kmpc_for_static_init_8(void *, int32_t, int32_t, int32_t *lastIter,
                              int64_t *lower, int64_t *upper, int64_t *stride,
                              int64_t, int64_t) {
  staticInit(lastIter, lower, upper, stride);
}
void __kmpc_for_static_init_4u(void *, int32_t, int32_t, int32_t *lastIter,
                               uint32_t *lower, uint32_t *upper,
                               int32_t *stride, int32_t, int32_t) {
  staticInit(lastIter, lower, upper, stride);
}
void __kmpc_for_static_init_4(void *, int32_t, int32_t, int32_t *lastIter,
                              int32_t *lower, int32_t *upper, int32_t *stride,
                              int32_t, int32_t) {
  staticInit(lastIter, lower, upper, stride);
}
void __kmpc_for_static_fini(void *, int32_t) {}
void __kmpc_barrier(void *, int32_t) {}

} // extern "C"
