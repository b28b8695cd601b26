// tensor_io.cc - tensor files: ONNX TensorProto (.pb) and NumPy (.npy).
//
// Both readers treat the file as hostile: every length is checked against
// the bytes that remain, and nothing is allocated until the file is known to
// hold exactly the data its header describes.
#include "status.h"
#include "tensor.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tensor files store little-endian data, copied as is");

using tcc::makeStatus;

namespace {

using Bytes = std::vector<uint8_t>;

struct TensorType {
  int32_t dtype;
  std::vector<int64_t> shape;
};

tcc_status_t ioError(const char *action, const std::string &path) {
  int err = errno;
  tcc_status_code_t code = TCC_STATUS_INVALID_ARGUMENT;
  if (err == ENOENT || err == ENOTDIR)
    code = TCC_STATUS_NOT_FOUND;
  else if (err == ENOSPC || err == EDQUOT || err == ENOMEM)
    code = TCC_STATUS_RESOURCE_EXHAUSTED;
  return makeStatus(code, "cannot %s '%s': %s", action, path.c_str(),
                    std::strerror(err));
}

/// Closes a file descriptor on every path out of a function.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      close(fd);
  }
};

// Only regular files: a device or FIFO could hang or never end. O_NONBLOCK
// keeps open() itself from waiting for a FIFO's writer. Nothing is read or
// allocated for a file over `maxBytes`.
tcc_status_t readFile(const std::string &path, uint64_t maxBytes, Bytes *out) {
  Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0)
    return ioError("open tensor file", path);
  struct stat st;
  if (fstat(f.fd, &st) != 0)
    return ioError("stat tensor file", path);
  if (!S_ISREG(st.st_mode))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "'%s' is not a regular file",
                      path.c_str());
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                      "'%s' holds %llu bytes, more than the limit of %llu for "
                      "a tensor file",
                      path.c_str(), static_cast<unsigned long long>(st.st_size),
                      static_cast<unsigned long long>(maxBytes));
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    ssize_t n = read(f.fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ioError("read tensor file", path);
    if (n == 0)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "'%s' shrank while being read", path.c_str());
    done += static_cast<size_t>(n);
  }
  return nullptr;
}

// Makes the tensor once the payload is known to have exactly the right
// size; `fill` writes its bytes.
template <typename Fill>
tcc_status_t makeTensor(const TensorType &type, std::string name, Fill fill,
                        tcc_tensor_t **out) {
  tcc_tensor_t *t;
  if (tcc_status_t s =
          tcc_tensor_create(type.dtype, static_cast<int32_t>(type.shape.size()),
                            type.shape.data(), &t))
    return s;
  t->name = std::move(name);
  fill(static_cast<uint8_t *>(t->data));
  *out = t;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Protobuf wire format
//===----------------------------------------------------------------------===//

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

/// Reads protobuf wire values from a byte range; every read fails rather
/// than go past the end.
class WireReader {
public:
  WireReader(const uint8_t *begin, const uint8_t *end) : p(begin), end(end) {}
  bool atEnd() const { return p == end; }

  bool varint(uint64_t *v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && p != end; shift += 7) {
      uint8_t byte = *p++;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        *v = result;
        return true;
      }
    }
    return false; // truncated, or longer than ten bytes
  }

  bool fixed(size_t size, uint64_t *v) {
    if (static_cast<size_t>(end - p) < size)
      return false;
    *v = 0;
    std::memcpy(v, p, size);
    p += size;
    return true;
  }

  bool lengthDelimited(const uint8_t **data, size_t *size) {
    uint64_t n;
    if (!varint(&n) || n > static_cast<uint64_t>(end - p))
      return false;
    *data = p;
    *size = static_cast<size_t>(n);
    p += n;
    return true;
  }

  bool scalar(int wireType, uint64_t *v) {
    switch (wireType) {
    case kVarint:
      return varint(v);
    case kFixed64:
      return fixed(8, v);
    case kFixed32:
      return fixed(4, v);
    }
    return false;
  }

  bool skip(int wireType) {
    const uint8_t *data;
    size_t size;
    uint64_t v;
    return wireType == kLengthDelimited ? lengthDelimited(&data, &size)
                                        : scalar(wireType, &v);
  }

  /// One occurrence of a repeated scalar field: a single value, or a packed
  /// run of them.
  bool repeated(int wireType, int scalarType, std::vector<uint64_t> *out) {
    if (wireType == scalarType) {
      uint64_t v;
      if (!scalar(scalarType, &v))
        return false;
      out->push_back(v);
      return true;
    }
    const uint8_t *data;
    size_t size;
    if (wireType != kLengthDelimited || !lengthDelimited(&data, &size))
      return false;
    for (WireReader packed(data, data + size); !packed.atEnd();) {
      uint64_t v;
      if (!packed.scalar(scalarType, &v))
        return false;
      out->push_back(v);
    }
    return true;
  }

private:
  const uint8_t *p;
  const uint8_t *end;
};

// TensorProto field numbers (onnx/onnx.proto).
enum PbField {
  kDims = 1,
  kDataType = 2,
  kSegment = 3,
  kFloatData = 4,
  kInt32Data = 5,
  kStringData = 6,
  kInt64Data = 7,
  kName = 8,
  kRawData = 9,
  kDoubleData = 10,
  kUint64Data = 11,
  kExternalData = 13,
  kDataLocation = 14,
};

const char *pbFieldName(int field) {
  switch (field) {
  case kFloatData:
    return "float_data";
  case kInt32Data:
    return "int32_data";
  case kInt64Data:
    return "int64_data";
  case kDoubleData:
    return "double_data";
  case kUint64Data:
    return "uint64_data";
  }
  return "raw_data";
}

// The typed field ONNX stores each dtype's values in.
int pbTypedField(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return kFloatData;
  case TCC_DTYPE_F64:
    return kDoubleData;
  case TCC_DTYPE_I64:
    return kInt64Data;
  case TCC_DTYPE_U32:
  case TCC_DTYPE_U64:
    return kUint64Data;
  }
  return kInt32Data; // also the bit patterns of f16 and bf16
}

// Data types ONNX has and tcc does not, named for the error message.
const char *pbUnsupportedTypeName(uint64_t dataType) {
  switch (dataType) {
  case 8:
    return "STRING";
  case 14:
    return "COMPLEX64";
  case 15:
    return "COMPLEX128";
  case 17:
    return "FLOAT8E4M3FN";
  case 18:
    return "FLOAT8E4M3FNUZ";
  case 19:
    return "FLOAT8E5M2";
  case 20:
    return "FLOAT8E5M2FNUZ";
  case 21:
    return "UINT4";
  case 22:
    return "INT4";
  case 23:
    return "FLOAT4E2M1";
  }
  return nullptr;
}

// The values an int32_data entry may hold for each dtype carried there.
bool fitsInt32Data(int32_t dtype, int64_t v) {
  switch (dtype) {
  case TCC_DTYPE_BOOL:
    return v == 0 || v == 1;
  case TCC_DTYPE_I8:
    return v >= INT8_MIN && v <= INT8_MAX;
  case TCC_DTYPE_U8:
    return v >= 0 && v <= UINT8_MAX;
  case TCC_DTYPE_I16:
    return v >= INT16_MIN && v <= INT16_MAX;
  case TCC_DTYPE_U16:
  case TCC_DTYPE_F16:
  case TCC_DTYPE_BF16:
    return v >= 0 && v <= UINT16_MAX;
  }
  return v >= INT32_MIN && v <= INT32_MAX;
}

tcc_status_t decodePb(const std::string &path, const Bytes &file,
                      tcc_tensor_t **out) {
  const char *where = path.c_str();
  auto malformed = [&](const char *what) {
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s' is not a valid TensorProto: %s", where, what);
  };
  std::vector<uint64_t> dims;
  uint64_t dataType = 0;
  std::string name;
  const uint8_t *raw = nullptr;
  size_t rawSize = 0;
  bool hasRaw = false;
  int typedField = 0; // the one typed field that holds values, if any
  std::vector<uint64_t> values;

  WireReader r(file.data(), file.data() + file.size());
  while (!r.atEnd()) {
    uint64_t key;
    if (!r.varint(&key))
      return malformed("truncated field key");
    uint64_t field = key >> 3;
    int wireType = static_cast<int>(key & 7);
    bool ok = true;
    switch (field) {
    case kDims:
      ok = r.repeated(wireType, kVarint, &dims);
      break;
    case kDataType:
      ok = wireType == kVarint && r.varint(&dataType);
      break;
    case kFloatData:
    case kInt32Data:
    case kInt64Data:
    case kDoubleData:
    case kUint64Data: {
      if (typedField && typedField != static_cast<int>(field))
        return makeStatus(
            TCC_STATUS_INVALID_ARGUMENT, "'%s' holds both %s and %s", where,
            pbFieldName(typedField), pbFieldName(static_cast<int>(field)));
      typedField = static_cast<int>(field);
      int scalarType = field == kFloatData    ? kFixed32
                       : field == kDoubleData ? kFixed64
                                              : kVarint;
      ok = r.repeated(wireType, scalarType, &values);
      break;
    }
    case kName:
    case kRawData: {
      const uint8_t *data;
      size_t size;
      ok = wireType == kLengthDelimited && r.lengthDelimited(&data, &size);
      if (ok && field == kName)
        name.assign(reinterpret_cast<const char *>(data), size);
      if (ok && field == kRawData) {
        raw = data;
        rawSize = size;
        hasRaw = true;
      }
      break;
    }
    case kSegment:
      return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                        "'%s': segmented TensorProtos are not supported",
                        where);
    case kStringData:
      return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                        "'%s': string tensors are not supported", where);
    case kExternalData:
      return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                        "'%s': tensors with external data are not supported",
                        where);
    case kDataLocation: {
      uint64_t location;
      ok = wireType == kVarint && r.varint(&location);
      if (ok && location != 0)
        return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                          "'%s': tensors with external data are not supported",
                          where);
      break;
    }
    case 0:
      return malformed("field number 0");
    default: // doc_string and fields newer than this reader
      ok = r.skip(wireType);
    }
    if (!ok)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "'%s' is not a valid TensorProto: field %llu is "
                        "truncated or has wire type %d",
                        where, static_cast<unsigned long long>(field),
                        wireType);
  }

  if (dataType == 0)
    return malformed("no data_type");
  if (const char *unsupported = pbUnsupportedTypeName(dataType))
    return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                      "'%s': data_type %llu (%s) is not supported", where,
                      static_cast<unsigned long long>(dataType), unsupported);
  if (dataType > INT32_MAX || !tcc_dtype_size(static_cast<int32_t>(dataType)))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s': unknown data_type %llu", where,
                      static_cast<unsigned long long>(dataType));
  if (dims.size() > INT32_MAX)
    return malformed("too many dims");
  TensorType type{static_cast<int32_t>(dataType),
                  std::vector<int64_t>(dims.begin(), dims.end())};
  int64_t count;
  size_t bytes;
  if (tcc_status_t s =
          tcc::checkType("'" + path + "'", type.dtype, type.shape.size(),
                         type.shape.data(), &count, &bytes))
    return s;
  std::string typeName =
      tcc::describeType(type.dtype, type.shape.size(), type.shape.data());
  const char *typeStr = typeName.c_str();

  if (hasRaw && typedField)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s' holds both raw_data and %s", where,
                      pbFieldName(typedField));
  if (hasRaw) {
    if (rawSize != bytes)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "'%s': raw_data holds %zu bytes, %s needs %zu", where,
                        rawSize, typeStr, bytes);
    return makeTensor(
        type, std::move(name),
        [&](uint8_t *dst) { std::memcpy(dst, raw, bytes); }, out);
  }
  if (!typedField && count)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "'%s' holds no data for %s",
                      where, typeStr);
  if (typedField && typedField != pbTypedField(type.dtype))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s': %s values belong in %s, the file has %s", where,
                      tcc_dtype_name(type.dtype),
                      pbFieldName(pbTypedField(type.dtype)),
                      pbFieldName(typedField));
  if (values.size() != static_cast<uint64_t>(count))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s': %s holds %zu values, %s needs %lld", where,
                      pbFieldName(typedField), values.size(), typeStr,
                      static_cast<long long>(count));
  for (size_t i = 0; i < values.size(); ++i) {
    // int32_data is int32 on the wire: negative values are sign-extended.
    int64_t v = static_cast<int64_t>(values[i]);
    bool fits = true;
    if (typedField == kInt32Data)
      fits = fitsInt32Data(type.dtype, v);
    else if (type.dtype == TCC_DTYPE_U32)
      fits = values[i] <= UINT32_MAX;
    if (!fits)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "'%s': %s value %lld at index %zu does not fit %s",
                        where, pbFieldName(typedField),
                        static_cast<long long>(v), i,
                        tcc_dtype_name(type.dtype));
  }
  size_t size = tcc_dtype_size(type.dtype);
  return makeTensor(
      type, std::move(name),
      [&](uint8_t *dst) {
        // The low bytes of each value, which is the element on a
        // little-endian machine.
        for (size_t i = 0; i < values.size(); ++i)
          std::memcpy(dst + i * size, &values[i], size);
      },
      out);
}

void putVarint(std::string &s, uint64_t v) {
  for (; v >= 0x80; v >>= 7)
    s += static_cast<char>(v | 0x80);
  s += static_cast<char>(v);
}

void putKey(std::string &s, int field, int wireType) {
  putVarint(s, static_cast<uint64_t>(field) << 3 | wireType);
}

// Everything before the raw_data bytes; those are written straight from
// the tensor.
std::string encodePbHeader(const tcc_tensor_t &t) {
  std::string s;
  for (int64_t d : t.shape) {
    putKey(s, kDims, kVarint);
    putVarint(s, static_cast<uint64_t>(d));
  }
  putKey(s, kDataType, kVarint);
  putVarint(s, static_cast<uint64_t>(t.dtype));
  if (!t.name.empty()) {
    putKey(s, kName, kLengthDelimited);
    putVarint(s, t.name.size());
    s += t.name;
  }
  putKey(s, kRawData, kLengthDelimited);
  putVarint(s, t.byteSize);
  return s;
}

//===----------------------------------------------------------------------===//
// NumPy .npy
//===----------------------------------------------------------------------===//

const char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

const char *npyDescr(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "<f4";
  case TCC_DTYPE_F64:
    return "<f8";
  case TCC_DTYPE_F16:
    return "<f2";
  case TCC_DTYPE_U8:
    return "|u1";
  case TCC_DTYPE_I8:
    return "|i1";
  case TCC_DTYPE_BOOL:
    return "|b1";
  case TCC_DTYPE_U16:
    return "<u2";
  case TCC_DTYPE_I16:
    return "<i2";
  case TCC_DTYPE_I32:
    return "<i4";
  case TCC_DTYPE_I64:
    return "<i8";
  case TCC_DTYPE_U32:
    return "<u4";
  case TCC_DTYPE_U64:
    return "<u8";
  }
  return nullptr; // bf16: NumPy has no such dtype
}

// The dtype of a descr such as '<f4'; INVALID if tcc has none.
int32_t npyDtype(const std::string &descr) {
  if (descr.size() < 2)
    return TCC_DTYPE_INVALID;
  char order = descr[0];
  std::string kind = descr.substr(1);
  // '=' is native order, which the static_assert above makes little-endian.
  bool little = order == '<' || order == '|' || order == '=';
  for (int32_t dtype = 0; dtype <= TCC_DTYPE_BF16; ++dtype) {
    const char *d = npyDescr(dtype);
    // Byte order means nothing for one-byte types.
    if (d && kind == d + 1 && (little || tcc_dtype_size(dtype) == 1))
      return dtype;
  }
  return TCC_DTYPE_INVALID;
}

/// Parses the Python dict literal of a .npy header, e.g.
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeaderParser {
public:
  NpyHeaderParser(const char *begin, const char *end) : p(begin), end(end) {}

  /// Returns an error message, or "" on success.
  std::string parse(std::string *descr, bool *fortranOrder,
                    std::vector<int64_t> *shape) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!eat('{'))
      return "header does not start with '{'";
    while (!eat('}')) {
      std::string key;
      if (!string(&key) || !eat(':'))
        return "expected 'key': in the header";
      if (key == "descr") {
        if (!string(descr))
          return "descr is not a string (structured dtypes are not "
                 "supported)";
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (eatWord("True"))
          *fortranOrder = true;
        else if (eatWord("False"))
          *fortranOrder = false;
        else
          return "fortran_order is neither True nor False";
        seenOrder = true;
      } else if (key == "shape") {
        if (!tuple(shape))
          return "shape is not a tuple of non-negative integers";
        seenShape = true;
      } else {
        return "unexpected key '" + key + "' in the header";
      }
      if (!eat(',') && !peek('}'))
        return "expected ',' or '}' in the header";
    }
    skipSpace();
    if (p != end)
      return "trailing characters after the header";
    if (!seenDescr || !seenOrder || !seenShape)
      return "the header lacks descr, fortran_order or shape";
    return "";
  }

private:
  void skipSpace() {
    while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      ++p;
  }
  bool peek(char c) {
    skipSpace();
    return p != end && *p == c;
  }
  bool eat(char c) {
    if (!peek(c))
      return false;
    ++p;
    return true;
  }
  bool eatWord(const char *word) {
    skipSpace();
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end - p) < n || std::memcmp(p, word, n) != 0)
      return false;
    p += n;
    return true;
  }
  bool string(std::string *out) {
    skipSpace();
    if (p == end || (*p != '\'' && *p != '"'))
      return false;
    char quote = *p++;
    const char *start = p;
    while (p != end && *p != quote && *p != '\\')
      ++p;
    if (p == end || *p != quote)
      return false;
    out->assign(start, p++);
    return true;
  }
  bool integer(int64_t *out) {
    skipSpace();
    if (p == end || *p < '0' || *p > '9')
      return false;
    uint64_t v = 0;
    for (; p != end && *p >= '0' && *p <= '9'; ++p) {
      v = v * 10 + static_cast<uint64_t>(*p - '0');
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return false;
    }
    if (p != end && *p == 'L') // Python 2 longs
      ++p;
    *out = static_cast<int64_t>(v);
    return true;
  }
  bool tuple(std::vector<int64_t> *out) {
    if (!eat('('))
      return false;
    while (!eat(')')) {
      int64_t dim;
      if (!integer(&dim))
        return false;
      out->push_back(dim);
      if (!eat(',') && !peek(')'))
        return false;
    }
    return true;
  }

  const char *p;
  const char *end;
};

tcc_status_t decodeNpy(const std::string &path, const Bytes &file,
                       tcc_tensor_t **out) {
  const char *where = path.c_str();
  auto malformed = [&](const std::string &what) {
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "'%s' is not a valid .npy file: %s", where, what.c_str());
  };
  const uint8_t *data = file.data();
  if (file.size() < kNpyMagicSize + 4 ||
      std::memcmp(data, kNpyMagic, kNpyMagicSize) != 0)
    return malformed("no \\x93NUMPY magic");
  uint8_t major = data[6];
  if (major < 1 || major > 3)
    return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                      "'%s': .npy format version %u is not supported", where,
                      major);
  // Version 1 has a 2-byte header length, versions 2 and 3 a 4-byte one.
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t headerStart = 8 + lengthSize;
  if (file.size() < headerStart)
    return malformed("truncated header length");
  uint32_t headerSize = 0;
  std::memcpy(&headerSize, data + 8, lengthSize);
  if (headerSize > file.size() - headerStart)
    return malformed("header length " + std::to_string(headerSize) +
                     " runs past the end of the file");

  std::string descr;
  bool fortranOrder = false;
  TensorType type;
  auto *header = reinterpret_cast<const char *>(data + headerStart);
  std::string error = NpyHeaderParser(header, header + headerSize)
                          .parse(&descr, &fortranOrder, &type.shape);
  if (!error.empty())
    return malformed(error);
  if (fortranOrder)
    return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                      "'%s': Fortran-order arrays are not supported; save "
                      "it with np.ascontiguousarray",
                      where);
  type.dtype = npyDtype(descr);
  if (type.dtype == TCC_DTYPE_INVALID)
    return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                      "'%s': descr '%s' is not supported (little-endian "
                      "bool, ints, uints and floats of 16-64 bits are)",
                      where, descr.c_str());
  if (type.shape.size() > INT32_MAX)
    return malformed("too many dimensions");
  int64_t count;
  size_t bytes;
  if (tcc_status_t s =
          tcc::checkType("'" + path + "'", type.dtype, type.shape.size(),
                         type.shape.data(), &count, &bytes))
    return s;
  size_t dataStart = headerStart + headerSize;
  if (file.size() - dataStart != bytes)
    return makeStatus(
        TCC_STATUS_INVALID_ARGUMENT, "'%s': holds %zu data bytes, %s needs %zu",
        where, file.size() - dataStart,
        tcc::describeType(type.dtype, type.shape.size(), type.shape.data())
            .c_str(),
        bytes);
  return makeTensor(
      type, "",
      [&](uint8_t *dst) { std::memcpy(dst, data + dataStart, bytes); }, out);
}

std::string encodeNpyHeader(const tcc_tensor_t &t, const char *descr) {
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1)
    shape += ','; // a Python 1-tuple
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // NumPy pads the header with spaces and a newline so that the data starts
  // on a 64-byte boundary; version 2 only when the length needs 4 bytes.
  auto padded = [&](size_t prefix) {
    return (prefix + dict.size() + 1 + 63) / 64 * 64 - prefix;
  };
  bool v1 = padded(10) <= UINT16_MAX;
  size_t length = padded(v1 ? 10 : 12);
  dict.append(length - dict.size() - 1, ' ');
  dict += '\n';
  std::string s(kNpyMagic, kNpyMagicSize);
  s += static_cast<char>(v1 ? 1 : 2);
  s += '\0';
  uint32_t length32 = static_cast<uint32_t>(length);
  s.append(reinterpret_cast<const char *>(&length32), v1 ? 2 : 4);
  return s + dict;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

tcc_status_t writeAll(int fd, const void *data, size_t size,
                      const std::string &path) {
  auto *p = static_cast<const char *>(data);
  while (size) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ioError("write", path);
    p += n;
    size -= static_cast<size_t>(n);
  }
  return nullptr;
}

// The header and the tensor's bytes go to a temporary file that is renamed
// over `path` only once complete.
tcc_status_t writeFile(const std::string &path, const std::string &header,
                       const tcc_tensor_t &t) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." +
                    std::to_string(counter++);
  Fd f{open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
  if (f.fd < 0)
    return ioError("create", tmp);
  tcc_status_t s = writeAll(f.fd, header.data(), header.size(), tmp);
  if (!s)
    s = writeAll(f.fd, t.data, t.byteSize, tmp);
  int fd = f.fd;
  f.fd = -1;
  if (close(fd) != 0 && !s)
    s = ioError("write", tmp);
  if (!s && rename(tmp.c_str(), path.c_str()) != 0)
    s = ioError("rename a temporary file to", path);
  if (s)
    unlink(tmp.c_str());
  return s;
}

} // namespace

tcc_status_t tcc_tensor_load_file(const char *path, tcc_tensor_t **out_tensor) {
  return tcc_tensor_load_file_with_options(path, nullptr, out_tensor);
}

tcc_status_t
tcc_tensor_load_file_with_options(const char *path,
                                  const tcc_tensor_load_options_t *options,
                                  tcc_tensor_t **out_tensor) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!path || !out_tensor)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_tensor_load_file: path and out_tensor must not "
                        "be NULL");
    uint64_t maxBytes = options && options->max_file_bytes
                            ? options->max_file_bytes
                            : TCC_TENSOR_FILE_MAX_BYTES;
    Bytes file;
    if (tcc_status_t s = readFile(path, maxBytes, &file))
      return s;
    bool npy = endsWith(path, ".npy") ||
               (!endsWith(path, ".pb") && file.size() >= kNpyMagicSize &&
                std::memcmp(file.data(), kNpyMagic, kNpyMagicSize) == 0);
    return npy ? decodeNpy(path, file, out_tensor)
               : decodePb(path, file, out_tensor);
  });
}

tcc_status_t tcc_tensor_save_file(const tcc_tensor_t *tensor,
                                  const char *path) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!tensor || !path)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_tensor_save_file: tensor and path must not be "
                        "NULL");
    std::string p = path;
    if (endsWith(p, ".pb"))
      return writeFile(p, encodePbHeader(*tensor), *tensor);
    if (!endsWith(p, ".npy"))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "cannot tell the format of '%s': name it .pb or .npy",
                        path);
    const char *descr = npyDescr(tensor->dtype);
    if (!descr)
      return makeStatus(TCC_STATUS_UNIMPLEMENTED,
                        "cannot save '%s': NumPy has no %s dtype; use .pb",
                        path, tcc_dtype_name(tensor->dtype));
    return writeFile(p, encodeNpyHeader(*tensor, descr), *tensor);
  });
}
