// tensor_test.cc - tensors and dtypes.
#include "test_util.h"

#include <cstdint>
#include <vector>

using tcc::testing::result;

namespace {

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(tcc_dtype_size(TCC_DTYPE_F32), 4u);
  EXPECT_EQ(tcc_dtype_size(TCC_DTYPE_BOOL), 1u);
  EXPECT_EQ(tcc_dtype_size(TCC_DTYPE_BF16), 2u);
  EXPECT_EQ(tcc_dtype_size(TCC_DTYPE_U64), 8u);
  EXPECT_EQ(tcc_dtype_size(8), 0u); // ONNX STRING
  EXPECT_STREQ(tcc_dtype_name(TCC_DTYPE_I64), "i64");
  EXPECT_STREQ(tcc_dtype_name(TCC_DTYPE_F16), "f16");
  EXPECT_STREQ(tcc_dtype_name(99), "invalid");
}

TEST(Tensor, CreateIsZeroedAndAligned) {
  tcc::Tensor t = tcc::Tensor::create(TCC_DTYPE_I32, {3, 5});
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(t.elementCount(), 15);
  EXPECT_EQ(t.byteSize(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(t.data<int32_t>()[i], 0);
  EXPECT_EQ(t.name(), "");
}

TEST(Tensor, ScalarAndEmpty) {
  tcc::Tensor scalar = tcc::Tensor::create(TCC_DTYPE_F64, {});
  EXPECT_EQ(scalar.elementCount(), 1);
  EXPECT_EQ(scalar.byteSize(), 8u);
  tcc::Tensor empty = tcc::Tensor::create(TCC_DTYPE_F32, {4, 0, 1LL << 40});
  EXPECT_EQ(empty.elementCount(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);
  EXPECT_NE(empty.data(), nullptr);
}

TEST(Tensor, WrapUsesCallerMemory) {
  std::vector<uint8_t> buffer(6 * 2);
  tcc::Tensor t =
      tcc::Tensor::wrap(TCC_DTYPE_F16, {6}, buffer.data(), buffer.size());
  EXPECT_EQ(t.data(), buffer.data());
  EXPECT_EQ(t.byteSize(), 12u);
}

TEST(Tensor, WrapRejectsWrongSize) {
  float buffer[6];
  int64_t shape[] = {2, 3};
  tcc_tensor_t *t = nullptr;
  auto r = result(tcc_tensor_wrap(TCC_DTYPE_F32, 2, shape, buffer, 20, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "tensor: f32[2x3] needs 24 bytes, the wrapped buffer "
                       "has 20");
  EXPECT_EQ(t, nullptr);
  r = result(tcc_tensor_wrap(TCC_DTYPE_F32, 2, shape, nullptr, 24, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
}

TEST(Tensor, RejectsBadTypes) {
  tcc_tensor_t *t = nullptr;
  int64_t negative[] = {2, -1};
  auto r = result(tcc_tensor_create(TCC_DTYPE_F32, 2, negative, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "tensor: dimension 1 is negative in f32[2x-1]");

  int64_t huge[] = {1LL << 31, 1LL << 31, 4};
  r = result(tcc_tensor_create(TCC_DTYPE_F32, 3, huge, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("too large"), std::string::npos) << r.message;

  // The element count wraps to 0 modulo 2^64; it must still be refused.
  int64_t wraps[] = {1LL << 32, 1LL << 32};
  r = result(tcc_tensor_create(TCC_DTYPE_U8, 2, wraps, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);

  // Empty, yet its other dimensions multiply past int64_t (as numpy, refused;
  // found by tcc-fuzz-tensor).
  int64_t emptyHuge[] = {1LL << 40, 0, 1LL << 40};
  r = result(tcc_tensor_create(TCC_DTYPE_F32, 3, emptyHuge, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("too large"), std::string::npos) << r.message;
  int64_t emptyFine[] = {1LL << 20, 0, 1LL << 20};
  ASSERT_EQ(tcc_tensor_create(TCC_DTYPE_F32, 3, emptyFine, &t), nullptr);
  EXPECT_EQ(tcc_tensor_element_count(t), 0);
  tcc_tensor_free(t);
  t = nullptr;

  int64_t shape[] = {2};
  EXPECT_EQ(result(tcc_tensor_create(8, 1, shape, &t)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result(tcc_tensor_create(TCC_DTYPE_F32, -1, shape, &t)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result(tcc_tensor_create(TCC_DTYPE_F32, 1, nullptr, &t)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result(tcc_tensor_create(TCC_DTYPE_F32, 1, shape, nullptr)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
}

TEST(Tensor, HugeAllocationIsResourceExhausted) {
  tcc_tensor_t *t = nullptr;
  int64_t shape[] = {1LL << 60};
  EXPECT_EQ(result(tcc_tensor_create(TCC_DTYPE_U8, 1, shape, &t)).code,
            TCC_STATUS_RESOURCE_EXHAUSTED);
}

TEST(Tensor, Name) {
  tcc::Tensor t = tcc::Tensor::create(TCC_DTYPE_BOOL, {1});
  t.setName("mask");
  EXPECT_EQ(t.name(), "mask");
  EXPECT_TCC_OK(tcc_tensor_set_name(t.get(), nullptr));
  EXPECT_EQ(t.name(), "");
}

} // namespace
