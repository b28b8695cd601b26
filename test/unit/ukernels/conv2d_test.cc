// conv2d_test.cc - tcc_uk_conv2d_nchw in every variant the CPU can run,
// against a direct double-precision convolution.
#include "uk_test_util.h"

#include <cmath>
#include <limits>

namespace {

using namespace uktest;

struct ConvCase {
  int64_t n, c, h, w, f, kh, kw;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t groups = 1;
  uint32_t flags = 0; // TCC_UK_ACCUMULATE, TCC_UK_PACKED_A
  bool bias = false, residual = false, relu = false;
  int32_t act = TCC_UK_ACT_NONE; // before the relu
  uint32_t seed = 1;
  // An input prologue: x * scale[c] + shift[c] (each optional), then relu.
  bool inScale = false, inShift = false, inRelu = false;

  ConvCase &prologue(bool scale = true, bool shift = true, bool relu = true) {
    inScale = scale;
    inShift = shift;
    inRelu = relu;
    return *this;
  }

  ConvCase &activation(int32_t a) {
    act = a;
    return *this;
  }

  ConvCase &stride(int64_t s) {
    sh = sw = s;
    return *this;
  }
  ConvCase &dilation(int64_t d) {
    dh = dw = d;
    return *this;
  }
  ConvCase &pad(int64_t p) {
    pt = pl = pb = pr = p;
    return *this;
  }
  ConvCase &strides(int64_t h, int64_t w) {
    sh = h;
    sw = w;
    return *this;
  }
  ConvCase &dilations(int64_t h, int64_t w) {
    dh = h;
    dw = w;
    return *this;
  }
  ConvCase &pads(int64_t t, int64_t l, int64_t b, int64_t r) {
    pt = t;
    pl = l;
    pb = b;
    pr = r;
    return *this;
  }
  ConvCase &group(int64_t g) {
    groups = g;
    return *this;
  }
  ConvCase &epilogue() {
    bias = residual = relu = true;
    return *this;
  }
  ConvCase &withFlags(uint32_t fl) {
    flags = fl;
    return *this;
  }

  int64_t oh() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  tcc_uk_conv2d_params_t params() const {
    tcc_uk_conv2d_params_t p = {};
    p.n = n;
    p.c = c;
    p.h = h;
    p.w = w;
    p.f = f;
    p.kh = kh;
    p.kw = kw;
    p.stride_h = sh;
    p.stride_w = sw;
    p.dilation_h = dh;
    p.dilation_w = dw;
    p.pad_top = pt;
    p.pad_left = pl;
    p.pad_bottom = pb;
    p.pad_right = pr;
    p.groups = groups;
    p.flags = flags;
    return p;
  }
};

std::string describe(const ConvCase &c) {
  auto s = [](int64_t x) { return std::to_string(x); };
  return "x[" + s(c.n) + "," + s(c.c) + "," + s(c.h) + "," + s(c.w) + "] w[" +
         s(c.f) + "," + s(c.c / c.groups) + "," + s(c.kh) + "," + s(c.kw) +
         "] stride " + s(c.sh) + "x" + s(c.sw) + " dilation " + s(c.dh) + "x" +
         s(c.dw) + " pads " + s(c.pt) + "," + s(c.pl) + "," + s(c.pb) + "," +
         s(c.pr) + " groups " + s(c.groups) + " flags " + s(c.flags) +
         (c.bias ? " bias" : "") + (c.residual ? " residual" : "") +
         (c.act ? " activation " + s(c.act) : "") + (c.relu ? " relu" : "") +
         (c.inScale ? " in_scale" : "") + (c.inShift ? " in_shift" : "") +
         (c.inRelu ? " in_relu" : "");
}

struct ConvData {
  ConvData(const Variant &v, const ConvCase &c, const Variant *packer) {
    const int64_t outSize = c.n * c.f * c.oh() * c.ow();
    x = randomVector(c.n * c.c * c.h * c.w, c.seed);
    w = randomVector(c.f * (c.c / c.groups) * c.kh * c.kw, c.seed + 1);
    out0 = randomVector(std::max<int64_t>(1, outSize), c.seed + 2);
    if (!(c.flags & TCC_UK_ACCUMULATE))
      std::fill(out0.begin(), out0.end(), std::nanf(""));
    bias = randomVector(c.f, c.seed + 3);
    res = randomVector(std::max<int64_t>(1, outSize), c.seed + 4);
    inScale = randomVector(c.c, c.seed + 5);
    inShift = randomVector(c.c, c.seed + 6);
    if (c.flags & TCC_UK_PACKED_A) {
      const tcc_uk_conv2d_params_t p = c.params();
      packedW.resize(packer->convPackWeightsBytes(v.isaFn(), &p) / 4 + 1);
      packer->convPackWeights(v.isaFn(), &p, w.data(), packedW.data());
    }
  }
  std::vector<float> x, w, out0, bias, res, packedW, inScale, inShift;

  /// Input element `at` (of channel ic) as the convolution reads it.
  double input(const ConvCase &c, int64_t at, int64_t ic) const {
    double v = x[at];
    if (c.inScale)
      v *= inScale[ic];
    if (c.inShift)
      v += inShift[ic];
    return c.inRelu ? std::max(v, 0.0) : v;
  }
};

/// Sets the prologue's pointers of p as c asks.
void setPrologue(tcc_uk_conv2d_params_t &p, const ConvCase &c,
                 const ConvData &d) {
  p.in_scale = c.inScale ? d.inScale.data() : nullptr;
  p.in_shift = c.inShift ? d.inShift.data() : nullptr;
  p.in_relu = c.inRelu;
}

std::vector<float> runConv(const Variant &v, const ConvCase &c,
                           const ConvData &d, const tcc_host_api_t *host,
                           float *means = nullptr) {
  std::vector<float> out = d.out0;
  tcc_uk_conv2d_params_t p = c.params();
  setPrologue(p, c, d);
  p.plane_means = means;
  const int64_t need = v.convScratchBytes(v.isaFn(), &p);
  EXPECT_GE(need, 0);
  Scratch scratch(need);
  p.scratch = scratch.get();
  tcc_uk_epilogue_t ep = {};
  ep.bias = c.bias ? d.bias.data() : nullptr;
  ep.residual = c.residual ? d.res.data() : nullptr;
  ep.has_clamp = c.relu;
  ep.activation = c.act;
  ep.clamp_max = std::numeric_limits<float>::infinity();
  const float *w = c.flags & TCC_UK_PACKED_A ? d.packedW.data() : d.w.data();
  EXPECT_EQ(0, v.conv2d(host, &p, d.x.data(), w, out.data(), &ep));
  EXPECT_TRUE(scratch.guardIntact())
      << describe(c) << ": wrote past " << need << " bytes of scratch";
  return out;
}

/// Runs c on each of `threadCounts` real threads and expects the serial
/// run's bits.
void expectThreadsKeepBits(const Variant &v, const ConvCase &c,
                           std::initializer_list<int> threadCounts) {
  const ConvData d(v, c, &v);
  const std::vector<float> serial = runConv(v, c, d, nullptr);
  for (int threads : threadCounts) {
    ThreadHost host(threads);
    const std::vector<float> out = runConv(v, c, d, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(),
                    std::to_string(threads) + " threads");
  }
}

void checkConv(const Variant &v, const ConvCase &c,
               const Variant *packer = nullptr) {
  SCOPED_TRACE(describe(c));
  const ConvData d(v, c, packer ? packer : &v);
  const std::vector<float> out = runConv(v, c, d, nullptr);
  const int64_t oh = c.oh(), ow = c.ow(), cg = c.c / c.groups,
                fg = c.f / c.groups;
  const int64_t rows = c.n * c.f, cols = oh * ow;
  std::vector<double> want(rows * cols), mag(rows * cols);
  for (int64_t img = 0; img < c.n; ++img)
    for (int64_t oc = 0; oc < c.f; ++oc)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t at = ((img * c.f + oc) * oh + oy) * ow + ox;
          double s = 0, m = 0;
          if (c.flags & TCC_UK_ACCUMULATE) {
            s = d.out0[at];
            m = std::fabs(s);
          }
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t ic = oc / fg * cg + ci;
            for (int64_t ky = 0; ky < c.kh; ++ky)
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t iy = oy * c.sh - c.pt + ky * c.dh;
                const int64_t ix = ox * c.sw - c.pl + kx * c.dw;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                  continue;
                const double t =
                    d.input(c, ((img * c.c + ic) * c.h + iy) * c.w + ix, ic) *
                    d.w[((oc * cg + ci) * c.kh + ky) * c.kw + kx];
                s += t;
                m += std::fabs(t);
              }
          }
          if (c.bias) {
            s += d.bias[oc];
            m += std::fabs(d.bias[oc]);
          }
          if (c.residual) {
            s += d.res[at];
            m += std::fabs(d.res[at]);
          }
          if (c.act == TCC_UK_ACT_SILU) {
            s = s / (1 + std::exp(-s));
            m *= 1.1; // the largest slope of x * sigmoid(x)
          } else if (c.act == TCC_UK_ACT_HARDSWISH) {
            s = s * std::min(std::max(s / 6 + 0.5, 0.0), 1.0);
            m *= 1.5; // the slope at x = 3
          }
          if (c.relu)
            s = std::max(s, 0.0);
          want[at] = s;
          mag[at] = m;
        }
  expectClose(want, mag, out.data(), rows, cols, cols, cg * c.kh * c.kw + 3,
              v.name);
}

using Conv2d = VariantTest;

TEST_P(Conv2d, Pointwise) {
  checkConv(*v, ConvCase{1, 32, 14, 14, 24, 1, 1});
  checkConv(*v, ConvCase{1, 20, 9, 11, 3, 1, 1}); // few filters: unpacked
  checkConv(*v, ConvCase{2, 64, 7, 7, 100, 1, 1}.epilogue());
}

// A 1x1 with a stride and no pads subsamples its input into the scratch
// and multiplies that: odd sizes, strides 2 and 3 (the scalar copy), groups,
// batch 2, the epilogue, resnet18's shortcut (threads: below).
TEST_P(Conv2d, PointwiseStride2) {
  checkConv(*v, ConvCase{1, 16, 15, 14, 32, 1, 1}.stride(2));
  checkConv(*v,
            ConvCase{2, 12, 17, 19, 8, 1, 1}.strides(2, 3).group(4).epilogue());
  checkConv(*v, ConvCase{1, 64, 56, 56, 128, 1, 1}
                    .stride(2)
                    .withFlags(TCC_UK_PACKED_A)
                    .epilogue());
  checkConv(*v, ConvCase{1, 7, 9, 30, 5, 1, 1}.strides(3, 1));
}

TEST_P(Conv2d, ThreeByThreePad1) {
  checkConv(*v, ConvCase{1, 16, 20, 20, 32, 3, 3}.pad(1));
  checkConv(*v, ConvCase{1, 5, 3, 4, 7, 3, 3}.pad(1)); // image < tile
}

TEST_P(Conv2d, Stride2) {
  checkConv(*v, ConvCase{1, 8, 15, 17, 16, 3, 3}.stride(2).pad(1));
}

TEST_P(Conv2d, SevenBySevenStride2Pad3) {
  checkConv(*v, ConvCase{1, 3, 64, 60, 16, 7, 7}.stride(2).pad(3));
}

TEST_P(Conv2d, ResnetStem) {
  checkConv(*v, ConvCase{1, 3, 224, 224, 64, 7, 7}.stride(2).pad(3).epilogue());
}

TEST_P(Conv2d, Dilation2) {
  checkConv(*v, ConvCase{1, 8, 17, 19, 8, 3, 3}.dilation(2).pad(2));
}

TEST_P(Conv2d, AsymmetricPadsAndStrides) {
  checkConv(*v, ConvCase{1, 6, 13, 16, 10, 3, 2}
                    .pads(0, 1, 2, 1)
                    .strides(2, 3)
                    .dilations(1, 2));
}

// The im2col packer copies the input rows a block of output columns reads
// into a padded, phase-split buffer per channel when they fit (every case
// above); rows too long for it take the bounds-checked path: 3000 columns,
// strides 1 to 3, with padding, dilation and an odd kernel width.
TEST_P(Conv2d, RowsTooLongForThePlaneBuffer) {
  checkConv(*v, ConvCase{1, 3, 6, 3000, 8, 3, 5}.pad(2));
  checkConv(*v, ConvCase{1, 2, 9, 3000, 8, 5, 3}.stride(2).pad(1).epilogue());
  checkConv(*v, ConvCase{1, 2, 7, 3000, 8, 3, 3}
                    .pads(1, 2, 0, 1)
                    .strides(1, 3)
                    .dilations(2, 2));
}

TEST_P(Conv2d, Groups2) {
  checkConv(*v, ConvCase{1, 8, 12, 12, 6, 3, 3}.pad(1).group(2));
  checkConv(*v, ConvCase{2, 16, 9, 9, 32, 1, 1}.group(2).epilogue());
}

TEST_P(Conv2d, DepthwiseStride1) {
  checkConv(*v, ConvCase{1, 32, 28, 28, 32, 3, 3}.pad(1).group(32));
}

TEST_P(Conv2d, DepthwiseStride2) {
  checkConv(*v, ConvCase{1, 16, 29, 30, 16, 3, 3}.stride(2).pad(1).group(16));
  checkConv(
      *v, ConvCase{1, 8, 28, 28, 8, 3, 3}.stride(2).pads(0, 0, 1, 1).group(8));
}

TEST_P(Conv2d, DepthwiseSmallPlanes) {
  // mobilenet's 7x7 and 14x14 planes (computed flat, padding columns and
  // all, where a row is much narrower than a vector), with dilation too.
  checkConv(*v, ConvCase{1, 24, 7, 7, 24, 3, 3}.pad(1).group(24).epilogue());
  checkConv(*v, ConvCase{2, 8, 14, 14, 8, 3, 3}.pad(1).group(8).epilogue());
  checkConv(*v, ConvCase{1, 4, 6, 6, 8, 3, 3}.dilation(2).pad(2).group(4));
  checkConv(*v, ConvCase{1, 3, 9, 5, 3, 5, 5}.pad(2).group(3).withFlags(
                    TCC_UK_ACCUMULATE));
}

// On AVX-512, 3x3 stride-1 planes padded to their own size whose rows are
// at most half a vector wide (and at most 16 vectors in all) run as one
// flat row with a mask a tap and vector: edges of every kind (asymmetric
// pads, one-vector planes, a last vector of one lane), the whole epilogue,
// accumulation, two filters a channel; the last shape is one vector too
// long and takes the rows. Every ISA checks them against the reference.
TEST_P(Conv2d, DepthwiseFlatPlanes) {
  checkConv(*v, ConvCase{2, 12, 7, 7, 12, 3, 3}.pad(1).group(12).epilogue());
  checkConv(*v, ConvCase{1, 6, 8, 8, 12, 3, 3}.pad(1).group(6).epilogue());
  checkConv(
      *v, ConvCase{1, 5, 16, 5, 5, 3, 3}.pads(0, 2, 2, 0).group(5).epilogue());
  checkConv(*v, ConvCase{1, 7, 3, 3, 7, 3, 3}
                    .pads(2, 0, 0, 2)
                    .group(7)
                    .withFlags(TCC_UK_ACCUMULATE));
  checkConv(*v,
            ConvCase{1, 4, 31, 8, 4, 3, 3}.pad(1).group(4).epilogue().withFlags(
                TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 4, 33, 8, 4, 3, 3}.pad(1).group(4).epilogue());
}

TEST_P(Conv2d, DepthwiseOtherShapes) {
  // 5x5, a channel multiplier of 2, dilation, rows wider than one pass,
  // stride 3, and a dilation too large for the row buffers.
  checkConv(*v, ConvCase{1, 4, 20, 21, 4, 5, 5}.pad(2).group(4));
  checkConv(*v, ConvCase{1, 8, 12, 12, 16, 3, 3}.pad(1).group(8));
  checkConv(*v, ConvCase{1, 4, 19, 23, 4, 3, 3}.dilation(3).pad(3).group(4));
  checkConv(*v, ConvCase{1, 3, 5, 700, 3, 3, 3}.pad(1).group(3));
  checkConv(
      *v, ConvCase{1, 3, 11, 40, 3, 3, 4}.stride(3).pads(1, 2, 0, 2).group(3));
  ConvCase huge{1, 2, 5, 6100, 2, 3, 3};
  huge.dw = 3000;
  checkConv(*v, huge.pads(1, 3000, 1, 3000).group(2));
}

// The direct 3x3 rows (AVX-512) store through a branch-free sink where the
// epilogue is a bias and a clamp or less (no residual or accumulation), the
// clamp's bounds infinite where there is none, with SiLU or hard swish
// between the bias and the clamp compiled into the sink: bias alone, bias
// and relu, nothing, each activation with and without the clamp, at
// strides 1 and 2, rows inside and at the edges; the same bits as the
// general epilogue's (a residual of zeros takes that path). Every ISA
// checks them against the reference.
TEST_P(Conv2d, DepthwiseDirectPlainEpilogues) {
  ConvCase biasOnly{1, 16, 28, 40, 16, 3, 3};
  biasOnly.bias = true;
  checkConv(*v, biasOnly.pad(1).group(16));
  ConvCase biasRelu{1, 8, 33, 35, 8, 3, 3};
  biasRelu.bias = biasRelu.relu = true;
  checkConv(*v, biasRelu.stride(2).pad(1).group(8));
  checkConv(*v, ConvCase{2, 4, 17, 16, 4, 3, 3}.pad(1).group(4));
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH})
    for (int64_t stride : {1, 2})
      for (bool relu : {false, true}) {
        ConvCase c = ConvCase{2, 16, 30, 34, 16, 3, 3}
                         .stride(stride)
                         .pad(1)
                         .group(16)
                         .activation(act);
        c.bias = true;
        c.relu = relu;
        checkConv(*v, c);
        // The general epilogue (a residual of zeros) gives the same bits.
        const ConvData d(*v, c, v);
        ConvCase withRes = c;
        withRes.residual = true;
        ConvData dz(*v, withRes, v);
        std::fill(dz.res.begin(), dz.res.end(), 0.0f);
        const std::vector<float> plain = runConv(*v, c, d, nullptr);
        const std::vector<float> general = runConv(*v, withRes, dz, nullptr);
        expectIdentical(plain.data(), general.data(), plain.size(),
                        "plain against general epilogue");
      }
  // 7x7 planes run flat, with the same stores.
  ConvCase flat{1, 12, 7, 7, 12, 3, 3};
  flat.bias = flat.relu = true;
  checkConv(*v, flat.pad(1).group(12));
  checkConv(*v, ConvCase{1, 5, 7, 7, 5, 3, 3}.pad(1).group(5));
}

// A NaN in the input reaches every output whose window holds it, with and
// without the clamp (max/min keep a NaN operand), and no other output:
// rows (20x20, strides 1 and 2) and flat planes (7x7 outputs).
TEST_P(Conv2d, DepthwiseNaNInputPropagates) {
  const struct {
    int64_t size, stride;
  } shapes[] = {{20, 1}, {20, 2}, {7, 1}};
  for (bool relu : {false, true}) {
    for (const auto &[size, stride] : shapes) {
      ConvCase c{1, 4, size, size, 4, 3, 3};
      c.stride(stride).pad(1).group(4);
      c.bias = true;
      c.relu = relu;
      SCOPED_TRACE(describe(c));
      ConvData d(*v, c, v);
      const int64_t plane = 2, iy = size / 2, ix = size / 2 + 1;
      d.x[(plane * c.h + iy) * c.w + ix] = std::nanf("");
      const std::vector<float> out = runConv(*v, c, d, nullptr);
      const int64_t oh = c.oh(), ow = c.ow();
      for (int64_t ch = 0; ch < c.f; ++ch)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t ry = iy - (oy * stride - 1),
                          rx = ix - (ox * stride - 1);
            const bool reads =
                ch == plane && ry >= 0 && ry < 3 && rx >= 0 && rx < 3;
            EXPECT_EQ(reads, std::isnan(out[(ch * oh + oy) * ow + ox]))
                << "channel " << ch << " output " << oy << "," << ox;
          }
    }
  }
}

// Square 3x3, 5x5 and 7x7 kernels of row stride 1 or 2 compute four output
// rows together from the band of copied input rows (AVX2 and generic, and
// AVX-512 beyond 3x3): row counts that leave one to three rows over, a
// column stride other than the row stride, rows one vector plus a lane
// wide, asymmetric pads, the epilogue with a residual, accumulation, two
// filters a channel, and rows so wide that a band holds 13 of the 30.
TEST_P(Conv2d, DepthwiseRowsTogether) {
  checkConv(*v, ConvCase{1, 2, 30, 700, 2, 5, 5}.pad(2).group(2).epilogue());
  checkConv(*v, ConvCase{1, 6, 28, 28, 6, 5, 5}.pad(2).group(6).epilogue());
  checkConv(*v, ConvCase{1, 5, 29, 17, 5, 5, 5}.stride(2).pad(2).group(5));
  checkConv(*v, ConvCase{2, 4, 13, 9, 4, 7, 7}.pad(3).group(4).epilogue());
  checkConv(*v, ConvCase{1, 3, 15, 33, 6, 7, 7}
                    .stride(2)
                    .pads(3, 1, 2, 3)
                    .group(3)
                    .withFlags(TCC_UK_ACCUMULATE));
  checkConv(
      *v,
      ConvCase{1, 4, 14, 18, 4, 3, 3}.strides(2, 1).pad(1).group(4).epilogue());
  checkConv(
      *v,
      ConvCase{1, 4, 10, 23, 4, 5, 5}.strides(1, 2).pad(2).group(4).withFlags(
          TCC_UK_ACCUMULATE));
}

// 5x5 and 7x7 kernels, and 3x3 ones whose output rows fill at most half a
// vector (every 3x3 without AVX-512's direct rows), run a vector of planes
// at a time, a plane in each lane, once there are planes to fill the
// lanes: whole groups and a ragged last one, groups across two images, two
// filters a channel, stride 2 with an input column no tap reads, planes
// taller than one band (the rows two bands share kept), the epilogue
// without a residual (applied to the sums, activations too) and with one
// or accumulating (applied plane by plane).
TEST_P(Conv2d, DepthwiseLanes) {
  auto biasRelu = [](ConvCase c) {
    c.bias = c.relu = true;
    return c;
  };
  checkConv(*v, biasRelu(ConvCase{1, 20, 14, 14, 20, 5, 5}.pad(2).group(20)));
  checkConv(*v, ConvCase{2, 24, 7, 7, 24, 5, 5}.pad(2).group(24).epilogue());
  checkConv(*v, ConvCase{1, 16, 8, 8, 32, 5, 5}.pad(2).group(16));
  checkConv(*v, ConvCase{1, 17, 32, 32, 17, 5, 5}.stride(2).group(17).withFlags(
                    TCC_UK_ACCUMULATE));
  checkConv(*v, biasRelu(ConvCase{1, 16, 90, 40, 16, 5, 5}.pad(2).group(16)));
  checkConv(*v, ConvCase{1, 16, 61, 33, 16, 7, 7}
                    .stride(2)
                    .pads(3, 1, 2, 3)
                    .group(16)
                    .epilogue());
  checkConv(*v, ConvCase{1, 18, 28, 28, 18, 7, 7}.pad(3).group(18));
  checkConv(*v, biasRelu(ConvCase{1, 32, 7, 7, 32, 3, 3}.pad(1).group(32)));
  checkConv(*v, ConvCase{2, 40, 14, 14, 40, 3, 3}.stride(2).pad(1).group(40));
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH}) {
    ConvCase c = ConvCase{1, 24, 14, 14, 24, 5, 5}.pad(2).group(24);
    c.bias = true;
    checkConv(*v, c.activation(act));
    checkConv(
        *v,
        ConvCase{1, 16, 7, 7, 16, 3, 3}.pad(1).group(16).epilogue().activation(
            act));
  }
}

// SiLU and hard swish after the bias and residual, before the clamp, in
// every kind of convolution: a 1x1 and a strided 1x1 (GEMMs), im2col, a
// depthwise plane through the rows and the scalar edge, Winograd (packed
// 3x3), and small groups side by side. An unknown activation is refused.
TEST_P(Conv2d, Activations) {
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH}) {
    checkConv(*v, ConvCase{1, 16, 9, 11, 24, 1, 1}.epilogue().activation(act));
    checkConv(*v, ConvCase{1, 8, 13, 13, 16, 1, 1}.stride(2).activation(act));
    checkConv(
        *v, ConvCase{2, 5, 12, 10, 7, 3, 3}.pad(1).epilogue().activation(act));
    checkConv(
        *v,
        ConvCase{1, 6, 15, 20, 6, 5, 5}.pad(2).group(6).epilogue().activation(
            act));
    ConvCase huge{1, 2, 5, 6100, 2, 3, 3};
    huge.dw = 3000;
    checkConv(*v, huge.pads(1, 3000, 1, 3000).group(2).activation(act));
    checkConv(*v, ConvCase{1, 32, 14, 14, 32, 3, 3}
                      .pad(1)
                      .epilogue()
                      .activation(act)
                      .withFlags(TCC_UK_PACKED_A));
    checkConv(*v,
              ConvCase{1, 64, 6, 6, 64, 3, 3}.pad(1).group(16).activation(act));
  }
  ConvCase c{1, 2, 4, 4, 2, 1, 1};
  const ConvData d(*v, c, v);
  std::vector<float> out = d.out0;
  tcc_uk_conv2d_params_t p = c.params();
  tcc_uk_epilogue_t ep = {};
  ep.activation = TCC_UK_ACT_HARDSWISH + 1;
  EXPECT_EQ(-2,
            v->conv2d(nullptr, &p, d.x.data(), d.w.data(), out.data(), &ep));
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_TRUE(std::isnan(out[i])) << "element " << i << " written";
}

TEST_P(Conv2d, Batch2WithEpilogue) {
  checkConv(*v, ConvCase{2, 16, 10, 10, 16, 3, 3}.pad(1).epilogue());
  checkConv(
      *v,
      ConvCase{2, 16, 10, 10, 16, 3, 3}.stride(2).pad(1).group(16).epilogue());
  checkConv(*v, ConvCase{2, 24, 8, 8, 48, 1, 1}.epilogue());
}

TEST_P(Conv2d, Accumulates) {
  checkConv(*v,
            ConvCase{2, 8, 9, 9, 12, 3, 3}.pad(1).withFlags(TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 8, 9, 9, 8, 3, 3}.pad(1).group(8).withFlags(
                    TCC_UK_ACCUMULATE));
}

TEST_P(Conv2d, PrepackedWeights) {
  const Variant &host = variantNamed("host");
  for (const Variant *packer : {v, &host}) {
    checkConv(*v,
              ConvCase{1, 16, 10, 10, 24, 3, 3}
                  .pad(1)
                  .withFlags(TCC_UK_PACKED_A)
                  .epilogue(),
              packer);
    checkConv(
        *v, ConvCase{2, 12, 6, 6, 9, 1, 1}.group(3).withFlags(TCC_UK_PACKED_A),
        packer);
    checkConv(*v, ConvCase{1, 6, 8, 8, 3, 1, 1}.withFlags(TCC_UK_PACKED_A),
              packer);
    checkConv(*v,
              ConvCase{1, 8, 9, 9, 8, 3, 3}.pad(1).group(8).withFlags(
                  TCC_UK_PACKED_A),
              packer);
  }
}

// 3x3 stride-1 convolutions of 16 tiles (2x2 outputs) or more run
// Winograd's F(2x2, 3x3) once their weights are prepacked, and those with
// 32 tiles of 4x4 (in all images) and at most 128 channels F(4x4, 3x3): odd and
// even output sizes (edge tiles), each padding, the epilogue, accumulation, a
// batch, and packing by another variant. The direct convolution's tolerance
// holds for both (F(2x2) only adds and subtracts; F(4x4)'s scaling by up to 8
// stays within the 9c-term bound at these sizes).
TEST_P(Conv2d, WinogradThreeByThree) {
  const Variant &host = variantNamed("host");
  const uint32_t packed = TCC_UK_PACKED_A;
  for (const Variant *packer : {v, &host}) {
    checkConv(
        *v,
        ConvCase{1, 16, 14, 14, 24, 3, 3}.pad(1).withFlags(packed).epilogue(),
        packer);
    checkConv(
        *v,
        ConvCase{1, 20, 13, 11, 17, 3, 3}.pad(1).withFlags(packed).epilogue(),
        packer);
  }
  checkConv(*v, ConvCase{2, 16, 18, 18, 16, 3, 3}.withFlags(packed |
                                                            TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 16, 15, 16, 32, 3, 3}
                    .pads(0, 1, 2, 1)
                    .withFlags(packed)
                    .epilogue());
  checkConv(
      *v,
      ConvCase{1, 64, 28, 28, 64, 3, 3}.pad(1).withFlags(packed).epilogue());
  checkConv(*v, ConvCase{1, 32, 20, 70, 48, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{1, 64, 7, 7, 72, 3, 3}
                    .pad(1)
                    .withFlags(packed)
                    .epilogue()); // 16 tiles, the last row and column half
  // F(4x4): edge tiles of 1, 2 and 3 outputs, batch, accumulation.
  checkConv(
      *v,
      ConvCase{1, 32, 25, 30, 40, 3, 3}.pad(1).withFlags(packed).epilogue());
  checkConv(*v, ConvCase{2, 48, 26, 27, 32, 3, 3}
                    .pads(1, 0, 1, 2)
                    .withFlags(packed | TCC_UK_ACCUMULATE));
  checkConv(
      *v,
      ConvCase{1, 128, 56, 56, 128, 3, 3}.pad(1).withFlags(packed).epilogue());
  // A batch of small images: F(4x4) by the tiles of all of them, blocks
  // of several images in one pass (each with its residual), and more
  // blocks than the scratch has slots (F(2x2): 20 images of 2 blocks).
  // (F(2x2) on AVX-512, whose lanes 4 tiles a row fill too few of; there
  // 4 images of 28x28, 49 tiles each, are F(4x4)'s blocks across images.)
  checkConv(
      *v,
      ConvCase{8, 32, 14, 14, 72, 3, 3}.pad(1).withFlags(packed).epilogue());
  checkConv(
      *v,
      ConvCase{4, 32, 28, 28, 32, 3, 3}.pad(1).withFlags(packed).epilogue());
  checkConv(
      *v, ConvCase{20, 16, 9, 9, 24, 3, 3}.pad(1).withFlags(packed).epilogue());
}

// Which convolutions take the Winograd path shows in the packed weights'
// size: 16 transformed 3x3 matrices instead of one.
TEST_P(Conv2d, WinogradOnlyWhereItFits) {
  auto packedBytes = [&](const ConvCase &c) {
    const tcc_uk_conv2d_params_t p = c.params();
    return v->convPackWeightsBytes(isa(), &p);
  };
  auto plainBytes = [&](const ConvCase &c) {
    return c.groups *
           v->packABytes(isa(), c.f / c.groups, c.c / c.groups * c.kh * c.kw);
  };
  // F(2x2): 16 transformed matrices; F(4x4) (32 tiles of 4x4 or more, at
  // most 128 channels in and out): 36.
  const ConvCase fits = ConvCase{1, 16, 14, 14, 24, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(fits), 16 * v->packABytes(isa(), 24, 16));
  const ConvCase fits4 = ConvCase{1, 64, 28, 28, 64, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(fits4), 36 * v->packABytes(isa(), 64, 64));
  // The tiles of every image count: 16 of 4x4 an image, 8 images; and a
  // tile row must fill 40% of a vector: 4 tiles fill half of AVX2's 8
  // lanes, a quarter of AVX-512's 16 (F(2x2) there), all of SSE's 4.
  // (On AVX-512 such small images take F(2x2) with the filters along the
  // vectors: U in blocks of filters, 16 f c floats;
  // WinogradFiltersOnlyWhereItFits.)
  const bool avx512 = isa() == 2;
  const int64_t filters3264 = 16 * 64 * 32 * 4;
  const ConvCase few4 = ConvCase{1, 32, 14, 14, 64, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(few4),
            avx512 ? filters3264 : 16 * v->packABytes(isa(), 64, 32));
  ConvCase batch4 = few4;
  batch4.n = 8;
  EXPECT_EQ(packedBytes(batch4),
            avx512 ? filters3264 : 36 * v->packABytes(isa(), 64, 32));
  // 7 tiles a row (28x28 outputs) fill 7 of AVX-512's 16 lanes: F(4x4).
  const ConvCase row7 = ConvCase{4, 32, 28, 28, 32, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(row7), 36 * v->packABytes(isa(), 32, 32));
  // 3 tiles a row (10x10) fill 3 of AVX2's 8: F(2x2) from AVX2 up.
  const ConvCase row3 = ConvCase{8, 48, 10, 10, 80, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(row3),
            (isa() >= 1 ? 16 : 36) * v->packABytes(isa(), 80, 48));
  const ConvCase wide = ConvCase{1, 256, 28, 28, 160, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(wide), 16 * v->packABytes(isa(), 160, 256));
  // Under 32 tiles, F(2x2) only while its 16 matrices stay within 8 MB:
  // resnet18's 512-channel 7x7 layers (16.8 MB) run as im2col GEMMs.
  const ConvCase fewBig = ConvCase{1, 512, 7, 7, 512, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(fewBig), plainBytes(fewBig));
  const ConvCase fewSmall = ConvCase{1, 256, 7, 7, 256, 3, 3}.pad(1);
  EXPECT_EQ(packedBytes(fewSmall), 16 * v->packABytes(isa(), 256, 256));
  for (const ConvCase &c : {
           ConvCase{1, 16, 14, 14, 24, 3, 3}.pad(1).stride(2),
           ConvCase{1, 16, 14, 14, 24, 3, 3}.pad(2).dilation(2),
           ConvCase{1, 16, 14, 14, 24, 3, 3}.pad(1).group(2),
           ConvCase{1, 16, 6, 6, 24, 3, 3}.pad(1),  // 9 tiles
           ConvCase{1, 8, 14, 14, 24, 3, 3}.pad(1), // few channels
           ConvCase{1, 16, 14, 14, 24, 5, 5}.pad(2),
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(packedBytes(c), plainBytes(c));
  }
}

// On AVX-512, convolutions with few channels a group (c kh kw <= 800 taps,
// 28 (c + f) >= c f, filters a multiple of 16) over small images (at most
// 256 outputs) or with 128 taps or more run the direct kernel, filters
// along the vectors, whatever their window and stride (up to 2 across),
// groups of 16 filters or more (but not 3x3 stride-1 windows of images at
// most 14 columns wide, which are Winograd's: WinogradFiltersSmallImages):
// odd widths
// (tiles of 14 columns and fewer), a last block of 16 filters, 5x5,
// strides, dilation, asymmetric pads, the epilogue with the activations
// the reference models,
// accumulation, batches, and weights packed by another variant. Elsewhere
// the same cases take the GEMM or Winograd and must agree just as well.
TEST_P(Conv2d, DirectSmallImages) {
  const Variant &host = variantNamed("host");
  const uint32_t packed = TCC_UK_PACKED_A;
  for (const Variant *packer : {v, &host})
    checkConv(
        *v,
        ConvCase{2, 32, 15, 15, 64, 3, 3}.pad(1).withFlags(packed).epilogue(),
        packer);
  checkConv(*v, ConvCase{1, 16, 15, 15, 48, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{3, 24, 9, 17, 16, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{1, 32, 14, 14, 64, 5, 5}.pad(2).withFlags(packed));
  checkConv(*v, ConvCase{1, 64, 28, 28, 96, 3, 3}
                    .stride(2)
                    .pad(1)
                    .withFlags(packed)
                    .epilogue());
  checkConv(*v, ConvCase{1, 16, 13, 12, 32, 3, 3}
                    .strides(2, 1)
                    .pads(0, 2, 1, 0)
                    .withFlags(packed));
  checkConv(*v, ConvCase{2, 16, 12, 12, 32, 3, 3}.dilation(2).pad(2).withFlags(
                    packed | TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 20, 6, 30, 32, 1, 3}
                    .pads(0, 1, 0, 1)
                    .withFlags(packed)); // 30 columns: tiles of 10
  checkConv(*v, ConvCase{1, 32, 7, 7, 32, 3, 3}.pad(0).withFlags(packed));
  // A 7x7 stride-2 stem over a larger image (bands of rows).
  checkConv(*v, ConvCase{2, 3, 45, 38, 64, 7, 7}
                    .stride(2)
                    .pad(3)
                    .withFlags(packed)
                    .epilogue());
  // Groups of 16 and 48 filters (a block of 32 and one of 16 a group).
  checkConv(*v, ConvCase{2, 64, 14, 14, 64, 3, 3}
                    .pad(1)
                    .group(4)
                    .withFlags(packed)
                    .epilogue());
  checkConv(
      *v, ConvCase{1, 64, 16, 16, 96, 3, 3}.stride(2).pad(1).group(2).withFlags(
              packed | TCC_UK_ACCUMULATE));
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH})
    checkConv(*v, ConvCase{1, 32, 10, 17, 32, 3, 3}
                      .pad(1)
                      .withFlags(packed)
                      .epilogue()
                      .activation(act));
}

// Which convolutions run direct shows in the packed weights: each group's
// filters in blocks of 32 (the last of 16 where a group has an odd multiple
// of 16), each block [c/groups][ky][kx][32] (f c/groups kh kw floats), where
// the GEMM packs A panels of its MR rows and Winograd transformed
// matrices; on AVX-512 only.
TEST_P(Conv2d, DirectOnlyWhereItFits) {
  auto packedDirect = [&](const ConvCase &c) {
    const tcc_uk_conv2d_params_t p = c.params();
    const int64_t taps = c.c / c.groups * c.kh * c.kw, bytes = c.f * taps * 4;
    if (v->convPackWeightsBytes(isa(), &p) != bytes)
      return false;
    const std::vector<float> w = randomVector(c.f * taps, 7);
    std::vector<float> got(c.f * taps);
    v->convPackWeights(isa(), &p, w.data(), got.data());
    const int64_t fg = c.f / c.groups;
    for (int64_t g = 0; g < c.groups; ++g)
      for (int64_t f0 = g * fg; f0 < (g + 1) * fg; f0 += 32) {
        const int64_t nf = std::min<int64_t>(32, (g + 1) * fg - f0);
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t j = 0; j < nf; ++j)
            if (got[f0 * taps + t * nf + j] != w[(f0 + j) * taps + t])
              return false;
      }
    return true;
  };
  const bool avx512 = isa() == 2;
  for (const ConvCase &c : {
           ConvCase{8, 32, 14, 14, 64, 3, 3}.dilation(2).pad(2),
           ConvCase{1, 16, 16, 16, 48, 3, 3}.pad(1), // 256 outputs, 8 tiles
           ConvCase{1, 32, 14, 14, 64, 5, 5}.pad(2), // 800 taps
           ConvCase{1, 48, 14, 14, 64, 3, 3}.stride(2).pad(1),
           ConvCase{1, 512, 14, 14, 512, 3, 3}.pad(1).group(32), // 16 a group
           ConvCase{1, 96, 14, 14, 96, 3, 3}.pad(1).group(2),    // 48 a group
           ConvCase{1, 5, 112, 112, 64, 7, 7}.stride(2).pad(3),  // 245 taps
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(packedDirect(c), avx512);
  }
  for (const ConvCase &c : {
           ConvCase{1, 16, 17, 16, 48, 3, 3}.pad(1), // 272 outputs
           ConvCase{1, 64, 14, 14, 64, 3, 3}.pad(1), // Winograd's
           ConvCase{8, 32, 14, 14, 64, 3, 3}.pad(1), // a small CNN's: Winograd
           ConvCase{1, 64, 14, 14, 64, 3, 3}.stride(2).pad(1),
           ConvCase{1, 96, 7, 7, 32, 3, 3}.pad(1),              // 864 taps
           ConvCase{1, 32, 14, 14, 40, 3, 3}.pad(1),            // 40 filters
           ConvCase{1, 192, 14, 14, 192, 3, 3}.pad(1).group(8), // 24 a group
           ConvCase{1, 32, 14, 14, 64, 3, 3}.strides(1, 3).pad(1),
           ConvCase{1, 1, 28, 28, 32, 3, 3}.pad(1), // 9 taps
           ConvCase{1, 32, 14, 14, 16, 1, 1},       // a GEMM in place
           ConvCase{1, 3, 224, 224, 64, 3, 3}.stride(2).pad(1), // 27 taps
           // 3 channels: the stem kernel's (StemOnlyWhereItFits).
           ConvCase{1, 3, 224, 224, 64, 7, 7}.stride(2).pad(3),
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_FALSE(packedDirect(c));
  }
}

// On AVX-512, convolutions of at most 9 taps a pixel (a 1-channel 3x3),
// stride 1, one group, filters a multiple of 8, run with the pixels along
// the vectors, their weights as they lie: rows of 1 to 2+ vectors (7, 16,
// 17, 28, 33 columns), pads, dilation, 1x3 and 2x2 windows over 1 and 2
// channels, the plain epilogue (bias, relu: whole stores that spill into
// the next row) and the general one (residual, activation, accumulation),
// batches, and bands of rows across threads with the serial run's bits.
/// The convolution of `c` (its bias and relu; no residual or activation)
/// then a 2x2, stride-2 max pooling, in one call (p.pool = 2), against the
/// double reference pooled likewise; returns the output.
std::vector<float> checkPooledConv(const Variant &v, const ConvCase &c,
                                   const tcc_host_api_t *host = nullptr) {
  SCOPED_TRACE(describe(c) + " pooled 2x2");
  const ConvData d(v, c, &v);
  const int64_t oh = c.oh(), ow = c.ow(), ph = oh / 2, pw = ow / 2;
  tcc_uk_conv2d_params_t p = c.params();
  p.pool = 2;
  tcc_uk_epilogue_t ep = {};
  ep.bias = c.bias ? d.bias.data() : nullptr;
  ep.has_clamp = c.relu;
  ep.clamp_max = std::numeric_limits<float>::infinity();
  std::vector<float> out(c.n * c.f * ph * pw + 1, 42.0f);
  const float *w = c.flags & TCC_UK_PACKED_A ? d.packedW.data() : d.w.data();
  EXPECT_EQ(0, v.conv2d(host, &p, d.x.data(), w, out.data(), &ep));
  EXPECT_EQ(out.back(), 42.0f) << "wrote past the pooled output";
  const int64_t taps = c.c * c.kh * c.kw;
  std::vector<double> want(c.n * c.f * ph * pw), mag(want.size());
  for (int64_t img = 0; img < c.n; ++img)
    for (int64_t oc = 0; oc < c.f; ++oc)
      for (int64_t py = 0; py < ph; ++py)
        for (int64_t px = 0; px < pw; ++px) {
          double best = -INFINITY, m = 0;
          for (int64_t oy = 2 * py; oy < 2 * py + 2; ++oy)
            for (int64_t ox = 2 * px; ox < 2 * px + 2; ++ox) {
              double s = c.bias ? d.bias[oc] : 0, a = std::fabs(s);
              for (int64_t ci = 0; ci < c.c; ++ci)
                for (int64_t ky = 0; ky < c.kh; ++ky)
                  for (int64_t kx = 0; kx < c.kw; ++kx) {
                    const int64_t iy = oy - c.pt + ky * c.dh;
                    const int64_t ix = ox - c.pl + kx * c.dw;
                    if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                      continue;
                    const double t =
                        double(d.x[((img * c.c + ci) * c.h + iy) * c.w + ix]) *
                        d.w[((oc * c.c + ci) * c.kh + ky) * c.kw + kx];
                    s += t;
                    a += std::fabs(t);
                  }
              best = std::max(best, c.relu ? std::max(s, 0.0) : s);
              m = std::max(m, a);
            }
          const int64_t at = ((img * c.f + oc) * ph + py) * pw + px;
          want[at] = best;
          mag[at] = m;
        }
  expectClose(want, mag, out.data(), c.n * c.f, ph * pw, ph * pw, taps + 3,
              v.name);
  return out;
}

// The pixels kernel max-pools its output over 2x2 windows of stride 2 in
// registers where tcc_uk_conv2d_pool_fits (AVX-512): a small CNN's first
// layer at batch 8, odd sizes (an odd last row and column dropped, a last
// vector of pooled outputs short), 2 channels of 2x2, no epilogue, bands
// of pooled rows across threads with the serial run's bits. Elsewhere, and
// with a residual or an activation, the call is refused (-2).
TEST_P(Conv2d, PixelsPooled2x2) {
  ConvCase cnn =
      ConvCase{8, 1, 28, 28, 32, 3, 3}.pad(1).withFlags(TCC_UK_PACKED_A);
  cnn.bias = cnn.relu = true;
  tcc_uk_conv2d_params_t p = cnn.params();
  p.pool = 2;
  EXPECT_EQ(1, v->convPoolFits(TCC_UK_ISA_AVX512, &p));
  EXPECT_EQ(0, v->convPoolFits(TCC_UK_ISA_AVX2, &p));
  tcc_uk_conv2d_params_t strided =
      ConvCase{1, 1, 28, 28, 32, 3, 3}.stride(2).params();
  strided.pool = 2;
  EXPECT_EQ(0, v->convPoolFits(TCC_UK_ISA_AVX512, &strided));
  if (isa() != TCC_UK_ISA_AVX512) {
    float x[784] = {}, w[288] = {}, y = 42.0f;
    EXPECT_EQ(-2, v->conv2d(nullptr, &p, x, w, &y, nullptr));
    EXPECT_EQ(y, 42.0f);
    return;
  }
  const std::vector<float> serial = checkPooledConv(*v, cnn);
  ConvCase odd = ConvCase{2, 1, 13, 17, 16, 3, 3}.pad(1);
  odd.bias = true;
  checkPooledConv(*v, odd);
  checkPooledConv(*v, ConvCase{1, 2, 10, 40, 8, 2, 2});
  checkPooledConv(*v, ConvCase{1, 1, 9, 35, 24, 3, 3}.pads(0, 1, 2, 0));
  for (int threads : {2, 3}) {
    ThreadHost host(threads);
    const std::vector<float> out = checkPooledConv(*v, cnn, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(),
                    std::to_string(threads) + " threads");
    // One image: its pooled rows in bands.
    checkPooledConv(*v, ConvCase{1, 1, 28, 28, 32, 3, 3}.pad(1), host.get());
  }
  tcc_uk_epilogue_t ep = {};
  const ConvData d(*v, cnn, v);
  std::vector<float> y(8 * 32 * 14 * 14);
  ep.activation = TCC_UK_ACT_SILU;
  EXPECT_EQ(
      -2, v->conv2d(nullptr, &p, d.x.data(), d.packedW.data(), y.data(), &ep));
  ep.activation = TCC_UK_ACT_NONE;
  ep.residual = d.res.data();
  EXPECT_EQ(
      -2, v->conv2d(nullptr, &p, d.x.data(), d.packedW.data(), y.data(), &ep));
}

/// A max pooling after a convolution (tcc_uk_conv2d_params_t::pool_window).
tcc_uk_pool2d_params_t poolAfter(const ConvCase &c, int64_t k, int64_t stride,
                                 int64_t pad, bool ceil = false) {
  tcc_uk_pool2d_params_t q = {};
  q.n = c.n, q.c = c.f, q.h = c.oh(), q.w = c.ow();
  q.kh = q.kw = k;
  q.stride_h = q.stride_w = stride;
  q.pad_top = q.pad_left = pad;
  auto out = [&](int64_t in) {
    const int64_t span = in + 2 * pad - k;
    int64_t o = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil && (o - 1) * stride >= in + pad) // windows start inside
      --o;
    return o;
  };
  q.oh = out(q.h), q.ow = out(q.w);
  return q;
}

/// The convolution of `c` (bias and relu as it says) then the max pooling
/// q as one call (pool = 1), against the two as separate calls: the same
/// bits. Returns the output.
std::vector<float> checkConvThenPool(const Variant &v, const ConvCase &c,
                                     const tcc_uk_pool2d_params_t &q,
                                     const tcc_host_api_t *host = nullptr,
                                     bool onlyFirst = false) {
  SCOPED_TRACE(describe(c) + " then max pool " + std::to_string(q.kh) + "/" +
               std::to_string(q.stride_h) + " pad " +
               std::to_string(q.pad_top) + " -> " + std::to_string(q.oh) + "x" +
               std::to_string(q.ow));
  const ConvData d(v, c, &v);
  tcc_uk_conv2d_params_t p = c.params();
  tcc_uk_epilogue_t ep = {};
  ep.bias = c.bias ? d.bias.data() : nullptr;
  ep.bias_per_row = 1;
  ep.has_clamp = c.relu;
  ep.clamp_max = std::numeric_limits<float>::infinity();
  const float *w = c.flags & TCC_UK_PACKED_A ? d.packedW.data() : d.w.data();
  std::vector<float> conv(c.n * c.f * c.oh() * c.ow());
  EXPECT_EQ(0, v.conv2d(nullptr, &p, d.x.data(), w, conv.data(), &ep));
  std::vector<float> want(c.n * c.f * q.oh * q.ow);
  EXPECT_EQ(0, v.maxpool2d(nullptr, &q, conv.data(), want.data()));
  p.pool = 1;
  p.pool_window = q;
  EXPECT_EQ(1, v.convPoolFits(v.isaFn(), &p));
  const int64_t need = v.convScratchBytes(v.isaFn(), &p);
  EXPECT_GT(need, 0);
  Scratch scratch(need);
  p.scratch = scratch.get();
  std::vector<float> out(want.size() + 1, 42.0f);
  ThreadHost alone(2);
  alone.onlyFirstRange = true;
  EXPECT_EQ(0, v.conv2d(onlyFirst ? alone.get() : host, &p, d.x.data(), w,
                        out.data(), &ep));
  EXPECT_EQ(out.back(), 42.0f) << "wrote past the pooled output";
  EXPECT_TRUE(scratch.guardIntact()) << "wrote past the scratch";
  out.pop_back();
  expectIdentical(want.data(), out.data(), want.size(), v.name);
  return out;
}

// A network's stem and the max pooling after it as one call: the pooled
// rows in bands, each computing the convolution's rows its windows read
// into the scratch and pooling them there. A 3x3 stride-2 stem of 27 taps
// (the im2col GEMM) and its 3x3 stride-2 pooling in ceil mode (a last
// window over one row and column), a 7x7 stride-2 stem (the direct kernel
// on AVX-512) and its padded 3x3 pooling, odd sizes, 2x2 and stride-1
// windows, unpacked weights, a batch; 1 to 4 threads and one part run
// alone: the bits of the two calls.
TEST_P(Conv2d, ThenMaxPool) {
  const uint32_t packed = TCC_UK_PACKED_A;
  ConvCase squeeze =
      ConvCase{1, 3, 225, 225, 64, 3, 3}.stride(2).withFlags(packed);
  squeeze.bias = squeeze.relu = true;
  const tcc_uk_pool2d_params_t squeezePool = poolAfter(squeeze, 3, 2, 0, true);
  EXPECT_EQ(squeezePool.oh, 56); // ceil mode: a last window of one row
  const std::vector<float> serial = checkConvThenPool(*v, squeeze, squeezePool);
  ConvCase stem =
      ConvCase{2, 3, 64, 60, 32, 7, 7}.stride(2).pad(3).withFlags(packed);
  stem.bias = stem.relu = true;
  checkConvThenPool(*v, stem, poolAfter(stem, 3, 2, 1));
  ConvCase odd = ConvCase{1, 5, 19, 23, 24, 3, 3}.pad(1);
  odd.bias = true;
  checkConvThenPool(*v, odd, poolAfter(odd, 2, 2, 0));
  checkConvThenPool(*v, odd, poolAfter(odd, 3, 1, 1));
  checkConvThenPool(
      *v, ConvCase{3, 4, 17, 9, 16, 5, 5}.pad(2),
      poolAfter(ConvCase{3, 4, 17, 9, 16, 5, 5}.pad(2), 3, 2, 1, true));
  for (int threads : {2, 3, 4}) {
    ThreadHost host(threads);
    const std::vector<float> out =
        checkConvThenPool(*v, squeeze, squeezePool, host.get());
    expectIdentical(serial.data(), out.data(), serial.size(),
                    std::to_string(threads) + " threads");
    checkConvThenPool(*v, stem, poolAfter(stem, 3, 2, 1), host.get());
  }
  checkConvThenPool(*v, squeeze, squeezePool, nullptr, /*onlyFirst=*/true);
}

// What the banded pooling does not take (tcc_uk_conv2d_pool_fits is 0 and
// the call writes nothing): a 1x1, a depthwise or Winograd-shaped
// convolution, a dilated pooling, a pooling whose pad fills a window or
// whose last window starts past the end, and a residual or an activation.
TEST_P(Conv2d, ThenMaxPoolRefuses) {
  const ConvCase stem = ConvCase{1, 3, 32, 32, 16, 3, 3}.stride(2);
  auto fits = [&](const ConvCase &c, const tcc_uk_pool2d_params_t &q) {
    tcc_uk_conv2d_params_t p = c.params();
    p.pool = 1;
    p.pool_window = q;
    return v->convPoolFits(isa(), &p);
  };
  EXPECT_EQ(1, fits(stem, poolAfter(stem, 3, 2, 1)));
  const ConvCase oneByOne{1, 16, 16, 16, 16, 1, 1};
  EXPECT_EQ(0, fits(oneByOne, poolAfter(oneByOne, 2, 2, 0)));
  const ConvCase dw = ConvCase{1, 16, 16, 16, 16, 3, 3}.group(16);
  EXPECT_EQ(0, fits(dw, poolAfter(dw, 2, 2, 0)));
  const ConvCase wino = ConvCase{1, 64, 32, 32, 64, 3, 3}.pad(1);
  EXPECT_EQ(0, fits(wino, poolAfter(wino, 2, 2, 0)));
  tcc_uk_pool2d_params_t q = poolAfter(stem, 3, 2, 1);
  q.dilation_h = 2;
  EXPECT_EQ(0, fits(stem, q));
  q = poolAfter(stem, 2, 2, 0);
  q.pad_top = 2;
  EXPECT_EQ(0, fits(stem, q));
  q = poolAfter(stem, 3, 2, 1);
  q.oh += 1;
  EXPECT_EQ(0, fits(stem, q));
  const ConvData d(*v, stem, v);
  tcc_uk_conv2d_params_t p = stem.params();
  p.pool = 1;
  p.pool_window = poolAfter(stem, 3, 2, 1);
  std::vector<float> y(16 * 8 * 8, 42.0f);
  tcc_uk_epilogue_t ep = {};
  ep.activation = TCC_UK_ACT_GELU;
  EXPECT_EQ(-2, v->conv2d(nullptr, &p, d.x.data(), d.w.data(), y.data(), &ep));
  ep.activation = TCC_UK_ACT_NONE;
  ep.residual = d.res.data();
  EXPECT_EQ(-2, v->conv2d(nullptr, &p, d.x.data(), d.w.data(), y.data(), &ep));
  for (float e : y)
    ASSERT_EQ(e, 42.0f);
}

TEST_P(Conv2d, PixelsFewTaps) {
  const uint32_t packed = TCC_UK_PACKED_A;
  for (int64_t w : {7, 16, 17, 28, 33})
    checkConv(*v, ConvCase{2, 1, 9, w, 32, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{8, 1, 28, 28, 32, 3, 3}.pad(1).epilogue());
  checkConv(*v, ConvCase{1, 1, 12, 20, 16, 3, 3}
                    .pads(2, 0, 1, 2)
                    .withFlags(packed)
                    .epilogue()
                    .activation(TCC_UK_ACT_SILU));
  checkConv(*v, ConvCase{1, 1, 12, 20, 8, 3, 3}.dilation(2).pad(2).withFlags(
                    packed | TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 2, 10, 18, 16, 2, 2}.withFlags(packed));
  checkConv(*v, ConvCase{1, 3, 10, 18, 24, 1, 3}.pads(0, 1, 0, 1));
  ConvCase plain = ConvCase{1, 1, 30, 28, 32, 3, 3}.pad(1);
  plain.bias = plain.relu = true;
  checkConv(*v, plain);
  expectThreadsKeepBits(*v, plain, {2, 3});
  const ConvData d(*v, plain, v);
  // The weights as they lie on AVX-512, whoever packs them.
  const tcc_uk_conv2d_params_t p = plain.params();
  const int64_t bytes = v->convPackWeightsBytes(isa(), &p);
  if (isa() == 2) {
    ASSERT_EQ(bytes, 32 * 9 * 4);
    std::vector<float> got(32 * 9);
    v->convPackWeights(isa(), &p, d.w.data(), got.data());
    EXPECT_EQ(got, d.w);
  }
}

// On AVX-512, one-group convolutions of at most 4 input channels (a
// network's stem), windows up to 7 wide, stride 1 or 2 across, filters a
// multiple of 8, outside the pixels kernel's shapes, run with the output
// pixels along the vectors from padded input rows (split by column parity
// at stride 2) when their weights are prepacked: 3x3/2 and 7x7/2 stems,
// left pads 0 to 3 (each parity of the first column), rows of 1 to 7
// vectors (tiles of 3, 2 and 1), a last short vector, 1 to 4 channels, 8 to
// 64 filters, a stride and a dilation down only, 1xk and kx1 windows, the
// plain epilogue (bias, clamp) and the general one (residual, activations,
// accumulation), batches and bands across threads with the serial run's
// bits. Unpacked, the same shapes take the GEMM.
TEST_P(Conv2d, StemFewChannels) {
  const uint32_t packed = TCC_UK_PACKED_A;
  ConvCase mbv2 =
      ConvCase{1, 3, 224, 224, 32, 3, 3}.stride(2).pad(1).withFlags(packed);
  mbv2.bias = mbv2.relu = true;
  checkConv(*v, mbv2);
  checkConv(*v, ConvCase{1, 3, 64, 60, 64, 7, 7}
                    .stride(2)
                    .pad(3)
                    .withFlags(packed)
                    .epilogue());
  for (int64_t w : {1, 2, 15, 31, 33, 65, 97, 111, 113})
    checkConv(*v, ConvCase{1, 3, 7, w, 16, 3, 3}.pad(1).withFlags(packed));
  for (int64_t pl : {0, 1, 2, 3})
    checkConv(*v, ConvCase{2, 3, 11, 47, 24, 5, 5}
                      .stride(2)
                      .pads(2, pl, 1, 3 - pl)
                      .withFlags(packed));
  checkConv(*v, ConvCase{1, 1, 9, 40, 8, 3, 3}.stride(2).withFlags(packed));
  checkConv(*v, ConvCase{1, 2, 12, 36, 16, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{1, 4, 13, 50, 40, 3, 3}
                    .strides(2, 1)
                    .dilations(2, 1)
                    .pad(2)
                    .withFlags(packed | TCC_UK_ACCUMULATE));
  checkConv(*v,
            ConvCase{1, 3, 10, 44, 8, 1, 7}.pads(0, 3, 0, 3).withFlags(packed));
  checkConv(*v, ConvCase{1, 3, 21, 30, 8, 5, 1}.stride(2).withFlags(packed));
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH})
    checkConv(*v, ConvCase{1, 3, 32, 38, 16, 3, 3}
                      .stride(2)
                      .pad(1)
                      .withFlags(packed)
                      .epilogue()
                      .activation(act));
  checkConv(*v, ConvCase{3, 3, 30, 30, 32, 3, 3}.stride(2).pad(1).epilogue());
  // Narrow groups (4 or 8 channels and filters a group: ResNeXt's first
  // stages, RegNet's): a task a group, passes of 4 filters where a group
  // has 4, 2 -> 4 channels a group, stride 2, batches, a residual.
  checkConv(*v, ConvCase{1, 128, 20, 22, 128, 3, 3}
                    .pad(1)
                    .group(32)
                    .withFlags(packed)
                    .epilogue());
  checkConv(*v, ConvCase{2, 64, 17, 35, 64, 3, 3}
                    .stride(2)
                    .pad(1)
                    .group(8)
                    .withFlags(packed)
                    .epilogue());
  checkConv(*v, ConvCase{1, 12, 9, 40, 24, 3, 3}.pad(1).group(6).withFlags(
                    packed | TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 32, 7, 7, 32, 3, 3}.pad(1).group(8).withFlags(
                    packed)); // a 7x7 image: one short vector a row
  checkConv(*v, ConvCase{2, 64, 14, 14, 64, 3, 3}
                    .pad(1)
                    .group(8)
                    .epilogue()); // unpacked: a GEMM a group
  // Bands of rows (one image) and tasks of (image, group, band) across
  // threads: the serial run's bits.
  ConvCase grouped = ConvCase{2, 32, 23, 29, 32, 3, 3}
                         .stride(2)
                         .pad(1)
                         .group(4)
                         .withFlags(packed)
                         .epilogue();
  for (const ConvCase &c : {mbv2, grouped}) {
    SCOPED_TRACE(describe(c));
    expectThreadsKeepBits(*v, c, {2, 3, 4});
  }
}

// Which convolutions the stem kernel takes shows in the packed weights,
// [f / 8][c kh kw][8] ([f / 4][c kh kw][4] for groups of 4 filters;
// the GEMM's packed A on AVX-512 lies as the first), and in
// the scratch, which it does not need (the im2col GEMM does); on AVX-512
// only.
TEST_P(Conv2d, StemOnlyWhereItFits) {
  auto packedStem = [&](const ConvCase &c) {
    tcc_uk_conv2d_params_t p = c.params();
    p.flags = TCC_UK_PACKED_A;
    if (v->convScratchBytes(isa(), &p) != 0)
      return false;
    const int64_t taps = c.c / c.groups * c.kh * c.kw;
    if (v->convPackWeightsBytes(isa(), &p) != c.f * taps * 4)
      return false;
    const std::vector<float> w = randomVector(c.f * taps, 7);
    std::vector<float> got(c.f * taps);
    v->convPackWeights(isa(), &p, w.data(), got.data());
    const int64_t nf = c.f / c.groups % 8 ? 4 : 8; // filters a pass
    for (int64_t f = 0; f < c.f; ++f)
      for (int64_t t = 0; t < taps; ++t)
        if (got[(f / nf * taps + t) * nf + f % nf] != w[f * taps + t])
          return false;
    return true;
  };
  const bool avx512 = isa() == TCC_UK_ISA_AVX512;
  for (const ConvCase &c : {
           ConvCase{1, 3, 224, 224, 32, 3, 3}.stride(2).pad(1),
           ConvCase{1, 3, 224, 224, 64, 7, 7}.stride(2).pad(3),
           ConvCase{1, 3, 14, 14, 32, 3, 3}.pad(1), // small: not direct's
           ConvCase{1, 4, 20, 20, 8, 3, 3}.dilations(2, 1),
           ConvCase{1, 1, 28, 28, 8, 3, 3}.stride(2),
           ConvCase{1, 128, 56, 56, 128, 3, 3}.pad(1).group(32), // 4 a group
           ConvCase{1, 208, 14, 14, 208, 3, 3}.pad(1).group(26), // 8 a group
           ConvCase{1, 6, 32, 32, 12, 3, 3}.pad(1).group(3),     // 2 -> 4
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(packedStem(c), avx512);
  }
  for (const ConvCase &c : {
           ConvCase{1, 5, 32, 32, 32, 3, 3}.pad(1),              // 5 channels
           ConvCase{1, 3, 32, 32, 12, 3, 3}.pad(1),              // 12 filters
           ConvCase{1, 3, 32, 32, 16, 3, 3}.stride(3),           // stride 3
           ConvCase{1, 3, 32, 32, 16, 3, 3}.dilation(2),         // across
           ConvCase{1, 3, 32, 32, 8, 9, 9}.pad(4),               // 9 wide
           ConvCase{1, 512, 14, 14, 512, 3, 3}.pad(1).group(32), // 16 a group
           ConvCase{1, 32, 16, 16, 48, 3, 3}.pad(1).group(4),    // 8 -> 12
           ConvCase{1, 32, 16, 16, 32, 3, 3}.pad(1).group(32),   // depthwise
           ConvCase{1, 1, 28, 28, 32, 3, 3}.pad(1),      // the pixels kernel's
           ConvCase{1, 3, 8, 20000, 16, 3, 3}.stride(2), // rows too long
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_FALSE(packedStem(c));
  }
}

// The direct kernel's tasks: images, then parts of the filter blocks and
// bands of rows, until there are two a thread; parts first where the
// weights outweigh what each part would read again (a one-group
// convolution's input, nothing for grouped filters), bands first otherwise.
// For 8 threads: a 7x7 image of 16 -> 64 channels (5x5) takes 7 one-row
// bands by both blocks of 32 filters; 32 groups of 16 filters at 7x7 take
// 16 parts of one band (bands first would have been 7 by 3). Results are
// the same whatever the split. (3x3 windows of stride 1 at these sizes are
// Winograd's, WinogradFiltersSplitsAcrossThreads; a dilation keeps them
// here.)
TEST_P(Conv2d, DirectSplitsAcrossThreads) {
  for (const ConvCase &c : {
           ConvCase{1, 16, 7, 7, 64, 5, 5}.pad(2).withFlags(TCC_UK_PACKED_A),
           ConvCase{1, 512, 7, 7, 512, 3, 3}.pad(1).group(32).withFlags(
               TCC_UK_PACKED_A),
           ConvCase{3, 32, 14, 14, 48, 3, 3}
               .dilation(2)
               .pad(2)
               .withFlags(TCC_UK_PACKED_A)
               .epilogue(),
           ConvCase{1, 16, 14, 14, 32, 3, 3}.dilation(2).pad(2).withFlags(
               TCC_UK_PACKED_A),
       }) {
    SCOPED_TRACE(describe(c));
    const ConvData d(*v, c, v);
    const std::vector<float> serial = runConv(*v, c, d, nullptr);
    for (int threads : {2, 3, 8}) {
      ThreadHost host(threads);
      const std::vector<float> out = runConv(*v, c, d, host.get());
      expectIdentical(serial.data(), out.data(), serial.size(),
                      std::to_string(threads) + " threads");
      if (isa() != 2)
        continue;
      EXPECT_EQ(host.calls, 1); // one parallel loop
      if (c.h == 7 && threads == 8) {
        EXPECT_EQ(host.counts.back(), c.groups == 1 ? 14 : 16);
      }
    }
    checkConv(*v, c);
  }
}

// On AVX-512, 3x3 stride-1 convolutions that Winograd takes, over images
// of at most 7 tiles a row (14 output columns), with filters a multiple of
// 16 and U (16 f c floats) within 512 KB, run F(2x2) with the filters along
// the vectors: U in blocks of 32 filters (16 for a last odd one), each
// [xi][c][filter], G g G^T as in winograd.cc. Nowhere else.
TEST_P(Conv2d, WinogradFiltersOnlyWhereItFits) {
  static const double G[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  auto packedFilters = [&](const ConvCase &c) {
    const tcc_uk_conv2d_params_t p = c.params();
    if (v->convPackWeightsBytes(isa(), &p) != 16 * c.f * c.c * 4)
      return false;
    const std::vector<float> w = randomVector(c.f * c.c * 9, 7);
    std::vector<float> got(16 * c.f * c.c);
    v->convPackWeights(isa(), &p, w.data(), got.data());
    for (int64_t f = 0; f < c.f; ++f) {
      const int64_t f0 = f / 32 * 32, nf = std::min<int64_t>(32, c.f - f0);
      for (int64_t ch = 0; ch < c.c; ++ch)
        for (int xi = 0; xi < 16; ++xi) {
          const float *g = w.data() + (f * c.c + ch) * 9;
          double u = 0;
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
              u += G[xi / 4][a] * g[a * 3 + b] * G[xi % 4][b];
          const float at = got[f0 * 16 * c.c + (xi * c.c + ch) * nf + f - f0];
          if (std::fabs(at - u) > 1e-6 * (1 + std::fabs(u)))
            return false;
        }
    }
    return true;
  };
  const bool avx512 = isa() == 2;
  for (const ConvCase &c : {
           ConvCase{8, 32, 14, 14, 64, 3, 3}.pad(1),  // a small CNN's
           ConvCase{1, 16, 13, 13, 48, 3, 3}.pad(1),  // a last block of 16
           ConvCase{1, 64, 14, 14, 128, 3, 3}.pad(1), // U of 512 KB
           ConvCase{1, 32, 13, 13, 256, 3, 3}.pad(1), // the same
           ConvCase{1, 128, 7, 7, 32, 3, 3}.pad(1),
           ConvCase{1, 16, 32, 2, 32, 3, 3}.pad(1),  // one tile a row
           ConvCase{2, 64, 12, 12, 32, 3, 3}.pad(2), // 14 columns out
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(packedFilters(c), avx512);
  }
  for (const ConvCase &c : {
           ConvCase{1, 16, 16, 16, 48, 3, 3}.pad(1),   // 8 tiles a row
           ConvCase{1, 32, 14, 14, 40, 3, 3}.pad(1),   // 40 filters
           ConvCase{1, 48, 13, 13, 192, 3, 3}.pad(1),  // U of 576 KB
           ConvCase{1, 128, 14, 14, 128, 3, 3}.pad(1), // U of 1 MB
           ConvCase{1, 256, 14, 14, 256, 3, 3}.pad(1), // U of 4 MB
           ConvCase{1, 32, 14, 14, 64, 3, 3}.stride(2).pad(1),
           ConvCase{1, 32, 14, 14, 64, 3, 3}.dilation(2).pad(2),
           ConvCase{1, 32, 6, 6, 64, 3, 3}.pad(1), // 9 tiles: not Winograd
       }) {
    SCOPED_TRACE(describe(c));
    EXPECT_FALSE(packedFilters(c));
  }
}

// The filters-along-the-vectors Winograd against the reference: odd sizes
// (a last tile half outside), a last block of 16 filters, one tile a row
// and groups of several tile rows, asymmetric and 2-wide pads, the largest
// U, the epilogue with the activations the reference models, accumulation,
// batches, and weights packed by the baseline build. Elsewhere the cases take
// other paths and must agree as well.
TEST_P(Conv2d, WinogradFiltersSmallImages) {
  const Variant &host = variantNamed("host");
  const uint32_t packed = TCC_UK_PACKED_A;
  for (const Variant *packer : {v, &host})
    checkConv(
        *v,
        ConvCase{2, 32, 14, 14, 64, 3, 3}.pad(1).withFlags(packed).epilogue(),
        packer);
  checkConv(*v, ConvCase{1, 16, 13, 13, 48, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{3, 24, 7, 7, 16, 3, 3}.pad(1).withFlags(
                    packed | TCC_UK_ACCUMULATE));
  checkConv(*v, ConvCase{1, 32, 9, 14, 32, 3, 3}
                    .pads(0, 2, 1, 0)
                    .withFlags(packed)
                    .epilogue());
  checkConv(*v, ConvCase{1, 16, 32, 2, 32, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{2, 64, 12, 12, 32, 3, 3}.pad(2).withFlags(packed));
  checkConv(*v, ConvCase{1, 64, 14, 14, 128, 3, 3}.pad(1).withFlags(packed));
  checkConv(*v, ConvCase{1, 48, 11, 10, 96, 3, 3}.pad(1).withFlags(packed));
  for (int32_t act : {TCC_UK_ACT_SILU, TCC_UK_ACT_HARDSWISH})
    checkConv(
        *v,
        ConvCase{1, 32, 14, 14, 32, 3, 3}.pad(1).withFlags(packed).activation(
            act));
}

// Its tasks. Fewer images than two tasks a thread (and at most 16 groups
// of tile rows in all): every group's V first, one task a group, then
// tasks of (image, part of the filter blocks, part of the groups) until
// there are two a thread -- for 8 threads a 14x14 image (4 groups of 2
// tile rows) at 64 filters: 4, then both blocks by 4 groups; 3 images at
// 48 filters (a block of 32 and one of 16): 12, then 3 x 2 x 3.
// Otherwise one loop of (image, group) tasks, 8 images at 14x14 in 16
// runs of 2. The same bits whatever the split.
TEST_P(Conv2d, WinogradFiltersSplitsAcrossThreads) {
  struct Split {
    ConvCase c;
    std::vector<int64_t> counts; // for 8 threads
  };
  for (const Split &split : {
           Split{ConvCase{1, 32, 14, 14, 64, 3, 3}.pad(1).withFlags(
                     TCC_UK_PACKED_A),
                 {4, 8}},
           Split{ConvCase{3, 32, 14, 14, 48, 3, 3}
                     .pad(1)
                     .withFlags(TCC_UK_PACKED_A)
                     .epilogue(),
                 {12, 18}},
           Split{ConvCase{8, 32, 14, 14, 64, 3, 3}.pad(1).withFlags(
                     TCC_UK_PACKED_A),
                 {16}},
       }) {
    const ConvCase &c = split.c;
    SCOPED_TRACE(describe(c));
    const ConvData d(*v, c, v);
    const std::vector<float> serial = runConv(*v, c, d, nullptr);
    for (int threads : {2, 3, 8}) {
      ThreadHost host(threads);
      const std::vector<float> out = runConv(*v, c, d, host.get());
      expectIdentical(serial.data(), out.data(), serial.size(),
                      std::to_string(threads) + " threads");
      if (isa() == 2 && threads == 8)
        EXPECT_EQ(host.counts, split.counts);
    }
    checkConv(*v, c);
  }
}

// A depthwise convolution writes the mean of each output plane, after its
// epilogue, where asked (plane_means: a squeeze-and-excitation block's
// pooling), on every path (3x3 direct rows at stride 1 and 2, 7x7 planes
// flat, 5x5 and 7x7 in lanes with a last group of fewer planes, a dilation
// the unrolled kernels leave to the general rows), for a batch, on any
// number of threads; the output is the same as without. The means are
// sums in float of up to 3136 outputs, divided: within 1e-5 of the mean
// of the output in double (relative to the mean of magnitudes).
TEST_P(Conv2d, DepthwisePlaneMeans) {
  const ConvCase cases[] = {
      ConvCase{2, 32, 14, 14, 32, 3, 3}.pad(1).group(32).epilogue(),
      ConvCase{1, 48, 28, 28, 48, 3, 3}.stride(2).pad(1).group(48).epilogue(),
      ConvCase{1, 40, 7, 7, 40, 3, 3}.pad(1).group(40),
      ConvCase{1, 72, 56, 56, 72, 5, 5}
          .stride(2)
          .pad(2)
          .group(72)
          .epilogue()
          .activation(TCC_UK_ACT_SILU),
      ConvCase{1, 36, 14, 14, 36, 7, 7}.pad(3).group(36).epilogue(),
      ConvCase{1, 16, 12, 12, 16, 3, 3}.dilation(2).pad(2).group(16),
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(describe(c));
    const ConvData d(*v, c, v);
    const std::vector<float> plain = runConv(*v, c, d, nullptr);
    const int64_t planes = c.n * c.f, hw = c.oh() * c.ow();
    for (int threads : {1, 2, 3}) {
      ThreadHost host(threads);
      std::vector<float> means(planes + 1, std::nanf(""));
      const std::vector<float> out =
          runConv(*v, c, d, threads > 1 ? host.get() : nullptr, means.data());
      expectIdentical(plain.data(), out.data(), plain.size(),
                      std::to_string(threads) + " threads");
      EXPECT_TRUE(std::isnan(means[planes])) << "wrote past the means";
      for (int64_t q = 0; q < planes; ++q) {
        double sum = 0, mag = 0;
        for (int64_t i = 0; i < hw; ++i) {
          sum += out[q * hw + i];
          mag += std::fabs(out[q * hw + i]);
        }
        ASSERT_NEAR(means[q], sum / hw, 1e-5 * (mag / hw) + 1e-30)
            << "plane " << q << ", " << threads << " threads";
      }
    }
  }
}

// Plane means only for depthwise convolutions: one with several groups of
// two channels, with one group, with a channel multiplier, accumulating or
// pooled is refused (-2), nothing written.
TEST_P(Conv2d, DepthwisePlaneMeansRefused) {
  const ConvCase cases[] = {
      ConvCase{1, 8, 6, 6, 8, 3, 3}.pad(1).group(4),
      ConvCase{1, 8, 6, 6, 8, 3, 3}.pad(1),
      ConvCase{1, 8, 6, 6, 16, 3, 3}.pad(1).group(8),
      ConvCase{1, 8, 6, 6, 8, 3, 3}.pad(1).group(8).withFlags(
          TCC_UK_ACCUMULATE),
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(describe(c));
    const ConvData d(*v, c, v);
    tcc_uk_conv2d_params_t p = c.params();
    std::vector<float> means(c.n * c.f, 7.0f), out = d.out0;
    p.plane_means = means.data();
    std::vector<char> scratch(v->convScratchBytes(v->isaFn(), &p) + 64);
    p.scratch = scratch.data();
    EXPECT_EQ(-2, v->conv2d(nullptr, &p, d.x.data(), d.w.data(), out.data(),
                            nullptr));
    EXPECT_EQ(means, std::vector<float>(c.n * c.f, 7.0f));
  }
  ConvCase dw = ConvCase{1, 16, 8, 8, 16, 3, 3}.pad(1).group(16);
  tcc_uk_conv2d_params_t p = dw.params();
  p.pool = 2;
  float means[16];
  p.plane_means = means;
  const ConvData d(*v, dw, v);
  std::vector<float> out(16 * 4 * 4);
  EXPECT_EQ(
      -2, v->conv2d(nullptr, &p, d.x.data(), d.w.data(), out.data(), nullptr));
}

// Depthwise planes are cheap: mobilenet's 7x7 layer (960 planes of 49
// outputs) is still split across two threads.
TEST_P(Conv2d, DepthwiseSmallPlanesUseEveryThread) {
  const ConvCase c = ConvCase{1, 960, 7, 7, 960, 3, 3}.pad(1).group(960);
  const ConvData d(*v, c, v);
  ThreadHost host(2);
  runConv(*v, c, d, host.get());
  EXPECT_EQ(host.calls, 1);
  EXPECT_EQ(host.lastParts, 2u);
}

// A grouped convolution of many small groups (RegNet's group width 8)
// runs its GEMMs side by side, a group a thread, in one parallel loop,
// instead of one parallel loop a group that each GEMM is too small to fill.
TEST_P(Conv2d, SmallGroupsSideBySide) {
  const ConvCase c = ConvCase{1, 208, 14, 14, 208, 3, 3}.pad(1).group(26);
  const ConvData d(*v, c, v);
  ThreadHost host(2);
  runConv(*v, c, d, host.get());
  EXPECT_EQ(host.calls, 1);
  EXPECT_EQ(host.lastParts, 2u);
}

// So does a batch of images whose GEMMs are each too small to split (a
// small CNN's 8 -> 16 channels at 8x8, batch 32): an image a thread.
TEST_P(Conv2d, SmallImagesSideBySide) {
  const ConvCase c = ConvCase{32, 8, 8, 8, 16, 3, 3}.pad(1).epilogue();
  const ConvData d(*v, c, v);
  ThreadHost host(2);
  const std::vector<float> out = runConv(*v, c, d, host.get());
  EXPECT_EQ(host.calls, 1);
  EXPECT_EQ(host.lastParts, 2u);
  const std::vector<float> serial = runConv(*v, c, d, nullptr);
  expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
}

// A BatchNorm and ReLU before a 1x1 (DenseNet's layers) applied as the
// GEMM packs the input: few filters (B otherwise read in place), many, a
// ragged last panel (7x7, 13x13), a batch, prepacked weights with the
// epilogue, each part of the prologue alone.
TEST_P(Conv2d, InputPrologue) {
  checkConv(*v, ConvCase{1, 32, 14, 14, 24, 1, 1}.prologue());
  checkConv(*v, ConvCase{1, 96, 13, 13, 128, 1, 1}.prologue());
  checkConv(*v, ConvCase{2, 64, 7, 7, 100, 1, 1}.prologue().epilogue());
  checkConv(*v, ConvCase{1, 72, 28, 28, 40, 1, 1}
                    .withFlags(TCC_UK_PACKED_A)
                    .prologue()
                    .epilogue());
  checkConv(*v, ConvCase{1, 16, 9, 9, 16, 1, 1}.prologue(true, false, false));
  checkConv(*v, ConvCase{1, 16, 9, 9, 16, 1, 1}.prologue(false, true, false));
  checkConv(*v, ConvCase{1, 16, 9, 9, 16, 1, 1}.prologue(false, false, true));
}

// Only 1x1, stride-1, unpadded one-group GEMMs take a prologue; elsewhere
// the call is refused and writes nothing.
TEST_P(Conv2d, InputPrologueOnlyWhereItFits) {
  const ConvCase fits = ConvCase{1, 32, 14, 14, 24, 1, 1}.prologue();
  tcc_uk_conv2d_params_t p = fits.params();
  p.in_relu = 1;
  EXPECT_TRUE(v->convPrologueFits(isa(), &p));
  for (const ConvCase &c :
       {ConvCase{1, 16, 10, 10, 24, 3, 3}.pad(1).prologue(),
        ConvCase{1, 16, 10, 10, 24, 1, 1}.stride(2).prologue(),
        ConvCase{1, 16, 10, 10, 16, 1, 1}.group(2).prologue(),
        ConvCase{1, 16, 10, 10, 16, 3, 3}.pad(1).group(16).prologue()}) {
    SCOPED_TRACE(describe(c));
    const ConvData d(*v, c, v);
    tcc_uk_conv2d_params_t q = c.params();
    setPrologue(q, c, d);
    EXPECT_FALSE(v->convPrologueFits(isa(), &q));
    std::vector<float> out(c.n * c.f * c.oh() * c.ow(), 42.0f);
    std::vector<char> scratch(v->convScratchBytes(isa(), &q) + 1);
    q.scratch = scratch.data();
    EXPECT_EQ(-2, v->conv2d(nullptr, &q, d.x.data(), d.w.data(), out.data(),
                            nullptr));
    EXPECT_EQ(out.front(), 42.0f);
    EXPECT_EQ(out.back(), 42.0f);
  }
}

// A NaN input stays NaN through the prologue's ReLU (max(NaN, 0) is not 0,
// as in the separate elementwise kernel), and two threads compute the
// bits one does.
TEST_P(Conv2d, InputPrologueNaNAndThreads) {
  const ConvCase c = ConvCase{1, 64, 14, 14, 96, 1, 1}.prologue().epilogue();
  ConvData d(*v, c, v);
  const std::vector<float> serial = runConv(*v, c, d, nullptr);
  ThreadHost host(2);
  const std::vector<float> out = runConv(*v, c, d, host.get());
  expectIdentical(serial.data(), out.data(), serial.size(), "2 threads");
  d.x[5 * 14 * 14 + 3] = std::nanf(""); // channel 5, pixel 3
  const std::vector<float> nan = runConv(*v, c, d, nullptr);
  for (int64_t oc = 0; oc < c.f; ++oc)
    for (int64_t px = 0; px < 14 * 14; ++px)
      EXPECT_EQ(std::isnan(nan[oc * 196 + px]), px == 3)
          << "filter " << oc << " pixel " << px;
}

TEST_P(Conv2d, EmptyOutputWritesNothing) {
  ConvCase c{1, 2, 2, 2, 3, 5, 5}; // kernel larger than the image
  tcc_uk_conv2d_params_t p = c.params();
  float x[8] = {}, w[150] = {}, out = 42.0f;
  EXPECT_EQ(0, v->convScratchBytes(isa(), &p));
  EXPECT_EQ(0, v->conv2d(nullptr, &p, x, w, &out, nullptr));
  EXPECT_EQ(out, 42.0f);
}

TEST_P(Conv2d, ThreadCountDoesNotChangeResults) {
  const std::vector<ConvCase> cases = {
      ConvCase{2, 16, 20, 20, 32, 3, 3}.pad(1).epilogue(),
      ConvCase{1, 64, 14, 14, 64, 1, 1}.epilogue(),
      ConvCase{1, 256, 7, 7, 512, 3, 3}.pad(1),
      // resnet18's 7x7 layer: an im2col GEMM of two panels (48 + 1
      // columns) whose B is packed by rows across the threads, the narrow
      // panel in groups of row panels.
      ConvCase{1, 512, 7, 7, 512, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
      ConvCase{2, 32, 30, 30, 32, 3, 3}.stride(2).pad(1).group(32).epilogue(),
      ConvCase{1, 8, 12, 12, 16, 3, 3}.pad(1).group(2),
      // Groups side by side (two or more a thread): RegNet's group width 8
      // with the epilogue, ResNeXt's 32 groups of 4 over two images with
      // packed weights, grouped 1x1s with a residual, a stride of 2.
      ConvCase{1, 64, 14, 14, 64, 3, 3}.pad(1).group(8).epilogue(),
      ConvCase{2, 32, 16, 16, 32, 3, 3}.pad(1).group(8).withFlags(
          TCC_UK_PACKED_A),
      ConvCase{1, 48, 10, 10, 96, 1, 1}.group(6).epilogue(),
      ConvCase{1, 48, 15, 15, 48, 3, 3}.stride(2).pad(1).group(12),
      ConvCase{1, 32, 28, 28, 48, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(), // Winograd
      // Winograd with blocks of tiles a thread that end inside tile rows
      // (F(4x4): 48-tile blocks of 14-tile rows; F(2x2): 96 of 20).
      ConvCase{1, 16, 56, 56, 16, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
      ConvCase{1, 136, 40, 40, 16, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
      // Winograd's blocks across the images of a batch: F(4x4) (one block
      // an image; F(2x2) on AVX-512), F(2x2) with more blocks than slots.
      ConvCase{8, 32, 14, 14, 72, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
      ConvCase{20, 16, 9, 9, 24, 3, 3}
          .pad(1)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
      // A strided 1x1: its input subsampled by channels across the threads.
      ConvCase{2, 64, 28, 28, 128, 1, 1}
          .stride(2)
          .withFlags(TCC_UK_PACKED_A)
          .epilogue(),
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(describe(c));
    expectThreadsKeepBits(*v, c, {1, 2, 3});
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Conv2d, ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
