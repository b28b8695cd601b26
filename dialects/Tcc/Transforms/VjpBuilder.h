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

#include "dialects/Tcc/IR/TccBuilder.h"

namespace mlir::tcc {

/// TccBuilder for rules that build from verified ops: an op that cannot be
/// built is a bug in a rule, so these give plain Values. Nothing is folded,
/// so a gradient graph reads as its rules wrote it.
class VjpBuilder {
public:
  VjpBuilder(OpBuilder &builder, Location loc) : tb(builder, loc) {
    tb.setFolding(false);
  }

  OpBuilder &builder() { return tb.builder(); }
  /// The builder underneath, for helpers shared with other producers.
  TccBuilder &tcc() { return tb; }
  Location location() const { return tb.getLoc(); }

  static RankedTensorType typeOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }
  static Type elementOf(Value v) { return typeOf(v).getElementType(); }

  /// A rank-0 constant of `elementType` (broadcasts against anything).
  Value scalar(Type elementType, double value) {
    return tb.scalar(elementType, value);
  }
  /// A rank-0 constant of `like`'s element type.
  Value scalarLike(Value like, double value) {
    return tb.scalarLike(like, value);
  }
  /// A splat constant of `type`.
  Value splat(RankedTensorType type, double value) {
    return tb.splat(type, value);
  }
  Value zerosLike(Value v) { return tb.zerosLike(v); }
  /// A constant of `type` holding `values` (converted to the element type).
  Value constant(RankedTensorType type, ArrayRef<double> values) {
    return tb.constant(type.getShape(), type.getElementType(), values);
  }
  Value indexConstant(ArrayRef<int64_t> shape, ArrayRef<int64_t> values);

  // Elementwise ops; operands broadcast numpy-style.
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    return expect(tb.binary<OpT>(lhs, rhs));
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
    return expect(tb.unary<OpT>(v));
  }
  Value neg(Value v) { return unary<NegOp>(v); }
  Value cmp(ComparePredicate predicate, Value lhs, Value rhs) {
    return expect(tb.compare(predicate, lhs, rhs));
  }
  Value cmp(ComparePredicate predicate, Value lhs, double rhs) {
    return cmp(predicate, lhs, scalarLike(lhs, rhs));
  }
  Value logicalAnd(Value a, Value c) { return binary<AndOp>(a, c); }
  Value logicalNot(Value a) { return unary<NotOp>(a); }
  /// `condition ? onTrue : onFalse`, all three broadcast.
  Value select(Value condition, Value onTrue, Value onFalse) {
    return expect(tb.select(condition, onTrue, onFalse));
  }
  /// `condition ? v : 0`.
  Value where(Value condition, Value v) {
    return select(condition, v, scalarLike(v, 0.0));
  }
  Value cast(Value v, Type elementType) {
    return expect(tb.cast(v, elementType));
  }

  // Shape ops.
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return expect(tb.reshape(v, shape));
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return expect(tb.transpose(v, perm));
  }
  /// Swaps the last two dimensions.
  Value transposeLast2(Value v);
  Value broadcastTo(Value v, ArrayRef<int64_t> shape) {
    return expect(tb.broadcastTo(v, shape));
  }
  Value slice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> steps,
              ArrayRef<int64_t> shape) {
    return expect(tb.slice(v, offsets, steps, shape));
  }
  /// The contiguous window [begin, end) of dimension `axis`.
  Value sliceAxis(Value v, int64_t axis, int64_t begin, int64_t end) {
    return expect(tb.sliceAxis(v, axis, begin, end - begin));
  }
  Value pad(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
            double value = 0.0) {
    return expect(tb.pad(v, low, high, value));
  }
  Value concat(ValueRange values, int64_t axis) {
    return expect(tb.concat(values, axis));
  }
  Value gather(Value data, Value indices, int64_t axis) {
    return expect(tb.gather(data, indices, axis));
  }
  /// Inserts `factor - 1` zeros between neighbouring elements of each
  /// dimension (the transpose of a strided read).
  Value dilate(Value v, ArrayRef<int64_t> factors);
  /// The transpose of `tcc.slice v offsets steps`: scatters `g` (the slice's
  /// shape) into zeros of `inputShape`.
  Value unslice(Value g, ArrayRef<int64_t> inputShape,
                ArrayRef<int64_t> offsets, ArrayRef<int64_t> steps);

  // Reductions and contractions.
  Value reduceSum(Value v, ArrayRef<int64_t> axes, bool keepdims) {
    return axes.empty() ? v : expect(tb.reduce<ReduceSumOp>(v, axes, keepdims));
  }
  Value reduceMax(Value v, ArrayRef<int64_t> axes, bool keepdims) {
    return axes.empty() ? v : expect(tb.reduce<ReduceMaxOp>(v, axes, keepdims));
  }
  /// Sums `g` over the dimensions that broadcasting added or stretched, so
  /// that it has `target`'s shape (the VJP of numpy broadcasting).
  Value sumToShape(Value g, ArrayRef<int64_t> target) {
    return expect(tb.sumToShape(g, target));
  }
  Value matmul(Value lhs, Value rhs) { return expect(tb.matmul(lhs, rhs)); }
  Value conv(Value input, Value weight, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
             int64_t groups) {
    return expect(
        tb.conv(input, weight, Value(), strides, padding, dilations, groups));
  }
  /// Any other op, by the one builder.
  template <typename OpT>
  Value build(ValueRange operands, ArrayRef<NamedAttribute> attributes = {},
              TypeRange resultTypes = {}) {
    return expect(tb.build<OpT>(operands, attributes, resultTypes));
  }
  NamedAttribute attr(StringRef name, Attribute value) const {
    return tb.attr(name, value);
  }

private:
  /// An op built from operands of verified ops; failing is a bug in a rule.
  static Value expect(FailureOr<Value> v);

  TccBuilder tb;
};

/// `shape` with the dimensions in `axes` set to 1.
SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes);
/// The inverse of a permutation.
SmallVector<int64_t> invertPermutation(ArrayRef<int64_t> perm);

} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_TRANSFORMS_VJPBUILDER_H
