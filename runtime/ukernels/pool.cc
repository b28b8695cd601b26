// pool.cc - 2-D max pooling, NCHW: a band of output rows of an (image,
// channel) plane per task, vectors along output rows. With dilation 1 and
// strides 1 or 2, each tap is read straight from the input row: on AVX-512
// with -inf loaded outside it (the padding never wins), for stride 2 split
// by parity in registers; on AVX2 8 columns at a time, with masked loads at
// the row's edges (for stride 2 the even lanes of two loads; a 2-wide
// window of stride 2 takes both lanes of each pair) and split stores at
// its end. Anything else goes one element at a time.
// A NaN in a window is the window's result, as with max pooling in PyTorch
// and ONNX Runtime.
// Average pooling shares the units and threads: a vector of output columns
// sums its taps row by row (zeros loaded outside the row; stride 2 the even
// lanes of two loads), or, on small planes the size of the input, a vector
// of 16 outputs across rows (avgFlat), then divides by the windows' counts,
// a row's times a column's.
#include "simd.h"

#include <stdlib.h>

#if TCC_UK_NATIVE_ISA != 0
#include <immintrin.h>
#endif

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

struct PoolShape {
  int64_t n, c, h, w, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
};

bool resolvePool(const tcc_uk_pool2d_params_t *p, PoolShape &s) {
  if (!p)
    return false;
  s.n = p->n, s.c = p->c, s.h = p->h, s.w = p->w;
  s.kh = p->kh, s.kw = p->kw;
  s.sh = p->stride_h > 0 ? p->stride_h : 1;
  s.sw = p->stride_w > 0 ? p->stride_w : 1;
  s.dh = p->dilation_h > 0 ? p->dilation_h : 1;
  s.dw = p->dilation_w > 0 ? p->dilation_w : 1;
  s.pt = p->pad_top, s.pl = p->pad_left;
  s.oh = p->oh, s.ow = p->ow;
  return s.n >= 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.kh > 0 && s.kw > 0 &&
         s.pt >= 0 && s.pl >= 0 && s.oh >= 0 && s.ow >= 0;
}

/// Whether the kernels of `isa` pool this shape a vector at a time.
bool vectorRows(int32_t isa, const PoolShape &s) {
  return (isa == TCC_UK_ISA_AVX512 || isa == TCC_UK_ISA_AVX2) && s.dh == 1 &&
         s.dw == 1 && s.sh == s.sw && (s.sh == 1 || s.sh == 2);
}

const float kNegInf = -__builtin_inff();

/// Output element (oy, ox) of one plane.
float poolOne(const PoolShape &s, const float *x, int64_t oy, int64_t ox) {
  float m = kNegInf;
  bool nan = false;
  for (int64_t ky = 0; ky < s.kh; ++ky) {
    const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
    if (iy < 0 || iy >= s.h)
      continue;
    for (int64_t kx = 0; kx < s.kw; ++kx) {
      const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
      if (ix < 0 || ix >= s.w)
        continue;
      const float v = x[iy * s.w + ix];
      nan |= v != v;
      m = v > m ? v : m;
    }
  }
  return nan ? __builtin_nanf("") : m;
}

/// Output rows [oy0, oy1) of one plane, one element at a time.
void planeScalar(const PoolShape &s, const float *x, float *y, int64_t oy0,
                 int64_t oy1) {
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox)
      y[oy * s.ow + ox] = poolOne(s, x, oy, ox);
}

#if TCC_UK_NATIVE_ISA != 0
/// row[at + l] for the lanes l of a vector, -inf where at + l lies outside
/// [0, w).
TCC_UK_INLINE vf loadColsLowest(const float *row, int64_t w, int64_t at) {
  return loadColsOr(row, w, at, vset1(kNegInf));
}
#endif

#if TCC_UK_NATIVE_ISA == 2

/// Whether a pooling is 2x2, stride 2, without padding: every window
/// inside the plane (the pooling of small CNNs, where a row of 14 or 28
/// outputs spent most of its time on the general path's edge masks and tap
/// loops).
bool plain2x2(const PoolShape &s) {
  return s.kh == 2 && s.kw == 2 && s.sh == 2 && s.sw == 2 && s.dh == 1 &&
         s.dw == 1 && s.pt == 0 && s.pl == 0 && 2 * s.oh <= s.h &&
         2 * s.ow <= s.w;
}

/// max(a, b), NaN where either is (maxps returns b when one is NaN).
TCC_UK_INLINE __m512 maxNaN(__m512 a, __m512 b) {
  return _mm512_mask_add_ps(_mm512_max_ps(a, b),
                            _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
}

/// Output rows [oy0, oy1) of a plain2x2 plane, 16 output columns a vector:
/// the two input rows' 32 columns in two loads each (masked as the row's
/// end needs, the masks the same for every row), their maximum, then that
/// of its even and odd lanes.
void plane2x2(const PoolShape &s, const float *x, float *y, int64_t oy0,
              int64_t oy1) {
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                            20, 22, 24, 26, 28, 30);
  const __m512i oddIdx = _mm512_add_epi32(evenIdx, _mm512_set1_epi32(1));
  const int64_t w = s.w, ow = s.ow;
  for (int64_t ox = 0; ox < ow; ox += 16) {
    const int n = static_cast<int>(minI(16, ow - ox));
    const __mmask16 m0 = vmaskFirst(minI(16, 2 * n));
    const __mmask16 m1 = vmaskFirst(static_cast<int>(maxI(0, 2 * n - 16)));
    const __mmask16 mo = vmaskFirst(n);
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const float *r0 = x + 2 * oy * w + 2 * ox, *r1 = r0 + w;
      const __m512 lo =
          maxNaN(_mm512_maskz_loadu_ps(m0, r0), _mm512_maskz_loadu_ps(m0, r1));
      const __m512 hi = maxNaN(_mm512_maskz_loadu_ps(m1, r0 + 16),
                               _mm512_maskz_loadu_ps(m1, r1 + 16));
      _mm512_mask_storeu_ps(y + oy * ow + ox, mo,
                            maxNaN(_mm512_permutex2var_ps(lo, evenIdx, hi),
                                   _mm512_permutex2var_ps(lo, oddIdx, hi)));
    }
  }
}

/// Widest output rows and largest windows of the separable path (its rows
/// on the stack).
constexpr int64_t kSepMaxOw = 512, kSepMaxK = 8;
/// Floats of the stack rows of horizontal maxima (32 KB): at least the
/// kh rows one output row reads at the widest.
constexpr int64_t kSepRowsFloats = 8192;
static_assert(kSepRowsFloats >= kSepMaxK * kSepMaxOw, "one output row's rows");

/// Whether the separable path takes a shape (dilation 1, stride 1 or 2).
bool separable(const PoolShape &s) {
  return s.ow <= kSepMaxOw && s.kh <= kSepMaxK &&
         s.kw <= (s.sw == 1 ? kSepMaxK : 3) && !plain2x2(s);
}

/// The loads of a row's output vectors j < nv, taps t < loads: at stride 1
/// tap t of vector j starts at column 16j - pl + t; at stride 2 the taps
/// come from loads of 16 columns from 32j - pl on. Their offsets and masks
/// are the same for every row of a plane.
template <int S, int J, int L>
void rowLoads(const PoolShape &s, int64_t nv, int loads, int64_t (&at)[J][L],
              __mmask16 (&mask)[J][L]) {
  for (int64_t j = 0; j < nv; ++j)
    for (int t = 0; t < loads; ++t) {
      at[j][t] = S == 1 ? 16 * j - s.pl + t : 32 * j - s.pl + 16 * t;
      mask[j][t] = colsMask(s.w, at[j][t]);
    }
}

/// Indices of the even and odd lanes of two vectors (permutex2var).
TCC_UK_INLINE __m512i evenLanes() {
  return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                           28, 30);
}
TCC_UK_INLINE __m512i oddLanes() {
  return _mm512_add_epi32(evenLanes(), _mm512_set1_epi32(1));
}

/// Output rows [oy0, oy1) of one plane as a separable maximum: each input
/// row the band reads is reduced across its windows once (kw taps, stride
/// S), into rows on the stack; each output row is then the
/// maximum of kh of those. planeVector reduced each window's kh x kw taps
/// for every output row (each input row 3 times over for a 3x3 window of
/// stride 1), computing the edge masks of every load and tracking NaNs per
/// tap (docs/convolutions.md has the figures). The loads' offsets and masks are
/// the same for every row and worked out once. maxps drops NaNs, so the loads
/// are checked for them instead (the first and last tap's loads reach every
/// column a window reads, and more): false, the band's outputs left for
/// planeVector to redo, when there is one.
template <int S>
bool planeSeparable(const PoolShape &s, const float *x, float *y, int64_t oy0,
                    int64_t oy1) {
  constexpr int kLoads = S == 1 ? kSepMaxK : 3;
  const int64_t nv = ceilDiv(s.ow, 16), owPad = nv * 16;
  const int loads = S == 1 ? static_cast<int>(s.kw) : (s.kw == 3 ? 3 : 2);
  int64_t at[kSepMaxOw / 16][kLoads];
  __mmask16 mask[kSepMaxOw / 16][kLoads];
  rowLoads<S>(s, nv, loads, at, mask);
  const __m512i evenIdx = evenLanes(), oddIdx = oddLanes();
  const __m512 negInf = _mm512_set1_ps(kNegInf);
  // The band's rows of horizontal maxima, a run of output rows at a time
  // (rows read by two runs reduced twice): no ring with a division per row.
  alignas(64) float rows[kSepRowsFloats];
  const int64_t runRows = maxI(1, (kSepRowsFloats / owPad - s.kh) / S + 1);
  __mmask16 nan = 0;
  for (int64_t a = oy0; a < oy1; a += runRows) {
    const int64_t b = minI(oy1, a + runRows);
    const int64_t r0 = maxI(0, a * S - s.pt);
    const int64_t r1 = minI(s.h, (b - 1) * S - s.pt + s.kh);
    for (int64_t iy = r0; iy < r1; ++iy) {
      const float *row = x + iy * s.w;
      float *h = rows + (iy - r0) * owPad;
      for (int64_t j = 0; j < nv; ++j) {
        auto load = [&](int t) {
          return _mm512_mask_loadu_ps(negInf, mask[j][t], row + at[j][t]);
        };
        __m512 acc;
        if (S == 1) {
          const __m512 first = load(0);
          acc = first;
          __m512 v = first;
          for (int t = 1; t < loads; ++t)
            acc = _mm512_max_ps(acc, v = load(t));
          nan |= _mm512_cmp_ps_mask(first, v, _CMP_UNORD_Q);
        } else {
          // Taps 2t, 2t + 1 and 2t + 2: the even and odd lanes of two
          // loads, and the even ones moved down a lane with the third's.
          const __m512 l0 = load(0), l1 = load(1);
          const __m512 even = _mm512_permutex2var_ps(l0, evenIdx, l1);
          nan |= _mm512_cmp_ps_mask(l0, l1, _CMP_UNORD_Q);
          acc = even;
          if (s.kw >= 2)
            acc = _mm512_max_ps(acc, _mm512_permutex2var_ps(l0, oddIdx, l1));
          if (s.kw == 3) {
            const __m512 l2 = load(2);
            nan |= _mm512_cmp_ps_mask(l2, l2, _CMP_UNORD_Q);
            acc = _mm512_max_ps(acc, _mm512_castsi512_ps(_mm512_alignr_epi32(
                                         _mm512_castps_si512(l2),
                                         _mm512_castps_si512(even), 1)));
          }
        }
        _mm512_store_ps(h + 16 * j, acc);
      }
    }
    for (int64_t oy = a; oy < b; ++oy) {
      const int64_t top = oy * S - s.pt;
      const int64_t lo = maxI(0, top), hi = minI(s.h, top + s.kh);
      float *out = y + oy * s.ow;
      for (int64_t j = 0; j < nv; ++j) {
        __m512 acc = negInf;
        for (int64_t iy = lo; iy < hi; ++iy)
          acc = _mm512_max_ps(
              acc, _mm512_load_ps(rows + (iy - r0) * owPad + 16 * j));
        const int n = static_cast<int>(minI(16, s.ow - 16 * j));
        _mm512_mask_storeu_ps(out + 16 * j, vmaskFirst(n), acc);
      }
    }
  }
  return nan == 0;
}

/// Output columns of the 3x3 rolling path: four vectors' horizontal
/// maxima of three rows in registers.
constexpr int64_t kRoll3MaxVecs = 4;

/// Whether the 3x3 rolling path takes a shape: a 3x3 window, stride 1 or 2
/// both ways, dilation 1, rows of up to 64 outputs.
bool roll3(const PoolShape &s) {
  return s.kh == 3 && s.kw == 3 && s.dh == 1 && s.dw == 1 && s.sh == s.sw &&
         (s.sh == 1 || s.sh == 2) && s.ow <= 16 * kRoll3MaxVecs;
}

/// Output rows [oy0, oy1) of one plane through a 3x3 window of stride S,
/// NV vectors of output columns a row: each input row's horizontal maxima
/// (three taps) once, into registers; an output row is the maximum of
/// three of them, and the next reuses two (S = 1) or one (S = 2). The
/// separable path did the same through rows on the stack with the tap
/// loops, offsets and masks of any window read from memory: at 14x14 and
/// 7x7 planes, its loop overheads were most of the time. The loads' masks
/// are the same for every row; NaNs are detected on the loads as there:
/// false, the rows left for planeVector's exact path, when there is one.
template <int S, int NV>
bool planeRoll3(const PoolShape &s, const float *x, float *y, int64_t oy0,
                int64_t oy1) {
  constexpr int kLoads = 3;
  __mmask16 mask[NV][kLoads];
  int64_t at[NV][kLoads];
  rowLoads<S>(s, NV, kLoads, at, mask);
  const __m512i evenIdx = evenLanes(), oddIdx = oddLanes();
  const __m512 negInf = _mm512_set1_ps(kNegInf);
  __mmask16 nan = 0;
  // The horizontal maxima of input row iy (-inf outside the plane).
  auto rowMax = [&](int64_t iy, __m512(&h)[NV]) {
    if (iy < 0 || iy >= s.h) {
      TCC_UK_UNROLL
      for (int j = 0; j < NV; ++j)
        h[j] = negInf;
      return;
    }
    const float *row = x + iy * s.w;
    TCC_UK_UNROLL
    for (int j = 0; j < NV; ++j) {
      auto load = [&](int t) {
        return _mm512_mask_loadu_ps(negInf, mask[j][t], row + at[j][t]);
      };
      const __m512 l0 = load(0), l1 = load(1), l2 = load(2);
      if (S == 1) {
        // l1's columns are l0's or l2's.
        nan |= _mm512_cmp_ps_mask(l0, l2, _CMP_UNORD_Q);
        h[j] = _mm512_max_ps(_mm512_max_ps(l0, l1), l2);
      } else {
        const __m512 even = _mm512_permutex2var_ps(l0, evenIdx, l1);
        const __m512 odd = _mm512_permutex2var_ps(l0, oddIdx, l1);
        const __m512 next = _mm512_castsi512_ps(_mm512_alignr_epi32(
            _mm512_castps_si512(l2), _mm512_castps_si512(even), 1));
        nan |= _mm512_cmp_ps_mask(l0, l1, _CMP_UNORD_Q) |
               _mm512_cmp_ps_mask(l2, l2, _CMP_UNORD_Q);
        h[j] = _mm512_max_ps(_mm512_max_ps(even, odd), next);
      }
    }
  };
  __m512 h0[NV], h1[NV], h2[NV];
  const int64_t top = oy0 * S - s.pt;
  rowMax(top, h0);
  rowMax(top + 1, h1);
  rowMax(top + 2, h2);
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    float *out = y + oy * s.ow;
    TCC_UK_UNROLL
    for (int j = 0; j < NV; ++j) {
      const __m512 acc = _mm512_max_ps(_mm512_max_ps(h0[j], h1[j]), h2[j]);
      const int n = static_cast<int>(minI(16, s.ow - 16 * j));
      _mm512_mask_storeu_ps(out + 16 * j, vmaskFirst(n), acc);
    }
    if (oy + 1 == oy1)
      break;
    const int64_t next = (oy + 1) * S - s.pt;
    if (S == 1) {
      TCC_UK_UNROLL
      for (int j = 0; j < NV; ++j) {
        h0[j] = h1[j];
        h1[j] = h2[j];
      }
      rowMax(next + 2, h2);
    } else {
      TCC_UK_UNROLL
      for (int j = 0; j < NV; ++j)
        h0[j] = h2[j];
      rowMax(next + 1, h1);
      rowMax(next + 2, h2);
    }
  }
  return nan == 0;
}

template <int S>
bool planeRoll3Any(const PoolShape &s, const float *x, float *y, int64_t oy0,
                   int64_t oy1) {
  switch (ceilDiv(s.ow, 16)) {
  case 1:
    return planeRoll3<S, 1>(s, x, y, oy0, oy1);
  case 2:
    return planeRoll3<S, 2>(s, x, y, oy0, oy1);
  case 3:
    return planeRoll3<S, 3>(s, x, y, oy0, oy1);
  default:
    return planeRoll3<S, 4>(s, x, y, oy0, oy1);
  }
}

/// Output rows [oy0, oy1) of one plane, stride S, a vector of output
/// columns at a time: for each valid tap row, kw taps (for stride 2 the
/// even columns of two loads).
template <int S>
void planeVector(const PoolShape &s, const float *x, float *y, int64_t oy0,
                 int64_t oy1) {
  if (S == 2 && plain2x2(s))
    return plane2x2(s, x, y, oy0, oy1);
  if (roll3(s) ? planeRoll3Any<S>(s, x, y, oy0, oy1)
               : separable(s) && planeSeparable<S>(s, x, y, oy0, oy1))
    return;
  const __m512i evenIdx = evenLanes(), oddIdx = oddLanes();
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    const int64_t iy0 = oy * S - s.pt;
    const int64_t ky0 = maxI(0, -iy0), ky1 = minI(s.kh, s.h - iy0);
    float *out = y + oy * s.ow;
    for (int64_t ox = 0; ox < s.ow; ox += 16) {
      const int64_t base = ox * S - s.pl;
      __m512 acc = _mm512_set1_ps(kNegInf);
      __mmask16 nan = 0;
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const float *row = x + (iy0 + ky) * s.w;
        if (S == 2 && s.kw == 3) {
          // Columns base .. base + 32 in three loads; the taps 2t, 2t + 1
          // and 2t + 2 are their even and odd lanes and the even ones
          // moved down a lane (the last from the third load), instead of
          // two loads and a permutation per tap.
          const __m512 l0 = loadColsLowest(row, s.w, base);
          const __m512 l1 = loadColsLowest(row, s.w, base + 16);
          const __m512 l2 = loadColsLowest(row, s.w, base + 32);
          const __m512 even = _mm512_permutex2var_ps(l0, evenIdx, l1);
          const __m512 odd = _mm512_permutex2var_ps(l0, oddIdx, l1);
          const __m512 next = _mm512_castsi512_ps(_mm512_alignr_epi32(
              _mm512_castps_si512(l2), _mm512_castps_si512(even), 1));
          nan |= _mm512_cmp_ps_mask(even, odd, _CMP_UNORD_Q) |
                 _mm512_cmp_ps_mask(next, next, _CMP_UNORD_Q);
          acc =
              _mm512_max_ps(acc, _mm512_max_ps(_mm512_max_ps(even, odd), next));
          continue;
        }
        if (S == 2 && s.kw == 2) {
          // Columns base .. base + 32 in two loads: the taps 2t and 2t + 1
          // are their even and odd lanes (each tap's own two loads took
          // twice the loads).
          const __m512 l0 = loadColsLowest(row, s.w, base);
          const __m512 l1 = loadColsLowest(row, s.w, base + 16);
          const __m512 even = _mm512_permutex2var_ps(l0, evenIdx, l1);
          const __m512 odd = _mm512_permutex2var_ps(l0, oddIdx, l1);
          nan |= _mm512_cmp_ps_mask(even, odd, _CMP_UNORD_Q);
          acc = _mm512_max_ps(acc, _mm512_max_ps(even, odd));
          continue;
        }
        for (int64_t kx = 0; kx < s.kw; ++kx) {
          __m512 v;
          if (S == 1) {
            v = loadColsLowest(row, s.w, base + kx);
          } else {
            v = _mm512_permutex2var_ps(
                loadColsLowest(row, s.w, base + kx), evenIdx,
                loadColsLowest(row, s.w, base + kx + 16));
          }
          nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
          acc = _mm512_max_ps(acc, v);
        }
      }
      acc = _mm512_mask_mov_ps(acc, nan, _mm512_set1_ps(__builtin_nanf("")));
      const int n = static_cast<int>(minI(16, s.ow - ox));
      _mm512_mask_storeu_ps(out + ox, vmaskFirst(n), acc);
    }
  }
}
#elif TCC_UK_NATIVE_ISA == 1
/// Output rows [oy0, oy1) of one plane, stride S, 8 output columns at a
/// time: for each valid tap row, kw taps (for stride 2 the even lanes of
/// two loads); the last vector of a row stores only its columns.
template <int S>
void planeVector(const PoolShape &s, const float *x, float *y, int64_t oy0,
                 int64_t oy1) {
  const __m256 nanv = _mm256_set1_ps(__builtin_nanf(""));
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    const int64_t iy0 = oy * S - s.pt;
    const int64_t ky0 = maxI(0, -iy0), ky1 = minI(s.kh, s.h - iy0);
    float *out = y + oy * s.ow;
    for (int64_t ox = 0; ox < s.ow; ox += 8) {
      const int64_t base = ox * S - s.pl;
      __m256 acc = _mm256_set1_ps(kNegInf), nan = _mm256_setzero_ps();
      if (S == 2 && s.kw == 2) {
        // The window's two columns are the two lanes of each pair of 16
        // loaded: two loads a row, and the lanes put in order once.
        for (int64_t ky = ky0; ky < ky1; ++ky) {
          const float *row = x + (iy0 + ky) * s.w;
          const __m256 lo = loadColsLowest(row, s.w, base);
          const __m256 hi = loadColsLowest(row, s.w, base + 8);
          const __m256 e = _mm256_shuffle_ps(lo, hi, 0x88);
          const __m256 o = _mm256_shuffle_ps(lo, hi, 0xDD);
          nan = _mm256_or_ps(nan, _mm256_cmp_ps(e, o, _CMP_UNORD_Q));
          acc = _mm256_max_ps(acc, _mm256_max_ps(e, o));
        }
        acc = _mm256_blendv_ps(acc, nanv, nan);
        acc = _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(acc), 0xD8));
        vstoreFirst(out + ox, acc,
                    vmaskFirst(static_cast<int>(minI(8, s.ow - ox))));
        continue;
      }
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const float *row = x + (iy0 + ky) * s.w;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
          __m256 v = loadColsLowest(row, s.w, base + kx);
          if (S == 2) { // the even columns of 16
            const __m256 e = _mm256_shuffle_ps(
                v, loadColsLowest(row, s.w, base + kx + 8), 0x88);
            v = _mm256_castpd_ps(
                _mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
          }
          nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
          acc = _mm256_max_ps(acc, v);
        }
      }
      acc = _mm256_blendv_ps(acc, nanv, nan);
      // Split stores for a row's last columns: AMD microcodes the masked
      // store.
      vstoreFirst(out + ox, acc,
                  vmaskFirst(static_cast<int>(minI(8, s.ow - ox))));
    }
  }
}
#endif

/// Output rows [oy0, oy1) of one plane, a vector at a time where `vector`
/// (vectorRows) says the kernels can.
void poolPlane(const PoolShape &s, bool vector, const float *x, float *y,
               int64_t oy0, int64_t oy1) {
#if TCC_UK_NATIVE_ISA != 0
  if (vector) {
    if (s.sh == 1)
      planeVector<1>(s, x, y, oy0, oy1);
    else
      planeVector<2>(s, x, y, oy0, oy1);
    return;
  }
#endif
  (void)vector;
  planeScalar(s, x, y, oy0, oy1);
}

struct Job {
  const PoolShape *s;
  const float *x;
  float *y;
  bool vector;
  int64_t bands; // of output rows, one a thread
};

/// Units are (band of output rows, plane), band by band: thread t's share
/// of them is band t of every plane, the rows a convolution before it that
/// split its output by columns (pixels) left in that thread's cache.
void runPlanes(void *ctx, int64_t begin, int64_t end) {
  const Job &job = *static_cast<const Job *>(ctx);
  const PoolShape &s = *job.s;
  const int64_t planes = s.n * s.c;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t band = u / planes, plane = u % planes;
    const int64_t oy0 = band * s.oh / job.bands;
    const int64_t oy1 = (band + 1) * s.oh / job.bands;
    poolPlane(s, job.vector, job.x + plane * s.h * s.w,
              job.y + plane * s.oh * s.ow, oy0, oy1);
  }
}

/// Taps of a window that count along one dimension at output o: inside
/// [-pBegin, size + pEnd) with the pads counted, else inside [0, size).
int64_t avgCount(int64_t o, int64_t k, int64_t stride, int64_t dilation,
                 int64_t pBegin, int64_t pEnd, int64_t size, bool withPads) {
  const int64_t lo = withPads ? -pBegin : 0, hi = withPads ? size + pEnd : size;
  int64_t n = 0;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t at = o * stride - pBegin + t * dilation;
    n += at >= lo && at < hi;
  }
  return n;
}

struct AvgJob {
  const PoolShape *s;
  const float *x;
  float *y;
  bool vector;
  int64_t bands;
  // Each output row's and column's count (columns padded to whole vectors
  // with ones); a window's count is their product.
  const float *rowCount, *colCount;
  // The flat path (avgFlat): each output's count, and for each vector of
  // outputs and tap, the lanes whose tap lies inside the plane.
  const float *flatCount;
  const uint16_t *flatMask;
};

/// Planes of at most this many outputs may take the flat path.
constexpr int64_t kAvgFlatMaxOutputs = 1024, kAvgFlatMaxTaps = 64;

/// Whether an average pooling runs flat (AVX-512): stride 1, dilation 1,
/// the output plane the input's size ("same" pads), at most
/// kAvgFlatMaxOutputs outputs and kAvgFlatMaxTaps taps. Output q's tap
/// (ky, kx) is then input q + (ky - pt) w + (kx - pl), the same offset for
/// every output: a vector of 16 outputs across rows loads each tap at once,
/// its lanes outside the plane masked. Row by row, a 12x12 plane (an
/// Inception module's 3x3) filled 12 of 16 lanes and worked out every
/// load's mask at the row's two edges.
bool avgFlat(const PoolShape &s) {
  return TCC_UK_NATIVE_ISA == 2 && s.sh == 1 && s.sw == 1 && s.dh == 1 &&
         s.dw == 1 && s.oh == s.h && s.ow == s.w &&
         s.oh * s.ow <= kAvgFlatMaxOutputs && s.kh * s.kw <= kAvgFlatMaxTaps;
}

/// Output rows [oy0, oy1) of one plane of an average pooling.
void avgPlane(const AvgJob &job, const float *x, float *y, int64_t oy0,
              int64_t oy1) {
  const PoolShape &s = *job.s;
#if TCC_UK_NATIVE_ISA == 2
  if (job.flatMask) {
    // Four vectors of outputs at a time: each one's sum is a chain of taps
    // adds, which alone waited on every add's latency.
    constexpr int G = 4;
    const int64_t taps = s.kh * s.kw, n = s.oh * s.ow;
    const int64_t q1 = oy1 * s.ow;
    for (int64_t q0 = oy0 * s.ow; q0 < q1; q0 += G * 16) {
      const int g = static_cast<int>(minI(G, ceilDiv(q1 - q0, 16)));
      const uint16_t *mask = job.flatMask + q0 / 16 * taps;
      __m512 acc[G];
      TCC_UK_UNROLL
      for (int i = 0; i < G; ++i)
        acc[i] = _mm512_setzero_ps();
      for (int64_t ky = 0, t = 0; ky < s.kh; ++ky)
        for (int64_t kx = 0; kx < s.kw; ++kx, ++t) {
          const float *at = x + q0 + (ky - s.pt) * s.w + (kx - s.pl);
          TCC_UK_UNROLL
          for (int i = 0; i < G; ++i)
            if (i < g)
              acc[i] = _mm512_add_ps(
                  acc[i],
                  _mm512_maskz_loadu_ps(mask[i * taps + t], at + 16 * i));
        }
      for (int i = 0; i < g; ++i) {
        const int64_t q = q0 + 16 * i;
        const __m512 r = _mm512_div_ps(acc[i], vload(job.flatCount + q));
        const int64_t left = minI(16, minI(n, q1) - q);
        if (left == 16)
          vstore(y + q, r);
        else
          vstoreMask(y + q, r, vmaskFirst(static_cast<int>(left)));
      }
    }
    return;
  }
#endif
#if TCC_UK_NATIVE_ISA != 0
  if (job.vector) {
    // The band's vectors of outputs (a row's in turn, then the next row's)
    // G at a time, each sum a chain of its own that the others' adds
    // overlap; a tap pair (kx, kx + 1) of stride 2 is the even and odd
    // lanes of one pair of loads.
    constexpr int G = 4;
    const int64_t nv = ceilDiv(s.ow, kVL), total = (oy1 - oy0) * nv;
    for (int64_t i0 = 0; i0 < total; i0 += G) {
      const int g = static_cast<int>(minI(G, total - i0));
      int64_t top[G], base[G];
      float *out[G];
      int n[G];
      vf acc[G], count[G];
      for (int i = 0; i < g; ++i) {
        const int64_t oy = oy0 + (i0 + i) / nv, ox = (i0 + i) % nv * kVL;
        top[i] = oy * s.sh - s.pt;
        base[i] = ox * s.sw - s.pl;
        out[i] = y + oy * s.ow + ox;
        n[i] = static_cast<int>(minI(kVL, s.ow - ox));
        acc[i] = vzero();
        count[i] = vmul(vset1(job.rowCount[oy]), vload(job.colCount + ox));
      }
      for (int64_t ky = 0; ky < s.kh; ++ky)
        for (int i = 0; i < g; ++i) {
          const int64_t iy = top[i] + ky;
          if (iy < 0 || iy >= s.h)
            continue;
          const float *row = x + iy * s.w;
          if (s.sw == 1) {
            for (int64_t kx = 0; kx < s.kw; ++kx)
              acc[i] = vadd(acc[i], loadCols(row, s.w, base[i] + kx));
            continue;
          }
          for (int64_t kx = 0; kx < s.kw; kx += 2) {
            vf even, odd;
            loadColsByParity(row, s.w, base[i] + kx, even, odd);
            acc[i] = vadd(acc[i], even);
            if (kx + 1 < s.kw)
              acc[i] = vadd(acc[i], odd);
          }
        }
      for (int i = 0; i < g; ++i) {
        const vf q = vdiv(acc[i], count[i]);
        if (n[i] == kVL)
          vstore(out[i], q);
        else
          vstoreMask(out[i], q, vmaskFirst(n[i]));
      }
    }
    return;
  }
#endif
  // The same sums, a tap at a time (the taps outside the input, zeros in
  // the vector path, change no sum: it starts from +0 and never holds -0).
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      float sum = 0.0f;
      for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
        if (iy < 0 || iy >= s.h)
          continue;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
          const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
          if (ix >= 0 && ix < s.w)
            sum += x[iy * s.w + ix];
        }
      }
      y[oy * s.ow + ox] = sum / (job.rowCount[oy] * job.colCount[ox]);
    }
}

void runAvgPlanes(void *ctx, int64_t begin, int64_t end) {
  const AvgJob &job = *static_cast<const AvgJob *>(ctx);
  const PoolShape &s = *job.s;
  const int64_t planes = s.n * s.c;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t band = u / planes, plane = u % planes;
    avgPlane(job, job.x + plane * s.h * s.w, job.y + plane * s.oh * s.ow,
             band * s.oh / job.bands, (band + 1) * s.oh / job.bands);
  }
}

} // namespace

void maxPoolRows(const tcc_uk_pool2d_params_t *p, int64_t planes,
                 const float *x, int64_t xStride, float *y, int64_t yStride,
                 int64_t oy0, int64_t oy1) {
  PoolShape s;
  if (!resolvePool(p, s))
    return;
  const bool vector = vectorRows(TCC_UK_NATIVE_ISA, s);
  for (int64_t i = 0; i < planes; ++i, x += xStride, y += yStride)
    poolPlane(s, vector, x, y, oy0, oy1);
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

/// Output planes up to this size are a task each (see below).
constexpr int64_t kWholePlaneOutputs = 1024;

/// Bands of output rows a plane is cut into, thread t taking band t of every
/// plane: the rows a convolution before it that split an image's pixels
/// left in that thread's cache. But a batch of small images, two or more a
/// thread, each too small to split (as groupsSideBySide and Winograd's
/// blocks judge), is split by images, as those convolutions split it: whole
/// planes, the next convolution's too (the small CNN's 2x2 pooling of
/// 8x32x28x28 on 2 threads, in bands, read half of each plane from the
/// other core, and the model took 7% longer). Small planes (up to 32x32
/// outputs), four or more a thread, are whole units too: a band of a few
/// rows cost more to set up than to pool (28x28, 14x14 and 7x7 planes;
/// 56x56 ones as well gained less, see docs/convolutions.md).
static int64_t poolBands(const tcc_host_api_t *host, const PoolShape &s) {
  const int threads = hostThreads(host);
  const bool byImages =
      threads > 1 && s.n >= 2 * threads &&
      s.c * s.oh * s.ow * s.kh * s.kw < kMinTaskWork * threads;
  const bool smallPlanes =
      s.oh * s.ow <= kWholePlaneOutputs && s.n * s.c >= 4 * threads;
  return byImages || smallPlanes ? 1 : minI(threads, s.oh);
}

/// Units of (band, plane) a chunk: a unit's outputs cost about kh*kw loads
/// each, chunks of units worth handing to another thread, as for depthwise
/// convolutions.
static int64_t poolGrain(const PoolShape &s, int64_t bands) {
  const int64_t unitWork = maxI(1, s.oh / bands * s.ow * s.kh * s.kw);
  return maxI(1, kMinTaskWork / 16 / unitWork);
}

extern "C" int32_t tcc_uk_maxpool2d_fast(int32_t isa,
                                         const tcc_uk_pool2d_params_t *p) {
  PoolShape s;
  return resolvePool(p, s) && vectorRows(isa, s);
}

extern "C" int32_t tcc_uk_maxpool2d_nchw(const tcc_host_api_t *host,
                                         const tcc_uk_pool2d_params_t *p,
                                         const float *input, float *output) {
  PoolShape s;
  if (!resolvePool(p, s))
    return -2;
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  const int64_t bands = poolBands(host, s);
  Job job = {&s, input, output, vectorRows(TCC_UK_NATIVE_ISA, s), bands};
  parallelFor(host, bands * s.n * s.c, poolGrain(s, bands), runPlanes, &job);
  return 0;
}

extern "C" int32_t tcc_uk_avgpool2d_fast(int32_t isa,
                                         const tcc_uk_avgpool2d_params_t *p) {
  PoolShape s;
  return p && resolvePool(&p->window, s) && vectorRows(isa, s);
}

extern "C" int32_t tcc_uk_avgpool2d_nchw(const tcc_host_api_t *host,
                                         const tcc_uk_avgpool2d_params_t *p,
                                         const float *input, float *output) {
  PoolShape s;
  if (!p || !resolvePool(&p->window, s) || p->pad_bottom < 0 ||
      p->pad_right < 0)
    return -2;
  if (s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  const bool withPads = p->count_include_pad != 0;
  // One buffer: each output row's and column's count (columns padded to
  // whole vectors with ones), then for the flat path a plane's outputs'
  // counts and their taps' masks (outputs padded to whole vectors).
  const bool flat = avgFlat(s);
  const int64_t cols = ceilDiv(s.ow, kVL) * kVL, taps = s.kh * s.kw;
  const int64_t flatN = flat ? ceilDiv(s.oh * s.ow, 16) * 16 : 0;
  float *rowCount = static_cast<float *>(
      malloc(static_cast<size_t>(s.oh + cols + flatN) * sizeof(float) +
             static_cast<size_t>(flatN / 16 * taps) * sizeof(uint16_t)));
  if (!rowCount)
    return -1;
  float *colCount = rowCount + s.oh;
  // A window's count is its row's times its column's, each at least 1 (a
  // window with none inside sums to 0 whatever it is divided by).
  for (int64_t oy = 0; oy < s.oh; ++oy)
    rowCount[oy] = static_cast<float>(maxI(
        1, avgCount(oy, s.kh, s.sh, s.dh, s.pt, p->pad_bottom, s.h, withPads)));
  for (int64_t ox = 0; ox < cols; ++ox)
    colCount[ox] =
        ox < s.ow
            ? static_cast<float>(maxI(1, avgCount(ox, s.kw, s.sw, s.dw, s.pl,
                                                  p->pad_right, s.w, withPads)))
            : 1.0f;
  float *flatCount = flat ? colCount + cols : NULL;
  uint16_t *flatMask =
      flat ? reinterpret_cast<uint16_t *>(flatCount + flatN) : NULL;
  if (flat) {
    for (int64_t q = 0; q < flatN; ++q)
      flatCount[q] =
          q < s.oh * s.ow ? rowCount[q / s.ow] * colCount[q % s.ow] : 1.0f;
    // Each output's taps inside the plane, output by output.
    for (int64_t i = 0; i < flatN / 16 * taps; ++i)
      flatMask[i] = 0;
    for (int64_t oy = 0, q = 0; oy < s.oh; ++oy)
      for (int64_t ox = 0; ox < s.ow; ++ox, ++q)
        for (int64_t ky = 0, t = 0; ky < s.kh; ++ky)
          for (int64_t kx = 0; kx < s.kw; ++kx, ++t) {
            const int64_t iy = oy - s.pt + ky, ix = ox - s.pl + kx;
            if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w)
              flatMask[q / 16 * taps + t] |=
                  static_cast<uint16_t>(1u << (q % 16));
          }
  }
  // Flat planes are whole units: a vector of outputs spans rows.
  const int64_t bands = flat ? 1 : poolBands(host, s);
  AvgJob job = {&s,      input,    output,   vectorRows(TCC_UK_NATIVE_ISA, s),
                bands,   rowCount, colCount, flatCount,
                flatMask};
  parallelFor(host, bands * s.n * s.c, poolGrain(s, bands), runAvgPlanes, &job);
  free(rowCount);
  return 0;
}
