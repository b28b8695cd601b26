//===- LossOps.cpp - ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropy
//===//
//
// Both are tcc.nll_loss, of log-probabilities the model gives or of the
// log-softmax of its scores; tcc-decompose expands it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// The loss from log-probabilities `x` [N, C, d...] and `target` [N, d...].
static Value nllLoss(NodeContext &ctx, Value x, Value target, Value weight) {
  std::string reduction = ctx.getString("reduction", "mean");
  std::optional<int64_t> ignore;
  if (ctx.hasAttr("ignore_index"))
    ignore = ctx.getInt("ignore_index", 0);
  if (ctx.hasError())
    return {};
  std::optional<LossReduction> kind = symbolizeLossReduction(reduction);
  if (!kind) {
    (void)ctx.unsupportedValue("reduction", reduction);
    return {};
  }
  if (shapeOf(x).size() >= 2 && ShapedType::isDynamic(shapeOf(x)[1])) {
    ctx.emitError() << "the number of classes of input "
                    << shapes::str(shapeOf(x)) << " must be known";
    return {};
  }
  return ctx.check(ctx.builder().nllLoss(
      x, ctx.castTo(target, ctx.b.getI64Type()), weight, *kind, ignore));
}

static LogicalResult importNLLLoss(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value loss = nllLoss(ctx, x, ctx.input(1), ctx.input(2));
  return ctx.result(loss);
}

static LogicalResult importSoftmaxCrossEntropy(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  if (shapeOf(x).size() < 2)
    return ctx.emitError() << "scores must be N x C x d...; got "
                           << shapes::str(shapeOf(x));
  Value logProb = ctx.check(ctx.builder().softmax<LogSoftmaxOp>(x, 1));
  Value loss = nllLoss(ctx, logProb, ctx.input(1), ctx.input(2));
  ctx.setResult(0, loss);
  ctx.setResult(1, logProb);
  return success(loss);
}

void mlir::tcc::onnx::registerLossOps(OpTable &t) {
  t.add("NegativeLogLikelihoodLoss", 12, 2, 3, 1, importNLLLoss);
  t.add("SoftmaxCrossEntropyLoss", 12, 2, 3, 2, importSoftmaxCrossEntropy);
}
