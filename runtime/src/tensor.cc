// tensor.cc - tensors, dtypes and shape checks.
#include "tensor.h"

#include "status.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

size_t tcc_dtype_size(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_U8:
  case TCC_DTYPE_I8:
  case TCC_DTYPE_BOOL:
    return 1;
  case TCC_DTYPE_U16:
  case TCC_DTYPE_I16:
  case TCC_DTYPE_F16:
  case TCC_DTYPE_BF16:
    return 2;
  case TCC_DTYPE_F32:
  case TCC_DTYPE_I32:
  case TCC_DTYPE_U32:
    return 4;
  case TCC_DTYPE_I64:
  case TCC_DTYPE_F64:
  case TCC_DTYPE_U64:
    return 8;
  }
  return 0;
}

const char *tcc_dtype_name(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "f32";
  case TCC_DTYPE_U8:
    return "u8";
  case TCC_DTYPE_I8:
    return "i8";
  case TCC_DTYPE_U16:
    return "u16";
  case TCC_DTYPE_I16:
    return "i16";
  case TCC_DTYPE_I32:
    return "i32";
  case TCC_DTYPE_I64:
    return "i64";
  case TCC_DTYPE_BOOL:
    return "bool";
  case TCC_DTYPE_F16:
    return "f16";
  case TCC_DTYPE_F64:
    return "f64";
  case TCC_DTYPE_U32:
    return "u32";
  case TCC_DTYPE_U64:
    return "u64";
  case TCC_DTYPE_BF16:
    return "bf16";
  }
  return "invalid";
}

std::string tcc::describeType(int32_t dtype, int64_t rank,
                              const int64_t *shape) {
  std::string s = tcc_dtype_name(dtype);
  s += '[';
  for (int64_t i = 0; i < rank; ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

tcc_status_t tcc::checkType(const std::string &what, int32_t dtype,
                            int64_t rank, const int64_t *shape,
                            int64_t *outCount, size_t *outBytes) {
  size_t elementSize = tcc_dtype_size(dtype);
  if (!elementSize)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: unknown dtype %d",
                      what.c_str(), dtype);
  if (rank < 0)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: negative rank %lld",
                      what.c_str(), static_cast<long long>(rank));
  if (rank > 0 && !shape)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: rank %lld with a NULL shape", what.c_str(),
                      static_cast<long long>(rank));
  bool empty = false;
  for (int64_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: dimension %lld is negative in %s", what.c_str(),
                        static_cast<long long>(i),
                        describeType(dtype, rank, shape).c_str());
    empty |= shape[i] == 0;
  }
  // Bytes, not just elements, must fit in both int64_t and size_t.
  const uint64_t limit = std::min<uint64_t>(std::numeric_limits<int64_t>::max(),
                                            std::numeric_limits<size_t>::max());
  uint64_t count = 1;
  for (int64_t i = 0; i < rank && !empty; ++i) {
    uint64_t dim = static_cast<uint64_t>(shape[i]);
    if (count > limit / elementSize / dim)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: %s is too large to address", what.c_str(),
                        describeType(dtype, rank, shape).c_str());
    count *= dim;
  }
  if (empty)
    count = 0;
  *outCount = static_cast<int64_t>(count);
  *outBytes = static_cast<size_t>(count * elementSize);
  return nullptr;
}

void *tcc::alignedAlloc(size_t bytes, size_t align) {
  // aligned_alloc wants a multiple of the alignment, and at least one.
  size_t rounded = bytes / align * align + align;
  if (rounded < bytes)
    return nullptr;
  return std::aligned_alloc(align, rounded);
}

static tcc_status_t makeTensor(int32_t dtype, int32_t rank,
                               const int64_t *shape, void *data,
                               size_t byteSize, bool owned,
                               tcc_tensor_t **outTensor) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!outTensor)
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tensor: out_tensor is NULL");
    int64_t count;
    size_t bytes;
    if (tcc_status_t s =
            tcc::checkType("tensor", dtype, rank, shape, &count, &bytes))
      return s;
    if (!owned && byteSize != bytes)
      return tcc::makeStatus(
          TCC_STATUS_INVALID_ARGUMENT,
          "tensor: %s needs %zu bytes, the wrapped buffer has %zu",
          tcc::describeType(dtype, rank, shape).c_str(), bytes, byteSize);
    if (!owned && !data && bytes)
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tensor: wrapping a NULL buffer of %zu bytes",
                             bytes);
    auto *t = new tcc_tensor_t{dtype, std::vector<int64_t>(shape, shape + rank),
                               data,  bytes,
                               count, owned,
                               {}};
    if (owned && !(t->data = tcc::alignedAlloc(bytes, tcc::kAlignment))) {
      delete t;
      return tcc::makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                             "tensor: cannot allocate %zu bytes for %s", bytes,
                             tcc::describeType(dtype, rank, shape).c_str());
    }
    if (owned)
      std::memset(t->data, 0, bytes);
    *outTensor = t;
    return nullptr;
  });
}

tcc_status_t tcc_tensor_create(int32_t dtype, int32_t rank,
                               const int64_t *shape,
                               tcc_tensor_t **out_tensor) {
  return makeTensor(dtype, rank, shape, nullptr, 0, true, out_tensor);
}

tcc_status_t tcc_tensor_wrap(int32_t dtype, int32_t rank, const int64_t *shape,
                             void *data, size_t byte_size,
                             tcc_tensor_t **out_tensor) {
  return makeTensor(dtype, rank, shape, data, byte_size, false, out_tensor);
}

void tcc_tensor_free(tcc_tensor_t *tensor) {
  if (!tensor)
    return;
  if (tensor->owned)
    std::free(tensor->data);
  delete tensor;
}

int32_t tcc_tensor_dtype(const tcc_tensor_t *tensor) { return tensor->dtype; }

int32_t tcc_tensor_rank(const tcc_tensor_t *tensor) {
  return static_cast<int32_t>(tensor->shape.size());
}

const int64_t *tcc_tensor_shape(const tcc_tensor_t *tensor) {
  return tensor->shape.data();
}

void *tcc_tensor_data(const tcc_tensor_t *tensor) { return tensor->data; }

size_t tcc_tensor_byte_size(const tcc_tensor_t *tensor) {
  return tensor->byteSize;
}

int64_t tcc_tensor_element_count(const tcc_tensor_t *tensor) {
  return tensor->elementCount;
}

const char *tcc_tensor_name(const tcc_tensor_t *tensor) {
  return tensor->name.c_str();
}

tcc_status_t tcc_tensor_set_name(tcc_tensor_t *tensor, const char *name) {
  return tcc::guard([&]() -> tcc_status_t {
    tensor->name = name ? name : "";
    return nullptr;
  });
}
