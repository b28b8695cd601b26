// simd.h - the few vector operations the kernels use, for the ISA this build
// targets: AVX-512 (16 lanes), AVX2+FMA (8 lanes) or portable 4-lane GCC
// vectors that any compiler lowers to SSE2 or scalar code.
//
// vf is a vector of kVL floats; vmask selects its first lanes, for the
// partial vectors at the right edge of a matrix (masked loads never touch
// memory past the selected lanes).
#ifndef TCC_RUNTIME_UKERNELS_SIMD_H
#define TCC_RUNTIME_UKERNELS_SIMD_H

#include "uk_internal.h"

#include <string.h>

#if TCC_UK_NATIVE_ISA != 0
#include <immintrin.h>
#endif

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

#if TCC_UK_NATIVE_ISA == 2

typedef __m512 vf;
typedef __mmask16 vmask;
TCC_UK_INLINE vf vzero() { return _mm512_setzero_ps(); }
TCC_UK_INLINE vf vset1(float x) { return _mm512_set1_ps(x); }
TCC_UK_INLINE vf vload(const float *p) { return _mm512_loadu_ps(p); }
TCC_UK_INLINE void vstore(float *p, vf x) { _mm512_storeu_ps(p, x); }
/// The first n lanes, 0 <= n <= kVL.
TCC_UK_INLINE vmask vmaskFirst(int n) {
  return static_cast<vmask>((1u << n) - 1u);
}
TCC_UK_INLINE vf vloadMask(const float *p, vmask m) {
  return _mm512_maskz_loadu_ps(m, p);
}
TCC_UK_INLINE void vstoreMask(float *p, vf x, vmask m) {
  _mm512_mask_storeu_ps(p, m, x);
}
TCC_UK_INLINE void vstoreFirst(float *p, vf x, vmask m) { vstoreMask(p, x, m); }
/// a * b + c, rounded once.
TCC_UK_INLINE vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
TCC_UK_INLINE vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
TCC_UK_INLINE vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
TCC_UK_INLINE vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
TCC_UK_INLINE vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
/// min(max(x, lo), hi); (v)maxps/minps return their second operand when
/// either is NaN, so a NaN in x survives.
TCC_UK_INLINE vf vclamp(vf x, vf lo, vf hi) {
  return _mm512_min_ps(hi, _mm512_max_ps(lo, x));
}
TCC_UK_INLINE vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
TCC_UK_INLINE vf vabs(vf x) { return _mm512_abs_ps(x); }
/// x rounded to the nearest integer (ties to even).
TCC_UK_INLINE vf vround(vf x) {
  return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/// x * 2^n for integer-valued n in [-126, 127].
TCC_UK_INLINE vf vldexp(vf x, vf n) { return _mm512_scalef_ps(x, n); }
/// where(c < 0, a, b).
TCC_UK_INLINE vf vselectNegative(vf c, vf a, vf b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, vzero(), _CMP_LT_OQ), b, a);
}

#elif TCC_UK_NATIVE_ISA == 1

typedef __m256 vf;
typedef __m256i vmask;
TCC_UK_INLINE vf vzero() { return _mm256_setzero_ps(); }
TCC_UK_INLINE vf vset1(float x) { return _mm256_set1_ps(x); }
TCC_UK_INLINE vf vload(const float *p) { return _mm256_loadu_ps(p); }
TCC_UK_INLINE void vstore(float *p, vf x) { _mm256_storeu_ps(p, x); }
TCC_UK_INLINE vmask vmaskFirst(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
TCC_UK_INLINE vf vloadMask(const float *p, vmask m) {
  return _mm256_maskload_ps(p, m);
}
TCC_UK_INLINE void vstoreMask(float *p, vf x, vmask m) {
  _mm256_maskstore_ps(p, m, x);
}
/// vstoreMask for a result not read back soon, as a half, a pair and a
/// single plain store: AMD microcodes the masked vector store. Where the
/// same lanes are read back at once (a GEMM tile's C between K blocks),
/// the narrow stores cannot forward to the wide load: keep vstoreMask
/// there (docs/depthwise.md, "Depthwise", has the measurements).
TCC_UK_INLINE void vstoreFirst(float *p, vf x, vmask m) {
  int n = __builtin_popcount(
      static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m))));
  if (n == 8) {
    _mm256_storeu_ps(p, x);
    return;
  }
  __m128 part = _mm256_castps256_ps128(x);
  if (n >= 4) {
    _mm_storeu_ps(p, part);
    part = _mm256_extractf128_ps(x, 1);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi(reinterpret_cast<__m64 *>(p), part);
    part = _mm_movehl_ps(part, part);
    p += 2;
    n -= 2;
  }
  if (n == 1)
    _mm_store_ss(p, part);
}
TCC_UK_INLINE vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
TCC_UK_INLINE vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
TCC_UK_INLINE vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
TCC_UK_INLINE vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
TCC_UK_INLINE vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
TCC_UK_INLINE vf vclamp(vf x, vf lo, vf hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, x));
}
TCC_UK_INLINE vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
TCC_UK_INLINE vf vabs(vf x) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
TCC_UK_INLINE vf vround(vf x) {
  return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
TCC_UK_INLINE vf vldexp(vf x, vf n) {
  const __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(x, _mm256_castsi256_ps(e));
}
TCC_UK_INLINE vf vselectNegative(vf c, vf a, vf b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(c, vzero(), _CMP_LT_OQ));
}

#else

typedef float vf __attribute__((vector_size(16)));
typedef int vmask; // the number of lanes
TCC_UK_INLINE vf vzero() { return vf{0.0f, 0.0f, 0.0f, 0.0f}; }
TCC_UK_INLINE vf vset1(float x) { return vf{x, x, x, x}; }
TCC_UK_INLINE vf vload(const float *p) {
  vf x;
  memcpy(&x, p, sizeof(x));
  return x;
}
TCC_UK_INLINE void vstore(float *p, vf x) { memcpy(p, &x, sizeof(x)); }
TCC_UK_INLINE vmask vmaskFirst(int n) { return n; }
TCC_UK_INLINE vf vloadMask(const float *p, vmask m) {
  vf x = vzero();
  for (int i = 0; i < m; ++i)
    x[i] = p[i];
  return x;
}
TCC_UK_INLINE void vstoreMask(float *p, vf x, vmask m) {
  for (int i = 0; i < m; ++i)
    p[i] = x[i];
}
TCC_UK_INLINE void vstoreFirst(float *p, vf x, vmask m) { vstoreMask(p, x, m); }
/// Two roundings: x86-64 without FMA has no fused instruction, and a libm
/// fmaf call per element would be far slower.
TCC_UK_INLINE vf vfma(vf a, vf b, vf c) { return a * b + c; }
TCC_UK_INLINE vf vadd(vf a, vf b) { return a + b; }
TCC_UK_INLINE vf vsub(vf a, vf b) { return a - b; }
TCC_UK_INLINE vf vmul(vf a, vf b) { return a * b; }
TCC_UK_INLINE vf vmax(vf a, vf b) {
  for (int i = 0; i < 4; ++i)
    a[i] = b[i] > a[i] ? b[i] : a[i];
  return a;
}
TCC_UK_INLINE vf vclamp(vf x, vf lo, vf hi) {
  for (int i = 0; i < 4; ++i) {
    float v = x[i];
    v = lo[i] > v ? lo[i] : v; // NaN stays NaN, as with maxps(lo, x)
    x[i] = hi[i] < v ? hi[i] : v;
  }
  return x;
}
TCC_UK_INLINE vf vdiv(vf a, vf b) { return a / b; }
TCC_UK_INLINE vf vabs(vf x) {
  for (int i = 0; i < 4; ++i)
    x[i] = x[i] < 0 ? -x[i] : x[i];
  return x;
}
/// Adding and subtracting 1.5 * 2^23 rounds to an integer (ties to even)
/// for |x| < 2^22, which is all vexp needs.
TCC_UK_INLINE vf vround(vf x) {
  const vf magic = vset1(12582912.0f);
  return (x + magic) - magic;
}
TCC_UK_INLINE vf vldexp(vf x, vf n) {
  for (int i = 0; i < 4; ++i) {
    const uint32_t bits = static_cast<uint32_t>(static_cast<int>(n[i]) + 127)
                          << 23;
    float scale;
    memcpy(&scale, &bits, sizeof(scale));
    x[i] *= scale;
  }
  return x;
}
TCC_UK_INLINE vf vselectNegative(vf c, vf a, vf b) {
  for (int i = 0; i < 4; ++i)
    b[i] = c[i] < 0 ? a[i] : b[i];
  return b;
}

#endif

/// exp(x), within about 2 ulp: x = n ln2 + r with |r| <= ln2/2 (ln2 in two
/// parts), exp(r) by its Taylor polynomial to r^6, times 2^n. Inputs are
/// clamped to [-87, 88], where the result stays normal and finite.
TCC_UK_INLINE vf vexp(vf x) {
  x = vclamp(x, vset1(-87.0f), vset1(88.0f));
  const vf n = vround(vmul(x, vset1(1.44269504088896341f)));
  vf r = vfma(n, vset1(-0.693145751953125f), x);
  r = vfma(n, vset1(-1.428606765330187045e-06f), r);
  vf p = vset1(1.0f / 720);
  p = vfma(p, r, vset1(1.0f / 120));
  p = vfma(p, r, vset1(1.0f / 24));
  p = vfma(p, r, vset1(1.0f / 6));
  p = vfma(p, r, vset1(0.5f));
  p = vfma(p, r, vset1(1.0f));
  p = vfma(p, r, vset1(1.0f));
  return vldexp(p, n);
}

/// GELU, x Phi(x) = h + h erf(z), h = x/2, z = x/sqrt 2, with erf(z) =
/// z P(z^2) / Q(z^2) on |z| <= 4 (z clamped there, where erf is 1 in
/// float), P of degree 6 and Q of degree 4 fitted to erf's relative error
/// (6.5e-8, 3.8e-7 evaluated in float): 18 vector operations and no exp,
/// where erfc's form (Abramowitz and Stegun 7.1.26: a division, a
/// polynomial and an exp) took 33, a large share of a product with a GELU
/// epilogue and few K (docs/ukernels.md). Below 0, h + h
/// erf(z) cancels: the error is then absolute, within 2e-7 |x| (PyTorch's
/// own 0.5 x (1 + erf(x / sqrt 2)) likewise), and no subnormal arises (1 +
/// erf(z) is 0 or at least 2^-24).
TCC_UK_INLINE vf vgelu(vf x) {
  const vf z =
      vclamp(vmul(x, vset1(0.70710678118654752f)), vset1(-4.0f), vset1(4.0f));
  const vf t = vmul(z, z);
  vf p = vset1(1.911105883e-08f);
  p = vfma(p, t, vset1(-1.942485619e-06f));
  p = vfma(p, t, vset1(1.473195489e-04f));
  p = vfma(p, t, vset1(3.991857056e-03f));
  p = vfma(p, t, vset1(5.15289295e-02f));
  p = vfma(p, t, vset1(2.071545107e-01f));
  p = vfma(p, t, vset1(1.128379094f));
  vf q = vset1(1.021430708e-03f);
  q = vfma(q, t, vset1(1.496066536e-02f));
  q = vfma(q, t, vset1(1.179829923e-01f));
  q = vfma(q, t, vset1(5.169171513e-01f));
  q = vfma(q, t, vset1(1.0f));
  const vf h = vmul(x, vset1(0.5f));
  return vfma(h, vdiv(vmul(z, p), q), h);
}

/// GELU's tanh form: 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)),
/// u = sqrt(2/pi) (x + 0.044715 x^3).
TCC_UK_INLINE vf vgeluTanh(vf x) {
  const vf x2 = vmul(x, x);
  const vf u2 = vmul(vmul(x, vfma(vset1(0.044715f), x2, vset1(1.0f))),
                     vset1(-1.5957691216057308f)); // -2 sqrt(2/pi)
  return vdiv(x, vadd(vset1(1.0f), vexp(u2)));
}

/// SiLU (swish), x * sigmoid(x) = x / (1 + exp(-x)), within about 3 ulp
/// (5.3 float epsilons of relative error at most from -100 to 100 against
/// double; vexp's form had 5.8), with an exp of its own that the
/// expansions and depthwise layers of SiLU networks spend much of their
/// time in: e^-x = 2^n e^r, n = round(-x log2 e) by an FMA that adds
/// 1.5 * 2^23 to the exact product (one rounding, to the integer) and a
/// subtraction, r = -x - n ln2 in one FMA (ln2 rounded to float is off by
/// 1.9e-9, so |n| <= 126 keeps r within 2.4e-7 of its value; without FMA,
/// the generic build, in two parts as vexp), e^r by its
/// degree-5 minimax polynomial on [-ln2/2, ln2/2] (relative error 7.5e-8;
/// the polynomial in rn = -r, its odd coefficients negated), and a
/// division, which ran faster here than the reciprocal estimate and its
/// Newton step: 12 vector operations where the other form took 20. x is first
/// clamped to |x| <= 126 keeping its sign; on AVX-512 scalef then saturates
/// e^-x to infinity far below 0 (x / inf = -0, and -inf / inf NaN, as x *
/// sigmoid(x)); elsewhere vldexp's scales stop at 2^127, so x is clamped to |x|
/// <= 87 and the result below -87 is 0 (|x e^x| < 1.4e-36 there).
TCC_UK_INLINE vf vsilu(vf x) {
#if TCC_UK_NATIVE_ISA == 2
  // min(|x|, 126) with the sign of x (vrangeps: the smaller magnitude).
  const vf xc = _mm512_range_ps(x, vset1(126.0f), 0x02);
#else
  const vf xc = vclamp(x, vset1(-87.0f), vset1(87.0f));
#endif
  const vf magic = vset1(12582912.0f); // 1.5 * 2^23
  const vf n = vsub(vfma(xc, vset1(-1.44269504088896341f), magic), magic);
#if TCC_UK_NATIVE_ISA == 0
  // No FMA here: ln2 in two parts, n times the first exact (vexp's).
  vf rn = vfma(n, vset1(0.693145751953125f), xc); // -r
  rn = vfma(n, vset1(1.428606765330187045e-06f), rn);
#else
  const vf rn = vfma(n, vset1(0.693147180559945309f), xc); // -r
#endif
  vf p = vset1(-0.00829765492891f);
  p = vfma(p, rn, vset1(0.0419153828836f));
  p = vfma(p, rn, vset1(-0.166675747364f));
  p = vfma(p, rn, vset1(0.499988948434f));
  p = vfma(p, rn, vset1(-0.999999691988f));
  p = vfma(p, rn, vset1(1.00000007166f));
  const vf y = vdiv(x, vadd(vset1(1.0f), vldexp(p, n)));
#if TCC_UK_NATIVE_ISA == 2
  return y;
#else
  return vselectNegative(vadd(x, vset1(87.0f)), vzero(), y);
#endif
}

/// Hard swish, x * relu6(x + 3) / 6, as ONNX's HardSwish computes it:
/// x * clamp(x / 6 + 1/2, 0, 1).
TCC_UK_INLINE vf vhardswish(vf x) {
  return vmul(
      x, vclamp(vfma(x, vset1(1.0f / 6), vset1(0.5f)), vzero(), vset1(1.0f)));
}

/// The epilogue's activation (TCC_UK_ACT_*).
TCC_UK_INLINE vf vactivate(int act, vf x) {
  return act == TCC_UK_ACT_GELU        ? vgelu(x)
         : act == TCC_UK_ACT_GELU_TANH ? vgeluTanh(x)
         : act == TCC_UK_ACT_SILU      ? vsilu(x)
         : act == TCC_UK_ACT_HARDSWISH ? vhardswish(x)
                                       : x;
}

/// Whether `act` is an activation the kernels know (TCC_UK_ACT_*).
TCC_UK_INLINE bool knownActivation(int32_t act) {
  return act >= TCC_UK_ACT_NONE && act <= TCC_UK_ACT_HARDSWISH;
}

/// dst[0:n] = src[0:n] and dst[0:n] = 0 for the short runs of packing and
/// padding: masked vector moves, which the compiler cannot turn into libc
/// calls (a memset call costs more than zeroing a few dozen floats).
TCC_UK_INLINE void copyShort(float *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + kVL <= n; i += kVL)
    vstore(dst + i, vload(src + i));
  if (i < n) {
    const vmask m = vmaskFirst(static_cast<int>(n - i));
    vstoreMask(dst + i, vloadMask(src + i, m), m);
  }
}
TCC_UK_INLINE void zeroShort(float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + kVL <= n; i += kVL)
    vstore(dst + i, vzero());
  if (i < n)
    vstoreMask(dst + i, vzero(), vmaskFirst(static_cast<int>(n - i)));
}

/// dst[t] = src[2t] for t < n, the input columns of a stride-2 convolution.
/// Reads nothing past src[2n-2].
TCC_UK_INLINE void copyEven(float *dst, const float *src, int64_t n) {
  int64_t t = 0;
#if TCC_UK_NATIVE_ISA == 2
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                         22, 24, 26, 28, 30);
  for (; t + 16 < n; t += 16) // src[2t + 31] is at most src[2n - 3]
    _mm512_storeu_ps(dst + t,
                     _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * t), even,
                                            _mm512_loadu_ps(src + 2 * t + 16)));
  if (t < n) { // the last 1..16: 2(n-t)-1 floats, under masks
    const int last = static_cast<int>(2 * (n - t) - 1);
    const __m512 lo =
        _mm512_maskz_loadu_ps(vmaskFirst(last < 16 ? last : 16), src + 2 * t);
    const __m512 hi = _mm512_maskz_loadu_ps(
        vmaskFirst(last > 16 ? last - 16 : 0), src + 2 * t + 16);
    _mm512_mask_storeu_ps(dst + t, vmaskFirst(static_cast<int>(n - t)),
                          _mm512_permutex2var_ps(lo, even, hi));
    return;
  }
#elif TCC_UK_NATIVE_ISA == 1
  for (; t + 8 < n; t += 8) {
    const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(src + 2 * t),
                                       _mm256_loadu_ps(src + 2 * t + 8), 0x88);
    _mm256_storeu_ps(dst + t, _mm256_castpd_ps(_mm256_permute4x64_pd(
                                  _mm256_castps_pd(e), 0xD8)));
  }
#endif
  for (; t < n; ++t)
    dst[t] = src[2 * t];
}

/// Transposes kVL vectors in place: lane j of r[i] goes to lane i of r[j]
/// (kVL rows of kVL floats become kVL columns). AVX-512 in four rounds of
/// sixteen shuffles, AVX2 in three of eight.
TCC_UK_INLINE void vtranspose(vf (&r)[kVL]) {
#if TCC_UK_NATIVE_ISA == 2
  __m512 t[16];
  // Pairs of rows interleaved, then quads: r[4i+k] holds, in 128-bit lane
  // q, column 4q + k of rows 4i..4i+3.
  TCC_UK_UNROLL
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  TCC_UK_UNROLL
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]);
    const __m512d b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // 128-bit lanes: even and odd ones of row quads 0 and 1 (2 and 3), then
  // of those pairs.
  TCC_UK_UNROLL
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
    t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xDD);
    t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xDD);
  }
  TCC_UK_UNROLL
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD);
    r[4 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xDD);
  }
#elif TCC_UK_NATIVE_ISA == 1
  __m256 t[8];
  TCC_UK_UNROLL
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  TCC_UK_UNROLL
  for (int i = 0; i < 2; ++i) {
    r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  TCC_UK_UNROLL
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x20);
    t[4 + k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x31);
  }
  TCC_UK_UNROLL
  for (int k = 0; k < 8; ++k)
    r[k] = t[k];
#else
  float m[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      m[j][i] = r[i][j];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      r[i][j] = m[i][j];
#endif
}

/// Loads and transposes a kVL x kVL block: row i is rows[i][0:kVL], and
/// r[j] becomes its column j (lane i from row i), as kVL loads and
/// vtranspose would make it. On AVX-512 the 128-bit lane moves are made by
/// the loads (each vector gathers a 4-float chunk of four rows, 16 rows
/// apart in its lanes, as one load and three inserts from memory, which
/// run beside the shuffles rather than on their port), leaving two rounds
/// of in-lane shuffles: 32 shuffles instead of 64.
TCC_UK_INLINE void vtransposeLoad(vf (&r)[kVL], const float *const *rows) {
#if TCC_UK_NATIVE_ISA == 2
  TCC_UK_UNROLL
  for (int c = 0; c < 4; ++c) {
    // v[i], lane q: floats 4c..4c+3 of row i + 4q.
    __m512 v[4];
    TCC_UK_UNROLL
    for (int i = 0; i < 4; ++i) {
      __m512 x = _mm512_castps128_ps512(_mm_loadu_ps(rows[i] + 4 * c));
      x = _mm512_insertf32x4(x, _mm_loadu_ps(rows[i + 4] + 4 * c), 1);
      x = _mm512_insertf32x4(x, _mm_loadu_ps(rows[i + 8] + 4 * c), 2);
      v[i] = _mm512_insertf32x4(x, _mm_loadu_ps(rows[i + 12] + 4 * c), 3);
    }
    // A 4 x 4 transpose in each lane: lane q of r[4c + k] is column
    // 4c + k of rows 4q..4q+3.
    const __m512 t0 = _mm512_unpacklo_ps(v[0], v[1]);
    const __m512 t1 = _mm512_unpackhi_ps(v[0], v[1]);
    const __m512 t2 = _mm512_unpacklo_ps(v[2], v[3]);
    const __m512 t3 = _mm512_unpackhi_ps(v[2], v[3]);
    r[4 * c] = _mm512_castpd_ps(
        _mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    r[4 * c + 1] = _mm512_castpd_ps(
        _mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    r[4 * c + 2] = _mm512_castpd_ps(
        _mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    r[4 * c + 3] = _mm512_castpd_ps(
        _mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
  }
#else
  TCC_UK_UNROLL
  for (int i = 0; i < kVL; ++i)
    r[i] = vload(rows[i]);
  vtranspose(r);
#endif
}

#if TCC_UK_NATIVE_ISA == 2
/// The lanes l of row[at + l] (16 of them) that lie inside [0, w).
TCC_UK_INLINE __mmask16 colsMask(int64_t w, int64_t at) {
  const int64_t lo = at < 0 ? minI(16, -at) : 0;
  const int64_t hi = maxI(0, minI(16, w - at));
  return hi > lo
             ? static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u))
             : 0;
}

/// row[at + l] for the 16 lanes l, `fill` where at + l lies outside [0, w).
TCC_UK_INLINE __m512 loadColsOr(const float *row, int64_t w, int64_t at,
                                __m512 fill) {
  if (at >= 0 && at + 16 <= w)
    return _mm512_loadu_ps(row + at);
  return _mm512_mask_loadu_ps(fill, colsMask(w, at), row + at);
}

/// row[at + l] for the 16 lanes l, zero where at + l lies outside [0, w):
/// the taps of a convolution read straight from an input row, with masked
/// loads at its edges (a zero-padded copy of the row, read back at once,
/// would stall every load behind its masked stores).
TCC_UK_INLINE __m512 loadCols(const float *row, int64_t w, int64_t at) {
  return loadColsOr(row, w, at, _mm512_setzero_ps());
}

/// Columns at, at+2, ..., at+30 (even) and at+1, ..., at+31 (odd) of a row,
/// zeros outside [0, w): the taps of a stride-2 window, split by parity in
/// registers.
TCC_UK_INLINE void loadColsByParity(const float *row, int64_t w, int64_t at,
                                    __m512 &even, __m512 &odd) {
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                            20, 22, 24, 26, 28, 30);
  const __m512i oddIdx = _mm512_add_epi32(evenIdx, _mm512_set1_epi32(1));
  const __m512 lo = loadCols(row, w, at), hi = loadCols(row, w, at + 16);
  even = _mm512_permutex2var_ps(lo, evenIdx, hi);
  odd = _mm512_permutex2var_ps(lo, oddIdx, hi);
}
#elif TCC_UK_NATIVE_ISA == 1
/// The lanes l of row[at + l] (8 of them) that lie inside [0, w).
TCC_UK_INLINE __m256i colsMask(int64_t w, int64_t at) {
  const __m256i col =
      _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(at)),
                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_andnot_si256(
      _mm256_cmpgt_epi32(_mm256_setzero_si256(), col),
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(w)), col));
}

/// row[at + l] for the 8 lanes l, zero where at + l lies outside [0, w)
/// (masked loads do not fault on the lanes they leave out).
TCC_UK_INLINE vf loadCols(const float *row, int64_t w, int64_t at) {
  if (at >= 0 && at + 8 <= w)
    return _mm256_loadu_ps(row + at);
  return _mm256_maskload_ps(row + at, colsMask(w, at));
}

/// row[at + l] for the 8 lanes l, `fill` where at + l lies outside [0, w).
TCC_UK_INLINE vf loadColsOr(const float *row, int64_t w, int64_t at, vf fill) {
  if (at >= 0 && at + 8 <= w)
    return _mm256_loadu_ps(row + at);
  const __m256i inside = colsMask(w, at);
  return _mm256_blendv_ps(fill, _mm256_maskload_ps(row + at, inside),
                          _mm256_castsi256_ps(inside));
}

/// Columns at, at+2, ..., at+14 (even) and at+1, ..., at+15 (odd) of a
/// row, zeros outside [0, w).
TCC_UK_INLINE void loadColsByParity(const float *row, int64_t w, int64_t at,
                                    vf &even, vf &odd) {
  const vf a = loadCols(row, w, at), b = loadCols(row, w, at + 8);
  // Per 128-bit lane [a0 a2 b0 b2], then the lanes' halves in order.
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}
#else
TCC_UK_INLINE vf loadCols(const float *row, int64_t w, int64_t at) {
  vf x = vzero();
  for (int l = 0; l < 4; ++l)
    if (at + l >= 0 && at + l < w)
      x[l] = row[at + l];
  return x;
}
TCC_UK_INLINE void loadColsByParity(const float *row, int64_t w, int64_t at,
                                    vf &even, vf &odd) {
  const vf a = loadCols(row, w, at), b = loadCols(row, w, at + 4);
  even = __builtin_shufflevector(a, b, 0, 2, 4, 6);
  odd = __builtin_shufflevector(a, b, 1, 3, 5, 7);
}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

#endif // TCC_RUNTIME_UKERNELS_SIMD_H
