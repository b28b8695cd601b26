//===- VjpReductions.cpp - VJP rules of reductions, norms and scans -------===//

#include "dialects/Tcc/Transforms/VjpRules.h"

#include "dialects/Tcc/IR/TccShapes.h"

using namespace mlir;
using namespace mlir::tcc;

using P = ComparePredicate;

namespace {

/// The cotangent of a reduction's result with the reduced axes kept as 1.
template <typename OpT> Value keptCotangent(OpT op, VjpBuilder &b, Value g) {
  return b.reshape(g,
                   keptShape(VjpBuilder::shapeOf(op.getInput()), op.getAxes()));
}

LogicalResult vjpReduceSum(ReduceSumOp op, VjpBuilder &b, ValueRange ct,
                           MutableArrayRef<Value> out) {
  out[0] = b.broadcastTo(keptCotangent(op, b, ct[0]),
                         VjpBuilder::shapeOf(op.getInput()));
  return success();
}

LogicalResult vjpReduceMean(ReduceMeanOp op, VjpBuilder &b, ValueRange ct,
                            MutableArrayRef<Value> out) {
  ArrayRef<int64_t> shape = VjpBuilder::shapeOf(op.getInput());
  int64_t count = 1;
  for (int64_t a : op.getAxes())
    count *= shape[a];
  Value g = keptCotangent(op, b, ct[0]);
  if (count > 0)
    g = b.mul(g, 1.0 / double(count));
  out[0] = b.broadcastTo(g, shape);
  return success();
}

/// The extreme elements share the gradient evenly (PyTorch's amax/amin).
template <typename OpT>
LogicalResult vjpReduceExtreme(OpT op, VjpBuilder &b, ValueRange ct,
                               MutableArrayRef<Value> out) {
  Value x = op.getInput();
  if (!isa<FloatType>(VjpBuilder::elementOf(x)))
    return success();
  Value y = keptCotangent(op, b, op.getResult());
  Value g = keptCotangent(op, b, ct[0]);
  Value mask = b.cast(b.cmp(P::eq, x, y), VjpBuilder::elementOf(x));
  Value count = b.reduceSum(mask, op.getAxes(), /*keepdims=*/true);
  out[0] = b.mul(mask, b.div(g, count));
  return success();
}

/// The product of all other elements, computed without dividing (so zeros
/// are exact): the reduced axes go last and flatten to one, whose exclusive
/// running products from both ends multiply.
LogicalResult vjpReduceProd(ReduceProdOp op, VjpBuilder &b, ValueRange ct,
                            MutableArrayRef<Value> out) {
  Value x = op.getInput();
  if (!isa<FloatType>(VjpBuilder::elementOf(x)))
    return success();
  ArrayRef<int64_t> shape = VjpBuilder::shapeOf(x);
  ArrayRef<int64_t> axes = op.getAxes();
  Value g = keptCotangent(op, b, ct[0]);
  if (axes.empty() || shapes::numElements(shape) == 0) {
    out[0] = b.broadcastTo(g, shape);
    return success();
  }
  SmallVector<int64_t> perm, permuted;
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (!llvm::is_contained(axes, i)) {
      perm.push_back(i);
      rows *= shape[i];
    }
  for (int64_t a : axes) {
    perm.push_back(a);
    cols *= shape[a];
  }
  for (int64_t p : perm)
    permuted.push_back(shape[p]);
  Value flat = b.reshape(b.transpose(x, perm), {rows, cols});
  OpBuilder &ob = b.builder();
  Value before = ob.create<CumprodOp>(b.location(), flat, 1, /*exclusive=*/true,
                                      /*reverse=*/false);
  Value after = ob.create<CumprodOp>(b.location(), flat, 1, /*exclusive=*/true,
                                     /*reverse=*/true);
  Value others = b.mul(before, after);
  Value gRows = b.reshape(g, {rows, 1});
  Value grad = b.reshape(b.mul(gRows, others), permuted);
  out[0] = b.transpose(grad, invertPermutation(perm));
  return success();
}

/// dx = y * (g - sum(g * y)).
LogicalResult vjpSoftmax(SoftmaxOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  Value y = op.getResult(), g = ct[0];
  int64_t axis = op.getAxis();
  Value dot = b.reduceSum(b.mul(g, y), {axis}, /*keepdims=*/true);
  out[0] = b.mul(y, b.sub(g, dot));
  return success();
}

/// dx = g - softmax(x) * sum(g).
LogicalResult vjpLogSoftmax(LogSoftmaxOp op, VjpBuilder &b, ValueRange ct,
                            MutableArrayRef<Value> out) {
  Value g = ct[0];
  Value sum = b.reduceSum(g, {op.getAxis()}, /*keepdims=*/true);
  out[0] = b.sub(g, b.mul(b.unary<ExpOp>(op.getResult()), sum));
  return success();
}

/// With x^ = (x - mean) * inv and gx^ = g * scale:
///   dx = inv * (gx^ - mean(gx^) - x^ * mean(gx^ * x^)).
LogicalResult vjpLayerNorm(LayerNormOp op, VjpBuilder &b, ValueRange ct,
                           MutableArrayRef<Value> out) {
  Value x = op.getInput(), g = ct[0];
  int64_t rank = VjpBuilder::typeOf(x).getRank();
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(op.getAxis(), rank));
  int64_t count = 1;
  for (int64_t a : axes)
    count *= VjpBuilder::shapeOf(x)[a];
  double invCount = count ? 1.0 / double(count) : 0.0;
  auto mean = [&](Value v) {
    return b.mul(b.reduceSum(v, axes, /*keepdims=*/true), invCount);
  };
  Value centered = b.sub(x, mean(x));
  Value var = mean(b.mul(centered, centered));
  Value inv = b.unary<RsqrtOp>(b.add(var, op.getEpsilon().convertToDouble()));
  Value xhat = b.mul(centered, inv);
  Value gxhat = b.mul(g, op.getScale());
  out[0] = b.mul(inv, b.sub(b.sub(gxhat, mean(gxhat)),
                            b.mul(xhat, mean(b.mul(gxhat, xhat)))));
  out[1] = b.sumToShape(b.mul(g, xhat), VjpBuilder::shapeOf(op.getScale()));
  if (op.getBias())
    out[2] = b.sumToShape(g, VjpBuilder::shapeOf(op.getBias()));
  return success();
}

/// Inference batch norm: y = (x - mean) * inv * scale + bias per channel,
/// inv = (var + eps)^-1/2; every parameter is differentiable.
LogicalResult vjpBatchNorm(BatchNormOp op, VjpBuilder &b, ValueRange ct,
                           MutableArrayRef<Value> out) {
  Value x = op.getInput(), g = ct[0];
  int64_t rank = VjpBuilder::typeOf(x).getRank();
  int64_t channels = VjpBuilder::shapeOf(x)[1];
  SmallVector<int64_t> channelShape(rank, 1), axes;
  channelShape[1] = channels;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1)
      axes.push_back(i);
  auto perChannel = [&](Value v) { return b.reshape(v, channelShape); };
  auto sumPerChannel = [&](Value v) {
    return b.reduceSum(v, axes, /*keepdims=*/false);
  };
  Value inv = b.unary<RsqrtOp>(
      b.add(op.getVariance(), op.getEpsilon().convertToDouble()));
  Value scaleInv = b.mul(op.getScale(), inv);
  Value centered = b.sub(x, perChannel(op.getMean()));
  Value gSum = sumPerChannel(g);
  Value gCentered = sumPerChannel(b.mul(g, centered));
  out[0] = b.mul(g, perChannel(scaleInv));
  out[1] = b.mul(gCentered, inv);
  out[2] = gSum;
  out[3] = b.neg(b.mul(gSum, scaleInv));
  out[4] = b.mul(b.mul(gCentered, b.mul(scaleInv, b.mul(inv, inv))), -0.5);
  return success();
}

/// A running sum's gradient is the running sum the other way.
LogicalResult vjpCumsum(CumsumOp op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  if (!isa<FloatType>(VjpBuilder::elementOf(op.getInput())))
    return success();
  out[0] = b.builder().create<CumsumOp>(b.location(), ct[0], op.getAxis(),
                                        op.getExclusive(), !op.getReverse());
  return success();
}

/// dx_j = sum over the products y_i that include x_j of g_i * y_i / x_j
/// (PyTorch's formula for inputs without zeros; a zero input gives a
/// non-finite gradient).
LogicalResult vjpCumprod(CumprodOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  Value x = op.getInput();
  if (!isa<FloatType>(VjpBuilder::elementOf(x)))
    return success();
  Value gy = b.mul(ct[0], op.getResult());
  Value sum = b.builder().create<CumsumOp>(b.location(), gy, op.getAxis(),
                                           op.getExclusive(), !op.getReverse());
  out[0] = b.div(sum, x);
  return success();
}

/// The values' cotangents go back to where they were taken from.
LogicalResult vjpTopK(TopKOp op, VjpBuilder &b, ValueRange ct,
                      MutableArrayRef<Value> out) {
  Value x = op.getInput();
  if (!ct[0] || !isa<FloatType>(VjpBuilder::elementOf(x)))
    return success();
  out[0] = b.builder().create<ScatterOp>(b.location(), b.zerosLike(x),
                                         op.getIndices(), ct[0], op.getAxis(),
                                         ScatterReduction::add);
  return success();
}

} // namespace

/// The input's cotangent is, at each position's target class, minus the
/// position's cotangent times its weight (over the summed weights for
/// `mean`), and zero at every other class.
LogicalResult vjpNllLoss(NllLossOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  FailureOr<std::pair<Value, Value>> pick = op.buildPick(b.tcc());
  if (failed(pick))
    return failure();
  auto [hot, weight] = *pick;
  ArrayRef<int64_t> target = VjpBuilder::shapeOf(op.getTarget());
  Value g = b.neg(ct[0]);
  if (op.getReduction() == LossReduction::mean) {
    SmallVector<int64_t> all =
        llvm::to_vector(llvm::seq<int64_t>(0, target.size()));
    g = b.div(g, weight ? b.reduceSum(weight, all, false)
                        : b.scalarLike(g, double(shapes::numElements(target))));
  }
  if (weight)
    g = b.mul(g, weight);
  SmallVector<int64_t> expanded(target);
  expanded.insert(expanded.begin() + 1, 1);
  out[0] = b.where(hot, b.reshape(b.broadcastTo(g, target), expanded));
  return success();
}

void mlir::tcc::attachReductionVjps(MLIRContext &ctx) {
  attachVjp<NllLossOp, vjpNllLoss>(ctx);
  attachVjp<ReduceSumOp, vjpReduceSum>(ctx);
  attachVjp<ReduceMeanOp, vjpReduceMean>(ctx);
  attachVjp<ReduceMaxOp, vjpReduceExtreme<ReduceMaxOp>>(ctx);
  attachVjp<ReduceMinOp, vjpReduceExtreme<ReduceMinOp>>(ctx);
  attachVjp<ReduceProdOp, vjpReduceProd>(ctx);
  attachVjp<SoftmaxOp, vjpSoftmax>(ctx);
  attachVjp<LogSoftmaxOp, vjpLogSoftmax>(ctx);
  attachVjp<LayerNormOp, vjpLayerNorm>(ctx);
  attachVjp<BatchNormOp, vjpBatchNorm>(ctx);
  attachVjp<CumsumOp, vjpCumsum>(ctx);
  attachVjp<CumprodOp, vjpCumprod>(ctx);
  attachVjp<TopKOp, vjpTopK>(ctx);
}
