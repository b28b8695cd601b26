// sgemm_test.cc - tcc_uk_sgemm and the packing functions, in every variant
// the CPU can run, against a double-precision reference.
#include "uk_test_util.h"

#include <array>
#include <limits>

namespace {

using namespace uktest;

struct GemmCase {
  int64_t m, n, k;
  int64_t padA = 0, padB = 0, padC = 0; // leading dim = width + pad
  uint32_t flags = 0;
  bool biasPerRow = false, biasPerCol = false, residual = false;
  bool clamp = false;
  float lo = 0.0f, hi = std::numeric_limits<float>::infinity();
  bool scratchNull = false;
  uint32_t seed = 1;
  int32_t act = TCC_UK_ACT_NONE;
};

/// The register tile's columns (NR) and vector length of an ISA's kernels.
struct Tiles {
  int64_t nr, vl;
};
Tiles tilesOf(int32_t isa) {
  return isa == TCC_UK_ISA_AVX512 ? Tiles{48, 16}
         : isa == TCC_UK_ISA_AVX2 ? Tiles{16, 8}
                                  : Tiles{8, 4};
}

std::string describe(const GemmCase &c) {
  std::string s = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                  std::to_string(c.k) + " flags=" + std::to_string(c.flags);
  if (c.padA || c.padB || c.padC)
    s += " pads=" + std::to_string(c.padA) + "," + std::to_string(c.padB) +
         "," + std::to_string(c.padC);
  if (c.biasPerRow)
    s += " bias/row";
  if (c.biasPerCol)
    s += " bias/col";
  if (c.residual)
    s += " residual";
  if (c.act)
    s += c.act == TCC_UK_ACT_GELU ? " gelu" : " gelu(tanh)";
  if (c.clamp)
    s += " clamp[" + std::to_string(c.lo) + "," + std::to_string(c.hi) + "]";
  return s;
}

/// Inputs of one case, laid out as its flags say.
struct GemmData {
  GemmData(const Variant &v, const GemmCase &c, const Variant *packer) {
    const bool ta = c.flags & TCC_UK_TRANS_A, tb = c.flags & TCC_UK_TRANS_B;
    lda = (ta ? c.m : c.k) + c.padA;
    ldb = (tb ? c.k : c.n) + c.padB;
    ldc = c.n + c.padC;
    ldr = c.n + 3;
    a = randomVector(std::max<int64_t>(1, (ta ? c.k : c.m) * lda), c.seed);
    b = randomVector(std::max<int64_t>(1, (tb ? c.n : c.k) * ldb), c.seed + 1);
    c0 = randomVector(std::max<int64_t>(1, c.m * ldc), c.seed + 2);
    if (!(c.flags & TCC_UK_ACCUMULATE)) // must not be read
      std::fill(c0.begin(), c0.end(), std::nanf(""));
    bias = randomVector(std::max(c.m, c.n), c.seed + 3);
    res = randomVector(std::max<int64_t>(1, c.m * ldr), c.seed + 4);
    const int32_t isa = v.isaFn();
    if (c.flags & TCC_UK_PACKED_A) {
      packedA.resize(packer->packABytes(isa, c.m, c.k) / sizeof(float) + 1);
      packer->packA(isa, c.m, c.k, a.data(), lda, ta, packedA.data());
    }
    if (c.flags & TCC_UK_PACKED_B) {
      packedB.resize(packer->packBBytes(isa, c.k, c.n) / sizeof(float) + 1);
      packer->packB(isa, c.k, c.n, b.data(), ldb, tb, packedB.data());
    }
  }

  double aAt(const GemmCase &c, int64_t i, int64_t p) const {
    return c.flags & TCC_UK_TRANS_A ? a[p * lda + i] : a[i * lda + p];
  }
  double bAt(const GemmCase &c, int64_t p, int64_t j) const {
    return c.flags & TCC_UK_TRANS_B ? b[j * ldb + p] : b[p * ldb + j];
  }

  int64_t lda, ldb, ldc, ldr;
  std::vector<float> a, b, c0, bias, res, packedA, packedB;
};

/// Runs one case; returns C. Checks the scratch guard.
std::vector<float> runGemm(const Variant &v, const GemmCase &c,
                           const GemmData &d, const tcc_host_api_t *host) {
  std::vector<float> out = d.c0;
  tcc_uk_epilogue_t ep = {};
  if (c.biasPerRow || c.biasPerCol) {
    ep.bias = d.bias.data();
    ep.bias_per_row = c.biasPerRow;
  }
  if (c.residual) {
    ep.residual = d.res.data();
    ep.ldr = d.ldr;
  }
  ep.has_clamp = c.clamp;
  ep.clamp_min = c.lo;
  ep.clamp_max = c.hi;
  ep.activation = c.act;
  const int64_t need = v.sgemmScratchBytes(v.isaFn(), c.flags, c.m, c.n, c.k);
  EXPECT_GE(need, 0);
  Scratch scratch(c.scratchNull ? 0 : need);
  const float *a = c.flags & TCC_UK_PACKED_A ? d.packedA.data() : d.a.data();
  const float *b = c.flags & TCC_UK_PACKED_B ? d.packedB.data() : d.b.data();
  EXPECT_EQ(0, v.sgemm(host, c.m, c.n, c.k, a, d.lda, b, d.ldb, out.data(),
                       d.ldc, c.flags, &ep, scratch.get()));
  EXPECT_TRUE(scratch.guardIntact())
      << describe(c) << ": wrote past " << need << " bytes of scratch";
  return out;
}

/// Runs the case serially and compares with the reference, and leaves the
/// padding between rows of C untouched.
void checkGemm(const Variant &v, const GemmCase &c,
               const Variant *packer = nullptr) {
  SCOPED_TRACE(describe(c));
  const GemmData d(v, c, packer ? packer : &v);
  const std::vector<float> out = runGemm(v, c, d, nullptr);
  std::vector<double> want(c.m * c.n), mag(c.m * c.n);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0, m = 0;
      if (c.flags & TCC_UK_ACCUMULATE) {
        s = d.c0[i * d.ldc + j];
        m = std::fabs(s);
      }
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = d.aAt(c, i, p) * d.bAt(c, p, j);
        s += x;
        m += std::fabs(x);
      }
      if (c.biasPerRow || c.biasPerCol) {
        const double bv = d.bias[c.biasPerRow ? i : j];
        s += bv;
        m += std::fabs(bv);
      }
      if (c.residual) {
        s += d.res[i * d.ldr + j];
        m += std::fabs(d.res[i * d.ldr + j]);
      }
      if (c.act) {
        // The activation of the exact sum: its slope is at most 1.13, so
        // the sum's rounding (mag) carries over scaled by that, and the
        // approximation itself adds up to 3e-7 |s| (Phi within 1e-7, exp
        // and the division a few ulps).
        const double phi =
            c.act == TCC_UK_ACT_GELU
                ? 0.5 * (1 + std::erf(s / std::sqrt(2.0)))
                : 0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) *
                                       (s + 0.044715 * s * s * s)));
        m = 1.13 * m + 3e-7 * std::fabs(s) / ((c.k + 6) * FLT_EPSILON);
        s *= phi;
      }
      if (c.clamp)
        s = std::min<double>(std::max<double>(s, c.lo), c.hi);
      want[i * c.n + j] = s;
      mag[i * c.n + j] = m;
    }
  expectClose(want, mag, out.data(), c.m, c.n, d.ldc, c.k + 3, v.name);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < d.ldc; ++j)
      ASSERT_TRUE(std::memcmp(&out[i * d.ldc + j], &d.c0[i * d.ldc + j],
                              sizeof(float)) == 0)
          << "wrote the padding of C at (" << i << ", " << j << ")";
}

using Sgemm = VariantTest;

TEST_P(Sgemm, ReportsItsIsa) {
  if (v->isa >= 0) {
    EXPECT_EQ(v->isaFn(), v->isa);
  }
}

// Sizes of 1, primes, multiples of every tile (4x8, 6x16, 8x48), sizes
// around the K block (256/384) and N block (512/672/1024), tall, wide.
TEST_P(Sgemm, MatchesReferenceOnManyShapes) {
  const int64_t shapes[][3] = {
      {1, 1, 1},      {1, 1000, 512},  {2, 3, 5},     {3, 4097, 17},
      {4, 1, 3},      {5, 200, 3},     {7, 13, 31},   {8, 48, 384},
      {12, 16, 256},  {16, 96, 768},   {24, 32, 8},   {13, 1, 70},
      {100, 7, 1},    {3, 50, 1000},   {61, 97, 127}, {9, 49, 385},
      {33, 673, 400}, {17, 1345, 769}, {48, 144, 96}, {127, 255, 257},
      {1, 7, 2000},   {200, 1, 200},   {6, 1025, 33}, {97, 31, 1},
  };
  uint32_t seed = 10;
  for (const auto &s : shapes)
    checkGemm(*v, GemmCase{s[0], s[1], s[2], 0, 0, 0, 0, false, false, false,
                           false, 0, 0, false, seed++});
}

TEST_P(Sgemm, MatchesReferenceOnLargeSquare) {
  checkGemm(*v, GemmCase{512, 512, 512});
}

TEST_P(Sgemm, MatchesReferenceOnResnetShape) {
  checkGemm(*v, GemmCase{64, 3136, 147});
}

TEST_P(Sgemm, HonoursLeadingDimensions) {
  for (const auto &s : std::vector<std::array<int64_t, 3>>{
           {1, 33, 20}, {3, 70, 9}, {29, 53, 41}, {64, 100, 400}}) {
    GemmCase c{s[0], s[1], s[2]};
    c.padA = 5;
    c.padB = 17;
    c.padC = 3;
    checkGemm(*v, c);
  }
}

TEST_P(Sgemm, Accumulates) {
  for (const auto &s : std::vector<std::array<int64_t, 3>>{
           {1, 100, 30}, {4, 9, 1}, {37, 61, 900}, {64, 700, 70}}) {
    GemmCase c{s[0], s[1], s[2]};
    c.flags = TCC_UK_ACCUMULATE;
    c.padC = 2;
    checkGemm(*v, c);
  }
}

TEST_P(Sgemm, AppliesEachEpilogueField) {
  // m = 3 takes the unpacked small-m path, the others the packed one.
  for (int64_t m : {3, 29, 70}) {
    for (int field = 0; field < 7; ++field) {
      GemmCase c{m, 83, 400 + m};
      c.seed = 100 + field;
      c.padC = 1;
      switch (field) {
      case 0:
        c.biasPerRow = true;
        break;
      case 1:
        c.biasPerCol = true;
        break;
      case 2:
        c.residual = true;
        break;
      case 3: // relu
        c.clamp = true;
        break;
      case 4: // relu6-like, both bounds active
        c.clamp = true;
        c.lo = -0.5f;
        c.hi = 0.75f;
        break;
      case 5: // resnet: C = relu(A*B + bias + residual)
        c.biasPerRow = c.residual = c.clamp = true;
        break;
      case 6: // everything, accumulating
        c.flags = TCC_UK_ACCUMULATE;
        c.biasPerCol = c.residual = c.clamp = true;
        c.lo = -1.0f;
        c.hi = 1.0f;
        break;
      }
      checkGemm(*v, c);
    }
  }
}

// GELU after the bias and residual, before the clamp, in both forms and in
// both paths (packed tiles, and small m streaming B).
TEST_P(Sgemm, AppliesGelu) {
  for (int32_t act : {TCC_UK_ACT_GELU, TCC_UK_ACT_GELU_TANH}) {
    GemmCase packed{37, 100, 64};
    packed.biasPerCol = packed.residual = true;
    packed.act = act;
    checkGemm(*v, packed);
    GemmCase prepacked{20, 50, 30, 0, 0, 0, TCC_UK_PACKED_B};
    prepacked.biasPerCol = true;
    prepacked.act = act;
    checkGemm(*v, prepacked);
    GemmCase small{3, 70, 20};
    small.biasPerCol = true;
    small.act = act;
    checkGemm(*v, small);
    GemmCase clamped{9, 40, 16};
    clamped.act = act;
    clamped.clamp = true;
    clamped.lo = -0.1f;
    clamped.hi = 0.5f;
    checkGemm(*v, clamped);
  }
}

/// act(x) for each x, through the GEMM's epilogue: C = x * 1 (m = 1,
/// k = 1), then the activation.
std::vector<float> activate(const Variant &v, int32_t act,
                            const std::vector<float> &xs) {
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> out(xs.size());
  float one = 1.0f;
  tcc_uk_epilogue_t ep = {};
  ep.activation = act;
  EXPECT_EQ(0, v.sgemm(nullptr, 1, n, 1, &one, 1, xs.data(), n, out.data(), n,
                       0, &ep, nullptr));
  return out;
}

// Far out and near zero: GELU of large x is x, of very negative x about 0,
// finite wherever exp's argument is clamped, within 3e-7 |x| everywhere.
TEST_P(Sgemm, GeluTails) {
  const std::vector<float> xs = {-30.0f, -9.0f, -4.0f, -1e-3f,
                                 0.0f,   1e-3f, 4.0f,  200.0f};
  for (int32_t act : {TCC_UK_ACT_GELU, TCC_UK_ACT_GELU_TANH}) {
    const std::vector<float> out = activate(*v, act, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double want = act == TCC_UK_ACT_GELU
                              ? 0.5 * x * std::erfc(-x / std::sqrt(2.0))
                              : x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) *
                                                  (x + 0.044715 * x * x * x)));
      EXPECT_TRUE(std::isfinite(out[i])) << xs[i];
      EXPECT_NEAR(out[i], want, 3e-7 * std::fabs(x) + 1e-30)
          << "act " << act << " at " << xs[i];
    }
  }
}

// No activation gives a subnormal for a normal input (the FPU takes ~100
// cycles for each: GELU's tail had made products with large
// pre-activations run at half their speed).
TEST_P(Sgemm, ActivationsGiveNoSubnormals) {
  std::vector<float> xs;
  for (int i = -40000; i <= 40000; ++i)
    xs.push_back(0.005f * static_cast<float>(i) + 1e-3f);
  for (int32_t act : {TCC_UK_ACT_GELU, TCC_UK_ACT_GELU_TANH, TCC_UK_ACT_SILU}) {
    const std::vector<float> out = activate(*v, act, xs);
    for (size_t i = 0; i < xs.size(); ++i)
      ASSERT_NE(FP_SUBNORMAL, std::fpclassify(out[i]))
          << "act " << act << " at " << xs[i] << ": " << out[i];
  }
}

// SiLU's own exp: within 6 float epsilons of x / (1 + e^-x) over a sweep
// of -87..87 (vexp's form had 5.8 at most); far out, x above and 0 (to
// 1e-35) below, never NaN; NaN stays NaN.
TEST_P(Sgemm, SiluAccurateAndFiniteFarOut) {
  std::vector<float> xs;
  for (int i = 0; i <= 8700; ++i)
    xs.push_back(-87.0f + 0.02f * static_cast<float>(i) + 1e-4f * (i % 7));
  for (float x : {-87.9f, -100.0f, -1e4f, -1e30f, 1e30f, 200.0f, 0.0f})
    xs.push_back(x);
  const std::vector<float> out = activate(*v, TCC_UK_ACT_SILU, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i], want = x / (1 + std::exp(-x));
    ASSERT_TRUE(std::isfinite(out[i])) << x;
    if (x < -87.5)
      EXPECT_NEAR(out[i], 0.0, 1e-35) << x;
    else
      EXPECT_NEAR(out[i], want, 6 * FLT_EPSILON * std::fabs(want) + 1e-37) << x;
  }
  const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_TRUE(std::isnan(activate(*v, TCC_UK_ACT_SILU, nan)[0]));
}

// A last panel of 1-4 columns (49 and 196 columns: 7x7 and 14x14 layers)
// runs its own kernel on AVX-512: every row count, every epilogue field,
// K over two blocks (C read back between them), both operands prepacked.
TEST_P(Sgemm, NarrowLastPanel) {
  for (int64_t extra = 1; extra <= 5; ++extra) {
    GemmCase c{37, 48 + extra, 400};
    c.biasPerRow = c.residual = c.clamp = true;
    c.lo = -0.5f;
    checkGemm(*v, c);
    GemmCase col{13, 96 + extra, 70, 0, 0, 0, TCC_UK_PACKED_B};
    col.biasPerCol = true;
    col.act = TCC_UK_ACT_GELU;
    checkGemm(*v, col);
    GemmCase acc{8, extra, 50, 0, 0, 3, TCC_UK_PACKED_A | TCC_UK_ACCUMULATE};
    checkGemm(*v, acc);
  }
}

// With A prepacked, the narrow last panel runs for groups of 6 or 8 row
// panels at once: the same FMA chains, so the same bits as one panel at a
// time (unpacked A), and within the reference's bound. 139 rows: two groups
// of eight panels, then single panels and a ragged one; K over two blocks.
TEST_P(Sgemm, NarrowLastPanelInGroupsOfRowPanels) {
  for (int64_t extra = 1; extra <= 5; ++extra) {
    for (uint32_t more : {0u, unsigned(TCC_UK_ACCUMULATE)}) {
      GemmCase c{139, 48 + extra, 700, 0, 0, 2, TCC_UK_PACKED_A | more};
      c.biasPerRow = c.residual = c.clamp = true;
      c.lo = -0.25f;
      checkGemm(*v, c);
      SCOPED_TRACE(describe(c));
      const GemmData d(*v, c, v);
      GemmCase plain = c;
      plain.flags &= ~TCC_UK_PACKED_A;
      const std::vector<float> packed = runGemm(*v, c, d, nullptr);
      const std::vector<float> unpacked = runGemm(*v, plain, d, nullptr);
      ASSERT_EQ(packed.size(), unpacked.size());
      for (size_t i = 0; i < packed.size(); ++i)
        ASSERT_EQ(0, std::memcmp(&packed[i], &unpacked[i], sizeof(float)))
            << "element " << i << ": " << packed[i] << " vs " << unpacked[i];
    }
  }
}

// One column past the last full panel (n = 48q + 1, the 7x7 layers) runs
// in the same k loop as that panel's tile on AVX-512: the same bits as the
// first 48q columns and the last one computed as GEMMs of their own, with
// bias per row, a clamp, K over two blocks and a ragged row panel.
TEST_P(Sgemm, OneColumnPastThePanelsHasItsOwnBits) {
  for (int64_t n : {49, 97}) {
    const int64_t m = 139, k = 700, wide = n - 1;
    const std::vector<float> a = randomVector(m * k, 3),
                             b = randomVector(k * n, 4);
    const std::vector<float> bias = randomVector(m, 5);
    tcc_uk_epilogue_t ep = {};
    ep.bias = bias.data();
    ep.bias_per_row = 1;
    ep.has_clamp = 1;
    ep.clamp_min = -0.5f;
    ep.clamp_max = 1e30f;
    auto gemm = [&](int64_t cols, const float *bp, float *c, int64_t ldc) {
      Scratch scratch(v->sgemmScratchBytes(isa(), 0, m, cols, k));
      ASSERT_EQ(0, v->sgemm(nullptr, m, cols, k, a.data(), k, bp, n, c, ldc, 0,
                            &ep, scratch.get()));
    };
    std::vector<float> all(m * n), left(m * wide), last(m);
    gemm(n, b.data(), all.data(), n);
    gemm(wide, b.data(), left.data(), wide);
    gemm(1, b.data() + wide, last.data(), 1);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < wide; ++j)
        ASSERT_EQ(0, std::memcmp(&all[i * n + j], &left[i * wide + j], 4))
            << "n " << n << " (" << i << ", " << j << ")";
      ASSERT_EQ(0, std::memcmp(&all[i * n + wide], &last[i], 4))
          << "n " << n << " row " << i;
    }
  }
}

TEST_P(Sgemm, ZeroKStoresTheEpilogueOfZero) {
  for (int64_t m : {2, 20}) {
    GemmCase c{m, 37, 0};
    c.biasPerCol = c.residual = true;
    checkGemm(*v, c);
    c.flags = TCC_UK_ACCUMULATE;
    checkGemm(*v, c);
  }
}

TEST_P(Sgemm, EmptyOutputWritesNothing) {
  float c = 42.0f, a = 1.0f, b = 1.0f;
  EXPECT_EQ(
      0, v->sgemm(nullptr, 0, 1, 1, &a, 1, &b, 1, &c, 1, 0, nullptr, nullptr));
  EXPECT_EQ(
      0, v->sgemm(nullptr, 1, 0, 1, &a, 1, &b, 1, &c, 1, 0, nullptr, nullptr));
  EXPECT_EQ(c, 42.0f);
}

TEST_P(Sgemm, Transposes) {
  for (uint32_t flags : std::vector<uint32_t>{
           TCC_UK_TRANS_A, TCC_UK_TRANS_B, TCC_UK_TRANS_A | TCC_UK_TRANS_B}) {
    for (const auto &s : std::vector<std::array<int64_t, 3>>{
             {1, 50, 20},
             {3, 17, 33},
             {45, 77, 500},
             {9, 700, 13},
             // A transposed is packed several row panels at a time: groups
             // that end ragged, over K blocks, in blocks split by threads.
             {101, 40, 300},
             {130, 70, 600}}) {
      GemmCase c{s[0], s[1], s[2]};
      c.flags = flags;
      c.padA = 3;
      c.padB = 2;
      checkGemm(*v, c);
    }
  }
}

TEST_P(Sgemm, Prepacked) {
  // Packed by the variant itself and by tcc_ukernels (what the compiler
  // does at compile time), from plain and transposed storage.
  const Variant &host = variantNamed("host");
  for (const Variant *packer : {v, &host}) {
    for (uint32_t flags :
         std::vector<uint32_t>{TCC_UK_PACKED_A, TCC_UK_PACKED_B,
                               TCC_UK_PACKED_A | TCC_UK_PACKED_B,
                               TCC_UK_PACKED_B | TCC_UK_TRANS_B,
                               TCC_UK_PACKED_A | TCC_UK_TRANS_A}) {
      for (const auto &s : std::vector<std::array<int64_t, 3>>{
               {1, 1000, 64}, {3, 20, 7}, {50, 99, 400}, {16, 700, 500}}) {
        GemmCase c{s[0], s[1], s[2]};
        c.flags = flags | TCC_UK_ACCUMULATE;
        c.biasPerRow = c.clamp = true;
        c.padA = 1;
        c.padB = 4;
        checkGemm(*v, c, packer);
      }
    }
  }
}

TEST_P(Sgemm, HostPacksTheSameBytes) {
  const Variant &host = variantNamed("host");
  const int64_t m = 37, n = 101, k = 53;
  const std::vector<float> a = randomVector(m * k, 5),
                           b = randomVector(k * n, 6);
  for (int trans = 0; trans < 2; ++trans) {
    const int64_t aBytes = v->packABytes(isa(), m, k);
    ASSERT_EQ(aBytes, host.packABytes(isa(), m, k));
    std::vector<float> pv(aBytes / 4), ph(aBytes / 4);
    v->packA(isa(), m, k, a.data(), trans ? m : k, trans, pv.data());
    host.packA(isa(), m, k, a.data(), trans ? m : k, trans, ph.data());
    expectIdentical(pv.data(), ph.data(), pv.size(), "packed A");
    const int64_t bBytes = v->packBBytes(isa(), k, n);
    ASSERT_EQ(bBytes, host.packBBytes(isa(), k, n));
    pv.assign(bBytes / 4, 0);
    ph.assign(bBytes / 4, 0);
    v->packB(isa(), k, n, b.data(), trans ? k : n, trans, pv.data());
    host.packB(isa(), k, n, b.data(), trans ? k : n, trans, ph.data());
    expectIdentical(pv.data(), ph.data(), pv.size(), "packed B");
  }
}

TEST_P(Sgemm, MallocsScratchWhenGivenNone) {
  GemmCase c{40, 300, 200};
  c.scratchNull = true;
  checkGemm(*v, c);
}

TEST_P(Sgemm, ClampPassesNaNThrough) {
  const int64_t m = 9, n = 20, k = 5;
  for (int64_t rows : {int64_t(2), m}) { // small-m path and packed path
    std::vector<float> a = randomVector(rows * k, 1),
                       b = randomVector(k * n, 2);
    a[0] = std::nanf("");
    std::vector<float> c(rows * n);
    tcc_uk_epilogue_t ep = {};
    ep.has_clamp = 1;
    ep.clamp_min = 0.0f;
    ep.clamp_max = 6.0f;
    ASSERT_EQ(0, v->sgemm(nullptr, rows, n, k, a.data(), k, b.data(), n,
                          c.data(), n, 0, &ep, nullptr));
    for (int64_t j = 0; j < n; ++j)
      EXPECT_TRUE(std::isnan(c[j])) << "column " << j;
    for (int64_t i = 1; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        EXPECT_TRUE(c[i * n + j] >= 0.0f && c[i * n + j] <= 6.0f);
  }
}

// Every thread count gives the serial result bit for bit: the shapes cover
// the n split, the m split (which packs all of B first), the small-m path
// and prepacked operands.
TEST_P(Sgemm, ThreadCountDoesNotChangeResults) {
  std::vector<GemmCase> cases = {
      GemmCase{300, 700, 500}, GemmCase{512, 49, 600},
      GemmCase{3, 5000, 300},  GemmCase{64, 3136, 64},
      GemmCase{1000, 20, 300}, GemmCase{77, 1500, 100}};
  cases[1].biasPerRow = cases[1].residual = cases[1].clamp = true;
  cases.push_back(GemmCase{200, 97, 500}); // a narrow last panel
  cases.back().residual = true;
  cases[2].biasPerCol = true;
  cases[4].flags = TCC_UK_ACCUMULATE | TCC_UK_PACKED_B;
  cases[5].flags = TCC_UK_PACKED_A | TCC_UK_TRANS_B;
  for (const GemmCase &c : cases) {
    SCOPED_TRACE(describe(c));
    const GemmData d(*v, c, v);
    const std::vector<float> serial = runGemm(*v, c, d, nullptr);
    for (int threads : {1, 2, 3}) {
      ThreadHost host(threads);
      const std::vector<float> out = runGemm(*v, c, d, host.get());
      expectIdentical(serial.data(), out.data(), serial.size(),
                      std::to_string(threads) + " threads");
      if (threads > 1) {
        EXPECT_GT(host.calls, 0) << "never asked the host for threads";
      }
    }
  }
}

// Prepacked weights (B) of at least 2^18 floats under 2 to 256 rows of
// A: A is packed whole into the scratch by a first pass (a row panel a
// range), then each task takes B a panel at a time through all its row
// panels. The same bits as the block order (the same GEMM with A
// prepacked), on 1 to 3 threads: epilogues, accumulation, a transposed
// A, ragged and narrow last panels, several K blocks.
TEST_P(Sgemm, PrepackedWeightsPanelByPanel) {
  const int32_t i = isa();
  const int64_t mr = i == TCC_UK_ISA_AVX512 ? 8 : i == TCC_UK_ISA_AVX2 ? 6 : 4;
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_B, 197, 3072, 768),
            v->packABytes(i, 197, 768) + 64);
  EXPECT_EQ(
      v->sgemmScratchBytes(i, TCC_UK_PACKED_B | TCC_UK_TRANS_A, 32, 1024, 256),
      v->packABytes(i, 32, 256) + 64);
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_B, 2, 3072, 768),
            v->packABytes(i, 2, 768) + 64);
  // One row, more rows, a smaller B, or A prepacked too: none.
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_B, 1, 3072, 768), 0);
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_B, 257, 3072, 768), 0);
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_B, 197, 1000, 262), 0);
  EXPECT_EQ(v->sgemmScratchBytes(i, TCC_UK_PACKED_A | TCC_UK_PACKED_B, 197,
                                 3072, 768),
            0);
  std::vector<GemmCase> cases = {
      GemmCase{37, 600, 450, 0, 0, 2, TCC_UK_PACKED_B},
      GemmCase{64, 97, 2800, 0, 0, 0, TCC_UK_PACKED_B},
      GemmCase{200, 530, 500, 3, 0, 1, TCC_UK_PACKED_B},
      GemmCase{33, 1000, 300, 0, 0, 0, TCC_UK_PACKED_B | TCC_UK_TRANS_A},
      GemmCase{40, 700, 400, 0, 0, 0, TCC_UK_PACKED_B | TCC_UK_ACCUMULATE},
      GemmCase{256, 1030, 256, 0, 0, 0, TCC_UK_PACKED_B},
      GemmCase{5, 1500, 200, 0, 0, 0, TCC_UK_PACKED_B},
  };
  cases[0].biasPerCol = cases[0].residual = cases[0].clamp = true;
  cases[0].lo = -0.5f;
  cases[2].act = TCC_UK_ACT_GELU;
  cases[2].biasPerCol = true;
  cases[3].biasPerRow = true;
  cases[4].residual = true;
  for (const GemmCase &c : cases) {
    SCOPED_TRACE(describe(c));
    checkGemm(*v, c);
    GemmCase blocks = c; // the same product in the block order
    blocks.flags |= TCC_UK_PACKED_A;
    const GemmData d(*v, blocks, v);
    const std::vector<float> want = runGemm(*v, blocks, d, nullptr);
    for (int threads : {1, 2, 3}) {
      ThreadHost host(threads);
      const std::vector<float> got = runGemm(*v, c, d, host.get());
      expectIdentical(want.data(), got.data(), want.size(),
                      std::to_string(threads) + " threads");
      if (threads > 1) {
        // A's row panels packed first (a single one on the caller), then
        // the tasks.
        const int64_t panels = (c.m + mr - 1) / mr;
        ASSERT_EQ(host.counts.size(), panels > 1 ? 2u : 1u);
        if (panels > 1)
          EXPECT_EQ(host.counts[0], panels);
      }
    }
  }
}

// A GEMV (a batch-1 Linear: m = 1, B its prepacked weights) streams B:
// a float of it costs several row panels' multiply-adds, not one, so 1000
// x 1024 is split across two threads (it was one task: under kMinTaskWork
// a thread counted by m n k), each streaming half of the weights, and so
// is a squeeze-and-excitation FC (672 -> 168, 450 KB of weights; it was
// one task at four row panels' worth a float); a 120 -> 32 one (15 KB)
// stays on the caller. The bits are the serial run's.
TEST_P(Sgemm, GemvSplitsAcrossThreads) {
  for (const GemmCase &c : {GemmCase{1, 1000, 1024, 0, 0, 0, TCC_UK_PACKED_B},
                            GemmCase{1, 168, 672, 0, 0, 0, TCC_UK_PACKED_B},
                            GemmCase{1, 32, 120, 0, 0, 0, TCC_UK_PACKED_B}}) {
    SCOPED_TRACE(describe(c));
    const GemmData d(*v, c, v);
    const std::vector<float> serial = runGemm(*v, c, d, nullptr);
    ThreadHost host(2);
    const std::vector<float> out = runGemm(*v, c, d, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
    if (c.k == 120)
      EXPECT_TRUE(host.parts.empty() || host.parts == std::vector<size_t>({1}));
    else
      EXPECT_EQ(host.parts, std::vector<size_t>({2}));
    checkGemm(*v, c);
  }
}

// A small B (at most 784 columns and 160 rows) with a tall A splits the
// rows of C across the threads: a mobilenet_v2 expansion then leaves each
// thread's channels in its own cache for the depthwise part after it. A
// plain B whose ragged panel reads in place is read where it lies (the
// scratch stays untouched); one whose panel does not is packed by a first
// pass. More columns: split by columns, each task packing its own. The
// bits are the same every way.
TEST_P(Sgemm, SmallBAndTallASplitRows) {
  const Tiles t = tilesOf(isa());
  const int64_t inPlace = 4 * t.nr + t.vl, packed = 4 * t.nr + t.vl + 5;
  const uint32_t pa = TCC_UK_PACKED_A;
  for (const GemmCase &c : {GemmCase{384, inPlace, 64, 0, 0, 0, pa},
                            GemmCase{384, packed, 64, 0, 0, 0, pa},
                            GemmCase{384, 3136, 64, 0, 0, 0, pa}}) {
    SCOPED_TRACE(describe(c));
    const GemmData d(*v, c, v);
    const std::vector<float> serial = runGemm(*v, c, d, nullptr);
    ThreadHost host(2);
    std::vector<float> out = d.c0;
    Scratch scratch(v->sgemmScratchBytes(isa(), c.flags, c.m, c.n, c.k));
    ASSERT_EQ(0, v->sgemm(host.get(), c.m, c.n, c.k, d.packedA.data(), d.lda,
                          d.b.data(), d.ldb, out.data(), d.ldc, c.flags,
                          nullptr, scratch.get()));
    expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
    if (c.n == inPlace) {
      EXPECT_EQ(host.parts, std::vector<size_t>({2}));
      EXPECT_TRUE(scratch.untouched()) << "B packed";
    } else if (c.n == packed) {
      EXPECT_EQ(host.parts.size(), 2u) << "packing B, then the rows";
      EXPECT_EQ(host.parts.back(), 2u);
    } else {
      EXPECT_EQ(host.parts, std::vector<size_t>({2}));
      EXPECT_FALSE(scratch.untouched()) << "each task packs its columns";
    }
  }
}

// A tall A over few columns of B splits its rows when the columns would
// split unevenly: a classifier 1x1 at 13x13 (1000 x 169 x 512, on AVX-512
// 96 against 73 columns, 6 against 5 vectors) packs B by a first pass and
// then runs a half of the rows a thread; so does GoogLeNet's 128 x 49 x
// 832 (48 + 1 columns). The other ISAs' tiles split those columns evenly
// enough, so only the bits are checked there.
TEST_P(Sgemm, TallANarrowBSplitsRows) {
  const uint32_t pa = TCC_UK_PACKED_A;
  for (const GemmCase &c : {GemmCase{1000, 169, 512, 0, 0, 0, pa},
                            GemmCase{128, 49, 832, 0, 0, 0, pa}}) {
    SCOPED_TRACE(describe(c));
    const GemmData d(*v, c, v);
    const std::vector<float> serial = runGemm(*v, c, d, nullptr);
    ThreadHost host(2);
    const std::vector<float> out = runGemm(*v, c, d, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
    if (isa() == TCC_UK_ISA_AVX512) {
      ASSERT_EQ(host.parts.size(), 2u) << "packing B, then the rows";
      EXPECT_EQ(host.parts.back(), 2u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Sgemm, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace

// A ragged last panel is packed only as wide as its whole vectors (rows of
// roundUp(w, VL) floats instead of NR): attention's 64-column products
// (48 + 16 on AVX-512) take 64 columns of scratch a row, not 96.
TEST_P(Sgemm, RaggedLastPanelIsCompact) {
  const Tiles t = tilesOf(isa());
  const int64_t k = 5;
  EXPECT_EQ(v->packBBytes(isa(), k, t.nr), t.nr * k * 4);
  EXPECT_EQ(v->packBBytes(isa(), k, t.nr + 1), (t.nr + t.vl) * k * 4);
  EXPECT_EQ(v->packBBytes(isa(), k, 2 * t.nr + t.vl),
            (2 * t.nr + t.vl) * k * 4);
  // Element (p, j) of the ragged panel sits at nr*k + p*vl + (j - nr).
  const int64_t n = t.nr + 3;
  std::vector<float> b(k * n);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>(i + 1);
  std::vector<float> packed(v->packBBytes(isa(), k, n) / 4, -1.0f);
  v->packB(isa(), k, n, b.data(), n, 0, packed.data());
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = t.nr; j < t.nr + t.vl; ++j)
      EXPECT_EQ(packed[t.nr * k + p * t.vl + (j - t.nr)],
                j < n ? b[p * n + j] : 0.0f)
          << "p " << p << " j " << j;
  // The run-time packing's scratch shrinks the same way.
  // (64 columns are whole vectors and panels on every ISA; 64 bytes align.)
  EXPECT_EQ(v->sgemmScratchBytes(isa(), 0, 128, 64, 128), 64 * 128 * 4 + 64);
}

// A plain B is read where it lies when A has at most 64 rows (and k is at
// most 512): at most its ragged panel is packed, and the bits are those of the
// packed path (here B prepacked), with padded rows, every epilogue field,
// accumulation, K over two blocks, the narrow panel and threads.
TEST_P(Sgemm, DirectBGivesThePackedBits) {
  const Tiles t = tilesOf(isa());
  // The scratch: the ragged panel alone (none when n is whole panels).
  const int64_t rag = 3136 % t.nr + 5;
  EXPECT_EQ(v->sgemmScratchBytes(isa(), TCC_UK_PACKED_A, 24, 3136 + 5, 144),
            144 * ((rag + t.vl - 1) / t.vl * t.vl) * 4 + 64);
  EXPECT_EQ(v->sgemmScratchBytes(isa(), 0, 16, 10 * 48, 32), 0);
  // More rows of A: packed.
  EXPECT_EQ(v->sgemmScratchBytes(isa(), 0, 72, 10 * 48, 32),
            32 * 10 * 48 * 4 + 64);
  // A ragged panel of whole vectors, or one the narrow kernels take (1-4
  // columns on AVX-512), is read where it lies too: no scratch.
  EXPECT_EQ(v->sgemmScratchBytes(isa(), 0, 16, 10 * t.nr + t.vl, 32), 0);
  for (int64_t r : {1, 4})
    EXPECT_EQ(v->sgemmScratchBytes(isa(), 0, 16, 10 * t.nr + r, 32),
              isa() == TCC_UK_ISA_AVX512 || r % t.vl == 0
                  ? 0
                  : 32 * ((r + t.vl - 1) / t.vl * t.vl) * 4 + 64)
        << r << " columns";
  const std::vector<GemmCase> cases = {
      GemmCase{24, 3136 + 5, 144, 0, 3, 1, TCC_UK_PACKED_A},
      GemmCase{24, 4 * t.nr + t.vl, 200, 0, 0, 0, TCC_UK_PACKED_A},
      GemmCase{17, 7 * t.nr + 1, 96, 0, 0, 0, TCC_UK_PACKED_A},
      GemmCase{16, 100, 32, 2, 0, 0, 0},
      GemmCase{64, 49, 500, 0, 1, 0, TCC_UK_PACKED_A | TCC_UK_ACCUMULATE},
      GemmCase{40, 96, 450, 0, 0, 0, TCC_UK_ACCUMULATE},
  };
  for (GemmCase c : cases) {
    c.biasPerRow = c.residual = c.clamp = true;
    c.lo = -0.5f;
    checkGemm(*v, c);
    SCOPED_TRACE(describe(c));
    GemmCase packed = c;
    packed.flags |= TCC_UK_PACKED_B;
    const GemmData d(*v, packed, v);
    const std::vector<float> want = runGemm(*v, packed, d, nullptr);
    for (int threads : {1, 2, 3}) {
      ThreadHost host(threads);
      const std::vector<float> got = runGemm(*v, c, d, host.get());
      expectIdentical(want.data(), got.data(), want.size(),
                      std::to_string(threads) + " threads");
    }
  }
  // Four tasks a thread (none repeats any packing), so that a thread
  // running late or slower hands some to the other: 3136 columns on 2
  // threads.
  const GemmCase wide{24, 3136, 144, 0, 0, 0, TCC_UK_PACKED_A};
  const GemmData d(*v, wide, v);
  ThreadHost host(2);
  runGemm(*v, wide, d, host.get());
  ASSERT_EQ(host.counts.size(), 1u);
  EXPECT_EQ(host.counts[0], 8);
}
