// sgemm_bench.cc - tcc-ukernel-bench: GFLOP/s of tcc_uk_sgemm at square
// sizes and at shapes from CNNs, and milliseconds of convolutions from
// resnet18 and mobilenet_v2, with 1 and 2 threads from a pthread pool.
//
//   tcc-ukernel-bench [--variant avx512] [--threads 1,2] [--seconds 0.5]
//                     [--only gemm|shapes|conv|pool|attention] [--match TEXT]
//                     [--openblas path/to/libopenblas.so] [--cold-weights N]
//                     [--cold-inputs N] [--dirty BYTES]
//
// --cold-weights N makes each convolution call use the next of N copies of
// its packed weights, so that they come from L3 or memory as in a model,
// where the other layers' weights pass through the caches in between.
// --cold-inputs N does the same with its input: in a model the layer
// before wrote it, split among the threads its own way, so a thread's
// share is seldom in its own L2. The depthwise pairs and blocks also
// rotate their output with it: a model's layer writes lines that are not
// in the core's caches either. --dirty BYTES writes that many bytes before
// each timed call, so the call runs as a model's layer does, after others
// that left the caches full of modified lines (2-4 MB made small 1x1
// layers at 13x13 5-15% slower; docs/performance.md).
//
// Each case runs for --seconds (at least 3 runs) after one warm-up run;
// the table shows the best run and, in parentheses, the median.
// bench/ukernels/openblas_gemm.py prints OpenBLAS's numbers for the same
// GEMMs through numpy. With --openblas, the GEMM tables also time that
// library's cblas_sgemm in the same process, alternating with tcc in four
// rounds (a pause between them lets either library's threads go idle), so
// that both see the same machine: on a shared VM the speed drifts by tens
// of percent from one second to the next.
#include "uk_variants.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() sched_yield()
#endif

namespace {

using tcc::ukvariants::Variant;

/// Persistent worker threads behind tcc_host_api_t::parallel_for. Between
/// jobs workers spin briefly, then sleep on a condition variable.
class Pool {
public:
  explicit Pool(int threads) : workers(threads > 1 ? threads - 1 : 0) {
    api.struct_size = sizeof(api);
    api.num_threads = threads;
    api.self = this;
    api.parallel_for = &Pool::parallelFor;
    pthread_mutex_init(&mutex, nullptr);
    pthread_cond_init(&wake, nullptr);
    for (pthread_t &t : workers)
      pthread_create(&t, nullptr, &Pool::workerMain, this);
  }
  ~Pool() {
    pthread_mutex_lock(&mutex);
    stop = true;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&mutex);
    for (pthread_t &t : workers)
      pthread_join(t, nullptr);
    pthread_cond_destroy(&wake);
    pthread_mutex_destroy(&mutex);
  }
  const tcc_host_api_t *host() const { return &api; }

private:
  static void parallelFor(void *self, int64_t n, int64_t grain,
                          tcc_parallel_fn_t fn, void *ctx) {
    Pool &p = *static_cast<Pool *>(self);
    if (p.workers.empty() || n <= grain) {
      fn(ctx, 0, n);
      return;
    }
    const int64_t threads = static_cast<int64_t>(p.workers.size()) + 1;
    p.fn = fn;
    p.ctx = ctx;
    p.n = n;
    // Like libtccrt's pool: about four chunks a thread, claimed in turn.
    p.chunk = std::max<int64_t>(std::max<int64_t>(grain, 1),
                                (n + 4 * threads - 1) / (4 * threads));
    p.next.store(0, std::memory_order_relaxed);
    p.pending.store(static_cast<int>(p.workers.size()),
                    std::memory_order_relaxed);
    pthread_mutex_lock(&p.mutex);
    p.generation.fetch_add(1, std::memory_order_release);
    pthread_cond_broadcast(&p.wake);
    pthread_mutex_unlock(&p.mutex);
    p.runChunks();
    while (p.pending.load(std::memory_order_acquire) != 0)
      CPU_RELAX();
  }

  static void *workerMain(void *self) {
    Pool &p = *static_cast<Pool *>(self);
    uint64_t seen = 0;
    for (;;) {
      for (int spin = 0; spin < (1 << 16) &&
                         p.generation.load(std::memory_order_acquire) == seen;
           ++spin)
        CPU_RELAX();
      pthread_mutex_lock(&p.mutex);
      while (!p.stop && p.generation.load(std::memory_order_acquire) == seen)
        pthread_cond_wait(&p.wake, &p.mutex);
      const bool stopping = p.stop;
      pthread_mutex_unlock(&p.mutex);
      if (stopping)
        return nullptr;
      seen = p.generation.load(std::memory_order_acquire);
      p.runChunks();
      p.pending.fetch_sub(1, std::memory_order_release);
    }
  }

  void runChunks() {
    for (;;) {
      const int64_t b = next.fetch_add(chunk, std::memory_order_relaxed);
      if (b >= n)
        return;
      fn(ctx, b, std::min(b + chunk, n));
    }
  }

  tcc_host_api_t api{};
  std::vector<pthread_t> workers;
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  bool stop = false;
  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};
  std::atomic<int64_t> next{0};
  tcc_parallel_fn_t fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0, chunk = 1;
};

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/// Appends the seconds of runs of `run` for `seconds` (at least 3 runs),
/// after one warm-up run (page faults, caches).
/// --dirty: written before each timed run (not timed).
std::vector<char> gDirty;

/// Leaves gDirty's bytes modified in the core's caches, as a model leaves
/// the layers' outputs and scratch before the next layer: lines the next
/// call's data evicts cost a write-back each.
void dirtyCaches(int run) {
  if (!gDirty.empty())
    std::memset(gDirty.data(), run & 255, gDirty.size());
}

template <typename F>
void timeRuns(double seconds, F run, std::vector<double> &times) {
  run();
  const double start = now();
  for (int i = 0; i < 3 || now() - start < seconds; ++i) {
    dirtyCaches(i);
    const double t = now();
    run();
    times.push_back(now() - t);
  }
}

/// Best and median of the times.
std::pair<double, double> bestMedian(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return {times.front(), times[times.size() / 2]};
}

template <typename F> std::pair<double, double> timeIt(double seconds, F run) {
  std::vector<double> times;
  timeRuns(seconds, run, times);
  return bestMedian(times);
}

/// cblas_sgemm and the thread count of an OpenBLAS loaded at run time
/// (numpy's bundled scipy-openblas or a system one). The 64-bit integer
/// arguments also suit LP64 builds: x86-64 passes ints in 64-bit slots.
struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int64_t, int64_t, int64_t, float,
                         const float *, int64_t, const float *, int64_t, float,
                         float *, int64_t);
  using SetThreads = void (*)(int);
  Sgemm sgemm = nullptr;
  SetThreads setThreads = nullptr;

  bool load(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return false;
    for (const char *name :
         {"cblas_sgemm", "scipy_cblas_sgemm64_", "cblas_sgemm64_"})
      if (!sgemm)
        sgemm = reinterpret_cast<Sgemm>(dlsym(lib, name));
    for (const char *name :
         {"openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
          "openblas_set_num_threads64_"})
      if (!setThreads)
        setThreads = reinterpret_cast<SetThreads>(dlsym(lib, name));
    return sgemm && setThreads;
  }
  /// C = A*B, row-major.
  void run(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
           float *c) const {
    sgemm(101 /*row major*/, 111, 111 /*no transposes*/, m, n, k, 1.0f, a, k, b,
          n, 0.0f, c, n);
  }
};

std::vector<float> randomVector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// n copies of a buffer, 64-byte aligned, each 16 floats further on than a
/// multiple of the buffer's (rounded) size, so that the copies are not all 4 KB
/// aligned alike (which would make them collide in the caches' sets). Calls
/// that take copy after copy in turn find their data where a model's layer
/// does: in L3 or memory, not in the core's own caches. The copies lie in 2 MB
/// pages where the kernel gives them, as a model's weights and workspace do.
class Copies {
public:
  Copies(const std::vector<float> &v, int n)
      : stride_((v.size() + 15) / 16 * 16 + 16) {
    const size_t huge = size_t(2) << 20;
    const size_t bytes = (stride_ * n * sizeof(float) + huge - 1) / huge * huge;
    data_ = static_cast<float *>(std::aligned_alloc(huge, bytes));
    if (!data_)
      std::abort();
#if defined(__linux__)
    madvise(data_, bytes, MADV_HUGEPAGE);
#endif
    for (int i = 0; i < n; ++i)
      std::memcpy(data_ + i * stride_, v.data(), v.size() * sizeof(float));
  }
  ~Copies() { std::free(data_); }
  Copies(const Copies &) = delete;
  Copies &operator=(const Copies &) = delete;
  float *at(int i) { return data_ + i * stride_; }

private:
  size_t stride_;
  float *data_;
};

/// Which copy of the inputs and outputs (nx, of --cold-inputs) and of the
/// weights (nw, of --cold-weights) the next call takes.
struct Turns {
  int inputs, weights, nx = 0, nw = 0;
  void advance() {
    nx = (nx + 1) % inputs;
    nw = (nw + 1) % weights;
  }
};

struct Options {
  std::string variant;
  OpenBlas *openblas = nullptr;
  std::vector<int> threads = {1, 2};
  double seconds = 0.5;
  std::string only;
  std::string match;   // only cases whose name (or note) contains it
  int coldWeights = 1; // copies of the packed weights to rotate over
  int coldInputs = 1;  // copies of the input to rotate over
};

/// GFLOP/s of one GEMM per thread count; prepackB packs B once up front
/// as the compiler does for constant weights.
void benchGemm(const Variant &v, const Options &o,
               const std::vector<Pool *> &pools, int64_t m, int64_t n,
               int64_t k, bool prepackB, const char *note, uint32_t trans = 0,
               int32_t activation = TCC_UK_ACT_NONE) {
  if (!std::strstr(note, o.match.c_str()))
    return;
  tcc_uk_epilogue_t ep = {};
  ep.activation = activation;
  std::vector<float> a = randomVector(m * k, 1), b = randomVector(k * n, 2);
  std::vector<float> c(m * n);
  uint32_t flags = trans;
  // Leading dimensions of A and B as they lie (TCC_UK_TRANS_*: transposed).
  const int64_t lda = trans & TCC_UK_TRANS_A ? m : k;
  const int64_t ldb = trans & TCC_UK_TRANS_B ? k : n;
  // Prepacked weights: o.coldWeights copies, a call each in turn, so that
  // with many they come from L3 as a model's do (in 2 MB pages, as theirs).
  std::unique_ptr<Copies> bCopies;
  if (prepackB) {
    std::vector<float> packed(v.packBBytes(v.isaFn(), k, n) / 4);
    v.packB(v.isaFn(), k, n, b.data(), n, 0, packed.data());
    bCopies.reset(new Copies(packed, o.coldWeights));
    flags = TCC_UK_PACKED_B;
  }
  int next = 0;
  std::vector<char> scratch(v.sgemmScratchBytes(v.isaFn(), flags, m, n, k) + 1);
  std::printf("  %5lld %5lld %5lld", (long long)m, (long long)n, (long long)k);
  const double flop = 2.0 * m * n * k;
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto tcc = [&] {
      v.sgemm(host, m, n, k, a.data(), lda,
              bCopies ? bCopies->at(next) : b.data(), ldb, c.data(), n, flags,
              activation ? &ep : nullptr, scratch.data());
      if (prepackB)
        next = (next + 1) % o.coldWeights;
    };
    if (!o.openblas || prepackB || trans) {
      auto t = timeIt(o.seconds, tcc);
      std::printf("   %7.1f (%7.1f)", flop / t.first / 1e9,
                  flop / t.second / 1e9);
      if (o.openblas)
        std::printf("                       ");
      continue;
    }
    std::vector<float> bPlain = randomVector(k * n, 2);
    std::vector<double> mine, theirs;
    for (int round = 0; round < 4; ++round) {
      timeRuns(o.seconds / 4, tcc, mine);
      usleep(250000);
      o.openblas->setThreads(o.threads[i]);
      timeRuns(
          o.seconds / 4,
          [&] { o.openblas->run(m, n, k, a.data(), bPlain.data(), c.data()); },
          theirs);
      usleep(250000);
    }
    auto t = bestMedian(mine), u = bestMedian(theirs);
    std::printf("   %7.1f (%7.1f) %7.1f (%7.1f) %4.0f%%", flop / t.first / 1e9,
                flop / t.second / 1e9, flop / u.first / 1e9,
                flop / u.second / 1e9, 100.0 * u.first / t.first);
  }
  std::printf("  %s\n", note);
  std::fflush(stdout);
}

tcc_uk_conv2d_params_t batch(tcc_uk_conv2d_params_t p, int64_t n) {
  p.n = n;
  return p;
}

struct ConvShapeDesc {
  const char *name;
  tcc_uk_conv2d_params_t p;
};

tcc_uk_conv2d_params_t conv(int64_t c, int64_t hw, int64_t f, int64_t k,
                            int64_t stride, int64_t pad, int64_t groups) {
  tcc_uk_conv2d_params_t p = {};
  p.n = 1;
  p.c = c;
  p.h = p.w = hw;
  p.f = f;
  p.kh = p.kw = k;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
  p.groups = groups;
  return p;
}

/// A kh x kw window (an Inception network's 1x7 and 7x1), "same" pads.
tcc_uk_conv2d_params_t convKxK(int64_t c, int64_t hw, int64_t f, int64_t kh,
                               int64_t kw) {
  tcc_uk_conv2d_params_t p = conv(c, hw, f, 1, 1, 0, 1);
  p.kh = kh, p.kw = kw;
  p.pad_top = p.pad_bottom = (kh - 1) / 2;
  p.pad_left = p.pad_right = (kw - 1) / 2;
  return p;
}

void benchConv(const Variant &v, const Options &o,
               const std::vector<Pool *> &pools, const ConvShapeDesc &d) {
  tcc_uk_conv2d_params_t p = d.p;
  const int64_t oh = (p.h + 2 * p.pad_top - p.kh) / p.stride_h + 1;
  const int64_t ow = (p.w + 2 * p.pad_left - p.kw) / p.stride_w + 1;
  // Copies of the input 16 floats apart in their alignment, as the
  // weights' below.
  const size_t xFloats = p.n * p.c * p.h * p.w, xCopyFloats = xFloats + 16;
  std::vector<float> x = randomVector(xCopyFloats * o.coldInputs, 1);
  std::vector<float> w = randomVector(p.f * (p.c / p.groups) * p.kh * p.kw, 2);
  std::vector<float> bias = randomVector(p.f, 3);
  std::vector<float> y(p.n * p.f * oh * ow);
  // Weights prepacked, bias + relu fused: how the compiler calls it.
  const size_t packedFloats = v.convPackWeightsBytes(v.isaFn(), &p) / 4;
  // 16 extra floats per copy so that the copies are not all 4 KB aligned
  // alike (which would make them collide in the caches' sets).
  const size_t copyFloats = packedFloats + 16;
  std::vector<float> packed(copyFloats * o.coldWeights);
  v.convPackWeights(v.isaFn(), &p, w.data(), packed.data());
  for (int i = 1; i < o.coldWeights; ++i)
    std::memcpy(packed.data() + i * copyFloats, packed.data(),
                packedFloats * sizeof(float));
  int next = 0, nextX = 0;
  p.flags = TCC_UK_PACKED_A;
  std::vector<char> scratch(v.convScratchBytes(v.isaFn(), &p) + 1);
  p.scratch = scratch.data();
  tcc_uk_epilogue_t ep = {};
  ep.bias = bias.data();
  ep.has_clamp = 1;
  ep.clamp_max = 1e30f;
  const double macs =
      double(p.n) * p.f * oh * ow * (p.c / p.groups) * p.kh * p.kw;
  std::printf("  %-34s", d.name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto t = timeIt(o.seconds, [&] {
      v.conv2d(host, &p, x.data() + nextX * xCopyFloats,
               packed.data() + next * copyFloats, y.data(), &ep);
      next = (next + 1) % o.coldWeights;
      nextX = (nextX + 1) % o.coldInputs;
    });
    std::printf("   %7.3f (%7.3f) %6.1f", t.first * 1e3, t.second * 1e3,
                2 * macs / t.first / 1e9);
  }
  std::printf("\n");
  std::fflush(stdout);
}

/// A convolution (prepacked weights, bias + relu) and a k x k max pooling
/// of stride `stride` after it: as one call (pool = 1) and as two.
void benchConvPool(const Variant &v, const Options &o,
                   const std::vector<Pool *> &pools, const char *name,
                   tcc_uk_conv2d_params_t p, int64_t k, int64_t stride,
                   int64_t pad) {
  const int64_t oh = (p.h + p.pad_top + p.pad_bottom - p.kh) / p.stride_h + 1;
  const int64_t ow = (p.w + p.pad_left + p.pad_right - p.kw) / p.stride_w + 1;
  tcc_uk_pool2d_params_t q = {};
  q.n = p.n, q.c = p.f, q.h = oh, q.w = ow;
  q.kh = q.kw = k;
  q.stride_h = q.stride_w = stride;
  q.pad_top = q.pad_left = pad;
  q.oh = (oh + 2 * pad - k + stride - 1) / stride + 1; // ceil mode
  q.ow = (ow + 2 * pad - k + stride - 1) / stride + 1;
  std::vector<float> x = randomVector(p.n * p.c * p.h * p.w, 1);
  std::vector<float> w = randomVector(p.f * p.c * p.kh * p.kw, 2);
  std::vector<float> bias = randomVector(p.f, 3);
  std::vector<float> y(p.n * p.f * oh * ow), pooled(p.n * p.f * q.oh * q.ow);
  std::vector<float> packed(v.convPackWeightsBytes(v.isaFn(), &p) / 4 + 1);
  v.convPackWeights(v.isaFn(), &p, w.data(), packed.data());
  p.flags = TCC_UK_PACKED_A;
  tcc_uk_conv2d_params_t fused = p;
  fused.pool = 1;
  fused.pool_window = q;
  std::vector<char> scratch(v.convScratchBytes(v.isaFn(), &p) + 1);
  std::vector<char> fusedScratch(v.convScratchBytes(v.isaFn(), &fused) + 1);
  p.scratch = scratch.data();
  fused.scratch = fusedScratch.data();
  tcc_uk_epilogue_t ep = {};
  ep.bias = bias.data();
  ep.bias_per_row = 1;
  ep.has_clamp = 1;
  ep.clamp_max = 1e30f;
  std::printf("  %-34s", name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto one = timeIt(o.seconds, [&] {
      v.conv2d(host, &fused, x.data(), packed.data(), pooled.data(), &ep);
    });
    auto two = timeIt(o.seconds, [&] {
      v.conv2d(host, &p, x.data(), packed.data(), y.data(), &ep);
      v.maxpool2d(host, &q, y.data(), pooled.data());
    });
    std::printf("   %7.3f (%7.3f) two %7.3f (%7.3f)", one.first * 1e3,
                one.second * 1e3, two.first * 1e3, two.second * 1e3);
  }
  std::printf("\n");
  std::fflush(stdout);
}

struct PoolShapeDesc {
  const char *name;
  struct {
    int64_t n, c, h, w, k, stride, pad, ceil;
  } s;
};

/// A max pooling (or with `avg`, an average pooling counting its pads),
/// square window, as the compiler calls it.
void benchPool(const Variant &v, const Options &o,
               const std::vector<Pool *> &pools, const PoolShapeDesc &d,
               bool avg = false) {
  tcc_uk_pool2d_params_t p = {};
  p.n = d.s.n;
  p.c = d.s.c;
  p.h = d.s.h;
  p.w = d.s.w;
  p.kh = p.kw = d.s.k;
  p.stride_h = p.stride_w = d.s.stride;
  p.pad_top = p.pad_left = d.s.pad;
  auto out = [&](int64_t x) {
    const int64_t span = x + 2 * d.s.pad - d.s.k;
    return (d.s.ceil ? (span + d.s.stride - 1) / d.s.stride
                     : span / d.s.stride) +
           1;
  };
  p.oh = out(p.h);
  p.ow = out(p.w);
  std::vector<float> x = randomVector(p.n * p.c * p.h * p.w, 1);
  std::vector<float> y(p.n * p.c * p.oh * p.ow);
  tcc_uk_avgpool2d_params_t a = {};
  a.window = p;
  a.pad_bottom = a.pad_right = d.s.pad;
  a.count_include_pad = 1;
  std::printf("  %-34s", d.name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto t = timeIt(o.seconds, [&] {
      if (avg)
        v.avgpool2d(host, &a, x.data(), y.data());
      else
        v.maxpool2d(host, &p, x.data(), y.data());
    });
    std::printf("   %7.3f (%7.3f) %6.2f", t.first * 1e3, t.second * 1e3,
                double(y.size()) / t.first / 1e9);
  }
  std::printf("\n");
  std::fflush(stdout);
}

/// Attention over `heads` heads of a sequence of s tokens, d = 64, its
/// operands as a transformer's projections leave them: each head's
/// columns of a tokens x (heads d) matrix (K used transposed, as K^T's
/// rows), the output likewise: ms and GFLOP/s (the two products).
void benchAttention(const Variant &v, const Options &o,
                    const std::vector<Pool *> &pools, const char *name,
                    int64_t heads, int64_t s, bool causal = false) {
  const int64_t d = 64, ld = heads * d;
  tcc_uk_attention_params_t p = {};
  p.batch = heads;
  p.sq = p.sk = s;
  p.d = p.dv = d;
  p.ldq = p.ldk = p.ldv = p.ldo = ld;
  p.stride_q = p.stride_k = p.stride_v = p.stride_o = d;
  p.scale = 0.125f;
  p.flags = TCC_UK_ATTN_TRANS_K;
  // A decoder's causal mask: bytes, set above the diagonal (fill -inf).
  std::vector<uint8_t> mask(s * s);
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j)
      mask[i * s + j] = j > i;
  if (causal) {
    p.mask_kind = TCC_UK_MASK_SELECT;
    p.fill = -std::numeric_limits<float>::infinity();
    p.ldm = s;
  }
  std::vector<float> q = randomVector(s * ld, 1), k = randomVector(s * ld, 2),
                     vv = randomVector(s * ld, 3), out(s * ld);
  std::vector<char> scratch(v.attentionScratchBytes(v.isaFn(), &p) + 1);
  p.scratch = scratch.data();
  const double flops = 4.0 * heads * s * s * d;
  std::printf("  %-34s", name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto t = timeIt(o.seconds, [&] {
      v.attention(host, &p, q.data(), k.data(), vv.data(),
                  causal ? mask.data() : nullptr, out.data());
    });
    std::printf("   %7.3f (%7.3f) %6.1f", t.first * 1e3, t.second * 1e3,
                flops / t.first / 1e9);
  }
  std::printf("\n");
  std::fflush(stdout);
}

/// A depthwise convolution (3x3, bias + relu6) and the 1x1 convolution to
/// f channels after it (bias), as one tcc_uk_dwpw_conv2d_nchw call and,
/// for comparison, as the two tcc_uk_conv2d_nchw calls a compiler would
/// make otherwise: ms of each per thread count.
void benchDwpw(const Variant &v, const Options &o,
               const std::vector<Pool *> &pools, const char *name,
               tcc_uk_conv2d_params_t dw, int64_t f) {
  const int64_t oh = (dw.h + 2 * dw.pad_top - dw.kh) / dw.stride_h + 1;
  const int64_t ow = (dw.w + 2 * dw.pad_left - dw.kw) / dw.stride_w + 1;
  std::vector<float> x = randomVector(dw.c * dw.h * dw.w, 1);
  std::vector<float> dwW = randomVector(dw.c * dw.kh * dw.kw, 2);
  std::vector<float> dwB = randomVector(dw.c, 3), pwB = randomVector(f, 4);
  std::vector<float> pwW = randomVector(f * dw.c, 5);
  tcc_uk_conv2d_params_t pw = conv(dw.c, oh, f, 1, 1, 0, 1);
  pw.w = ow;
  std::vector<float> pwPacked(v.convPackWeightsBytes(v.isaFn(), &pw) / 4);
  v.convPackWeights(v.isaFn(), &pw, pwW.data(), pwPacked.data());
  pw.flags = TCC_UK_PACKED_A;
  std::vector<char> pwScratch(v.convScratchBytes(v.isaFn(), &pw) + 1);
  pw.scratch = pwScratch.data();
  tcc_uk_dwpw_params_t p = {};
  p.dw = dw;
  p.f = f;
  p.dw_bias = dwB.data();
  p.dw_has_clamp = 1;
  p.dw_clamp_min = 0.0f;
  p.dw_clamp_max = 6.0f;
  p.flags = TCC_UK_PACKED_A;
  std::vector<char> scratch(v.dwpwScratchBytes(v.isaFn(), &p) + 1);
  p.scratch = scratch.data();
  std::vector<float> mid(dw.c * oh * ow);
  // --cold-inputs rotates the input and the output, --cold-weights both
  // convolutions' weights.
  Copies xs(x, o.coldInputs), ys(std::vector<float>(f * oh * ow), o.coldInputs);
  Copies dwWs(dwW, o.coldWeights), pwWs(pwPacked, o.coldWeights);
  Turns turn = {o.coldInputs, o.coldWeights};
  tcc_uk_epilogue_t ep = {}, dwEp = {};
  ep.bias = pwB.data();
  dwEp.bias = dwB.data();
  dwEp.has_clamp = 1;
  dwEp.clamp_max = 6.0f;
  std::printf("  %-34s", name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    auto one = timeIt(o.seconds, [&] {
      v.dwpwConv2d(host, &p, xs.at(turn.nx), dwWs.at(turn.nw), pwWs.at(turn.nw),
                   ys.at(turn.nx), &ep);
      turn.advance();
    });
    auto two = timeIt(o.seconds, [&] {
      v.conv2d(host, &dw, xs.at(turn.nx), dwWs.at(turn.nw), mid.data(), &dwEp);
      v.conv2d(host, &pw, mid.data(), pwWs.at(turn.nw), ys.at(turn.nx), &ep);
      turn.advance();
    });
    std::printf("   %7.3f (%7.3f) two calls %7.3f (%7.3f)", one.first * 1e3,
                one.second * 1e3, two.first * 1e3, two.second * 1e3);
  }
  std::printf("\n");
  std::fflush(stdout);
}

/// A 1x1 expansion from c channels (bias + relu6), a depthwise 3x3 (bias +
/// relu6) and the 1x1 to f channels (bias), as one tcc_uk_block_conv2d_nchw
/// call and as the two calls (a conv2d, then a dwpw) a compiler makes
/// otherwise: ms of each per thread count.
void benchBlock(const Variant &v, const Options &o,
                const std::vector<Pool *> &pools, const char *name,
                tcc_uk_conv2d_params_t ex, tcc_uk_conv2d_params_t dw,
                int64_t f) {
  const int64_t e = dw.c, c = ex.c;
  const int64_t oh = (dw.h + 2 * dw.pad_top - dw.kh) / dw.stride_h + 1;
  const int64_t ow = (dw.w + 2 * dw.pad_left - dw.kw) / dw.stride_w + 1;
  std::vector<float> x = randomVector(c * ex.h * ex.w, 1);
  std::vector<float> expW = randomVector(e * c * ex.kh * ex.kw, 6);
  std::vector<float> expB = randomVector(e, 7);
  std::vector<float> dwW = randomVector(e * dw.kh * dw.kw, 2);
  std::vector<float> dwB = randomVector(e, 3), pwB = randomVector(f, 4);
  std::vector<float> pwW = randomVector(f * e, 5);
  auto pack = [&](tcc_uk_conv2d_params_t &cp, const std::vector<float> &w) {
    std::vector<float> out(v.convPackWeightsBytes(v.isaFn(), &cp) / 4);
    v.convPackWeights(v.isaFn(), &cp, w.data(), out.data());
    cp.flags = TCC_UK_PACKED_A;
    return out;
  };
  std::vector<float> expPacked = pack(ex, expW);
  std::vector<char> exScratch(v.convScratchBytes(v.isaFn(), &ex) + 1);
  ex.scratch = exScratch.data();
  tcc_uk_conv2d_params_t pw = conv(e, oh, f, 1, 1, 0, 1);
  pw.w = ow;
  std::vector<float> pwPacked = pack(pw, pwW);
  tcc_uk_block_params_t p = {};
  p.pair.dw = dw;
  p.pair.f = f;
  p.pair.dw_bias = dwB.data();
  p.pair.dw_has_clamp = 1;
  p.pair.dw_clamp_max = 6.0f;
  p.pair.flags = TCC_UK_PACKED_A;
  p.exp = ex;
  p.exp_bias = expB.data();
  p.exp_has_clamp = 1;
  p.exp_clamp_max = 6.0f;
  std::vector<char> scratch(v.blockScratchBytes(v.isaFn(), &p) + 1);
  // The block call's weights as a compiler packs them: for the
  // channel-blocked kernels where they run them, else as the GEMMs read
  // them.
  tcc_uk_block_params_t pb = p;
  std::vector<float> blockExp = expPacked, blockDw = dwW, blockPw = pwPacked;
  if (v.blockBlocked(v.isaFn(), &p)) {
    auto packBlocked = [&](int32_t part, const std::vector<float> &w) {
      std::vector<float> out(v.blockPackWeightsBytes(v.isaFn(), &p, part) / 4);
      v.blockPackWeights(v.isaFn(), &p, part, w.data(), out.data());
      return out;
    };
    blockExp = packBlocked(TCC_UK_BLOCK_EXPANSION, expW);
    blockDw = packBlocked(TCC_UK_BLOCK_DEPTHWISE, dwW);
    blockPw = packBlocked(TCC_UK_BLOCK_PROJECTION, pwW);
    pb.exp.flags |= TCC_UK_PACKED_BLOCKED;
  }
  std::vector<char> pairScratch(v.dwpwScratchBytes(v.isaFn(), &p.pair) + 1);
  std::vector<float> mid(e * dw.h * dw.w);
  // --cold-inputs rotates the input and the output, --cold-weights the
  // three convolutions' weights.
  Copies xs(x, o.coldInputs), ys(std::vector<float>(f * oh * ow), o.coldInputs);
  Copies expWs(expPacked, o.coldWeights), dwWs(dwW, o.coldWeights),
      pwWs(pwPacked, o.coldWeights);
  Copies blockExpWs(blockExp, o.coldWeights), blockDwWs(blockDw, o.coldWeights),
      blockPwWs(blockPw, o.coldWeights);
  Turns turn = {o.coldInputs, o.coldWeights};
  tcc_uk_epilogue_t ep = {}, exEp = {};
  ep.bias = pwB.data();
  exEp.bias = expB.data();
  exEp.bias_per_row = 1;
  exEp.has_clamp = 1;
  exEp.clamp_max = 6.0f;
  std::printf("  %-34s", name);
  for (size_t i = 0; i < o.threads.size(); ++i) {
    const tcc_host_api_t *host = pools[i]->host();
    pb.pair.scratch = scratch.data();
    auto one = timeIt(o.seconds, [&] {
      v.blockConv2d(host, &pb, xs.at(turn.nx), blockExpWs.at(turn.nw),
                    blockDwWs.at(turn.nw), blockPwWs.at(turn.nw),
                    ys.at(turn.nx), &ep);
      turn.advance();
    });
    p.pair.scratch = pairScratch.data();
    auto two = timeIt(o.seconds, [&] {
      v.conv2d(host, &ex, xs.at(turn.nx), expWs.at(turn.nw), mid.data(), &exEp);
      v.dwpwConv2d(host, &p.pair, mid.data(), dwWs.at(turn.nw),
                   pwWs.at(turn.nw), ys.at(turn.nx), &ep);
      turn.advance();
    });
    tcc_uk_conv2d_params_t dwAlone = dw, pwAlone = pw;
    std::vector<float> dwOut(e * oh * ow);
    tcc_uk_epilogue_t dwEp = {};
    dwEp.bias = dwB.data();
    dwEp.bias_per_row = 1;
    dwEp.has_clamp = 1;
    dwEp.clamp_max = 6.0f;
    std::vector<char> pwScratch(v.convScratchBytes(v.isaFn(), &pwAlone) + 1);
    pwAlone.scratch = pwScratch.data();
    auto three = timeIt(o.seconds, [&] {
      v.conv2d(host, &ex, xs.at(turn.nx), expWs.at(turn.nw), mid.data(), &exEp);
      v.conv2d(host, &dwAlone, mid.data(), dwWs.at(turn.nw), dwOut.data(),
               &dwEp);
      v.conv2d(host, &pwAlone, dwOut.data(), pwWs.at(turn.nw), ys.at(turn.nx),
               &ep);
      turn.advance();
    });
    std::printf("   %7.3f (%7.3f) two %7.3f (%7.3f) three %7.3f (%7.3f)",
                one.first * 1e3, one.second * 1e3, two.first * 1e3,
                two.second * 1e3, three.first * 1e3, three.second * 1e3);
  }
  std::printf("\n");
  std::fflush(stdout);
}

void usage() {
  std::fprintf(stderr,
               "usage: tcc-ukernel-bench [--variant NAME] "
               "[--threads 1,2] [--seconds S] "
               "[--only gemm|shapes|conv|pool|attention] [--match TEXT] "
               "[--openblas LIB] [--cold-weights N]\n"
               "       [--cold-inputs N] [--dirty BYTES]\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc)
      usage();
    if (arg == "--variant") {
      o.variant = argv[++i];
    } else if (arg == "--threads") {
      o.threads.clear();
      for (char *s = argv[++i]; *s;) {
        o.threads.push_back(static_cast<int>(std::strtol(s, &s, 10)));
        if (*s == ',')
          ++s;
        else if (*s)
          usage();
      }
    } else if (arg == "--seconds") {
      o.seconds = std::atof(argv[++i]);
    } else if (arg == "--only") {
      o.only = argv[++i];
    } else if (arg == "--cold-weights") {
      o.coldWeights = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--cold-inputs") {
      o.coldInputs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--dirty") {
      gDirty.assign(static_cast<size_t>(std::max(0L, std::atol(argv[++i]))), 0);
    } else if (arg == "--match") {
      o.match = argv[++i];
    } else if (arg == "--openblas") {
      static OpenBlas lib;
      if (!lib.load(argv[++i])) {
        const char *why = dlerror();
        std::fprintf(stderr, "cannot use %s as OpenBLAS: %s\n", argv[i],
                     why ? why : "no cblas_sgemm or openblas_set_num_threads");
        return 1;
      }
      o.openblas = &lib;
    } else {
      usage();
    }
  }
  int count = 0;
  const Variant *const *all = tcc::ukvariants::allVariants(&count);
  const Variant *v = nullptr;
  for (int i = 0; i < count; ++i) {
    if (o.variant.empty()
            ? tcc::ukvariants::cpuSupports(*all[i]) && all[i]->isa >= 0
            : o.variant == all[i]->name)
      v = all[i]; // the last match: the widest ISA the CPU runs
  }
  if (!v || !tcc::ukvariants::cpuSupports(*v)) {
    std::fprintf(stderr, "no runnable variant '%s'\n", o.variant.c_str());
    return 1;
  }
  std::vector<Pool *> pools;
  for (int t : o.threads)
    pools.push_back(new Pool(t));

  std::printf("tcc micro-kernels, variant %s; best (median) of %.2f s per "
              "case\n",
              v->name, o.seconds);
  std::string header;
  for (int t : o.threads) {
    header += "       " + std::to_string(t) + " thread" + (t > 1 ? "s" : " ") +
              "      ";
    if (o.openblas)
      header +=
          std::string("   OpenBLAS ") + (t > 1 ? "" : " ") + "        tcc/OB";
  }
  if (o.only.empty() || o.only == "gemm") {
    std::printf("\nsgemm GFLOP/s, C = A*B row-major, B packed each call\n"
                "      m     n     k%s\n",
                header.c_str());
    for (int64_t s : {256, 512, 1024, 2048})
      benchGemm(*v, o, pools, s, s, s, false, "");
  }
  if (o.only.empty() || o.only == "shapes") {
    std::printf("\nsgemm GFLOP/s at CNN shapes\n      m     n     k%s\n",
                header.c_str());
    benchGemm(*v, o, pools, 64, 3136, 576, false,
              "resnet18 layer1 3x3 conv as GEMM");
    benchGemm(*v, o, pools, 128, 784, 1152, false, "resnet18 layer2 3x3");
    benchGemm(*v, o, pools, 512, 49, 4608, false, "resnet18 layer4 3x3");
    benchGemm(*v, o, pools, 64, 196, 288, false, "small CNN 3x3 32->64 14");
    benchGemm(*v, o, pools, 64, 1568, 288, false, "the same, 8 images");
    benchGemm(*v, o, pools, 1, 1000, 512, false, "resnet18 fc, batch 1");
    benchGemm(*v, o, pools, 1, 1000, 512, true, "resnet18 fc, B prepacked");
    benchGemm(*v, o, pools, 8, 1000, 512, false, "fc, batch 8");
    // Batch-1 classifiers, weights prepacked: a GEMV streaming them (from
    // L3 in a model: --cold-weights).
    benchGemm(*v, o, pools, 1, 1000, 1280, true, "classifier 1280->1000");
    benchGemm(*v, o, pools, 1, 1280, 960, true, "classifier 960->1280");
    benchGemm(*v, o, pools, 1, 1000, 1024, true, "classifier 1024->1000");
    // Squeeze-and-excitation FCs (1x1 convolutions of one pixel), weights
    // prepacked: small GEMVs whose time is streaming the weights.
    benchGemm(*v, o, pools, 1, 168, 672, true, "SE reduce 672->168");
    benchGemm(*v, o, pools, 1, 672, 168, true, "SE expand 168->672");
    benchGemm(*v, o, pools, 1, 120, 480, true, "SE reduce 480->120");
    benchGemm(*v, o, pools, 1, 960, 240, true, "SE expand 240->960");
    benchGemm(*v, o, pools, 1, 32, 120, true, "SE reduce 120->32");
    // The encoder layer's projections (sequence 128, BERT-base), weights
    // prepacked as the compiler packs constant weights.
    benchGemm(*v, o, pools, 128, 2304, 768, true, "encoder QKV, B prepacked");
    benchGemm(*v, o, pools, 128, 768, 768, true, "encoder out proj");
    benchGemm(*v, o, pools, 128, 3072, 768, true, "encoder FFN up");
    benchGemm(*v, o, pools, 128, 768, 3072, true, "encoder FFN down");
    // The same at sequence 512 (the zoo's encoder): four times the rows,
    // the weights no longer reused from L2 between calls.
    benchGemm(*v, o, pools, 512, 3072, 768, true, "encoder FFN up, seq 512");
    benchGemm(*v, o, pools, 512, 768, 3072, true, "encoder FFN down, seq 512");
    // ViT-B/16's products: 197 tokens (a last row panel of 5 rows).
    benchGemm(*v, o, pools, 197, 2304, 768, true, "vit QKV");
    benchGemm(*v, o, pools, 197, 3072, 768, true, "vit FFN up");
    benchGemm(*v, o, pools, 197, 768, 3072, true, "vit FFN down");
    // GELU in the epilogue: ViT's FFN up, and ConvNeXt-T's first stage
    // (56x56 pixels, 96 -> 384), whose few K leave the activation a large
    // share.
    benchGemm(*v, o, pools, 197, 3072, 768, true, "vit FFN up + GELU", 0,
              TCC_UK_ACT_GELU);
    benchGemm(*v, o, pools, 3136, 384, 96, true, "convnext FFN up");
    benchGemm(*v, o, pools, 3136, 384, 96, true, "convnext FFN up + GELU", 0,
              TCC_UK_ACT_GELU);
    // Few rows (a small batch) to a few hundred: where taking prepacked
    // weights a panel at a time through every row panel pays and where it
    // stops (sgemm.cc, panelsOuterFits).
    benchGemm(*v, o, pools, 4, 3072, 768, true, "FFN up, 4 rows");
    benchGemm(*v, o, pools, 8, 3072, 768, true, "FFN up, 8 rows");
    benchGemm(*v, o, pools, 16, 3072, 768, true, "FFN up, 16 rows");
    benchGemm(*v, o, pools, 24, 3072, 768, true, "FFN up, 24 rows");
    benchGemm(*v, o, pools, 256, 3072, 768, true, "FFN up, 256 rows");
    benchGemm(*v, o, pools, 320, 3072, 768, true, "FFN up, 320 rows");
    benchGemm(*v, o, pools, 384, 3072, 768, true, "FFN up, 384 rows");
    // A training step's products, weights packed each call: the forward
    // x W^T, the input gradient g W and the weight gradient g^T x of a
    // linear layer (tokens 512, d 128 -> 256; the MLP at batch 64).
    benchGemm(*v, o, pools, 512, 256, 128, false, "train fwd x W^T",
              TCC_UK_TRANS_B);
    benchGemm(*v, o, pools, 512, 128, 256, false, "train dX = g W");
    benchGemm(*v, o, pools, 256, 128, 512, false, "train dW = g^T x",
              TCC_UK_TRANS_A);
    benchGemm(*v, o, pools, 64, 512, 784, false, "MLP fwd x W^T",
              TCC_UK_TRANS_B);
    benchGemm(*v, o, pools, 512, 784, 64, false, "MLP dW = g^T x",
              TCC_UK_TRANS_A);
  }
  if (o.only.empty() || o.only == "conv") {
    const ConvShapeDesc convs[] = {
        {"resnet18 conv1 7x7/2 3->64 224", conv(3, 224, 64, 7, 2, 3, 1)},
        {"resnet18 l1 3x3 64->64 56", conv(64, 56, 64, 3, 1, 1, 1)},
        {"resnet18 l2 3x3/2 64->128 56", conv(64, 56, 128, 3, 2, 1, 1)},
        {"resnet18 l2 1x1/2 64->128 56", conv(64, 56, 128, 1, 2, 0, 1)},
        {"resnet18 l2 3x3 128->128 28", conv(128, 28, 128, 3, 1, 1, 1)},
        {"resnet18 l3 3x3 256->256 14", conv(256, 14, 256, 3, 1, 1, 1)},
        {"resnet18 l4 3x3 512->512 7", conv(512, 7, 512, 3, 1, 1, 1)},
        {"mbv2 conv 3x3/2 3->32 224", conv(3, 224, 32, 3, 2, 1, 1)},
        {"mbv2 dw 3x3 32 112", conv(32, 112, 32, 3, 1, 1, 32)},
        {"mbv2 pw 1x1 32->16 112", conv(32, 112, 16, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 16->96 112", conv(16, 112, 96, 1, 1, 0, 1)},
        {"mnas pw 1x1 16->48 112", conv(16, 112, 48, 1, 1, 0, 1)},
        {"mnas dw 3x3/2 48 112", conv(48, 112, 48, 3, 2, 1, 48)},
        {"mnas pw 1x1 48->24 56", conv(48, 56, 24, 1, 1, 0, 1)},
        {"mbv2 dw 3x3/2 96 112", conv(96, 112, 96, 3, 2, 1, 96)},
        {"mbv2 dw 3x3 144 56", conv(144, 56, 144, 3, 1, 1, 144)},
        {"mbv2 pw 1x1 144->24 56", conv(144, 56, 24, 1, 1, 0, 1)},
        {"mbv2 dw 3x3 960 7", conv(960, 7, 960, 3, 1, 1, 960)},
        {"mbv2 pw 1x1 960->320 7", conv(960, 7, 320, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 32->192 28", conv(32, 28, 192, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 64->384 14", conv(64, 14, 384, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 96->576 14", conv(96, 14, 576, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 160->960 7", conv(160, 7, 960, 1, 1, 0, 1)},
        {"mbv2 pw 1x1 320->1280 7", conv(320, 7, 1280, 1, 1, 0, 1)},
        {"mbv2 dw 3x3 384 14", conv(384, 14, 384, 3, 1, 1, 384)},
        {"mbv2 pw 1x1 384->64 14", conv(384, 14, 64, 1, 1, 0, 1)},
        {"mbv2 dw 3x3 576 14", conv(576, 14, 576, 3, 1, 1, 576)},
        {"mbv2 pw 1x1 576->96 14", conv(576, 14, 96, 1, 1, 0, 1)},
        {"effnet dw 5x5 240 28", conv(240, 28, 240, 5, 1, 2, 240)},
        {"effnet dw 5x5/2 144 56", conv(144, 56, 144, 5, 2, 2, 144)},
        {"effnet dw 5x5 672 14", conv(672, 14, 672, 5, 1, 2, 672)},
        {"effnet dw 5x5 1152 7", conv(1152, 7, 1152, 5, 1, 2, 1152)},
        {"mnas dw 5x5/2 72 56", conv(72, 56, 72, 5, 2, 2, 72)},
        {"mnas dw 5x5 120 28", conv(120, 28, 120, 5, 1, 2, 120)},
        {"mnas dw 5x5/2 240 28", conv(240, 28, 240, 5, 2, 2, 240)},
        {"mnas dw 5x5 480 14", conv(480, 14, 480, 5, 1, 2, 480)},
        {"mnas dw 5x5/2 576 14", conv(576, 14, 576, 5, 2, 2, 576)},
        {"mbv2 dw 3x3 192 28", conv(192, 28, 192, 3, 1, 1, 192)},
        {"mbv2 dw 3x3/2 144 56", conv(144, 56, 144, 3, 2, 1, 144)},
        {"mbv2 dw 3x3/2 576 14", conv(576, 14, 576, 3, 2, 1, 576)},
        {"mbv2 dw 3x3/2 192 28", conv(192, 28, 192, 3, 2, 1, 192)},
        {"convnext dw 7x7 192 28", conv(192, 28, 192, 7, 1, 3, 192)},
        {"cnn b8 3x3 1->32 28", batch(conv(1, 28, 32, 3, 1, 1, 1), 8)},
        {"cnn b8 3x3 32->64 14", batch(conv(32, 14, 64, 3, 1, 1, 1), 8)},
        {"cnn b32 3x3 32->64 14", batch(conv(32, 14, 64, 3, 1, 1, 1), 32)},
        {"small 3x3 32->32 14", conv(32, 14, 32, 3, 1, 1, 1)},
        {"small 3x3 64->64 14", conv(64, 14, 64, 3, 1, 1, 1)},
        {"small 3x3 96->96 14", conv(96, 14, 96, 3, 1, 1, 1)},
        {"small 3x3 128->128 14", conv(128, 14, 128, 3, 1, 1, 1)},
        {"small 3x3 64->64 7", conv(64, 7, 64, 3, 1, 1, 1)},
        {"small 3x3 128->128 7", conv(128, 7, 128, 3, 1, 1, 1)},
        {"small 3x3 32->64 28", conv(32, 28, 64, 3, 1, 1, 1)},
        {"densenet 3x3 128->32 14", conv(128, 14, 32, 3, 1, 1, 1)},
        {"densenet 3x3 128->32 7", conv(128, 7, 32, 3, 1, 1, 1)},
        {"squeezenet 3x3 32->128 27", conv(32, 27, 128, 3, 1, 1, 1)},
        {"squeezenet 3x3 48->192 13", conv(48, 13, 192, 3, 1, 1, 1)},
        {"squeezenet 3x3 64->256 13", conv(64, 13, 256, 3, 1, 1, 1)},
        {"googlenet 3x3 96->208 14", conv(96, 14, 208, 3, 1, 1, 1)},
        {"googlenet 3x3 160->320 7", conv(160, 7, 320, 3, 1, 1, 1)},
        {"small b8 3x3 64->64 28", batch(conv(64, 28, 64, 3, 1, 1, 1), 8)},
        {"small 3x3/2 128->256 28", conv(128, 28, 256, 3, 2, 1, 1)},
        {"small 3x3/2 64->128 28", conv(64, 28, 128, 3, 2, 1, 1)},
        {"small 3x3/2 256->512 14", conv(256, 14, 512, 3, 2, 1, 1)},
        {"small 5x5 32->64 14", conv(32, 14, 64, 5, 1, 2, 1)},
        {"googlenet 5x5 16->32 28", conv(16, 28, 32, 5, 1, 2, 1)},
        {"googlenet 5x5 32->128 14", conv(32, 14, 128, 5, 1, 2, 1)},
        {"googlenet 5x5 48->128 7", conv(48, 7, 128, 5, 1, 2, 1)},
        {"resnext g32 3x3 512 14", conv(512, 14, 512, 3, 1, 1, 32)},
        {"resnext g32 3x3/2 512 28", conv(512, 28, 512, 3, 2, 1, 32)},
        {"resnext g32 3x3 1024 7", conv(1024, 7, 1024, 3, 1, 1, 32)},
        {"resnext g32 3x3/2 1024 14", conv(1024, 14, 1024, 3, 2, 1, 32)},
        {"resnext g32 3x3 256 28", conv(256, 28, 256, 3, 1, 1, 32)},
        {"regnet g8 3x3 208 14", conv(208, 14, 208, 3, 1, 1, 26)},
        {"resnext g32 3x3 128 56", conv(128, 56, 128, 3, 1, 1, 32)},
        {"resnext g32 3x3/2 256 56", conv(256, 56, 256, 3, 2, 1, 32)},
        {"resnext g32 3x3 256 28 (8 a group)", conv(256, 28, 256, 3, 1, 1, 32)},
        {"regnet g8 3x3 48 56", conv(48, 56, 48, 3, 1, 1, 6)},
        {"regnet g8 3x3/2 104 56", conv(104, 56, 104, 3, 2, 1, 13)},
        {"regnet g8 3x3 440 7", conv(440, 7, 440, 3, 1, 1, 55)},
        {"squeezenet 1x1 512->1000 13", conv(512, 13, 1000, 1, 1, 0, 1)},
        {"squeezenet 3x3/2 3->64 224", conv(3, 224, 64, 3, 2, 0, 1)},
        {"squeezenet 1x1 16->64 55", conv(16, 55, 64, 1, 1, 0, 1)},
        {"squeezenet 1x1 32->128 27", conv(32, 27, 128, 1, 1, 0, 1)},
        {"squeezenet 1x1 48->192 13", conv(48, 13, 192, 1, 1, 0, 1)},
        {"squeezenet 1x1 48->96 13", conv(48, 13, 96, 1, 1, 0, 1)},
        {"squeezenet 1x1 64->256 13", conv(64, 13, 256, 1, 1, 0, 1)},
        {"squeezenet 1x1 128->32 27", conv(128, 27, 32, 1, 1, 0, 1)},
        {"squeezenet 1x1 256->32 27", conv(256, 27, 32, 1, 1, 0, 1)},
        {"squeezenet 1x1 256->48 13", conv(256, 13, 48, 1, 1, 0, 1)},
        {"squeezenet 1x1 384->64 13", conv(384, 13, 64, 1, 1, 0, 1)},
        {"squeezenet 1x1 512->64 13", conv(512, 13, 64, 1, 1, 0, 1)},
        {"inception 1x7 192->192 12", convKxK(192, 12, 192, 1, 7)},
        {"inception 7x1 192->192 12", convKxK(192, 12, 192, 7, 1)},
        {"inception 1x7 128->128 12", convKxK(128, 12, 128, 1, 7)},
        {"inception 7x1 160->192 12", convKxK(160, 12, 192, 7, 1)},
        {"inception 1x3 384->384 5", convKxK(384, 5, 384, 1, 3)},
        {"inception 3x1 384->384 5", convKxK(384, 5, 384, 3, 1)},
        {"r50 1x1 256->64 56", conv(256, 56, 64, 1, 1, 0, 1)},
        {"r50 1x1 64->256 56", conv(64, 56, 256, 1, 1, 0, 1)},
        {"r50 1x1 512->128 28", conv(512, 28, 128, 1, 1, 0, 1)},
        {"r50 1x1 128->512 28", conv(128, 28, 512, 1, 1, 0, 1)},
        {"r50 1x1 1024->256 14", conv(1024, 14, 256, 1, 1, 0, 1)},
        {"r50 1x1 256->1024 14", conv(256, 14, 1024, 1, 1, 0, 1)},
        {"r50 1x1 2048->512 7", conv(2048, 7, 512, 1, 1, 0, 1)},
        {"r50 1x1 512->2048 7", conv(512, 7, 2048, 1, 1, 0, 1)},
        {"r50 3x3/2 128 56", conv(128, 56, 128, 3, 2, 1, 1)},
        {"r50 3x3/2 256 28", conv(256, 28, 256, 3, 2, 1, 1)},
        {"r50 3x3 512 7", conv(512, 7, 512, 3, 1, 1, 1)},
        {"r50 stem 7x7/2 3->64 224", conv(3, 224, 64, 7, 2, 3, 1)},
    };
    std::printf("\nconv2d ms (GFLOP/s), batch 1, prepacked weights, bias + "
                "relu fused\n  %-34s%s\n",
                "", header.c_str());
    for (const ConvShapeDesc &d : convs)
      if (std::strstr(d.name, o.match.c_str()))
        benchConv(*v, o, pools, d);
    std::printf("\ndepthwise 3x3 or 5x5 (bias, relu6) then 1x1 (bias), ms: one "
                "dwpw call, and two conv2d calls\n");
    const struct {
      const char *name;
      tcc_uk_conv2d_params_t dw;
      int64_t f;
    } pairs[] = {
        {"mbv2 dwpw 32 112 -> 16", conv(32, 112, 32, 3, 1, 1, 32), 16},
        {"mbv2 dwpw /2 96 112 -> 24", conv(96, 112, 96, 3, 2, 1, 96), 24},
        {"mbv2 dwpw 144 56 -> 24", conv(144, 56, 144, 3, 1, 1, 144), 24},
        {"mbv2 dwpw 192 28 -> 32", conv(192, 28, 192, 3, 1, 1, 192), 32},
        {"mbv2 dwpw 576 14 -> 96", conv(576, 14, 576, 3, 1, 1, 576), 96},
        {"mbv2 dwpw 384 14 -> 64", conv(384, 14, 384, 3, 1, 1, 384), 64},
        {"mbv2 dwpw 960 7 -> 160", conv(960, 7, 960, 3, 1, 1, 960), 160},
        {"mnas dwpw 72 56 -> 24", conv(72, 56, 72, 3, 1, 1, 72), 24},
        {"mnas dwpw 5x5 /2 72 56 -> 40", conv(72, 56, 72, 5, 2, 2, 72), 40},
        {"mnas dwpw 5x5 120 28 -> 40", conv(120, 28, 120, 5, 1, 2, 120), 40},
        {"mnas dwpw 5x5 /2 240 28 -> 80", conv(240, 28, 240, 5, 2, 2, 240), 80},
        {"mnas dwpw 5x5 480 14 -> 80", conv(480, 14, 480, 5, 1, 2, 480), 80},
        {"mnas dwpw 5x5 1152 7 -> 192", conv(1152, 7, 1152, 5, 1, 2, 1152),
         192},
    };
    for (const auto &d : pairs)
      if (std::strstr(d.name, o.match.c_str()))
        benchDwpw(*v, o, pools, d.name, d.dw, d.f);
    std::printf(
        "\n1x1 expansion (bias, relu6), depthwise 3x3 (bias, relu6), "
        "1x1 (bias), ms: one block call, conv2d + dwpw, three conv2d calls\n");
    // A 1x1 expansion from c channels to the depthwise input.
    auto expand = [](int64_t c, const tcc_uk_conv2d_params_t &dw) {
      tcc_uk_conv2d_params_t ex = conv(c, dw.h, dw.c, 1, 1, 0, 1);
      ex.w = dw.w;
      return ex;
    };
    const struct {
      const char *name;
      tcc_uk_conv2d_params_t ex;
      tcc_uk_conv2d_params_t dw;
      int64_t f;
    } blocks[] = {
        {"mbv2 stem 3x3/2 3 -> 32 224 -> 16", conv(3, 224, 32, 3, 2, 1, 1),
         conv(32, 112, 32, 3, 1, 1, 32), 16},
        {"mbv2 block 16 -> 96 /2 112 -> 24",
         expand(16, conv(96, 112, 96, 3, 2, 1, 96)),
         conv(96, 112, 96, 3, 2, 1, 96), 24},
        {"mbv3 block 16 -> 64 /2 112 -> 24",
         expand(16, conv(64, 112, 64, 3, 2, 1, 64)),
         conv(64, 112, 64, 3, 2, 1, 64), 24},
        {"mnas block 16 -> 48 /2 112 -> 24",
         expand(16, conv(48, 112, 48, 3, 2, 1, 48)),
         conv(48, 112, 48, 3, 2, 1, 48), 24},
        {"mbv2 block 24 -> 144 56 -> 24",
         expand(24, conv(144, 56, 144, 3, 1, 1, 144)),
         conv(144, 56, 144, 3, 1, 1, 144), 24},
        {"mnas block 24 -> 72 56 -> 24",
         expand(24, conv(72, 56, 72, 3, 1, 1, 72)),
         conv(72, 56, 72, 3, 1, 1, 72), 24},
        {"mnas block 40 -> 120 5x5 28 -> 40",
         expand(40, conv(120, 28, 120, 5, 1, 2, 120)),
         conv(120, 28, 120, 5, 1, 2, 120), 40},
        {"mnas block 24 -> 72 5x5 /2 56 -> 40",
         expand(24, conv(72, 56, 72, 5, 2, 2, 72)),
         conv(72, 56, 72, 5, 2, 2, 72), 40},
        {"mnas block 40 -> 240 5x5 /2 28 -> 80",
         expand(40, conv(240, 28, 240, 5, 2, 2, 240)),
         conv(240, 28, 240, 5, 2, 2, 240), 80},
        {"mnas block 80 -> 480 5x5 14 -> 80",
         expand(80, conv(480, 14, 480, 5, 1, 2, 480)),
         conv(480, 14, 480, 5, 1, 2, 480), 80},
        {"mnas block 80 -> 480 14 -> 96",
         expand(80, conv(480, 14, 480, 3, 1, 1, 480)),
         conv(480, 14, 480, 3, 1, 1, 480), 96},
        {"mnas block 96 -> 576 14 -> 96",
         expand(96, conv(576, 14, 576, 3, 1, 1, 576)),
         conv(576, 14, 576, 3, 1, 1, 576), 96},
        {"mnas block 192 -> 1152 5x5 7 -> 192",
         expand(192, conv(1152, 7, 1152, 5, 1, 2, 1152)),
         conv(1152, 7, 1152, 5, 1, 2, 1152), 192},
        {"mnas block 192 -> 1152 7 -> 320",
         expand(192, conv(1152, 7, 1152, 3, 1, 1, 1152)),
         conv(1152, 7, 1152, 3, 1, 1, 1152), 320},
        {"mbv2 block 24 -> 144 /2 56 -> 32",
         expand(24, conv(144, 56, 144, 3, 2, 1, 144)),
         conv(144, 56, 144, 3, 2, 1, 144), 32},
        {"mbv2 block 32 -> 192 28 -> 32",
         expand(32, conv(192, 28, 192, 3, 1, 1, 192)),
         conv(192, 28, 192, 3, 1, 1, 192), 32},
        {"mbv2 block 32 -> 192 /2 28 -> 64",
         expand(32, conv(192, 28, 192, 3, 2, 1, 192)),
         conv(192, 28, 192, 3, 2, 1, 192), 64},
        {"mnas block 96 -> 576 5x5 /2 14 -> 192",
         expand(96, conv(576, 14, 576, 5, 2, 2, 576)),
         conv(576, 14, 576, 5, 2, 2, 576), 192},
    };
    for (const auto &d : blocks)
      if (std::strstr(d.name, o.match.c_str()))
        benchBlock(*v, o, pools, d.name, d.ex, d.dw, d.f);
    std::printf("\nconvolution (bias, relu) then max pooling (ceil mode), "
                "ms: one call, two calls\n");
    const struct {
      const char *name;
      tcc_uk_conv2d_params_t p;
      int64_t k, stride, pad;
    } convPools[] = {
        {"squeezenet stem + pool 3x3/2", conv(3, 224, 64, 3, 2, 0, 1), 3, 2, 0},
        {"r18 stem 7x7/2 + pool 3x3/2 pad 1", conv(3, 224, 64, 7, 2, 3, 1), 3,
         2, 1},
    };
    for (const auto &d : convPools)
      if (std::strstr(d.name, o.match.c_str()))
        benchConvPool(*v, o, pools, d.name, d.p, d.k, d.stride, d.pad);
  }
  if (o.only.empty() || o.only == "attention") {
    std::printf("\nattention ms (GFLOP/s), d = 64, no mask\n  %-34s%s\n", "",
                header.c_str());
    benchAttention(*v, o, pools, "ViT-B/16: 12 heads x 197", 12, 197);
    benchAttention(*v, o, pools, "encoder: 12 heads x 128", 12, 128);
    benchAttention(*v, o, pools, "encoder: 12 heads x 512", 12, 512);
    benchAttention(*v, o, pools, "decoder: 12 heads x 128, causal", 12, 128,
                   true);
    benchAttention(*v, o, pools, "decoder: 12 heads x 512, causal", 12, 512,
                   true);
  }
  if (o.only.empty() || o.only == "pool") {
    std::printf("\nmax pooling ms (Goutputs/s)\n  %-34s%s\n", "",
                header.c_str());
    // n, c, h, w, k, stride, pad, ceil mode: the pools of the zoo's CNNs.
    const PoolShapeDesc shapes[] = {
        {"stem 3x3/2 64 112 ceil", {1, 64, 112, 112, 3, 2, 0, 1}},
        {"3x3/2 192 56 ceil", {1, 192, 56, 56, 3, 2, 0, 1}},
        {"3x3/1 pad 1 256 28", {1, 256, 28, 28, 3, 1, 1, 0}},
        {"3x3/2 480 28 ceil", {1, 480, 28, 28, 3, 2, 0, 1}},
        {"3x3/1 pad 1 512 14", {1, 512, 14, 14, 3, 1, 1, 0}},
        {"3x3/1 pad 1 832 7", {1, 832, 7, 7, 3, 1, 1, 0}},
        {"3x3/2 64 111 ceil", {1, 64, 111, 111, 3, 2, 0, 1}},
        {"3x3/2 128 55 ceil", {1, 128, 55, 55, 3, 2, 0, 1}},
        {"3x3/2 256 27 ceil", {1, 256, 27, 27, 3, 2, 0, 1}},
        {"stem 3x3/2 pad 1 64 112", {1, 64, 112, 112, 3, 2, 1, 0}},
        {"2x2/2 b32 32 28", {32, 32, 28, 28, 2, 2, 0, 0}},
    };
    for (const PoolShapeDesc &d : shapes)
      if (std::strstr(d.name, o.match.c_str()))
        benchPool(*v, o, pools, d);
    std::printf("\naverage pooling (pads counted) ms (Goutputs/s)\n  %-34s%s\n",
                "", header.c_str());
    // Inception's 3x3 of stride 1 at 25x25, 12x12 and 5x5; a DenseNet
    // transition's 2x2 of stride 2.
    const PoolShapeDesc avgShapes[] = {
        {"avg 3x3/1 pad 1 288 25", {1, 288, 25, 25, 3, 1, 1, 0}},
        {"avg 3x3/1 pad 1 768 12", {1, 768, 12, 12, 3, 1, 1, 0}},
        {"avg 3x3/1 pad 1 1280 5", {1, 1280, 5, 5, 3, 1, 1, 0}},
        {"avg 2x2/2 256 56", {1, 256, 56, 56, 2, 2, 0, 0}},
        {"avg 3x3/2 pad 1 128 56", {1, 128, 56, 56, 3, 2, 1, 0}},
    };
    for (const PoolShapeDesc &d : avgShapes)
      if (std::strstr(d.name, o.match.c_str()))
        benchPool(*v, o, pools, d, /*avg=*/true);
  }
  for (Pool *p : pools)
    delete p;
  return 0;
}
