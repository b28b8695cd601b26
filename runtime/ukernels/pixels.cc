// pixels.cc - convolutions of one group with very few taps a pixel (a
// 1-channel image's 3x3: 9), stride 1, with the output pixels along the
// vectors (AVX-512):
//
//   y[f, oy, ox..ox+15] = sum over taps t = (c, ky, kx) of
//                         W[f, t] * x[c, oy - pt + ky dh, ox - pl + kx dw ..]
//
// For each vector of 16 outputs of a row, the taps' input vectors are
// loaded once (masked at the image's edges, zero outside it) and kept in
// registers; then 8 filters at a time take 9 FMAs each with their weights
// broadcast from memory, and their vectors go straight to the filters'
// planes through the epilogue. The im2col GEMM of k = 9 spent more on its
// tile's loads and stores and on packing than on its 9 multiply-adds, and
// the filters along the vectors spent as much on the transposes (direct.cc).
// The weights are used as they lie ([f][c][kh][kw]).
#include "depthwise_internal.h"

#include <utility>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Taps a pixel the kernel keeps in registers, and filters a pass.
constexpr int kPixelsMaxTaps = 9;
constexpr int kPixelsFilters = 8;

} // namespace

bool pixelsPoolFits(int32_t isa, const ConvShape &s) {
  return pixelsFits(isa, s) && s.f % 4 == 0 && s.oh >= 2 && s.ow >= 2;
}

bool pixelsFits(int32_t isa, const ConvShape &s) {
  const int64_t taps = s.cg * s.kh * s.kw;
  return isa == TCC_UK_ISA_AVX512 && s.groups == 1 && s.sh == 1 && s.sw == 1 &&
         s.kh * s.kw > 1 && taps <= kPixelsMaxTaps && s.f % 8 == 0 &&
         s.oh > 0 && s.ow > 0;
}

#if TCC_UK_NATIVE_ISA == 2
namespace {

struct PixelsJob : ConvCall {
  int64_t bandRows, bands;
  bool pooled; // 2x2 max pooling in the epilogue: bands of pooled rows
};

/// Tap t = (c, ky, kx) reads input channel tc[t] (its offset), row
/// oy - pt + ty[t] and columns ox - pl + tx[t].
void tapOffsets(const ConvShape &s, int64_t *tc, int64_t *ty, int64_t *tx) {
  int t = 0;
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t ky = 0; ky < s.kh; ++ky)
      for (int64_t kx = 0; kx < s.kw; ++kx, ++t) {
        tc[t] = c * s.h * s.w;
        ty[t] = ky * s.dh;
        tx[t] = kx * s.dw;
      }
}

/// Output rows [oy0, oy1) of image img, T taps a pixel: tap t reads input
/// channel tc[t], row oy - pt + ty[t], columns ox - pl + tx[t] ...
template <int T, bool Plain>
void pixelsRows(const PixelsJob &job, int64_t img, int64_t oy0, int64_t oy1) {
  const ConvShape &s = *job.s;
  int64_t tc[T], ty[T], tx[T];
  tapOffsets(s, tc, ty, tx);
  const int64_t plane = s.oh * s.ow;
  const float *x = job.input + img * s.c * s.h * s.w;
  float *y = job.output + img * s.f * plane;
  const float *res = job.residual ? job.residual + img * s.f * plane : NULL;
  const float *bias = job.ep ? job.ep->bias : NULL;
  const vf lo = vset1(job.e.lo), hi = vset1(job.e.hi);
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    const int64_t iy0 = oy - s.pt;
    bool inside[T];
    TCC_UK_UNROLL
    for (int t = 0; t < T; ++t)
      inside[t] = iy0 + ty[t] >= 0 && iy0 + ty[t] < s.h;
    for (int64_t ox0 = 0; ox0 < s.ow; ox0 += 16) {
      vf taps[T];
      TCC_UK_UNROLL
      for (int t = 0; t < T; ++t) {
        const int64_t ix = ox0 - s.pl + tx[t];
        taps[t] =
            inside[t]
                ? _mm512_maskz_loadu_ps(colsMask(s.w, ix),
                                        x + tc[t] + (iy0 + ty[t]) * s.w + ix)
                : vzero();
      }
      const int64_t at = oy * s.ow + ox0;
      const bool full = ox0 + 16 <= s.ow;
      const vmask m = vmaskFirst(static_cast<int>(minI(16, s.ow - ox0)));
      // Plain: a vector past the row's end is stored whole where what it
      // spills lands on rows this task writes later (the masked stores took
      // 40% of the kernel at 28 columns).
      const bool whole =
          full || (Plain && ox0 + 16 - s.ow <= (oy1 - 1 - oy) * s.ow);
      for (int64_t f0 = 0; f0 < s.f; f0 += kPixelsFilters) {
        const float *w = job.weight + f0 * T;
        vf acc[kPixelsFilters];
        TCC_UK_UNROLL
        for (int i = 0; i < kPixelsFilters; ++i) // Plain: from the bias
          acc[i] = vfma(vset1(w[i * T]), taps[0],
                        Plain && bias ? vset1(bias[f0 + i]) : vzero());
        TCC_UK_UNROLL
        for (int u = 1; u < T; ++u)
          TCC_UK_UNROLL
        for (int i = 0; i < kPixelsFilters; ++i)
          acc[i] = vfma(vset1(w[i * T + u]), taps[u], acc[i]);
        if (Plain) {
          TCC_UK_UNROLL
          for (int i = 0; i < kPixelsFilters; ++i) {
            const vf r = job.e.clamp ? vclamp(acc[i], lo, hi) : acc[i];
            if (whole)
              vstore(y + (f0 + i) * plane + at, r);
            else
              vstoreMask(y + (f0 + i) * plane + at, r, m);
          }
          continue;
        }
        TCC_UK_UNROLL
        for (int i = 0; i < kPixelsFilters; ++i) {
          const int64_t off = (f0 + i) * plane + at;
          finishInto(y + off, acc[i], res ? res + off : NULL, full, m, job.e,
                     bias ? vset1(bias[f0 + i]) : vzero(), lo, hi);
        }
      }
    }
  }
}

/// Pooled rows [py0, py1) of image img with the 2x2, stride-2 max pooling
/// after the convolution done in registers: for 16 convolution columns of
/// both rows of a window, kPooledFilters filters at a time, the rows' maximum,
/// then each pair of columns', packed into 8 pooled outputs. The bias and the
/// clamp come after the pooling (both keep order, so they commute with max).
template <int T>
void pixelsPooled(const PixelsJob &job, int64_t img, int64_t py0, int64_t py1) {
  constexpr int kPooledFilters = 4; // 2 x 9 taps + 2 x 4 sums in registers
  const ConvShape &s = *job.s;
  int64_t tc[T], ty[T], tx[T];
  tapOffsets(s, tc, ty, tx);
  const int64_t ph = s.oh / 2, pw = s.ow / 2, plane = ph * pw;
  const float *x = job.input + img * s.c * s.h * s.w;
  float *y = job.output + img * s.f * plane;
  const float *bias = job.ep ? job.ep->bias : NULL;
  const vf lo = vset1(job.e.lo), hi = vset1(job.e.hi);
  // Lane 2i of a pair's maximum goes to lane i.
  const __m512i evens =
      _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t py = py0; py < py1; ++py) {
    bool inside[2][T];
    for (int r = 0; r < 2; ++r) {
      const int64_t iy0 = 2 * py + r - s.pt;
      TCC_UK_UNROLL
      for (int t = 0; t < T; ++t)
        inside[r][t] = iy0 + ty[t] >= 0 && iy0 + ty[t] < s.h;
    }
    for (int64_t ox0 = 0; ox0 < 2 * pw; ox0 += 16) {
      vf taps[2][T];
      for (int r = 0; r < 2; ++r) {
        const int64_t iy0 = 2 * py + r - s.pt;
        TCC_UK_UNROLL
        for (int t = 0; t < T; ++t) {
          const int64_t ix = ox0 - s.pl + tx[t];
          taps[r][t] =
              inside[r][t]
                  ? _mm512_maskz_loadu_ps(colsMask(s.w, ix),
                                          x + tc[t] + (iy0 + ty[t]) * s.w + ix)
                  : vzero();
        }
      }
      const int64_t px0 = ox0 / 2;
      const int outs = static_cast<int>(minI(8, pw - px0));
      const __mmask8 m = static_cast<__mmask8>((1u << outs) - 1);
      for (int64_t f0 = 0; f0 < s.f; f0 += kPooledFilters) {
        const float *w = job.weight + f0 * T;
        vf acc[2][kPooledFilters];
        TCC_UK_UNROLL
        for (int i = 0; i < kPooledFilters; ++i) {
          acc[0][i] = vmul(vset1(w[i * T]), taps[0][0]);
          acc[1][i] = vmul(vset1(w[i * T]), taps[1][0]);
        }
        TCC_UK_UNROLL
        for (int u = 1; u < T; ++u)
          TCC_UK_UNROLL
        for (int i = 0; i < kPooledFilters; ++i) {
          const vf wi = vset1(w[i * T + u]);
          acc[0][i] = vfma(wi, taps[0][u], acc[0][i]);
          acc[1][i] = vfma(wi, taps[1][u], acc[1][i]);
        }
        TCC_UK_UNROLL
        for (int i = 0; i < kPooledFilters; ++i) {
          const vf rows = vmax(acc[0][i], acc[1][i]);
          // Each lane's right neighbour, then the pairs' maxima packed.
          const vf pairs = vmax(rows, _mm512_permute_ps(rows, 0xB1));
          vf r = _mm512_permutexvar_ps(evens, pairs);
          if (bias)
            r = vadd(r, vset1(bias[f0 + i]));
          if (job.e.clamp)
            r = vclamp(r, lo, hi);
          _mm256_mask_storeu_ps(y + (f0 + i) * plane + py * pw + px0, m,
                                _mm512_castps512_ps256(r));
        }
      }
    }
  }
}

template <int... T>
void pixelsPooledOf(int taps, const PixelsJob &job, int64_t img, int64_t py0,
                    int64_t py1, std::integer_sequence<int, T...>) {
  using Fn = void (*)(const PixelsJob &, int64_t, int64_t, int64_t);
  static constexpr Fn fns[] = {pixelsPooled<T + 1>...};
  fns[taps - 1](job, img, py0, py1);
}

template <int... T>
void pixelsRowsOf(int taps, bool plain, const PixelsJob &job, int64_t img,
                  int64_t oy0, int64_t oy1, std::integer_sequence<int, T...>) {
  using Fn = void (*)(const PixelsJob &, int64_t, int64_t, int64_t);
  static constexpr Fn general[] = {pixelsRows<T + 1, false>...};
  static constexpr Fn plainFns[] = {pixelsRows<T + 1, true>...};
  (plain ? plainFns : general)[taps - 1](job, img, oy0, oy1);
}

/// Tasks [begin, end): (image, band of output rows).
void runPixels(void *ctx, int64_t begin, int64_t end) {
  const PixelsJob &job = *static_cast<const PixelsJob *>(ctx);
  const ConvShape &s = *job.s;
  const int taps = static_cast<int>(s.c * s.kh * s.kw);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t img = t / job.bands, band = t % job.bands;
    const int64_t oy0 = band * job.bandRows;
    if (job.pooled) { // bands of pooled rows
      pixelsPooledOf(taps, job, img, oy0, minI(s.oh / 2, oy0 + job.bandRows),
                     std::make_integer_sequence<int, kPixelsMaxTaps>());
      continue;
    }
    // Plain: no accumulation, residual or activation (a bias and a clamp
    // at most), the epilogue without its tests an element.
    const bool plain = !job.e.accumulate && !job.residual && !job.e.act;
    pixelsRowsOf(taps, plain, job, img, oy0, minI(s.oh, oy0 + job.bandRows),
                 std::make_integer_sequence<int, kPixelsMaxTaps>());
  }
}

} // namespace

void pixelsConv(const tcc_host_api_t *host, const ConvShape &s,
                const float *input, const float *weight, float *output,
                bool accumulate, const tcc_uk_epilogue_t *ep, bool pool) {
  PixelsJob job = {};
  static_cast<ConvCall &>(job) =
      convCall(s, input, weight, output, accumulate, ep);
  job.pooled = pool;
  // Bands of rows only where the images are too few for two tasks a
  // thread.
  const int64_t rows = pool ? s.oh / 2 : s.oh;
  const int64_t bands = minI(rows, ceilDiv(2 * hostThreads(host), s.n));
  job.bandRows = ceilDiv(rows, bands);
  job.bands = ceilDiv(rows, job.bandRows);
  parallelFor(host, s.n * job.bands, 1, runPixels, &job);
}
#else
void pixelsConv(const tcc_host_api_t *, const ConvShape &, const float *,
                const float *, float *, bool, const tcc_uk_epilogue_t *, bool) {
}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
