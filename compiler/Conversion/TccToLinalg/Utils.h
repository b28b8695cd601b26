//===- Utils.h - helpers shared by the tcc -> linalg patterns ---*- C++ -*-===//

#ifndef TCC_COMPILER_CONVERSION_TCCTOLINALG_UTILS_H
#define TCC_COMPILER_CONVERSION_TCCTOLINALG_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::tcc {

/// The map that reads an operand of `operandShape`, broadcast numpy-style,
/// at the iteration point of a loop nest over `resultShape`: trailing
/// dimensions align, and size-1 dimensions that stretch read index 0.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape);

/// An uninitialised tensor of `type` (static shapes only).
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value value);

/// A scalar constant of `type` (float or integer) holding `value`. An
/// unsigned `type` gives a constant of the signless type of the same width
/// (arith works on signless integers).
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// The lowest / highest value of a numeric element type (-inf / +inf for
/// floats, the unsigned range for unsigned integers), as the start of a max /
/// min reduction; the constant is signless.
Value lowestValue(OpBuilder &b, Location loc, Type type);
Value highestValue(OpBuilder &b, Location loc, Type type);

/// `type` with unsigned integers replaced by the signless integers of the
/// same width: what the lowering produces, as linalg and arith only take
/// signless integers. The signedness stays known from the tcc op's types.
Type signlessType(Type type);
/// The signless form of a ranked tensor type (see signlessType).
RankedTensorType signlessTensor(Type type);
/// Whether `type` (or its element type) is an unsigned integer.
bool isUnsignedInt(Type type);

/// The type converter of the lowering: unsigned integers (and tensors of
/// them) become signless. Patterns that take it see signless operands.
const TypeConverter &signlessConverter();

/// `value` in row-major order with `type`'s shape, as views (collapse to 1-D,
/// then expand).
Value reshapeTensor(OpBuilder &b, Location loc, Value value,
                    RankedTensorType type);

/// Pads with a constant on both sides of every dimension (low/high per
/// dimension); returns `value` itself when all pads are zero.
Value padTensor(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue);

/// Fails (with a diagnostic at the op) unless every tensor the op touches has
/// a static shape and a signless element type: what the CPU lowering
/// supports today.
LogicalResult checkLowerable(Operation *op);

/// Gives zero-element tensors at the function boundary one element: the
/// LLVM lowering describes each boundary buffer by a bare pointer and cannot
/// do so for a memref without elements. Inputs are never read (an empty
/// tensor stands in for them inside) and outputs never written (they are
/// fresh allocations, which become the caller's buffers).
void padEmptyInterface(func::FuncOp func);

/// Every iterator parallel.
SmallVector<utils::IteratorType> parallelIterators(unsigned n);

/// A tensor of `type` whose element at index i is `input`'s element at
/// `inputMap`(i): broadcasts, strided and reversed reads, re-layouts.
Value gatherThroughMap(OpBuilder &b, Location loc, Value input,
                       RankedTensorType type, AffineMap inputMap);

} // namespace mlir::tcc

#endif // TCC_COMPILER_CONVERSION_TCCTOLINALG_UTILS_H
