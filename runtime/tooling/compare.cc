// compare.cc - element access and the tolerance check.
#include "tooling/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tcc::tooling {

namespace {

// Through memcpy: a tensor's data need not be aligned for T.
template <typename T> T load(const tcc::Tensor &t, int64_t i) {
  T v;
  std::memcpy(&v, t.data<char>() + i * sizeof(T), sizeof(T));
  return v;
}

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::string format(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

} // namespace

std::string describe(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string s = std::string(tcc_dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

std::vector<int64_t> shapeOf(const tcc_tensor_desc_t &d) {
  return std::vector<int64_t>(d.shape, d.shape + d.rank);
}

bool isFloat(int32_t dtype) {
  return dtype == TCC_DTYPE_F16 || dtype == TCC_DTYPE_BF16 ||
         dtype == TCC_DTYPE_F32 || dtype == TCC_DTYPE_F64;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  // Rebias the exponent (15 -> 127); all ones stays all ones, keeping
  // infinities infinite and NaN's payload.
  return fromBits(exponent == 0x1f
                      ? sign | 0x7f800000u | mantissa << 13
                      : sign | (exponent + 112) << 23 | mantissa << 13);
}

float bfloat16ToFloat(uint16_t bits) {
  return fromBits(static_cast<uint32_t>(bits) << 16);
}

double floatAt(const tcc::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case TCC_DTYPE_F16:
    return halfToFloat(load<uint16_t>(t, i));
  case TCC_DTYPE_BF16:
    return bfloat16ToFloat(load<uint16_t>(t, i));
  case TCC_DTYPE_F32:
    return load<float>(t, i);
  }
  return load<double>(t, i);
}

WideInt intAt(const tcc::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case TCC_DTYPE_U8:
  case TCC_DTYPE_BOOL:
    return load<uint8_t>(t, i);
  case TCC_DTYPE_I8:
    return load<int8_t>(t, i);
  case TCC_DTYPE_U16:
    return load<uint16_t>(t, i);
  case TCC_DTYPE_I16:
    return load<int16_t>(t, i);
  case TCC_DTYPE_I32:
    return load<int32_t>(t, i);
  case TCC_DTYPE_U32:
    return load<uint32_t>(t, i);
  case TCC_DTYPE_I64:
    return load<int64_t>(t, i);
  }
  return load<uint64_t>(t, i);
}

std::string valueAt(const tcc::Tensor &t, int64_t i) {
  if (isFloat(t.dtype()))
    return format(t.dtype() == TCC_DTYPE_F64 ? "%.17g" : "%.9g", floatAt(t, i));
  WideInt v = intAt(t, i);
  return v < 0 ? std::to_string(static_cast<int64_t>(v))
               : std::to_string(static_cast<uint64_t>(v));
}

std::vector<int64_t> position(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> pos(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    pos[d] = i % shape[d];
    i /= shape[d];
  }
  return pos;
}

CheckResult compare(const tcc::Tensor &actual, const tcc::Tensor &expected,
                    const std::string &expectedFile,
                    const Tolerance &tolerance) {
  CheckResult r;
  std::string a = describe(actual.dtype(), actual.shape());
  std::string e = describe(expected.dtype(), expected.shape());
  if (a != e) {
    r.pass = false;
    r.reason =
        std::string(actual.dtype() != expected.dtype() ? "dtype" : "shape") +
        " mismatch: the output is " + a + ", " + expectedFile + " holds " + e;
    return r;
  }
  r.elements = actual.elementCount();
  bool floats = isFloat(actual.dtype());
  for (int64_t i = 0; i < r.elements; ++i) {
    double abs, rel;
    bool ok;
    if (floats) {
      double x = floatAt(actual, i), y = floatAt(expected, i);
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
        ok = (std::isnan(x) && std::isnan(y)) || x == y;
        abs = rel = ok ? 0 : INFINITY;
      } else {
        abs = std::fabs(x - y);
        rel = abs == 0 ? 0 : abs / std::fabs(y); // inf when y is 0
        ok = abs <= tolerance.atol + tolerance.rtol * std::fabs(y);
      }
    } else {
      WideInt x = intAt(actual, i), y = intAt(expected, i);
      ok = x == y;
      abs = static_cast<double>(x > y ? x - y : y - x);
      rel = abs == 0 ? 0 : abs / std::fabs(static_cast<double>(y));
    }
    r.maxAbs = std::max(r.maxAbs, abs);
    r.maxRel = std::max(r.maxRel, rel);
    if (ok)
      continue;
    if (r.mismatches++ == 0) {
      r.first = i;
      r.actual = valueAt(actual, i);
      r.expected = valueAt(expected, i);
    }
  }
  r.pass = r.mismatches == 0;
  return r;
}

} // namespace tcc::tooling
