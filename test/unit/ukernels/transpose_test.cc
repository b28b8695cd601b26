// transpose_test.cc - tcc_uk_transpose32 in every variant the CPU can run:
// every element moved, bit for bit, to out[b, c, r] from in[b, r, c].
#include "uk_test_util.h"

#include <cstring>

namespace {

using namespace uktest;

using Transpose = VariantTest;

/// Transposes `batch` rows x cols problems of distinct bit patterns
/// (NaNs among them: the bits move, nothing is computed) and checks every
/// output element, and that nothing past the output was written.
void checkTranspose(const Variant &v, int64_t batch, int64_t rows, int64_t cols,
                    const tcc_host_api_t *host = nullptr) {
  SCOPED_TRACE(std::to_string(batch) + " x " + std::to_string(rows) + " x " +
               std::to_string(cols));
  const int64_t n = batch * rows * cols;
  std::vector<uint32_t> in(n), out(n + 16, 0xDEADBEEFu);
  for (int64_t i = 0; i < n; ++i)
    in[i] = i % 7 == 3 ? 0x7FC00000u + static_cast<uint32_t>(i)
                       : static_cast<uint32_t>(i * 2654435761u);
  ASSERT_EQ(0, v.transpose32(host, batch, rows, cols, in.data(), out.data()));
  int failures = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const uint32_t want = in[(b * rows + r) * cols + c];
        const uint32_t got = out[(b * cols + c) * rows + r];
        if (got != want && failures++ < 5)
          ADD_FAILURE() << "out[" << b << "," << c << "," << r << "]";
      }
  for (int64_t i = n; i < n + 16; ++i)
    EXPECT_EQ(out[i], 0xDEADBEEFu) << "written past the output";
}

// Blocks whole and ragged on either side, one row or one column, and the
// shapes of NHWC <-> NCHW at ConvNeXt's first stage (3136 x 96 both ways).
TEST_P(Transpose, Shapes) {
  for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{1, 1},
                                                              {1, 37},
                                                              {37, 1},
                                                              {5, 7},
                                                              {16, 16},
                                                              {17, 33},
                                                              {33, 17},
                                                              {64, 48},
                                                              {3136, 96},
                                                              {96, 3136}})
    checkTranspose(*v, 1, r, c);
  checkTranspose(*v, 3, 19, 21);
}

// Stripes of columns on 1 to 3 threads move the same bits.
TEST_P(Transpose, SplitsAcrossThreads) {
  for (int threads : {1, 2, 3}) {
    ThreadHost host(threads);
    checkTranspose(*v, 2, 200, 130, host.get());
    if (threads > 1)
      EXPECT_GT(host.calls, 0) << "not split";
  }
}

// Empty problems write nothing; negative sizes and missing buffers are
// refused.
TEST_P(Transpose, EmptyAndInvalid) {
  uint32_t x = 1, y = 2;
  EXPECT_EQ(0, v->transpose32(nullptr, 0, 5, 5, nullptr, nullptr));
  EXPECT_EQ(0, v->transpose32(nullptr, 1, 0, 5, &x, &y));
  EXPECT_EQ(y, 2u);
  EXPECT_EQ(-1, v->transpose32(nullptr, 1, -1, 5, &x, &y));
  EXPECT_EQ(-1, v->transpose32(nullptr, 1, 1, 1, nullptr, &y));
  EXPECT_EQ(y, 2u);
}

INSTANTIATE_TEST_SUITE_P(Variants, Transpose,
                         ::testing::ValuesIn(variantNames()),
                         [](const auto &info) { return info.param; });

} // namespace
