//===- TccConstants.h - reading and making f32 weight constants -*- C++ -*-===//
//
// Compile-time transforms of weights (packing for the micro-kernels,
// folding a batch norm into a convolution) read constants that may be
// `dense` or `dense_resource` blobs, and make blobs of what they compute.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_IR_TCCCONSTANTS_H
#define TCC_DIALECT_TCC_IR_TCCCONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <vector>

namespace mlir::tcc {

/// The values of a constant f32 tensor, if `v` is one (`dense` or a blob).
std::optional<std::vector<float>> constantFloats(Value v);

/// A `dense_resource` blob of `type` (f32) holding `values`.
ElementsAttr floatBlob(RankedTensorType type, ArrayRef<float> values,
                       StringRef name);

} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_IR_TCCCONSTANTS_H
