// block_test.cc - tcc_uk_block_conv2d_nchw (a 1x1 expansion, a depthwise
// convolution and the 1x1 after it, as one call, a band of rows at a time
// or each half of the channels on its own thread) in every variant the CPU
// can run, against the same convolutions made as separate calls (each
// checked against double references in conv2d_test.cc and dwpw_test.cc):
// the block promises their bits, except in the channel-blocked layout
// (AVX-512, a 1x1 expansion), whose sums run in another order: there the
// block is checked against the block in double, within the rounding bound
// carried through its three stages.
#include "uk_internal.h"
#include "uk_test_util.h"

namespace {

using namespace uktest;

struct BlockCase {
  int64_t n, c, e, h, w, f; // input [n, c, h, w]; e expanded, f outputs
  int64_t s = 1;            // depthwise stride
  int64_t k = 3;            // depthwise window k x k, pads (k - 1) / 2
  int64_t pt = 1, pl = 1, pb = 1, pr = 1;
  // The first convolution's window (1x1 by default, else k x k, stride
  // es, pads ep; h and w are its input's).
  int64_t ek = 1, es = 1, ep = 0;
  bool packed = true;    // both 1x1 weights prepacked
  bool epilogues = true; // biases and ReLU6 on expansion and depthwise
  bool residual = false; // on the output
  uint32_t seed = 11;

  BlockCase &stride(int64_t v) {
    s = v;
    return *this;
  }
  BlockCase &window(int64_t v) {
    k = v;
    pt = pl = pb = pr = (v - 1) / 2;
    return *this;
  }
  BlockCase &pads(int64_t t, int64_t l, int64_t b, int64_t r) {
    pt = t;
    pl = l;
    pb = b;
    pr = r;
    return *this;
  }
  BlockCase &unpacked() {
    packed = false;
    return *this;
  }
  BlockCase &plain() {
    epilogues = false;
    return *this;
  }
  BlockCase &withResidual() {
    residual = true;
    return *this;
  }
  BlockCase &first(int64_t k, int64_t stride, int64_t pad) {
    ek = k;
    es = stride;
    ep = pad;
    return *this;
  }

  int64_t xh() const { return (h + 2 * ep - ek) / es + 1; } // x: e x xh x xw
  int64_t xw() const { return (w + 2 * ep - ek) / es + 1; }
  int64_t oh() const { return (xh() + pt + pb - k) / s + 1; }
  int64_t ow() const { return (xw() + pl + pr - k) / s + 1; }
  tcc_uk_conv2d_params_t expansion() const {
    tcc_uk_conv2d_params_t p = {};
    p.n = n;
    p.c = c;
    p.h = h;
    p.w = w;
    p.f = e;
    p.kh = p.kw = ek;
    p.stride_h = p.stride_w = es;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = ep;
    p.groups = 1;
    p.flags = packed ? TCC_UK_PACKED_A : 0;
    return p;
  }
  tcc_uk_conv2d_params_t depthwise() const {
    tcc_uk_conv2d_params_t p = {};
    p.n = n;
    p.c = e;
    p.h = xh();
    p.w = xw();
    p.f = e;
    p.kh = p.kw = k;
    p.stride_h = p.stride_w = s;
    p.pad_top = pt;
    p.pad_left = pl;
    p.pad_bottom = pb;
    p.pad_right = pr;
    p.groups = e;
    return p;
  }
  tcc_uk_conv2d_params_t pointwise() const {
    tcc_uk_conv2d_params_t p = {};
    p.n = n;
    p.c = e;
    p.h = oh();
    p.w = ow();
    p.f = f;
    p.kh = p.kw = 1;
    p.flags = packed ? TCC_UK_PACKED_A : 0;
    return p;
  }
  tcc_uk_block_params_t params() const {
    tcc_uk_block_params_t p = {};
    p.pair.dw = depthwise();
    p.pair.f = f;
    p.pair.dw_has_clamp = epilogues;
    p.pair.dw_clamp_min = 0.0f;
    p.pair.dw_clamp_max = 6.0f;
    p.pair.flags = packed ? TCC_UK_PACKED_A : 0;
    p.exp = expansion();
    p.exp_has_clamp = epilogues;
    p.exp_clamp_min = 0.0f;
    p.exp_clamp_max = 6.0f;
    return p;
  }
};

std::string describe(const BlockCase &b) {
  auto s = [](int64_t x) { return std::to_string(x); };
  return "x[" + s(b.n) + "," + s(b.c) + "," + s(b.h) + "," + s(b.w) + "] " +
         s(b.ek) + "x" + s(b.ek) + "/" + s(b.es) + " pad " + s(b.ep) + " -> " +
         s(b.e) + " " + s(b.k) + "x" + s(b.k) + " stride " + s(b.s) + " pads " +
         s(b.pt) + "," + s(b.pl) + "," + s(b.pb) + "," + s(b.pr) + " -> " +
         s(b.f) + (b.packed ? " packed" : "") + (b.epilogues ? "" : " plain") +
         (b.residual ? " residual" : "");
}

struct BlockData {
  BlockData(const Variant &v, const BlockCase &b) {
    x = randomVector(b.n * b.c * b.h * b.w, b.seed, -2.0f, 2.0f);
    expW = randomVector(b.e * b.c * b.ek * b.ek, b.seed + 1);
    expBias = randomVector(b.e, b.seed + 2);
    dwW = randomVector(b.e * b.k * b.k, b.seed + 3);
    dwBias = randomVector(b.e, b.seed + 4);
    pwW = randomVector(b.f * b.e, b.seed + 5);
    bias = randomVector(b.f, b.seed + 6);
    res = randomVector(b.n * b.f * b.oh() * b.ow(), b.seed + 7);
    auto pack = [&](const tcc_uk_conv2d_params_t &p,
                    const std::vector<float> &w) {
      if (!b.packed)
        return w;
      std::vector<float> out(v.convPackWeightsBytes(v.isaFn(), &p) / 4 + 1);
      v.convPackWeights(v.isaFn(), &p, w.data(), out.data());
      return out;
    };
    expPacked = pack(b.expansion(), expW);
    pwPacked = pack(b.pointwise(), pwW);
  }
  std::vector<float> x, expW, expBias, dwW, dwBias, pwW, bias, res;
  std::vector<float> expPacked, pwPacked;
};

tcc_uk_epilogue_t biasClamp(const float *bias, bool clamp) {
  tcc_uk_epilogue_t ep = {};
  ep.bias = bias;
  ep.has_clamp = clamp;
  ep.clamp_min = 0.0f;
  ep.clamp_max = 6.0f;
  return ep;
}

/// The block as one call. Where the variant runs it channel-blocked, its
/// weights come packed for that (tcc_uk_block_pack_weights, as a compiler
/// packs constants) unless packBlocked is false, when the call lays out
/// the GEMM-packed (or plain) ones itself.
std::vector<float> runBlock(const Variant &v, const BlockCase &b,
                            const BlockData &d, const tcc_host_api_t *host,
                            bool packBlocked = true) {
  std::vector<float> out(b.n * b.f * b.oh() * b.ow(), std::nanf(""));
  tcc_uk_block_params_t p = b.params();
  p.exp_bias = b.epilogues ? d.expBias.data() : nullptr;
  p.pair.dw_bias = b.epilogues ? d.dwBias.data() : nullptr;
  const float *weights[] = {d.expPacked.data(), d.dwW.data(),
                            d.pwPacked.data()};
  std::vector<float> blocked[3];
  if (packBlocked && v.blockBlocked(v.isaFn(), &p)) {
    const std::vector<float> *plain[] = {&d.expW, &d.dwW, &d.pwW};
    for (int32_t part = 0; part < 3; ++part) {
      blocked[part].resize(v.blockPackWeightsBytes(v.isaFn(), &p, part) /
                           sizeof(float));
      v.blockPackWeights(v.isaFn(), &p, part, plain[part]->data(),
                         blocked[part].data());
      weights[part] = blocked[part].data();
    }
    p.exp.flags = TCC_UK_PACKED_BLOCKED; // the call's flags otherwise as asked
  }
  // Asked with the call's flags: no room for laying out weights that come
  // packed for the channel-blocked kernels.
  const int64_t need = v.blockScratchBytes(v.isaFn(), &p);
  EXPECT_GT(need, 0);
  Scratch scratch(need);
  p.pair.scratch = scratch.get();
  tcc_uk_epilogue_t ep = biasClamp(d.bias.data(), false);
  ep.residual = b.residual ? d.res.data() : nullptr;
  EXPECT_EQ(0, v.blockConv2d(host, &p, d.x.data(), weights[0], weights[1],
                             weights[2], out.data(), &ep));
  EXPECT_TRUE(scratch.guardIntact())
      << describe(b) << ": wrote past " << need << " bytes of scratch";
  return out;
}

/// The first convolution as a call of its own, on one thread.
std::vector<float> runExpansion(const Variant &v, const BlockCase &b,
                                const BlockData &d) {
  std::vector<float> x(b.n * b.e * b.xh() * b.xw());
  tcc_uk_conv2d_params_t p = b.expansion();
  tcc_uk_epilogue_t ep =
      biasClamp(b.epilogues ? d.expBias.data() : nullptr, b.epilogues);
  EXPECT_EQ(
      0, v.conv2d(nullptr, &p, d.x.data(), d.expPacked.data(), x.data(), &ep));
  return x;
}

/// The expansion and the depthwise/pointwise pair as separate calls
/// (tcc_uk_conv2d_nchw, tcc_uk_dwpw_conv2d_nchw), on one thread.
std::vector<float> runTwo(const Variant &v, const BlockCase &b,
                          const BlockData &d) {
  const std::vector<float> x = runExpansion(v, b, d);
  std::vector<float> out(b.n * b.f * b.oh() * b.ow());
  tcc_uk_epilogue_t ep;
  tcc_uk_block_params_t bp = b.params();
  bp.pair.dw_bias = b.epilogues ? d.dwBias.data() : nullptr;
  ep = biasClamp(d.bias.data(), false);
  ep.residual = b.residual ? d.res.data() : nullptr;
  EXPECT_EQ(0, v.dwpwConv2d(nullptr, &bp.pair, x.data(), d.dwW.data(),
                            d.pwPacked.data(), out.data(), &ep));
  return out;
}

/// Whether variant v runs b as two halves of the channels, each expanded,
/// convolved and multiplied on its own thread: on AVX-512, its pair splits
/// k (its scratch is the depthwise output and two partial products) and
/// the expansion, a 1x1 before a stride-1 pair, is under 512 KiB (larger
/// ones go channel-blocked, in bands of rows).
bool splitsK(const Variant &v, const BlockCase &b) {
  const tcc_uk_block_params_t p = b.params();
  auto round16 = [](int64_t x) { return (x + 15) / 16 * 16; };
  const int64_t ohw = b.oh() * b.ow();
  return v.isaFn() == TCC_UK_ISA_AVX512 &&
         v.dwpwScratchBytes(v.isaFn(), &p.pair) ==
             64 + 4 * (round16(b.e * ohw) + 2 * round16(b.f * ohw)) &&
         b.ek == 1 && b.s == 1 && 4 * b.e * b.xh() * b.xw() < (512 << 10);
}

/// The three convolutions as separate calls, on one thread.
std::vector<float> runThree(const Variant &v, const BlockCase &b,
                            const BlockData &d) {
  const std::vector<float> x = runExpansion(v, b, d);
  std::vector<float> mid(b.n * b.e * b.oh() * b.ow());
  std::vector<float> out(b.n * b.f * b.oh() * b.ow());
  tcc_uk_conv2d_params_t p = b.depthwise();
  tcc_uk_epilogue_t ep =
      biasClamp(b.epilogues ? d.dwBias.data() : nullptr, b.epilogues);
  EXPECT_EQ(0, v.conv2d(nullptr, &p, x.data(), d.dwW.data(), mid.data(), &ep));
  p = b.pointwise();
  ep = biasClamp(d.bias.data(), false);
  ep.residual = b.residual ? d.res.data() : nullptr;
  EXPECT_EQ(
      0, v.conv2d(nullptr, &p, mid.data(), d.pwPacked.data(), out.data(), &ep));
  return out;
}

/// The block's reference: the pair as one call where the block splits k
/// as the pair does, else the three convolutions.
std::vector<float> runSeparate(const Variant &v, const BlockCase &b,
                               const BlockData &d) {
  return splitsK(v, b) ? runTwo(v, b, d) : runThree(v, b, d);
}

/// Whether variant v runs b in the channel-blocked layout (blocked.cc):
/// on AVX-512, a 1x1 expansion before a square odd window of 3 to 7,
/// stride 1 or 2, where the block does not split k.
bool blockedLayout(const Variant &v, const BlockCase &b) {
  return v.isaFn() == TCC_UK_ISA_AVX512 && b.ek == 1 && b.k % 2 == 1 &&
         b.k >= 3 && b.k <= 7 && !splitsK(v, b);
}

/// Expects got to be the block within the rounding any fp32 evaluation
/// order allows: the block in double, and a bound carried through its
/// three stages (each sum of t terms within (t + 3) eps times the sum of
/// its terms' magnitudes, plus what the errors of its inputs make through
/// the weights; a clamp does not widen an error).
void expectNearReference(const BlockCase &b, const BlockData &d,
                         const std::vector<float> &got) {
  ASSERT_EQ(b.ek, 1);
  const double eps = FLT_EPSILON;
  const int64_t hw = b.h * b.w, oh = b.oh(), ow = b.ow(), ohw = oh * ow;
  auto clamp = [&](double x) {
    return b.epilogues ? std::min(std::max(x, 0.0), 6.0) : x;
  };
  int failures = 0;
  for (int64_t n = 0; n < b.n; ++n) {
    std::vector<double> x(b.e * hw), xErr(b.e * hw);
    for (int64_t c = 0; c < b.e; ++c)
      for (int64_t i = 0; i < hw; ++i) {
        double sum = b.epilogues ? d.expBias[c] : 0.0, mag = std::fabs(sum);
        for (int64_t k = 0; k < b.c; ++k) {
          const double t =
              double(d.expW[c * b.c + k]) * d.x[(n * b.c + k) * hw + i];
          sum += t;
          mag += std::fabs(t);
        }
        x[c * hw + i] = clamp(sum);
        xErr[c * hw + i] = (b.c + 3) * eps * mag;
      }
    std::vector<double> mid(b.e * ohw), midErr(b.e * ohw);
    for (int64_t c = 0; c < b.e; ++c)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = b.epilogues ? d.dwBias[c] : 0.0, mag = std::fabs(sum);
          double err = 0;
          for (int64_t ky = 0; ky < b.k; ++ky)
            for (int64_t kx = 0; kx < b.k; ++kx) {
              const int64_t iy = oy * b.s - b.pt + ky,
                            ix = ox * b.s - b.pl + kx;
              if (iy < 0 || iy >= b.h || ix < 0 || ix >= b.w)
                continue;
              const double w = d.dwW[(c * b.k + ky) * b.k + kx];
              const int64_t at = c * hw + iy * b.w + ix;
              sum += w * x[at];
              mag += std::fabs(w) * (std::fabs(x[at]) + xErr[at]);
              err += std::fabs(w) * xErr[at];
            }
          mid[c * ohw + oy * ow + ox] = clamp(sum);
          midErr[c * ohw + oy * ow + ox] = err + (b.k * b.k + 3) * eps * mag;
        }
    for (int64_t o = 0; o < b.f; ++o)
      for (int64_t i = 0; i < ohw; ++i) {
        const int64_t at = (n * b.f + o) * ohw + i;
        double sum = d.bias[o] + (b.residual ? d.res[at] : 0.0);
        double mag =
            std::fabs(d.bias[o]) + (b.residual ? std::fabs(d.res[at]) : 0.0);
        double err = 0;
        for (int64_t c = 0; c < b.e; ++c) {
          const double w = d.pwW[o * b.e + c];
          sum += w * mid[c * ohw + i];
          mag += std::fabs(w) *
                 (std::fabs(mid[c * ohw + i]) + midErr[c * ohw + i]);
          err += std::fabs(w) * midErr[c * ohw + i];
        }
        const double tol = err + (b.e + 3) * eps * mag + 1e-30;
        if (!(std::fabs(got[at] - sum) <= tol) && ++failures <= 5)
          ADD_FAILURE() << "output " << at << " is " << got[at] << ", want "
                        << sum << " (tolerance " << tol << ")";
      }
  }
  EXPECT_EQ(failures, 0);
}

/// The block's output: within rounding of the block in double where it
/// runs channel-blocked, else the separate calls' bits.
void expectBlockResult(const Variant &v, const BlockCase &b, const BlockData &d,
                       const std::vector<float> &want,
                       const std::vector<float> &got, const std::string &what) {
  SCOPED_TRACE(what);
  if (blockedLayout(v, b))
    expectNearReference(b, d, got);
  else
    expectIdentical(want.data(), got.data(), want.size(), v.name);
}

void checkBlock(const Variant &v, const BlockCase &b, int threads = 1) {
  SCOPED_TRACE(describe(b) + ", " + std::to_string(threads) + " threads");
  const BlockData d(v, b);
  const std::vector<float> want = runSeparate(v, b, d);
  ThreadHost host(threads);
  const std::vector<float> got =
      runBlock(v, b, d, threads > 1 ? host.get() : nullptr);
  expectBlockResult(v, b, d, want, got, v.name);
}

using Block = VariantTest;

// mobilenet_v2's second block (96 x 112 x 112 expanded, stride 2: several
// bands a part), a stride-1 block with its residual, and its stem (a 3x3
// stride-2 convolution from the image, then the first pair).
TEST_P(Block, MobilenetShapes) {
  checkBlock(*v, BlockCase{1, 16, 96, 112, 112, 24}.stride(2), 2);
  checkBlock(*v, BlockCase{1, 24, 144, 56, 56, 24}.withResidual(), 2);
  checkBlock(*v, BlockCase{1, 3, 32, 224, 224, 16}.first(3, 2, 1), 2);
}

// First convolutions other than a 1x1, through their im2col: odd sizes,
// pads, strides, a 5x5, batch 2, unpacked weights, many threads.
TEST_P(Block, FirstConvolutionWindows) {
  checkBlock(*v, BlockCase{1, 3, 8, 33, 29, 5}.first(3, 2, 1));
  checkBlock(*v, BlockCase{2, 4, 12, 21, 18, 6}.first(5, 2, 2).stride(2), 3);
  checkBlock(*v, BlockCase{1, 2, 10, 40, 12, 4}.first(2, 1, 0).unpacked(), 4);
  checkBlock(*v, BlockCase{1, 3, 16, 64, 9, 8}.first(3, 3, 0).plain(), 6);
}

// A 1x1 expansion before a stride-2 depthwise convolution whose rows are
// wider than half a vector: on AVX-512 the band's input rows are split by
// column parity first, so the expansion's rows come out split and the
// depthwise direct rows read each tap with a plain load. Odd and even
// widths, left pads 0, 1 and 2 (taps at columns 2ox - pl + kx), right pads
// 0 and 1, a batch with a residual on 3 threads: the bits are the separate
// convolutions' (the other ISAs run the same cases unsplit). On AVX-512
// these run channel-blocked, the pads stored as zero columns and rows.
TEST_P(Block, StrideTwoRowsSplitByParity) {
  checkBlock(*v, BlockCase{1, 6, 24, 21, 37, 5}.stride(2));
  checkBlock(*v, BlockCase{1, 6, 24, 20, 40, 5}.stride(2).pads(0, 0, 1, 1));
  checkBlock(*v, BlockCase{1, 6, 24, 19, 35, 5}.stride(2).pads(1, 0, 1, 0));
  checkBlock(*v, BlockCase{1, 6, 24, 18, 34, 5}.stride(2).pads(0, 1, 0, 0));
  checkBlock(*v, BlockCase{1, 6, 24, 18, 39, 5}.stride(2).pads(2, 2, 2, 2));
  checkBlock(*v, BlockCase{2, 8, 40, 30, 33, 9}.stride(2).withResidual(), 3);
}

// A 1x1 expansion under 1 MiB before a stride-1 pair that splits its GEMM's
// k (on AVX-512): each half of the channels is expanded, convolved and
// multiplied by one task, so the bits are those of the expansion and the
// pair as two calls, whose partial products differ from one GEMM's in
// their last bits (so the three calls' bits would show the bands' path).
// 3x3 and 5x5 (lanes) planes from 40x40 to 7x7; 72 planes cut at 36, inside
// a row panel of the packed weights, so the first half's last planes come
// from the second half's expansion; unpacked weights (cut anywhere); a
// batch with a residual; 1 to 4 threads, and one task that runs alone.
TEST_P(Block, HalvesOfKWhereTheExpansionIsSmall) {
  const std::vector<BlockCase> cases = {
      BlockCase{1, 24, 72, 40, 40, 24}.withResidual(),
      BlockCase{1, 40, 120, 28, 28, 40}.window(5),
      BlockCase{1, 80, 480, 14, 14, 96},
      BlockCase{1, 192, 1152, 7, 7, 192}.window(5).withResidual(),
      BlockCase{2, 24, 72, 8, 12, 20}.window(5).withResidual().unpacked(),
      BlockCase{1, 16, 40, 8, 12, 12}.plain(),
  };
  for (const BlockCase &b : cases) {
    SCOPED_TRACE(describe(b));
    ASSERT_EQ(splitsK(*v, b), isa() == TCC_UK_ISA_AVX512);
    const BlockData d(*v, b);
    const std::vector<float> want = runSeparate(*v, b, d);
    if (splitsK(*v, b)) {
      const std::vector<float> three = runThree(*v, b, d);
      EXPECT_NE(0, std::memcmp(want.data(), three.data(),
                               want.size() * sizeof(float)))
          << "the partial products' rounding should show";
    }
    for (int threads : {1, 2, 3, 4}) {
      ThreadHost host(threads);
      expectIdentical(
          want.data(),
          runBlock(*v, b, d, threads > 1 ? host.get() : nullptr).data(),
          want.size(), std::to_string(threads) + " threads");
    }
    ThreadHost alone(2);
    alone.onlyFirstRange = true;
    expectIdentical(want.data(), runBlock(*v, b, d, alone.get()).data(),
                    want.size(), "one task run");
  }
}

TEST_P(Block, EdgesAndLayouts) {
  checkBlock(*v, BlockCase{1, 5, 20, 13, 17, 7}.stride(2).pads(1, 0, 0, 1));
  checkBlock(*v, BlockCase{2, 3, 9, 10, 11, 5}.pads(0, 2, 2, 0));
  checkBlock(*v, BlockCase{2, 8, 40, 17, 19, 50}.withResidual().unpacked(), 3);
  checkBlock(*v, BlockCase{1, 4, 12, 6, 6, 3}.plain());
  // Rows wider than a band's budget: one row a band.
  checkBlock(*v, BlockCase{1, 4, 300, 5, 1100, 9}.stride(2), 2);
  // More rows than the image has threads' parts.
  checkBlock(*v, BlockCase{1, 4, 16, 2, 40, 8}, 5);
}

// Channel-blocked, an image goes in bands of rows (each band's expansion,
// depthwise rows and projection on one thread) or, where the busiest
// thread would expand fewer rows so (small images: no rows computed twice
// at the bands' edges), as its groups of three channel blocks (expanded
// and convolved whole) on the threads, then the projection of the
// threads' shares of its pixels: two parallel loops an image. Either way
// each element sees the same sums in the same order, so the bits are the
// same whatever the threads (one thread runs one band), and within
// rounding of the block in double.
TEST_P(Block, ChannelBlockedBandsAndPlanes) {
  if (isa() != TCC_UK_ISA_AVX512)
    GTEST_SKIP() << "the channel-blocked kernels are AVX-512's";
  struct ModeCase {
    BlockCase b;
    int threads;
    std::vector<int64_t> counts; // n of each parallel loop
  };
  const std::vector<ModeCase> cases = {
      // 15 blocks, 5 groups at 28x28 (stride 2): planes.
      {BlockCase{1, 40, 240, 28, 28, 80}.window(5).stride(2), 2, {5, 2}},
      // Two images, 72 channels (5 blocks, the last padded), 5x5 /2,
      // residual: planes for each image.
      {BlockCase{2, 24, 72, 30, 30, 16}.window(5).stride(2).withResidual(),
       2,
       {2, 2, 2, 2}},
      // 4 threads, 7x7 windows, 12 blocks in 4 groups.
      {BlockCase{1, 8, 192, 20, 20, 40}.window(7).stride(2), 4, {4, 4}},
      // mobilenet_v2's 112x112 block: bands.
      {BlockCase{1, 16, 96, 112, 112, 24}.stride(2), 2, {2}},
  };
  for (const ModeCase &m : cases) {
    SCOPED_TRACE(describe(m.b));
    const BlockData d(*v, m.b);
    const std::vector<float> one = runBlock(*v, m.b, d, nullptr);
    expectNearReference(m.b, d, one);
    ThreadHost host(m.threads);
    const std::vector<float> got = runBlock(*v, m.b, d, host.get());
    expectIdentical(one.data(), got.data(), one.size(),
                    std::to_string(m.threads) + " threads");
    EXPECT_EQ(host.counts, m.counts);
  }
}

// Random shapes through the channel-blocked kernels (windows 3, 5 and 7,
// strides 1 and 2, any pads inside the window, channels and filters that
// fill no whole vector, narrow and wide images, batches, residuals, 1-4
// threads, either mode): each within rounding of the block in double, and
// the same bits on one thread.
TEST_P(Block, ChannelBlockedRandomShapes) {
  if (isa() != TCC_UK_ISA_AVX512)
    GTEST_SKIP() << "the channel-blocked kernels are AVX-512's";
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int ran = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int k = 2 * pick(1, 3) + 1, stride = pick(1, 2);
    BlockCase b{pick(1, 2),  pick(1, 20), pick(1, 70),
                pick(k, 30), pick(1, 40), pick(1, 40)};
    b.window(k).stride(stride);
    b.pads(pick(0, k - 1), pick(0, k - 1), pick(0, k - 1), pick(0, k - 1));
    b.w = std::max<int64_t>(b.w, k - b.pl - b.pr);
    b.seed = 100 + trial;
    if (pick(0, 1))
      b.withResidual();
    if (pick(0, 3) == 0)
      b.plain();
    if (pick(0, 3) == 0)
      b.unpacked();
    if (b.oh() < 1 || b.ow() < 1 || !blockedLayout(*v, b))
      continue;
    ++ran;
    SCOPED_TRACE(describe(b));
    const BlockData d(*v, b);
    const std::vector<float> one = runBlock(*v, b, d, nullptr);
    expectNearReference(b, d, one);
    ThreadHost host(pick(2, 4));
    const std::vector<float> got = runBlock(*v, b, d, host.get());
    expectIdentical(one.data(), got.data(), one.size(), "threads");
  }
  EXPECT_GE(ran, 20) << "most random shapes should run channel-blocked";
}

// The weights as a compiler packs constants for the channel-blocked
// kernels, or laid out by the call itself (from the GEMM-packed 1x1
// weights, or the plain ones): the same bits. Weights packed so where the
// kernels do not run the block channel-blocked are refused, writing
// nothing.
TEST_P(Block, ChannelBlockedWeightsPackedOrLaidOutPerCall) {
  for (const BlockCase &b :
       {BlockCase{1, 24, 72, 30, 30, 16}.window(5).stride(2),
        BlockCase{1, 7, 40, 17, 19, 50}.withResidual().unpacked(),
        BlockCase{1, 6, 24, 20, 40, 5}.stride(2).pads(0, 0, 1, 1).plain()}) {
    SCOPED_TRACE(describe(b));
    const BlockData d(*v, b);
    ThreadHost host(2);
    const std::vector<float> packed = runBlock(*v, b, d, host.get(), true);
    const std::vector<float> perCall = runBlock(*v, b, d, host.get(), false);
    expectIdentical(packed.data(), perCall.data(), packed.size(), v->name);
  }
  tcc_uk_block_params_t p =
      BlockCase{1, 3, 32, 224, 224, 16}.first(3, 2, 1).params();
  p.exp.flags = TCC_UK_PACKED_BLOCKED;
  float x[64] = {}, out = 42.0f;
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &p, x, x, x, x, &out, nullptr));
  EXPECT_EQ(out, 42.0f);
}

// Parts are one a thread (up to four), and claim the bands (four a part at
// least) as they run, so which part computes which rows moves with the
// thread count and the timing; the bits do not.
TEST_P(Block, ThreadCountDoesNotChangeResults) {
  const BlockCase b = BlockCase{1, 16, 96, 112, 112, 24}.stride(2);
  const BlockData d(*v, b);
  const std::vector<float> serial = runBlock(*v, b, d, nullptr);
  for (int threads : {2, 3, 4, 6}) {
    ThreadHost host(threads);
    const std::vector<float> out = runBlock(*v, b, d, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(),
                    std::to_string(threads) + " threads");
    ASSERT_EQ(host.counts.size(), 1u);
    EXPECT_EQ(host.counts[0], std::min(threads, 4));
  }
}

// A part that starts after the others have taken every band (its thread
// slowed or descheduled) finds none left, and none is left undone when
// the others never start: the host here runs only one of the parts.
TEST_P(Block, PartsClaimTheBandsAsTheyRun) {
  for (const BlockCase &b :
       {BlockCase{1, 16, 96, 112, 112, 24}.stride(2),
        BlockCase{1, 3, 32, 96, 96, 16}.first(3, 2, 1),
        BlockCase{2, 24, 144, 56, 56, 24}.stride(2).withResidual()}) {
    SCOPED_TRACE(describe(b));
    const BlockData d(*v, b);
    const std::vector<float> want = runSeparate(*v, b, d);
    for (int threads : {2, 4}) {
      ThreadHost host(threads);
      host.onlyFirstRange = true;
      const std::vector<float> got = runBlock(*v, b, d, host.get());
      expectBlockResult(*v, b, d, want, got,
                        std::to_string(threads) + " threads, one part run");
      EXPECT_EQ(host.counts.size(), static_cast<size_t>(b.n));
    }
  }
}

// The parts share the bands in contiguous runs, as the pool deals out the
// columns of the GEMMs around a block: part q takes its own run from the
// front, in order, then the fronts of the others', and every band is taken
// once whichever parts run and however their claims interleave.
TEST(RunClaims, ContiguousRunsThenTheOthers) {
  tcc::uk::RunClaims c;
  c.reset(2, 8);
  EXPECT_EQ(c.claim(0), 0);
  EXPECT_EQ(c.claim(1), 4);
  EXPECT_EQ(c.claim(0), 1);
  EXPECT_EQ(c.claim(1), 5);
  EXPECT_EQ(c.claim(1), 6);
  EXPECT_EQ(c.claim(1), 7);
  EXPECT_EQ(c.claim(1), 2); // part 1 done: the front of part 0's run
  EXPECT_EQ(c.claim(0), 3);
  EXPECT_EQ(c.claim(0), -1);
  EXPECT_EQ(c.claim(1), -1);

  // Uneven runs: [0, 2), [2, 5), [5, 8); part 2 alone takes its own run,
  // then part 0's, then part 1's.
  c.reset(3, 8);
  std::vector<int64_t> alone;
  for (int64_t b; (b = c.claim(2)) >= 0;)
    alone.push_back(b);
  EXPECT_EQ(alone, (std::vector<int64_t>{5, 6, 7, 0, 1, 2, 3, 4}));

  // Four parts claiming from four threads at once: each band exactly once.
  for (int trial = 0; trial < 20; ++trial) {
    c.reset(4, 37);
    std::vector<std::atomic<int>> seen(37);
    std::vector<std::thread> threads;
    for (int q = 0; q < 4; ++q)
      threads.emplace_back([&, q] {
        for (int64_t b; (b = c.claim(q)) >= 0;)
          seen[b].fetch_add(1);
      });
    for (std::thread &t : threads)
      t.join();
    for (int b = 0; b < 37; ++b)
      EXPECT_EQ(seen[b].load(), 1) << "band " << b;
  }
}

TEST_P(Block, RejectsWhatIsNotABlock) {
  float x[64] = {}, out = 42.0f;
  tcc_uk_epilogue_t act = {};
  act.activation = TCC_UK_ACT_GELU;
  BlockCase b{1, 2, 4, 4, 4, 3};
  const tcc_uk_block_params_t good = b.params();
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &good, x, x, x, x, &out, &act));
  tcc_uk_block_params_t p = good;
  p.exp.c = 0;
  EXPECT_EQ(0, v->blockScratchBytes(isa(), &p));
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &p, x, x, x, x, &out, nullptr));
  // A first convolution whose output is not the depthwise input.
  p = good;
  p.exp.stride_h = 2;
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &p, x, x, x, x, &out, nullptr));
  // One that tcc_uk_conv2d_nchw runs as Winograd.
  p = BlockCase{1, 16, 16, 32, 32, 4}.first(3, 1, 1).params();
  EXPECT_EQ(0, v->blockScratchBytes(isa(), &p));
  // A pad as wide as the window leaves an output row without input rows.
  p = b.pads(3, 1, 1, 1).params();
  EXPECT_EQ(0, v->blockScratchBytes(isa(), &p));
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &p, x, x, x, x, &out, nullptr));
  p = good;
  p.pair.dw.groups = 2; // not depthwise
  EXPECT_EQ(-2, v->blockConv2d(nullptr, &p, x, x, x, x, &out, nullptr));
  EXPECT_EQ(out, 42.0f);
}

// What a compiler asks before it makes the call: a fast pair whose
// first convolution's output of one image (1 MiB or more) would not stay
// in cache between two calls, or a smaller 1x1 expansion before a stride-1
// pair that splits k. Any build answers for any ISA.
TEST_P(Block, FastForLargeExpansionsOrHalvesOfK) {
  auto fast = [&](const BlockCase &b, int32_t target) {
    const tcc_uk_block_params_t p = b.params();
    return v->blockFast(target, &p);
  };
  const BlockCase b2 = BlockCase{1, 16, 96, 112, 112, 24}.stride(2);
  EXPECT_EQ(1, fast(b2, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(b2, TCC_UK_ISA_AVX2));
  EXPECT_EQ(0, fast(b2, TCC_UK_ISA_GENERIC));
  // A first convolution's output from 1 MiB: the 56x56 expansions (1.8
  // MB) and the stem (1.6 MB).
  EXPECT_EQ(1, fast(BlockCase{1, 24, 144, 56, 56, 24}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(
      1, fast(BlockCase{1, 24, 144, 56, 56, 32}.stride(2), TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 8, 64, 64, 64, 24}, TCC_UK_ISA_AVX512));
  // Channel-blocked (AVX-512, a 1x1 expansion before an odd square window
  // of 3 to 7, stride 1 or 2): at stride 2 at every size, at stride 1 from
  // 512 KiB (the 28x28 192-channel expansion, 0.6 MB; 32 x 64 x 64 floats
  // exactly is one, 31 x 64 x 64 not, its pair keeping one GEMM).
  EXPECT_EQ(1, fast(BlockCase{1, 40, 240, 28, 28, 80}.window(5).stride(2),
                    TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 96, 576, 14, 14, 192}.window(5).stride(2),
                    TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 32, 192, 28, 28, 96}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 8, 32, 64, 64, 24}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(BlockCase{1, 8, 31, 64, 64, 24}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(BlockCase{1, 32, 192, 28, 28, 96}, TCC_UK_ISA_AVX2));
  // Smaller 1x1 expansions before a stride-1 pair that splits k (3f <= e,
  // 32 planes at least): in halves of the channels. Not where the pair
  // keeps one GEMM, nor after a stem's window.
  EXPECT_EQ(
      1, fast(BlockCase{1, 40, 120, 28, 28, 40}.window(5), TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 80, 480, 14, 14, 80}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0,
            fast(BlockCase{1, 40, 120, 28, 28, 40}.window(5), TCC_UK_ISA_AVX2));
  EXPECT_EQ(0, fast(BlockCase{1, 8, 30, 20, 20, 8}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(BlockCase{1, 3, 48, 56, 56, 16}.first(3, 1, 1),
                    TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 3, 32, 224, 224, 16}.first(3, 2, 1),
                    TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, fast(BlockCase{1, 3, 16, 224, 224, 16}.first(3, 2, 1),
                    TCC_UK_ISA_AVX512));
  EXPECT_EQ(1, fast(BlockCase{1, 8, 128, 96, 96, 8}, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0,
            fast(BlockCase{1, 8, 128, 96, 96, 8}.stride(3), TCC_UK_ISA_AVX512));
}

// Which blocks run channel-blocked (and so take weights packed for it):
// on AVX-512 a 1x1 expansion before an odd square window of 3 to 7, stride
// 1 or 2, where the block does not run in halves of k; any build answers
// for any ISA, and sizes the packed weights (zero elsewhere).
TEST_P(Block, ChannelBlockedWhereItFits) {
  auto blocked = [&](const BlockCase &b, int32_t target) {
    const tcc_uk_block_params_t p = b.params();
    return v->blockBlocked(target, &p);
  };
  const BlockCase mbv2 = BlockCase{1, 16, 96, 112, 112, 24}.stride(2);
  EXPECT_EQ(1, blocked(mbv2, TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, blocked(mbv2, TCC_UK_ISA_AVX2));
  EXPECT_EQ(1, blocked(BlockCase{1, 6, 20, 9, 9, 5}.window(7).stride(2),
                       TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, blocked(BlockCase{1, 6, 20, 9, 9, 5}.window(9),
                       TCC_UK_ISA_AVX512)); // wider than 7
  EXPECT_EQ(0, blocked(BlockCase{1, 6, 20, 9, 9, 5}.window(4),
                       TCC_UK_ISA_AVX512)); // even
  EXPECT_EQ(0,
            blocked(BlockCase{1, 6, 20, 9, 9, 5}.stride(3), TCC_UK_ISA_AVX512));
  EXPECT_EQ(0, blocked(BlockCase{1, 3, 32, 224, 224, 16}.first(3, 2, 1),
                       TCC_UK_ISA_AVX512)); // a stem
  EXPECT_EQ(0, blocked(BlockCase{1, 80, 480, 14, 14, 80}, TCC_UK_ISA_AVX512));
  const tcc_uk_block_params_t p = mbv2.params();
  // W^T of the expansion (16 x 96), the taps (96 x 9), W^T of the
  // projection (96 x 32: 24 filters padded to two vectors).
  EXPECT_EQ(4 * 16 * 96, v->blockPackWeightsBytes(TCC_UK_ISA_AVX512, &p,
                                                  TCC_UK_BLOCK_EXPANSION));
  EXPECT_EQ(4 * 96 * 9, v->blockPackWeightsBytes(TCC_UK_ISA_AVX512, &p,
                                                 TCC_UK_BLOCK_DEPTHWISE));
  EXPECT_EQ(4 * 96 * 32, v->blockPackWeightsBytes(TCC_UK_ISA_AVX512, &p,
                                                  TCC_UK_BLOCK_PROJECTION));
  EXPECT_EQ(0, v->blockPackWeightsBytes(TCC_UK_ISA_AVX512, &p, 3));
  // Weights packed so need no room in the scratch to be laid out.
  tcc_uk_block_params_t packed = p;
  packed.exp.flags = TCC_UK_PACKED_BLOCKED;
  EXPECT_EQ(v->blockScratchBytes(TCC_UK_ISA_AVX512, &packed) +
                4 * (16 * 96 + 96 * 9 + 96 * 32),
            v->blockScratchBytes(TCC_UK_ISA_AVX512, &p));
  EXPECT_EQ(
      0, v->blockPackWeightsBytes(TCC_UK_ISA_AVX2, &p, TCC_UK_BLOCK_EXPANSION));
}

INSTANTIATE_TEST_SUITE_P(Variants, Block, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
