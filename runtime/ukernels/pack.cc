// pack.cc - copying A and B into the panel layouts the tile kernel reads,
// for this build's ISA (inside the GEMM) or any ISA (tcc_uk_pack_*, which
// the compiler also calls natively to prepack constant weights).
#include "simd.h"

#include <string.h>

#if TCC_UK_NATIVE_ISA != 0
#include <immintrin.h>
#endif

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

#if TCC_UK_NATIVE_ISA == 2
/// 8 rows x 16 columns of a row-major A (row stride rs) to 16 k steps of 8
/// floats: the transpose that dominates packing A, in 32 shuffles instead
/// of 128 scalar moves.
TCC_UK_INLINE void transpose8x16(const float *src, int64_t rs, float *dst) {
  __m512 r[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm512_loadu_ps(src + i * rs);
  // In each 128-bit lane L: t pairs rows 2j and 2j+1 ...
  const __m512 t0 = _mm512_unpacklo_ps(r[0], r[1]);
  const __m512 t1 = _mm512_unpackhi_ps(r[0], r[1]);
  const __m512 t2 = _mm512_unpacklo_ps(r[2], r[3]);
  const __m512 t3 = _mm512_unpackhi_ps(r[2], r[3]);
  const __m512 t4 = _mm512_unpacklo_ps(r[4], r[5]);
  const __m512 t5 = _mm512_unpackhi_ps(r[4], r[5]);
  const __m512 t6 = _mm512_unpacklo_ps(r[6], r[7]);
  const __m512 t7 = _mm512_unpackhi_ps(r[6], r[7]);
  // ... u_q holds rows 0-3 (u0..u3) or 4-7 (u4..u7) of column 4L+q ...
  const __m512 u0 = _mm512_shuffle_ps(t0, t2, 0x44);
  const __m512 u1 = _mm512_shuffle_ps(t0, t2, 0xEE);
  const __m512 u2 = _mm512_shuffle_ps(t1, t3, 0x44);
  const __m512 u3 = _mm512_shuffle_ps(t1, t3, 0xEE);
  const __m512 u4 = _mm512_shuffle_ps(t4, t6, 0x44);
  const __m512 u5 = _mm512_shuffle_ps(t4, t6, 0xEE);
  const __m512 u6 = _mm512_shuffle_ps(t5, t7, 0x44);
  const __m512 u7 = _mm512_shuffle_ps(t5, t7, 0xEE);
  // ... and whole lanes move so each output vector holds two columns.
  const __m512 w0 = _mm512_shuffle_f32x4(u0, u4, 0x44);
  const __m512 w1 = _mm512_shuffle_f32x4(u0, u4, 0xEE);
  const __m512 w2 = _mm512_shuffle_f32x4(u1, u5, 0x44);
  const __m512 w3 = _mm512_shuffle_f32x4(u1, u5, 0xEE);
  const __m512 w4 = _mm512_shuffle_f32x4(u2, u6, 0x44);
  const __m512 w5 = _mm512_shuffle_f32x4(u2, u6, 0xEE);
  const __m512 w6 = _mm512_shuffle_f32x4(u3, u7, 0x44);
  const __m512 w7 = _mm512_shuffle_f32x4(u3, u7, 0xEE);
  _mm512_storeu_ps(dst + 0 * 16, _mm512_shuffle_f32x4(w0, w2, 0x88));
  _mm512_storeu_ps(dst + 1 * 16, _mm512_shuffle_f32x4(w4, w6, 0x88));
  _mm512_storeu_ps(dst + 2 * 16, _mm512_shuffle_f32x4(w0, w2, 0xDD));
  _mm512_storeu_ps(dst + 3 * 16, _mm512_shuffle_f32x4(w4, w6, 0xDD));
  _mm512_storeu_ps(dst + 4 * 16, _mm512_shuffle_f32x4(w1, w3, 0x88));
  _mm512_storeu_ps(dst + 5 * 16, _mm512_shuffle_f32x4(w5, w7, 0x88));
  _mm512_storeu_ps(dst + 6 * 16, _mm512_shuffle_f32x4(w1, w3, 0xDD));
  _mm512_storeu_ps(dst + 7 * 16, _mm512_shuffle_f32x4(w5, w7, 0xDD));
}
#endif

#if TCC_UK_NATIVE_ISA != 0
/// 8 rows of 8 floats (row stride rs) to their 8 columns, column c stored
/// at dst + c*ds: a transposed B's rows are its panel's columns.
TCC_UK_INLINE void transpose8x8(const float *src, int64_t rs, float *dst,
                                int64_t ds) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm256_loadu_ps(src + i * rs);
  // In each 128-bit half: t pairs rows 2j and 2j+1, u holds four rows of
  // one column (u0..u3 of rows 0-3, u4..u7 of rows 4-7) ...
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]);
  const __m256 t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]);
  const __m256 t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]);
  const __m256 t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]);
  const __m256 t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u[8] = {
      _mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
      _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE),
      _mm256_shuffle_ps(t4, t6, 0x44), _mm256_shuffle_ps(t4, t6, 0xEE),
      _mm256_shuffle_ps(t5, t7, 0x44), _mm256_shuffle_ps(t5, t7, 0xEE)};
  // ... and the halves pair up: columns 0-3 low, 4-7 high.
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * ds,
                     _mm256_permute2f128_ps(u[c], u[c + 4], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * ds,
                     _mm256_permute2f128_ps(u[c], u[c + 4], 0x31));
  }
}
#endif

template <int MR>
void packAPanelT(const float *a, int64_t rs, int64_t cs, int64_t i0, int mr,
                 int64_t k0, int64_t kc, float *dst) {
  const float *src = a + i0 * rs + k0 * cs;
  if (rs == 1) { // A^T stored row-major: each k step is contiguous
    for (int64_t p = 0; p < kc; ++p)
      copyShort(dst + p * MR, src + p * cs, mr);
    return;
  }
  if (cs == 1 && mr == MR) {
    int64_t p = 0;
#if TCC_UK_NATIVE_ISA == 2
    if constexpr (MR == 8)
      for (; p + 16 <= kc; p += 16)
        transpose8x16(src + p, rs, dst + p * MR);
#endif
    // A fixed trip count lets the compiler keep the row pointers in
    // registers.
    for (; p < kc; ++p)
      for (int i = 0; i < MR; ++i)
        dst[p * MR + i] = src[i * rs + p];
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    for (int i = 0; i < mr; ++i)
      dst[p * MR + i] = src[i * rs + p * cs];
}

template <int NR, int VL>
void packBMatrixT(const void *source, int64_t k0, int64_t kc, int64_t j0,
                  int64_t nc, float *dst, int64_t panelStride) {
  const MatrixB &m = *static_cast<const MatrixB *>(source);
  if (!m.trans) {
    // Row by row, so the source is read in long sequential runs that the
    // hardware prefetchers follow; the panels are written NR floats apart
    // (a ragged last one W floats apart).
    const int64_t full = nc / NR, w = nc - full * NR;
    const int64_t W = panelWidth(w, NR, VL);
    for (int64_t r = 0; r < kc; ++r) {
      const float *s = m.b + (k0 + r) * m.ldb + j0;
      float *d = dst + r * NR;
      for (int64_t q = 0; q < full; ++q)
        memcpy(d + q * panelStride, s + q * NR, sizeof(float) * NR);
      if (w) {
        float *t = dst + full * panelStride + r * W;
        copyShort(t, s + full * NR, w);
        zeroShort(t + w, W - w);
      }
    }
    return;
  }
  for (int64_t j = j0; j < j0 + nc; j += NR, dst += panelStride) {
    const int w = static_cast<int>(minI(NR, j0 + nc - j));
    const int64_t W = panelWidth(w, NR, VL);
    // B^T: column jj of the panel is contiguous in the source. Eight k rows
    // at a time keep the writes within a few cache lines.
    const float *s = m.b + j * m.ldb + k0;
    int64_t r0 = 0;
#if TCC_UK_NATIVE_ISA != 0
    // Whole 8 x 8 blocks by vector shuffles: the scalar loop below ran at a
    // float a cycle, which a GEMM of few rows (a training step's x W^T,
    // every weight packed at each call) spent a fifth of its time in.
    if (w % 8 == 0)
      for (; r0 + 8 <= kc; r0 += 8)
        for (int jj = 0; jj < w; jj += 8)
          transpose8x8(s + jj * m.ldb + r0, m.ldb, dst + r0 * W + jj, W);
#endif
    for (; r0 < kc; r0 += 8) {
      const int64_t rn = minI(8, kc - r0);
      for (int jj = 0; jj < w; ++jj)
        for (int64_t r = r0; r < r0 + rn; ++r)
          dst[r * W + jj] = s[jj * m.ldb + r];
      if (w < W)
        for (int64_t r = r0; r < r0 + rn; ++r)
          zeroShort(dst + r * W + w, W - w);
    }
  }
}

template <int Isa>
void packAFull(int64_t m, int64_t k, const float *a, int64_t lda, int32_t trans,
               float *out) {
  constexpr int MR = kIsaTiles[Isa].mr;
  const int64_t rs = trans ? 1 : lda, cs = trans ? lda : 1;
  for (int64_t i = 0; i < m; i += MR, out += k * MR) {
    const int mr = static_cast<int>(minI(MR, m - i));
    packAPanelT<MR>(a, rs, cs, i, mr, 0, k, out);
    if (mr < MR)
      for (int64_t p = 0; p < k; ++p)
        zeroShort(out + p * MR + mr, MR - mr);
  }
}

template <int Isa>
void packBFull(int64_t k, int64_t n, const float *b, int64_t ldb, int32_t trans,
               float *out) {
  const MatrixB src = {b, ldb, trans != 0};
  constexpr IsaTiles t = kIsaTiles[Isa];
  packBMatrixT<t.nr, t.vl>(&src, 0, k, 0, n, out, k * t.nr);
}

} // namespace

void packAPanel(const float *a, int64_t rs, int64_t cs, int64_t i0, int mr,
                int64_t k0, int64_t kc, float *dst) {
  packAPanelT<kMR>(a, rs, cs, i0, mr, k0, kc, dst);
}

void packAPanelsTransposed(const float *a, int64_t cs, int64_t i0, int64_t rows,
                           int64_t k0, int64_t kc, float *dst) {
  const int64_t full = rows / kMR, rest = rows % kMR;
  for (int64_t p = 0; p < kc; ++p) {
    const float *src = a + (k0 + p) * cs + i0;
    float *out = dst + p * kMR;
    for (int64_t q = 0; q < full; ++q) {
      TCC_UK_UNROLL
      for (int i = 0; i < kMR; ++i)
        out[q * kc * kMR + i] = src[q * kMR + i];
    }
    if (rest)
      copyShort(out + full * kc * kMR, src + full * kMR, rest);
  }
}

void packBMatrix(const void *src, int64_t k0, int64_t kc, int64_t j0,
                 int64_t nc, float *dst, int64_t panelStride) {
  packBMatrixT<kNR, kVL>(src, k0, kc, j0, nc, dst, panelStride);
}

void packBPrologue(const void *src, int64_t k0, int64_t kc, int64_t j0,
                   int64_t nc, float *dst, int64_t panelStride) {
  const PrologueB &m = *static_cast<const PrologueB *>(src);
  // Row by row, as packBMatrixT: long sequential reads of the source. The
  // lower bound is 0 with the ReLU, else -inf; vclamp keeps a NaN input
  // NaN.
  const vf lo = vset1(m.relu ? 0.0f : -__builtin_inff());
  const vf hi = vset1(__builtin_inff());
  auto apply = [&](vf x, vf scale, vf shift) {
    return vclamp(vfma(x, scale, shift), lo, hi);
  };
  for (int64_t r = 0; r < kc; ++r) {
    const int64_t p = k0 + r;
    const vf scale = vset1(m.scale ? m.scale[p] : 1.0f);
    const vf shift = vset1(m.shift ? m.shift[p] : 0.0f);
    const float *s = m.b + p * m.ldb + j0;
    for (int64_t j = 0; j < nc; j += kNR) {
      float *d = dst + (j / kNR) * panelStride + r * kNR;
      const int64_t w = minI(kNR, nc - j);
      TCC_UK_UNROLL
      for (int v = 0; v < kNR / kVL; ++v) {
        const int64_t at = v * kVL;
        if (at + kVL <= w) {
          vstore(d + at, apply(vload(s + j + at), scale, shift));
          continue;
        }
        // Columns past the row stay zero, not transformed.
        vstore(d + at, vzero());
        if (at < w) {
          const vmask mk = vmaskFirst(static_cast<int>(w - at));
          vstoreFirst(d + at, apply(vloadMask(s + j + at, mk), scale, shift),
                      mk);
        }
      }
    }
  }
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int64_t tcc_uk_pack_a_bytes(int32_t isa, int64_t m, int64_t k) {
  const int64_t mr = tilesFor(isa).mr;
  return ceilDiv(m, mr) * mr * k * static_cast<int64_t>(sizeof(float));
}

extern "C" void tcc_uk_pack_a(int32_t isa, int64_t m, int64_t k, const float *a,
                              int64_t lda, int32_t trans, float *out) {
  switch (isa) {
  case TCC_UK_ISA_AVX2:
    return packAFull<TCC_UK_ISA_AVX2>(m, k, a, lda, trans, out);
  case TCC_UK_ISA_AVX512:
    return packAFull<TCC_UK_ISA_AVX512>(m, k, a, lda, trans, out);
  default:
    return packAFull<TCC_UK_ISA_GENERIC>(m, k, a, lda, trans, out);
  }
}

extern "C" int64_t tcc_uk_pack_b_bytes(int32_t isa, int64_t k, int64_t n) {
  const IsaTiles &t = tilesFor(isa);
  return compactBFloats(k, n, t.nr, t.vl) * static_cast<int64_t>(sizeof(float));
}

extern "C" void tcc_uk_pack_b(int32_t isa, int64_t k, int64_t n, const float *b,
                              int64_t ldb, int32_t trans, float *out) {
  switch (isa) {
  case TCC_UK_ISA_AVX2:
    return packBFull<TCC_UK_ISA_AVX2>(k, n, b, ldb, trans, out);
  case TCC_UK_ISA_AVX512:
    return packBFull<TCC_UK_ISA_AVX512>(k, n, b, ldb, trans, out);
  default:
    return packBFull<TCC_UK_ISA_GENERIC>(k, n, b, ldb, trans, out);
  }
}
