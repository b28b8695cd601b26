// tensor_io_test.cc - reading and writing .pb and .npy tensor files,
// including hostile ones.
#include "test_util.h"

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>

using tcc::testing::Result;
using tcc::testing::result;
using tcc::testing::TempDir;

namespace {

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Loads `bytes` written to a file called `name`; the tensor, if any, is
/// returned through `out`.
Result loadBytes(const TempDir &dir, const std::string &name,
                 const std::string &bytes, tcc::Tensor *out = nullptr) {
  writeBytes(dir / name, bytes);
  tcc_tensor_t *t = nullptr;
  Result r = result(tcc_tensor_load_file((dir / name).c_str(), &t));
  tcc::Tensor owned(t);
  if (out)
    *out = std::move(owned);
  return r;
}

testing::AssertionResult sameTensor(const tcc::Tensor &a,
                                    const tcc::Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return testing::AssertionFailure() << "types differ";
  if (std::memcmp(a.data(), b.data(), a.byteSize()) != 0)
    return testing::AssertionFailure() << "data differs";
  return testing::AssertionSuccess();
}

const int32_t kAllDtypes[] = {
    TCC_DTYPE_F32, TCC_DTYPE_U8,  TCC_DTYPE_I8,   TCC_DTYPE_U16, TCC_DTYPE_I16,
    TCC_DTYPE_I32, TCC_DTYPE_I64, TCC_DTYPE_BOOL, TCC_DTYPE_F16, TCC_DTYPE_F64,
    TCC_DTYPE_U32, TCC_DTYPE_U64, TCC_DTYPE_BF16};

/// A tensor of `dtype` whose bytes all differ (bools stay 0 or 1).
tcc::Tensor patterned(int32_t dtype, std::vector<int64_t> shape) {
  tcc::Tensor t = tcc::Tensor::create(dtype, shape);
  auto *bytes = t.data<uint8_t>();
  for (size_t i = 0; i < t.byteSize(); ++i)
    bytes[i] = dtype == TCC_DTYPE_BOOL ? i % 3 == 0 : uint8_t(i * 37 + 11);
  return t;
}

TEST(TensorIo, PbRoundTripsEveryDtype) {
  TempDir dir;
  for (int32_t dtype : kAllDtypes) {
    SCOPED_TRACE(tcc_dtype_name(dtype));
    tcc::Tensor t = patterned(dtype, {2, 3, 4});
    t.setName(std::string("t_") + tcc_dtype_name(dtype));
    t.save(dir / "t.pb");
    tcc::Tensor back = tcc::Tensor::load(dir / "t.pb");
    EXPECT_TRUE(sameTensor(t, back));
    EXPECT_EQ(back.name(), t.name());
  }
}

TEST(TensorIo, NpyRoundTripsEveryNumpyDtype) {
  TempDir dir;
  for (int32_t dtype : kAllDtypes) {
    SCOPED_TRACE(tcc_dtype_name(dtype));
    tcc::Tensor t = patterned(dtype, {3, 1, 5});
    Result r = result(tcc_tensor_save_file(t.get(), (dir / "t.npy").c_str()));
    if (dtype == TCC_DTYPE_BF16) {
      EXPECT_EQ(r.code, TCC_STATUS_UNIMPLEMENTED);
      continue;
    }
    ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
    EXPECT_TRUE(sameTensor(t, tcc::Tensor::load(dir / "t.npy")));
  }
}

TEST(TensorIo, ScalarsAndEmptyTensorsRoundTrip) {
  TempDir dir;
  for (const char *ext : {".pb", ".npy"}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {0}, {2, 0}, {7}}) {
      tcc::Tensor t = patterned(TCC_DTYPE_I64, shape);
      t.save(dir / (std::string("t") + ext));
      EXPECT_TRUE(
          sameTensor(t, tcc::Tensor::load(dir / (std::string("t") + ext))))
          << ext << " rank " << shape.size();
    }
  }
}

// Written by onnx.numpy_helper.from_array(np.array([[1, 2, 3], [4, 5, 6]],
// dtype=np.float32), "x").SerializeToString().
const std::string kOnnxF32(
    "\x08\x02\x08\x03\x10\x01\x42\x01\x78\x4a\x18\x00\x00\x80\x3f\x00\x00\x00"
    "\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40\x00\x00\xc0\x40",
    35);

TEST(TensorIo, PbMatchesOnnxBytes) {
  TempDir dir;
  tcc::Tensor t;
  ASSERT_EQ(loadBytes(dir, "x.pb", kOnnxF32, &t).code, TCC_STATUS_OK);
  EXPECT_EQ(t.name(), "x");
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.data<float>()[5], 6.0f);
  t.save(dir / "y.pb");
  EXPECT_EQ(readBytes(dir / "y.pb"), kOnnxF32);
}

TEST(TensorIo, NpyMatchesNumpyBytes) {
  // np.save of np.array([[1, -2], [3, 4], [5, 6]], dtype=np.int16).
  std::string header =
      "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 2), }";
  header.resize(117, ' ');
  std::string numpy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header +
                      "\n" +
                      std::string("\x01\x00\xfe\xff\x03\x00\x04\x00\x05\x00"
                                  "\x06\x00",
                                  12);
  TempDir dir;
  tcc::Tensor t;
  ASSERT_EQ(loadBytes(dir, "x.npy", numpy, &t).code, TCC_STATUS_OK);
  EXPECT_EQ(t.dtype(), TCC_DTYPE_I16);
  EXPECT_EQ(t.data<int16_t>()[1], -2);
  t.save(dir / "y.npy");
  EXPECT_EQ(readBytes(dir / "y.npy"), numpy);
}

TEST(TensorIo, FormatComesFromMagicWithoutKnownExtension) {
  TempDir dir;
  tcc::Tensor t = patterned(TCC_DTYPE_U16, {4});
  t.save(dir / "t.npy");
  std::filesystem::rename(dir / "t.npy", dir / "t.bin");
  EXPECT_TRUE(sameTensor(t, tcc::Tensor::load(dir / "t.bin")));
  t.save(dir / "t.pb");
  std::filesystem::rename(dir / "t.pb", dir / "t.data");
  EXPECT_TRUE(sameTensor(t, tcc::Tensor::load(dir / "t.data")));
}

TEST(TensorIo, MissingOrIrregularFiles) {
  TempDir dir;
  tcc_tensor_t *t = nullptr;
  Result r = result(tcc_tensor_load_file((dir / "nope.pb").c_str(), &t));
  EXPECT_EQ(r.code, TCC_STATUS_NOT_FOUND);
  EXPECT_NE(r.message.find(dir / "nope.pb"), std::string::npos) << r.message;
  r = result(tcc_tensor_load_file(dir.path().c_str(), &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT) << r.message;
  // A FIFO without a writer would block a plain open() forever.
  ASSERT_EQ(mkfifo((dir / "fifo.pb").c_str(), 0600), 0);
  r = result(tcc_tensor_load_file((dir / "fifo.pb").c_str(), &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("is not a regular file"), std::string::npos);
  EXPECT_EQ(t, nullptr);
}

TEST(TensorIo, FileSizeCapRefusesBeforeReading) {
  TempDir dir;
  tcc::Tensor f = patterned(TCC_DTYPE_F32, {16});
  std::string path = dir / "x.pb";
  ASSERT_EQ(tcc_tensor_save_file(f.get(), path.c_str()), nullptr);
  uint64_t size = readBytes(path).size();
  tcc_tensor_load_options_t options{};
  options.max_file_bytes = size - 1;
  tcc_tensor_t *t = nullptr;
  Result r =
      result(tcc_tensor_load_file_with_options(path.c_str(), &options, &t));
  EXPECT_EQ(r.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_NE(
      r.message.find("more than the limit of " + std::to_string(size - 1)),
      std::string::npos)
      << r.message;
  EXPECT_EQ(t, nullptr);
  // At the cap, and with the default cap (options NULL or zero), it loads.
  options.max_file_bytes = size;
  r = result(tcc_tensor_load_file_with_options(path.c_str(), &options, &t));
  EXPECT_EQ(r.code, TCC_STATUS_OK) << r.message;
  tcc::Tensor loaded(t);
  EXPECT_TRUE(sameTensor(loaded, f));
  options.max_file_bytes = 0;
  t = nullptr;
  r = result(tcc_tensor_load_file_with_options(path.c_str(), &options, &t));
  EXPECT_EQ(r.code, TCC_STATUS_OK) << r.message;
  tcc_tensor_free(t);
}

TEST(TensorIo, AccessorsTolerateNull) {
  EXPECT_EQ(tcc_tensor_dtype(nullptr), TCC_DTYPE_INVALID);
  EXPECT_EQ(tcc_tensor_rank(nullptr), 0);
  EXPECT_EQ(tcc_tensor_shape(nullptr), nullptr);
  EXPECT_EQ(tcc_tensor_data(nullptr), nullptr);
  EXPECT_EQ(tcc_tensor_byte_size(nullptr), 0u);
  EXPECT_STREQ(tcc_tensor_name(nullptr), "");
  EXPECT_EQ(tcc_model_num_inputs(nullptr), 0u);
  EXPECT_STREQ(tcc_model_name(nullptr), "");
  EXPECT_EQ(tcc_context_model(nullptr), nullptr);
}

TEST(TensorIo, SaveErrorsLeaveNoFiles) {
  TempDir dir;
  tcc::Tensor t = patterned(TCC_DTYPE_BF16, {2});
  EXPECT_EQ(result(tcc_tensor_save_file(t.get(), (dir / "t.txt").c_str())).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      result(tcc_tensor_save_file(t.get(), (dir / "no/t.pb").c_str())).code,
      TCC_STATUS_NOT_FOUND);
  EXPECT_EQ(result(tcc_tensor_save_file(t.get(), (dir / "t.npy").c_str())).code,
            TCC_STATUS_UNIMPLEMENTED);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

//===----------------------------------------------------------------------===//
// TensorProto fields other than raw_data
//===----------------------------------------------------------------------===//

/// Builds TensorProto bytes field by field.
class Pb {
public:
  Pb &varint(int field, uint64_t v) {
    key(field, 0);
    put(v);
    return *this;
  }
  Pb &bytes(int field, const std::string &b) {
    key(field, 2);
    put(b.size());
    s += b;
    return *this;
  }
  Pb &fixed32(int field, uint32_t v) {
    key(field, 5);
    s.append(reinterpret_cast<const char *>(&v), 4);
    return *this;
  }
  Pb &packedVarints(int field, std::vector<uint64_t> values) {
    Pb inner;
    for (uint64_t v : values)
      inner.put(v);
    return bytes(field, inner.s);
  }
  template <typename T> Pb &packedFixed(int field, std::vector<T> values) {
    return bytes(field,
                 std::string(reinterpret_cast<const char *>(values.data()),
                             values.size() * sizeof(T)));
  }
  std::string str() const { return s; }

private:
  void key(int field, int wireType) { put(uint64_t(field) << 3 | wireType); }
  void put(uint64_t v) {
    for (; v >= 0x80; v >>= 7)
      s += char(v | 0x80);
    s += char(v);
  }
  std::string s;
};

template <typename T> std::vector<T> values(const tcc::Tensor &t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.elementCount());
}

TEST(TensorIo, PbTypedFields) {
  TempDir dir;
  tcc::Tensor t;
  // Packed float_data, packed dims.
  ASSERT_EQ(loadBytes(dir, "a.pb",
                      Pb().packedVarints(1, {2})
                          .varint(2, TCC_DTYPE_F32)
                          .packedFixed<float>(4, {1.5f, -2})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2}));

  // Unpacked float_data, one value per field.
  uint32_t bits;
  float f = 3.25f;
  std::memcpy(&bits, &f, 4);
  ASSERT_EQ(
      loadBytes(
          dir, "b.pb",
          Pb().varint(1, 1).varint(2, TCC_DTYPE_F32).fixed32(4, bits).str(), &t)
          .code,
      TCC_STATUS_OK);
  EXPECT_EQ(values<float>(t), (std::vector<float>{3.25f}));

  // What onnx.helper.make_tensor("i", INT8, [2], [-3, 7]) writes: int32_data
  // with -3 sign-extended to ten bytes.
  ASSERT_EQ(loadBytes(dir, "c.pb",
                      std::string("\x08\x02\x10\x03\x2a\x0b\xfd\xff\xff\xff\xff"
                                  "\xff\xff\xff\xff\x01\x07\x42\x01\x69",
                                  20),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<int8_t>(t), (std::vector<int8_t>{-3, 7}));
  EXPECT_EQ(t.name(), "i");

  // f16 bit patterns in int32_data, as make_tensor writes them.
  ASSERT_EQ(loadBytes(dir, "d.pb",
                      Pb().varint(1, 3)
                          .varint(2, TCC_DTYPE_F16)
                          .packedVarints(5, {0x3c00, 0xc000, 0x3800})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<uint16_t>(t),
            (std::vector<uint16_t>{0x3c00, 0xc000, 0x3800}));

  ASSERT_EQ(loadBytes(dir, "e.pb",
                      Pb().varint(1, 2)
                          .varint(2, TCC_DTYPE_BOOL)
                          .varint(5, 1)
                          .varint(5, 0)
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<uint8_t>(t), (std::vector<uint8_t>{1, 0}));

  ASSERT_EQ(loadBytes(dir, "f.pb",
                      Pb().varint(1, 2)
                          .varint(2, TCC_DTYPE_I64)
                          .packedVarints(7, {uint64_t(-5), 1ULL << 40})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{-5, 1LL << 40}));

  ASSERT_EQ(loadBytes(dir, "g.pb",
                      Pb().varint(1, 1)
                          .varint(2, TCC_DTYPE_F64)
                          .packedFixed<double>(10, {0.1})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<double>(t), (std::vector<double>{0.1}));

  ASSERT_EQ(loadBytes(dir, "h.pb",
                      Pb().varint(1, 1)
                          .varint(2, TCC_DTYPE_U32)
                          .packedVarints(11, {0xffffffffu})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<uint32_t>(t), (std::vector<uint32_t>{0xffffffffu}));

  ASSERT_EQ(loadBytes(dir, "i.pb",
                      Pb().varint(1, 1)
                          .varint(2, TCC_DTYPE_U64)
                          .packedVarints(11, {~0ULL})
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(values<uint64_t>(t), (std::vector<uint64_t>{~0ULL}));
}

TEST(TensorIo, PbSkipsDocStringAndUnknownFields) {
  TempDir dir;
  tcc::Tensor t;
  ASSERT_EQ(loadBytes(dir, "a.pb",
                      Pb().bytes(12, "documentation")
                          .varint(99, 5)
                          .varint(2, TCC_DTYPE_U8)
                          .varint(14, 0) // data_location DEFAULT
                          .bytes(9, "\x2a")
                          .str(),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.data<uint8_t>()[0], 42);
}

struct BadPb {
  const char *what;
  std::string bytes;
  tcc_status_code_t code;
  const char *message; // a part of the expected message
};

TEST(TensorIo, PbErrors) {
  const BadPb cases[] = {
      {"no data_type", Pb().varint(1, 1).str(), TCC_STATUS_INVALID_ARGUMENT,
       "no data_type"},
      {"unknown data_type", Pb().varint(2, 99).str(),
       TCC_STATUS_INVALID_ARGUMENT, "unknown data_type 99"},
      {"string", Pb().varint(2, 8).str(), TCC_STATUS_UNIMPLEMENTED,
       "data_type 8 (STRING)"},
      {"string_data", Pb().varint(2, 8).bytes(6, "hi").str(),
       TCC_STATUS_UNIMPLEMENTED, "string tensors"},
      {"external data", Pb().varint(2, 1).bytes(13, "").str(),
       TCC_STATUS_UNIMPLEMENTED, "external data"},
      {"data_location", Pb().varint(2, 1).varint(14, 1).str(),
       TCC_STATUS_UNIMPLEMENTED, "external data"},
      {"segment", Pb().bytes(3, "").str(), TCC_STATUS_UNIMPLEMENTED,
       "segmented"},
      {"negative dim", Pb().varint(1, uint64_t(-2)).varint(2, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT, "dimension 0 is negative"},
      {"overflowing dims",
       Pb().varint(1, 1ULL << 40).varint(1, 1ULL << 40).varint(2, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT, "too large"},
      // Dims that promise 2^40 floats next to 4 bytes of data: refused
      // before anything is allocated.
      {"short raw_data",
       Pb().varint(1, 1ULL << 40).varint(2, 1).bytes(9, "abcd").str(),
       TCC_STATUS_INVALID_ARGUMENT,
       "raw_data holds 4 bytes, f32[1099511627776] needs"},
      {"no data", Pb().varint(1, 3).varint(2, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT, "holds no data for f32[3]"},
      {"raw and typed",
       Pb().varint(2, 1).bytes(9, "abcd").packedFixed<float>(4, {1}).str(),
       TCC_STATUS_INVALID_ARGUMENT, "both raw_data and float_data"},
      {"two typed fields", Pb().varint(2, 1).varint(5, 1).varint(7, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT, "both int32_data and int64_data"},
      {"wrong typed field", Pb().varint(2, 1).varint(7, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT, "f32 values belong in float_data"},
      {"too few values", Pb().varint(1, 2).varint(2, 6).varint(5, 1).str(),
       TCC_STATUS_INVALID_ARGUMENT,
       "int32_data holds 1 values, i32[2] needs 2"},
      {"u8 out of range", Pb().varint(2, 2).varint(5, 256).str(),
       TCC_STATUS_INVALID_ARGUMENT, "value 256 at index 0 does not fit u8"},
      {"u32 out of range", Pb().varint(2, 12).varint(11, 1ULL << 32).str(),
       TCC_STATUS_INVALID_ARGUMENT, "does not fit u32"},
      {"field 0", std::string("\x02\x00", 2), TCC_STATUS_INVALID_ARGUMENT,
       "field number 0"},
      {"group wire type", std::string("\x0b", 1), TCC_STATUS_INVALID_ARGUMENT,
       "field 1 is truncated or has wire type 3"},
      {"data_type as bytes", Pb().bytes(2, "x").str(),
       TCC_STATUS_INVALID_ARGUMENT, "field 2"},
      {"length past the end", std::string("\x4a\xff\xff\xff\xff\x0f", 6),
       TCC_STATUS_INVALID_ARGUMENT, "field 9 is truncated"},
      {"eleven-byte varint",
       std::string("\x10") + std::string(10, '\x80') + "\x01",
       TCC_STATUS_INVALID_ARGUMENT, "field 2 is truncated"},
  };
  TempDir dir;
  for (const BadPb &c : cases) {
    SCOPED_TRACE(c.what);
    Result r = loadBytes(dir, "bad.pb", c.bytes);
    EXPECT_EQ(r.code, c.code) << r.message;
    EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("bad.pb"), std::string::npos) << r.message;
  }
}

//===----------------------------------------------------------------------===//
// .npy headers
//===----------------------------------------------------------------------===//

std::string npy(const std::string &dict, const std::string &data,
                int major = 1) {
  std::string s("\x93NUMPY", 6);
  s += char(major);
  s += '\0';
  uint32_t n = dict.size();
  s.append(reinterpret_cast<const char *>(&n), major == 1 ? 2 : 4);
  return s + dict + data;
}

TEST(TensorIo, NpyHeaderVariants) {
  TempDir dir;
  tcc::Tensor t;
  // Version 3, keys in another order, Python 2 longs, no trailing comma.
  ASSERT_EQ(loadBytes(dir, "a.npy",
                      npy("{\"shape\": (1L, 2L), 'fortran_order': False, "
                          "'descr': '<u2'}\n",
                          std::string("\x01\x00\x02\x00", 4), 3),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<uint16_t>(t), (std::vector<uint16_t>{1, 2}));
  // Byte order means nothing for one byte.
  ASSERT_EQ(loadBytes(dir, "b.npy",
                      npy("{'descr': '>u1', 'fortran_order': False, "
                          "'shape': (), }",
                          "\x07", 2),
                      &t)
                .code,
            TCC_STATUS_OK);
  EXPECT_EQ(t.rank(), 0);
}

struct BadNpy {
  const char *what;
  std::string bytes;
  tcc_status_code_t code;
  const char *message;
};

TEST(TensorIo, NpyErrors) {
  auto dict = [](const char *descr, const char *order, const char *shape) {
    return std::string("{'descr': '") + descr + "', 'fortran_order': " + order +
           ", 'shape': " + shape + ", }";
  };
  const BadNpy cases[] = {
      {"fortran order", npy(dict("<f4", "True", "(1,)"), "abcd"),
       TCC_STATUS_UNIMPLEMENTED, "Fortran-order"},
      {"complex", npy(dict("<c8", "False", "(1,)"), "abcdefgh"),
       TCC_STATUS_UNIMPLEMENTED, "descr '<c8' is not supported"},
      {"big-endian", npy(dict(">f4", "False", "(1,)"), "abcd"),
       TCC_STATUS_UNIMPLEMENTED, "descr '>f4'"},
      {"structured",
       npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }",
           "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "structured dtypes"},
      {"version 4", npy(dict("<f4", "False", "()"), "abcd", 4),
       TCC_STATUS_UNIMPLEMENTED, "version 4"},
      {"too little data", npy(dict("<f4", "False", "(2,)"), "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "holds 4 data bytes, f32[2] needs 8"},
      {"too much data", npy(dict("<f4", "False", "(1,)"), "abcdefgh"),
       TCC_STATUS_INVALID_ARGUMENT, "holds 8 data bytes"},
      {"huge shape", npy(dict("<f4", "False", "(4611686018427387904, 4)"), ""),
       TCC_STATUS_INVALID_ARGUMENT, "too large"},
      {"dim past int64",
       npy(dict("<f4", "False", "(9223372036854775808,)"), ""),
       TCC_STATUS_INVALID_ARGUMENT, "shape is not a tuple"},
      {"negative dim", npy(dict("<f4", "False", "(-1,)"), ""),
       TCC_STATUS_INVALID_ARGUMENT, "shape is not a tuple"},
      {"unknown key",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
           "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "unexpected key 'x'"},
      {"missing key", npy("{'descr': '<f4', 'shape': ()}", "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "lacks"},
      {"not a dict", npy("['descr']", ""), TCC_STATUS_INVALID_ARGUMENT,
       "does not start with '{'"},
      {"bad fortran_order", npy(dict("<f4", "0", "()"), "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "neither True nor False"},
      {"unterminated string", npy("{'descr", ""), TCC_STATUS_INVALID_ARGUMENT,
       "expected 'key'"},
      {"trailing garbage", npy(dict("<f4", "False", "()") + "x", "abcd"),
       TCC_STATUS_INVALID_ARGUMENT, "trailing characters"},
      {"header past the end", std::string("\x93NUMPY\x01\x00\xff\xff{", 11),
       TCC_STATUS_INVALID_ARGUMENT, "runs past the end"},
      {"no magic", std::string("\x93NUMPX\x01\x00\x00\x00", 10),
       TCC_STATUS_INVALID_ARGUMENT, "no \\x93NUMPY magic"},
  };
  TempDir dir;
  for (const BadNpy &c : cases) {
    SCOPED_TRACE(c.what);
    Result r = loadBytes(dir, "bad.npy", c.bytes);
    EXPECT_EQ(r.code, c.code) << r.message;
    EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message;
  }
}

//===----------------------------------------------------------------------===//
// Hostile input: truncation and random corruption must give errors, never a
// crash (run these under ASan to see more than the absence of a crash).
//===----------------------------------------------------------------------===//

std::string validFile(const TempDir &dir, const char *name) {
  tcc::Tensor t = patterned(TCC_DTYPE_I32, {3, 4});
  t.setName("some_tensor");
  t.save(dir / name);
  return readBytes(dir / name);
}

TEST(TensorIo, EveryTruncationIsAnError) {
  TempDir dir;
  for (const char *name : {"t.pb", "t.npy"}) {
    std::string bytes = validFile(dir, name);
    for (size_t n = 0; n < bytes.size(); ++n) {
      Result r = loadBytes(dir, name, bytes.substr(0, n));
      // An empty .pb is a valid TensorProto, with no data_type.
      EXPECT_NE(r.code, TCC_STATUS_OK) << name << " cut at " << n;
    }
  }
}

TEST(TensorIo, CorruptedFilesNeverCrash) {
  TempDir dir;
  std::mt19937 rng(1234);
  for (const char *name : {"t.pb", "t.npy"}) {
    std::string valid = validFile(dir, name);
    for (int i = 0; i < 1000; ++i) {
      std::string bytes = valid;
      for (int flips = 1 + rng() % 4; flips > 0; --flips)
        bytes[rng() % bytes.size()] = char(rng());
      tcc::Tensor t;
      Result r = loadBytes(dir, name, bytes, &t);
      if (r.code == TCC_STATUS_OK) {
        EXPECT_LE(t.byteSize(), 8 * bytes.size()); // a varint per element
      }
    }
  }
}

} // namespace
