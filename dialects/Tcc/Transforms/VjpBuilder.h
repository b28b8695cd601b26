//===- VjpBuilder.h - building blocks of the VJP rules ----------*- C++ -*-===//
//
// The vector-Jacobian products of tcc ops are themselves written in tcc ops.
// VjpBuilder creates them at one location with their result types inferred
// (numpy broadcasting, reductions, reshapes), so that each rule reads like
// the formula it implements.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_TRANSFORMS_VJPBUILDER_H
#define TCC_DIALECT_TCC_TRANSFORMS_VJPBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "dialects/Tcc/IR/TccOps.h"

namespace mlir::tcc {

class VjpBuilder {
public:
  VjpBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  static RankedTensorType typeOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }
  static Type elementOf(Value v) { return typeOf(v).getElementType(); }

  /// A rank-0 constant of `elementType` (broadcasts against anything).
  Value scalar(Type elementType, double value);
  /// A rank-0 constant of `like`'s element type.
  Value scalarLike(Value like, double value) {
    return scalar(elementOf(like), value);
  }
  /// A splat constant of `type`.
  Value splat(RankedTensorType type, double value);
  Value zerosLike(Value v) { return splat(typeOf(v), 0.0); }
  /// A constant of `type` holding `values` (floats converted to the element
  /// type; integers for integer types).
  Value constant(RankedTensorType type, ArrayRef<double> values);
  Value indexConstant(ArrayRef<int64_t> shape, ArrayRef<int64_t> values);

  // Elementwise ops; operands broadcast numpy-style.
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    return b.create<OpT>(loc, broadcastType(lhs, rhs, elementOf(lhs)), lhs,
                         rhs);
  }
  Value add(Value a, Value c) { return binary<AddOp>(a, c); }
  Value sub(Value a, Value c) { return binary<SubOp>(a, c); }
  Value mul(Value a, Value c) { return binary<MulOp>(a, c); }
  Value div(Value a, Value c) { return binary<DivOp>(a, c); }
  Value mul(Value a, double c) { return mul(a, scalarLike(a, c)); }
  Value add(Value a, double c) { return add(a, scalarLike(a, c)); }
  /// `c - a`.
  Value rsub(double c, Value a) { return sub(scalarLike(a, c), a); }
  template <typename OpT> Value unary(Value v) {
    return b.create<OpT>(loc, v);
  }
  Value neg(Value v) { return unary<NegOp>(v); }
  Value cmp(ComparePredicate predicate, Value lhs, Value rhs);
  Value cmp(ComparePredicate predicate, Value lhs, double rhs) {
    return cmp(predicate, lhs, scalarLike(lhs, rhs));
  }
  Value logicalAnd(Value a, Value c) { return binary<AndOp>(a, c); }
  Value logicalNot(Value a) { return unary<NotOp>(a); }
  /// `condition ? onTrue : onFalse`, all three broadcast.
  Value select(Value condition, Value onTrue, Value onFalse);
  /// `condition ? v : 0`.
  Value where(Value condition, Value v) {
    return select(condition, v, scalarLike(v, 0.0));
  }
  Value cast(Value v, Type elementType);

  // Shape ops.
  Value reshape(Value v, ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  /// Swaps the last two dimensions.
  Value transposeLast2(Value v);
  Value broadcastTo(Value v, ArrayRef<int64_t> shape);
  Value slice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> steps,
              ArrayRef<int64_t> shape);
  /// The contiguous window [begin, end) of dimension `axis`.
  Value sliceAxis(Value v, int64_t axis, int64_t begin, int64_t end);
  Value pad(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
            double value = 0.0);
  Value concat(ValueRange values, int64_t axis);
  /// Inserts `factor - 1` zeros between neighbouring elements of each
  /// dimension (the transpose of a strided read).
  Value dilate(Value v, ArrayRef<int64_t> factors);
  /// The transpose of `tcc.slice v offsets steps`: scatters `g` (the slice's
  /// shape) into zeros of `inputShape`.
  Value unslice(Value g, ArrayRef<int64_t> inputShape,
                ArrayRef<int64_t> offsets, ArrayRef<int64_t> steps);

  // Reductions and contractions.
  Value reduceSum(Value v, ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMax(Value v, ArrayRef<int64_t> axes, bool keepdims);
  /// Sums `g` over the dimensions that broadcasting added or stretched, so
  /// that it has `target`'s shape (the VJP of numpy broadcasting).
  Value sumToShape(Value g, ArrayRef<int64_t> target);
  Value matmul(Value lhs, Value rhs);
  Value conv(Value input, Value weight, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
             int64_t groups);

  /// The shape both operands broadcast to.
  static SmallVector<int64_t> broadcastShape(ArrayRef<int64_t> a,
                                             ArrayRef<int64_t> c);

private:
  RankedTensorType broadcastType(Value a, Value c, Type elementType) {
    return RankedTensorType::get(broadcastShape(shapeOf(a), shapeOf(c)),
                                 elementType);
  }

  OpBuilder &b;
  Location loc;
};

/// `shape` with the dimensions in `axes` set to 1.
SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes);
/// The inverse of a permutation.
SmallVector<int64_t> invertPermutation(ArrayRef<int64_t> perm);

} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_TRANSFORMS_VJPBUILDER_H
