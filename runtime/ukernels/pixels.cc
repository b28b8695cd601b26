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
};

/// Output rows [oy0, oy1) of image img, T taps a pixel: tap t reads input
/// channel tc[t], row oy - pt + ty[t], columns ox - pl + tx[t] ...
template <int T, bool Plain>
void pixelsRows(const PixelsJob &job, int64_t img, int64_t oy0, int64_t oy1) {
  const ConvShape &s = *job.s;
  int64_t tc[T], ty[T], tx[T];
  {
    int t = 0;
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t ky = 0; ky < s.kh; ++ky)
        for (int64_t kx = 0; kx < s.kw; ++kx, ++t) {
          tc[t] = c * s.h * s.w;
          ty[t] = ky * s.dh;
          tx[t] = kx * s.dw;
        }
  }
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
                bool accumulate, const tcc_uk_epilogue_t *ep) {
  PixelsJob job = {};
  static_cast<ConvCall &>(job) =
      convCall(s, input, weight, output, accumulate, ep);
  // Bands of rows only where the images are too few for two tasks a
  // thread.
  const int64_t bands = minI(s.oh, ceilDiv(2 * hostThreads(host), s.n));
  job.bandRows = ceilDiv(s.oh, bands);
  job.bands = ceilDiv(s.oh, job.bandRows);
  parallelFor(host, s.n * job.bands, 1, runPixels, &job);
}
#else
void pixelsConv(const tcc_host_api_t *, const ConvShape &, const float *,
                const float *, float *, bool, const tcc_uk_epilogue_t *) {}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
