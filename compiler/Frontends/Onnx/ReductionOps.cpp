//===- ReductionOps.cpp - ONNX reductions and arg-reductions --------------===//
//
// Reduce* take their axes as an attribute until opset 13 (ReduceSum) or 18
// (the others), then as an optional constant input together with
// `noop_with_empty_axes`. No axes means all axes, unless that flag is set.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

static LogicalResult requireNumeric(NodeContext &ctx, Value x) {
  if (!elementTypeOf(x).isInteger(1))
    return success();
  return ctx.emitError() << "input must be a numeric tensor; got "
                         << x.getType();
}

/// What a Reduce* node asks: its axes (an attribute before
/// `axesInputSince`, then an optional constant input; none means all),
/// keepdims, and `noop` when no axes and `noop_with_empty_axes` ask for the
/// input unchanged.
struct ReduceAttrs {
  SmallVector<int64_t> axes;
  bool keepdims = true, noop = false;
};
static FailureOr<ReduceAttrs> readReduce(NodeContext &ctx, Value x,
                                         int64_t axesInputSince) {
  int64_t rank = shapeOf(x).size();
  ReduceAttrs r;
  if (ctx.opset >= axesInputSince) {
    r.noop = ctx.getInt("noop_with_empty_axes", 0);
    if (ctx.input(1)) {
      FailureOr<SmallVector<int64_t>> given = ctx.constInts(1);
      if (failed(given))
        return failure();
      r.axes = *given;
    }
  } else {
    r.axes = ctx.getInts("axes");
  }
  r.keepdims = ctx.getInt("keepdims", 1);
  if (ctx.hasError())
    return failure();
  if (r.axes.empty()) {
    r.axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    return r;
  }
  r.noop = false;
  FailureOr<SmallVector<int64_t>> axes = ctx.normalizeAxes(r.axes, rank);
  if (failed(axes))
    return failure();
  r.axes = *axes;
  return r;
}

template <typename OpT, int64_t axesInputSince>
static LogicalResult importReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<ReduceAttrs> r = readReduce(ctx, x, axesInputSince);
  if (failed(r))
    return failure();
  if (r->noop) {
    ctx.setResult(0, x);
    return success();
  }
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
  Value y = ctx.reduce<OpT>(x, r->axes, r->keepdims);
  ctx.setResult(0, viaInt ? ctx.castTo(y, et) : y);
  return success(y);
}

enum class Composite { L1, L2, LogSum, LogSumExp, SumSquare };

/// The reductions that are a sum between elementwise steps.
template <Composite kind, int64_t axesInputSince>
static LogicalResult importCompositeReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<ReduceAttrs> r = readReduce(ctx, x, axesInputSince);
  if (failed(r) || failed(requireNumeric(ctx, x)))
    return failure();
  auto &[axes, keepdims, noop] = *r;
  if (kind != Composite::L1 && kind != Composite::SumSquare &&
      failed(ctx.requireFloat(x)))
    return failure();
  Value y;
  switch (kind) {
  case Composite::L1:
    y = ctx.unary<AbsOp>(x);
    break;
  case Composite::L2:
  case Composite::SumSquare:
    y = ctx.binary<MulOp>(x, x);
    break;
  case Composite::LogSum:
    y = x;
    break;
  case Composite::LogSumExp: {
    // log(sum(exp(x - m))) + m with m the maximum (0 where it is infinite).
    if (noop) {
      y = ctx.unary<LogOp>(ctx.unary<ExpOp>(x));
      break;
    }
    Value m = ctx.reduce<ReduceMaxOp>(x, axes, true);
    Value finite = ctx.compare(ComparePredicate::lt, ctx.unary<AbsOp>(m),
                               ctx.scalarLike(x, INFINITY));
    m = ctx.select(finite, m, ctx.scalarLike(x, 0));
    Value s = ctx.reduce<ReduceSumOp>(ctx.unary<ExpOp>(ctx.binary<SubOp>(x, m)),
                                      axes, true);
    y = ctx.binary<AddOp>(ctx.unary<LogOp>(s), m);
    if (!keepdims && y) {
      FailureOr<shapes::Shape> shape =
          shapes::reduce(shapeOf(x), axes, false, ctx.errorFn());
      if (failed(shape))
        return failure();
      y = ctx.reshape(y, *shape);
    }
    return ctx.result(y);
  }
  }
  if (!noop)
    y = ctx.reduce<ReduceSumOp>(y, axes, keepdims);
  if (kind == Composite::L2)
    y = ctx.unary<SqrtOp>(y);
  else if (kind == Composite::LogSum)
    y = ctx.unary<LogOp>(y);
  return ctx.result(y);
}

template <typename OpT> static LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  bool keepdims = ctx.getInt("keepdims", 1);
  bool last = ctx.opset >= 12 && ctx.getInt("select_last_index", 0);
  if (failed(axis) || ctx.hasError() || failed(requireNumeric(ctx, x)))
    return failure();
  ctx.setResult(
      0, ctx.check(ctx.builder().argReduce<OpT>(x, *axis, keepdims, last)));
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
  reduce("ReduceL1", importCompositeReduce<Composite::L1, 18>, 18);
  reduce("ReduceL2", importCompositeReduce<Composite::L2, 18>, 18);
  reduce("ReduceLogSum", importCompositeReduce<Composite::LogSum, 18>, 18);
  reduce("ReduceLogSumExp", importCompositeReduce<Composite::LogSumExp, 18>,
         18);
  reduce("ReduceSumSquare", importCompositeReduce<Composite::SumSquare, 18>,
         18);
  t.add("ArgMax", 1, 1, 1, 1, importArgReduce<ArgMaxOp>);
  t.add("ArgMin", 1, 1, 1, 1, importArgReduce<ArgMinOp>);
}
