// compare.h - tensor elements of any dtype, and the tolerance check.
#ifndef TCC_RUNTIME_TOOLING_COMPARE_H
#define TCC_RUNTIME_TOOLING_COMPARE_H

#include "tcc/runtime.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::tooling {

/// "f32[2x3]": a dtype and shape as messages and reports write them.
std::string describe(int32_t dtype, const std::vector<int64_t> &shape);

/// The shape of a model's input or output.
std::vector<int64_t> shapeOf(const tcc_tensor_desc_t &desc);

/// Whether `dtype` is a floating-point type (f16, bf16, f32, f64).
bool isFloat(int32_t dtype);

/// An IEEE half (binary16) given by its bits, subnormals, infinities and
/// NaN included.
float halfToFloat(uint16_t bits);

/// A bfloat16 given by its bits: the upper half of an f32.
float bfloat16ToFloat(uint16_t bits);

/// Element `i` (flat, row-major) of a floating-point tensor.
double floatAt(const tcc::Tensor &t, int64_t i);

/// Wide enough for every integer dtype, u64 and i64 alike, so that integers
/// compare exactly.
using WideInt = __int128;

/// Element `i` of an integer or bool tensor.
WideInt intAt(const tcc::Tensor &t, int64_t i);

/// Element `i` as reports print it: floats with enough digits to tell
/// neighbouring values apart (9 for f32 and narrower, 17 for f64), integers
/// exactly.
std::string valueAt(const tcc::Tensor &t, int64_t i);

/// The position of flat index `i` in a row-major tensor of `shape`.
std::vector<int64_t> position(const std::vector<int64_t> &shape, int64_t i);

/// --check's tolerances.
struct Tolerance {
  double rtol = 1e-3, atol = 1e-7;
};

/// The outcome of comparing one output with its expected tensor.
struct CheckResult {
  bool pass = true;
  /// Set when the dtypes or shapes differ and nothing was compared.
  std::string reason;
  double maxAbs = 0, maxRel = 0;
  int64_t mismatches = 0, elements = 0;
  int64_t first = -1;           ///< flat index of the first mismatch, or -1
  std::string actual, expected; ///< the values at `first` (see valueAt)
};

/// Compares `actual` with `expected` (read from `expectedFile`, which the
/// mismatch reason names). Floats match when |a - b| <= atol + rtol * |b|,
/// except that NaN matches only NaN and an infinity only the same infinity
/// (a non-finite mismatch counts as an infinite error); integers and bools
/// must be equal. The relative error against an expected 0 is infinite, as
/// in numpy.testing.assert_allclose.
CheckResult compare(const tcc::Tensor &actual, const tcc::Tensor &expected,
                    const std::string &expectedFile,
                    const Tolerance &tolerance);

} // namespace tcc::tooling

#endif // TCC_RUNTIME_TOOLING_COMPARE_H
