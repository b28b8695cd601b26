// tensor.cc - tensors, dtypes and shape checks.
#include "tensor.h"

#include "status.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

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
  // Bytes, not just elements, must fit in both int64_t and size_t. As in
  // numpy, this holds for the product of the non-zero dimensions even when
  // another is zero, so that no caller multiplying dimensions overflows.
  const uint64_t limit = std::min<uint64_t>(std::numeric_limits<int64_t>::max(),
                                            std::numeric_limits<size_t>::max());
  uint64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    uint64_t dim = static_cast<uint64_t>(shape[i]);
    if (dim == 0)
      continue;
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

tcc_status_t tcc::allocateAligned(tcc_allocator_t *allocator, size_t bytes,
                                  size_t align, void **outBlock,
                                  void **outData) {
  void *block;
  if (tcc_status_t s = tcc_allocator_allocate(allocator, bytes, 0, &block))
    return s;
  if (reinterpret_cast<uintptr_t>(block) % align) {
    tcc_status_free(tcc_allocator_deallocate(allocator, block));
    if (bytes > SIZE_MAX - align)
      return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                        "cannot allocate %zu bytes aligned to %zu", bytes,
                        align);
    if (tcc_status_t s =
            tcc_allocator_allocate(allocator, bytes + align - 1, 0, &block))
      return s;
  }
  *outBlock = block;
  *outData = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(block) + align - 1) & ~(align - 1));
  return nullptr;
}

// A tensor over `data` (wrapped, when allocator is NULL) or over new memory
// from `allocator`.
static tcc_status_t makeTensor(tcc_allocator_t *allocator, int32_t dtype,
                               int32_t rank, const int64_t *shape, void *data,
                               size_t byteSize, tcc_tensor_t **outTensor) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!outTensor)
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tensor: out_tensor is NULL");
    int64_t count;
    size_t bytes;
    if (tcc_status_t s =
            tcc::checkType("tensor", dtype, rank, shape, &count, &bytes))
      return s;
    if (!allocator && byteSize != bytes)
      return tcc::makeStatus(
          TCC_STATUS_INVALID_ARGUMENT,
          "tensor: %s needs %zu bytes, the wrapped buffer has %zu",
          tcc::describeType(dtype, rank, shape).c_str(), bytes, byteSize);
    if (!allocator && !data && bytes)
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tensor: wrapping a NULL buffer of %zu bytes",
                             bytes);
    if (allocator && !tcc_allocator_host_accessible(allocator))
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tensor: allocator '%s' is not host accessible; "
                             "tensors live in host memory",
                             tcc_allocator_name(allocator));
    auto t = std::make_unique<tcc_tensor_t>(
        tcc_tensor_t{dtype,
                     std::vector<int64_t>(shape, shape + rank),
                     data,
                     bytes,
                     count,
                     nullptr,
                     {}});
    if (allocator) {
      if (tcc_status_t s =
              tcc_allocator_allocate(allocator, bytes, 0, &t->data)) {
        std::string message = tcc_status_message(s);
        tcc_status_code_t code = tcc_status_code(s);
        tcc_status_free(s);
        return tcc::makeStatus(code, "tensor: cannot allocate %s: %s",
                               tcc::describeType(dtype, rank, shape).c_str(),
                               message.c_str());
      }
      tcc_allocator_retain(allocator);
      t->allocator = allocator;
      // The backend promises 64-byte alignment; a tensor relies on it.
      if (reinterpret_cast<uintptr_t>(t->data) % tcc::kAlignment) {
        tcc_tensor_free(t.release());
        return tcc::makeStatus(TCC_STATUS_INTERNAL,
                               "tensor: allocator '%s' returned memory that "
                               "is not %zu-byte aligned",
                               tcc_allocator_name(allocator), tcc::kAlignment);
      }
      std::memset(t->data, 0, bytes);
    }
    *outTensor = t.release();
    return nullptr;
  });
}

tcc_status_t tcc_tensor_create(int32_t dtype, int32_t rank,
                               const int64_t *shape,
                               tcc_tensor_t **out_tensor) {
  return makeTensor(tcc_allocator_default(), dtype, rank, shape, nullptr, 0,
                    out_tensor);
}

tcc_status_t tcc_tensor_create_in(tcc_allocator_t *allocator, int32_t dtype,
                                  int32_t rank, const int64_t *shape,
                                  tcc_tensor_t **out_tensor) {
  return makeTensor(allocator ? allocator : tcc_allocator_default(), dtype,
                    rank, shape, nullptr, 0, out_tensor);
}

tcc_status_t tcc_tensor_wrap(int32_t dtype, int32_t rank, const int64_t *shape,
                             void *data, size_t byte_size,
                             tcc_tensor_t **out_tensor) {
  return makeTensor(nullptr, dtype, rank, shape, data, byte_size, out_tensor);
}

void tcc_tensor_free(tcc_tensor_t *tensor) {
  if (!tensor)
    return;
  if (tensor->allocator) {
    tcc_status_free(tcc_allocator_deallocate(tensor->allocator, tensor->data));
    tcc_allocator_free(tensor->allocator);
  }
  delete tensor;
}

// Accessors tolerate NULL (see runtime.h).

int32_t tcc_tensor_dtype(const tcc_tensor_t *tensor) {
  return tensor ? tensor->dtype : TCC_DTYPE_INVALID;
}

int32_t tcc_tensor_rank(const tcc_tensor_t *tensor) {
  return tensor ? static_cast<int32_t>(tensor->shape.size()) : 0;
}

const int64_t *tcc_tensor_shape(const tcc_tensor_t *tensor) {
  return tensor ? tensor->shape.data() : nullptr;
}

void *tcc_tensor_data(const tcc_tensor_t *tensor) {
  return tensor ? tensor->data : nullptr;
}

size_t tcc_tensor_byte_size(const tcc_tensor_t *tensor) {
  return tensor ? tensor->byteSize : 0;
}

int64_t tcc_tensor_element_count(const tcc_tensor_t *tensor) {
  return tensor ? tensor->elementCount : 0;
}

const char *tcc_tensor_name(const tcc_tensor_t *tensor) {
  return tensor ? tensor->name.c_str() : "";
}

tcc_status_t tcc_tensor_set_name(tcc_tensor_t *tensor, const char *name) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!tensor)
      return tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                             "tcc_tensor_set_name: tensor is NULL");
    tensor->name = name ? name : "";
    return nullptr;
  });
}
