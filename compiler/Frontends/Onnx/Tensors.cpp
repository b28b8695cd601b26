//===- Tensors.cpp - ONNX data types and TensorProto constants ------------===//
//
// A TensorProto holds its elements in one of three places: a typed repeated
// field (float_data, int32_data, ...), little-endian `raw_data`, or a
// range of an external file. Each is checked against the tensor's shape
// before any byte is read. Big tensors become `dense_resource` blobs, so the
// context neither uniques nor hashes them; external data is mapped, not
// copied, when its alignment allows.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;
using ::onnx::TensorProto;

Type mlir::tcc::onnx::convertDataType(MLIRContext *ctx, int32_t dataType) {
  auto sInt = [&](unsigned w) { return IntegerType::get(ctx, w); };
  auto uInt = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (dataType) {
  case TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case TensorProto::DOUBLE:
    return Float64Type::get(ctx);
  case TensorProto::FLOAT16:
    return Float16Type::get(ctx);
  case TensorProto::BFLOAT16:
    return BFloat16Type::get(ctx);
  case TensorProto::BOOL:
    return sInt(1);
  case TensorProto::INT8:
    return sInt(8);
  case TensorProto::INT16:
    return sInt(16);
  case TensorProto::INT32:
    return sInt(32);
  case TensorProto::INT64:
    return sInt(64);
  case TensorProto::UINT8:
    return uInt(8);
  case TensorProto::UINT16:
    return uInt(16);
  case TensorProto::UINT32:
    return uInt(32);
  case TensorProto::UINT64:
    return uInt(64);
  default:
    return {};
  }
}

std::string mlir::tcc::onnx::dataTypeName(int32_t dataType) {
  // Indexed by TensorProto.DataType; the linked onnx 1.12 stops at bfloat16.
  static const char *const names[] = {
      "undefined",      "float",      "uint8",
      "int8",           "uint16",     "int16",
      "int32",          "int64",      "string",
      "bool",           "float16",    "double",
      "uint32",         "uint64",     "complex64",
      "complex128",     "bfloat16",   "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
      "uint4",          "int4",       "float4e2m1",
      "float8e8m0",     "uint2",      "int2"};
  if (dataType >= 0 && dataType < (int32_t)std::size(names))
    return names[dataType];
  return "data type " + std::to_string(dataType);
}

/// Bytes per element in ONNX's raw layout (bool takes a byte).
static unsigned elementBytes(Type type) {
  return type.isInteger(1) ? 1 : type.getIntOrFloatBitWidth() / 8;
}

LogicalResult mlir::tcc::onnx::checkTensorSize(ArrayRef<int64_t> shape,
                                               Type elementType,
                                               const SizeLimits &limits,
                                               const Twine &what,
                                               shapes::EmitErrorFn emitError) {
  int64_t count = 1;
  bool overflow = false;
  if (llvm::is_contained(shape, 0))
    count = 0;
  for (int64_t d : shape)
    if (count && !ShapedType::isDynamic(d) && d > 0 && !overflow)
      overflow = llvm::MulOverflow(count, d, count);
  if (overflow || count > limits.maxElements) {
    InFlightDiagnostic diag = emitError();
    diag << what << " of shape " << shapes::str(shape) << " holds ";
    if (overflow)
      diag << "more than 2^63";
    else
      diag << count;
    return diag << " elements, more than the limit of " << limits.maxElements
                << "; raise it with --max-elements";
  }
  unsigned bits =
      elementType.isIntOrFloat() ? elementType.getIntOrFloatBitWidth() : 64;
  int64_t bytes;
  if (llvm::MulOverflow(count, (int64_t)std::max(1u, (bits + 7) / 8), bytes) ||
      bytes > limits.maxBytes)
    return emitError() << what << " of shape " << shapes::str(shape) << " and "
                       << elementType << " takes more than " << limits.maxBytes
                       << " bytes, the limit; raise it with --max-tensor-bytes";
  return success();
}

/// A blob name that prints as a bare keyword: MLIR makes it unique.
static std::string blobName(StringRef tensorName) {
  std::string name;
  for (char c : tensorName)
    name += llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_';
  if (name.empty() || !llvm::isAlpha(name[0]))
    name = "t_" + name;
  return name;
}

/// The number of values in the typed field that holds the elements of `t`,
/// and the field's name.
static std::pair<int64_t, StringRef> typedField(const TensorProto &t) {
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    return {t.float_data_size(), "float_data"};
  case TensorProto::DOUBLE:
    return {t.double_data_size(), "double_data"};
  case TensorProto::INT64:
    return {t.int64_data_size(), "int64_data"};
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return {t.uint64_data_size(), "uint64_data"};
  default:
    return {t.int32_data_size(), "int32_data"};
  }
}

/// Copies the typed field that holds the elements of `t` into `out`
/// (little-endian, elementBytes() per element); fails when the field holds
/// the wrong number of values.
static LogicalResult readTypedField(const TensorProto &t, int64_t count,
                                    unsigned bytes, MutableArrayRef<char> out,
                                    StringRef what,
                                    shapes::EmitErrorFn emitError) {
  auto copy = [&](const auto &field, StringRef fieldName) -> LogicalResult {
    if (field.size() != count)
      return emitError() << what << " holds " << field.size() << " values in "
                         << fieldName << " but its shape needs " << count;
    for (int64_t i = 0; i < count; ++i) {
      // Narrower types keep the low bytes: int32_data holds int8/16 values
      // and the bit patterns of float16/bfloat16.
      auto v = field.Get(i);
      std::memcpy(out.data() + i * bytes, &v, bytes);
    }
    return success();
  };
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    return copy(t.float_data(), "float_data");
  case TensorProto::DOUBLE:
    return copy(t.double_data(), "double_data");
  case TensorProto::INT64:
    return copy(t.int64_data(), "int64_data");
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return copy(t.uint64_data(), "uint64_data");
  case TensorProto::BOOL:
    if (failed(copy(t.int32_data(), "int32_data")))
      return failure();
    for (char &c : out)
      c = c != 0;
    return success();
  default:
    return copy(t.int32_data(), "int32_data");
  }
}

/// The bytes of an external-data tensor, mapped from a file inside
/// `modelDir`.
static FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readExternal(const TensorProto &t, uint64_t needed, StringRef modelDir,
             StringRef what, shapes::EmitErrorFn emitError) {
  std::string location;
  uint64_t offset = 0, length = needed;
  bool hasLength = false;
  for (const auto &entry : t.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t n;
      if (value.getAsInteger(10, n)) {
        emitError() << what << " has an invalid external data " << key << " '"
                    << value << "'";
        return failure();
      }
      (key == "offset" ? offset : length) = n;
      hasLength |= key == "length";
    }
  }
  if (location.empty()) {
    emitError() << what << " has external data without a location";
    return failure();
  }
  if (llvm::sys::path::is_absolute(location)) {
    emitError() << what << ": external data location '" << location
                << "' must be relative to the model's folder";
    return failure();
  }
  SmallString<256> path(modelDir), realDir, realPath;
  llvm::sys::path::append(path, location);
  if (std::error_code ec = llvm::sys::fs::real_path(modelDir, realDir)) {
    emitError() << "cannot resolve the model's folder '" << modelDir
                << "': " << ec.message();
    return failure();
  }
  if (std::error_code ec = llvm::sys::fs::real_path(path, realPath)) {
    emitError() << what << ": cannot open external data file '" << location
                << "': " << ec.message();
    return failure();
  }
  // Symlinks and ".." are resolved first, so neither can reach outside.
  if (!StringRef(realPath).starts_with((realDir + "/").str())) {
    emitError() << what << ": external data file '" << location
                << "' lies outside the model's folder";
    return failure();
  }
  // A FIFO or device could block or never end.
  if (!llvm::sys::fs::is_regular_file(realPath)) {
    emitError() << what << ": external data file '" << location
                << "' is not a regular file";
    return failure();
  }
  uint64_t fileSize;
  if (std::error_code ec = llvm::sys::fs::file_size(realPath, fileSize)) {
    emitError() << what << ": cannot read external data file '" << location
                << "': " << ec.message();
    return failure();
  }
  if (offset > fileSize || length > fileSize - offset) {
    emitError() << what << ": external data range [" << offset << ", "
                << offset + length << ") lies outside '" << location << "' ("
                << fileSize << " bytes)";
    return failure();
  }
  if (hasLength && length != needed) {
    emitError() << what << " has " << length
                << " bytes of external data but its shape needs " << needed;
    return failure();
  }
  auto buffer = llvm::MemoryBuffer::getFileSlice(realPath, needed, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer) {
    emitError() << what << ": cannot read external data file '" << location
                << "': " << buffer.getError().message();
    return failure();
  }
  return std::move(*buffer);
}

FailureOr<ElementsAttr> mlir::tcc::onnx::convertTensor(
    MLIRContext *ctx, const TensorProto &t, StringRef modelDir, StringRef what,
    StringRef name, const SizeLimits &limits, shapes::EmitErrorFn emitError) {
  Type elementType = convertDataType(ctx, t.data_type());
  if (!elementType) {
    emitError() << what << " has data type " << dataTypeName(t.data_type())
                << ", which tcc does not support";
    return failure();
  }
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
    emitError() << what << " has a negative dimension in its shape "
                << shapes::str(shape);
    return failure();
  }
  if (failed(checkTensorSize(shape, elementType, limits, what, emitError)))
    return failure();
  int64_t count = shapes::numElements(shape);
  if (t.has_segment()) {
    emitError() << what << " is segmented, which tcc does not support";
    return failure();
  }
  auto type = RankedTensorType::get(shape, elementType);
  unsigned bytes = elementBytes(elementType);
  uint64_t needed = (uint64_t)count * bytes;
  bool small = count <= kMaxDenseElements || elementType.isInteger(1);

  if (t.data_location() == TensorProto::EXTERNAL) {
    auto buffer = readExternal(t, needed, modelDir, what, emitError);
    if (failed(buffer))
      return failure();
    ArrayRef<char> data((*buffer)->getBufferStart(),
                        (*buffer)->getBufferSize());
    if (small || !llvm::isAddrAligned(llvm::Align(bytes), data.data()))
      return makeElements(type, data, name);
    // The blob owns the mapping: the weights are never copied.
    auto deleter = [buffer = std::move(*buffer)](
                       void *, size_t, size_t) mutable { buffer.reset(); };
    AsmResourceBlob blob(data, bytes, std::move(deleter),
                         /*dataIsMutable=*/false);
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(type, blobName(name), std::move(blob)));
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != needed) {
      emitError() << what << " has " << t.raw_data().size()
                  << " bytes of raw_data but its shape " << shapes::str(shape)
                  << " of " << dataTypeName(t.data_type()) << " needs "
                  << needed;
      return failure();
    }
    return makeElements(
        type, ArrayRef<char>(t.raw_data().data(), t.raw_data().size()), name);
  }
  // The field must hold every element before anything is allocated for
  // them: a few bytes of model could otherwise ask for gigabytes.
  auto [held, field] = typedField(t);
  if (held != count) {
    emitError() << what << " holds " << held << " values in " << field
                << " but its shape needs " << count;
    return failure();
  }
  // Typed fields are decoded straight into the blob when there is one.
  if (small) {
    SmallVector<char> data(needed);
    if (failed(readTypedField(t, count, bytes, data, what, emitError)))
      return failure();
    return makeElements(type, data, name);
  }
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(needed, bytes);
  if (failed(readTypedField(t, count, bytes, blob.getMutableData(), what,
                            emitError)))
    return failure();
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName(name), std::move(blob)));
}

ElementsAttr mlir::tcc::onnx::makeElements(RankedTensorType type,
                                           ArrayRef<char> raw, StringRef name) {
  // DenseElementsAttr packs bools into bits; they never become blobs.
  if (type.getElementType().isInteger(1))
    return cast<ElementsAttr>(DenseElementsAttr::get(
        type, SmallVector<bool>(raw.begin(), raw.end())));
  if (type.getNumElements() <= kMaxDenseElements)
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, raw));
  unsigned align = elementBytes(type.getElementType());
  // Not allocateAndCopyWithAlign(..., /*dataIsMutable=*/false): MLIR 19's
  // copies through getMutableData(), which asserts on an immutable blob.
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocate(raw.size(), align, /*dataIsMutable=*/false);
  std::memcpy(const_cast<char *>(blob.getData().data()), raw.data(),
              raw.size());
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName(name), std::move(blob)));
}
