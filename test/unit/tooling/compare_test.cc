// compare_test.cc - element access (f16 and bf16 decoding, exact integers,
// printing) and the tolerance check of tcc-run --check.
#include "tooling/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace tcc::tooling;

namespace {

/// A 1-D tensor of `dtype` holding `values`, each converted to T.
template <typename T>
tcc::Tensor tensorOf(int32_t dtype, std::initializer_list<T> values) {
  tcc::Tensor t =
      tcc::Tensor::create(dtype, {static_cast<int64_t>(values.size())});
  std::memcpy(t.data(), values.begin(), values.size() * sizeof(T));
  return t;
}

tcc::Tensor f32(std::initializer_list<float> values) {
  return tensorOf<float>(TCC_DTYPE_F32, values);
}

const Tolerance kDefault{1e-3, 1e-7};

TEST(CompareTest, Describe) {
  EXPECT_EQ(describe(TCC_DTYPE_F32, {2, 3}), "f32[2x3]");
  EXPECT_EQ(describe(TCC_DTYPE_I64, {}), "i64[]");
  EXPECT_EQ(describe(TCC_DTYPE_BF16, {1, 0, 4}), "bf16[1x0x4]");
}

TEST(CompareTest, IsFloat) {
  for (int32_t d :
       {TCC_DTYPE_F16, TCC_DTYPE_BF16, TCC_DTYPE_F32, TCC_DTYPE_F64})
    EXPECT_TRUE(isFloat(d)) << d;
  for (int32_t d : {TCC_DTYPE_U8, TCC_DTYPE_I8, TCC_DTYPE_I32, TCC_DTYPE_I64,
                    TCC_DTYPE_U64, TCC_DTYPE_BOOL})
    EXPECT_FALSE(isFloat(d)) << d;
}

TEST(CompareTest, HalfNormals) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);              // the largest half
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // the smallest normal
  EXPECT_EQ(halfToFloat(0x3c01), 1.0009765625f);         // 1 + 2^-10
}

TEST(CompareTest, HalfZerosAndSubnormals) {
  EXPECT_EQ(halfToFloat(0x0000), 0.0f);
  EXPECT_FALSE(std::signbit(halfToFloat(0x0000)));
  EXPECT_EQ(halfToFloat(0x8000), 0.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24)); // the smallest
  EXPECT_EQ(halfToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24)); // the largest
  EXPECT_EQ(halfToFloat(0x0200), std::ldexp(1.0f, -15));
}

TEST(CompareTest, HalfInfinitiesAndNan) {
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01))); // a signalling NaN
  EXPECT_TRUE(std::isnan(halfToFloat(0xfe00)));
}

TEST(CompareTest, Bfloat16) {
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0xc000), -2.0f);
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(bfloat16ToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(bfloat16ToFloat(0x8000)));
  EXPECT_EQ(bfloat16ToFloat(0x0001), std::ldexp(1.0f, -133)); // subnormal
  EXPECT_EQ(bfloat16ToFloat(0x0080), std::ldexp(1.0f, -126)); // smallest normal
  EXPECT_EQ(bfloat16ToFloat(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bfloat16ToFloat(0xff80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7fc0)));
}

TEST(CompareTest, FloatAtReadsEveryFloatDtype) {
  tcc::Tensor half =
      tensorOf<uint16_t>(TCC_DTYPE_F16, {0x3c00, 0x0001, 0xfc00});
  EXPECT_EQ(floatAt(half, 0), 1.0);
  EXPECT_EQ(floatAt(half, 1), std::ldexp(1.0, -24));
  EXPECT_EQ(floatAt(half, 2), -INFINITY);
  tcc::Tensor bf = tensorOf<uint16_t>(TCC_DTYPE_BF16, {0x4049, 0xc000});
  EXPECT_EQ(floatAt(bf, 0), 3.140625);
  EXPECT_EQ(floatAt(bf, 1), -2.0);
  EXPECT_EQ(floatAt(f32({0.1f}), 0), static_cast<double>(0.1f));
  EXPECT_EQ(floatAt(tensorOf<double>(TCC_DTYPE_F64, {0.1}), 0), 0.1);
}

TEST(CompareTest, IntAtIsExactForEveryIntegerDtype) {
  tcc::Tensor u64 =
      tensorOf<uint64_t>(TCC_DTYPE_U64, {std::numeric_limits<uint64_t>::max()});
  EXPECT_TRUE(intAt(u64, 0) == static_cast<WideInt>(UINT64_MAX));
  tcc::Tensor i64 =
      tensorOf<int64_t>(TCC_DTYPE_I64, {std::numeric_limits<int64_t>::min()});
  EXPECT_TRUE(intAt(i64, 0) == static_cast<WideInt>(INT64_MIN));
  EXPECT_TRUE(intAt(tensorOf<int8_t>(TCC_DTYPE_I8, {-128}), 0) == -128);
  EXPECT_TRUE(intAt(tensorOf<uint8_t>(TCC_DTYPE_U8, {255}), 0) == 255);
  EXPECT_TRUE(intAt(tensorOf<int16_t>(TCC_DTYPE_I16, {-32768}), 0) == -32768);
  EXPECT_TRUE(intAt(tensorOf<uint16_t>(TCC_DTYPE_U16, {65535}), 0) == 65535);
  EXPECT_TRUE(intAt(tensorOf<int32_t>(TCC_DTYPE_I32, {INT32_MIN}), 0) ==
              INT32_MIN);
  EXPECT_TRUE(intAt(tensorOf<uint32_t>(TCC_DTYPE_U32, {UINT32_MAX}), 0) ==
              UINT32_MAX);
  EXPECT_TRUE(intAt(tensorOf<uint8_t>(TCC_DTYPE_BOOL, {1}), 0) == 1);
}

TEST(CompareTest, ValueAt) {
  EXPECT_EQ(valueAt(f32({0.1f}), 0), "0.100000001"); // 9 digits for f32
  EXPECT_EQ(valueAt(f32({5.5f}), 0), "5.5");
  EXPECT_EQ(valueAt(tensorOf<double>(TCC_DTYPE_F64, {0.1}), 0),
            "0.10000000000000001"); // 17 for f64
  EXPECT_EQ(valueAt(f32({NAN}), 0), "nan");
  EXPECT_EQ(valueAt(f32({-INFINITY}), 0), "-inf");
  EXPECT_EQ(valueAt(tensorOf<uint16_t>(TCC_DTYPE_F16, {0x3555}), 0),
            "0.333251953");
  EXPECT_EQ(valueAt(tensorOf<uint64_t>(TCC_DTYPE_U64,
                                       {std::numeric_limits<uint64_t>::max()}),
                    0),
            "18446744073709551615");
  EXPECT_EQ(valueAt(tensorOf<int64_t>(TCC_DTYPE_I64,
                                      {std::numeric_limits<int64_t>::min()}),
                    0),
            "-9223372036854775808");
}

TEST(CompareTest, Position) {
  EXPECT_EQ(position({2, 3}, 5), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(position({2, 3}, 4), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(position({2, 3, 4}, 23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(position({7}, 6), (std::vector<int64_t>{6}));
  EXPECT_TRUE(position({}, 0).empty());
}

TEST(CompareTest, EqualTensorsPass) {
  CheckResult r = compare(f32({1, 2, 3}), f32({1, 2, 3}), "e.pb", kDefault);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.elements, 3);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.first, -1);
  EXPECT_EQ(r.maxAbs, 0);
  EXPECT_EQ(r.maxRel, 0);
  EXPECT_TRUE(r.reason.empty());
}

TEST(CompareTest, RelativeTolerance) {
  // |a - b| <= atol + rtol * |b|: the bound is 0.1 at 100.
  EXPECT_TRUE(compare(f32({100.09f}), f32({100}), "e", {1e-3, 0}).pass);
  EXPECT_FALSE(compare(f32({100.2f}), f32({100}), "e", {1e-3, 0}).pass);
  // The bound scales with the expected value, not the actual one: 30 at 50,
  // 60 at 100.
  EXPECT_FALSE(compare(f32({100}), f32({50}), "e", {0.6, 0}).pass);
  EXPECT_TRUE(compare(f32({50}), f32({100}), "e", {0.6, 0}).pass);
}

TEST(CompareTest, BoundaryIsInclusive) {
  // Exact in binary: |5 - 4| = 1 = 0.5 + 0.125 * 4.
  EXPECT_TRUE(compare(f32({5}), f32({4}), "e", {0.125, 0.5}).pass);
  EXPECT_FALSE(compare(f32({5}), f32({4}), "e", {0.125, 0.49}).pass);
  EXPECT_TRUE(compare(f32({5}), f32({4}), "e", {0.25, 0}).pass);
}

TEST(CompareTest, AbsoluteToleranceAndZeroExpected) {
  CheckResult r = compare(f32({1e-8f}), f32({0}), "e", {1e-3, 1e-7});
  EXPECT_TRUE(r.pass);
  EXPECT_FLOAT_EQ(r.maxAbs, 1e-8f);
  // Relative to an expected 0, as numpy.testing.assert_allclose has it.
  EXPECT_EQ(r.maxRel, INFINITY);
  EXPECT_FALSE(compare(f32({1e-6f}), f32({0}), "e", {1e-3, 1e-7}).pass);
}

TEST(CompareTest, FirstMismatchAndCounts) {
  CheckResult r = compare(f32({11, 22, 33, 44, 55, 66.05f}),
                          f32({11, 22, 33, 44, 50, 66}), "e", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.elements, 6);
  EXPECT_EQ(r.mismatches, 1); // 66.05 is within rtol
  EXPECT_EQ(r.first, 4);
  EXPECT_EQ(r.actual, "55");
  EXPECT_EQ(r.expected, "50");
  EXPECT_DOUBLE_EQ(r.maxAbs, 5);
  EXPECT_DOUBLE_EQ(r.maxRel, 0.1);

  r = compare(f32({0, 9, 9}), f32({1, 1, 1}), "e", kDefault);
  EXPECT_EQ(r.mismatches, 3);
  EXPECT_EQ(r.first, 0); // the first, not the largest
  EXPECT_EQ(r.actual, "0");
  EXPECT_DOUBLE_EQ(r.maxAbs, 8);
}

TEST(CompareTest, NanMatchesOnlyNan) {
  EXPECT_TRUE(compare(f32({NAN}), f32({NAN}), "e", kDefault).pass);
  EXPECT_TRUE(compare(f32({-NAN}), f32({NAN}), "e", kDefault).pass);
  // No tolerance makes a number match NaN, or NaN a number.
  const Tolerance huge{1e30, 1e30};
  CheckResult r = compare(f32({NAN}), f32({1}), "e", huge);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.maxAbs, INFINITY); // a non-finite mismatch is an infinite error
  EXPECT_EQ(r.maxRel, INFINITY);
  EXPECT_EQ(r.actual, "nan");
  EXPECT_EQ(r.expected, "1");
  EXPECT_FALSE(compare(f32({1}), f32({NAN}), "e", huge).pass);
  EXPECT_FALSE(compare(f32({NAN}), f32({INFINITY}), "e", huge).pass);
}

TEST(CompareTest, InfinityMatchesOnlyTheSameInfinity) {
  const Tolerance huge{1e30, 1e30};
  EXPECT_TRUE(compare(f32({INFINITY}), f32({INFINITY}), "e", kDefault).pass);
  EXPECT_TRUE(compare(f32({-INFINITY}), f32({-INFINITY}), "e", kDefault).pass);
  EXPECT_FALSE(compare(f32({INFINITY}), f32({-INFINITY}), "e", huge).pass);
  EXPECT_FALSE(compare(f32({INFINITY}), f32({3e38f}), "e", huge).pass);
  EXPECT_FALSE(compare(f32({3e38f}), f32({INFINITY}), "e", huge).pass);
}

TEST(CompareTest, HalfAndBfloat16Outputs) {
  // 1 + 2^-10 against 1: within rtol 1e-3 of 1.0009765625.
  EXPECT_TRUE(compare(tensorOf<uint16_t>(TCC_DTYPE_F16, {0x3c00}),
                      tensorOf<uint16_t>(TCC_DTYPE_F16, {0x3c01}), "e",
                      kDefault)
                  .pass);
  CheckResult r =
      compare(tensorOf<uint16_t>(TCC_DTYPE_BF16, {0x3f80}),
              tensorOf<uint16_t>(TCC_DTYPE_BF16, {0x4000}), "e", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.actual, "1");
  EXPECT_EQ(r.expected, "2");
  EXPECT_TRUE(compare(tensorOf<uint16_t>(TCC_DTYPE_F16, {0x7e00}),
                      tensorOf<uint16_t>(TCC_DTYPE_F16, {0x7e01}), "e",
                      kDefault)
                  .pass); // NaNs of any payload
}

TEST(CompareTest, IntegersMustBeExactlyEqual) {
  // 2^53 and 2^53 + 1 are one double; as integers they differ, and no
  // tolerance applies.
  const int64_t big = int64_t{1} << 53;
  CheckResult r =
      compare(tensorOf<int64_t>(TCC_DTYPE_I64, {7, big + 1}),
              tensorOf<int64_t>(TCC_DTYPE_I64, {7, big}), "e", {1e30, 1e30});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first, 1);
  EXPECT_EQ(r.actual, "9007199254740993");
  EXPECT_EQ(r.expected, "9007199254740992");
  EXPECT_EQ(r.maxAbs, 1);

  const uint64_t max = std::numeric_limits<uint64_t>::max();
  r = compare(tensorOf<uint64_t>(TCC_DTYPE_U64, {max - 1}),
              tensorOf<uint64_t>(TCC_DTYPE_U64, {max}), "e", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.actual, "18446744073709551614");
  EXPECT_EQ(r.expected, "18446744073709551615");
  EXPECT_EQ(r.maxAbs, 1);

  EXPECT_TRUE(compare(tensorOf<int32_t>(TCC_DTYPE_I32, {-5, 0, 5}),
                      tensorOf<int32_t>(TCC_DTYPE_I32, {-5, 0, 5}), "e",
                      kDefault)
                  .pass);
  r = compare(tensorOf<uint8_t>(TCC_DTYPE_BOOL, {1, 0}),
              tensorOf<uint8_t>(TCC_DTYPE_BOOL, {1, 1}), "e", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.first, 1);
  EXPECT_EQ(r.maxRel, 1);
}

TEST(CompareTest, DtypeMismatchComparesNothing) {
  tcc::Tensor expected = tcc::Tensor::create(TCC_DTYPE_F64, {3});
  CheckResult r = compare(f32({1, 2, 3}), expected, "output_0.pb", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.reason, "dtype mismatch: the output is f32[3], output_0.pb "
                      "holds f64[3]");
  EXPECT_EQ(r.elements, 0);
  EXPECT_EQ(r.first, -1);
}

TEST(CompareTest, ShapeMismatchComparesNothing) {
  tcc::Tensor actual = tcc::Tensor::create(TCC_DTYPE_F32, {2, 3});
  tcc::Tensor expected = tcc::Tensor::create(TCC_DTYPE_F32, {3, 2});
  CheckResult r = compare(actual, expected, "output_0.npy", kDefault);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.reason, "shape mismatch: the output is f32[2x3], output_0.npy "
                      "holds f32[3x2]");
  EXPECT_EQ(r.elements, 0);
  // Both differ: the dtype is named.
  r = compare(actual, tcc::Tensor::create(TCC_DTYPE_I32, {6}), "x", kDefault);
  EXPECT_EQ(r.reason.rfind("dtype mismatch: ", 0), 0u) << r.reason;
}

TEST(CompareTest, EmptyTensorsPass) {
  tcc::Tensor a = tcc::Tensor::create(TCC_DTYPE_F32, {0, 4});
  CheckResult r =
      compare(a, tcc::Tensor::create(TCC_DTYPE_F32, {0, 4}), "e", kDefault);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.elements, 0);
}

} // namespace
