// stem.cc - convolutions over a few input channels a group, with the
// output pixels along the vectors (AVX-512): a network's stem (one group, 3
// channels, 3x3 or 7x7, stride 2) and grouped convolutions of narrow
// groups (2-8 channels, 4 or 8 filters a group):
//
//   y[f, oy, ox..ox+15] = sum over taps t = (c, ky, kx) of f's group's
//       W[f, t] * x[c, oy sh - pt + ky dh, (ox..ox+15) sw - pl + kx]
//
// A chunk of output rows of a group first copies the input rows it reads
// into a stack buffer, zero-padded, and at stride 2 each row split by
// column parity (its even columns, then its odd ones), so every tap of 16
// consecutive outputs is one unaligned load, with no bounds to test. Then
// for up to 3 vectors of a row's outputs and 8 filters at a time (4 for
// groups of 4), each tap loads its input vectors and takes an FMA a vector
// and filter with the weights broadcast (packed [f / 8][tap][8],
// stemPackWeights). The im2col GEMM of k = 27 packed its B and stored its
// tile every 27 k steps, and a group of 4 or 8 filters filled half its
// tile or less; the filters along the vectors (direct.cc) transpose every
// 16 x 16 outputs. Figures in docs/convolutions.md.
#include "depthwise_internal.h"

#include <string.h>

#include <utility>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Input channels the kernel takes at most: of a one-group convolution,
/// and of a group (with at most as many filters) of a grouped one; and the
/// widest window.
constexpr int64_t kStemMaxChannels = 4;
constexpr int64_t kStemMaxGroupWidth = 8;
constexpr int64_t kStemMaxKw = 7;

/// Filters a pass: 8 (8 x 3 vectors of sums in registers), or 4 where a
/// group has 4.
int64_t passFilters(const ConvShape &s) { return s.fg % 8 == 0 ? 8 : 4; }
/// Floats of the buffer of a chunk's padded input rows (on the stack).
constexpr int64_t kStemBufFloats = 16384;

/// How a convolution's input rows lie in the buffer: each row (of a
/// channel) takes rowFloats, at stride 2 its even columns in the first
/// `half` and its odd ones in the second; `chunk` output rows' input rows
/// fit at most.
struct StemRowsGeometry {
  int64_t half, rowFloats, chunk;
};

StemRowsGeometry stemGeometry(const ConvShape &s) {
  const int64_t vecCols = ceilDiv(s.ow, 16) * 16;
  StemRowsGeometry g;
  if (s.sw == 2) {
    // Tap kx of output column ox reads column ox + kx / 2 of half kx % 2;
    // the row's columns land at (pl + 1) / 2 at most from a half's start.
    g.half =
        ceilDiv(maxI(vecCols + (s.kw - 1) / 2, (s.pl + 1) / 2 + (s.w + 1) / 2),
                16) *
        16;
    g.rowFloats = 2 * g.half;
  } else {
    g.half = ceilDiv(maxI(vecCols + s.kw - 1, s.pl + s.w), 16) * 16;
    g.rowFloats = g.half;
  }
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const int64_t rows = kStemBufFloats / maxI(1, s.cg * g.rowFloats);
  g.chunk = rows >= span ? (rows - span) / s.sh + 1 : 0;
  return g;
}

} // namespace

bool stemFits(int32_t isa, const ConvShape &s) {
  const bool narrow = s.groups == 1 ? s.c <= kStemMaxChannels
                                    : s.cg > 1 && s.cg <= kStemMaxGroupWidth &&
                                          s.fg <= kStemMaxGroupWidth;
  if (isa != TCC_UK_ISA_AVX512 || !narrow || s.kh * s.kw <= 1 ||
      s.kw > kStemMaxKw || (s.sw != 1 && s.sw != 2) || s.dw != 1 ||
      s.fg % 4 != 0 || (s.groups == 1 && s.f % 8 != 0) || s.oh <= 0 ||
      s.ow <= 0 || pixelsFits(isa, s))
    return false;
  return stemGeometry(s).chunk >= 1;
}

void stemPackWeights(const ConvShape &s, const float *w, float *out) {
  const int64_t taps = s.cg * s.kh * s.kw, nf = passFilters(s);
  for (int64_t f0 = 0; f0 < s.f; f0 += nf)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t i = 0; i < nf; ++i)
        *out++ = w[(f0 + i) * taps + t];
}

#if TCC_UK_NATIVE_ISA == 2
namespace {

/// A chunk's input rows in the buffer: channel c's row r (input row
/// top + r) at (c * rows + r) * rowFloats.
struct StemChunk {
  const float *buf;
  int64_t rows;
};

/// Zeros in d[0, a) and d[b, n).
void zeroOutside(float *d, int64_t a, int64_t b, int64_t n) {
  memset(d, 0, sizeof(float) * a);
  memset(d + b, 0, sizeof(float) * (n - b));
}

/// Input rows [top, top + rows) of the cg channels from x (a group's
/// first) into buf, padded with zeros (and split by parity at stride 2).
void fillStemRows(const ConvShape &s, const StemRowsGeometry &g, const float *x,
                  int64_t top, int64_t rows, float *buf) {
  for (int64_t c = 0; c < s.cg; ++c)
    for (int64_t r = 0; r < rows; ++r) {
      float *d = buf + (c * rows + r) * g.rowFloats;
      const int64_t iy = top + r;
      if (iy < 0 || iy >= s.h) {
        memset(d, 0, sizeof(float) * g.rowFloats);
        continue;
      }
      const float *src = x + (c * s.h + iy) * s.w;
      if (s.sw == 1) {
        zeroOutside(d, s.pl, s.pl + s.w, g.rowFloats);
        memcpy(d + s.pl, src, sizeof(float) * s.w);
        continue;
      }
      // Padded column i = pl + ix lies in half i % 2 at i / 2: the even
      // half holds [(pl + 1) / 2, (pl + w + 1) / 2), the odd one
      // [pl / 2, (pl + w) / 2).
      zeroOutside(d, (s.pl + 1) / 2, (s.pl + s.w + 1) / 2, g.half);
      zeroOutside(d + g.half, s.pl / 2, (s.pl + s.w) / 2, g.half);
      float *even = s.pl % 2 ? d + g.half + (s.pl - 1) / 2 : d + s.pl / 2;
      float *odd = s.pl % 2 ? d + (s.pl + 1) / 2 : d + g.half + s.pl / 2;
      deinterleave2(src, even, odd, s.w / 2);
      if (s.w % 2)
        even[s.w / 2] = src[s.w - 1];
    }
}

/// The sums of F filters (weights w: [tap][F]), from their bias (or
/// zero), for P vectors of outputs from column ox0 of the output row whose
/// window's first input row is `row0` of the chunk.
template <int KW, int S, int P, int F>
TCC_UK_INLINE void stemTile(const ConvShape &s, const StemRowsGeometry &g,
                            const StemChunk &chunk, int64_t row0,
                            const float *w, const float *bias, int64_t ox0,
                            vf (&acc)[F][P]) {
  TCC_UK_UNROLL
  for (int i = 0; i < F; ++i) {
    const vf b = bias ? vset1(bias[i]) : vzero();
    TCC_UK_UNROLL
    for (int p = 0; p < P; ++p)
      acc[i][p] = b;
  }
  for (int64_t c = 0; c < s.cg; ++c)
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const float *row =
          chunk.buf + (c * chunk.rows + row0 + ky * s.dh) * g.rowFloats + ox0;
      const float *wt = w + (c * s.kh + ky) * KW * F;
      TCC_UK_UNROLL
      for (int kx = 0; kx < KW; ++kx) {
        const float *src = S == 1 ? row + kx : row + (kx % 2) * g.half + kx / 2;
        vf v[P];
        TCC_UK_UNROLL
        for (int p = 0; p < P; ++p)
          v[p] = vload(src + 16 * p);
        TCC_UK_UNROLL
        for (int i = 0; i < F; ++i) {
          const vf wi = vset1(wt[kx * F + i]);
          TCC_UK_UNROLL
          for (int p = 0; p < P; ++p)
            acc[i][p] = vfma(wi, v[p], acc[i][p]);
        }
      }
    }
}

/// P vectors of outputs from column ox0, F filters from f0, of
/// the output row whose window starts at row0 of the chunk, finished into
/// out (this row of plane 0; planes outPlane apart), res likewise. Plain:
/// a bias and a clamp at most (no accumulation, residual or activation),
/// without the general epilogue's tests a vector.
template <int KW, int S, int P, int F, bool Plain>
TCC_UK_INLINE void stemTileOut(const ConvCall &call, const StemRowsGeometry &g,
                               const StemChunk &chunk, int64_t row0, int64_t f0,
                               int64_t ox0, float *out, const float *res,
                               int64_t outPlane) {
  const ConvShape &s = *call.s;
  const float *bias = call.ep ? call.ep->bias : NULL;
  const bool clamp = call.e.clamp;
  const vf lo = vset1(call.e.lo), hi = vset1(call.e.hi);
  vf acc[F][P];
  stemTile<KW, S, P, F>(s, g, chunk, row0,
                        call.weight + f0 * s.cg * s.kh * s.kw,
                        bias ? bias + f0 : NULL, ox0, acc);
  // Only the last vector of a row can be short.
  const bool full = ox0 + 16 * P <= s.ow;
  const vmask m = vmaskFirst(static_cast<int>(s.ow - ox0 - 16 * (P - 1)));
  TCC_UK_UNROLL
  for (int i = 0; i < F; ++i) {
    float *o = out + (f0 + i) * outPlane + ox0;
    TCC_UK_UNROLL
    for (int p = 0; p < P; ++p) {
      const bool whole = p + 1 < P || full;
      if (!Plain) {
        finishInto(o + 16 * p, acc[i][p],
                   res ? res + (f0 + i) * outPlane + ox0 + 16 * p : NULL, whole,
                   m, call.e, vzero(), lo, hi);
        continue;
      }
      const vf r = clamp ? vclamp(acc[i][p], lo, hi) : acc[i][p];
      if (whole)
        vstore(o + 16 * p, r);
      else
        vstoreMask(o + 16 * p, r, m);
    }
  }
}

/// Filters [f0, f1) of one output row (its window starting at row0 of the
/// chunk) into out (this row of plane 0; planes outPlane apart), res
/// likewise: tiles of 3 vectors, 2 where 2 or 4 are left (7 vectors: 3,
/// 2, 2), 1 where 1 is, by F filters.
template <int KW, int S, int F, bool Plain>
void stemRow(const ConvCall &call, const StemRowsGeometry &g,
             const StemChunk &chunk, int64_t row0, float *out, const float *res,
             int64_t outPlane, int64_t f0, int64_t f1) {
  const ConvShape &s = *call.s;
  for (int64_t ox0 = 0; ox0 < s.ow;) {
    const int64_t left = ceilDiv(s.ow - ox0, 16);
    const int P = left == 1 ? 1 : left == 2 || left == 4 ? 2 : 3;
    for (int64_t f = f0; f < f1; f += F) {
      if (P == 3)
        stemTileOut<KW, S, 3, F, Plain>(call, g, chunk, row0, f, ox0, out, res,
                                        outPlane);
      else if (P == 2)
        stemTileOut<KW, S, 2, F, Plain>(call, g, chunk, row0, f, ox0, out, res,
                                        outPlane);
      else
        stemTileOut<KW, S, 1, F, Plain>(call, g, chunk, row0, f, ox0, out, res,
                                        outPlane);
    }
    ox0 += 16 * P;
  }
}

/// Output rows [oy0, oy1) of filters [f0, f1) (one group's at most) of one
/// image, reading x (the group's first input channel), into out (row oy0
/// of plane 0, planes outPlane floats apart), res (the residual) likewise,
/// a chunk of rows at a time.
template <int KW, int S>
void stemRowsOf(const ConvCall &call, const float *x, float *out,
                const float *res, int64_t outPlane, int64_t oy0, int64_t oy1,
                int64_t f0, int64_t f1) {
  const ConvShape &s = *call.s;
  const StemRowsGeometry g = stemGeometry(s);
  const bool plain = !call.e.accumulate && !res && !call.e.act;
  using RowFn =
      void (*)(const ConvCall &, const StemRowsGeometry &, const StemChunk &,
               int64_t, float *, const float *, int64_t, int64_t, int64_t);
  const RowFn row =
      passFilters(s) == 8
          ? (plain ? stemRow<KW, S, 8, true> : stemRow<KW, S, 8, false>)
          : (plain ? stemRow<KW, S, 4, true> : stemRow<KW, S, 4, false>);
  alignas(64) float buf[kStemBufFloats];
  const int64_t span = (s.kh - 1) * s.dh + 1;
  for (int64_t a = oy0; a < oy1; a += g.chunk) {
    const int64_t b = minI(oy1, a + g.chunk);
    const StemChunk chunk = {buf, (b - a - 1) * s.sh + span};
    fillStemRows(s, g, x, a * s.sh - s.pt, chunk.rows, buf);
    for (int64_t oy = a; oy < b; ++oy) {
      const int64_t at = (oy - oy0) * s.ow;
      row(call, g, chunk, (oy - a) * s.sh, out + at, res ? res + at : NULL,
          outPlane, f0, f1);
    }
  }
}

template <int... K>
void stemRowsFor(const ConvCall &call, const float *x, float *out,
                 const float *res, int64_t outPlane, int64_t oy0, int64_t oy1,
                 int64_t f0, int64_t f1, std::integer_sequence<int, K...>) {
  using Fn = void (*)(const ConvCall &, const float *, float *, const float *,
                      int64_t, int64_t, int64_t, int64_t, int64_t);
  static constexpr Fn s1[] = {stemRowsOf<K + 1, 1>...};
  static constexpr Fn s2[] = {stemRowsOf<K + 1, 2>...};
  const ConvShape &s = *call.s;
  (s.sw == 1 ? s1 : s2)[s.kw - 1](call, x, out, res, outPlane, oy0, oy1, f0,
                                  f1);
}

void stemRows(const ConvCall &call, const float *x, float *out,
              const float *res, int64_t outPlane, int64_t oy0, int64_t oy1,
              int64_t f0, int64_t f1) {
  stemRowsFor(call, x, out, res, outPlane, oy0, oy1, f0, f1,
              std::make_integer_sequence<int, kStemMaxKw>());
}

struct StemJob : ConvCall {
  int64_t bandRows, bands;
};

/// Tasks [begin, end): (image, group, band of output rows).
void runStem(void *ctx, int64_t begin, int64_t end) {
  const StemJob &job = *static_cast<const StemJob *>(ctx);
  const ConvShape &s = *job.s;
  const int64_t plane = s.oh * s.ow;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t band = t % job.bands, g = t / job.bands % s.groups;
    const int64_t img = t / job.bands / s.groups;
    const int64_t oy0 = band * job.bandRows;
    const int64_t oy1 = minI(s.oh, oy0 + job.bandRows);
    const int64_t at = img * s.f * plane + oy0 * s.ow;
    stemRows(job, job.input + (img * s.c + g * s.cg) * s.h * s.w,
             job.output + at, job.residual ? job.residual + at : NULL, plane,
             oy0, oy1, g * s.fg, (g + 1) * s.fg);
  }
}

} // namespace

void stemConv(const tcc_host_api_t *host, const ConvShape &s,
              const float *input, const float *weight, float *output,
              bool accumulate, const tcc_uk_epilogue_t *ep) {
  StemJob job = {};
  static_cast<ConvCall &>(job) =
      convCall(s, input, weight, output, accumulate, ep);
  // Bands of rows only where the images' groups are too few for two tasks
  // a thread.
  const int64_t bands =
      minI(s.oh, ceilDiv(2 * hostThreads(host), s.n * s.groups));
  job.bandRows = ceilDiv(s.oh, bands);
  job.bands = ceilDiv(s.oh, job.bandRows);
  parallelFor(host, s.n * s.groups * job.bands, 1, runStem, &job);
}

void stemConvRows(const ConvShape &s, const float *image, const float *weight,
                  float *output, int64_t outPlane, int64_t oy0, int64_t oy1,
                  const tcc_uk_epilogue_t *ep) {
  ConvShape one = s;
  one.n = 1;
  const ConvCall call = convCall(one, image, weight, output, false, ep);
  stemRows(call, image, output, NULL, outPlane, oy0, oy1, 0, s.f);
}
#else
void stemConv(const tcc_host_api_t *, const ConvShape &, const float *,
              const float *, float *, bool, const tcc_uk_epilogue_t *) {}
void stemConvRows(const ConvShape &, const float *, const float *, float *,
                  int64_t, int64_t, int64_t, const tcc_uk_epilogue_t *) {}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
