// blocked.cc - the inverted-residual block (a 1x1 expansion, a depthwise
// convolution and the 1x1 projection after it) in the channel-blocked
// layout on AVX-512: inside the call, the expanded tensor and the depthwise
// output are kept as blocks of 16 channels, each pixel's 16 channels one
// vector ([e/16][rows][columns][16], "NCHW16c"), so that the depthwise
// convolution is plain vector FMAs, whatever its stride, with no
// transposes and no shuffles. The block's input and output stay NCHW:
//
//   expansion   x16[b][r][c] = clamp(bias + sum_k W[k][16b..] * in[k][r][c])
//               a tile of 8 pixels (consecutive in the input planes, across
//               the rows' ends) by up to 3 channel vectors, each input
//               pixel broadcast from its plane (no packing);
//   depthwise   mid16[b][oy][ox] = clamp(bias + sum_taps w[b][tap] *
//               x16[b][oy s + ky][ox s + kx]), 8 output pixels a step over
//               rows of x16 whose pads are stored zeros (no bound tests);
//   projection  y^T[q][f] = bias + sum_e mid16[e/16][q][e%16] * W^T[e][f],
//               computed transposed (a tile of up to 16 pixels by up to 3
//               vectors of filters, each depthwise output broadcast), then
//               16 x 16 blocks of y^T transposed into the output planes with
//               the residual.
//
// An image goes in bands of output rows, each band's three steps on one
// thread in its buffers (as the NCHW block in block.cc), or, where that
// costs less (small images, whose bands would compute many rows twice),
// in planes: the threads expand and convolve the whole image's groups of
// three channel blocks, then project their shares of its pixels.
//
// The weights come packed for these kernels (tcc_uk_block_pack_weights, at
// compile time: W^T in groups of 3 vectors, each group's rows contiguous),
// or are laid out so at the start of the call. Sums run in another order
// than the three convolutions' (the biases are the accumulators' first
// values), so the results agree with theirs to rounding, not bit for bit;
// each element's sums are the same in either mode and on any thread.
#include "depthwise_internal.h"

#include <math.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Channels of a block of the layout: one AVX-512 vector.
constexpr int64_t kCB = 16;
/// The widest depthwise window the blocked kernels take (3x3, 5x5, 7x7).
constexpr int64_t kBlockedMaxWindow = 7;

/// Channels the projection sums through all its pixels at a time: their
/// rows of a group of W^T (128 x 48 floats, 24 KB) stay in L1 meanwhile,
/// where all of a 480- or 1152-channel group (92 or 221 KB) came from L2
/// for every tile of 8 pixels.
constexpr int64_t kProjectChunk = 128;
/// Pixels of y^T a part computes at a time in the planes mode.
constexpr int64_t kPlanesChunk = 256;
/// The planes mode's x16 of one image at most (beyond it, or where the
/// bands cost less, the image goes in bands).
constexpr int64_t kPlanesMaxBytes = int64_t(4) << 20;

/// A blocked block's sizes, and where a part's buffers lie.
struct BlockedGeometry {
  int64_t cin;        // the expansion's input channels
  int64_t e, eb, ep;  // expanded channels, their blocks, eb * 16
  int64_t f, fp;      // outputs, rounded up to whole vectors
  int64_t wp;         // columns of a padded row of x16
  int64_t band;       // output rows of a band at most
  int64_t rowsMax;    // padded rows of x16 a band reads at most
  int64_t xFloats;    // x16 of a band: ep x rowsMax x wp
  int64_t midFloats;  // mid16 of a band: ep x band x ow
  int64_t ctFloats;   // y^T of a band: band * ow rounded to 16, x fp
  int64_t partFloats; // the three, 16-float multiples
  // The whole image at once (planes): x16 of every padded row, mid16 of
  // every output row, and a part's y^T of kPlanesChunk pixels.
  int64_t hp, planesX, planesMid, planesCt;
  // The biases padded to whole vectors, then (where the compiler did not
  // pack them) the weights as laid out for the call, one after another.
  int64_t bExp, bDw, bPw, biasFloats, wExp, wDw, wPw, weightFloats;
};

int64_t round16(int64_t x) { return ceilDiv(x, kCB) * kCB; }

BlockedGeometry blockedGeometry(const ConvShape &s, const ConvShape &es,
                                int64_t f, int64_t bandBytes) {
  BlockedGeometry g;
  g.cin = es.c;
  g.e = s.c;
  g.eb = ceilDiv(g.e, kCB);
  g.ep = g.eb * kCB;
  g.f = f;
  g.fp = round16(f);
  g.wp = maxI(s.pl + s.w, (s.ow - 1) * s.sw + s.kw);
  // A band of r output rows reads (r - 1) sh + kh padded rows of x16.
  const int64_t f4 = static_cast<int64_t>(sizeof(float));
  const int64_t perRow = f4 * (g.ep * s.sh * g.wp + g.ep * s.ow + s.ow * g.fp);
  const int64_t fixed = f4 * (s.kh - s.sh) * g.ep * g.wp;
  g.band = maxI(1, minI(s.oh, (bandBytes - fixed) / perRow));
  g.rowsMax = (g.band - 1) * s.sh + s.kh;
  g.xFloats = round16(g.ep * g.rowsMax * g.wp);
  g.midFloats = round16(g.ep * g.band * s.ow);
  g.ctFloats = round16(g.band * s.ow) * g.fp;
  g.partFloats = g.xFloats + g.midFloats + g.ctFloats;
  g.hp = (s.oh - 1) * s.sh + s.kh;
  g.planesX = round16(g.ep * g.hp * g.wp);
  g.planesMid = round16(g.ep * s.oh * s.ow);
  g.planesCt = kPlanesChunk * g.fp;
  g.bExp = 0;
  g.bDw = g.ep;
  g.bPw = 2 * g.ep;
  g.biasFloats = round16(2 * g.ep + g.fp);
  g.wExp = g.biasFloats;
  g.wDw = g.wExp + round16(g.cin * g.ep);
  g.wPw = g.wDw + g.ep * s.kh * s.kw;
  g.weightFloats = g.wPw + g.ep * g.fp;
  return g;
}

} // namespace

bool blockedFits(int32_t isa, const ConvShape &s, const ConvShape &es) {
  return isa == TCC_UK_ISA_AVX512 && isPointwise(es) && es.groups == 1 &&
         s.kh == s.kw && s.kh % 2 == 1 && s.kh >= 3 &&
         s.kh <= kBlockedMaxWindow && s.dh == 1 && s.dw == 1 && s.sh == s.sw &&
         (s.sh == 1 || s.sh == 2) && s.pl < s.kw && s.pr < s.kw;
}

namespace {

/// Whether the planes mode may run g: its x16 of one image is at most
/// kPlanesMaxBytes.
bool planesAllowed(const BlockedGeometry &g) {
  return static_cast<int64_t>(sizeof(float)) * g.planesX <= kPlanesMaxBytes;
}

} // namespace

int64_t blockedScratchBytes(const ConvShape &s, const ConvShape &es, int64_t f,
                            int64_t bandBytes, int64_t parts, bool packed) {
  const BlockedGeometry g = blockedGeometry(s, es, f, bandBytes);
  const int64_t head = packed ? g.biasFloats : g.weightFloats;
  int64_t floats = head + parts * g.partFloats;
  if (planesAllowed(g))
    floats = maxI(floats, head + g.planesX + g.planesMid + parts * g.planesCt);
  return 64 + static_cast<int64_t>(sizeof(float)) * floats;
}

namespace {

/// A stored float of a matrix packed as this build's GEMM A (or not):
/// element (i, k) of an m x kdim matrix.
float weightAt(const float *w, bool packedA, int64_t kdim, int64_t i,
               int64_t k) {
  return packedA ? w[(i / kMR) * kdim * kMR + k * kMR + i % kMR]
                 : w[i * kdim + k];
}

} // namespace

int64_t blockedWeightFloats(const ConvShape &s, const ConvShape &es, int64_t f,
                            int32_t part) {
  const BlockedGeometry g = blockedGeometry(s, es, f, 0);
  return part == TCC_UK_BLOCK_EXPANSION   ? g.cin * g.ep
         : part == TCC_UK_BLOCK_DEPTHWISE ? g.ep * s.kh * s.kw
                                          : g.ep * g.fp;
}

void blockedPackWeights(const ConvShape &s, const ConvShape &es, int64_t f,
                        int32_t part, const float *weight, bool packedA,
                        float *out) {
  const BlockedGeometry g = blockedGeometry(s, es, f, 0);
  const int64_t taps = s.kh * s.kw;
  zeroShort(out, blockedWeightFloats(s, es, f, part));
  // W^T in groups of three vectors (as the tiles take them), each group
  // its rows of up to 48 floats one after another: vector v of row k at
  // (v / 3) 48 rows + (k nv + v % 3) 16, nv the group's vectors.
  auto grouped = [](int64_t v, int64_t vectors, int64_t rows, int64_t k) {
    const int64_t first = v / 3 * 3, nv = minI(3, vectors - first);
    return first * kCB * rows + (k * nv + v - first) * kCB;
  };
  for (int64_t i = 0; i < g.e; ++i) {
    if (part == TCC_UK_BLOCK_EXPANSION) {
      for (int64_t k = 0; k < g.cin; ++k)
        out[grouped(i / kCB, g.eb, g.cin, k) + i % kCB] =
            weightAt(weight, packedA, g.cin, i, k);
    } else if (part == TCC_UK_BLOCK_DEPTHWISE) {
      for (int64_t t = 0; t < taps; ++t)
        out[((i / kCB) * taps + t) * kCB + i % kCB] = weight[i * taps + t];
    } else {
      for (int64_t o = 0; o < g.f; ++o)
        out[grouped(o / kCB, g.fp / kCB, g.ep, i) + o % kCB] =
            weightAt(weight, packedA, g.e, o, i);
    }
  }
}

#if TCC_UK_NATIVE_ISA == 2

namespace {

/// What a band's kernels share: the geometry, the weights as laid out, the
/// image and the clamps.
struct BlockedJob {
  const ConvShape *s;
  BlockedGeometry g;
  // The weights as the kernels read them (packed so at compile time, or
  // into the scratch at the start of the call) and the biases padded.
  const float *wExp, *bExp, *wDw, *bDw, *wPw, *bPw;
  const float *image; // cin planes of h x w
  float *out;         // f planes of oh x ow
  const float *residual;
  vf expLo, expHi, dwLo, dwHi, outLo, outHi;
  float *scratch; // parts' buffers, g.partFloats each
  int64_t bands;  // of an image, in the bands mode
  int64_t shares; // of the pixels to project, in the planes mode
  RunClaims claims;
};

/// The clamp of an epilogue as bounds (infinite where it has none: the
/// min and max keep x, NaN included).
void clampBounds(bool has, float lo, float hi, vf &vlo, vf &vhi) {
  vlo = vset1(has ? lo : -INFINITY);
  vhi = vset1(has ? hi : INFINITY);
}

/// NP pixels by NV vectors of expanded channels: x points at the first
/// pixel of channel 0 (planes `plane` floats apart, the pixels consecutive
/// in them), w at W^T of the group (cin rows of NV vectors) and bias at
/// the group's first channel; pixel j goes to dst[j], vector v of it at
/// dst[j] + v vstride.
template <int NP, int NV>
TCC_UK_INLINE void expandTile(const float *x, int64_t plane, int64_t cin,
                              const float *w, const float *bias, vf lo, vf hi,
                              float *const *dst, int64_t vstride) {
  vf acc[NP][NV];
  TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v) {
    const vf b = vload(bias + v * kCB);
    TCC_UK_UNROLL
    for (int j = 0; j < NP; ++j)
      acc[j][v] = b;
  }
  for (int64_t k = 0; k < cin; ++k) {
    const float *wk = w + k * NV * kCB;
    const float *xk = x + k * plane;
    vf wv[NV];
    TCC_UK_UNROLL
    for (int v = 0; v < NV; ++v)
      wv[v] = vload(wk + v * kCB);
    TCC_UK_UNROLL
    for (int j = 0; j < NP; ++j) {
      const vf a = vset1(xk[j]);
      TCC_UK_UNROLL
      for (int v = 0; v < NV; ++v)
        acc[j][v] = vfma(a, wv[v], acc[j][v]);
    }
  }
  TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v)
    TCC_UK_UNROLL
  for (int j = 0; j < NP; ++j)
    vstore(dst[j] + v * vstride, vclamp(acc[j][v], lo, hi));
}

/// Where the expansion's pixels go: pixel p (of the image rows from the
/// first one computed, consecutive in the input planes) at its padded row
/// and column of x16's block 0.
struct ExpandTarget {
  float *x16; // the first computed row's first padded column
  int64_t w, wp;
  float *at(int64_t p) const { return x16 + ((p / w) * wp + p % w) * kCB; }
};

/// Pixels [0, n) of the computed rows by NV channel vectors, tiles of 8
/// pixels across the rows' ends (then 4, then 1).
template <int NV>
void expandPixels(const float *x, int64_t plane, int64_t cin, int64_t n,
                  const float *w, const float *bias, vf lo, vf hi,
                  const ExpandTarget &t, int64_t vstride) {
  float *dst[8];
  int64_t p = 0;
  for (; p + 8 <= n; p += 8) {
    for (int j = 0; j < 8; ++j)
      dst[j] = t.at(p + j);
    expandTile<8, NV>(x + p, plane, cin, w, bias, lo, hi, dst, vstride);
  }
  if (p + 4 <= n) {
    for (int j = 0; j < 4; ++j)
      dst[j] = t.at(p + j);
    expandTile<4, NV>(x + p, plane, cin, w, bias, lo, hi, dst, vstride);
    p += 4;
  }
  for (; p < n; ++p) {
    dst[0] = t.at(p);
    expandTile<1, NV>(x + p, plane, cin, w, bias, lo, hi, dst, vstride);
  }
}

/// Padded rows [0, rows) of x16's channel blocks [b0, b1) (rows a block;
/// b0 a multiple of 3, W^T packed in groups of 3 blocks), the first image
/// row top: rows outside the image and the pad columns zero.
void expandRows(const BlockedJob &job, float *x16, int64_t top, int64_t rows,
                int64_t b0, int64_t b1) {
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  const int64_t wp = g.wp, plane = s.h * s.w, vstride = rows * wp * kCB;
  for (int64_t b = b0; b < b1; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      float *row = x16 + (b * rows + r) * wp * kCB;
      const int64_t iy = top + r;
      if (iy < 0 || iy >= s.h) {
        zeroShort(row, wp * kCB);
        continue;
      }
      zeroShort(row, s.pl * kCB);
      zeroShort(row + (s.pl + s.w) * kCB, (wp - s.pl - s.w) * kCB);
    }
  const int64_t iy0 = maxI(0, top), iy1 = minI(s.h, top + rows);
  if (iy0 >= iy1)
    return;
  const float *x = job.image + iy0 * s.w;
  const int64_t n = (iy1 - iy0) * s.w;
  for (int64_t b = b0; b < b1; b += 3) {
    const ExpandTarget t = {
        x16 + (b * rows + iy0 - top) * wp * kCB + s.pl * kCB, s.w, wp};
    const float *w = job.wExp + b * kCB * g.cin, *bias = job.bExp + b * kCB;
    switch (minI(3, b1 - b)) {
    case 3:
      expandPixels<3>(x, plane, g.cin, n, w, bias, job.expLo, job.expHi, t,
                      vstride);
      break;
    case 2:
      expandPixels<2>(x, plane, g.cin, n, w, bias, job.expLo, job.expHi, t,
                      vstride);
      break;
    default:
      expandPixels<1>(x, plane, g.cin, n, w, bias, job.expLo, job.expHi, t,
                      vstride);
    }
  }
}

/// NT output pixels of a row of one channel block: in points at the
/// padded x16 row of the window's top, at the first pixel's first column
/// (rows `pitch` floats apart), w at the block's taps.
template <int K, int S, int NT>
TCC_UK_INLINE void depthwiseTile(const float *in, int64_t pitch, const float *w,
                                 vf bias, vf lo, vf hi, float *dst) {
  vf acc[NT];
  TCC_UK_UNROLL
  for (int j = 0; j < NT; ++j)
    acc[j] = bias;
  TCC_UK_UNROLL
  for (int ky = 0; ky < K; ++ky)
    TCC_UK_UNROLL
  for (int kx = 0; kx < K; ++kx) {
    const vf wv = vload(w + (ky * K + kx) * kCB);
    const float *row = in + ky * pitch + kx * kCB;
    TCC_UK_UNROLL
    for (int j = 0; j < NT; ++j)
      acc[j] = vfma(vload(row + j * S * kCB), wv, acc[j]);
  }
  TCC_UK_UNROLL
  for (int j = 0; j < NT; ++j)
    vstore(dst + j * kCB, vclamp(acc[j], lo, hi));
}

/// The depthwise output rows [0, rows) of channel blocks [b0, b1) from
/// x16 (xRows padded rows a block) into mid16 (rows a block).
template <int K, int S>
void depthwiseRows(const BlockedJob &job, const float *x16, int64_t xRows,
                   float *mid16, int64_t rows, int64_t b0, int64_t b1) {
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  const int64_t pitch = g.wp * kCB, ow = s.ow;
  for (int64_t b = b0; b < b1; ++b) {
    const float *w = job.wDw + b * K * K * kCB;
    const vf bias = vload(job.bDw + b * kCB);
    for (int64_t oy = 0; oy < rows; ++oy) {
      const float *in = x16 + (b * xRows + oy * S) * pitch;
      float *dst = mid16 + (b * rows + oy) * ow * kCB;
      int64_t ox = 0;
      for (; ox + 8 <= ow; ox += 8)
        depthwiseTile<K, S, 8>(in + ox * S * kCB, pitch, w, bias, job.dwLo,
                               job.dwHi, dst + ox * kCB);
      if (ox + 4 <= ow) {
        depthwiseTile<K, S, 4>(in + ox * S * kCB, pitch, w, bias, job.dwLo,
                               job.dwHi, dst + ox * kCB);
        ox += 4;
      }
      if (ox + 2 <= ow) {
        depthwiseTile<K, S, 2>(in + ox * S * kCB, pitch, w, bias, job.dwLo,
                               job.dwHi, dst + ox * kCB);
        ox += 2;
      }
      for (; ox < ow; ++ox)
        depthwiseTile<K, S, 1>(in + ox * S * kCB, pitch, w, bias, job.dwLo,
                               job.dwHi, dst + ox * kCB);
    }
  }
}

typedef void (*DepthwiseRowsFn)(const BlockedJob &, const float *, int64_t,
                                float *, int64_t, int64_t, int64_t);

DepthwiseRowsFn depthwiseRowsFor(int64_t k, int64_t stride) {
  static const DepthwiseRowsFn fns[3][2] = {
      {depthwiseRows<3, 1>, depthwiseRows<3, 2>},
      {depthwiseRows<5, 1>, depthwiseRows<5, 2>},
      {depthwiseRows<7, 1>, depthwiseRows<7, 2>}};
  return fns[(k - 3) / 2][stride - 1];
}

/// NQ pixels by NF filter vectors of y^T, the sums over channels [c0, c1)
/// (c0 a multiple of 16) added to those before them in ct (or to the bias
/// where c0 is 0): mid points at the first pixel of block 0 (blocks
/// `blockStride` floats apart), w at W^T of the group (e rows of NF
/// vectors), bias at its first filter; pixel q's sums at ct + q fp.
template <int NQ, int NF>
TCC_UK_INLINE void projectTile(const float *mid, int64_t blockStride,
                               int64_t c0, int64_t c1, const float *w,
                               int64_t fp, const float *bias, float *ct) {
  vf acc[NQ][NF];
  TCC_UK_UNROLL
  for (int v = 0; v < NF; ++v) {
    const vf b = vload(bias + v * kCB);
    TCC_UK_UNROLL
    for (int q = 0; q < NQ; ++q)
      acc[q][v] = c0 == 0 ? b : vload(ct + q * fp + v * kCB);
  }
  for (int64_t cb = c0; cb < c1; cb += kCB) {
    const float *m = mid + (cb / kCB) * blockStride;
    const int64_t n = minI(kCB, c1 - cb);
    for (int64_t j = 0; j < n; ++j) {
      const float *wj = w + (cb + j) * NF * kCB;
      vf wv[NF];
      TCC_UK_UNROLL
      for (int v = 0; v < NF; ++v)
        wv[v] = vload(wj + v * kCB);
      TCC_UK_UNROLL
      for (int q = 0; q < NQ; ++q) {
        const vf a = vset1(m[q * kCB + j]);
        TCC_UK_UNROLL
        for (int v = 0; v < NF; ++v)
          acc[q][v] = vfma(a, wv[v], acc[q][v]);
      }
    }
  }
  TCC_UK_UNROLL
  for (int q = 0; q < NQ; ++q)
    TCC_UK_UNROLL
  for (int v = 0; v < NF; ++v)
    vstore(ct + q * fp + v * kCB, acc[q][v]);
}

/// Pixels [0, n) of y^T by the NF filter vectors from vector f0 / 16 (a
/// group of W^T), tiles of NQ pixels (then 4, then 1), kProjectChunk
/// channels at a time through all of them: mid16 points at the first pixel
/// of block 0, blocks blockStride floats apart.
template <int NQ, int NF>
void projectColumns(const BlockedJob &job, const float *mid16,
                    int64_t blockStride, int64_t n, int64_t f0, float *ct) {
  const BlockedGeometry &g = job.g;
  const float *w = job.wPw + f0 * g.ep, *bias = job.bPw + f0;
  for (int64_t c0 = 0; c0 < g.e; c0 += kProjectChunk) {
    const int64_t c1 = minI(g.e, c0 + kProjectChunk);
    int64_t q = 0;
    for (; q + NQ <= n; q += NQ)
      projectTile<NQ, NF>(mid16 + q * kCB, blockStride, c0, c1, w, g.fp, bias,
                          ct + q * g.fp + f0);
    for (; q + 4 <= n; q += 4)
      projectTile<4, NF>(mid16 + q * kCB, blockStride, c0, c1, w, g.fp, bias,
                         ct + q * g.fp + f0);
    for (; q < n; ++q)
      projectTile<1, NF>(mid16 + q * kCB, blockStride, c0, c1, w, g.fp, bias,
                         ct + q * g.fp + f0);
  }
}

/// y^T of n pixels of mid16 (as projectColumns reads them) into ct, then
/// its 16 x 16 blocks transposed into the output planes from pixel q0 of
/// each, with the residual and the clamp.
void projectPixels(const BlockedJob &job, const float *mid16,
                   int64_t blockStride, int64_t n, float *ct, int64_t q0) {
  const BlockedGeometry &g = job.g;
  const int64_t fv = g.fp / kCB;
  int64_t v = 0;
  for (; v + 3 <= fv; v += 3)
    projectColumns<8, 3>(job, mid16, blockStride, n, v * kCB, ct);
  if (fv - v == 2)
    projectColumns<12, 2>(job, mid16, blockStride, n, v * kCB, ct);
  else if (fv - v == 1)
    projectColumns<16, 1>(job, mid16, blockStride, n, v * kCB, ct);

  const int64_t ohw = job.s->oh * job.s->ow;
  for (int64_t q = 0; q < n; q += kCB) {
    const int64_t nq = minI(kCB, n - q);
    const vmask m = vmaskFirst(static_cast<int>(nq));
    const float *rows[kCB];
    for (int64_t f0 = 0; f0 < g.f; f0 += kCB) {
      for (int64_t i = 0; i < kCB; ++i)
        rows[i] = ct + (q + minI(i, nq - 1)) * g.fp + f0;
      vf r[kCB];
      vtransposeLoad(r, rows);
      const int64_t nf = minI(kCB, g.f - f0);
      for (int64_t i = 0; i < nf; ++i) {
        const int64_t at = (f0 + i) * ohw + q0 + q;
        vf y = r[i];
        if (job.residual)
          y = vadd(y, vloadMask(job.residual + at, m));
        vstoreMask(job.out + at, vclamp(y, job.outLo, job.outHi), m);
      }
    }
  }
}

/// Output rows [oy0, oy1) of the image: the expansion of the rows they
/// read, their depthwise rows, the projection, in one part's buffers.
void runBlockedBand(const BlockedJob &job, float *buffers, int64_t oy0,
                    int64_t oy1) {
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  const int64_t rows = oy1 - oy0;
  const int64_t xRows = (rows - 1) * s.sh + s.kh;
  float *x16 = buffers, *mid16 = x16 + g.xFloats, *ct = mid16 + g.midFloats;
  expandRows(job, x16, oy0 * s.sh - s.pt, xRows, 0, g.eb);
  depthwiseRowsFor(s.kh, s.sh)(job, x16, xRows, mid16, rows, 0, g.eb);
  projectPixels(job, mid16, rows * s.ow * kCB, rows * s.ow, ct, oy0 * s.ow);
}

/// The planes mode's first step, channel-block groups [begin, end) of
/// the image (three blocks a group, as the expansion's tiles take them):
/// their x16 over every padded row, then their depthwise output.
void runPlanesGroups(void *ctx, int64_t begin, int64_t end) {
  BlockedJob &job = *static_cast<BlockedJob *>(ctx);
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  float *x16 = job.scratch, *mid16 = x16 + g.planesX;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t b0 = 3 * i, b1 = minI(g.eb, b0 + 3);
    expandRows(job, x16, -s.pt, g.hp, b0, b1);
    depthwiseRowsFor(s.kh, s.sh)(job, x16, g.hp, mid16, s.oh, b0, b1);
  }
}

/// The planes mode's second step: part q projects its share of the
/// image's pixels, kPlanesChunk at a time.
void runPlanesProjection(void *ctx, int64_t begin, int64_t end) {
  BlockedJob &job = *static_cast<BlockedJob *>(ctx);
  const BlockedGeometry &g = job.g;
  const int64_t ohw = job.s->oh * job.s->ow;
  const float *mid16 = job.scratch + g.planesX;
  for (int64_t q = begin; q < end; ++q) {
    float *ct = job.scratch + g.planesX + g.planesMid + q * g.planesCt;
    const int64_t p1 = (q + 1) * ohw / job.shares;
    for (int64_t p0 = q * ohw / job.shares; p0 < p1; p0 += kPlanesChunk)
      projectPixels(job, mid16 + p0 * kCB, ohw * kCB,
                    minI(kPlanesChunk, p1 - p0), ct, p0);
  }
}

/// Whether the planes mode costs less than `bands` bands on `parts`
/// parts, by the blocks of x16 rows the busiest part expands: in the
/// planes mode the groups dealt to the parts in contiguous runs (its
/// second parallel step and the projection's reads of the depthwise output
/// the other core computed counted as a tenth more), in bands the rows
/// shared out, those that two bands read computed by both. Measured at
/// 56x56 (24 -> 72, stride 1: 1.24 against 1.50 blocks of rows per
/// padded row, bands 15% faster) and 28x28 to 14x14 at stride 2 (planes
/// 9-17% faster).
bool planesCostLess(const BlockedGeometry &g, const ConvShape &s, int64_t parts,
                    int64_t bands) {
  if (!planesAllowed(g))
    return false;
  const int64_t busiest = minI(g.eb, 3 * ceilDiv(ceilDiv(g.eb, 3), parts));
  const int64_t bandRows = s.oh * s.sh + bands * (s.kh - s.sh);
  return 11 * busiest * g.hp * parts <= 10 * g.eb * bandRows;
}

void runBlockedParts(void *ctx, int64_t begin, int64_t end) {
  BlockedJob &job = *static_cast<BlockedJob *>(ctx);
  const int64_t oh = job.s->oh;
  for (int64_t q = begin; q < end; ++q) {
    float *buffers = job.scratch + q * job.g.partFloats;
    for (int64_t b; (b = job.claims.claim(q)) >= 0;)
      runBlockedBand(job, buffers, b * oh / job.bands,
                     (b + 1) * oh / job.bands);
  }
}

} // namespace

void runBlockedBlock(const tcc_host_api_t *host, const tcc_uk_block_params_t *p,
                     const ConvShape &s, const ConvShape &es, int64_t bandBytes,
                     int64_t maxParts, int64_t bandsPerPart, const float *input,
                     const float *expWeight, const float *dwWeight,
                     const float *pwWeight, float *output,
                     const tcc_uk_epilogue_t *epilogue, void *scratch) {
  BlockedJob job;
  job.s = &s;
  job.g = blockedGeometry(s, es, p->pair.f, bandBytes);
  const BlockedGeometry &g = job.g;
  float *weights = alignScratch(scratch);
  // Biases padded to whole vectors, and the weights where the compiler did
  // not pack them for these kernels.
  zeroShort(weights + g.bExp, g.ep);
  zeroShort(weights + g.bDw, g.ep);
  zeroShort(weights + g.bPw, g.fp);
  if (p->exp_bias)
    copyShort(weights + g.bExp, p->exp_bias, g.e);
  if (p->pair.dw_bias)
    copyShort(weights + g.bDw, p->pair.dw_bias, g.e);
  if (epilogue && epilogue->bias)
    copyShort(weights + g.bPw, epilogue->bias, g.f);
  job.bExp = weights + g.bExp;
  job.bDw = weights + g.bDw;
  job.bPw = weights + g.bPw;
  if (p->exp.flags & TCC_UK_PACKED_BLOCKED) {
    job.wExp = expWeight;
    job.wDw = dwWeight;
    job.wPw = pwWeight;
  } else {
    blockedPackWeights(s, es, g.f, TCC_UK_BLOCK_EXPANSION, expWeight,
                       (p->exp.flags & TCC_UK_PACKED_A) != 0, weights + g.wExp);
    blockedPackWeights(s, es, g.f, TCC_UK_BLOCK_DEPTHWISE, dwWeight, false,
                       weights + g.wDw);
    blockedPackWeights(s, es, g.f, TCC_UK_BLOCK_PROJECTION, pwWeight,
                       (p->pair.flags & TCC_UK_PACKED_A) != 0, weights + g.wPw);
    job.wExp = weights + g.wExp;
    job.wDw = weights + g.wDw;
    job.wPw = weights + g.wPw;
  }
  job.scratch =
      weights +
      (p->exp.flags & TCC_UK_PACKED_BLOCKED ? g.biasFloats : g.weightFloats);
  clampBounds(p->exp_has_clamp, p->exp_clamp_min, p->exp_clamp_max, job.expLo,
              job.expHi);
  clampBounds(p->pair.dw_has_clamp, p->pair.dw_clamp_min, p->pair.dw_clamp_max,
              job.dwLo, job.dwHi);
  clampBounds(epilogue && epilogue->has_clamp,
              epilogue ? epilogue->clamp_min : 0,
              epilogue ? epilogue->clamp_max : 0, job.outLo, job.outHi);
  const int64_t parts = maxI(1, minI(minI(hostThreads(host), maxParts), s.oh));
  job.bands = blockBands(s.oh, g.band, parts, bandsPerPart);
  const int64_t ohw = s.oh * s.ow;
  const bool planes = planesCostLess(job.g, s, parts, job.bands);
  job.shares = parts;
  for (int64_t img = 0; img < s.n; ++img) {
    job.image = input + img * es.c * es.h * es.w;
    job.out = output + img * job.g.f * ohw;
    job.residual = epilogue && epilogue->residual
                       ? epilogue->residual + img * job.g.f * ohw
                       : NULL;
    if (planes) {
      parallelFor(host, ceilDiv(job.g.eb, 3), 1, runPlanesGroups, &job);
      parallelFor(host, parts, 1, runPlanesProjection, &job);
      continue;
    }
    job.claims.reset(parts, job.bands);
    parallelFor(host, parts, 1, runBlockedParts, &job);
  }
}

#endif // TCC_UK_NATIVE_ISA == 2

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
