// dwpw_test.cc - tcc_uk_dwpw_conv2d_nchw (a depthwise convolution and the
// 1x1 convolution after it, as one call) in every variant the CPU can run,
// against the two convolutions done one after the other in double.
#include "uk_test_util.h"

#include <limits>

namespace {

using namespace uktest;

struct PairCase {
  int64_t n, c, h, w, f; // input [n, c, h, w]; f pointwise outputs
  int64_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 1, pl = 1, pb = 1, pr = 1;
  bool packed = true; // pointwise weights prepacked (TCC_UK_PACKED_A)
  bool dwBias = true, relu6 = true;   // the depthwise epilogue
  bool bias = true, residual = false; // the pointwise one
  uint32_t seed = 7;

  PairCase &stride(int64_t s) {
    sh = sw = s;
    return *this;
  }
  PairCase &kernel(int64_t k, int64_t d, int64_t p) {
    kh = kw = k;
    dh = dw = d;
    pt = pl = pb = pr = p;
    return *this;
  }
  PairCase &pads(int64_t t, int64_t l, int64_t b, int64_t r) {
    pt = t;
    pl = l;
    pb = b;
    pr = r;
    return *this;
  }
  PairCase &unpacked() {
    packed = false;
    return *this;
  }
  PairCase &plain() {
    dwBias = relu6 = bias = false;
    return *this;
  }
  PairCase &withResidual() {
    residual = true;
    return *this;
  }

  int64_t oh() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  tcc_uk_dwpw_params_t params() const {
    tcc_uk_dwpw_params_t p = {};
    p.dw.n = n;
    p.dw.c = c;
    p.dw.h = h;
    p.dw.w = w;
    p.dw.f = c;
    p.dw.kh = kh;
    p.dw.kw = kw;
    p.dw.stride_h = sh;
    p.dw.stride_w = sw;
    p.dw.dilation_h = dh;
    p.dw.dilation_w = dw;
    p.dw.pad_top = pt;
    p.dw.pad_left = pl;
    p.dw.pad_bottom = pb;
    p.dw.pad_right = pr;
    p.dw.groups = c;
    p.f = f;
    p.dw_has_clamp = relu6;
    p.dw_clamp_min = 0.0f;
    p.dw_clamp_max = 6.0f;
    p.flags = packed ? TCC_UK_PACKED_A : 0;
    return p;
  }
  /// The pointwise convolution, for packing its weights.
  tcc_uk_conv2d_params_t pointwise() const {
    tcc_uk_conv2d_params_t p = {};
    p.n = n;
    p.c = c;
    p.h = oh();
    p.w = ow();
    p.f = f;
    p.kh = p.kw = 1;
    return p;
  }
};

std::string describe(const PairCase &c) {
  auto s = [](int64_t x) { return std::to_string(x); };
  return "x[" + s(c.n) + "," + s(c.c) + "," + s(c.h) + "," + s(c.w) + "] " +
         s(c.kh) + "x" + s(c.kw) + " stride " + s(c.sh) + " dilation " +
         s(c.dh) + " pads " + s(c.pt) + "," + s(c.pl) + "," + s(c.pb) + "," +
         s(c.pr) + " -> " + s(c.f) + (c.packed ? " packed" : "") +
         (c.residual ? " residual" : "");
}

struct PairData {
  PairData(const Variant &v, const PairCase &c) {
    const int64_t outSize = c.n * c.f * c.oh() * c.ow();
    x = randomVector(c.n * c.c * c.h * c.w, c.seed, -2.0f, 2.0f);
    dwW = randomVector(c.c * c.kh * c.kw, c.seed + 1);
    dwBias = randomVector(c.c, c.seed + 2);
    pwW = randomVector(c.f * c.c, c.seed + 3);
    bias = randomVector(c.f, c.seed + 4);
    res = randomVector(std::max<int64_t>(1, outSize), c.seed + 5);
    if (c.packed) {
      const tcc_uk_conv2d_params_t p = c.pointwise();
      packedW.resize(v.convPackWeightsBytes(v.isaFn(), &p) / 4 + 1);
      v.convPackWeights(v.isaFn(), &p, pwW.data(), packedW.data());
    }
  }
  std::vector<float> x, dwW, dwBias, pwW, bias, res, packedW;
};

std::vector<float> runPair(const Variant &v, const PairCase &c,
                           const PairData &d, const tcc_host_api_t *host) {
  std::vector<float> out(std::max<int64_t>(1, c.n * c.f * c.oh() * c.ow()),
                         std::nanf(""));
  tcc_uk_dwpw_params_t p = c.params();
  p.dw_bias = c.dwBias ? d.dwBias.data() : nullptr;
  const int64_t need = v.dwpwScratchBytes(v.isaFn(), &p);
  EXPECT_GT(need, 0);
  Scratch scratch(need);
  p.scratch = scratch.get();
  tcc_uk_epilogue_t ep = {};
  ep.bias = c.bias ? d.bias.data() : nullptr;
  ep.residual = c.residual ? d.res.data() : nullptr;
  EXPECT_EQ(0, v.dwpwConv2d(host, &p, d.x.data(), d.dwW.data(),
                            c.packed ? d.packedW.data() : d.pwW.data(),
                            out.data(), &ep));
  EXPECT_TRUE(scratch.guardIntact())
      << describe(c) << ": wrote past " << need << " bytes of scratch";
  return out;
}

void checkPair(const Variant &v, const PairCase &c) {
  SCOPED_TRACE(describe(c));
  const PairData d(v, c);
  const std::vector<float> out = runPair(v, c, d, nullptr);
  const int64_t oh = c.oh(), ow = c.ow(), hw = oh * ow;
  // The depthwise output and the magnitudes that went into each element.
  std::vector<double> mid(c.n * c.c * hw), midMag(mid.size());
  for (int64_t img = 0; img < c.n; ++img)
    for (int64_t ch = 0; ch < c.c; ++ch)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double s = c.dwBias ? d.dwBias[ch] : 0.0, m = std::fabs(s);
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t iy = oy * c.sh - c.pt + ky * c.dh;
              const int64_t ix = ox * c.sw - c.pl + kx * c.dw;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                continue;
              const double t =
                  double(d.x[((img * c.c + ch) * c.h + iy) * c.w + ix]) *
                  d.dwW[(ch * c.kh + ky) * c.kw + kx];
              s += t;
              m += std::fabs(t);
            }
          if (c.relu6)
            s = std::min(std::max(s, 0.0), 6.0);
          const int64_t at = (img * c.c + ch) * hw + oy * ow + ox;
          mid[at] = s;
          midMag[at] = m;
        }
  const int64_t rows = c.n * c.f;
  std::vector<double> want(rows * hw), mag(rows * hw);
  for (int64_t img = 0; img < c.n; ++img)
    for (int64_t oc = 0; oc < c.f; ++oc)
      for (int64_t j = 0; j < hw; ++j) {
        const int64_t at = (img * c.f + oc) * hw + j;
        double s = 0, m = 0;
        for (int64_t ch = 0; ch < c.c; ++ch) {
          const double wt = d.pwW[oc * c.c + ch];
          s += wt * mid[(img * c.c + ch) * hw + j];
          m += std::fabs(wt) * midMag[(img * c.c + ch) * hw + j];
        }
        if (c.bias) {
          s += d.bias[oc];
          m += std::fabs(d.bias[oc]);
        }
        if (c.residual) {
          s += d.res[at];
          m += std::fabs(d.res[at]);
        }
        want[at] = s;
        mag[at] = m;
      }
  // The depthwise sum's rounding reaches the output through the pointwise
  // weights, which `mag` accounts for: c products plus the taps.
  expectClose(want, mag, out.data(), rows, hw, hw, c.c + c.kh * c.kw + 3,
              v.name);
}

using DwPw = VariantTest;

// mobilenet_v2's pairs: stride 1 and 2, planes from 112x112 to 7x7, more
// channels than one K block (960 > 384), a residual on the last.
TEST_P(DwPw, MobilenetShapes) {
  checkPair(*v, PairCase{1, 32, 112, 112, 16});
  checkPair(*v, PairCase{1, 96, 112, 112, 24}.stride(2));
  checkPair(*v, PairCase{1, 144, 56, 56, 24}.withResidual());
  checkPair(*v, PairCase{1, 576, 14, 14, 160}.stride(2));
  checkPair(*v, PairCase{1, 960, 7, 7, 160}.withResidual());
}

TEST_P(DwPw, EdgesAndLayouts) {
  checkPair(*v, PairCase{1, 5, 9, 13, 7}.pads(0, 2, 1, 0));
  checkPair(*v, PairCase{1, 6, 10, 11, 5}.stride(2).pads(1, 0, 0, 1));
  checkPair(*v, PairCase{2, 8, 17, 19, 50}.withResidual().unpacked());
  checkPair(*v, PairCase{1, 3, 4, 4, 2}.plain());
  // Rows longer than the kernel's row chunk (1024 columns).
  checkPair(*v, PairCase{1, 4, 3, 1100, 9});
  checkPair(*v, PairCase{1, 4, 3, 2100, 9}.stride(2));
}

// Shapes without the direct 3x3 rows take the one-element path.
TEST_P(DwPw, OtherKernels) {
  checkPair(*v, PairCase{1, 8, 15, 15, 12}.kernel(5, 2, 4));
  checkPair(*v, PairCase{1, 8, 15, 15, 12}.kernel(3, 1, 1).stride(3));
  checkPair(*v, PairCase{1, 8, 12, 12, 12}.kernel(1, 1, 0));
}

TEST_P(DwPw, ThreadCountDoesNotChangeResults) {
  const std::vector<PairCase> cases = {
      PairCase{1, 32, 56, 56, 24}.withResidual(),
      PairCase{1, 96, 40, 40, 24}.stride(2),
      PairCase{1, 480, 14, 14, 96}, // splits the output channels too
      PairCase{2, 16, 20, 20, 40}.unpacked(),
      PairCase{1, 960, 7, 7, 160}.withResidual(),   // B packed by rows first
      PairCase{1, 120, 28, 28, 40}.kernel(5, 1, 2), // planes in lanes
      PairCase{2, 72, 29, 29, 40}.kernel(5, 1, 2).stride(2).withResidual(),
  };
  for (const PairCase &c : cases) {
    SCOPED_TRACE(describe(c));
    const PairData d(*v, c);
    const std::vector<float> serial = runPair(*v, c, d, nullptr);
    for (int threads : {2, 3}) {
      ThreadHost host(threads);
      const std::vector<float> out = runPair(*v, c, d, host.get());
      expectIdentical(serial.data(), out.data(), serial.size(),
                      std::to_string(threads) + " threads");
    }
  }
}

// The depthwise part is split by channel planes across the threads (into
// the scratch): in a parallel loop of its own before the GEMM's (a 56x56
// plane's 32 channels), or as the two halves of k that also multiply them
// (a 7x7 plane's 960 channels, 3f <= c), one loop for the whole pair; both
// spread over the threads.
TEST_P(DwPw, TheDepthwisePartIsSplitByPlanes) {
  for (const PairCase &c :
       {PairCase{1, 960, 7, 7, 160}, PairCase{1, 32, 56, 56, 24}}) {
    SCOPED_TRACE(describe(c));
    const PairData d(*v, c);
    ThreadHost host(2);
    runPair(*v, c, d, host.get());
    ASSERT_GE(host.parts.size(), 1u);
    EXPECT_GE(host.parts[0], 2u);
  }
}

// On AVX-512, a pair whose output is small next to its depthwise output
// (3f <= c) and whose B is read in place runs its GEMM as two fixed halves
// of k, each after its half of the depthwise planes, into two partials
// summed after: the scratch holds them, and the results match the
// reference and do not change with the thread count. An odd c (uneven
// halves), a residual, unpacked weights, 5x5 planes in lanes (halves and
// chunks of whole groups of planes, a ragged one); the first pair of
// mobilenet_v2 (3f > c) keeps the one GEMM.
TEST_P(DwPw, SplitsKWhereTheOutputIsSmall) {
  auto scratchFloats = [&](const PairCase &c) {
    const tcc_uk_dwpw_params_t p = c.params();
    return (v->dwpwScratchBytes(TCC_UK_ISA_AVX512, &p) - 64) / 4;
  };
  auto round16 = [](int64_t x) { return (x + 15) / 16 * 16; };
  const PairCase odd = PairCase{1, 97, 8, 8, 20}.withResidual();
  EXPECT_EQ(scratchFloats(odd), round16(97 * 64) + 2 * round16(20 * 64));
  const PairCase first{1, 32, 112, 112, 16};
  EXPECT_EQ(scratchFloats(first), round16(32 * 112 * 112));
  for (const PairCase &c :
       {odd, PairCase{1, 97, 8, 8, 20}.unpacked(),
        PairCase{2, 192, 14, 14, 64}.stride(2).withResidual(),
        PairCase{1, 1152, 7, 7, 192}.kernel(5, 1, 2).withResidual(),
        PairCase{1, 120, 28, 28, 40}.kernel(5, 1, 2)}) {
    SCOPED_TRACE(describe(c));
    checkPair(*v, c);
    const PairData d(*v, c);
    const std::vector<float> serial = runPair(*v, c, d, nullptr);
    ThreadHost host(2);
    const std::vector<float> out = runPair(*v, c, d, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
  }
}

// The halves of k are one parallel loop whose tasks claim the pieces
// (depthwise chunks, GEMM rows, the sum's rows) as they run: a task whose
// thread never starts leaves nothing undone, and the bits are those of
// one thread. The host runs only one of the tasks; with fixed halves, the
// other half of k was missing from the output.
TEST_P(DwPw, TheHalvesOfKAreClaimedAsTheyRun) {
  if (isa() != TCC_UK_ISA_AVX512)
    GTEST_SKIP() << "k splits on AVX-512 only";
  for (const PairCase &c :
       {PairCase{1, 576, 14, 14, 96}.withResidual(),
        PairCase{1, 960, 7, 7, 160}, PairCase{1, 97, 8, 8, 20}.unpacked(),
        PairCase{2, 192, 14, 14, 64}.stride(2).withResidual(),
        PairCase{1, 480, 14, 14, 80}.kernel(5, 1, 2).withResidual(),
        PairCase{1, 100, 14, 14, 24}.kernel(7, 1, 3)}) {
    SCOPED_TRACE(describe(c));
    const PairData d(*v, c);
    const std::vector<float> serial = runPair(*v, c, d, nullptr);
    for (int threads : {2, 3}) {
      ThreadHost host(threads);
      host.onlyFirstRange = true;
      const std::vector<float> out = runPair(*v, c, d, host.get());
      expectIdentical(serial.data(), out.data(), serial.size(),
                      std::to_string(threads) + " threads, one task run");
      // One loop an image.
      EXPECT_EQ(host.calls, c.n);
    }
  }
}

TEST_P(DwPw, RejectsWhatIsNotAPair) {
  PairCase c{1, 4, 6, 6, 3};
  tcc_uk_dwpw_params_t p = c.params();
  p.dw.groups = 2; // not depthwise
  float x[144] = {}, w[36] = {}, pw[12] = {}, out = 42.0f;
  EXPECT_EQ(0, v->dwpwScratchBytes(isa(), &p));
  EXPECT_EQ(-2, v->dwpwConv2d(nullptr, &p, x, w, pw, &out, nullptr));
  p = c.params();
  p.f = 0;
  EXPECT_EQ(-2, v->dwpwConv2d(nullptr, &p, x, w, pw, &out, nullptr));
  EXPECT_EQ(out, 42.0f);
}

// What a compiler asks before it makes the fused call: only AVX-512's
// kernels with vector rows (3x3) or planes in lanes (5x5 and 7x7 of
// dilation 1) beat two calls. Any build answers for any ISA.
TEST_P(DwPw, FastOnlyWithVectorRows) {
  auto fast = [&](const PairCase &c, int32_t target) {
    const tcc_uk_dwpw_params_t p = c.params();
    return v->dwpwFast(target, &p);
  };
  const PairCase s1{1, 32, 28, 28, 16},
      s2 = PairCase{1, 32, 28, 28, 16}.stride(2);
  EXPECT_EQ(1, fast(s1, TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(s2, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(s1, TCC_UK_ISA_AVX2));
  EXPECT_EQ(0, fast(s1, TCC_UK_ISA_GENERIC));
  for (int32_t target :
       {TCC_UK_ISA_AVX512, TCC_UK_ISA_AVX2, TCC_UK_ISA_GENERIC}) {
    const int32_t lanes = target == TCC_UK_ISA_AVX512;
    EXPECT_EQ(lanes, fast(PairCase{1, 8, 15, 15, 12}.kernel(5, 1, 2), target));
    EXPECT_EQ(lanes, fast(PairCase{1, 8, 15, 15, 12}.kernel(7, 1, 3).stride(2),
                          target));
    EXPECT_EQ(0, fast(PairCase{1, 8, 15, 15, 12}.kernel(5, 2, 4), target));
  }
  EXPECT_EQ(
      0, fast(PairCase{1, 8, 15, 15, 12}.kernel(3, 2, 2), TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(PairCase{1, 8, 15, 15, 12}.stride(3), TCC_UK_ISA_AVX512));
  tcc_uk_dwpw_params_t p = s1.params();
  p.dw.f = 64; // two filters a channel: not a pair
  EXPECT_EQ(0, v->dwpwFast(TCC_UK_ISA_AVX512, &p));
}

INSTANTIATE_TEST_SUITE_P(Variants, DwPw, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
