//===- Decompose.cpp - expand composite tcc ops ---------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "dialects/Tcc/IR/TccBuilder.h"
#include "dialects/Tcc/IR/TccShapes.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCDECOMPOSE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

/// A rank-0 constant of `elementType`.
static Value scalar(PatternRewriter &rewriter, Location loc, Type elementType,
                    double value) {
  auto type = RankedTensorType::get({}, elementType);
  return rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, rewriter.getFloatAttr(elementType, value).getValue()));
}

namespace {
template <typename Op> struct DecomposeSoftmax : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    SmallVector<int64_t> axes = {op.getAxis()};
    Value max = rewriter.create<ReduceMaxOp>(loc, x, axes, true);
    Value shifted = rewriter.create<SubOp>(loc, x, max);
    Value exp = rewriter.create<ExpOp>(loc, shifted);
    Value sum = rewriter.create<ReduceSumOp>(loc, exp, axes, true);
    if constexpr (std::is_same_v<Op, SoftmaxOp>)
      rewriter.replaceOpWithNewOp<DivOp>(op, exp, sum);
    else
      rewriter.replaceOpWithNewOp<SubOp>(op, shifted,
                                         rewriter.create<LogOp>(loc, sum));
    return success();
  }
};

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    RankedTensorType type = op.getType();
    SmallVector<int64_t> axes;
    for (int64_t i = op.getAxis(); i < type.getRank(); ++i)
      axes.push_back(i);
    Value mean = rewriter.create<ReduceMeanOp>(loc, x, axes, true);
    Value centered = rewriter.create<SubOp>(loc, x, mean);
    Value squares = rewriter.create<MulOp>(loc, centered, centered);
    Value var = rewriter.create<ReduceMeanOp>(loc, squares, axes, true);
    Value eps = scalar(rewriter, loc, type.getElementType(),
                       op.getEpsilon().convertToDouble());
    Value inv =
        rewriter.create<RsqrtOp>(loc, rewriter.create<AddOp>(loc, var, eps));
    Value y = rewriter.create<MulOp>(loc, centered, inv);
    y = rewriter.create<MulOp>(loc, y, op.getScale());
    if (Value bias = op.getBias())
      y = rewriter.create<AddOp>(loc, y, bias);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// y = x * a + b with a = scale / sqrt(var + eps) and b = bias - mean * a,
/// per channel: with constant statistics a and b fold to constants.
struct DecomposeBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value eps = scalar(rewriter, loc, type.getElementType(),
                       op.getEpsilon().convertToDouble());
    Value inv = rewriter.create<RsqrtOp>(
        loc, rewriter.create<AddOp>(loc, op.getVariance(), eps));
    Value a = rewriter.create<MulOp>(loc, op.getScale(), inv);
    Value b = rewriter.create<SubOp>(
        loc, op.getBias(), rewriter.create<MulOp>(loc, op.getMean(), a));
    // [C] -> [C, 1, ..., 1] so it broadcasts along dimension 1.
    SmallVector<int64_t> channelShape(type.getRank() - 1, 1);
    channelShape[0] = type.getDimSize(1);
    auto channelType =
        RankedTensorType::get(channelShape, type.getElementType());
    Value a2 = rewriter.create<ReshapeOp>(loc, channelType, a);
    Value b2 = rewriter.create<ReshapeOp>(loc, channelType, b);
    Value y = rewriter.create<MulOp>(loc, op.getInput(), a2);
    rewriter.replaceOpWithNewOp<AddOp>(op, y, b2);
    return success();
  }
};

/// Each position picks its target's log-probability through the one-hot
/// mask (a select and a sum over the classes), so targets equal to an
/// out-of-range ignore_index pick nothing; weights multiply, then the
/// reduction sums (and for `mean` divides by the summed weights).
struct DecomposeNllLoss : OpRewritePattern<NllLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NllLossOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (type.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "the class count is dynamic");
    Location loc = op.getLoc();
    TccBuilder b(rewriter, loc);
    FailureOr<std::pair<Value, Value>> pick = op.buildPick(b);
    if (failed(pick))
      return failure();
    auto [hot, weight] = *pick;
    Value zero = scalar(rewriter, loc, type.getElementType(), 0.0);
    Value picked = rewriter.create<ReduceSumOp>(
        loc, rewriter.create<SelectOp>(loc, hot, op.getInput(), zero),
        ArrayRef<int64_t>{1}, false);
    Value loss = rewriter.create<NegOp>(loc, picked);
    if (weight)
      loss = rewriter.create<MulOp>(loc, loss, weight);
    if (op.getReduction() != LossReduction::none) {
      int64_t rank = cast<RankedTensorType>(loss.getType()).getRank();
      SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      Value sum = rewriter.create<ReduceSumOp>(loc, loss, all, false);
      loss = sum;
      if (op.getReduction() == LossReduction::mean) {
        Value count =
            weight ? rewriter.create<ReduceSumOp>(loc, weight, all, false)
                   : scalar(rewriter, loc, type.getElementType(),
                            double(shapes::numElements(
                                cast<RankedTensorType>(op.getTarget().getType())
                                    .getShape())));
        loss = rewriter.create<DivOp>(loc, sum, count);
      }
    }
    rewriter.replaceOp(op, loss);
    return success();
  }
};

struct TccDecomposePass : mlir::tcc::impl::TccDecomposeBase<TccDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTccDecompositionPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::tcc::populateTccDecompositionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSoftmax<SoftmaxOp>, DecomposeSoftmax<LogSoftmaxOp>,
               DecomposeLayerNorm, DecomposeBatchNorm, DecomposeNllLoss>(
      patterns.getContext());
}
