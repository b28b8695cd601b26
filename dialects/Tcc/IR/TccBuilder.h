//===- TccBuilder.h - the one builder of tcc ops ----------------*- C++ -*-===//
//
// Every producer of tcc IR builds through TccBuilder: the ONNX importer, the
// VJP rules, the define-by-run tracer and the compiler's Python binding (the
// torch frontend). Result types come from the ops' own inference (the rules
// of TccShapes.h), so no producer works out a result shape by hand and the
// verifier and the builders cannot disagree.
//
// A helper whose operands may not fit (shapes that do not broadcast, element
// types that differ, a reshape to another element count, a float-only op on
// integers) reports through the builder's error function and returns
// failure(); nothing of the failed op is left in the IR. Every op it returns
// has verified. Only constants cannot fail.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_IR_TCCBUILDER_H
#define TCC_DIALECT_TCC_IR_TCCBUILDER_H

#include "dialects/Tcc/IR/TccOps.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::tcc {

/// `count` elements of `elementType` from `values` (one value splats) as
/// little-endian bytes, a byte per bool: floats round to nearest, integers
/// saturate (NaN gives 0), bools are `!= 0`.
SmallVector<char> rawElements(Type elementType, int64_t count,
                              ArrayRef<double> values);

class TccBuilder {
public:
  TccBuilder(OpBuilder &builder, Location loc);

  OpBuilder &builder() const { return b; }
  MLIRContext *getContext() const { return b.getContext(); }
  Location getLoc() const { return loc; }
  void setLoc(Location l) { loc = l; }

  //===--- Configuration --------------------------------------------------===//
  /// How failures are reported (by default `mlir::emitError(loc)`). A
  /// frontend prefixes its own context here (the model node, the aten op);
  /// errors from the ops' inference are reported through it without the
  /// op's name, which that context replaces.
  void setErrorFn(std::function<InFlightDiagnostic()> fn) {
    errorFn = std::move(fn);
  }
  /// A check of every result type before its op is made (e.g. a frontend's
  /// size limits); it reports its own error.
  void setTypeCheck(std::function<LogicalResult(RankedTensorType)> fn) {
    typeCheck = std::move(fn);
  }
  /// Whether ops are folded as they are made (on by default: shape
  /// computations in a model become constants while it is imported).
  void setFolding(bool on) { folding = on; }
  InFlightDiagnostic emitError() const;

  //===--- Any op ---------------------------------------------------------===//
  /// Makes op `name` from `operands` and `attributes` (inherent ones become
  /// its properties) with `resultTypes`, or with the types it infers when
  /// none are given (InferTypeOpInterface, or the operand's type for
  /// SameOperandsAndResultType ops). The op is verified and, when folding is
  /// on, folded; gives its results or what they folded to.
  FailureOr<SmallVector<Value>> create(StringRef name, ValueRange operands,
                                       ArrayRef<NamedAttribute> attributes = {},
                                       TypeRange resultTypes = {});
  /// The single result of a typed op made as create() makes it.
  template <typename OpT>
  FailureOr<Value> build(ValueRange operands,
                         ArrayRef<NamedAttribute> attributes = {},
                         TypeRange resultTypes = {}) {
    FailureOr<SmallVector<Value>> results =
        create(OpT::getOperationName(), operands, attributes, resultTypes);
    if (failed(results))
      return failure();
    return results->front();
  }
  NamedAttribute attr(StringRef name, Attribute value) const {
    return b.getNamedAttr(name, value);
  }

  //===--- Constants ------------------------------------------------------===//
  Value constant(ElementsAttr value);
  /// A constant of `shape` and `elementType` holding `values` row-major (one
  /// value splats), converted from double: floats round to nearest, integers
  /// saturate, bools are `!= 0`.
  Value constant(ArrayRef<int64_t> shape, Type elementType,
                 ArrayRef<double> values);
  /// A rank-0 constant (broadcasts against anything).
  Value scalar(Type elementType, double value) {
    return constant({}, elementType, {value});
  }
  Value scalarLike(Value like, double value);
  Value splat(RankedTensorType type, double value) {
    return constant(type.getShape(), type.getElementType(), {value});
  }
  Value zerosLike(Value v);
  /// [0, 1, ..., n-1] of `elementType`, shaped to `rank` dimensions with the
  /// n values along `axis` (the others are 1).
  Value iota(int64_t n, Type elementType, int64_t axis = 0, int64_t rank = 1);

  //===--- Elementwise ----------------------------------------------------===//
  /// A binary op of operands of one element type, broadcast numpy-style.
  template <typename OpT> FailureOr<Value> binary(Value lhs, Value rhs) {
    if (failed(checkSameElementType(lhs, rhs)))
      return failure();
    return build<OpT>({lhs, rhs});
  }
  template <typename OpT> FailureOr<Value> unary(Value v) {
    return build<OpT>({v});
  }
  FailureOr<Value> compare(ComparePredicate predicate, Value lhs, Value rhs);
  /// `min(max(v, min), max)`; either bound may be absent.
  FailureOr<Value> clamp(Value v, std::optional<double> min,
                         std::optional<double> max);
  FailureOr<Value> select(Value condition, Value onTrue, Value onFalse);
  /// `v` converted to `elementType` (itself when it already is).
  FailureOr<Value> cast(Value v, Type elementType);

  //===--- Shapes ---------------------------------------------------------===//
  /// The same elements in `shape` (itself when the shape is the same).
  FailureOr<Value> reshape(Value v, ArrayRef<int64_t> shape);
  FailureOr<Value> transpose(Value v, ArrayRef<int64_t> perm);
  FailureOr<Value> broadcastTo(Value v, ArrayRef<int64_t> shape);
  FailureOr<Value> concat(ValueRange values, int64_t axis);
  /// Elements `offsets[i] + k * steps[i]` for k < sizes[i].
  FailureOr<Value> slice(Value v, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> steps, ArrayRef<int64_t> sizes);
  /// `size` elements from `start` with `step` along `axis`.
  FailureOr<Value> sliceAxis(Value v, int64_t axis, int64_t start, int64_t size,
                             int64_t step = 1);
  FailureOr<Value> gather(Value data, Value indices, int64_t axis);
  FailureOr<Value> pad(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                       double value = 0.0, PadMode mode = PadMode::constant);

  //===--- Reductions, contractions, normalizations -----------------------===//
  /// A reduction over sorted, unique `axes`.
  template <typename OpT>
  FailureOr<Value> reduce(Value v, ArrayRef<int64_t> axes, bool keepdims) {
    return build<OpT>({v},
                      withFlags({attr("axes", b.getDenseI64ArrayAttr(axes))},
                                {{"keepdims", keepdims}}));
  }
  /// The index of the largest (argmax) or smallest element along `axis`.
  template <typename OpT>
  FailureOr<Value> argReduce(Value v, int64_t axis, bool keepdims,
                             bool selectLastIndex = false) {
    return build<OpT>({v}, withFlags({attr("axis", b.getI64IntegerAttr(axis))},
                                     {{"keepdims", keepdims},
                                      {"select_last_index", selectLastIndex}}));
  }
  /// A running sum or product along `axis`.
  template <typename OpT>
  FailureOr<Value> cumulative(Value v, int64_t axis, bool exclusive,
                              bool reverse) {
    return build<OpT>(
        {v}, withFlags({attr("axis", b.getI64IntegerAttr(axis))},
                       {{"exclusive", exclusive}, {"reverse", reverse}}));
  }
  /// Max or average pooling; `padding` is begins then ends.
  template <typename OpT>
  FailureOr<Value> pool(Value v, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                        ArrayRef<int64_t> dilations, bool ceilMode,
                        bool countIncludePad = false) {
    return build<OpT>(
        {v}, withFlags({attr("kernel", b.getDenseI64ArrayAttr(kernel)),
                        attr("strides", b.getDenseI64ArrayAttr(strides)),
                        attr("padding", b.getDenseI64ArrayAttr(padding)),
                        attr("dilations", b.getDenseI64ArrayAttr(dilations))},
                       {{"ceil_mode", ceilMode},
                        {"count_include_pad", countIncludePad}}));
  }
  /// Sums `g` over the dimensions that broadcasting added or stretched so
  /// that it has shape `target` (the transpose of numpy broadcasting).
  FailureOr<Value> sumToShape(Value g, ArrayRef<int64_t> target);
  FailureOr<Value> matmul(Value lhs, Value rhs);
  FailureOr<Value> conv(Value input, Value weight, Value bias,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                        ArrayRef<int64_t> dilations, int64_t groups);
  /// Softmax or log-softmax along `axis`.
  template <typename OpT> FailureOr<Value> softmax(Value v, int64_t axis) {
    return build<OpT>({v}, {attr("axis", b.getI64IntegerAttr(axis))});
  }
  /// The negative log-likelihood of log-probabilities `input` (N x C x d...)
  /// at `target` (N x d...), weighted by `weight` (C) when given.
  FailureOr<Value> nllLoss(Value input, Value target, Value weight,
                           LossReduction reduction,
                           std::optional<int64_t> ignoreIndex);

private:
  /// `attrs` and a unit attribute for each flag that is set.
  SmallVector<NamedAttribute>
  withFlags(SmallVector<NamedAttribute> attrs,
            std::initializer_list<std::pair<StringRef, bool>> flags) const {
    for (auto [name, on] : flags)
      if (on)
        attrs.push_back(attr(name, b.getUnitAttr()));
    return attrs;
  }
  LogicalResult checkSameElementType(Value lhs, Value rhs);
  LogicalResult checkResultType(Type type);

  OpBuilder &b;
  Location loc;
  std::function<InFlightDiagnostic()> errorFn;
  std::function<LogicalResult(RankedTensorType)> typeCheck;
  bool folding = true;
};

} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_IR_TCCBUILDER_H
