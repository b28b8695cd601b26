//===- RunTimeSize.h - sizes ONNX shape code knows only at run time -------===//

#ifndef TCC_COMPILER_FRONTENDS_ONNX_RUNTIMESIZE_H
#define TCC_COMPILER_FRONTENDS_ONNX_RUNTIMESIZE_H

#include <cstdint>
#include <limits>

namespace mlir::tcc::onnx {

/// What `Shape` gives for a dynamic dimension: a size known only at run
/// time. Shape code carries it through Gather, Unsqueeze, Squeeze, Slice,
/// Concat, Cast and Identity (folded on constants like any size); Reshape
/// and Expand read it as a dynamic dimension of their target. Any other op
/// reading it is an error (ModelImporter::importNode), so it never reaches
/// a computation as a number.
constexpr int64_t kRunTimeSize = std::numeric_limits<int64_t>::min() + 0x7cc;

} // namespace mlir::tcc::onnx

#endif // TCC_COMPILER_FRONTENDS_ONNX_RUNTIMESIZE_H
