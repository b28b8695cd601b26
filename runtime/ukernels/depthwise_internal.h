// depthwise_internal.h - what depthwise.cc, dwpw.cc and block.cc share.
#ifndef TCC_RUNTIME_UKERNELS_DEPTHWISE_INTERNAL_H
#define TCC_RUNTIME_UKERNELS_DEPTHWISE_INTERNAL_H

#include "simd.h"

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

//===----------------------------------------------------------------------===//
// The depthwise kernel (depthwise.cc)
//===----------------------------------------------------------------------===//

/// The depthwise epilogue as the plane kernels apply it (bias and residual
/// come per plane).
struct DepthwiseEpi {
  bool accumulate, clamp;
  float lo, hi;
  int act; // TCC_UK_ACT_*, before the clamp
};

/// An epilogue's fields as the plane kernels apply them (depthwise.cc,
/// direct.cc, pixels.cc).
inline DepthwiseEpi epilogueOf(const tcc_uk_epilogue_t *ep, bool accumulate) {
  DepthwiseEpi e;
  e.accumulate = accumulate;
  e.clamp = ep && ep->has_clamp;
  e.lo = ep ? ep->clamp_min : 0;
  e.hi = ep ? ep->clamp_max : 0;
  e.act = ep ? ep->activation : TCC_UK_ACT_NONE;
  return e;
}

/// A convolution call as the direct and pixels kernels take it (direct.cc,
/// pixels.cc): shape, tensors and epilogue.
struct ConvCall {
  const ConvShape *s;
  const float *input, *weight;
  float *output;
  const float *residual;
  const tcc_uk_epilogue_t *ep;
  DepthwiseEpi e;
};
inline ConvCall convCall(const ConvShape &s, const float *input,
                         const float *weight, float *output, bool accumulate,
                         const tcc_uk_epilogue_t *ep) {
  return ConvCall{&s,
                  input,
                  weight,
                  output,
                  ep ? ep->residual : NULL,
                  ep,
                  epilogueOf(ep, accumulate)};
}

/// How a convolution's planes are cut to fit the buffer.
struct DepthwisePlan {
  enum Mode { kScalar, kRows, kFlat, kDirect, kFlatDirect, kLanes } mode;
  int64_t nb;      // output columns per block (rows mode)
  int64_t bandOut; // output rows per band (rows, flat and lanes modes)
};

/// Whether the kernels of `isa` have the direct rows (rowsDirect) for this
/// shape: 3x3, dilation 1, stride 1 or 2, on AVX-512.
inline bool hasDirectRows(int32_t isa, const ConvShape &s) {
  return isa == TCC_UK_ISA_AVX512 && s.kh == 3 && s.kw == 3 && s.dh == 1 &&
         s.dw == 1 && s.sh == s.sw && (s.sh == 1 || s.sh == 2);
}
inline bool hasDirectRows(const ConvShape &s) {
  return hasDirectRows(TCC_UK_NATIVE_ISA, s);
}

/// Whether the direct rows of `isa` run this depthwise convolution with
/// stride 2 (rows wider than half a vector; narrower ones go to the lanes
/// path) and so can read input rows split by column parity, each row's
/// even columns and then its odd ones (depthwiseConv's parityRows): the
/// taps are then plain loads, not the permutes that split each row per
/// vector, which share the ports with the FMAs.
inline bool readsParityRows(int32_t isa, const ConvShape &s) {
  return hasDirectRows(isa, s) && s.sh == 2 && 2 * s.ow > tilesFor(isa).vl;
}

/// Whether the lanes path (a plane in each lane) has this kernel unrolled:
/// square 3x3, 5x5 or 7x7, dilation 1, stride 1 or 2.
inline bool lanesShape(const ConvShape &s) {
  return s.kh == s.kw && (s.kh == 3 || s.kh == 5 || s.kh == 7) && s.dh == 1 &&
         s.dw == 1 && s.sh == s.sw && (s.sh == 1 || s.sh == 2);
}

/// Whether the kernels of `isa` compute this depthwise convolution a
/// vector at a time without wasted lanes and pair it with a 1x1 faster
/// than two calls: AVX-512's direct rows (3x3), or its lanes path for the
/// larger kernels (depthwise.cc). (AVX2's 5x5 pairs, without the halves
/// of k, were level on one thread and 6-10% slower on two.)
inline bool depthwiseFast(int32_t isa, const ConvShape &s) {
  return hasDirectRows(isa, s) ||
         (isa == TCC_UK_ISA_AVX512 && lanesShape(s) && s.kh >= 5);
}

/// even[t] = src[2t], odd[t] = src[2t+1] for t < n (a row split by parity).
void deinterleave2(const float *src, float *even, float *odd, int64_t n);

/// Whether a depthwise convolution runs in lanes mode (depthwise.cc), kVL
/// planes a group.
bool depthwiseRunsLanes(const ConvShape &s);

/// Vectors of a plane the flat direct path takes at most (8 x 8 and
/// shorter planes, or long ones of few columns).
constexpr int64_t kFlatVecs = 16;

/// The flat direct path's loads, the same for every plane of a call: a
/// 3x3, stride-1 plane padded to its own size (oh = h, ow = w) is one row
/// of h*w outputs, and output p's tap (ky, kx) is input p + off[ky*3+kx]
/// wherever it lies inside the plane; mask[v*9 + t] says for which lanes
/// of vector v (outputs 16v..16v+15) it does.
struct FlatTaps {
  int64_t vecs;
  int64_t off[9];
  uint16_t mask[kFlatVecs * 9];
};

/// Whether a plane runs flat: AVX-512, 3x3 stride 1, the output the size
/// of the input, rows at most half a vector wide (7x7 planes). A 7-wide row
/// fills 7 of a vector's 16 lanes and pays for its edge masks and band
/// bookkeeping; flat, the plane is four vectors of nine masked loads and FMAs
/// with the masks worked out once a call. Wider rows stay rows, which reuse
/// each loaded input row for four output rows.
inline bool runsFlatDirect(int32_t isa, const ConvShape &s) {
  const int64_t vl = tilesFor(isa).vl;
  return hasDirectRows(isa, s) && s.sh == 1 && s.oh == s.h && s.ow == s.w &&
         2 * s.ow <= vl && ceilDiv(s.oh * s.ow, vl) <= kFlatVecs;
}
inline bool runsFlatDirect(const ConvShape &s) {
  return runsFlatDirect(TCC_UK_NATIVE_ISA, s);
}

/// Output vector x finished with the epilogue and stored at out (the lanes
/// of m where it is not full).
TCC_UK_INLINE void finishInto(float *out, vf x, const float *res, bool full,
                              vmask m, const DepthwiseEpi &e, vf bias, vf lo,
                              vf hi) {
  auto load = [&](const float *q) { return full ? vload(q) : vloadMask(q, m); };
  if (e.accumulate)
    x = vadd(load(out), x);
  x = vadd(x, bias);
  if (res)
    x = vadd(x, load(res));
  if (e.act)
    x = vactivate(e.act, x);
  if (e.clamp)
    x = vclamp(x, lo, hi);
  if (full)
    vstore(out, x);
  else
    vstoreFirst(out, x, m); // not read back soon
}

/// A depthwise convolution as runDepthwisePlanes takes it: its output
/// planes, plane i being image i / f, output channel i % f.
struct DepthwiseJob {
  const ConvShape *s;
  const float *input, *weight;
  float *output;
  const tcc_uk_epilogue_t *ep;
  DepthwiseEpi e;
  DepthwisePlan plan;
  const FlatTaps *taps;   // kFlatDirect
  bool parityRows;        // kDirect, stride 2: input rows split by parity
  float *means = nullptr; // NULL, or each plane's mean, once it is done
};

/// Planes [begin, end) of a DepthwiseJob (ctx): a tcc_parallel_fn_t. In
/// lanes mode planes go kVL at a time from `begin`, so ranges that start
/// at multiples of kVL fill every group but the last.
void runDepthwisePlanes(void *ctx, int64_t begin, int64_t end);

/// The planes of `s` as runDepthwisePlanes takes them; `taps` holds the
/// flat path's loads when it runs flat.
DepthwiseJob makeDepthwiseJob(const ConvShape &s, const float *input,
                              const float *weight, float *output,
                              bool accumulate, const tcc_uk_epilogue_t *ep,
                              FlatTaps &taps);

//===----------------------------------------------------------------------===//
// The depthwise/pointwise pair (dwpw.cc), which the block builds on
//===----------------------------------------------------------------------===//

/// The depthwise convolution of a pair, checked.
bool resolvePair(const tcc_uk_dwpw_params_t *p, ConvShape &s);

/// The pointwise GEMM of a pair of one image: f x (oh*ow) = weights (f x c)
/// times the depthwise output `mid` (c x oh*ow, row-major).
GemmArgs pairGemm(const tcc_uk_dwpw_params_t *p, const ConvShape &s,
                  const float *pwWeight, const MatrixB *mid);

/// Floats of a pair's scratch that hold one image's depthwise output,
/// rounded up to 64 bytes.
int64_t pairMidFloats(const ConvShape &s);

/// Floats between the two partial products of an m x n GEMM split in k
/// (rounded up to 64 bytes).
int64_t partialFloats(int64_t m, int64_t n);

/// Whether a pair's GEMM runs as two halves of k, one a task, each right
/// after the depthwise planes of its half (runPairKSplit): when its output
/// (two partials, summed after) is small next to the depthwise output
/// (3f <= c: a pair that narrows its channels threefold or more; a
/// 32 -> 16 pair at 112x112, with 16 x 12544 partials, cost more than it
/// saved), c is at least two units of kSplitPoint and its B is read in
/// place, ragged panel included.
bool pairSplitsK(int32_t isa, const tcc_uk_dwpw_params_t *p,
                 const ConvShape &s);

/// The most planes a half of k is rounded to (kSplitPoint: a group of
/// lanes); pairs that split k have twice as many planes at least.
constexpr int64_t kSplitUnitMax = 16;

/// The first plane of the second half of a pair that splits k (a block
/// that splits k splits its pair there too).
int64_t kSplitPoint(const ConvShape &s);

/// A block's expansion as runPairKSplit runs it: the GEMM of one image
/// (e x hw, into the depthwise input), each half's rows [k0, k1) with its
/// own GEMM scratch.
struct PairExpansion {
  GemmArgs gemm;
  void *scratch[2];
};

/// One image of a pair that splits k (pairSplitsK): the depthwise output
/// into mid (pairMidFloats), the partial products into `partial` (two of
/// partialFloats(f, oh*ow)), then their sum with pw's epilogue into pw's
/// output; with `exp`, each half first computes its planes of dwInput.
void runPairKSplit(const tcc_host_api_t *host, const ConvShape &one,
                   const float *dwInput, const float *dwWeight,
                   const tcc_uk_epilogue_t *dwEp, float *mid, float *partial,
                   const GemmArgs &pw, const PairExpansion *exp);

/// Whether the kernels of `isa` run the block whose depthwise part is `s`
/// and first convolution `es` in the channel-blocked layout (blocked.cc):
/// AVX-512, a 1x1 expansion, a square odd window of 3 to 7, stride 1 or 2,
/// dilation 1.
bool blockedFits(int32_t isa, const ConvShape &s, const ConvShape &es);

/// Scratch of a blocked block (f outputs; bands of about bandBytes, one
/// a part at a time); room for its weights laid out unless `packed` (by
/// tcc_uk_block_pack_weights).
int64_t blockedScratchBytes(const ConvShape &s, const ConvShape &es, int64_t f,
                            int64_t bandBytes, int64_t parts, bool packed);

/// The bands a block's image goes in: of at most `band` rows, and
/// bandsPerPart a part at least (rows allowing), so that the parts share
/// them out as they run.
inline int64_t blockBands(int64_t oh, int64_t band, int64_t parts,
                          int64_t bandsPerPart) {
  return maxI(ceilDiv(oh, band),
              parts == 1 ? 1 : minI(oh, bandsPerPart * parts));
}

/// Floats of a blocked block's weight `part` (TCC_UK_BLOCK_*) as its
/// kernels read it, and its packing from the plain layout (or from this
/// build's packed GEMM A where packedA; never for the depthwise taps).
int64_t blockedWeightFloats(const ConvShape &s, const ConvShape &es, int64_t f,
                            int32_t part);
void blockedPackWeights(const ConvShape &s, const ConvShape &es, int64_t f,
                        int32_t part, const float *weight, bool packedA,
                        float *out);

/// The block in the channel-blocked layout (blockedFits on this build's
/// ISA): s and es as resolved, the epilogue the projection's; bands of
/// about bandBytes, at most maxParts parts and bandsPerPart bands a part
/// at least, as the NCHW block shares them out.
void runBlockedBlock(const tcc_host_api_t *host, const tcc_uk_block_params_t *p,
                     const ConvShape &s, const ConvShape &es, int64_t bandBytes,
                     int64_t maxParts, int64_t bandsPerPart, const float *input,
                     const float *expWeight, const float *dwWeight,
                     const float *pwWeight, float *output,
                     const tcc_uk_epilogue_t *epilogue, void *scratch);

/// The depthwise part's epilogue of a pair: its bias and clamp.
tcc_uk_epilogue_t depthwiseEpilogue(const tcc_uk_dwpw_params_t &p);

/// The pointwise epilogue for the image whose output starts at element
/// `outOffset` (ohw elements a channel): bias per row, residual there.
tcc_uk_epilogue_t imageEpilogue(const tcc_uk_epilogue_t &epilogue,
                                int64_t outOffset, int64_t ohw);

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

#endif // TCC_RUNTIME_UKERNELS_DEPTHWISE_INTERNAL_H
