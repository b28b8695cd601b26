// depthwise.cc - direct convolution for groups of one input channel
// (depthwise, with any number of outputs per group): little arithmetic per
// byte, so no GEMM; vectors run along output rows.
//
// On AVX-512, 3x3 kernels of stride 1 or 2 read their taps straight from
// the input rows with masked vector loads (planeDirect). Otherwise a band
// of the input rows that some output rows need is copied into a
// zero-padded stack buffer, each row split by stride phase (phase q holds
// columns q, q+s, q+2s, ...), so that every tap is a plain unaligned vector
// load with no bounds checks. Planes narrower than a vector (7x7, 14x14) are
// instead computed as one long row over the padded band
// ("flat"), the padding columns included, and compacted when stored.
//
// The depthwise/pointwise pair (dwpw.cc) and the expansion block (block.cc)
// run their depthwise parts through this kernel (depthwise_internal.h).
#include "depthwise_internal.h"

#if TCC_UK_NATIVE_ISA != 0
#include <immintrin.h>
#endif

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// Floats of input-row buffers on the stack.
constexpr int64_t kBufFloats = 12 * 1024;
/// Kernel sizes up to this run the vector path.
constexpr int kMaxTaps = 64;
/// The largest square kernel with unrolled taps (3x3, 5x5 and this).
constexpr int kMaxUnrolled = 7;

struct PlaneArgs {
  const float *x;  // input plane, h x w
  const float *wt; // kh x kw taps
  float *y;        // output plane, oh x ow
  const float *res;
  float bias;
};
/// Columns [ox0, ox1) of output row oy, one element at a time, into
/// out[0:ox1-ox0] (res likewise): the rare shapes whose rows do not fit the
/// buffers (huge dilations).
void rowScalar(const ConvShape &s, const float *x, const float *wt, int64_t oy,
               int64_t ox0, int64_t ox1, float bias, const float *res,
               const DepthwiseEpi &e, float *out) {
  for (int64_t ox = ox0; ox < ox1; ++ox) {
    float acc = 0;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
      if (iy < 0 || iy >= s.h)
        continue;
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
        if (ix >= 0 && ix < s.w)
          acc += wt[ky * s.kw + kx] * x[iy * s.w + ix];
      }
    }
    float v = e.accumulate ? out[ox - ox0] + acc : acc;
    v += bias;
    if (res)
      v += res[ox - ox0];
    if (e.act)
      v = vactivate(e.act, vset1(v))[0];
    if (e.clamp) {
      v = e.lo > v ? e.lo : v;
      v = e.hi < v ? e.hi : v;
    }
    out[ox - ox0] = v;
  }
}

void planeScalar(const ConvShape &s, const PlaneArgs &p,
                 const DepthwiseEpi &e) {
  for (int64_t oy = 0; oy < s.oh; ++oy)
    rowScalar(s, p.x, p.wt, oy, 0, s.ow, p.bias,
              p.res ? p.res + oy * s.ow : NULL, e, p.y + oy * s.ow);
}

} // namespace

void deinterleave2(const float *src, float *even, float *odd, int64_t n) {
  int64_t t = 0;
#if TCC_UK_NATIVE_ISA == 2
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                            20, 22, 24, 26, 28, 30);
  const __m512i oddIdx = _mm512_add_epi32(evenIdx, _mm512_set1_epi32(1));
  for (; t + 16 <= n; t += 16) {
    const __m512 a = _mm512_loadu_ps(src + 2 * t);
    const __m512 b = _mm512_loadu_ps(src + 2 * t + 16);
    _mm512_storeu_ps(even + t, _mm512_permutex2var_ps(a, evenIdx, b));
    _mm512_storeu_ps(odd + t, _mm512_permutex2var_ps(a, oddIdx, b));
  }
#elif TCC_UK_NATIVE_ISA == 1
  for (; t + 8 <= n; t += 8) {
    const __m256 a = _mm256_loadu_ps(src + 2 * t);
    const __m256 b = _mm256_loadu_ps(src + 2 * t + 8);
    // Per 128-bit lane [a0 a2 b0 b2], then the lanes' halves in order.
    const __m256d e = _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88));
    const __m256d o = _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD));
    _mm256_storeu_ps(even + t,
                     _mm256_castpd_ps(_mm256_permute4x64_pd(e, 0xD8)));
    _mm256_storeu_ps(odd + t, _mm256_castpd_ps(_mm256_permute4x64_pd(o, 0xD8)));
  }
#endif
  for (; t < n; ++t) {
    even[t] = src[2 * t];
    odd[t] = src[2 * t + 1];
  }
}

namespace {

/// Fills the stride phases of one input row for the output columns from
/// ox0: phase q, element t is xrow[(ox0 + t)*sw + q - pl], zero outside
/// the row.
void buildRow(const ConvShape &s, const float *xrow, int64_t ox0,
              int64_t phaseLen, float *dst) {
  const int64_t base = ox0 * s.sw - s.pl; // input column of phase 0, t = 0
  if ((s.sw == 1 || s.sw == 2) && phaseLen >= kVL) {
    // Whole vectors read straight from the row, masked at its edges, the
    // last one overlapping its predecessor: no element-wise edges and no
    // masked stores (microcoded on AMD), which had cost as much as the
    // convolution itself for 28x28 and smaller planes.
    for (int64_t t = 0; t < phaseLen; t += kVL) {
      const int64_t at = minI(t, phaseLen - kVL);
      if (s.sw == 1) {
        vstore(dst + at, loadCols(xrow, s.w, base + at));
        continue;
      }
      vf even, odd;
      loadColsByParity(xrow, s.w, base + 2 * at, even, odd);
      vstore(dst + at, even);
      vstore(dst + phaseLen + at, odd);
    }
    return;
  }
  if (s.sw == 1) {
    const int64_t lo = minI(phaseLen, maxI(0, -base));
    const int64_t hi = maxI(lo, minI(phaseLen, s.w - base));
    zeroShort(dst, lo);
    copyShort(dst + lo, xrow + base + lo, hi - lo);
    zeroShort(dst + hi, phaseLen - hi);
    return;
  }
  // t in [lo, hi) reads inside the row for every phase; the edges go one
  // element at a time. (Deinterleaving straight from the input, not from a
  // padded copy, also avoids reloading data just stored, which stalls.)
  const int64_t lo = minI(phaseLen, maxI(0, ceilDiv(-base, s.sw)));
  const int64_t hi =
      maxI(lo, minI(phaseLen,
                    s.w - base < s.sw ? 0 : (s.w - base - s.sw) / s.sw + 1));
  for (int64_t q = 0; q < s.sw; ++q) {
    auto edge = [&](int64_t t) {
      const int64_t ix = base + t * s.sw + q;
      dst[q * phaseLen + t] = ix >= 0 && ix < s.w ? xrow[ix] : 0.0f;
    };
    for (int64_t t = 0; t < lo; ++t)
      edge(t);
    for (int64_t t = hi; t < phaseLen; ++t)
      edge(t);
  }
  if (s.sw == 2) {
    deinterleave2(xrow + base + 2 * lo, dst + lo, dst + phaseLen + lo, hi - lo);
    return;
  }
  for (int64_t q = 0; q < s.sw; ++q)
    for (int64_t t = lo; t < hi; ++t)
      dst[q * phaseLen + t] = xrow[base + t * s.sw + q];
}

/// out[0:n] of one output row: rows[ky] holds the phases of the
/// input row of tap row ky. K x K taps unrolled with the weights in
/// registers, or K == 0 for any size.
template <int K>
TCC_UK_INLINE void
convolveRow(const ConvShape &s, const float *const *rows, const int64_t *tapOff,
            const vf *wv, const float *wt, int64_t n, float *out,
            const float *res, const DepthwiseEpi &e, vf bias, vf lo, vf hi) {
  const int64_t kh = K ? K : s.kh, kw = K ? K : s.kw;
  for (int64_t j = 0; j < n; j += kVL) {
    vf acc = vzero();
    for (int64_t ky = 0; ky < kh; ++ky) {
      const float *r = rows[ky] + j;
      for (int64_t kx = 0; kx < kw; ++kx)
        acc = vfma(K ? wv[ky * kw + kx] : vset1(wt[ky * kw + kx]),
                   vload(r + tapOff[kx]), acc);
    }
    const bool full = j + kVL <= n;
    const vmask m = vmaskFirst(static_cast<int>(minI(kVL, n - j)));
    finishInto(out + j, acc, res ? res + j : NULL, full, m, e, bias, lo, hi);
  }
}

/// R output rows of a K x K, stride-S (rows), dilation-1 plane from the
/// band, the column vector at j: in[i] is the band row of input row i of
/// the block ((R-1)*S + K of them). Each input vector is loaded once and
/// feeds every output row whose window holds it, so R FMA chains overlap
/// (one row's single chain of K*K FMAs a vector waited on their latency).
/// Two column vectors at a time (2R chains) spilled on AVX2's registers
/// and were slower.
template <int K, int S, int R>
TCC_UK_INLINE void rowsBlockVector(const float *const *in,
                                   const int64_t *tapOff, const vf *wv,
                                   int64_t j, vf (&acc)[R]) {
  TCC_UK_UNROLL
  for (int r = 0; r < R; ++r)
    acc[r] = vzero();
  TCC_UK_UNROLL
  for (int i = 0; i < (R - 1) * S + K; ++i) {
    // Input row i's weights are loaded for it alone (opaque): merged with
    // the other rows' loads of the same weights, all K*K stayed live and
    // were spilled.
    const vf *w = opaque(wv);
    const float *row = in[i] + j;
    TCC_UK_UNROLL
    for (int kx = 0; kx < K; ++kx) {
      const vf t = vload(row + tapOff[kx]);
      TCC_UK_UNROLL
      for (int r = 0; r < R; ++r) {
        const int ky = i - r * S;
        if (ky >= 0 && ky < K)
          acc[r] = vfma(w[ky * K + kx], t, acc[r]);
      }
    }
  }
}

/// Output rows oy..oy+R-1 (out[r]: row r's first output column, res[r]
/// its residual or NULL) of n columns; in as for rowsBlockVector, whose
/// loads stay inside the band's rows (padded to whole vectors). The
/// weights and row pointers are reloaded each vector (opaque): hoisted out
/// of the column loop, their K*K vectors did not fit the registers.
template <int K, int S, int R>
void rowsBlock(const float *const *in, const int64_t *tapOff, const vf *wv,
               int64_t n, float *const *out, const float *const *res,
               const DepthwiseEpi &e, vf bias, vf lo, vf hi) {
  for (int64_t j = 0; j < n; j += kVL) {
    vf acc[R];
    rowsBlockVector<K, S, R>(opaque(in), opaque(tapOff), opaque(wv), j, acc);
    const bool full = j + kVL <= n;
    const vmask m = vmaskFirst(static_cast<int>(minI(kVL, n - j)));
    TCC_UK_UNROLL
    for (int r = 0; r < R; ++r)
      finishInto(out[r] + j, acc[r], res[r] ? res[r] + j : NULL, full, m, e,
                 bias, lo, hi);
  }
}

/// Rows [oy0, oy1) of a band whose first row holds input row oy0*S - pt
/// (rowLen floats a row), for rowsBlock's shapes: four rows at a time,
/// then the rest together.
template <int K, int S>
void bandRowsBlocked(const ConvShape &s, const PlaneArgs &p,
                     const DepthwiseEpi &e, const float *band, int64_t rowLen,
                     int64_t oy0, int64_t oy1, int64_t ox0, int64_t n,
                     const int64_t *tapOff, const vf *wv, vf bias, vf lo,
                     vf hi) {
  const float *in[3 * S + K];
  float *out[4];
  const float *res[4];
  for (int64_t oy = oy0; oy < oy1; oy += 4) {
    const int rows = static_cast<int>(minI(4, oy1 - oy));
    for (int i = 0; i < (rows - 1) * S + K; ++i)
      in[i] = band + ((oy - oy0) * S + i) * rowLen;
    for (int r = 0; r < rows; ++r) {
      out[r] = p.y + (oy + r) * s.ow + ox0;
      res[r] = p.res ? p.res + (oy + r) * s.ow + ox0 : NULL;
    }
    switch (rows) {
    case 4:
      rowsBlock<K, S, 4>(in, tapOff, wv, n, out, res, e, bias, lo, hi);
      break;
    case 3:
      rowsBlock<K, S, 3>(in, tapOff, wv, n, out, res, e, bias, lo, hi);
      break;
    case 2:
      rowsBlock<K, S, 2>(in, tapOff, wv, n, out, res, e, bias, lo, hi);
      break;
    default:
      rowsBlock<K, S, 1>(in, tapOff, wv, n, out, res, e, bias, lo, hi);
      break;
    }
  }
}

/// K x K planes (K = 0: any size) through a band of copied input rows;
/// S != 0: the rows' stride is S, the dilation 1, and several output rows
/// run together (bandRowsBlocked).
template <int K, int S>
void planeRows(const ConvShape &s, const PlaneArgs &p, const DepthwiseEpi &e,
               const DepthwisePlan &plan, const vf *wv) {
  alignas(64) float buf[kBufFloats];
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const vf lo = vset1(e.lo), hi = vset1(e.hi), bias = vset1(p.bias);
  const float *rows[kMaxTaps];
  int64_t tapOff[kMaxTaps];
  for (int64_t ox0 = 0; ox0 < s.ow; ox0 += plan.nb) {
    const int64_t nb = minI(plan.nb, s.ow - ox0);
    const int64_t phaseLen = ceilDiv(nb, kVL) * kVL + (s.kw - 1) * s.dw / s.sw;
    const int64_t rowLen = s.sw * phaseLen;
    float *band = buf;
    for (int64_t kx = 0; kx < s.kw; ++kx) {
      const int64_t off = kx * s.dw;
      tapOff[kx] = off % s.sw * phaseLen + off / s.sw;
    }
    for (int64_t oy0 = 0; oy0 < s.oh; oy0 += plan.bandOut) {
      const int64_t oy1 = minI(s.oh, oy0 + plan.bandOut);
      const int64_t rowsIn = (oy1 - 1 - oy0) * s.sh + span;
      for (int64_t r = 0; r < rowsIn; ++r) {
        const int64_t iy = oy0 * s.sh - s.pt + r;
        if (iy < 0 || iy >= s.h)
          zeroShort(band + r * rowLen, rowLen);
        else
          buildRow(s, p.x + iy * s.w, ox0, phaseLen, band + r * rowLen);
      }
      if constexpr (S != 0) {
        bandRowsBlocked<K, S>(s, p, e, band, rowLen, oy0, oy1, ox0, nb, tapOff,
                              wv, bias, lo, hi);
        continue;
      }
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        for (int64_t ky = 0; ky < s.kh; ++ky)
          rows[ky] = band + ((oy - oy0) * s.sh + ky * s.dh) * rowLen;
        convolveRow<K>(s, rows, tapOff, wv, p.wt, nb, p.y + oy * s.ow + ox0,
                       p.res ? p.res + oy * s.ow + ox0 : NULL, e, bias, lo, hi);
      }
    }
  }
}

/// Stride 1, narrow planes: the band's rows are laid out pitch = ow +
/// (kw-1)*dw apart, output (oy, ox) is flat element oy*pitch + ox, and one
/// long row of pitch * rows outputs covers them all (computing the
/// padding columns too), the taps being flat offsets ky*dh*pitch + kx*dw.
template <int K>
void planeFlat(const ConvShape &s, const PlaneArgs &p, const DepthwiseEpi &e,
               const DepthwisePlan &plan, const vf *wv) {
  alignas(64) float buf[kBufFloats];
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const int64_t pitch = s.ow + (s.kw - 1) * s.dw;
  const vf lo = vset1(e.lo), hi = vset1(e.hi), bias = vset1(p.bias);
  int64_t tapOff[kMaxTaps];
  for (int64_t ky = 0; ky < s.kh; ++ky)
    for (int64_t kx = 0; kx < s.kw; ++kx)
      tapOff[ky * s.kw + kx] = ky * s.dh * pitch + kx * s.dw;
  for (int64_t oy0 = 0; oy0 < s.oh; oy0 += plan.bandOut) {
    const int64_t oy1 = minI(s.oh, oy0 + plan.bandOut);
    const int64_t rowsIn = oy1 - 1 - oy0 + span;
    const int64_t n = (oy1 - oy0) * pitch;
    const int64_t slack = kVL + (s.kw - 1) * s.dw; // read past the rows
    float *band = buf, *sums = buf + rowsIn * pitch + slack;
    for (int64_t r = 0; r < rowsIn; ++r) {
      const int64_t iy = oy0 - s.pt + r;
      if (iy < 0 || iy >= s.h)
        zeroShort(band + r * pitch, pitch);
      else
        buildRow(s, p.x + iy * s.w, 0, pitch, band + r * pitch);
    }
    zeroShort(band + rowsIn * pitch, slack);
    const int64_t kh = K ? K : s.kh, kw = K ? K : s.kw;
    for (int64_t j = 0; j < n; j += kVL) {
      vf acc = vzero();
      for (int64_t t = 0; t < kh * kw; ++t)
        acc =
            vfma(K ? wv[t] : vset1(p.wt[t]), vload(band + j + tapOff[t]), acc);
      vstore(sums + j, acc);
    }
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      float *out = p.y + oy * s.ow;
      const float *res = p.res ? p.res + oy * s.ow : NULL;
      const float *row = sums + (oy - oy0) * pitch;
      for (int64_t j = 0; j < s.ow; j += kVL) {
        const bool full = j + kVL <= s.ow;
        const vmask m = vmaskFirst(static_cast<int>(minI(kVL, s.ow - j)));
        finishInto(out + j, vload(row + j), res ? res + j : NULL, full, m, e,
                   bias, lo, hi);
      }
    }
  }
}

#if TCC_UK_NATIVE_ISA == 2
/// Columns at, at+1, ... of an input row for one tap: a plain load inside
/// the row, masked at its edges (m: colsMask of at).
template <bool Inside>
TCC_UK_INLINE __m512 tapCols(const float *row, __mmask16 m, int64_t at) {
  return Inside ? _mm512_loadu_ps(row + at)
                : _mm512_maskz_loadu_ps(m, row + at);
}

/// Where a stride-2 plane's taps lie when each input row holds its even
/// columns, then its odd ones (ParityRows): tap kx of output column ox
/// reads element ox + d[kx] of the half at off[kx], len[kx] long.
struct ParityTaps {
  int64_t off[3], len[3], d[3];
};

ParityTaps parityTaps(const ConvShape &s) {
  ParityTaps t;
  const int64_t even = (s.w + 1) / 2;
  for (int kx = 0; kx < 3; ++kx) {
    const int64_t c = kx - s.pl; // column 2 * ox + c
    const int64_t q = c & 1;     // its parity (c may be negative)
    t.off[kx] = q ? even : 0;
    t.len[kx] = q ? s.w / 2 : even;
    t.d[kx] = (c - q) / 2;
  }
  return t;
}

/// R output rows oy0.. of a 3x3, dilation-1, stride-S (1 or 2) plane,
/// columns [ox0, ox1), straight from the input: each input row of the band
/// is loaded once a vector of columns (masked at the row's edges; for
/// stride 2, two loads split by parity in registers, or with pt, rows
/// already split by parity, a plain load a tap) and feeds every output row
/// whose window holds it, R accumulators at a time, so the FMA chains
/// overlap. Input rows outside the plane are skipped (zero pads).
/// sink(r, ox, acc, n) finishes and stores n <= 16 outputs of row oy0 + r.
template <int S, int R, bool Inside, bool Parity, typename Sink>
TCC_UK_INLINE void bandVector(const ConvShape &s, const float *x, const vf *wv,
                              const ParityTaps *pt, int64_t oy0, int64_t ox,
                              int n, Sink &sink) {
  const int64_t base = ox * S - s.pl;
  // The taps' weights by value: read through wv, every FMA reloaded its
  // weight after each store of the sink (a vector type may alias floats).
  vf w[9];
  TCC_UK_UNROLL
  for (int t = 0; t < 9; ++t)
    w[t] = wv[t];
  vf acc[R];
  TCC_UK_UNROLL
  for (int r = 0; r < R; ++r)
    acc[r] = vzero();
  // The edge masks of the row loads, the same for every input row.
  __mmask16 m0 = 0xFFFF, m1 = 0xFFFF, m2 = 0xFFFF, m3 = 0xFFFF;
  if (Parity && !Inside) {
    m0 = colsMask(pt->len[0], ox + pt->d[0]);
    m1 = colsMask(pt->len[1], ox + pt->d[1]);
    m2 = colsMask(pt->len[2], ox + pt->d[2]);
  } else if (!Inside) {
    m0 = colsMask(s.w, base);
    m1 = colsMask(s.w, S == 1 ? base + 1 : base + 16);
    m2 = colsMask(s.w, base + 2);
    m3 = colsMask(s.w, base + 18);
  }
  TCC_UK_UNROLL
  for (int i = 0; i < (R - 1) * S + 3; ++i) {
    const int64_t iy = oy0 * S - s.pt + i;
    if (iy < 0 || iy >= s.h)
      continue;
    const float *row = x + iy * s.w;
    vf t0, t1, t2;
    if (Parity) {
      t0 = tapCols<Inside>(row + pt->off[0], m0, ox + pt->d[0]);
      t1 = tapCols<Inside>(row + pt->off[1], m1, ox + pt->d[1]);
      t2 = tapCols<Inside>(row + pt->off[2], m2, ox + pt->d[2]);
    } else if (S == 1) {
      t0 = tapCols<Inside>(row, m0, base);
      t1 = tapCols<Inside>(row, m1, base + 1);
      t2 = tapCols<Inside>(row, m2, base + 2);
    } else {
      const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
                                                18, 20, 22, 24, 26, 28, 30);
      const __m512i oddIdx = _mm512_add_epi32(evenIdx, _mm512_set1_epi32(1));
      const __m512 a0 = tapCols<Inside>(row, m0, base);
      const __m512 a1 = tapCols<Inside>(row, m1, base + 16);
      t0 = _mm512_permutex2var_ps(a0, evenIdx, a1);
      t1 = _mm512_permutex2var_ps(a0, oddIdx, a1);
      t2 = _mm512_permutex2var_ps(tapCols<Inside>(row, m2, base + 2), evenIdx,
                                  tapCols<Inside>(row, m3, base + 18));
    }
    TCC_UK_UNROLL
    for (int r = 0; r < R; ++r) {
      const int ky = i - r * S;
      if (ky < 0 || ky > 2)
        continue;
      acc[r] = vfma(w[ky * 3], t0, acc[r]);
      acc[r] = vfma(w[ky * 3 + 1], t1, acc[r]);
      acc[r] = vfma(w[ky * 3 + 2], t2, acc[r]);
    }
  }
  TCC_UK_UNROLL
  for (int r = 0; r < R; ++r)
    sink(r, ox, acc[r], n);
}

/// bandVector over columns [ox0, ox1): plain loads where a vector's taps
/// all lie inside the row (or, Parity, inside their halves), masked ones
/// at its edges.
template <int S, int R, bool Parity, typename Sink>
TCC_UK_INLINE void bandDirect(const ConvShape &s, const float *x, const vf *wv,
                              const ParityTaps *pt, int64_t oy0, int64_t ox0,
                              int64_t ox1, Sink &sink) {
  // The vector at ox reads columns [ox*S - pl, ox*S - pl + 16*S + 2).
  const int64_t reach = 16 * S + 2;
  auto inside = [&](int64_t ox) {
    if (!Parity) {
      const int64_t base = ox * S - s.pl;
      return base >= 0 && base + reach <= s.w;
    }
    bool in = true;
    for (int kx = 0; kx < 3; ++kx)
      in = in && ox + pt->d[kx] >= 0 && ox + pt->d[kx] + 16 <= pt->len[kx];
    return in;
  };
  for (int64_t ox = ox0; ox < ox1; ox += 16) {
    const int n = static_cast<int>(minI(16, ox1 - ox));
    if (inside(ox))
      bandVector<S, R, true, Parity>(s, x, wv, pt, oy0, ox, n, sink);
    else
      bandVector<S, R, false, Parity>(s, x, wv, pt, oy0, ox, n, sink);
  }
}

/// Rows [oy0, oy1), columns [ox0, ox1): bands of four rows, then one band
/// of the rest.
template <int S, bool Parity, typename Sink>
void rowsDirect(const ConvShape &s, const float *x, const vf *wv,
                const ParityTaps *pt, int64_t oy0, int64_t oy1, int64_t ox0,
                int64_t ox1, Sink &sink) {
  int64_t oy = oy0;
  for (; oy + 4 <= oy1; oy += 4) {
    sink.setRow(oy);
    bandDirect<S, 4, Parity>(s, x, wv, pt, oy, ox0, ox1, sink);
  }
  sink.setRow(oy);
  switch (oy1 - oy) {
  case 3:
    bandDirect<S, 3, Parity>(s, x, wv, pt, oy, ox0, ox1, sink);
    break;
  case 2:
    bandDirect<S, 2, Parity>(s, x, wv, pt, oy, ox0, ox1, sink);
    break;
  case 1:
    bandDirect<S, 1, Parity>(s, x, wv, pt, oy, ox0, ox1, sink);
    break;
  default:
    break;
  }
}

/// Stores into an output plane, with the depthwise epilogue.
struct PlaneSink {
  const ConvShape &s;
  const PlaneArgs &p;
  const DepthwiseEpi &e;
  vf bias, lo, hi;
  int64_t oy = 0;
  void setRow(int64_t row) { oy = row; }
  __attribute__((always_inline)) void operator()(int r, int64_t ox, vf acc,
                                                 int n) {
    const int64_t at = (oy + r) * s.ow + ox;
    const bool full = n == 16;
    const vmask m = vmaskFirst(n);
    finishInto(p.y + at, acc, p.res ? p.res + at : NULL, full, m, e, bias, lo,
               hi);
  }
};

/// Whether a plane's epilogue is plain: a bias, then a clamp or none (no
/// residual, activation or accumulation). The direct kernels store those
/// branch-free (storePlain): checked at every store, the general epilogue
/// (finishInto, its activations inlined with their constants) took
/// registers and time from the FMA loops.
bool plainEpilogue(const PlaneArgs &p, const DepthwiseEpi &e) {
  return !p.res && !e.accumulate && !e.act;
}

/// The clamp's bounds of a plain epilogue, infinite where it has none
/// (max and min keep a NaN, as no clamp does).
void plainBounds(const DepthwiseEpi &e, vf &lo, vf &hi) {
  const float inf = __builtin_inff();
  lo = vset1(e.clamp ? e.lo : -inf);
  hi = vset1(e.clamp ? e.hi : inf);
}

/// Sums x stored at out with a plain epilogue (the lanes of m where not
/// full): the bias, activation Act (TCC_UK_ACT_*, known when compiled; as
/// finishInto orders them), the clamp.
template <int Act = TCC_UK_ACT_NONE>
TCC_UK_INLINE void storePlain(float *out, vf x, bool full, vmask m, vf bias,
                              vf lo, vf hi) {
  x = vadd(x, bias);
  if (Act != TCC_UK_ACT_NONE)
    x = vactivate(Act, x);
  x = vclamp(x, lo, hi);
  if (full)
    vstore(out, x);
  else
    vstoreFirst(out, x, m);
}

/// PlaneSink for plain epilogues, with activation Act between the bias and
/// the clamp: the SiLU or hard swish of a depthwise layer, checked at every
/// store in the general epilogue, ran its 3x3 planes at half the plain
/// ones' speed.
template <int Act> struct PlainPlaneSink {
  float *y;
  int64_t ow;
  vf bias, lo, hi;
  float *row = nullptr;
  void setRow(int64_t oy) { row = y + oy * ow; }
  __attribute__((always_inline)) void operator()(int r, int64_t ox, vf acc,
                                                 int n) {
    storePlain<Act>(row + r * ow + ox, acc, n == 16, vmaskFirst(n), bias, lo,
                    hi);
  }
};

/// A plane through the direct rows; pt: a stride-2 plane whose input rows
/// are split by parity (its taps there), else NULL.
template <int S, bool Parity>
void planeDirect(const ConvShape &s, const PlaneArgs &p, const DepthwiseEpi &e,
                 const vf *wv, const ParityTaps *pt) {
  const bool plainAct =
      !p.res && !e.accumulate &&
      (e.act == TCC_UK_ACT_SILU || e.act == TCC_UK_ACT_HARDSWISH);
  if (plainEpilogue(p, e) || plainAct) {
    vf lo, hi;
    plainBounds(e, lo, hi);
    const vf bias = vset1(p.bias);
    if (e.act == TCC_UK_ACT_SILU) {
      PlainPlaneSink<TCC_UK_ACT_SILU> sink = {p.y, s.ow, bias, lo, hi};
      rowsDirect<S, Parity>(s, p.x, wv, pt, 0, s.oh, 0, s.ow, sink);
    } else if (e.act == TCC_UK_ACT_HARDSWISH) {
      PlainPlaneSink<TCC_UK_ACT_HARDSWISH> sink = {p.y, s.ow, bias, lo, hi};
      rowsDirect<S, Parity>(s, p.x, wv, pt, 0, s.oh, 0, s.ow, sink);
    } else {
      PlainPlaneSink<TCC_UK_ACT_NONE> sink = {p.y, s.ow, bias, lo, hi};
      rowsDirect<S, Parity>(s, p.x, wv, pt, 0, s.oh, 0, s.ow, sink);
    }
    return;
  }
  PlaneSink sink = {s, p, e, vset1(p.bias), vset1(e.lo), vset1(e.hi)};
  rowsDirect<S, Parity>(s, p.x, wv, pt, 0, s.oh, 0, s.ow, sink);
}
#endif

void makeFlatTaps(const ConvShape &s, FlatTaps &t) {
  const int64_t n = s.oh * s.ow;
  t.vecs = ceilDiv(n, kVL);
  for (int64_t ky = 0; ky < 3; ++ky)
    for (int64_t kx = 0; kx < 3; ++kx)
      t.off[ky * 3 + kx] = (ky - s.pt) * s.w + kx - s.pl;
  for (int64_t v = 0; v < t.vecs; ++v)
    for (int64_t tap = 0; tap < 9; ++tap) {
      uint16_t m = 0;
      for (int64_t l = 0; l < kVL; ++l) {
        const int64_t q = v * kVL + l;
        const int64_t iy = q / s.ow + tap / 3 - s.pt;
        const int64_t ix = q % s.ow + tap % 3 - s.pl;
        if (q < n && iy >= 0 && iy < s.h && ix >= 0 && ix < s.w)
          m = static_cast<uint16_t>(m | (1u << l));
      }
      t.mask[v * 9 + tap] = m;
    }
}

#if TCC_UK_NATIVE_ISA == 2
/// Output vectors [v0, v0 + V) of a flat plane: V accumulators, each one
/// chain of nine FMAs in tap order.
template <int V, bool Plain>
TCC_UK_INLINE void flatVectors(const PlaneArgs &p, const DepthwiseEpi &e,
                               const FlatTaps &t, const vf *wv, int64_t v0,
                               int64_t n, vf bias, vf lo, vf hi) {
  // Two chains a vector (taps 0-4, 5-8), summed at the end: one chain of
  // nine FMAs a vector left the FMA units waiting on their latency.
  vf acc[V], acc2[V];
  TCC_UK_UNROLL
  for (int i = 0; i < V; ++i)
    acc[i] = acc2[i] = vzero();
  TCC_UK_UNROLL
  for (int tap = 0; tap < 9; ++tap)
    TCC_UK_UNROLL
  for (int i = 0; i < V; ++i) {
    const int64_t v = v0 + i;
    const __m512 x =
        _mm512_maskz_loadu_ps(static_cast<__mmask16>(t.mask[v * 9 + tap]),
                              p.x + v * kVL + t.off[tap]);
    if (tap < 5)
      acc[i] = vfma(wv[tap], x, acc[i]);
    else
      acc2[i] = vfma(wv[tap], x, acc2[i]);
  }
  TCC_UK_UNROLL
  for (int i = 0; i < V; ++i)
    acc[i] = vadd(acc[i], acc2[i]);
  TCC_UK_UNROLL
  for (int i = 0; i < V; ++i) {
    const int64_t at = (v0 + i) * kVL;
    const bool full = at + kVL <= n;
    const vmask m = vmaskFirst(static_cast<int>(minI(kVL, n - at)));
    if (Plain)
      storePlain(p.y + at, acc[i], full, m, bias, lo, hi);
    else
      finishInto(p.y + at, acc[i], p.res ? p.res + at : NULL, full, m, e, bias,
                 lo, hi);
  }
}

template <bool Plain>
void planeFlatVectors(const PlaneArgs &p, const DepthwiseEpi &e,
                      const FlatTaps &t, const vf *wv, int64_t n, vf bias,
                      vf lo, vf hi) {
  int64_t v = 0;
  for (; v + 4 <= t.vecs; v += 4)
    flatVectors<4, Plain>(p, e, t, wv, v, n, bias, lo, hi);
  switch (t.vecs - v) {
  case 3:
    flatVectors<3, Plain>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  case 2:
    flatVectors<2, Plain>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  case 1:
    flatVectors<1, Plain>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  default:
    break;
  }
}

__attribute__((noinline)) void
planeFlatDirect(const ConvShape &s, const PlaneArgs &p, const DepthwiseEpi &e,
                const vf *wv, const FlatTaps &t) {
  const int64_t n = s.oh * s.ow;
  const vf bias = vset1(p.bias);
  if (plainEpilogue(p, e)) {
    vf lo, hi;
    plainBounds(e, lo, hi);
    planeFlatVectors<true>(p, e, t, wv, n, bias, lo, hi);
    return;
  }
  planeFlatVectors<false>(p, e, t, wv, n, bias, vset1(e.lo), vset1(e.hi));
}
#endif

//===----------------------------------------------------------------------===//
// Planes as lanes
//===----------------------------------------------------------------------===//
//
// kVL planes at a time, one in each lane: their input rows are transposed
// into a zero-padded band of vectors (vector (r, c) holds pixel (r, c) of
// every plane), where each tap of each output is one whole aligned vector
// load and a plane's width costs no lanes (a 7-wide row filled 7 of 16 in
// the row paths, and 5x5 taps did not fit the registers beside a row's
// accumulators). A tap's weights are a vector as well, one per plane. The
// sums are transposed back and finished a plane row at a time. The
// transposes cost 2-4 shuffles a vector each way (AVX-512), which the
// K*K multiply-adds of a vector amortise from K = 5, or from K = 3 where
// the row paths waste lanes.

/// Vectors the lanes path's buffers (the input band and the sums) take.
constexpr int64_t kLaneBufVecs = (40 * 1024 / 4) / kVL;
/// Output columns a block of accumulators, the wider and the narrower
/// choice: beside a row of K <= 7 weights and an input vector, 8 fit in
/// AVX-512's 32 registers and 7 in AVX2's 16. A row takes the one that
/// wastes fewer columns (7 for rows of 7, 14, 28).
constexpr int kLaneColsWide = kVL == 16 ? 8 : 7;
constexpr int kLaneColsNarrow = kLaneColsWide - 1;

/// The block width for rows of `ow` outputs.
int laneCols(int64_t ow) {
  const int64_t wide = ceilDiv(ow, kLaneColsWide) * kLaneColsWide;
  const int64_t narrow = ceilDiv(ow, kLaneColsNarrow) * kLaneColsNarrow;
  return narrow < wide ? kLaneColsNarrow : kLaneColsWide;
}

/// Vectors a row of the lanes band: every column the outputs read, for
/// whole blocks of `cols` outputs.
int64_t lanePitch(const ConvShape &s, int64_t cols) {
  return (ceilDiv(s.ow, cols) * cols - 1) * s.sw + s.kw;
}

/// Input rows a band of `out` output rows reads.
int64_t laneRowsIn(const ConvShape &s, int64_t out) {
  return (out - 1) * s.sh + s.kh;
}

/// Output rows a band of the lanes path (0: none fit).
int64_t laneBand(const ConvShape &s) {
  const int64_t pitch = lanePitch(s, laneCols(s.ow));
  int64_t band = 0;
  while (band < s.oh &&
         laneRowsIn(s, band + 1) * pitch + (band + 1) * s.ow + kLaneColsWide <=
             kLaneBufVecs)
    ++band;
  return band;
}

/// Outputs r of a block: acc[r] = sum over the K x K taps of the lanes'
/// weights times the band vectors, in[ky * pitch + r * S + kx]. One tap row
/// at a time: its K weights stay in registers while each input vector is
/// loaded once for the outputs whose windows hold it.
template <int K, int S, int R>
TCC_UK_INLINE void laneBlock(const vf *in, int64_t pitch, const vf *wv,
                             vf (&acc)[R]) {
  TCC_UK_UNROLL
  for (int r = 0; r < R; ++r)
    acc[r] = vzero();
  for (int ky = 0; ky < K; ++ky) {
    const vf *row = in + ky * pitch;
    vf w[K];
    TCC_UK_UNROLL
    for (int kx = 0; kx < K; ++kx)
      w[kx] = wv[ky * K + kx];
    TCC_UK_UNROLL
    for (int j = 0; j < (R - 1) * S + K; ++j) {
      const vf x = row[j];
      TCC_UK_UNROLL
      for (int r = 0; r < R; ++r) {
        const int kx = j - r * S;
        if (kx >= 0 && kx < K)
          acc[r] = vfma(w[kx], x, acc[r]);
      }
    }
  }
}

/// The planes of one group: plane l's input, taps, output, residual and
/// bias (lanes past `lanes` repeat lane 0 and store nothing).
struct LaneGroup {
  const float *x[kVL], *wt[kVL], *res[kVL];
  float *y[kVL];
  alignas(64) float bias[kVL];
  int lanes;
};

/// finishInto's epilogue for a vector of sums without a residual or an
/// output to add to.
TCC_UK_INLINE vf finishLanes(vf x, const DepthwiseEpi &e, vf bias, vf lo,
                             vf hi) {
  x = vadd(x, bias);
  if (e.act)
    x = vactivate(e.act, x);
  if (e.clamp)
    x = vclamp(x, lo, hi);
  return x;
}

/// Input rows [iy0, iy1) (inside the plane) into band rows from `row0`,
/// columns pl.. of each: pixels in runs of kVL, flat across rows, each run
/// transposed in registers and its vectors stored where they lie (columns
/// no tap reads into `trash`).
void lanesIn(const ConvShape &s, const LaneGroup &g, int64_t iy0, int64_t iy1,
             vf *band, int64_t row0, int64_t pitch) {
  // Locals: the vector stores may alias anything, and every field read
  // after one would be reloaded.
  const int64_t w = s.w, cols = minI(w, pitch - s.pl); // columns taps read
  const int64_t end = iy1 * w;
  const float *x[kVL];
  for (int l = 0; l < kVL; ++l)
    x[l] = g.x[l];
  vf trash;
  vf *rowAt = band + row0 * pitch + s.pl; // column 0 of the current row
  int64_t ix = 0;
  for (int64_t q = iy0 * w; q < end; q += kVL) {
    const int n = static_cast<int>(minI(kVL, end - q));
    vf r[kVL];
    if (n == kVL) {
      const float *at[kVL];
      TCC_UK_UNROLL
      for (int l = 0; l < kVL; ++l)
        at[l] = x[l] + q;
      vtransposeLoad(r, at);
    } else {
      const vmask m = vmaskFirst(n);
      TCC_UK_UNROLL
      for (int l = 0; l < kVL; ++l)
        r[l] = vloadMask(x[l] + q, m);
      vtranspose(r);
    }
    if (n == kVL && ix + kVL <= minI(w, cols)) {
      // The run lies inside one row, in the columns the taps read: its
      // vectors are consecutive there.
      TCC_UK_UNROLL
      for (int j = 0; j < kVL; ++j)
        rowAt[ix + j] = r[j];
      ix += kVL;
      if (ix == w) {
        ix = 0;
        rowAt += pitch;
      }
      continue;
    }
    vf *dst[kVL];
    TCC_UK_UNROLL
    for (int j = 0; j < kVL; ++j) {
      dst[j] = j < n && ix < cols ? rowAt + ix : &trash;
      if (++ix == w) {
        ix = 0;
        rowAt += pitch;
      }
    }
    TCC_UK_UNROLL
    for (int j = 0; j < kVL; ++j)
      *dst[j] = r[j];
  }
}

/// One group's planes (all rows): bands of output rows, each computing its
/// sums into `sums` and transposing them out; the input rows two bands
/// share are moved to the top of the band rather than transposed again.
template <int K, int S, int R>
void laneGroup(const ConvShape &s, const LaneGroup &g, const DepthwiseEpi &e,
               const DepthwisePlan &plan, vf *buf) {
  const int64_t pitch = lanePitch(s, R);
  vf *band = buf, *sums = buf + laneRowsIn(s, plan.bandOut) * pitch;
  alignas(64) vf wv[K * K];
  for (int64_t t = 0; t < K * K; t += kVL) {
    vf r[kVL];
    const int n = static_cast<int>(minI(kVL, K * K - t));
    TCC_UK_UNROLL
    for (int l = 0; l < kVL; ++l)
      r[l] = vloadMask(g.wt[l] + t, vmaskFirst(n));
    vtranspose(r);
    for (int j = 0; j < n; ++j)
      wv[t + j] = r[j];
  }
  const vf lo = vset1(e.lo), hi = vset1(e.hi);
  const vf bias = vload(g.bias);
  // With a residual or an output to add to, the epilogue runs on each
  // plane's rows (where those lie); without, on the sums as they are.
  const bool perPlane = e.accumulate || g.res[0];
  const int lanes = g.lanes;
  float *y[kVL];
  for (int l = 0; l < kVL; ++l)
    y[l] = g.y[l];
  int64_t kept = 0; // band rows already holding their input rows
  for (int64_t oy0 = 0; oy0 < s.oh; oy0 += plan.bandOut) {
    const int64_t oy1 = minI(s.oh, oy0 + plan.bandOut);
    const int64_t rows = laneRowsIn(s, oy1 - oy0);
    const int64_t top = oy0 * S - s.pt; // input row of band row 0
    // Band rows [kept, rows): zero where outside the plane, and the plane's
    // padding columns.
    for (int64_t r = kept; r < rows; ++r) {
      const int64_t iy = top + r;
      vf *row = band + r * pitch;
      if (iy < 0 || iy >= s.h) {
        for (int64_t c = 0; c < pitch; ++c)
          row[c] = vzero();
        continue;
      }
      for (int64_t c = 0; c < minI(s.pl, pitch); ++c)
        row[c] = vzero();
      for (int64_t c = s.pl + s.w; c < pitch; ++c)
        row[c] = vzero();
    }
    const int64_t iy0 = maxI(0, top + kept), iy1 = minI(s.h, top + rows);
    if (iy1 > iy0)
      lanesIn(s, g, iy0, iy1, band, iy0 - top, pitch);
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const vf *in = band + (oy - oy0) * S * pitch;
      vf *out = sums + (oy - oy0) * s.ow;
      for (int64_t ox = 0; ox < s.ow; ox += R) {
        vf acc[R];
        laneBlock<K, S, R>(in + ox * S, pitch, wv, acc);
        // All R: those past the row are overwritten by the next row's
        // (or land in the slack after the last).
        TCC_UK_UNROLL
        for (int r = 0; r < R; ++r)
          out[ox + r] = acc[r];
      }
    }
    // The band's outputs, flat, kVL pixels of every plane at a time.
    const int64_t n = (oy1 - oy0) * s.ow, at0 = oy0 * s.ow;
    for (int64_t q = 0; q < n; q += kVL) {
      const int cnt = static_cast<int>(minI(kVL, n - q));
      vf r[kVL];
      TCC_UK_UNROLL
      for (int j = 0; j < kVL; ++j)
        r[j] = j < cnt ? sums[q + j] : vzero();
      const bool full = cnt == kVL;
      const vmask m = vmaskFirst(cnt);
      const int64_t at = at0 + q;
      if (!perPlane) {
        // Bias, activation and clamp a vector of every plane at a time.
        TCC_UK_UNROLL
        for (int j = 0; j < kVL; ++j)
          r[j] = finishLanes(r[j], e, bias, lo, hi);
        vtranspose(r);
        TCC_UK_UNROLL
        for (int l = 0; l < kVL; ++l) {
          if (l >= lanes)
            break;
          if (full)
            vstore(y[l] + at, r[l]);
          else
            vstoreFirst(y[l] + at, r[l], m);
        }
        continue;
      }
      vtranspose(r);
      for (int l = 0; l < lanes; ++l)
        finishInto(y[l] + at, r[l], g.res[l] ? g.res[l] + at : NULL, full, m, e,
                   vset1(g.bias[l]), lo, hi);
    }
    // Rows the next band reads too: to the top.
    const int64_t next = (oy1 - oy0) * S;
    kept = maxI(0, rows - next);
    for (int64_t i = 0; i < kept * pitch; ++i)
      band[i] = band[next * pitch + i];
  }
}

template <int K, int R>
void laneGroupK(const ConvShape &s, const LaneGroup &g, const DepthwiseEpi &e,
                const DepthwisePlan &plan, vf *buf) {
  if (s.sh == 1)
    laneGroup<K, 1, R>(s, g, e, plan, buf);
  else
    laneGroup<K, 2, R>(s, g, e, plan, buf);
}

/// laneGroup for the plan's kernel size and stride (lanesShape's).
template <int R>
void laneGroupFor(const ConvShape &s, const LaneGroup &g, const DepthwiseEpi &e,
                  const DepthwisePlan &plan, vf *buf) {
  if (s.kh == 3)
    laneGroupK<3, R>(s, g, e, plan, buf);
  else if (s.kh == 5)
    laneGroupK<5, R>(s, g, e, plan, buf);
  else
    laneGroupK<7, R>(s, g, e, plan, buf);
}

/// Whether a convolution runs in lanes mode: 5x5 and 7x7 kernels (2-5x the
/// row paths' speed), and 3x3 where the row paths have no direct loads
/// (AVX2) or where a row fills at most half a vector (7x7 outputs).
/// Groups of planes need kVL planes to fill their lanes.
bool useLanes(const ConvShape &s) {
  if (!lanesShape(s) || s.n * s.f < kVL || laneBand(s) < 1)
    return false;
  return s.kh >= 5 || !hasDirectRows(s) || 2 * s.ow <= kVL;
}

/// planeRows for a k x k kernel (0: not unrolled) of row stride `stride`
/// (0: not blocked).
void planeRowsFor(const ConvShape &s, const PlaneArgs &p, const DepthwiseEpi &e,
                  const DepthwisePlan &plan, const vf *wv, int64_t k,
                  int stride) {
  switch (k * 4 + stride) {
  case 3 * 4 + 1:
    return planeRows<3, 1>(s, p, e, plan, wv);
  case 3 * 4 + 2:
    return planeRows<3, 2>(s, p, e, plan, wv);
  case 5 * 4 + 1:
    return planeRows<5, 1>(s, p, e, plan, wv);
  case 5 * 4 + 2:
    return planeRows<5, 2>(s, p, e, plan, wv);
  case kMaxUnrolled * 4 + 1:
    return planeRows<kMaxUnrolled, 1>(s, p, e, plan, wv);
  case kMaxUnrolled * 4 + 2:
    return planeRows<kMaxUnrolled, 2>(s, p, e, plan, wv);
  default:
    break;
  }
  if (k == 3)
    return planeRows<3, 0>(s, p, e, plan, wv);
  planeRows<0, 0>(s, p, e, plan, wv);
}

DepthwisePlan makePlan(const ConvShape &s) {
  DepthwisePlan plan = {DepthwisePlan::kScalar, 0, 0};
  if (useLanes(s)) {
    plan.mode = DepthwisePlan::kLanes;
    plan.nb = laneCols(s.ow);
    plan.bandOut = laneBand(s);
    return plan;
  }
  if (runsFlatDirect(s)) {
    plan.mode = DepthwisePlan::kFlatDirect;
    return plan;
  }
  if (hasDirectRows(s)) {
    plan.mode = DepthwisePlan::kDirect;
    return plan;
  }
  if (s.kh > kMaxTaps || s.kw > kMaxTaps)
    return plan;
  const int64_t span = (s.kh - 1) * s.dh + 1;
  // Flat when the vectors of an output row would be mostly padding.
  const int64_t pitch = s.ow + (s.kw - 1) * s.dw;
  if (s.sh == 1 && s.sw == 1 && s.kh * s.kw <= kMaxTaps &&
      4 * ceilDiv(s.ow, kVL) * kVL > 5 * pitch) {
    // rows (band - 1 + span) and sums (band) of `pitch`, plus slack.
    const int64_t band =
        (kBufFloats - 2 * kVL - (s.kw - 1) * s.dw - (span - 1) * pitch) /
        (2 * pitch);
    if (band >= 1) {
      plan.mode = DepthwisePlan::kFlat;
      plan.bandOut = minI(band, s.oh);
      return plan;
    }
  }
  // Rows: the widest column block whose span rows fit, then as many output
  // rows a band as fit.
  auto rowLen = [&](int64_t nb) {
    return s.sw * (ceilDiv(nb, kVL) * kVL + (s.kw - 1) * s.dw / s.sw);
  };
  int64_t nb = ceilDiv(s.ow, kVL) * kVL;
  while (nb > kVL && span * rowLen(nb) > kBufFloats)
    nb = ceilDiv(nb / 2, kVL) * kVL;
  if (span * rowLen(nb) > kBufFloats)
    return plan;
  const int64_t rowsFit = kBufFloats / rowLen(nb);
  plan.mode = DepthwisePlan::kRows;
  plan.nb = nb;
  plan.bandOut = minI(s.oh, (rowsFit - span) / s.sh + 1);
  return plan;
}

/// The mean of the n floats at y (a finished output plane, still in this
/// core's cache): a sum a vector at a time, then across the vector.
float planeMean(const float *y, int64_t n) {
  vf acc = vzero();
  int64_t i = 0;
  for (; i + kVL <= n; i += kVL)
    acc = vadd(acc, vload(y + i));
  alignas(64) float lanes[kVL];
  vstore(lanes, acc);
  float sum = 0.0f;
  for (int l = 0; l < kVL; ++l)
    sum += lanes[l];
  for (; i < n; ++i)
    sum += y[i];
  return sum / static_cast<float>(n);
}

/// Planes [begin, end) in lanes mode, kVL at a time.
__attribute__((noinline)) void runLanePlanes(const DepthwiseJob &job,
                                             int64_t begin, int64_t end) {
  const ConvShape &s = *job.s;
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
  alignas(64) vf buf[kLaneBufVecs];
  for (int64_t g0 = begin; g0 < end; g0 += kVL) {
    LaneGroup g;
    g.lanes = static_cast<int>(minI(kVL, end - g0));
    for (int l = 0; l < kVL; ++l) {
      const int64_t plane = g0 + (l < g.lanes ? l : 0);
      const int64_t img = plane / s.f, oc = plane % s.f;
      g.x[l] = job.input + (img * s.c + oc / s.fg) * hw;
      g.wt[l] = job.weight + oc * s.kh * s.kw;
      g.y[l] = job.output + plane * ohw;
      g.res[l] =
          job.ep && job.ep->residual ? job.ep->residual + plane * ohw : NULL;
      g.bias[l] = job.ep && job.ep->bias ? job.ep->bias[oc] : 0.0f;
    }
    if (job.plan.nb == kLaneColsWide)
      laneGroupFor<kLaneColsWide>(s, g, job.e, job.plan, buf);
    else
      laneGroupFor<kLaneColsNarrow>(s, g, job.e, job.plan, buf);
    if (job.means)
      for (int l = 0; l < g.lanes; ++l)
        job.means[g0 + l] = planeMean(g.y[l], ohw);
  }
}

/// Groups [begin, end) of kVL planes of a lanes-mode DepthwiseJob.
void runDepthwiseLaneGroups(void *ctx, int64_t begin, int64_t end) {
  const DepthwiseJob &job = *static_cast<const DepthwiseJob *>(ctx);
  runLanePlanes(job, begin * kVL, minI(end * kVL, job.s->n * job.s->f));
}

} // namespace

bool depthwiseRunsLanes(const ConvShape &s) {
  return makePlan(s).mode == DepthwisePlan::kLanes;
}

void runDepthwisePlanes(void *ctx, int64_t begin, int64_t end) {
  const DepthwiseJob &job = *static_cast<const DepthwiseJob *>(ctx);
  const ConvShape &s = *job.s;
  if (job.plan.mode == DepthwisePlan::kLanes)
    return runLanePlanes(job, begin, end);
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
  // Square kernels of these sizes have unrolled taps (their weights as
  // vectors); in rows, with dilation 1 and stride 1 or 2, output rows are
  // computed several at a time.
  const bool unrolled =
      s.kh == s.kw && (s.kh == 3 || s.kh == 5 || s.kh == kMaxUnrolled);
  const int rowStride = unrolled && s.dh == 1 && s.sh <= 2 ? int(s.sh) : 0;
#if TCC_UK_NATIVE_ISA == 2
  const ParityTaps pt = job.parityRows ? parityTaps(s) : ParityTaps{};
#endif
  for (int64_t plane = begin; plane < end; ++plane) {
    const int64_t img = plane / s.f, oc = plane % s.f;
    const int64_t ic = oc / s.fg; // one input channel per group
    PlaneArgs p;
    p.x = job.input + (img * s.c + ic) * hw;
    p.wt = job.weight + oc * s.kh * s.kw;
    p.y = job.output + plane * ohw;
    p.res = job.ep && job.ep->residual ? job.ep->residual + plane * ohw : NULL;
    p.bias = job.ep && job.ep->bias ? job.ep->bias[oc] : 0.0f;
    vf wv[kMaxUnrolled * kMaxUnrolled];
    if (unrolled)
      for (int64_t i = 0; i < s.kh * s.kw; ++i)
        wv[i] = vset1(p.wt[i]);
    switch (job.plan.mode) {
    case DepthwisePlan::kFlat:
      if (s.kh == 3 && s.kw == 3)
        planeFlat<3>(s, p, job.e, job.plan, wv);
      else
        planeFlat<0>(s, p, job.e, job.plan, wv);
      break;
    case DepthwisePlan::kRows:
      planeRowsFor(s, p, job.e, job.plan, wv, unrolled ? s.kh : 0, rowStride);
      break;
    case DepthwisePlan::kScalar:
      planeScalar(s, p, job.e);
      break;
    case DepthwisePlan::kDirect:
#if TCC_UK_NATIVE_ISA == 2
      if (s.sh == 1) {
        planeDirect<1, false>(s, p, job.e, wv, NULL);
      } else if (job.parityRows) {
        planeDirect<2, true>(s, p, job.e, wv, &pt);
      } else {
        planeDirect<2, false>(s, p, job.e, wv, NULL);
      }
#endif
      break;
    case DepthwisePlan::kFlatDirect:
#if TCC_UK_NATIVE_ISA == 2
      planeFlatDirect(s, p, job.e, wv, *job.taps);
#endif
      break;
    case DepthwisePlan::kLanes:
      break; // above
    }
    if (job.means)
      job.means[plane] = planeMean(p.y, ohw);
  }
}

DepthwiseJob makeDepthwiseJob(const ConvShape &s, const float *input,
                              const float *weight, float *output,
                              bool accumulate, const tcc_uk_epilogue_t *ep,
                              FlatTaps &taps) {
  DepthwiseJob job = {&s, input, weight, output, ep, {}, makePlan(s), NULL};
  if (job.plan.mode == DepthwisePlan::kFlatDirect) {
    makeFlatTaps(s, taps);
    job.taps = &taps;
  }
  job.e = epilogueOf(ep, accumulate);
  return job;
}

void depthwiseConv(const tcc_host_api_t *host, const ConvShape &s,
                   const float *input, const float *weight, float *output,
                   bool accumulate, const tcc_uk_epilogue_t *ep,
                   bool parityRows, float *means) {
  FlatTaps taps;
  DepthwiseJob job =
      makeDepthwiseJob(s, input, weight, output, accumulate, ep, taps);
  job.means = means;
  // Asked only where readsParityRows, the shapes makePlan runs direct.
  job.parityRows = parityRows;
  // A depthwise multiply-add costs about 16 of the GEMM's (it streams its
  // input rather than reusing registers), so a chunk of planes is worth
  // handing to another thread at a sixteenth of the GEMM's minimum: with
  // the GEMM's, 7x7 and 14x14 planes ran on one thread.
  const int64_t planeWork = maxI(1, s.oh * s.ow * s.kh * s.kw);
  if (job.plan.mode == DepthwisePlan::kLanes) {
    parallelFor(host, ceilDiv(s.n * s.f, kVL),
                maxI(1, kMinTaskWork / 16 / (planeWork * kVL)),
                runDepthwiseLaneGroups, &job);
    return;
  }
  parallelFor(host, s.n * s.f, maxI(1, kMinTaskWork / 16 / planeWork),
              runDepthwisePlanes, &job);
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
