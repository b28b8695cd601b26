// blocked.cc - the inverted-residual block (a 1x1 expansion, a depthwise
// convolution and the 1x1 projection after it) in the channel-blocked
// layout on AVX-512: inside the call, the expanded tensor and the depthwise
// output of a band of rows are kept as blocks of 16 channels, each pixel's
// 16 channels one vector ([e/16][rows][columns][16], "NCHW16c"), so that
// the depthwise convolution is plain vector FMAs, whatever its stride, with
// no transposes and no shuffles. The block's input and output stay NCHW:
//
//   expansion   x16[b][r][c] = clamp(bias + sum_k W[k][16b..] * in[k][r][c])
//               a tile of 8 pixels by up to 3 channel vectors, each input
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
// The weights are laid out for this at the start of the call (a few
// thousand floats, from the layouts the compiler packed for the GEMMs).
// Sums run in another order than the three convolutions' (the biases are
// the accumulators' first values), so the results agree with theirs to
// rounding, not bit for bit.
#include "depthwise_internal.h"

#include <math.h>
#include <stdlib.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Channels of a block of the layout: one AVX-512 vector.
constexpr int64_t kCB = 16;
/// The widest depthwise window the blocked kernels take (3x3, 5x5, 7x7).
constexpr int64_t kBlockedMaxWindow = 7;

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
  // The weights as laid out for the call, one after another.
  int64_t wExp, bExp, wDw, bDw, wPw, bPw, weightFloats;
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
  g.wExp = 0;
  g.bExp = g.wExp + round16(g.cin * g.ep);
  g.wDw = g.bExp + g.ep;
  g.bDw = g.wDw + g.ep * s.kh * s.kw;
  g.wPw = g.bDw + g.ep;
  g.bPw = g.wPw + g.ep * g.fp;
  g.weightFloats = g.bPw + g.fp;
  return g;
}

} // namespace

bool blockedFits(int32_t isa, const ConvShape &s, const ConvShape &es) {
  return isa == TCC_UK_ISA_AVX512 && isPointwise(es) && es.groups == 1 &&
         s.kh == s.kw && s.kh % 2 == 1 && s.kh >= 3 &&
         s.kh <= kBlockedMaxWindow && s.dh == 1 && s.dw == 1 && s.sh == s.sw &&
         (s.sh == 1 || s.sh == 2) && s.pl < s.kw && s.pr < s.kw;
}

int64_t blockedScratchBytes(const ConvShape &s, const ConvShape &es, int64_t f,
                            int64_t bandBytes, int64_t parts) {
  const BlockedGeometry g = blockedGeometry(s, es, f, bandBytes);
  return 64 + static_cast<int64_t>(sizeof(float)) *
                  (g.weightFloats + parts * g.partFloats);
}

#if TCC_UK_NATIVE_ISA == 2

namespace {

/// What a band's kernels share: the geometry, the weights as laid out, the
/// image and the clamps.
struct BlockedJob {
  const ConvShape *s;
  BlockedGeometry g;
  const float *weights; // g.weightFloats
  const float *image;   // cin planes of h x w
  float *out;           // f planes of oh x ow
  const float *residual;
  vf expLo, expHi, dwLo, dwHi, outLo, outHi;
  float *scratch; // parts' buffers, g.partFloats each
  int64_t bands;
  RunClaims claims;
};

/// The clamp of an epilogue as bounds (infinite where it has none: the
/// min and max keep x, NaN included).
void clampBounds(bool has, float lo, float hi, vf &vlo, vf &vhi) {
  vlo = vset1(has ? lo : -INFINITY);
  vhi = vset1(has ? hi : INFINITY);
}

/// A stored float of a matrix the compiler packed as a GEMM's A (or not):
/// element (i, k) of an m x kdim matrix.
float weightAt(const float *w, bool packed, int64_t kdim, int64_t i,
               int64_t k) {
  return packed ? w[(i / kMR) * kdim * kMR + k * kMR + i % kMR]
                : w[i * kdim + k];
}

/// The weights and biases in the layouts of the kernels below: W^T of the
/// expansion (cin x ep), its bias (ep), the depthwise taps by blocks
/// ([eb][kh kw][16]), its bias, W^T of the projection (ep x fp) and its
/// bias (fp); zeros for the padding channels and filters.
void layoutWeights(const BlockedGeometry &g, const ConvShape &s,
                   const tcc_uk_block_params_t *p, const float *expWeight,
                   const float *dwWeight, const float *pwWeight,
                   const float *pwBias, float *dst) {
  const bool expPacked = (p->exp.flags & TCC_UK_PACKED_A) != 0;
  const bool pwPacked = (p->pair.flags & TCC_UK_PACKED_A) != 0;
  const int64_t taps = s.kh * s.kw;
  zeroShort(dst, g.weightFloats);
  for (int64_t i = 0; i < g.e; ++i) {
    for (int64_t k = 0; k < g.cin; ++k)
      dst[g.wExp + k * g.ep + i] = weightAt(expWeight, expPacked, g.cin, i, k);
    dst[g.bExp + i] = p->exp_bias ? p->exp_bias[i] : 0.0f;
    for (int64_t t = 0; t < taps; ++t)
      dst[g.wDw + ((i / kCB) * taps + t) * kCB + i % kCB] =
          dwWeight[i * taps + t];
    dst[g.bDw + i] = p->pair.dw_bias ? p->pair.dw_bias[i] : 0.0f;
    for (int64_t o = 0; o < g.f; ++o)
      dst[g.wPw + i * g.fp + o] = weightAt(pwWeight, pwPacked, g.e, o, i);
  }
  for (int64_t o = 0; o < g.f; ++o)
    dst[g.bPw + o] = pwBias ? pwBias[o] : 0.0f;
}

/// NP pixels of an input row by NV vectors of expanded channels: x points
/// at the first pixel of channel 0 (planes `plane` floats apart), w at W^T
/// (cin rows, `ep` floats apart) and bias at the first channel; the
/// results go to dst, pixel j at dst + 16 j, vector v at dst + v vstride.
template <int NP, int NV>
TCC_UK_INLINE void expandTile(const float *x, int64_t plane, int64_t cin,
                              const float *w, int64_t ep, const float *bias,
                              vf lo, vf hi, float *dst, int64_t vstride) {
  vf acc[NP][NV];
  TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v) {
    const vf b = vload(bias + v * kCB);
    TCC_UK_UNROLL
    for (int j = 0; j < NP; ++j)
      acc[j][v] = b;
  }
  for (int64_t k = 0; k < cin; ++k) {
    const float *wk = w + k * ep;
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
    vstore(dst + v * vstride + j * kCB, vclamp(acc[j][v], lo, hi));
}

/// One input row's w pixels by NV channel vectors (expandTile a tile of 8
/// pixels, then the rest).
template <int NV>
void expandRow(const float *x, int64_t plane, int64_t cin, int64_t w,
               const float *wt, int64_t ep, const float *bias, vf lo, vf hi,
               float *dst, int64_t vstride) {
  int64_t c = 0;
  for (; c + 8 <= w; c += 8)
    expandTile<8, NV>(x + c, plane, cin, wt, ep, bias, lo, hi, dst + c * kCB,
                      vstride);
  if (c + 4 <= w) {
    expandTile<4, NV>(x + c, plane, cin, wt, ep, bias, lo, hi, dst + c * kCB,
                      vstride);
    c += 4;
  }
  for (; c < w; ++c)
    expandTile<1, NV>(x + c, plane, cin, wt, ep, bias, lo, hi, dst + c * kCB,
                      vstride);
}

/// Padded rows [0, rows) of a band's x16, the first image row top (rows
/// outside the image and the pad columns zero).
void expandBand(const BlockedJob &job, float *x16, int64_t top, int64_t rows) {
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  const int64_t wp = g.wp, plane = s.h * s.w, vstride = rows * wp * kCB;
  const float *wt = job.weights + g.wExp, *bias = job.weights + g.bExp;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t iy = top + r;
    for (int64_t b = 0; b < g.eb; ++b) {
      float *row = x16 + (b * rows + r) * wp * kCB;
      if (iy < 0 || iy >= s.h) {
        zeroShort(row, wp * kCB);
        continue;
      }
      zeroShort(row, s.pl * kCB);
      zeroShort(row + (s.pl + s.w) * kCB, (wp - s.pl - s.w) * kCB);
    }
    if (iy < 0 || iy >= s.h)
      continue;
    const float *x = job.image + iy * s.w;
    float *dst = x16 + (r * wp + s.pl) * kCB;
    int64_t b = 0;
    for (; b + 3 <= g.eb; b += 3)
      expandRow<3>(x, plane, g.cin, s.w, wt + b * kCB, g.ep, bias + b * kCB,
                   job.expLo, job.expHi, dst + b * vstride, vstride);
    if (g.eb - b == 2)
      expandRow<2>(x, plane, g.cin, s.w, wt + b * kCB, g.ep, bias + b * kCB,
                   job.expLo, job.expHi, dst + b * vstride, vstride);
    else if (g.eb - b == 1)
      expandRow<1>(x, plane, g.cin, s.w, wt + b * kCB, g.ep, bias + b * kCB,
                   job.expLo, job.expHi, dst + b * vstride, vstride);
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

/// The depthwise output rows [0, rows) of a band from its x16 (xRows
/// padded rows a block) into mid16.
template <int K, int S>
void depthwiseBand(const BlockedJob &job, const float *x16, int64_t xRows,
                   float *mid16, int64_t rows) {
  const ConvShape &s = *job.s;
  const BlockedGeometry &g = job.g;
  const int64_t pitch = g.wp * kCB, ow = s.ow;
  for (int64_t b = 0; b < g.eb; ++b) {
    const float *w = job.weights + g.wDw + b * K * K * kCB;
    const vf bias = vload(job.weights + g.bDw + b * kCB);
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
      for (; ox < ow; ++ox)
        depthwiseTile<K, S, 1>(in + ox * S * kCB, pitch, w, bias, job.dwLo,
                               job.dwHi, dst + ox * kCB);
    }
  }
}

typedef void (*DepthwiseBandFn)(const BlockedJob &, const float *, int64_t,
                                float *, int64_t);

DepthwiseBandFn depthwiseBandFor(int64_t k, int64_t stride) {
  static const DepthwiseBandFn fns[3][2] = {
      {depthwiseBand<3, 1>, depthwiseBand<3, 2>},
      {depthwiseBand<5, 1>, depthwiseBand<5, 2>},
      {depthwiseBand<7, 1>, depthwiseBand<7, 2>}};
  return fns[(k - 3) / 2][stride - 1];
}

/// NQ pixels by NF filter vectors of y^T: mid points at the first pixel
/// of block 0 (blocks `blockStride` floats apart), w at W^T's first
/// filter (rows fp floats apart), bias likewise; e channels summed.
template <int NQ, int NF>
TCC_UK_INLINE void projectTile(const float *mid, int64_t blockStride, int64_t e,
                               const float *w, int64_t fp, const float *bias,
                               float *ct) {
  vf acc[NQ][NF];
  TCC_UK_UNROLL
  for (int v = 0; v < NF; ++v) {
    const vf b = vload(bias + v * kCB);
    TCC_UK_UNROLL
    for (int q = 0; q < NQ; ++q)
      acc[q][v] = b;
  }
  for (int64_t c0 = 0; c0 < e; c0 += kCB) {
    const float *m = mid + (c0 / kCB) * blockStride;
    const int64_t n = minI(kCB, e - c0);
    for (int64_t j = 0; j < n; ++j) {
      const float *wj = w + (c0 + j) * fp;
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

/// Pixels [0, n) of y^T by NF filter vectors from f0, tiles of NQ pixels
/// (then 4, then 1).
template <int NQ, int NF>
void projectColumns(const BlockedJob &job, const float *mid16, int64_t n,
                    int64_t f0, float *ct) {
  const BlockedGeometry &g = job.g;
  const float *w = job.weights + g.wPw + f0, *bias = job.weights + g.bPw + f0;
  const int64_t stride = n * kCB;
  int64_t q = 0;
  for (; q + NQ <= n; q += NQ)
    projectTile<NQ, NF>(mid16 + q * kCB, stride, g.e, w, g.fp, bias,
                        ct + q * g.fp + f0);
  for (; q + 4 <= n; q += 4)
    projectTile<4, NF>(mid16 + q * kCB, stride, g.e, w, g.fp, bias,
                       ct + q * g.fp + f0);
  for (; q < n; ++q)
    projectTile<1, NF>(mid16 + q * kCB, stride, g.e, w, g.fp, bias,
                       ct + q * g.fp + f0);
}

/// y^T of a band's n pixels, then its 16 x 16 blocks transposed into the
/// output planes from pixel q0 of each, with the residual and the clamp.
void projectBand(const BlockedJob &job, const float *mid16, int64_t n,
                 float *ct, int64_t q0) {
  const BlockedGeometry &g = job.g;
  const int64_t fv = g.fp / kCB;
  int64_t v = 0;
  for (; v + 3 <= fv; v += 3)
    projectColumns<8, 3>(job, mid16, n, v * kCB, ct);
  if (fv - v == 2)
    projectColumns<12, 2>(job, mid16, n, v * kCB, ct);
  else if (fv - v == 1)
    projectColumns<16, 1>(job, mid16, n, v * kCB, ct);

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
  expandBand(job, x16, oy0 * s.sh - s.pt, xRows);
  depthwiseBandFor(s.kh, s.sh)(job, x16, xRows, mid16, rows);
  projectBand(job, mid16, rows * s.ow, ct, oy0 * s.ow);
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
  float *weights = alignScratch(scratch);
  layoutWeights(job.g, s, p, expWeight, dwWeight, pwWeight,
                epilogue ? epilogue->bias : NULL, weights);
  job.weights = weights;
  job.scratch = weights + job.g.weightFloats;
  clampBounds(p->exp_has_clamp, p->exp_clamp_min, p->exp_clamp_max, job.expLo,
              job.expHi);
  clampBounds(p->pair.dw_has_clamp, p->pair.dw_clamp_min, p->pair.dw_clamp_max,
              job.dwLo, job.dwHi);
  clampBounds(epilogue && epilogue->has_clamp,
              epilogue ? epilogue->clamp_min : 0,
              epilogue ? epilogue->clamp_max : 0, job.outLo, job.outHi);
  const int64_t parts = maxI(1, minI(minI(hostThreads(host), maxParts), s.oh));
  // Bands of at most g.band rows, and bandsPerPart a part at least (rows
  // allowing), so that the parts share them out as they run.
  job.bands = maxI(ceilDiv(s.oh, job.g.band),
                   parts == 1 ? 1 : minI(s.oh, bandsPerPart * parts));
  const int64_t ohw = s.oh * s.ow;
  for (int64_t img = 0; img < s.n; ++img) {
    job.image = input + img * es.c * es.h * es.w;
    job.out = output + img * job.g.f * ohw;
    job.residual = epilogue && epilogue->residual
                       ? epilogue->residual + img * job.g.f * ohw
                       : NULL;
    job.claims.reset(parts, job.bands);
    parallelFor(host, parts, 1, runBlockedParts, &job);
  }
}

#endif // TCC_UK_NATIVE_ISA == 2

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
