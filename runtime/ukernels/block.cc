// block.cc - the inverted-residual block (an expanding 1x1
// convolution, or another one-group convolution such as its stem, then a
// depthwise/pointwise pair) as one call (tcc_uk_block_*): an image's output
// rows are cut into bands whose expansion, depthwise output and pointwise
// product stay in one core's L2; the expanded tensor never exists whole.
// Where the expanded tensor is small and the pair splits its GEMM's k in
// halves (dwpw.cc), each half of the channels is expanded, convolved and
// multiplied by the thread that owns it instead: no rows computed twice.
#include "depthwise_internal.h"

#include <stdlib.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// Whether every output row's window of `s` holds an input row (pads
/// smaller than the window).
bool padsInsideWindow(const ConvShape &s) {
  const int64_t span = (s.kh - 1) * s.dh + 1;
  return s.pt < span && s.pb < span;
}

/// A block's depthwise convolution `s` (over x) and first convolution
/// `es`, checked: one group, x's shape as its output, not one that
/// tcc_uk_conv2d_nchw runs as Winograd (its packed weights are
/// transformed) or, on AVX-512, directly (packed in blocks of filters), and
/// every band of rows reads some input rows.
bool resolveBlock(const tcc_uk_block_params_t *p, ConvShape &s, ConvShape &es) {
  return p && resolvePair(&p->pair, s) && resolveConv(&p->exp, es) &&
         es.groups == 1 && es.f == s.c && es.n == s.n && es.oh == s.h &&
         es.ow == s.w && !winogradFits(es) &&
         !directFits(TCC_UK_ISA_AVX512, es) &&
         !pixelsFits(TCC_UK_ISA_AVX512, es) && padsInsideWindow(s) &&
         padsInsideWindow(es);
}

/// A band's expansion rows and depthwise output take about this many bytes
/// at most: with the weights, they stay in a core's L2 (2 MB here) from
/// the expansion to the pointwise GEMM.
constexpr int64_t kBlockBandBytes = int64_t(1) << 20;
/// The scratch holds a band's buffers for this many parts of the output
/// rows, one a thread; threads beyond it stay idle in this kernel.
constexpr int64_t kBlockMaxParts = RunClaims::kMaxParts;
/// Bands a part at least, each part's a contiguous run (RunClaims) that
/// the others take the end of when they are done first, so that a thread
/// the machine runs slower does not hold the call up as a fixed share of
/// rows would; the rows computed twice at the extra band boundaries cost
/// less than that waiting.
constexpr int64_t kBlockBandsPerPart = 4;
/// A first convolution's output of one image smaller than this stays in
/// the cores' caches from one call to the next, so the block is not worth
/// its bands' shorter GEMMs and recomputed rows (with 1 MiB: 112x112 and 56x56
/// expansions of 16-96 channels are blocks, 28x28 ones not).
constexpr int64_t kBlockMinBytes = int64_t(1) << 20;

/// A channel-blocked block (blocked.cc) whose expansion of one image
/// takes this much or more runs so rather than in halves of k: at 56x56
/// (24 -> 72, 0.9 MB) its bands were 12% faster on 2 threads, at 28x28
/// (0.4 MB, 5x5) level, at 14x14 and 7x7 up to 30% slower.
constexpr int64_t kBlockedMinBytes = int64_t(512) << 10;

/// Whether a block runs as the pair's halves of k, each computing its
/// channels of the expansion first (runPairKSplit): a 1x1 expansion whose
/// output is smaller than kBlockMinBytes (which bands would recompute
/// rows of: a 5x5 over 28 rows in eight bands computes each row twice),
/// before a stride-1 pair that splits k. On 2 threads, against the
/// expansion and the pair as two calls: 3-10% faster at stride 1 (28x28
/// to 7x7 planes, 3x3 and 5x5); at stride 2, 7% faster over 240 planes of
/// 28x28 but 5% slower over 72 of 56x56 (halves of 32 and 40 planes, whose
/// expansions' 56x56 columns the threads no longer share out evenly).
bool blockSplitsK(int32_t isa, const tcc_uk_block_params_t *p,
                  const ConvShape &s, const ConvShape &es) {
  const int64_t bytes = static_cast<int64_t>(sizeof(float)) * s.c * s.h * s.w;
  if (blockedFits(isa, s, es) && bytes >= kBlockedMinBytes)
    return false;
  return isPointwise(es) && s.sh == 1 && pairSplitsK(isa, &p->pair, s) &&
         bytes < kBlockMinBytes;
}

/// A k-split block's scratch: the expansion of one image, the depthwise
/// output, the two partial products, then each half's GEMM scratch for
/// the expansion (its ragged panel).
struct SplitGeometry {
  int64_t xFloats, midFloats, partialsFloats, gemmBytes;
};

SplitGeometry splitGeometry(int32_t isa, const tcc_uk_block_params_t *p,
                            const ConvShape &s, const ConvShape &es) {
  SplitGeometry g;
  g.xFloats = ceilDiv(s.c * s.h * s.w, 16) * 16;
  g.midFloats = pairMidFloats(s);
  g.partialsFloats = 2 * partialFloats(p->pair.f, s.oh * s.ow);
  g.gemmBytes =
      ceilDiv(gemmScratchBytes(
                  isa, (p->exp.flags & TCC_UK_PACKED_A) | kAlwaysDirectB, s.c,
                  s.h * s.w, es.kdim),
              64) *
      64;
  return g;
}

/// Where a part's buffers lie in the scratch and how large a band is.
struct BlockGeometry {
  int64_t band;      // output rows of a band at most
  bool parity;       // the band's input rows split by parity (parityRows)
  bool stem;         // the first convolution by the stem kernel (stem.cc)
  int64_t inFloats;  // those rows of the input so split, c x rows x w
  int64_t expFloats; // the expansion of a band's input rows, e x rows x w
  int64_t midFloats; // its depthwise output, e x band x ow
  int64_t gemmBytes; // the larger of the two GEMMs' ragged panels
  int64_t partBytes; // all three, 64-byte multiples
};

/// Scratch bytes a GEMM reading B in place needs for its ragged panel,
/// whatever n is (the bands' widths vary): the most is a panel of nr - 1
/// columns, packed (as is all of a B narrower than nr).
int64_t raggedPanelBound(int32_t isa, uint32_t flags, int64_t m, int64_t k) {
  return gemmScratchBytes(isa, flags | kAlwaysDirectB, m,
                          2 * tilesFor(isa).nr - 1, k);
}

/// Whether a band's expansion is computed from its input rows split by
/// column parity (each row's even columns, then its odd ones): a 1x1
/// expansion commutes with any order of the pixels, so its output rows
/// come out split as the stride-2 depthwise direct rows read them with
/// plain loads (readsParityRows); the input has fewer channels than the
/// expansion, so splitting it costs a fraction of what splitting each
/// expanded row in the depthwise kernel did.
bool parityRows(int32_t isa, const ConvShape &s, const ConvShape &es) {
  return isPointwise(es) && readsParityRows(isa, s);
}

/// Rows [r0, r1) of every channel of one image x (c x h x w) into dst
/// (c x (r1 - r0) x w), each row's even columns, then its odd ones.
void splitRowsByParity(const ConvShape &es, const float *x, int64_t r0,
                       int64_t r1, float *dst) {
  const int64_t w = es.w, even = (w + 1) / 2, rows = r1 - r0;
  for (int64_t c = 0; c < es.c; ++c)
    for (int64_t r = r0; r < r1; ++r) {
      const float *src = x + (c * es.h + r) * w;
      float *d = dst + (c * rows + r - r0) * w;
      deinterleave2(src, d, d + even, w / 2);
      if (w % 2)
        d[even - 1] = src[w - 1];
    }
}

BlockGeometry blockGeometry(int32_t isa, const tcc_uk_block_params_t *p,
                            const ConvShape &s, const ConvShape &es) {
  const int64_t e = s.c, f4 = static_cast<int64_t>(sizeof(float));
  const int64_t span = (s.kh - 1) * s.dh + 1;
  // Floats of the first convolution's packed B a row of x takes (its
  // im2col; none for a 1x1, read in place).
  const bool stem = (p->exp.flags & TCC_UK_PACKED_A) && stemFits(isa, es);
  const int64_t packedPerRow = isPointwise(es) || stem ? 0 : es.kdim * s.w;
  // A band of r rows reads (r - 1) * sh + span rows of x.
  const int64_t perRow = f4 * (e * (s.sh * s.w + s.ow) + s.sh * packedPerRow);
  const int64_t fixed = f4 * maxI(0, span - s.sh) * (e * s.w + packedPerRow);
  BlockGeometry g;
  // A plane the depthwise kernel runs flat (its FMA order differs) is one
  // band, so that it runs flat here too.
  g.band = runsFlatDirect(isa, s)
               ? s.oh
               : maxI(1, minI(s.oh, (kBlockBandBytes - fixed) / perRow));
  const int64_t rowsIn = minI(s.h, (g.band - 1) * s.sh + span);
  g.parity = parityRows(isa, s, es);
  g.stem = stem;
  g.inFloats = g.parity ? ceilDiv(es.c * rowsIn * s.w, 16) * 16 : 0;
  g.expFloats = ceilDiv(e * rowsIn * s.w, 16) * 16;
  g.midFloats = ceilDiv(e * g.band * s.ow, 16) * 16;
  const uint32_t expPacked = p->exp.flags & TCC_UK_PACKED_A;
  const int64_t expGemm =
      isPointwise(es) ? raggedPanelBound(isa, expPacked, e, es.kdim)
      : stem          ? 0
                      : packedBScratchBytes(isa, es.kdim, rowsIn * s.w);
  g.gemmBytes =
      ceilDiv(
          maxI(expGemm, raggedPanelBound(isa, p->pair.flags & TCC_UK_PACKED_A,
                                         p->pair.f, e)),
          64) *
      64;
  g.partBytes = (g.inFloats + g.expFloats + g.midFloats) * f4 + g.gemmBytes;
  return g;
}

int64_t blockScratchBytes(int32_t isa, const tcc_uk_block_params_t *p,
                          const ConvShape &s, const ConvShape &es) {
  if (blockSplitsK(isa, p, s, es)) {
    const SplitGeometry g = splitGeometry(isa, p, s, es);
    return 64 +
           (g.xFloats + g.midFloats + g.partialsFloats) *
               static_cast<int64_t>(sizeof(float)) +
           2 * g.gemmBytes;
  }
  if (blockedFits(isa, s, es))
    return blockedScratchBytes(s, es, p->pair.f, kBlockBandBytes,
                               kBlockMaxParts,
                               (p->exp.flags & TCC_UK_PACKED_BLOCKED) != 0);
  return 64 + kBlockMaxParts * blockGeometry(isa, p, s, es).partBytes;
}

/// The images of a k-split block (blockSplitsK), one after another.
void runSplitBlock(const tcc_host_api_t *host, const tcc_uk_block_params_t *p,
                   const ConvShape &s, const ConvShape &es, const float *input,
                   const float *expWeight, const float *dwWeight,
                   const float *pwWeight, float *output,
                   const tcc_uk_epilogue_t *epilogue,
                   const tcc_uk_epilogue_t *expEp,
                   const tcc_uk_epilogue_t &dwEp, void *scratch) {
  const SplitGeometry g = splitGeometry(TCC_UK_NATIVE_ISA, p, s, es);
  float *x = alignScratch(scratch);
  float *mid = x + g.xFloats, *partial = mid + g.midFloats;
  char *gemmScratch = reinterpret_cast<char *>(partial + g.partialsFloats);
  ConvShape one = s;
  one.n = 1;
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
  for (int64_t img = 0; img < s.n; ++img) {
    const int64_t outOffset = img * p->pair.f * ohw;
    const MatrixB in = {input + img * es.c * hw, hw, false};
    PairExpansion exp;
    GemmArgs &ge = exp.gemm;
    ge = weightGemm(s.c, hw, es.kdim, (p->exp.flags & TCC_UK_PACKED_A) != 0,
                    expWeight);
    ge.packB = packBMatrix;
    ge.bSrc = &in;
    ge.alwaysDirectB = true;
    ge.c = x;
    ge.ldc = hw;
    ge.ep = expEp;
    exp.scratch[0] = gemmScratch;
    exp.scratch[1] = gemmScratch + g.gemmBytes;
    tcc_uk_epilogue_t ep = {};
    if (epilogue)
      ep = imageEpilogue(*epilogue, outOffset, ohw);
    const MatrixB b = {mid, ohw, false};
    GemmArgs pw = pairGemm(&p->pair, s, pwWeight, &b);
    pw.c = output + outOffset;
    pw.ldc = ohw;
    pw.ep = epilogue ? &ep : NULL;
    runPairKSplit(host, one, x, dwWeight, &dwEp, mid, partial, pw, &exp);
  }
}

/// One image of a block, cut into parts of whole output rows (one a task,
/// each with its own buffers in the scratch), each part into bands of at
/// most `band` rows. A band computes the rows of x its depthwise windows
/// read (the first convolution as a GEMM reading the image's rows where
/// they lie, or the im2col of the rows they need, on a shape that is those
/// rows; rows shared with the next band are computed again), the depthwise
/// convolution of those rows (the plane kernel on a plane that is the
/// band: pads only where the image has them) and the pointwise GEMM of
/// its output rows. Each element sees the same kernels and FMA order as
/// in the three separate convolutions, so the bits are theirs whatever the
/// bands.
struct BlockJob {
  const tcc_uk_block_params_t *p;
  const ConvShape *s;  // the depthwise convolution, n = 1
  const ConvShape *es; // the first convolution
  BlockGeometry g;
  int64_t parts;
  const float *image, *expWeight, *dwWeight, *pwWeight;
  float *out;
  const tcc_uk_epilogue_t *expEp, *dwEp, *pwEp; // pwEp: this image's
  char *scratch;
  int64_t bands;    // of one image, each at most g.band rows
  RunClaims claims; // the bands, a run of them a part
};

/// Rows [iy0, iy1) of a band's first convolution into x (e x rows x w):
/// a GEMM of its weights by the image's rows where they lie (split by
/// parity into `split` first where the band reads them so), or by the
/// im2col of the input rows they read.
void runExpansion(const BlockJob &job, float *x, float *split,
                  void *gemmScratch, int64_t iy0, int64_t iy1) {
  const ConvShape &s = *job.s;
  const ConvShape &es = *job.es;
  const tcc_uk_block_params_t *p = job.p;
  GemmArgs ge =
      weightGemm(s.c, (iy1 - iy0) * s.w, es.kdim,
                 (p->exp.flags & TCC_UK_PACKED_A) != 0, job.expWeight);
  ge.c = x;
  ge.ldc = ge.n;
  ge.ep = job.expEp;
  MatrixB in = {job.image + iy0 * s.w, es.h * es.w, false};
  if (job.g.parity) {
    splitRowsByParity(es, job.image, iy0, iy1, split);
    in = {split, ge.n, false};
  }
  ConvShape rows = es; // the input rows that rows [iy0, iy1) of x read
  Im2col im2col = {&rows, NULL, es.h * es.w};
  if (isPointwise(es)) {
    ge.packB = packBMatrix;
    ge.bSrc = &in;
    ge.alwaysDirectB = true;
  } else {
    const int64_t span1 = (es.kh - 1) * es.dh + 1;
    const int64_t top1 = iy0 * es.sh - es.pt;
    const int64_t r0 = maxI(0, top1);
    const int64_t r1 = minI(es.h, (iy1 - 1) * es.sh - es.pt + span1);
    rows.n = 1;
    rows.h = r1 - r0;
    rows.pt = r0 - top1;
    rows.oh = iy1 - iy0;
    rows.pb = (rows.oh - 1) * es.sh + span1 - rows.h - rows.pt;
    im2col.x = job.image + r0 * es.w;
    ge.packB = packIm2col;
    ge.bSrc = &im2col;
  }
  runGemm(NULL, ge, gemmScratch);
}

void runBand(const BlockJob &job, char *buffers, int64_t oy0, int64_t oy1) {
  const ConvShape &s = *job.s;
  const tcc_uk_block_params_t *p = job.p;
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const int64_t top = oy0 * s.sh - s.pt; // first input row the band reads
  const int64_t iy0 = maxI(0, top);
  const int64_t iy1 = minI(s.h, (oy1 - 1) * s.sh - s.pt + span);
  float *split = reinterpret_cast<float *>(buffers);
  float *x = split + job.g.inFloats;
  float *mid = x + job.g.expFloats;
  void *gemmScratch = mid + job.g.midFloats;

  const ConvShape &es = *job.es;
  if (job.g.stem) {
    stemConvRows(es, job.image, job.expWeight, x, (iy1 - iy0) * s.w, iy0, iy1,
                 job.expEp);
  } else {
    runExpansion(job, x, split, gemmScratch, iy0, iy1);
  }

  ConvShape band = s;
  band.h = iy1 - iy0;
  band.pt = iy0 - top;
  band.oh = oy1 - oy0;
  band.pb = (band.oh - 1) * s.sh + span - band.h - band.pt;
  depthwiseConv(NULL, band, x, job.dwWeight, mid, false, job.dwEp,
                job.g.parity);

  const int64_t ohw = s.oh * s.ow;
  const MatrixB b = {mid, band.oh * s.ow, false};
  GemmArgs gp = pairGemm(&p->pair, s, job.pwWeight, &b);
  gp.n = band.oh * s.ow;
  gp.c = job.out + oy0 * s.ow;
  gp.ldc = ohw;
  tcc_uk_epilogue_t ep;
  if (job.pwEp) {
    ep = *job.pwEp;
    if (ep.residual)
      ep.residual += oy0 * s.ow;
    gp.ep = &ep;
  }
  runGemm(NULL, gp, gemmScratch);
}

/// Part q of the call: its buffers, and the bands of its run, one after
/// another from the top, then those left of the other parts' runs. Each
/// part's bands are contiguous rows, as the pool deals the columns (the
/// pixels) of the GEMMs before and after the block out in runs, so a part
/// reads the input rows its core's cache holds and writes the output rows
/// the next kernel reads on that core. A part on a thread that runs slower
/// (a VM's CPUs do not always run at one speed) hands the end of its run
/// to the others, and one that starts late finds its bands taken.
void runBlockParts(void *ctx, int64_t begin, int64_t end) {
  BlockJob &job = *static_cast<BlockJob *>(ctx);
  const int64_t oh = job.s->oh;
  for (int64_t q = begin; q < end; ++q) {
    char *buffers = job.scratch + q * job.g.partBytes;
    for (int64_t b; (b = job.claims.claim(q)) >= 0;)
      runBand(job, buffers, b * oh / job.bands, (b + 1) * oh / job.bands);
  }
}
} // namespace

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int32_t tcc_uk_block_fast(int32_t isa,
                                     const tcc_uk_block_params_t *p) {
  ConvShape s, es;
  if (!resolveBlock(p, s, es))
    return 0;
  const int64_t bytes = static_cast<int64_t>(sizeof(float)) * s.c * s.h * s.w;
  // Channel-blocked, a block pays at stride 2 at every size measured (14x14
  // to 112x112 inputs, 1.2-1.9x the expansion and the pair as two calls),
  // and at stride 1 from kBlockedMinBytes.
  if (blockedFits(isa, s, es))
    return s.sh == 2 || bytes >= kBlockedMinBytes ||
           blockSplitsK(isa, p, s, es);
  return tcc_uk_dwpw_fast(isa, &p->pair) &&
         (bytes >= kBlockMinBytes || blockSplitsK(isa, p, s, es));
}

/// Whether the kernels of `isa` run p channel-blocked (blocked.cc).
static bool runsBlocked(int32_t isa, const tcc_uk_block_params_t *p,
                        ConvShape &s, ConvShape &es) {
  return resolveBlock(p, s, es) && blockedFits(isa, s, es) &&
         !blockSplitsK(isa, p, s, es);
}

extern "C" int32_t tcc_uk_block_blocked(int32_t isa,
                                        const tcc_uk_block_params_t *p) {
  ConvShape s, es;
  return runsBlocked(isa, p, s, es);
}

extern "C" int64_t
tcc_uk_block_pack_weights_bytes(int32_t isa, const tcc_uk_block_params_t *p,
                                int32_t part) {
  ConvShape s, es;
  if (!runsBlocked(isa, p, s, es) || part < TCC_UK_BLOCK_EXPANSION ||
      part > TCC_UK_BLOCK_PROJECTION)
    return 0;
  return static_cast<int64_t>(sizeof(float)) *
         blockedWeightFloats(s, es, p->pair.f, part);
}

extern "C" void tcc_uk_block_pack_weights(int32_t isa,
                                          const tcc_uk_block_params_t *p,
                                          int32_t part, const float *weight,
                                          float *out) {
  ConvShape s, es;
  if (part >= TCC_UK_BLOCK_EXPANSION && part <= TCC_UK_BLOCK_PROJECTION &&
      runsBlocked(isa, p, s, es))
    blockedPackWeights(s, es, p->pair.f, part, weight, false, out);
}

extern "C" int64_t tcc_uk_block_scratch_bytes(int32_t isa,
                                              const tcc_uk_block_params_t *p) {
  ConvShape s, es;
  if (!resolveBlock(p, s, es) || s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  return blockScratchBytes(isa, p, s, es);
}

extern "C" int32_t tcc_uk_block_conv2d_nchw(
    const tcc_host_api_t *host, const tcc_uk_block_params_t *p,
    const float *input, const float *expWeight, const float *dwWeight,
    const float *pwWeight, float *output, const tcc_uk_epilogue_t *epilogue) {
  ConvShape s, es;
  if (!resolveBlock(p, s, es) || (epilogue && epilogue->activation))
    return -2;
  // Weights packed for the channel-blocked kernels where they do not run.
  if ((p->exp.flags & TCC_UK_PACKED_BLOCKED) &&
      !tcc_uk_block_blocked(TCC_UK_NATIVE_ISA, p))
    return -2;
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  void *scratch = p->pair.scratch, *owned = NULL;
  if (!scratch) {
    owned = malloc(
        static_cast<size_t>(blockScratchBytes(TCC_UK_NATIVE_ISA, p, s, es)));
    if (!owned)
      return -1;
    scratch = owned;
  }
  ConvShape one = s;
  one.n = 1;
  tcc_uk_epilogue_t expEp = {};
  const tcc_uk_epilogue_t dwEp = depthwiseEpilogue(p->pair);
  expEp.bias = p->exp_bias;
  expEp.bias_per_row = 1;
  expEp.has_clamp = p->exp_has_clamp;
  expEp.clamp_min = p->exp_clamp_min;
  expEp.clamp_max = p->exp_clamp_max;
  const bool expTrivial = !expEp.bias && !expEp.has_clamp;
  if (blockSplitsK(TCC_UK_NATIVE_ISA, p, s, es)) {
    runSplitBlock(host, p, s, es, input, expWeight, dwWeight, pwWeight, output,
                  epilogue, expTrivial ? NULL : &expEp, dwEp, scratch);
    free(owned);
    return 0;
  }
#if TCC_UK_NATIVE_ISA == 2
  if (blockedFits(TCC_UK_NATIVE_ISA, s, es)) {
    runBlockedBlock(host, p, s, es, kBlockBandBytes, kBlockMaxParts,
                    kBlockBandsPerPart, input, expWeight, dwWeight, pwWeight,
                    output, epilogue, scratch);
    free(owned);
    return 0;
  }
#endif
  BlockJob job = {};
  job.p = p;
  job.s = &one;
  job.es = &es;
  job.g = blockGeometry(TCC_UK_NATIVE_ISA, p, s, es);
  job.parts =
      runsFlatDirect(one)
          ? 1
          : maxI(1, minI(minI(hostThreads(host), kBlockMaxParts), s.oh));
  job.bands = blockBands(s.oh, job.g.band, job.parts, kBlockBandsPerPart);
  job.expWeight = expWeight;
  job.dwWeight = dwWeight;
  job.pwWeight = pwWeight;
  job.expEp = expTrivial ? NULL : &expEp;
  job.dwEp = &dwEp;
  job.scratch = reinterpret_cast<char *>(alignScratch(scratch));
  const int64_t ohw = s.oh * s.ow;
  for (int64_t img = 0; img < s.n; ++img) {
    const int64_t outOffset = img * p->pair.f * ohw;
    tcc_uk_epilogue_t ep = {};
    if (epilogue)
      ep = imageEpilogue(*epilogue, outOffset, ohw);
    job.image = input + img * es.c * es.h * es.w;
    job.out = output + outOffset;
    job.pwEp = epilogue ? &ep : NULL;
    job.claims.reset(job.parts, job.bands);
    parallelFor(host, job.parts, 1, runBlockParts, &job);
  }
  free(owned);
  return 0;
}
