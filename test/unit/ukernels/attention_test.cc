// attention_test.cc - tcc_uk_attention in every variant the CPU can run,
// against a double-precision softmax(scale Q K^T + mask) V.
#include "uk_test_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace {

using namespace uktest;

/// One problem: `batch` heads laid out as a transformer's projections lie
/// (heads side by side along a row of width heads * d), or densely.
struct AttnCase {
  int64_t batch, sq, sk, d, dv;
  float scale = 0.125f;
  int32_t mask = TCC_UK_MASK_NONE;
  bool maskPerHead = false; // the mask's (b, i, j); else broadcast over b
  bool keyMask = false;     // one mask row for every query row (ldm 0)
  uint32_t flags = 0;
  bool interleaved = false; // heads side by side along the rows
};

std::string describe(const AttnCase &c) {
  auto s = [](int64_t x) { return std::to_string(x); };
  return "batch " + s(c.batch) + " sq " + s(c.sq) + " sk " + s(c.sk) + " d " +
         s(c.d) + " dv " + s(c.dv) + " mask " + s(c.mask) + " flags " +
         s(c.flags) + (c.interleaved ? " interleaved" : "");
}

/// Element offsets of an operand: (row, col) of problem b at
/// b * stride + row * ld + col, or transposed.
struct Layout {
  int64_t ld, stride, size;
};

/// A rows x cols matrix per problem (cols x rows when transposed).
Layout layoutOf(const AttnCase &c, int64_t rows, int64_t cols, bool trans) {
  const int64_t r = trans ? cols : rows, w = trans ? rows : cols;
  if (c.interleaved) // problem b's matrix is columns [b w, (b + 1) w)
    return {c.batch * w, w, r * c.batch * w};
  return {w, r * w, c.batch * r * w};
}

float at(const std::vector<float> &x, const Layout &l, bool trans, int64_t b,
         int64_t i, int64_t j) {
  return trans ? x[b * l.stride + j * l.ld + i]
               : x[b * l.stride + i * l.ld + j];
}

void checkAttention(const Variant &v, const AttnCase &c,
                    const tcc_host_api_t *host = nullptr) {
  SCOPED_TRACE(describe(c));
  const bool tq = c.flags & TCC_UK_ATTN_TRANS_Q;
  const bool tk = c.flags & TCC_UK_ATTN_TRANS_K;
  const bool tv = c.flags & TCC_UK_ATTN_TRANS_V;
  // Q is sq x d, K^T d x sk (K sk x d when tk), V sk x dv, out sq x dv.
  const Layout lq = layoutOf(c, c.sq, c.d, tq), lk = layoutOf(c, c.d, c.sk, tk);
  const Layout lv = layoutOf(c, c.sk, c.dv, tv),
               lo = layoutOf(c, c.sq, c.dv, false);
  const std::vector<float> q = randomVector(lq.size, 1, -2.0f, 2.0f);
  const std::vector<float> k = randomVector(lk.size, 2, -2.0f, 2.0f);
  const std::vector<float> vv = randomVector(lv.size, 3);
  const int64_t maskRows = c.keyMask ? 1 : c.sq;
  const int64_t maskCount = (c.maskPerHead ? c.batch : 1) * maskRows * c.sk;
  std::vector<float> addMask = randomVector(maskCount, 4, -3.0f, 3.0f);
  std::vector<uint8_t> selMask(maskCount);
  for (int64_t t = 0; t < maskCount; ++t) // causal-like, never a whole row
    selMask[t] = (t % c.sk) > (t / c.sk) % maskRows + 1 ? 1 : 0;
  const float fill = -std::numeric_limits<float>::infinity();

  tcc_uk_attention_params_t p = {};
  p.batch = c.batch, p.sq = c.sq, p.sk = c.sk, p.d = c.d, p.dv = c.dv;
  p.ldq = lq.ld, p.stride_q = lq.stride;
  p.ldk = lk.ld, p.stride_k = lk.stride;
  p.ldv = lv.ld, p.stride_v = lv.stride;
  p.ldo = lo.ld, p.stride_o = lo.stride;
  p.ldm = c.keyMask ? 0 : c.sk;
  p.stride_m = c.maskPerHead ? maskRows * c.sk : 0;
  p.scale = c.scale, p.fill = fill;
  p.mask_kind = c.mask;
  p.flags = c.flags;
  Scratch scratch(v.attentionScratchBytes(v.isaFn(), &p));
  p.scratch = scratch.get();
  std::vector<float> out(lo.size + 1, 42.0f);
  const void *mask = c.mask == TCC_UK_MASK_ADD ? addMask.data()
                     : c.mask == TCC_UK_MASK_SELECT
                         ? (const void *)selMask.data()
                         : nullptr;
  ASSERT_EQ(0, v.attention(host, &p, q.data(), k.data(), vv.data(), mask,
                           out.data()));
  EXPECT_TRUE(scratch.guardIntact()) << "wrote past the scratch";
  EXPECT_EQ(out.back(), 42.0f) << "wrote past the output";

  std::vector<double> s(c.sk);
  int failures = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.sq; ++i) {
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < c.sk; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < c.d; ++e)
          dot += double(at(q, lq, tq, b, i, e)) * at(k, lk, tk, b, e, j);
        s[j] = c.scale * dot;
        const int64_t m = b * p.stride_m + i * p.ldm + j;
        if (c.mask == TCC_UK_MASK_ADD)
          s[j] += addMask[m];
        else if (c.mask == TCC_UK_MASK_SELECT && selMask[m])
          s[j] = fill;
        top = std::max(top, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < c.sk; ++j)
        sum += (s[j] = std::exp(s[j] - top));
      for (int64_t e = 0; e < c.dv; ++e) {
        double want = 0;
        for (int64_t j = 0; j < c.sk; ++j)
          want += s[j] / sum * at(vv, lv, tv, b, j, e);
        const float got = out[b * lo.stride + i * lo.ld + e];
        // |V| <= 1 and the weights sum to 1: fp32 products, an exp within a
        // few ulp and sums of sk terms stay well inside 1e-5.
        if (!(std::fabs(got - want) <= 1e-5) && failures++ < 5)
          ADD_FAILURE() << "out[" << b << "," << i << "," << e << "] = " << got
                        << ", want " << want;
      }
    }
}

using Attention = VariantTest;

// An encoder's heads as its projections lie (12 heads of 64 side by side in
// rows of 768; K as the projection gives it, transposed): sequences of 8 to
// 512, the last over several blocks of query rows; a vision transformer's
// 197, whose rows end off a vector.
TEST_P(Attention, TransformerHeads) {
  for (int64_t s : {8, 32, 197, 512}) {
    AttnCase c{12, s, s, 64, 64};
    c.interleaved = true;
    c.flags = TCC_UK_ATTN_TRANS_K;
    checkAttention(*v, c);
  }
}

// Odd sizes everywhere: one query row, keys short of a vector, d and dv
// unequal and off the tile, dense and interleaved, each operand transposed.
TEST_P(Attention, ShapesAndLayouts) {
  checkAttention(*v, AttnCase{1, 1, 1, 1, 1});
  checkAttention(*v, AttnCase{3, 5, 7, 9, 11});
  checkAttention(*v, AttnCase{2, 33, 17, 40, 24});
  for (uint32_t flags = 0; flags < 8; ++flags) {
    AttnCase c{3, 19, 45, 16, 20};
    c.flags = flags;
    c.interleaved = flags % 2 == 1;
    checkAttention(*v, c);
  }
}

// Masks: added (per head, broadcast over heads, one row of key padding for
// every query), and selected (a decoder's causal mask, fill -inf). A
// positive scale goes into the exponentials' argument with an added mask;
// a negative or zero one scales and masks the scores in place first.
TEST_P(Attention, Masks) {
  AttnCase c{4, 21, 37, 16, 16};
  c.mask = TCC_UK_MASK_ADD;
  checkAttention(*v, c);
  c.maskPerHead = true;
  checkAttention(*v, c);
  c.keyMask = true;
  checkAttention(*v, c);
  for (float scale : {-0.5f, 0.0f}) {
    c.scale = scale;
    checkAttention(*v, c);
  }
  AttnCase causal{12, 128, 128, 64, 64};
  causal.mask = TCC_UK_MASK_SELECT;
  causal.interleaved = true;
  causal.flags = TCC_UK_ATTN_TRANS_K;
  checkAttention(*v, causal);
}

// Heads side by side on 1 to 3 threads, and fewer heads than threads (a
// head's query rows split between them).
TEST_P(Attention, SplitsAcrossThreads) {
  for (int threads : {1, 2, 3}) {
    ThreadHost host(threads);
    AttnCase c{12, 64, 64, 32, 32};
    c.interleaved = true;
    checkAttention(*v, c, host.get());
    checkAttention(*v, AttnCase{1, 100, 50, 8, 8}, host.get());
    checkAttention(*v, AttnCase{1, 9, 9, 8, 8}, host.get());
  }
}

// Short sequences split across the threads too: an encoder's 12 heads at
// sequence 32 have scores of 48 KB, half of which held one slot's scratch
// and so one thread; a call's scratch may take up to 256 KB.
TEST_P(Attention, ShortSequencesUseEveryThread) {
  ThreadHost host(2);
  AttnCase c{12, 32, 32, 64, 64};
  c.interleaved = true;
  checkAttention(*v, c, host.get());
  ASSERT_EQ(host.calls, 1);
  EXPECT_EQ(host.counts.back(), 2) << "one task a thread";
  EXPECT_EQ(host.lastParts, 2u);
}

// A row whose every score is masked gives NaN (softmax's 0/0), the others
// are untouched by it.
TEST_P(Attention, WholeRowMaskedIsNaN) {
  tcc_uk_attention_params_t p = {};
  p.batch = 1, p.sq = 2, p.sk = 3, p.d = 1, p.dv = 1;
  p.ldq = 1, p.ldk = 3, p.ldv = 1, p.ldo = 1, p.ldm = 3;
  p.scale = 1.0f, p.fill = -std::numeric_limits<float>::infinity();
  p.mask_kind = TCC_UK_MASK_SELECT;
  Scratch scratch(v->attentionScratchBytes(v->isaFn(), &p));
  p.scratch = scratch.get();
  const float q[2] = {1, 1}, k[3] = {0, 0, 0}, vals[3] = {1, 2, 3};
  const uint8_t mask[6] = {1, 1, 1, 0, 1, 0};
  float out[2] = {0, 0};
  ASSERT_EQ(0, v->attention(nullptr, &p, q, k, vals, mask, out));
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_FLOAT_EQ(out[1], 2.0f); // the mean of 1 and 3
}

// A masked score (-inf) and one far below the row's largest weigh exactly
// nothing: not vexp's floor, e^-87, whose quotients by the sum are
// denormals, which made the product with V of a decoder's causal mask 30
// times slower. Values of 1e30 in their rows of V show any weight at all.
TEST_P(Attention, FarScoresWeighNothing) {
  tcc_uk_attention_params_t p = {};
  p.batch = 1, p.sq = 1, p.sk = 3, p.d = 1, p.dv = 1;
  p.ldq = 1, p.ldk = 3, p.ldv = 1, p.ldo = 1, p.ldm = 3;
  p.scale = 1.0f, p.fill = -std::numeric_limits<float>::infinity();
  p.mask_kind = TCC_UK_MASK_SELECT;
  Scratch scratch(v->attentionScratchBytes(v->isaFn(), &p));
  p.scratch = scratch.get();
  // Scores 0, -inf (masked) and -80.
  const float q[1] = {1}, k[3] = {0, 0, -80}, vals[3] = {0, 1e30f, 1e30f};
  const uint8_t mask[3] = {0, 1, 0};
  float out[1] = {42.0f};
  ASSERT_EQ(0, v->attention(nullptr, &p, q, k, vals, mask, out));
  EXPECT_EQ(out[0], 0.0f);
}

// Keys that a mask leaves out of every row of a block of query rows, after
// the last one some row keeps, are not computed at all (their scores would
// be -inf and their weights exactly 0): the causal mask of a decoder, a
// key padding mask. Two heads of 40 queries over 150 keys, the first 110
// kept for every row, the mask added (-inf) or selecting (fill -inf): a
// NaN in the last key's row of V, which computing it would spread (0 times
// NaN), does not reach the output, and the output is the attention over
// the 110 keys within 1e-5. Masked with -3e38 instead (exactly 0 weights
// too, but computed), the same V without the NaN gives the same bits as
// with -inf: skipping changes no sum.
TEST_P(Attention, KeysMaskedOutOfABlockAreSkipped) {
  const int64_t heads = 2, sq = 40, sk = 150, d = 16, dv = 64, kept = 110;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> q = randomVector(heads * sq * d, 1, -2.0f, 2.0f);
  const std::vector<float> kt = randomVector(heads * d * sk, 2, -2.0f, 2.0f);
  std::vector<float> vals = randomVector(heads * sk * dv, 3);
  auto run = [&](int32_t kind, float masked, const std::vector<float> &values,
                 int threads) {
    tcc_uk_attention_params_t p = {};
    p.batch = heads, p.sq = sq, p.sk = sk, p.d = d, p.dv = dv;
    p.ldq = d, p.stride_q = sq * d;
    p.ldk = sk, p.stride_k = d * sk; // K^T, d x sk a head
    p.ldv = dv, p.stride_v = sk * dv;
    p.ldo = dv, p.stride_o = sq * dv;
    p.ldm = 0, p.stride_m = 0; // one mask row for every row and head
    p.scale = 0.25f, p.fill = -inf;
    p.mask_kind = kind;
    std::vector<float> add(sk);
    std::vector<uint8_t> select(sk);
    for (int64_t j = 0; j < sk; ++j) {
      add[j] = j < kept ? 0.0f : masked;
      select[j] = j >= kept;
    }
    Scratch scratch(v->attentionScratchBytes(v->isaFn(), &p));
    p.scratch = scratch.get();
    std::vector<float> out(heads * sq * dv);
    ThreadHost host(threads);
    EXPECT_EQ(0, v->attention(threads > 1 ? host.get() : nullptr, &p, q.data(),
                              kt.data(), values.data(),
                              kind == TCC_UK_MASK_ADD
                                  ? static_cast<const void *>(add.data())
                                  : select.data(),
                              out.data()));
    return out;
  };
  const std::vector<float> finite = vals;
  for (int64_t b = 0; b < heads; ++b)
    for (int64_t e = 0; e < dv; ++e)
      vals[(b * sk + sk - 1) * dv + e] = std::nanf("");
  for (int32_t kind : {TCC_UK_MASK_ADD, TCC_UK_MASK_SELECT})
    for (int threads : {1, 2}) {
      SCOPED_TRACE("mask kind " + std::to_string(kind) + ", " +
                   std::to_string(threads) + " threads");
      const std::vector<float> out = run(kind, -inf, vals, threads);
      int failures = 0;
      for (int64_t b = 0; b < heads; ++b)
        for (int64_t i = 0; i < sq; ++i) {
          std::vector<double> w(kept);
          double top = -inf, sum = 0;
          for (int64_t j = 0; j < kept; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < d; ++e)
              dot += double(q[(b * sq + i) * d + e]) * kt[(b * d + e) * sk + j];
            top = std::max(top, w[j] = 0.25 * dot);
          }
          for (double &x : w)
            sum += (x = std::exp(x - top));
          for (int64_t e = 0; e < dv; ++e) {
            double want = 0;
            for (int64_t j = 0; j < kept; ++j)
              want += w[j] / sum * finite[(b * sk + j) * dv + e];
            const float got = out[(b * sq + i) * dv + e];
            if (!(std::fabs(got - want) <= 1e-5) && failures++ < 5)
              ADD_FAILURE() << "out[" << b << "," << i << "," << e
                            << "] = " << got << ", want " << want;
          }
        }
    }
  expectIdentical(run(TCC_UK_MASK_ADD, -3e38f, finite, 2).data(),
                  run(TCC_UK_MASK_ADD, -inf, finite, 2).data(), heads * sq * dv,
                  "masked with -3e38 and with -inf");
}

TEST_P(Attention, RejectsBadParams) {
  tcc_uk_attention_params_t p = {};
  p.batch = 1, p.sq = 2, p.sk = 0, p.d = 1, p.dv = 1;
  float x[4] = {}, out = 42.0f;
  EXPECT_EQ(-1, v->attention(nullptr, &p, x, x, x, nullptr, &out));
  EXPECT_EQ(-1, v->attention(nullptr, nullptr, x, x, x, nullptr, &out));
  p.sk = 2;
  p.mask_kind = TCC_UK_MASK_ADD; // and no mask
  EXPECT_EQ(-1, v->attention(nullptr, &p, x, x, x, nullptr, &out));
  p.mask_kind = TCC_UK_MASK_NONE; // and no scratch
  EXPECT_EQ(-1, v->attention(nullptr, &p, x, x, x, nullptr, &out));
  EXPECT_EQ(out, 42.0f);
  EXPECT_EQ(0, v->attentionScratchBytes(v->isaFn(), nullptr));
}

INSTANTIATE_TEST_SUITE_P(Variants, Attention,
                         ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
