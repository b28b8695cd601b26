//===- Decompose.cpp - expand composite tcc ops ---------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "dialects/Tcc/IR/TccOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCDECOMPOSE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

/// `type` with the dimensions in `axes` set to 1 (keepdims reductions).
static RankedTensorType keptType(RankedTensorType type,
                                 ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t a : axes)
    shape[a] = 1;
  return RankedTensorType::get(shape, type.getElementType());
}

/// A rank-0 constant of `elementType`.
static Value scalar(PatternRewriter &rewriter, Location loc, Type elementType,
                    double value) {
  auto type = RankedTensorType::get({}, elementType);
  return rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, rewriter.getFloatAttr(elementType, value).getValue()));
}

namespace {
template <typename Op>
struct DecomposeSoftmax : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> axes = {op.getAxis()};
    auto rowType = keptType(type, axes);
    Value max = rewriter.create<ReduceMaxOp>(loc, rowType, x, axes, true);
    Value shifted = rewriter.create<SubOp>(loc, type, x, max);
    Value exp = rewriter.create<ExpOp>(loc, shifted);
    Value sum = rewriter.create<ReduceSumOp>(loc, rowType, exp, axes, true);
    if constexpr (std::is_same_v<Op, SoftmaxOp>)
      rewriter.replaceOpWithNewOp<DivOp>(op, type, exp, sum);
    else
      rewriter.replaceOpWithNewOp<SubOp>(op, type, shifted,
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
    auto statType = keptType(type, axes);
    Value mean = rewriter.create<ReduceMeanOp>(loc, statType, x, axes, true);
    Value centered = rewriter.create<SubOp>(loc, type, x, mean);
    Value squares = rewriter.create<MulOp>(loc, type, centered, centered);
    Value var = rewriter.create<ReduceMeanOp>(loc, statType, squares, axes,
                                              true);
    Value eps = scalar(rewriter, loc, type.getElementType(),
                       op.getEpsilon().convertToDouble());
    Value inv = rewriter.create<RsqrtOp>(
        loc, rewriter.create<AddOp>(loc, statType, var, eps));
    Value y = rewriter.create<MulOp>(loc, type, centered, inv);
    y = rewriter.create<MulOp>(loc, type, y, op.getScale());
    if (Value bias = op.getBias())
      y = rewriter.create<AddOp>(loc, type, y, bias);
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
    auto paramType = cast<RankedTensorType>(op.getScale().getType());
    Value eps = scalar(rewriter, loc, type.getElementType(),
                       op.getEpsilon().convertToDouble());
    Value inv = rewriter.create<RsqrtOp>(
        loc, rewriter.create<AddOp>(loc, paramType, op.getVariance(), eps));
    Value a = rewriter.create<MulOp>(loc, paramType, op.getScale(), inv);
    Value b = rewriter.create<SubOp>(
        loc, paramType, op.getBias(),
        rewriter.create<MulOp>(loc, paramType, op.getMean(), a));
    // [C] -> [C, 1, ..., 1] so it broadcasts along dimension 1.
    SmallVector<int64_t> channelShape(type.getRank() - 1, 1);
    channelShape[0] = type.getDimSize(1);
    auto channelType =
        RankedTensorType::get(channelShape, type.getElementType());
    Value a2 = rewriter.create<ReshapeOp>(loc, channelType, a);
    Value b2 = rewriter.create<ReshapeOp>(loc, channelType, b);
    Value y = rewriter.create<MulOp>(loc, type, op.getInput(), a2);
    rewriter.replaceOpWithNewOp<AddOp>(op, type, y, b2);
    return success();
  }
};

struct TccDecomposePass
    : mlir::tcc::impl::TccDecomposeBase<TccDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTccDecompositionPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::tcc::populateTccDecompositionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSoftmax<SoftmaxOp>, DecomposeSoftmax<LogSoftmaxOp>,
               DecomposeLayerNorm, DecomposeBatchNorm>(patterns.getContext());
}
