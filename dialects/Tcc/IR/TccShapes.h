//===- TccShapes.h - shape rules of tcc ops ---------------------*- C++ -*-===//
//
// The one place that knows how each op's result shape follows from its
// operands and attributes. The verifiers check types against these rules and
// the frontends use them to infer result types, so the two never disagree.
// Dynamic dimensions (ShapedType::kDynamic) propagate; checks that need a
// dynamic size are skipped.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_IR_TCCSHAPES_H
#define TCC_DIALECT_TCC_IR_TCCSHAPES_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::tcc::shapes {

using Shape = llvm::SmallVector<int64_t, 6>;
/// Emits a diagnostic for a shape error; the caller appends the reason.
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// numpy broadcasting of several shapes.
FailureOr<Shape> broadcast(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                           EmitErrorFn emitError);
/// True when `from` broadcasts to exactly `to`.
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);
/// numpy.matmul.
FailureOr<Shape> matmul(llvm::ArrayRef<int64_t> lhs,
                        llvm::ArrayRef<int64_t> rhs, EmitErrorFn emitError);
/// N-d grouped convolution; `padding` is begins then ends.
FailureOr<Shape>
conv(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> weight,
     llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> padding,
     llvm::ArrayRef<int64_t> dilations, int64_t groups, EmitErrorFn emitError);
/// Max and average pooling.
FailureOr<Shape>
pool(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
     llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> padding,
     llvm::ArrayRef<int64_t> dilations, bool ceilMode, EmitErrorFn emitError);
/// Output size of one pooled dimension (ONNX rules, including ceil_mode's
/// "the last window starts inside the input" rule).
int64_t pooledSize(int64_t size, int64_t kernel, int64_t stride,
                   int64_t padBegin, int64_t padEnd, int64_t dilation,
                   bool ceilMode);
/// Reductions over sorted unique axes.
FailureOr<Shape> reduce(llvm::ArrayRef<int64_t> input,
                        llvm::ArrayRef<int64_t> axes, bool keepdims,
                        EmitErrorFn emitError);
FailureOr<Shape> transpose(llvm::ArrayRef<int64_t> input,
                           llvm::ArrayRef<int64_t> perm, EmitErrorFn emitError);
FailureOr<Shape> concat(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs,
                        int64_t axis, EmitErrorFn emitError);
FailureOr<Shape> gather(llvm::ArrayRef<int64_t> data,
                        llvm::ArrayRef<int64_t> indices, int64_t axis,
                        EmitErrorFn emitError);
FailureOr<Shape> pad(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> low,
                     llvm::ArrayRef<int64_t> high, EmitErrorFn emitError);

/// The largest `a` such that `reduced` is `full` with dimensions [a, rank)
/// set to 1 (a row of `full` split at `a` has one value), or -1 when
/// `reduced` is not of that form or equals `full`.
int64_t rowSplit(llvm::ArrayRef<int64_t> full, llvm::ArrayRef<int64_t> reduced);

/// "2x?x4" (or "scalar" for rank 0), for diagnostics.
std::string str(llvm::ArrayRef<int64_t> shape);

/// Product of the dimensions, or kDynamic if any is dynamic.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::tcc::shapes

#endif // TCC_DIALECT_TCC_IR_TCCSHAPES_H
