//===- Autodiff.h - reverse-mode differentiation of tcc ops -----*- C++ -*-===//
//
// The pieces of reverse mode that tcc-autodiff and the tracer's backward()
// share: applying one op's VJP rule (DifferentiableOpInterface) with the
// checks every caller needs, and accumulating cotangents. The pass sweeps a
// function; the tracer sweeps its recorded graph; both go through these.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TRANSFORMS_AUTODIFF_H
#define TCC_COMPILER_TRANSFORMS_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::tcc {

/// Whether a value can carry a gradient (a ranked tensor of floats).
bool isDifferentiableType(Type type);

/// Builds, at `builder`'s insertion point, the cotangents of `op`'s operands
/// from those of its results (`resultCotangents` has one entry per result,
/// null where a result does not reach the loss). `operandCotangents` gets
/// one entry per operand, null where the operand is not differentiable or
/// gets no gradient. Fails with a diagnostic on `op` when it has no VJP rule
/// or its rule fails; checks that every cotangent has its operand's type.
LogicalResult applyVjp(OpBuilder &builder, Operation *op,
                       ArrayRef<Value> resultCotangents,
                       SmallVectorImpl<Value> &operandCotangents);

/// `sum + addend`, or whichever is non-null.
Value accumulateCotangent(OpBuilder &builder, Location loc, Value sum,
                          Value addend);

/// The reverse sweep over the ops of one block, in their forward order:
/// reads the cotangents of results from `cotangents` and adds those of
/// operands to it. Only operands for which `isActive` holds (they depend on
/// what is differentiated) get cotangents, and only ops with such an operand
/// are differentiated. New ops go at `builder`'s insertion point.
LogicalResult backpropagate(OpBuilder &builder, ArrayRef<Operation *> ops,
                            DenseMap<Value, Value> &cotangents,
                            function_ref<bool(Value)> isActive);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TRANSFORMS_AUTODIFF_H
