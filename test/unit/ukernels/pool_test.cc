// pool_test.cc - tcc_uk_maxpool2d_nchw and tcc_uk_avgpool2d_nchw in every
// variant the CPU can run, against direct references (max is exact, and the
// average's sums and division are the reference's, so results must be
// equal).
#include "uk_test_util.h"

#include <limits>

namespace {

using namespace uktest;

struct PoolCase {
  int64_t n, c, h, w, kh, kw;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil = false;

  PoolCase &stride(int64_t s) {
    sh = sw = s;
    return *this;
  }
  PoolCase &pad(int64_t p) {
    pt = pl = pb = pr = p;
    return *this;
  }
  PoolCase &pads(int64_t t, int64_t l, int64_t b, int64_t r) {
    pt = t;
    pl = l;
    pb = b;
    pr = r;
    return *this;
  }
  PoolCase &dilation(int64_t d) {
    dh = dw = d;
    return *this;
  }
  PoolCase &ceilMode() {
    ceil = true;
    return *this;
  }
  int64_t out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t a,
              int64_t b) const {
    const int64_t span = d * (k - 1) + 1, room = in + a + b - span;
    return (ceil ? (room + s - 1) / s : room / s) + 1;
  }
  int64_t oh() const { return out(h, kh, sh, dh, pt, pb); }
  int64_t ow() const { return out(w, kw, sw, dw, pl, pr); }
  tcc_uk_pool2d_params_t params() const {
    tcc_uk_pool2d_params_t p = {};
    p.n = n;
    p.c = c;
    p.h = h;
    p.w = w;
    p.kh = kh;
    p.kw = kw;
    p.stride_h = sh;
    p.stride_w = sw;
    p.dilation_h = dh;
    p.dilation_w = dw;
    p.pad_top = pt;
    p.pad_left = pl;
    p.oh = oh();
    p.ow = ow();
    return p;
  }
};

std::string describe(const PoolCase &c) {
  auto s = [](int64_t x) { return std::to_string(x); };
  return "x[" + s(c.n) + "," + s(c.c) + "," + s(c.h) + "," + s(c.w) + "] " +
         s(c.kh) + "x" + s(c.kw) + " stride " + s(c.sh) + "x" + s(c.sw) +
         " dilation " + s(c.dh) + " pads " + s(c.pt) + "," + s(c.pl) + "," +
         s(c.pb) + "," + s(c.pr) + (c.ceil ? " ceil" : "");
}

std::vector<float> reference(const PoolCase &c, const std::vector<float> &x) {
  const int64_t oh = c.oh(), ow = c.ow();
  std::vector<float> y(c.n * c.c * oh * ow);
  for (int64_t p = 0; p < c.n * c.c; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        bool nan = false;
        for (int64_t ky = 0; ky < c.kh; ++ky)
          for (int64_t kx = 0; kx < c.kw; ++kx) {
            const int64_t iy = oy * c.sh - c.pt + ky * c.dh;
            const int64_t ix = ox * c.sw - c.pl + kx * c.dw;
            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
              continue;
            const float v = x[(p * c.h + iy) * c.w + ix];
            nan |= std::isnan(v);
            m = std::max(m, v);
          }
        y[(p * oh + oy) * ow + ox] = nan ? std::nanf("") : m;
      }
  return y;
}

void checkPool(const Variant &v, const PoolCase &c,
               const tcc_host_api_t *host = nullptr,
               std::vector<float> x = {}) {
  SCOPED_TRACE(describe(c));
  if (x.empty())
    x = randomVector(c.n * c.c * c.h * c.w, 3, -5.0f, 5.0f);
  const std::vector<float> want = reference(c, x);
  std::vector<float> got(want.size() + 1, 42.0f);
  const tcc_uk_pool2d_params_t p = c.params();
  ASSERT_EQ(0, v.maxpool2d(host, &p, x.data(), got.data()));
  expectIdentical(want.data(), got.data(), want.size(), v.name);
  EXPECT_EQ(got.back(), 42.0f) << "wrote past the output";
}

using MaxPool = VariantTest;

TEST_P(MaxPool, ResnetStem) {
  checkPool(*v, PoolCase{1, 64, 112, 112, 3, 3}.stride(2).pad(1));
}

TEST_P(MaxPool, StridesPadsAndEdges) {
  checkPool(*v, PoolCase{1, 3, 9, 13, 2, 2}.stride(2));
  checkPool(*v, PoolCase{2, 4, 17, 35, 3, 3}.pad(1));
  checkPool(*v, PoolCase{1, 5, 10, 11, 3, 2}.stride(2).pads(0, 1, 1, 0));
  checkPool(*v, PoolCase{1, 2, 7, 40, 5, 5}.stride(2).pad(2));
  checkPool(*v, PoolCase{1, 2, 7, 7, 3, 3}.stride(2).ceilMode());
  checkPool(*v, PoolCase{1, 2, 5, 5, 2, 2}.stride(2).pad(1).ceilMode());
  checkPool(*v, PoolCase{1, 1, 3, 70, 1, 1});
}

// The AVX2 rows: columns whose windows lie inside the row 8 at a time,
// the padded edges and the last few one at a time. Widths around a vector's
// reach (8 outputs read 8 + kw - 1 columns at stride 1, 16 + kw - 1 at
// stride 2), left padding of 0 to 2, windows of 2 to 5, and a small CNN's
// 2x2 pooling of a batch.
TEST_P(MaxPool, VectorRowsAndTheirEdges) {
  for (int64_t w : {8, 9, 10, 15, 16, 17, 18, 23, 24, 33, 40, 57})
    for (int64_t k : {2, 3, 5})
      for (int64_t s : {1, 2})
        for (int64_t p : {0, 1, 2}) {
          if (p >= k || w + 2 * p < k)
            continue;
          checkPool(*v, PoolCase{1, 2, 6, w, k, k}.stride(s).pad(p));
        }
  checkPool(*v, PoolCase{8, 32, 28, 28, 2, 2}.stride(2));
  checkPool(*v, PoolCase{1, 3, 9, 37, 3, 3}.stride(2).pads(1, 2, 0, 1));
}

// Shapes off the vector path: stride 3, dilation 2, unequal strides.
TEST_P(MaxPool, OtherShapes) {
  checkPool(*v, PoolCase{1, 3, 20, 20, 3, 3}.stride(3).pad(1));
  checkPool(*v, PoolCase{1, 3, 20, 20, 3, 3}.dilation(2).pad(2));
  PoolCase c{1, 3, 20, 21, 2, 3};
  c.sh = 1;
  c.sw = 2;
  checkPool(*v, c);
}

TEST_P(MaxPool, NaNWinsItsWindows) {
  const PoolCase c = PoolCase{1, 1, 6, 20, 3, 3}.stride(2).pad(1);
  std::vector<float> x = randomVector(6 * 20, 5);
  x[2 * 20 + 7] = std::nanf("");
  checkPool(*v, c, nullptr, x);
  // 2x2 windows of stride 2 (both lanes of a pair loaded at once): a NaN
  // in an odd and in an even column.
  const PoolCase pairs = PoolCase{1, 1, 6, 20, 2, 2}.stride(2);
  x[1 * 20 + 5] = std::nanf("");
  x[4 * 20 + 12] = std::nanf("");
  checkPool(*v, pairs, nullptr, x);
  // Stride 1 (separable on AVX-512: a NaN reduced across its rows first,
  // then down), at a row's first and last columns too.
  x[0 * 20 + 0] = std::nanf("");
  x[5 * 20 + 19] = std::nanf("");
  checkPool(*v, PoolCase{1, 1, 6, 20, 3, 3}.pad(1), nullptr, x);
  checkPool(*v, PoolCase{1, 1, 6, 20, 3, 3}.stride(2).ceilMode(), nullptr, x);
}

// 3x3 windows of stride 1 with a pad of 1, and of stride 2 in ceil mode;
// windows of 1 and the widest rows the separable path takes (512 outputs) and
// one past them, rows in several runs; windows of 7 and 8 rows and columns.
TEST_P(MaxPool, SeparableShapes) {
  checkPool(*v, PoolCase{1, 64, 28, 28, 3, 3}.pad(1));
  checkPool(*v, PoolCase{1, 8, 57, 57, 3, 3}.stride(2).ceilMode());
  checkPool(*v, PoolCase{1, 2, 9, 11, 1, 1}.stride(2));
  checkPool(*v, PoolCase{1, 2, 5, 512, 3, 3}.pad(1));
  // Wide rows whose band is reduced in several runs of output rows.
  checkPool(*v, PoolCase{1, 1, 40, 500, 3, 3}.pad(1));
  checkPool(*v, PoolCase{1, 1, 41, 1000, 3, 3}.stride(2).pad(1));
  checkPool(*v, PoolCase{1, 2, 5, 513, 3, 3}.pad(1));
  checkPool(*v, PoolCase{1, 2, 5, 1025, 3, 3}.stride(2).pad(1));
  checkPool(*v, PoolCase{1, 3, 16, 20, 7, 8}.pad(3));
  checkPool(*v, PoolCase{1, 3, 16, 20, 8, 7}.pads(4, 3, 3, 3));
  checkPool(*v, PoolCase{2, 3, 12, 12, 5, 5}.stride(2).pad(2));
}

// 3x3 windows of stride 1 and 2 over rows of up to 64 outputs (one to four
// vectors, the rolling path on AVX-512): each width around a vector's end,
// pads of 0 to 2 and unequal ones, ceil mode, windows wholly in the padding
// (-inf), tall and one-row planes, bands of rows that start inside a plane
// (threads), and NaNs at a vector's first and last lanes and the rows' ends.
TEST_P(MaxPool, Rolling3x3Shapes) {
  for (int64_t s : {1, 2})
    for (int64_t w : {1, 7, 14, 16, 17, 31, 33, 48, 63, 64, 65, 112, 128, 129})
      checkPool(*v, PoolCase{1, 2, 9, w, 3, 3}.stride(s).pad(1));
  checkPool(*v, PoolCase{1, 3, 13, 27, 3, 3}.stride(2).ceilMode());
  checkPool(*v, PoolCase{1, 3, 15, 20, 3, 3}.pads(2, 0, 1, 2));
  checkPool(*v, PoolCase{1, 3, 15, 20, 3, 3}.stride(2).pads(0, 2, 2, 1));
  checkPool(*v, PoolCase{1, 2, 4, 6, 3, 3}.pad(3)); // edge windows all pad
  checkPool(*v, PoolCase{1, 2, 200, 9, 3, 3}.pad(1));
  checkPool(*v, PoolCase{1, 2, 1, 30, 3, 3}.pad(1));
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    checkPool(*v, PoolCase{1, 1, 61, 50, 3, 3}.pad(1), host.get());
    checkPool(*v, PoolCase{1, 1, 61, 50, 3, 3}.stride(2).pad(1), host.get());
  }
  for (int64_t s : {1, 2}) {
    const PoolCase c = PoolCase{1, 1, 7, 40, 3, 3}.stride(s).pad(1);
    std::vector<float> x = randomVector(7 * 40, 9);
    for (int64_t at : {0, 15, 16, 31, 32, 39})
      x[(at % 7) * 40 + at] = std::nanf("");
    checkPool(*v, c, nullptr, x);
  }
}

// Units are a band of output rows (one a thread) of a plane, band by band;
// a plane with fewer output rows than threads has one a row.
TEST_P(MaxPool, ThreadsSplitRowsAndPlanes) {
  const PoolCase c = PoolCase{2, 64, 80, 80, 3, 3}.stride(2).pad(1);
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    checkPool(*v, c, host.get());
    EXPECT_EQ(host.calls, 1);
    ASSERT_EQ(host.counts.size(), 1u);
    EXPECT_EQ(host.counts[0], threads * 2 * 64);
    EXPECT_GT(host.lastParts, 1u);
  }
  ThreadHost host(3);
  checkPool(*v, PoolCase{1, 5, 3, 9, 3, 3}.stride(2).pad(1), host.get());
  ASSERT_EQ(host.counts.size(), 1u);
  EXPECT_EQ(host.counts[0], 2 * 5); // two output rows
}

// A batch of small images, two or more a thread, splits by images (whole
// planes, as the convolutions around it split such a batch); large images
// keep the bands of rows.
// Planes of up to 32x32 outputs, four or more a thread, are a unit each
// (28x28 planes here); fewer are split in bands.
TEST_P(MaxPool, SmallPlanesAreUnits) {
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    checkPool(*v, PoolCase{1, 256, 28, 28, 3, 3}.pad(1), host.get());
    ASSERT_EQ(host.counts.size(), 1u);
    EXPECT_EQ(host.counts[0], 256);
  }
  ThreadHost host(2);
  checkPool(*v, PoolCase{1, 7, 28, 28, 3, 3}.pad(1), host.get());
  ASSERT_EQ(host.counts.size(), 1u);
  EXPECT_EQ(host.counts[0], 2 * 7); // two bands a plane
}

TEST_P(MaxPool, SmallImagesSplitByImages) {
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    checkPool(*v, PoolCase{8, 32, 28, 28, 2, 2}.stride(2), host.get());
    ASSERT_EQ(host.counts.size(), 1u);
    EXPECT_EQ(host.counts[0], 8 * 32); // one unit a plane
    EXPECT_GT(host.lastParts, 1u);
  }
  ThreadHost host(2);
  checkPool(*v, PoolCase{4, 64, 112, 112, 3, 3}.stride(2).pad(1), host.get());
  ASSERT_EQ(host.counts.size(), 1u);
  EXPECT_EQ(host.counts[0], 2 * 4 * 64); // two bands a plane
}

TEST_P(MaxPool, FastOnlyWithVectorRows) {
  const tcc_uk_pool2d_params_t s2 =
      PoolCase{1, 8, 16, 16, 3, 3}.stride(2).pad(1).params();
  EXPECT_EQ(1, v->maxpoolFast(TCC_UK_ISA_AVX512, &s2));
  EXPECT_EQ(1, v->maxpoolFast(TCC_UK_ISA_AVX2, &s2));
  EXPECT_EQ(0, v->maxpoolFast(TCC_UK_ISA_GENERIC, &s2));
  const tcc_uk_pool2d_params_t s3 =
      PoolCase{1, 8, 16, 16, 3, 3}.stride(3).params();
  EXPECT_EQ(0, v->maxpoolFast(TCC_UK_ISA_AVX512, &s3));
  EXPECT_EQ(0, v->maxpoolFast(TCC_UK_ISA_AVX2, &s3));
  const tcc_uk_pool2d_params_t d2 =
      PoolCase{1, 8, 16, 16, 3, 3}.dilation(2).params();
  EXPECT_EQ(0, v->maxpoolFast(TCC_UK_ISA_AVX512, &d2));
}

TEST_P(MaxPool, RejectsBadParams) {
  tcc_uk_pool2d_params_t p = PoolCase{1, 2, 4, 4, 2, 2}.params();
  p.kh = 0;
  float x[32] = {}, y = 42.0f;
  EXPECT_EQ(-2, v->maxpool2d(nullptr, &p, x, &y));
  EXPECT_EQ(-2, v->maxpool2d(nullptr, nullptr, x, &y));
  EXPECT_EQ(y, 42.0f);
}

INSTANTIATE_TEST_SUITE_P(Variants, MaxPool, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

// Average pooling: the taps inside the input summed in row-major window
// order from zero, divided by the count (ONNX's and PyTorch's: the taps
// inside the declared pads with count_include_pad, else inside the input;
// never the room ceil mode adds), as the generic lowering computes it, so
// the results must be the same bits.
std::vector<float> avgReference(const PoolCase &c, bool withPads,
                                const std::vector<float> &x) {
  const int64_t oh = c.oh(), ow = c.ow();
  auto count = [](int64_t o, int64_t k, int64_t s, int64_t d, int64_t a,
                  int64_t b, int64_t size, bool pads) {
    int64_t n = 0;
    for (int64_t t = 0; t < k; ++t) {
      const int64_t at = o * s - a + t * d;
      n += pads ? at >= -a && at < size + b : at >= 0 && at < size;
    }
    return n;
  };
  std::vector<float> y(c.n * c.c * oh * ow);
  for (int64_t p = 0; p < c.n * c.c; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        float sum = 0.0f;
        for (int64_t ky = 0; ky < c.kh; ++ky)
          for (int64_t kx = 0; kx < c.kw; ++kx) {
            const int64_t iy = oy * c.sh - c.pt + ky * c.dh;
            const int64_t ix = ox * c.sw - c.pl + kx * c.dw;
            if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
              sum += x[(p * c.h + iy) * c.w + ix];
          }
        const int64_t n =
            count(oy, c.kh, c.sh, c.dh, c.pt, c.pb, c.h, withPads) *
            count(ox, c.kw, c.sw, c.dw, c.pl, c.pr, c.w, withPads);
        y[(p * oh + oy) * ow + ox] =
            sum / static_cast<float>(std::max<int64_t>(n, 1));
      }
  return y;
}

tcc_uk_avgpool2d_params_t avgParams(const PoolCase &c, bool withPads) {
  tcc_uk_avgpool2d_params_t p = {};
  p.window = c.params();
  p.pad_bottom = c.pb;
  p.pad_right = c.pr;
  p.count_include_pad = withPads;
  return p;
}

void checkAvg(const Variant &v, const PoolCase &c, bool withPads,
              const tcc_host_api_t *host = nullptr) {
  SCOPED_TRACE(describe(c) + (withPads ? " counting pads" : ""));
  const std::vector<float> x =
      randomVector(c.n * c.c * c.h * c.w, 7, -5.0f, 5.0f);
  const std::vector<float> want = avgReference(c, withPads, x);
  std::vector<float> got(want.size() + 1, 42.0f);
  const tcc_uk_avgpool2d_params_t p = avgParams(c, withPads);
  ASSERT_EQ(0, v.avgpool2d(host, &p, x.data(), got.data()));
  expectIdentical(want.data(), got.data(), want.size(), v.name);
  EXPECT_EQ(got.back(), 42.0f) << "wrote past the output";
}

using AvgPool = VariantTest;

// An Inception module's 3x3 of stride 1 (pads counted), a DenseNet
// transition's 2x2 of stride 2, and a 3x3 of stride 2 in ceil mode without
// the pads counted.
TEST_P(AvgPool, NetworkShapes) {
  checkAvg(*v, PoolCase{1, 8, 12, 12, 3, 3}.pad(1), true);
  checkAvg(*v, PoolCase{1, 8, 12, 12, 3, 3}.pad(1), false);
  checkAvg(*v, PoolCase{1, 16, 56, 56, 2, 2}.stride(2), true);
  checkAvg(*v, PoolCase{2, 4, 27, 27, 3, 3}.stride(2).pad(1).ceilMode(), false);
  checkAvg(*v, PoolCase{2, 4, 27, 27, 3, 3}.stride(2).pad(1).ceilMode(), true);
}

// Rows around a vector's reach at strides 1 and 2, pads of 0 to 2 (counted
// or not), windows of 1 to 5, unequal pads, a window wholly in the padding.
TEST_P(AvgPool, VectorRowsAndTheirEdges) {
  for (int64_t w : {1, 7, 8, 9, 15, 16, 17, 31, 33, 40, 57})
    for (int64_t k : {1, 2, 3, 5})
      for (int64_t s : {1, 2})
        for (int64_t p : {0, 1, 2}) {
          if (p >= k || w + 2 * p < k)
            continue;
          checkAvg(*v, PoolCase{1, 2, 6, w, k, k}.stride(s).pad(p), p == 1);
        }
  checkAvg(*v, PoolCase{1, 3, 9, 37, 3, 3}.stride(2).pads(1, 2, 0, 1), true);
  checkAvg(*v, PoolCase{1, 3, 9, 37, 3, 3}.stride(2).pads(1, 2, 0, 1), false);
  checkAvg(*v, PoolCase{1, 2, 4, 6, 3, 3}.pad(3), false);
  checkAvg(*v, PoolCase{1, 2, 4, 6, 3, 3}.pad(3), true);
}

// Shapes off the vector path: stride 3, dilation 2, unequal strides.
TEST_P(AvgPool, OtherShapes) {
  checkAvg(*v, PoolCase{1, 3, 20, 20, 3, 3}.stride(3).pad(1), true);
  checkAvg(*v, PoolCase{1, 3, 20, 20, 3, 3}.dilation(2).pad(2), false);
  PoolCase c{1, 3, 20, 21, 2, 3};
  c.sh = 1;
  c.sw = 2;
  checkAvg(*v, c, true);
}

// The same bits on 2 and 3 threads, split by bands of rows or by planes.
TEST_P(AvgPool, Threads) {
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    checkAvg(*v, PoolCase{1, 5, 61, 50, 3, 3}.pad(1), true, host.get());
    checkAvg(*v, PoolCase{1, 64, 12, 12, 3, 3}.pad(1), true, host.get());
    checkAvg(*v, PoolCase{8, 32, 28, 28, 2, 2}.stride(2), false, host.get());
    EXPECT_GT(host.lastParts, 1u);
  }
}

TEST_P(AvgPool, FastOnlyWithVectorRows) {
  const tcc_uk_avgpool2d_params_t s1 =
      avgParams(PoolCase{1, 8, 12, 12, 3, 3}.pad(1), true);
  EXPECT_EQ(1, v->avgpoolFast(TCC_UK_ISA_AVX512, &s1));
  EXPECT_EQ(1, v->avgpoolFast(TCC_UK_ISA_AVX2, &s1));
  EXPECT_EQ(0, v->avgpoolFast(TCC_UK_ISA_GENERIC, &s1));
  const tcc_uk_avgpool2d_params_t s3 =
      avgParams(PoolCase{1, 8, 16, 16, 3, 3}.stride(3), true);
  EXPECT_EQ(0, v->avgpoolFast(TCC_UK_ISA_AVX512, &s3));
  EXPECT_EQ(0, v->avgpoolFast(TCC_UK_ISA_AVX512, nullptr));
}

TEST_P(AvgPool, RejectsBadParams) {
  tcc_uk_avgpool2d_params_t p = avgParams(PoolCase{1, 2, 4, 4, 2, 2}, false);
  p.window.kh = 0;
  float x[32] = {}, y = 42.0f;
  EXPECT_EQ(-2, v->avgpool2d(nullptr, &p, x, &y));
  EXPECT_EQ(-2, v->avgpool2d(nullptr, nullptr, x, &y));
  p = avgParams(PoolCase{1, 2, 4, 4, 2, 2}, false);
  p.pad_right = -1;
  EXPECT_EQ(-2, v->avgpool2d(nullptr, &p, x, &y));
  EXPECT_EQ(y, 42.0f);
}

INSTANTIATE_TEST_SUITE_P(Variants, AvgPool, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
