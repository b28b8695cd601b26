//===- ReductionOps.cpp - ONNX reductions and arg-reductions --------------===//
//
// Reduce* take their axes as an attribute until opset 13 (ReduceSum) or 18
// (the others), then as an optional constant input together with
// `noop_with_empty_axes`. No axes means all axes, unless that flag is set.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

static LogicalResult requireNumeric(NodeContext &ctx, Value x) {
  if (!elementTypeOf(x).isInteger(1))
    return success();
  return ctx.emitError() << "input must be a numeric tensor; got "
                         << x.getType();
}

template <typename OpT, int64_t axesInputSince>
static LogicalResult importReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> axes;
  bool noop = false;
  if (ctx.opset >= axesInputSince) {
    noop = ctx.getInt("noop_with_empty_axes", 0);
    if (ctx.input(1)) {
      FailureOr<SmallVector<int64_t>> given = ctx.constInts(1);
      if (failed(given))
        return failure();
      axes = *given;
    }
  } else {
    axes = ctx.getInts("axes");
  }
  bool keepdims = ctx.getInt("keepdims", 1);
  if (ctx.hasError())
    return failure();
  if (axes.empty()) {
    if (noop) {
      ctx.setResult(0, x);
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  FailureOr<SmallVector<int64_t>> normalized = ctx.normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  // Since opset 20 ReduceMax/ReduceMin also take bools (any/all), which are
  // the max/min of 0/1 integers.
  Type et = elementTypeOf(x);
  bool viaInt = et.isInteger(1) && (std::is_same_v<OpT, ReduceMaxOp> ||
                                    std::is_same_v<OpT, ReduceMinOp>);
  if (viaInt)
    x = ctx.castTo(x,
                   IntegerType::get(et.getContext(), 8, IntegerType::Unsigned));
  if (failed(requireNumeric(ctx, x)))
    return failure();
  if (std::is_same_v<OpT, ReduceMeanOp> && failed(ctx.requireFloat(x)))
    return failure();
  FailureOr<shapes::Shape> shape =
      shapes::reduce(shapeOf(x), *normalized, keepdims, ctx.errorFn());
  if (failed(shape))
    return failure();
  auto type = RankedTensorType::get(*shape, elementTypeOf(x));
  Value y = ctx.b.createOrFold<OpT>(ctx.loc, type, x, *normalized, keepdims);
  ctx.setResult(0, viaInt ? ctx.castTo(y, et) : y);
  return success();
}

template <typename OpT> static LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  bool keepdims = ctx.getInt("keepdims", 1);
  bool last = ctx.opset >= 12 && ctx.getInt("select_last_index", 0);
  if (failed(axis) || ctx.hasError() || failed(requireNumeric(ctx, x)))
    return failure();
  FailureOr<shapes::Shape> shape =
      shapes::reduce(shapeOf(x), {*axis}, keepdims, ctx.errorFn());
  if (failed(shape))
    return failure();
  auto type = RankedTensorType::get(*shape, ctx.b.getI64Type());
  ctx.setResult(0, ctx.b.create<OpT>(ctx.loc, type, x, *axis, keepdims, last));
  return success();
}

void mlir::tcc::onnx::registerReductionOps(OpTable &t) {
  auto reduce = [&](StringRef name, OpHandler fn, int64_t axesInputSince) {
    t.add(name, 1, 1, 1, 1, fn);
    t.add(name, axesInputSince, 1, 2, 1, fn);
  };
  reduce("ReduceSum", importReduce<ReduceSumOp, 13>, 13);
  reduce("ReduceMean", importReduce<ReduceMeanOp, 18>, 18);
  reduce("ReduceMax", importReduce<ReduceMaxOp, 18>, 18);
  reduce("ReduceMin", importReduce<ReduceMinOp, 18>, 18);
  reduce("ReduceProd", importReduce<ReduceProdOp, 18>, 18);
  t.add("ArgMax", 1, 1, 1, 1, importArgReduce<ArgMaxOp>);
  t.add("ArgMin", 1, 1, 1, 1, importArgReduce<ArgMinOp>);
}
