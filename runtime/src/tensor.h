// tensor.h - the tensor object and the shape arithmetic the runtime shares.
#ifndef TCC_RUNTIME_SRC_TENSOR_H
#define TCC_RUNTIME_SRC_TENSOR_H

#include "tcc/runtime.h"

#include <algorithm>
#include <string>
#include <vector>

struct tcc_tensor_t {
  int32_t dtype;
  std::vector<int64_t> shape;
  void *data;
  size_t byteSize;
  int64_t elementCount;
  // Set (and retained) when the data came from this allocator and is freed
  // with the tensor; NULL for wrapped caller memory.
  tcc_allocator_t *allocator;
  std::string name;
  // The bytes of its buffer: byteSize, unless a run of a model with a
  // computed size made the tensor smaller within it (its outputs).
  size_t capacity = 0;
  size_t bufferBytes() const { return std::max(byteSize, capacity); }
};

namespace tcc {

/// Buffers the runtime allocates, and those it hands an artifact, are
/// aligned to this (the ABI's minimum).
constexpr size_t kAlignment = 64;

/// Checks that dtype[shape] is a valid tensor type whose element count and
/// byte size fit in int64_t and size_t, and returns them. Errors are
/// INVALID_ARGUMENT, their messages start with `what`.
tcc_status_t checkType(const std::string &what, int32_t dtype, int64_t rank,
                       const int64_t *shape, int64_t *outCount,
                       size_t *outBytes);

/// "f32[2x3]"; "f32[]" for a scalar.
std::string describeType(int32_t dtype, int64_t rank, const int64_t *shape);
inline std::string describeType(const tcc_tensor_t &t) {
  return describeType(t.dtype, static_cast<int64_t>(t.shape.size()),
                      t.shape.data());
}

/// `bytes` from `allocator` (on stream 0) aligned to `align`, a power of
/// two: `*outData` is the aligned memory, `*outBlock` what to deallocate.
/// Over-allocates only when the allocator's alignment is less than `align`.
tcc_status_t allocateAligned(tcc_allocator_t *allocator, size_t bytes,
                             size_t align, void **outBlock, void **outData);

} // namespace tcc

#endif // TCC_RUNTIME_SRC_TENSOR_H
