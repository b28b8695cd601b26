// depthwise.cc - direct convolution for groups of one input channel
// (depthwise, with any number of outputs per group): little arithmetic per
// byte, so no GEMM; vectors run along output rows.
//
// On AVX-512, 3x3 kernels of stride 1 or 2 read their taps straight from
// the input rows with masked vector loads (planeDirect). Otherwise a band
// of the input rows that some output rows need is copied into a
// zero-padded stack buffer, each row split by stride phase (phase q holds
// columns q, q+s, q+2s, ...), so that every tap is a plain unaligned vector
// load with no bounds checks. Planes narrower than a vector (7x7, 14x14 in
// mobilenet) are instead computed as one long row over the padded band
// ("flat"), the padding columns included, and compacted when stored.
#include "simd.h"

#include <sched.h>
#include <stdlib.h>

#include <atomic>

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

struct PlaneArgs {
  const float *x;  // input plane, h x w
  const float *wt; // kh x kw taps
  float *y;        // output plane, oh x ow
  const float *res;
  float bias;
};

struct Epi {
  bool accumulate, clamp;
  float lo, hi;
};

/// How a convolution's planes are cut to fit the buffer.
struct Plan {
  enum Mode { kScalar, kRows, kFlat, kDirect, kFlatDirect } mode;
  int64_t nb;      // output columns per block (rows mode)
  int64_t bandOut; // output rows per band
};

/// Columns [ox0, ox1) of output row oy, one element at a time, into
/// out[0:ox1-ox0] (res likewise): the rare shapes whose rows do not fit the
/// buffers (huge dilations), and the depthwise/pointwise pair's fallback.
void rowScalar(const ConvShape &s, const float *x, const float *wt,
               int64_t oy, int64_t ox0, int64_t ox1, float bias,
               const float *res, const Epi &e, float *out) {
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
    if (e.clamp) {
      v = e.lo > v ? e.lo : v;
      v = e.hi < v ? e.hi : v;
    }
    out[ox - ox0] = v;
  }
}

void planeScalar(const ConvShape &s, const PlaneArgs &p, const Epi &e) {
  for (int64_t oy = 0; oy < s.oh; ++oy)
    rowScalar(s, p.x, p.wt, oy, 0, s.ow, p.bias,
              p.res ? p.res + oy * s.ow : NULL, e, p.y + oy * s.ow);
}

/// even[t] = src[2t], odd[t] = src[2t+1] for t < n.
void deinterleave2(const float *src, float *even, float *odd, int64_t n) {
  int64_t t = 0;
#if TCC_UK_NATIVE_ISA == 2
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
                                            18, 20, 22, 24, 26, 28, 30);
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
    _mm256_storeu_ps(even + t, _mm256_castpd_ps(_mm256_permute4x64_pd(e, 0xD8)));
    _mm256_storeu_ps(odd + t, _mm256_castpd_ps(_mm256_permute4x64_pd(o, 0xD8)));
  }
#endif
  for (; t < n; ++t) {
    even[t] = src[2 * t];
    odd[t] = src[2 * t + 1];
  }
}

/// Fills the stride phases of one input row for the output columns from
/// ox0: phase q, element t is xrow[(ox0 + t)*sw + q - pl], zero outside
/// the row.
void buildRow(const ConvShape &s, const float *xrow, int64_t ox0,
              int64_t phaseLen, float *dst) {
  const int64_t base = ox0 * s.sw - s.pl; // input column of phase 0, t = 0
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
      maxI(lo, minI(phaseLen, s.w - base < s.sw
                                  ? 0
                                  : (s.w - base - s.sw) / s.sw + 1));
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
    deinterleave2(xrow + base + 2 * lo, dst + lo, dst + phaseLen + lo,
                  hi - lo);
    return;
  }
  for (int64_t q = 0; q < s.sw; ++q)
    for (int64_t t = lo; t < hi; ++t)
      dst[q * phaseLen + t] = xrow[base + t * s.sw + q];
}

/// Output vector x finished with the epilogue and stored at out (the lanes
/// of m where it is not full).
TCC_UK_INLINE void finishInto(float *out, vf x, const float *res, bool full,
                              vmask m, const Epi &e, vf bias, vf lo, vf hi) {
  auto load = [&](const float *q) {
    return full ? vload(q) : vloadMask(q, m);
  };
  if (e.accumulate)
    x = vadd(load(out), x);
  x = vadd(x, bias);
  if (res)
    x = vadd(x, load(res));
  if (e.clamp)
    x = vclamp(x, lo, hi);
  if (full)
    vstore(out, x);
  else
    vstoreMask(out, x, m);
}

/// out[0:n] of one output row: rows[ky] holds the phases of the
/// input row of tap row ky. K x K taps unrolled with the weights in
/// registers, or K == 0 for any size.
template <int K>
TCC_UK_INLINE void convolveRow(const ConvShape &s, const float *const *rows,
                               const int64_t *tapOff, const vf *wv,
                               const float *wt, int64_t n, float *out,
                               const float *res, const Epi &e, vf bias, vf lo,
                               vf hi) {
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

template <int K>
void planeRows(const ConvShape &s, const PlaneArgs &p, const Epi &e,
               const Plan &plan, const vf *wv) {
  alignas(64) float buf[kBufFloats];
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const vf lo = vset1(e.lo), hi = vset1(e.hi), bias = vset1(p.bias);
  const float *rows[kMaxTaps];
  int64_t tapOff[kMaxTaps];
  for (int64_t ox0 = 0; ox0 < s.ow; ox0 += plan.nb) {
    const int64_t nb = minI(plan.nb, s.ow - ox0);
    const int64_t phaseLen =
        ceilDiv(nb, kVL) * kVL + (s.kw - 1) * s.dw / s.sw;
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
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        for (int64_t ky = 0; ky < s.kh; ++ky)
          rows[ky] = band + ((oy - oy0) * s.sh + ky * s.dh) * rowLen;
        convolveRow<K>(s, rows, tapOff, wv, p.wt, nb, p.y + oy * s.ow + ox0,
                       p.res ? p.res + oy * s.ow + ox0 : NULL, e, bias, lo,
                       hi);
      }
    }
  }
}

/// Stride 1, narrow planes: the band's rows are laid out pitch = ow +
/// (kw-1)*dw apart, output (oy, ox) is flat element oy*pitch + ox, and one
/// long row of pitch * rows outputs covers them all (computing the
/// padding columns too), the taps being flat offsets ky*dh*pitch + kx*dw.
template <int K>
void planeFlat(const ConvShape &s, const PlaneArgs &p, const Epi &e,
               const Plan &plan, const vf *wv) {
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
        acc = vfma(K ? wv[t] : vset1(p.wt[t]), vload(band + j + tapOff[t]),
                   acc);
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

/// R output rows oy0.. of a 3x3, dilation-1, stride-S (1 or 2) plane,
/// columns [ox0, ox1), straight from the input: each input row of the band
/// is loaded once a vector of columns (masked at the row's edges; for
/// stride 2, two loads split by parity in registers) and feeds every
/// output row whose window holds it, R accumulators at a time, so the FMA
/// chains overlap. Input rows outside the plane are skipped (zero pads).
/// sink(r, ox, acc, n) finishes and stores n <= 16 outputs of row oy0 + r.
template <int S, int R, bool Inside, typename Sink>
TCC_UK_INLINE void bandVector(const ConvShape &s, const float *x,
                              const vf *wv, int64_t oy0, int64_t ox,
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
  if (!Inside) {
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
    if (S == 1) {
      t0 = tapCols<Inside>(row, m0, base);
      t1 = tapCols<Inside>(row, m1, base + 1);
      t2 = tapCols<Inside>(row, m2, base + 2);
    } else {
      const __m512i evenIdx = _mm512_setr_epi32(
          0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      const __m512i oddIdx = _mm512_add_epi32(evenIdx, _mm512_set1_epi32(1));
      const __m512 a0 = tapCols<Inside>(row, m0, base);
      const __m512 a1 = tapCols<Inside>(row, m1, base + 16);
      t0 = _mm512_permutex2var_ps(a0, evenIdx, a1);
      t1 = _mm512_permutex2var_ps(a0, oddIdx, a1);
      t2 = _mm512_permutex2var_ps(tapCols<Inside>(row, m2, base + 2),
                                  evenIdx,
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
/// all lie inside the row, masked ones at its edges.
template <int S, int R, typename Sink>
TCC_UK_INLINE void bandDirect(const ConvShape &s, const float *x,
                              const vf *wv, int64_t oy0, int64_t ox0,
                              int64_t ox1, Sink &sink) {
  // The vector at ox reads columns [ox*S - pl, ox*S - pl + 16*S + 2).
  const int64_t reach = 16 * S + 2;
  for (int64_t ox = ox0; ox < ox1; ox += 16) {
    const int n = static_cast<int>(minI(16, ox1 - ox));
    const int64_t base = ox * S - s.pl;
    if (base >= 0 && base + reach <= s.w)
      bandVector<S, R, true>(s, x, wv, oy0, ox, n, sink);
    else
      bandVector<S, R, false>(s, x, wv, oy0, ox, n, sink);
  }
}

/// Rows [oy0, oy1), columns [ox0, ox1): bands of four rows, then one band
/// of the rest.
template <int S, typename Sink>
void rowsDirect(const ConvShape &s, const float *x, const vf *wv,
                int64_t oy0, int64_t oy1, int64_t ox0, int64_t ox1,
                Sink &sink) {
  int64_t oy = oy0;
  for (; oy + 4 <= oy1; oy += 4) {
    sink.setRow(oy);
    bandDirect<S, 4>(s, x, wv, oy, ox0, ox1, sink);
  }
  sink.setRow(oy);
  switch (oy1 - oy) {
  case 3:
    bandDirect<S, 3>(s, x, wv, oy, ox0, ox1, sink);
    break;
  case 2:
    bandDirect<S, 2>(s, x, wv, oy, ox0, ox1, sink);
    break;
  case 1:
    bandDirect<S, 1>(s, x, wv, oy, ox0, ox1, sink);
    break;
  default:
    break;
  }
}

/// Stores into an output plane, with the depthwise epilogue.
struct PlaneSink {
  const ConvShape &s;
  const PlaneArgs &p;
  const Epi &e;
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

template <int S>
void planeDirect(const ConvShape &s, const PlaneArgs &p, const Epi &e,
                 const vf *wv) {
  PlaneSink sink = {s, p, e, vset1(p.bias), vset1(e.lo), vset1(e.hi)};
  rowsDirect<S>(s, p.x, wv, 0, s.oh, 0, s.ow, sink);
}
#endif

/// Whether the kernels of `isa` have rowDirect for this shape.
bool hasDirectRows(int32_t isa, const ConvShape &s) {
  return isa == TCC_UK_ISA_AVX512 && s.kh == 3 && s.kw == 3 && s.dh == 1 &&
         s.dw == 1 && s.sh == s.sw && (s.sh == 1 || s.sh == 2);
}
bool hasDirectRows(const ConvShape &s) {
  return hasDirectRows(TCC_UK_NATIVE_ISA, s);
}

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
/// of the input, rows at most half a vector wide (mobilenet_v2's 7x7
/// layers). Row by row, a 7-wide row filled 7 of a vector's 16 lanes and
/// paid for its edge masks and band bookkeeping (about 160 cycles a 7x7
/// plane); flat, the plane is four vectors of nine masked loads and FMAs
/// with the masks worked out once a call: those pairs 7-10% faster in the
/// model. Flat 14x14 and 28x28 planes (rows of 14 and 28, 2 and 4 lanes
/// idle a row) were 1-5% and 10-12% slower than their rows: they lose the
/// rows' reuse of each loaded input row by four output rows.
bool runsFlatDirect(int32_t isa, const ConvShape &s) {
  const int64_t vl = tilesFor(isa).vl;
  return hasDirectRows(isa, s) && s.sh == 1 && s.oh == s.h && s.ow == s.w &&
         2 * s.ow <= vl && ceilDiv(s.oh * s.ow, vl) <= kFlatVecs;
}
bool runsFlatDirect(const ConvShape &s) {
  return runsFlatDirect(TCC_UK_NATIVE_ISA, s);
}

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
template <int V>
TCC_UK_INLINE void flatVectors(const PlaneArgs &p, const Epi &e,
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
      const __m512 x = _mm512_maskz_loadu_ps(
          static_cast<__mmask16>(t.mask[v * 9 + tap]),
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
    finishInto(p.y + at, acc[i], p.res ? p.res + at : NULL, full, m, e, bias,
               lo, hi);
  }
}

__attribute__((noinline)) void planeFlatDirect(const ConvShape &s,
                                               const PlaneArgs &p,
                                               const Epi &e, const vf *wv,
                                               const FlatTaps &t) {
  const int64_t n = s.oh * s.ow;
  const vf bias = vset1(p.bias), lo = vset1(e.lo), hi = vset1(e.hi);
  int64_t v = 0;
  for (; v + 4 <= t.vecs; v += 4)
    flatVectors<4>(p, e, t, wv, v, n, bias, lo, hi);
  switch (t.vecs - v) {
  case 3:
    flatVectors<3>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  case 2:
    flatVectors<2>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  case 1:
    flatVectors<1>(p, e, t, wv, v, n, bias, lo, hi);
    break;
  default:
    break;
  }
}
#endif

Plan makePlan(const ConvShape &s) {
  Plan plan = {Plan::kScalar, 0, 0};
  if (runsFlatDirect(s)) {
    plan.mode = Plan::kFlatDirect;
    return plan;
  }
  if (hasDirectRows(s)) {
    plan.mode = Plan::kDirect;
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
    const int64_t band = (kBufFloats - 2 * kVL - (s.kw - 1) * s.dw -
                          (span - 1) * pitch) /
                         (2 * pitch);
    if (band >= 1) {
      plan.mode = Plan::kFlat;
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
  plan.mode = Plan::kRows;
  plan.nb = nb;
  plan.bandOut = minI(s.oh, (rowsFit - span) / s.sh + 1);
  return plan;
}

struct Job {
  const ConvShape *s;
  const float *input, *weight;
  float *output;
  const tcc_uk_epilogue_t *ep;
  Epi e;
  Plan plan;
  const FlatTaps *taps; // kFlatDirect
};

void runPlanes(void *ctx, int64_t begin, int64_t end) {
  const Job &job = *static_cast<const Job *>(ctx);
  const ConvShape &s = *job.s;
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
  const bool unrolled = s.kh == 3 && s.kw == 3;
  for (int64_t plane = begin; plane < end; ++plane) {
    const int64_t img = plane / s.f, oc = plane % s.f;
    const int64_t ic = oc / s.fg; // one input channel per group
    PlaneArgs p;
    p.x = job.input + (img * s.c + ic) * hw;
    p.wt = job.weight + oc * s.kh * s.kw;
    p.y = job.output + plane * ohw;
    p.res = job.ep && job.ep->residual ? job.ep->residual + plane * ohw : NULL;
    p.bias = job.ep && job.ep->bias ? job.ep->bias[oc] : 0.0f;
    vf wv[9];
    if (unrolled)
      for (int i = 0; i < 9; ++i)
        wv[i] = vset1(p.wt[i]);
    switch (job.plan.mode) {
    case Plan::kFlat:
      if (unrolled)
        planeFlat<3>(s, p, job.e, job.plan, wv);
      else
        planeFlat<0>(s, p, job.e, job.plan, wv);
      break;
    case Plan::kRows:
      if (unrolled)
        planeRows<3>(s, p, job.e, job.plan, wv);
      else
        planeRows<0>(s, p, job.e, job.plan, wv);
      break;
    case Plan::kScalar:
      planeScalar(s, p, job.e);
      break;
    case Plan::kDirect:
#if TCC_UK_NATIVE_ISA == 2
      if (s.sh == 1)
        planeDirect<1>(s, p, job.e, wv);
      else
        planeDirect<2>(s, p, job.e, wv);
#endif
      break;
    case Plan::kFlatDirect:
#if TCC_UK_NATIVE_ISA == 2
      planeFlatDirect(s, p, job.e, wv, *job.taps);
#endif
      break;
    }
  }
}

} // namespace

namespace {
/// The planes of `s` as runPlanes takes them; `taps` holds the flat
/// path's loads when it runs flat.
Job depthwiseJob(const ConvShape &s, const float *input, const float *weight,
                 float *output, bool accumulate, const tcc_uk_epilogue_t *ep,
                 FlatTaps &taps) {
  Job job = {&s, input, weight, output, ep, {}, makePlan(s), NULL};
  if (job.plan.mode == Plan::kFlatDirect) {
    makeFlatTaps(s, taps);
    job.taps = &taps;
  }
  job.e.accumulate = accumulate;
  job.e.clamp = ep && ep->has_clamp;
  job.e.lo = ep ? ep->clamp_min : 0;
  job.e.hi = ep ? ep->clamp_max : 0;
  return job;
}
} // namespace

void depthwiseConv(const tcc_host_api_t *host, const ConvShape &s,
                   const float *input, const float *weight, float *output,
                   bool accumulate, const tcc_uk_epilogue_t *ep) {
  FlatTaps taps;
  Job job = depthwiseJob(s, input, weight, output, accumulate, ep, taps);
  // A depthwise multiply-add costs about 16 of the GEMM's (it streams its
  // input rather than reusing registers), so a chunk of planes is worth
  // handing to another thread at a sixteenth of the GEMM's minimum: with
  // the GEMM's, the 7x7 and 14x14 layers of mobilenet ran on one thread.
  const int64_t planeWork = maxI(1, s.oh * s.ow * s.kh * s.kw);
  parallelFor(host, s.n * s.f, maxI(1, kMinTaskWork / 16 / planeWork),
              runPlanes, &job);
}

//===----------------------------------------------------------------------===//
// Depthwise then pointwise
//===----------------------------------------------------------------------===//

namespace {

/// The depthwise convolution of a pair, checked.
bool resolvePair(const tcc_uk_dwpw_params_t *p, ConvShape &s) {
  return p && p->f > 0 && resolveConv(&p->dw, s) && s.groups == s.c &&
         s.f == s.c;
}

/// The pointwise GEMM of a pair of one image: f x (oh*ow) = weights (f x c)
/// times the depthwise output `mid` (c x oh*ow, row-major).
GemmArgs pairGemm(const tcc_uk_dwpw_params_t *p, const ConvShape &s,
                  const float *pwWeight, const MatrixB *mid) {
  GemmArgs ga = {};
  ga.m = p->f;
  ga.n = s.oh * s.ow;
  ga.k = s.c;
  ga.packedA = (p->flags & TCC_UK_PACKED_A) != 0;
  ga.a = pwWeight;
  ga.ars = s.c;
  ga.acs = 1;
  ga.packB = packBMatrix;
  ga.bSrc = mid;
  ga.alwaysDirectB = true;
  return ga;
}

/// Floats of the scratch that hold one image's depthwise output, rounded
/// up to 64 bytes; the GEMM's scratch follows.
int64_t pairMidFloats(const ConvShape &s) {
  return ceilDiv(s.c * s.oh * s.ow, 16) * 16;
}

/// Partial products of a pair that splits k take at most this many bytes.
constexpr int64_t kMaxPartialBytes = int64_t(1) << 20;

/// Floats between the two partial products of an m x n GEMM split in k
/// (rounded up to 64 bytes).
int64_t partialFloats(int64_t m, int64_t n) { return ceilDiv(m * n, 16) * 16; }

/// Whether a pair's GEMM runs as two halves of k, one a task, each right
/// after the depthwise planes of its half (see KSplitJob): when its output
/// (two partials, summed after) is small next to the depthwise output
/// (3f <= c: every pair of mobilenet_v2 but the first, whose 16 x 12544
/// partials cost more than they saved), and its B is read in place,
/// ragged panel included.
bool pairSplitsK(int32_t isa, const tcc_uk_dwpw_params_t *p,
                 const ConvShape &s) {
  const int64_t n = s.oh * s.ow;
  return isa == TCC_UK_ISA_AVX512 && hasDirectRows(isa, s) && s.c >= 2 &&
         n >= tilesFor(isa).nr && 3 * p->f <= s.c &&
         2 * p->f * n * static_cast<int64_t>(sizeof(float)) <=
             kMaxPartialBytes &&
         gemmScratchBytes(isa, (p->flags & TCC_UK_PACKED_A) | kAlwaysDirectB,
                          p->f, n, s.c) == 0;
}

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
/// fixed halves; with one slower (this VM's two CPUs do not always run at
/// one speed) the other takes the end of its depthwise planes instead of
/// waiting for them, and a task that never starts leaves nothing undone.
/// A part's GEMM stays one piece: split into chunks of rows that the
/// other task could take, each chunk streamed all of the half's depthwise
/// output again (mobilenet_v2's 56x56 and 28x28 pairs 4-8% slower). The
/// halves and the chunks are fixed by the shape, not by the threads or
/// the timing, so neither are the bits.
constexpr int64_t kKSplitDwChunks = 4;  // of each part's planes
constexpr int64_t kKSplitSumChunks = 8; // of the output's rows, at most

struct KSplitJob {
  const ConvShape *one;
  const float *image, *dwWeight;
  const tcc_uk_epilogue_t *dwEp;
  float *mid, *partial;
  const GemmArgs *g; // the whole GEMM: A, m, n, k, output and epilogue
  // Each half's depthwise planes, as runPlanes takes them.
  ConvShape half[2];
  tcc_uk_epilogue_t halfEp[2];
  FlatTaps taps;
  Job dw[2];
  int64_t sumRows, sumChunks;
  // Per part: the next depthwise chunk to claim, those done, whether its
  // GEMM is claimed; over both: GEMMs done; the next sum chunk.
  std::atomic<int64_t> dwNext[2], dwDone[2], gemmClaimed[2], gemmDone,
      sumNext;
};

/// Planes [k0, k1) of part q (the second takes the odd one).
void kSplitHalf(const ConvShape &s, int64_t q, int64_t &k0, int64_t &k1) {
  const int64_t split = s.c / 2;
  k0 = q ? split : 0;
  k1 = q ? s.c : split;
}

/// Spins until `v` reaches `target` (another task finishing a piece it has
/// claimed), yielding the CPU now and then in case that task's thread is
/// not running.
void waitUntil(const std::atomic<int64_t> &v, int64_t target) {
  for (int64_t spins = 0; v.load(std::memory_order_acquire) < target;
       ++spins) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (spins % 4096 == 4095)
      sched_yield();
  }
}

/// What is left to claim of part q: depthwise chunks, then its GEMM.
void runKSplitPart(KSplitJob &job, int64_t q) {
  const ConvShape &s = *job.one;
  const GemmArgs &g = *job.g;
  const int64_t planes = job.half[q].c;
  for (;;) {
    const int64_t i = job.dwNext[q].fetch_add(1, std::memory_order_relaxed);
    if (i >= kKSplitDwChunks)
      break;
    const int64_t p0 = i * planes / kKSplitDwChunks;
    const int64_t p1 = (i + 1) * planes / kKSplitDwChunks;
    if (p1 > p0)
      runPlanes(&job.dw[q], p0, p1);
    job.dwDone[q].fetch_add(1, std::memory_order_release);
  }
  if (job.gemmClaimed[q].exchange(1, std::memory_order_relaxed))
    return;
  waitUntil(job.dwDone[q], kKSplitDwChunks);
  int64_t k0, k1;
  kSplitHalf(s, q, k0, k1);
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
  Epi e = {};
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
  for (int q = 0; q < 2; ++q) {
    int64_t k0, k1;
    kSplitHalf(s, q, k0, k1);
    ConvShape &half = job.half[q];
    half = s;
    half.c = half.f = half.groups = k1 - k0;
    job.halfEp[q] = *job.dwEp;
    if (job.halfEp[q].bias)
      job.halfEp[q].bias += k0;
    // The halves' planes differ only in their number, so the second takes
    // the first's plan and flat loads (worked out once a call).
    if (q == 0) {
      job.dw[0] = depthwiseJob(half, job.image, job.dwWeight, job.mid, false,
                               &job.halfEp[0], job.taps);
    } else {
      job.dw[1] = job.dw[0];
      job.dw[1].s = &half;
      job.dw[1].input = job.image + k0 * hw;
      job.dw[1].weight = job.dwWeight + k0 * 9;
      job.dw[1].output = job.mid + k0 * ohw;
      job.dw[1].ep = &job.halfEp[1];
    }
    job.dwNext[q].store(0, std::memory_order_relaxed);
    job.dwDone[q].store(0, std::memory_order_relaxed);
    job.gemmClaimed[q].store(0, std::memory_order_relaxed);
  }
  job.sumRows = ceilDiv(job.g->m, kKSplitSumChunks);
  job.sumChunks = ceilDiv(job.g->m, job.sumRows);
  job.gemmDone.store(0, std::memory_order_relaxed);
  job.sumNext.store(0, std::memory_order_relaxed);
}

/// The depthwise part's epilogue of a pair: its bias and clamp.
tcc_uk_epilogue_t depthwiseEpilogue(const tcc_uk_dwpw_params_t &p) {
  tcc_uk_epilogue_t e = {};
  e.bias = p.dw_bias;
  e.has_clamp = p.dw_has_clamp;
  e.clamp_min = p.dw_clamp_min;
  e.clamp_max = p.dw_clamp_max;
  return e;
}

/// The pointwise epilogue for the image whose output starts at element
/// `outOffset` (ohw elements a channel): bias per row, residual there.
tcc_uk_epilogue_t imageEpilogue(const tcc_uk_epilogue_t &epilogue,
                                int64_t outOffset, int64_t ohw) {
  tcc_uk_epilogue_t e = epilogue;
  e.bias_per_row = 1;
  e.residual = epilogue.residual ? epilogue.residual + outOffset : NULL;
  e.ldr = ohw;
  return e;
}

//===----------------------------------------------------------------------===//
// Expansion, depthwise and pointwise
//===----------------------------------------------------------------------===//

/// Whether every output row's window of `s` holds an input row (pads
/// smaller than the window).
bool padsInsideWindow(const ConvShape &s) {
  const int64_t span = (s.kh - 1) * s.dh + 1;
  return s.pt < span && s.pb < span;
}

/// A block's depthwise convolution `s` (over x) and first convolution
/// `es`, checked: one group, x's shape as its output, not one that
/// tcc_uk_conv2d_nchw runs as Winograd (its packed weights are
/// transformed), and every band of rows reads some input rows.
bool resolveBlock(const tcc_uk_block_params_t *p, ConvShape &s,
                  ConvShape &es) {
  return p && resolvePair(&p->pair, s) && resolveConv(&p->exp, es) &&
         es.groups == 1 && es.f == s.c && es.n == s.n && es.oh == s.h &&
         es.ow == s.w && !winogradFits(es) && padsInsideWindow(s) &&
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
/// the others take the end of when they are done first: with two threads,
/// one of which ran at two thirds of the other's speed (a test stretching
/// its bands), the blocks of mobilenet_v2 took 1.2-1.4x their time with
/// both at full speed, in place of 1.5x with a fixed share of rows a part.
/// The few more rows computed twice (a band boundary each) cost nothing
/// measurable: the model 0.8% faster in turn with both threads free.
constexpr int64_t kBlockBandsPerPart = 4;
/// A first convolution's output of one image smaller than this stays in
/// the cores' caches from one call to the next, so the block is not worth
/// its bands' shorter GEMMs and recomputed rows. In mobilenet_v2
/// (tcc-run --compare, 400 pairs in both orders): the 56x56 expansions
/// (1.8 MB) as blocks 0.1-0.5% faster than apart, the blocks at 28x28
/// (0.6 MB) 1.0-1.4% slower; the stem's 1.6 MB block 1.3% faster than
/// apart. (While the parts claimed bands from one shared counter, the
/// 56x56 blocks had been 1.2-1.6% slower than apart: their output rows
/// alternated between the cores, and the GEMM after a block, which splits
/// its pixels in two runs, read half of them from the other core.)
constexpr int64_t kBlockMinBytes = int64_t(1) << 20;

/// Where a part's buffers lie in the scratch and how large a band is.
struct BlockGeometry {
  int64_t band;      // output rows of a band at most
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

BlockGeometry blockGeometry(int32_t isa, const tcc_uk_block_params_t *p,
                            const ConvShape &s, const ConvShape &es) {
  const int64_t e = s.c, f4 = static_cast<int64_t>(sizeof(float));
  const int64_t span = (s.kh - 1) * s.dh + 1;
  // Floats of the first convolution's packed B a row of x takes (its
  // im2col; none for a 1x1, read in place).
  const int64_t packedPerRow = isPointwise(es) ? 0 : es.kdim * s.w;
  // A band of r rows reads (r - 1) * sh + span rows of x.
  const int64_t perRow = f4 * (e * (s.sh * s.w + s.ow) + s.sh * packedPerRow);
  const int64_t fixed =
      f4 * maxI(0, span - s.sh) * (e * s.w + packedPerRow);
  BlockGeometry g;
  // A plane the depthwise kernel runs flat (its FMA order differs) is one
  // band, so that it runs flat here too.
  g.band = runsFlatDirect(isa, s)
               ? s.oh
               : maxI(1, minI(s.oh, (kBlockBandBytes - fixed) / perRow));
  const int64_t rowsIn = minI(s.h, (g.band - 1) * s.sh + span);
  g.expFloats = ceilDiv(e * rowsIn * s.w, 16) * 16;
  g.midFloats = ceilDiv(e * g.band * s.ow, 16) * 16;
  const uint32_t expPacked = p->exp.flags & TCC_UK_PACKED_A;
  const int64_t expGemm =
      isPointwise(es) ? raggedPanelBound(isa, expPacked, e, es.kdim)
                      : packedBScratchBytes(isa, es.kdim, rowsIn * s.w);
  g.gemmBytes =
      ceilDiv(maxI(expGemm, raggedPanelBound(isa,
                                             p->pair.flags & TCC_UK_PACKED_A,
                                             p->pair.f, e)),
              64) *
      64;
  g.partBytes = (g.expFloats + g.midFloats) * f4 + g.gemmBytes;
  return g;
}

int64_t blockScratchBytes(int32_t isa, const tcc_uk_block_params_t *p,
                          const ConvShape &s, const ConvShape &es) {
  return 64 + kBlockMaxParts * blockGeometry(isa, p, s, es).partBytes;
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
  int64_t bands; // of one image, each at most g.band rows
  RunClaims claims; // the bands, a run of them a part
};

void runBand(const BlockJob &job, char *buffers, int64_t oy0, int64_t oy1) {
  const ConvShape &s = *job.s;
  const tcc_uk_block_params_t *p = job.p;
  const int64_t span = (s.kh - 1) * s.dh + 1;
  const int64_t top = oy0 * s.sh - s.pt; // first input row the band reads
  const int64_t iy0 = maxI(0, top);
  const int64_t iy1 = minI(s.h, (oy1 - 1) * s.sh - s.pt + span);
  float *x = reinterpret_cast<float *>(buffers);
  float *mid = x + job.g.expFloats;
  void *gemmScratch = mid + job.g.midFloats;

  const ConvShape &es = *job.es;
  GemmArgs ge = {};
  ge.m = s.c;
  ge.n = (iy1 - iy0) * s.w;
  ge.k = es.kdim;
  ge.packedA = (p->exp.flags & TCC_UK_PACKED_A) != 0;
  ge.a = job.expWeight;
  ge.ars = es.kdim;
  ge.acs = 1;
  ge.c = x;
  ge.ldc = ge.n;
  ge.ep = job.expEp;
  const MatrixB in = {job.image + iy0 * s.w, es.h * es.w, false};
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

  ConvShape band = s;
  band.h = iy1 - iy0;
  band.pt = iy0 - top;
  band.oh = oy1 - oy0;
  band.pb = (band.oh - 1) * s.sh + span - band.h - band.pt;
  depthwiseConv(NULL, band, x, job.dwWeight, mid, false, job.dwEp);

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
/// (this VM's two CPUs do not always run at one speed) hands the end of its
/// run to the others, and one that starts late finds its bands taken.
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

extern "C" int32_t tcc_uk_dwpw_fast(int32_t isa,
                                    const tcc_uk_dwpw_params_t *p) {
  ConvShape s;
  return resolvePair(p, s) && hasDirectRows(isa, s);
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
                                           const float *pwWeight,
                                           float *output,
                                           const tcc_uk_epilogue_t *epilogue) {
  ConvShape s;
  if (!resolvePair(p, s) || (epilogue && epilogue->activation))
    return -2;
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  void *scratch = p->scratch, *owned = NULL;
  if (!scratch) {
    owned = malloc(static_cast<size_t>(
        tcc_uk_dwpw_scratch_bytes(TCC_UK_NATIVE_ISA, p)));
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
      KSplitJob job;
      job.one = &one;
      job.image = image;
      job.dwWeight = dwWeight;
      job.dwEp = &dwEp;
      job.mid = mid;
      job.partial = mid + pairMidFloats(s);
      job.g = &ga;
      planKSplit(job);
      // A task a thread (two at least: one a part).
      parallelFor(host, maxI(2, hostThreads(host)), 1, runKSplit, &job);
      continue;
    }
    depthwiseConv(host, one, image, dwWeight, mid, false, &dwEp);
    runGemm(host, ga, mid + pairMidFloats(s));
  }
  free(owned);
  return 0;
}

extern "C" int32_t tcc_uk_block_fast(int32_t isa,
                                     const tcc_uk_block_params_t *p) {
  ConvShape s, es;
  return resolveBlock(p, s, es) && tcc_uk_dwpw_fast(isa, &p->pair) &&
         static_cast<int64_t>(sizeof(float)) * s.c * s.h * s.w >=
             kBlockMinBytes;
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
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  void *scratch = p->pair.scratch, *owned = NULL;
  if (!scratch) {
    owned = malloc(static_cast<size_t>(
        blockScratchBytes(TCC_UK_NATIVE_ISA, p, s, es)));
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
  BlockJob job = {};
  job.p = p;
  job.s = &one;
  job.es = &es;
  job.g = blockGeometry(TCC_UK_NATIVE_ISA, p, s, es);
  job.parts = runsFlatDirect(one)
                  ? 1
                  : maxI(1, minI(minI(hostThreads(host), kBlockMaxParts),
                                 s.oh));
  // Bands of at most g.band rows, and kBlockBandsPerPart a part at least
  // (rows allowing), so that the parts share them out as they run.
  job.bands = maxI(ceilDiv(s.oh, job.g.band),
                   job.parts == 1 ? 1
                                  : minI(s.oh, kBlockBandsPerPart * job.parts));
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
