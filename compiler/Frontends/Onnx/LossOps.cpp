//===- LossOps.cpp - ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropy ===//
//
// Both pick, for each position, the input's entry at the target class. The
// pick is a one-hot comparison of the target with the class ramp along
// dimension 1 and a sum over the classes, so targets equal to an
// out-of-range `ignore_index` simply pick nothing; an in-range ignore_index
// is masked explicitly. Weights are picked the same way.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// The loss from log-probabilities `x` [N, C, d...] and `target` [N, d...].
static Value nllLoss(NodeContext &ctx, Value x, Value target, Value weight) {
  std::string reduction = ctx.getString("reduction", "mean");
  bool hasIgnore = ctx.hasAttr("ignore_index");
  int64_t ignore = ctx.getInt("ignore_index", 0);
  if (ctx.hasError())
    return {};
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    (void)ctx.unsupportedValue("reduction", reduction);
    return {};
  }
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2 || shapeOf(target).size() != (size_t)rank - 1 ||
      ShapedType::isDynamic(shape[1])) {
    ctx.emitError() << "input " << shapes::str(shape) << " and target "
                    << shapes::str(shapeOf(target))
                    << " must be N x C x d... and N x d...";
    return {};
  }
  Type et = elementTypeOf(x), i64 = ctx.b.getI64Type();
  Value t = ctx.castTo(target, i64);
  SmallVector<int64_t> expanded(shapeOf(target));
  expanded.insert(expanded.begin() + 1, 1);
  Value hot = ctx.compare(ComparePredicate::eq, ctx.reshape(t, expanded),
                          ctx.iota(shape[1], i64, 1, rank));
  Value zero = ctx.scalar(et, 0);
  Value picked =
      ctx.reduce<ReduceSumOp>(ctx.select(hot, x, zero), {1}, false);
  Value w;
  if (weight) {
    SmallVector<int64_t> wShape(rank, 1);
    wShape[1] = shape[1];
    w = ctx.reduce<ReduceSumOp>(
        ctx.select(hot, ctx.reshape(weight, wShape), zero), {1}, false);
  }
  if (hasIgnore) {
    Value valid = ctx.compare(ComparePredicate::ne, t,
                              ctx.scalar(i64, (double)ignore));
    Value one = ctx.castTo(valid, et);
    w = w ? ctx.binary<MulOp>(w, one) : one;
  }
  Value loss = ctx.unary<NegOp>(picked);
  if (w)
    loss = ctx.binary<MulOp>(loss, w);
  if (reduction == "none" || !loss)
    return loss;
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  Value sum = ctx.reduce<ReduceSumOp>(loss, all, false);
  if (reduction == "sum")
    return sum;
  if (w)
    return ctx.binary<DivOp>(sum, ctx.reduce<ReduceSumOp>(w, all, false));
  return ctx.binary<DivOp>(
      sum, ctx.scalar(et, (double)shapes::numElements(shapeOf(target))));
}

static LogicalResult importNLLLoss(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value loss = nllLoss(ctx, x, ctx.input(1), ctx.input(2));
  ctx.setResult(0, loss);
  return success(loss);
}

static LogicalResult importSoftmaxCrossEntropy(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  if (shapeOf(x).size() < 2)
    return ctx.emitError() << "scores must be N x C x d...; got "
                           << shapes::str(shapeOf(x));
  Value logProb = ctx.b.create<LogSoftmaxOp>(ctx.loc, x.getType(), x, 1);
  Value loss = nllLoss(ctx, logProb, ctx.input(1), ctx.input(2));
  ctx.setResult(0, loss);
  ctx.setResult(1, logProb);
  return success(loss);
}

void mlir::tcc::onnx::registerLossOps(OpTable &t) {
  t.add("NegativeLogLikelihoodLoss", 12, 2, 3, 1, importNLLLoss);
  t.add("SoftmaxCrossEntropyLoss", 12, 2, 3, 2, importSoftmaxCrossEntropy);
}
