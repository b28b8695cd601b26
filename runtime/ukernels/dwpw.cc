// dwpw.cc - a depthwise convolution and the 1x1 convolution after it as
// one call (tcc_uk_dwpw_*): the depthwise kernel (depthwise.cc) writes an
// image's output into the call's scratch, where the pointwise GEMM reads
// it; where that GEMM's output is small next to the depthwise output, both
// run as two halves of the channels (of the GEMM's k), each thread
// computing and multiplying its own half.
#include "depthwise_internal.h"

#include <sched.h>
#include <stdlib.h>

#include <atomic>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

// resolvePair, pairGemm, pairMidFloats, partialFloats, pairSplitsK,
// kSplitPoint, runPairKSplit, depthwiseEpilogue and imageEpilogue: see
// depthwise_internal.h (block.cc uses them too).

bool resolvePair(const tcc_uk_dwpw_params_t *p, ConvShape &s) {
  return p && p->f > 0 && resolveConv(&p->dw, s) && s.groups == s.c &&
         s.f == s.c;
}

GemmArgs pairGemm(const tcc_uk_dwpw_params_t *p, const ConvShape &s,
                  const float *pwWeight, const MatrixB *mid) {
  GemmArgs ga = weightGemm(p->f, s.oh * s.ow, s.c,
                           (p->flags & TCC_UK_PACKED_A) != 0, pwWeight);
  ga.packB = packBMatrix;
  ga.bSrc = mid;
  ga.alwaysDirectB = true;
  return ga;
}

int64_t pairMidFloats(const ConvShape &s) {
  return ceilDiv(s.c * s.oh * s.ow, 16) * 16;
}

/// Partial products of a pair that splits k take at most this many bytes.
constexpr int64_t kMaxPartialBytes = int64_t(1) << 20;

int64_t partialFloats(int64_t m, int64_t n) { return ceilDiv(m * n, 16) * 16; }

bool pairSplitsK(int32_t isa, const tcc_uk_dwpw_params_t *p,
                 const ConvShape &s) {
  const int64_t n = s.oh * s.ow;
  return isa == TCC_UK_ISA_AVX512 && depthwiseFast(isa, s) &&
         s.c >= 2 * kSplitUnitMax && n >= tilesFor(isa).nr && 3 * p->f <= s.c &&
         2 * p->f * n * static_cast<int64_t>(sizeof(float)) <=
             kMaxPartialBytes &&
         gemmScratchBytes(isa, (p->flags & TCC_UK_PACKED_A) | kAlwaysDirectB,
                          p->f, n, s.c) == 0;
}

namespace {

/// The depthwise output of one image (64-byte aligned), then what its
/// GEMM needs: two partial products when it splits k.
int64_t pairScratchBytes(int32_t isa, const tcc_uk_dwpw_params_t *p,
                         const ConvShape &s) {
  const int64_t partials =
      pairSplitsK(isa, p, s) ? 2 * partialFloats(p->f, s.oh * s.ow) : 0;
  return 64 +
         (pairMidFloats(s) + partials) * static_cast<int64_t>(sizeof(float)) +
         gemmScratchBytes(isa, (p->flags & TCC_UK_PACKED_A) | kAlwaysDirectB,
                          p->f, s.oh * s.ow, s.c);
}

/// A pair whose GEMM splits k in two: part q is the depthwise planes
/// [k0, k1) of its half and the product of the pointwise weights' columns
/// [k0, k1) with them into partial q; the two partials are then summed
/// with the epilogue, by rows. Otherwise the depthwise part is split by
/// planes and the GEMM by columns, so each thread read half of the
/// depthwise output from the other core's cache, and all of the weights;
/// here it reads its own half of both.
///
/// All of it is one parallel loop whose tasks claim its pieces as they
/// run: task t starts on part t % 2 (its depthwise chunks, then, once all
/// of the part's planes are in, its GEMM), then takes what is left of the
/// other part, then, once both partials are done, the sum's chunks of
/// rows. With both threads at one speed each does its own part, as with
/// fixed halves; with one slower (a VM's CPUs do not always run at one
/// speed) the other takes the end of its depthwise planes instead of
/// waiting for them, and a task that never starts leaves nothing undone.
/// A part's GEMM stays one piece: chunks of rows that the other task could
/// take would each stream all of the half's depthwise output again. The
/// halves and the chunks are fixed by the shape, not by the threads or
/// the timing, so neither are the bits.
///
/// In a block (block.cc), a part starts with its half of the expansion:
/// the rows [k0, k1) of the first convolution's GEMM (its planes of the
/// depthwise input), which its depthwise chunks wait for, so the expanded
/// tensor stays in the cache of the core that reads it.
constexpr int64_t kKSplitDwChunks = 4;  // of each part's planes
constexpr int64_t kKSplitSumChunks = 8; // of the output's rows, at most

struct KSplitJob {
  const ConvShape *one;
  const float *image, *dwWeight; // image: the depthwise input
  const tcc_uk_epilogue_t *dwEp;
  float *mid, *partial;
  const GemmArgs *g;        // the whole GEMM: A, m, n, k, output and epilogue
  const PairExpansion *exp; // NULL, or the block's expansion into image
  // Each half's depthwise planes, as runDepthwisePlanes takes them.
  ConvShape half[2];
  tcc_uk_epilogue_t halfEp[2];
  FlatTaps taps;
  DepthwiseJob dw[2];
  int64_t split; // part 0 has planes [0, split), part 1 [split, c)
  int64_t sumRows, sumChunks;
  // Per part: the next depthwise chunk to claim, those done, whether its
  // GEMM is claimed, whether its expansion is claimed, done; over both:
  // GEMMs done; the next sum chunk.
  std::atomic<int64_t> dwNext[2], dwDone[2], gemmClaimed[2];
  std::atomic<int64_t> expClaimed[2], expDone[2];
  std::atomic<int64_t> gemmDone, sumNext;
};

/// Planes [k0, k1) of part q.
void kSplitHalf(const KSplitJob &job, int64_t q, int64_t &k0, int64_t &k1) {
  k0 = q ? job.split : 0;
  k1 = q ? job.one->c : job.split;
}

/// Spins until `v` reaches `target` (another task finishing a piece it has
/// claimed), yielding the CPU now and then in case that task's thread is
/// not running.
void waitUntil(const std::atomic<int64_t> &v, int64_t target) {
  for (int64_t spins = 0; v.load(std::memory_order_acquire) < target; ++spins) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (spins % 4096 == 4095)
      sched_yield();
  }
}

/// The rows [k0, k1) of the expansion that part q computes: its planes of
/// the depthwise input, but for packed weights cut between row panels,
/// the planes of part 0 past the last whole panel go to part 1.
void expansionHalf(const KSplitJob &job, int64_t q, int64_t &k0, int64_t &k1) {
  const int64_t cut = job.exp->gemm.packedA ? job.split / kMR * kMR : job.split;
  k0 = q ? cut : 0;
  k1 = q ? job.one->c : cut;
}

/// Part q's rows of the expansion.
void runExpansionHalf(const KSplitJob &job, int64_t q) {
  int64_t k0, k1;
  expansionHalf(job, q, k0, k1);
  const GemmArgs &e = job.exp->gemm;
  GemmArgs gq = e;
  gq.m = k1 - k0;
  gq.a = e.packedA ? e.a + k0 * e.k : e.a + k0 * e.ars;
  gq.c = e.c + k0 * e.ldc;
  tcc_uk_epilogue_t ep;
  if (e.ep) {
    ep = *e.ep;
    if (ep.bias)
      ep.bias += k0;
    gq.ep = &ep;
  }
  runGemm(NULL, gq, job.exp->scratch[q]);
}

/// Runs the expansion's half q if no task has claimed it; true if it did.
bool claimExpansion(KSplitJob &job, int64_t q) {
  if (job.expClaimed[q].exchange(1, std::memory_order_relaxed))
    return false;
  runExpansionHalf(job, q);
  job.expDone[q].store(1, std::memory_order_release);
  return true;
}

/// Once this returns, the expansion's half q is done: run here if no task
/// has claimed it (the thread of the part it belongs to may never start),
/// waited for otherwise.
void needExpansion(KSplitJob &job, int64_t q) {
  if (!claimExpansion(job, q))
    waitUntil(job.expDone[q], 1);
}

/// What is left to claim of part q: its expansion (in a block), depthwise
/// chunks, then its GEMM.
void runKSplitPart(KSplitJob &job, int64_t q) {
  const ConvShape &s = *job.one;
  const GemmArgs &g = *job.g;
  const int64_t planes = job.half[q].c;
  if (job.exp)
    claimExpansion(job, q);
  for (;;) {
    const int64_t i = job.dwNext[q].fetch_add(1, std::memory_order_relaxed);
    if (i >= kKSplitDwChunks)
      break;
    const int64_t unit = job.dw[q].plan.mode == DepthwisePlan::kLanes ? kVL : 1;
    const int64_t units = ceilDiv(planes, unit);
    const int64_t p0 = minI(planes, i * units / kKSplitDwChunks * unit);
    const int64_t p1 = minI(planes, (i + 1) * units / kKSplitDwChunks * unit);
    if (job.exp && p1 > p0) {
      // The chunk's planes of the depthwise input: its own part's
      // expansion rows, and the other's for planes past its cut.
      int64_t k0, k1, e0, e1;
      kSplitHalf(job, q, k0, k1);
      needExpansion(job, q);
      expansionHalf(job, q, e0, e1);
      if (k0 + p1 > e1)
        needExpansion(job, 1 - q);
    }
    if (p1 > p0)
      runDepthwisePlanes(&job.dw[q], p0, p1);
    job.dwDone[q].fetch_add(1, std::memory_order_release);
  }
  if (job.gemmClaimed[q].exchange(1, std::memory_order_relaxed))
    return;
  waitUntil(job.dwDone[q], kKSplitDwChunks);
  int64_t k0, k1;
  kSplitHalf(job, q, k0, k1);
  const int64_t ohw = s.oh * s.ow;
  const MatrixB b = {job.mid + k0 * ohw, ohw, false};
  GemmArgs gq = g;
  gq.k = k1 - k0;
  gq.a = g.packedA ? g.a + k0 * kTiles.mr : g.a + k0 * g.acs;
  gq.aPanelK = g.packedA ? g.k : 0;
  gq.bSrc = &b;
  gq.c = job.partial + q * partialFloats(g.m, g.n);
  gq.ldc = g.n;
  gq.ep = NULL;
  gq.accumulate = false;
  runGemm(NULL, gq, NULL);
  job.gemmDone.fetch_add(1, std::memory_order_release);
}

/// Rows [begin, end) of the output: partial 0 + partial 1, then the
/// depthwise kernel's epilogue (bias, residual, clamp).
void sumKSplitRows(const KSplitJob &job, int64_t begin, int64_t end) {
  const GemmArgs &g = *job.g;
  const float *p0 = job.partial, *p1 = p0 + partialFloats(g.m, g.n);
  const tcc_uk_epilogue_t *ep = g.ep;
  DepthwiseEpi e = {};
  e.clamp = ep && ep->has_clamp;
  e.lo = ep ? ep->clamp_min : 0.0f;
  e.hi = ep ? ep->clamp_max : 0.0f;
  const vf lo = vset1(e.lo), hi = vset1(e.hi);
  for (int64_t i = begin; i < end; ++i) {
    const vf bias = vset1(ep && ep->bias ? ep->bias[i] : 0.0f);
    const float *res = ep && ep->residual ? ep->residual + i * ep->ldr : NULL;
    float *out = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; j += kVL) {
      const bool full = j + kVL <= g.n;
      const vmask m = vmaskFirst(static_cast<int>(minI(kVL, g.n - j)));
      const float *a = p0 + i * g.n + j, *b = p1 + i * g.n + j;
      const vf sum = full ? vadd(vload(a), vload(b))
                          : vadd(vloadMask(a, m), vloadMask(b, m));
      finishInto(out + j, sum, res ? res + j : NULL, full, m, e, bias, lo, hi);
    }
  }
}

void runKSplit(void *ctx, int64_t begin, int64_t end) {
  KSplitJob &job = *static_cast<KSplitJob *>(ctx);
  for (int64_t t = begin; t < end; ++t) {
    runKSplitPart(job, t % 2);
    runKSplitPart(job, 1 - t % 2);
    if (job.sumNext.load(std::memory_order_relaxed) >= job.sumChunks)
      continue;
    waitUntil(job.gemmDone, 2);
    for (;;) {
      const int64_t i = job.sumNext.fetch_add(1, std::memory_order_relaxed);
      if (i >= job.sumChunks)
        break;
      sumKSplitRows(job, i * job.sumRows,
                    minI(job.g->m, (i + 1) * job.sumRows));
    }
  }
}

/// The halves' depthwise jobs and the sum's chunks of a pair's job, its
/// counters at zero.
void planKSplit(KSplitJob &job) {
  const ConvShape &s = *job.one;
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
  job.split = kSplitPoint(s);
  for (int q = 0; q < 2; ++q) {
    int64_t k0, k1;
    kSplitHalf(job, q, k0, k1);
    ConvShape &half = job.half[q];
    half = s;
    half.c = half.f = half.groups = k1 - k0;
    job.halfEp[q] = *job.dwEp;
    if (job.halfEp[q].bias)
      job.halfEp[q].bias += k0;
    // The halves' planes differ only in their number, so the second takes
    // the first's plan and flat loads (worked out once a call).
    if (q == 0) {
      job.dw[0] = makeDepthwiseJob(half, job.image, job.dwWeight, job.mid,
                                   false, &job.halfEp[0], job.taps);
    } else {
      job.dw[1] = job.dw[0];
      job.dw[1].s = &half;
      job.dw[1].input = job.image + k0 * hw;
      job.dw[1].weight = job.dwWeight + k0 * s.kh * s.kw;
      job.dw[1].output = job.mid + k0 * ohw;
      job.dw[1].ep = &job.halfEp[1];
    }
    job.dwNext[q].store(0, std::memory_order_relaxed);
    job.dwDone[q].store(0, std::memory_order_relaxed);
    job.gemmClaimed[q].store(0, std::memory_order_relaxed);
    job.expClaimed[q].store(0, std::memory_order_relaxed);
    job.expDone[q].store(0, std::memory_order_relaxed);
  }
  job.sumRows = ceilDiv(job.g->m, kKSplitSumChunks);
  job.sumChunks = ceilDiv(job.g->m, job.sumRows);
  job.gemmDone.store(0, std::memory_order_relaxed);
  job.sumNext.store(0, std::memory_order_relaxed);
}

} // namespace

int64_t kSplitPoint(const ConvShape &s) {
  // The multiple of the unit nearest half the planes: whole groups of kVL
  // in lanes mode (the second half takes the ragged one; 72 planes split
  // 32 | 40, not 48 | 24), else any plane. pairSplitsK's
  // c >= 2 * kSplitUnitMax leaves both halves planes.
  static_assert(kVL <= kSplitUnitMax, "a half is a group of lanes at least");
  const int64_t unit = depthwiseRunsLanes(s) ? kVL : 1;
  return minI(s.c - unit, maxI(unit, (s.c / 2 + unit / 2) / unit * unit));
}

void runPairKSplit(const tcc_host_api_t *host, const ConvShape &one,
                   const float *dwInput, const float *dwWeight,
                   const tcc_uk_epilogue_t *dwEp, float *mid, float *partial,
                   const GemmArgs &pw, const PairExpansion *exp) {
  KSplitJob job;
  job.one = &one;
  job.image = dwInput;
  job.dwWeight = dwWeight;
  job.dwEp = dwEp;
  job.mid = mid;
  job.partial = partial;
  job.g = &pw;
  job.exp = exp;
  planKSplit(job);
  // A task a thread (two at least: one a part).
  parallelFor(host, maxI(2, hostThreads(host)), 1, runKSplit, &job);
}

tcc_uk_epilogue_t depthwiseEpilogue(const tcc_uk_dwpw_params_t &p) {
  tcc_uk_epilogue_t e = {};
  e.bias = p.dw_bias;
  e.has_clamp = p.dw_has_clamp;
  e.clamp_min = p.dw_clamp_min;
  e.clamp_max = p.dw_clamp_max;
  return e;
}

tcc_uk_epilogue_t imageEpilogue(const tcc_uk_epilogue_t &epilogue,
                                int64_t outOffset, int64_t ohw) {
  tcc_uk_epilogue_t e = epilogue;
  e.bias_per_row = 1;
  e.residual = epilogue.residual ? epilogue.residual + outOffset : NULL;
  e.ldr = ohw;
  return e;
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int32_t tcc_uk_dwpw_fast(int32_t isa,
                                    const tcc_uk_dwpw_params_t *p) {
  ConvShape s;
  return resolvePair(p, s) && depthwiseFast(isa, s);
}

extern "C" int64_t tcc_uk_dwpw_scratch_bytes(int32_t isa,
                                             const tcc_uk_dwpw_params_t *p) {
  ConvShape s;
  if (!resolvePair(p, s) || s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  return pairScratchBytes(isa, p, s);
}

extern "C" int32_t tcc_uk_dwpw_conv2d_nchw(const tcc_host_api_t *host,
                                           const tcc_uk_dwpw_params_t *p,
                                           const float *input,
                                           const float *dwWeight,
                                           const float *pwWeight, float *output,
                                           const tcc_uk_epilogue_t *epilogue) {
  ConvShape s;
  if (!resolvePair(p, s) || (epilogue && epilogue->activation))
    return -2;
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  void *scratch = p->scratch, *owned = NULL;
  if (!scratch) {
    owned = malloc(
        static_cast<size_t>(tcc_uk_dwpw_scratch_bytes(TCC_UK_NATIVE_ISA, p)));
    if (!owned)
      return -1;
    scratch = owned;
  }
  const int64_t ohw = s.oh * s.ow;
  // The depthwise convolution of one image into the scratch (its own
  // kernel, split by planes across the threads), then the pointwise GEMM,
  // which reads it there: the pair costs what the two convolutions cost,
  // without a tensor between them.
  float *mid = alignScratch(scratch);
  ConvShape one = s;
  one.n = 1;
  const tcc_uk_epilogue_t dwEp = depthwiseEpilogue(*p);
  for (int64_t img = 0; img < s.n; ++img) {
    const int64_t outOffset = img * p->f * ohw;
    tcc_uk_epilogue_t ep = {};
    if (epilogue)
      ep = imageEpilogue(*epilogue, outOffset, ohw);
    const MatrixB b = {mid, ohw, false};
    GemmArgs ga = pairGemm(p, s, pwWeight, &b);
    ga.c = output + outOffset;
    ga.ldc = ohw;
    ga.ep = epilogue ? &ep : NULL;
    const float *image = input + img * s.c * s.h * s.w;
    if (pairSplitsK(TCC_UK_NATIVE_ISA, p, s)) {
      runPairKSplit(host, one, image, dwWeight, &dwEp, mid,
                    mid + pairMidFloats(s), ga, NULL);
      continue;
    }
    depthwiseConv(host, one, image, dwWeight, mid, false, &dwEp);
    runGemm(host, ga, mid + pairMidFloats(s));
  }
  free(owned);
  return 0;
}
