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
#include "simd.h"

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
  // Bands of rows, thread t taking band t of every plane: the rows a
  // convolution before it that split an image's pixels left in that
  // thread's cache. But a batch of small images, two or more a thread, each
  // too small to split (as groupsSideBySide and Winograd's blocks judge),
  // is split by images, as those convolutions split it: whole planes, the
  // next convolution's too (the small CNN's 2x2 pooling of 8x32x28x28 on 2
  // threads, in bands, read half of each plane from the other core, and
  // the model took 7% longer).
  const int threads = hostThreads(host);
  const bool byImages =
      threads > 1 && s.n >= 2 * threads &&
      s.c * s.oh * s.ow * s.kh * s.kw < kMinTaskWork * threads;
  // Small planes (up to 32x32 outputs), four or more a thread, are whole
  // units too: a band of a few rows cost more to set up than to pool
  // (28x28, 14x14 and 7x7 planes; 56x56 ones as well gained less, see
  // docs/convolutions.md).
  const bool smallPlanes =
      s.oh * s.ow <= kWholePlaneOutputs && s.n * s.c >= 4 * threads;
  const int64_t bands = byImages || smallPlanes ? 1 : minI(threads, s.oh);
  Job job = {&s, input, output, vectorRows(TCC_UK_NATIVE_ISA, s), bands};
  // A unit's outputs cost about kh*kw loads each: chunks of units worth
  // handing to another thread, as for depthwise convolutions.
  const int64_t unitWork = maxI(1, s.oh / bands * s.ow * s.kh * s.kw);
  parallelFor(host, bands * s.n * s.c, maxI(1, kMinTaskWork / 16 / unitWork),
              runPlanes, &job);
  return 0;
}
