//===- NormalizationOps.cpp - ONNX normalization ops ----------------------===//
//
// BatchNormalization and LayerNormalization map onto their tcc ops when only
// the normalized output is asked for; training-mode statistics, the
// Mean/InvStdDev outputs and the other normalizations (RMS, instance,
// group, mean-variance, Lp, LRN) are built from reductions and elementwise
// ops. Half-precision inputs are normalized in f32 (ONNX's default
// stash_type) and the results cast back.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// `x` in f32 when it is a half-precision float (the precision ONNX's
/// stash_type = 1 asks for), otherwise `x`.
static Value stash(NodeContext &ctx, Value x) {
  Type et = elementTypeOf(x);
  if (et.isF16() || et.isBF16())
    return ctx.castTo(x, ctx.b.getF32Type());
  return x;
}

/// (x - mean) * invStdDev over `axes`, with the statistics (keepdims).
struct Normalized {
  Value y, mean, invStdDev;
};
static Normalized normalize(NodeContext &ctx, Value x, ArrayRef<int64_t> axes,
                            double epsilon) {
  Value mean = ctx.reduce<ReduceMeanOp>(x, axes, true);
  Value d = ctx.binary<SubOp>(x, mean);
  Value var = ctx.reduce<ReduceMeanOp>(ctx.binary<MulOp>(d, d), axes, true);
  Value inv = ctx.unary<ReciprocalOp>(
      ctx.unary<SqrtOp>(ctx.binary<AddOp>(var, ctx.scalarLike(x, epsilon))));
  return {ctx.binary<MulOp>(d, inv), mean, inv};
}

static SmallVector<int64_t> axesFrom(int64_t first, int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(first, rank));
}

/// What LayerNormalization and RMSNormalization read alike: a float input
/// normalized over the axes from `axis` on, with `epsilon`.
struct TrailingNorm {
  int64_t rank, axis;
  double epsilon;
};
static FailureOr<TrailingNorm> readTrailingNorm(NodeContext &ctx, Value x) {
  ctx.ignoreAttrs({"stash_type"}); // half precision is normalized in f32
  if (failed(ctx.requireFloat(x)))
    return failure();
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  if (failed(axis) || ctx.hasError())
    return failure();
  return TrailingNorm{rank, *axis, epsilon};
}

static LogicalResult importLayerNorm(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  FailureOr<TrailingNorm> norm = readTrailingNorm(ctx, x);
  if (failed(norm))
    return failure();
  auto [rank, axis, epsilon] = *norm;
  Type et = elementTypeOf(x);
  if (!ctx.hasOutput(1) && !ctx.hasOutput(2) && et == elementTypeOf(scale) &&
      (!bias || et == elementTypeOf(bias))) {
    SmallVector<Value, 3> operands = {x, scale};
    if (bias)
      operands.push_back(bias);
    ctx.setResult(
        0,
        ctx.create<LayerNormOp>(
            operands, {ctx.attr("axis", ctx.b.getI64IntegerAttr(axis)),
                       ctx.attr("epsilon", ctx.b.getF64FloatAttr(epsilon))}));
    return success();
  }
  Normalized n = normalize(ctx, stash(ctx, x), axesFrom(axis, rank), epsilon);
  Value y = ctx.binary<MulOp>(ctx.castTo(n.y, et), ctx.castTo(scale, et));
  if (bias)
    y = ctx.binary<AddOp>(y, ctx.castTo(bias, et));
  ctx.setResult(0, y);
  ctx.setResult(1, ctx.castTo(n.mean, et));
  ctx.setResult(2, ctx.castTo(n.invStdDev, et));
  return success(y);
}

static LogicalResult importRMSNorm(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  FailureOr<TrailingNorm> norm = readTrailingNorm(ctx, x);
  if (failed(norm))
    return failure();
  auto [rank, axis, epsilon] = *norm;
  Type et = elementTypeOf(x);
  Value xs = stash(ctx, x);
  Value ms = ctx.reduce<ReduceMeanOp>(ctx.binary<MulOp>(xs, xs),
                                      axesFrom(axis, rank), true);
  Value inv = ctx.unary<ReciprocalOp>(
      ctx.unary<SqrtOp>(ctx.binary<AddOp>(ms, ctx.scalarLike(xs, epsilon))));
  Value y = ctx.binary<MulOp>(ctx.castTo(ctx.binary<MulOp>(xs, inv), et),
                              ctx.castTo(scale, et));
  return ctx.result(y);
}

/// [C] -> [C, 1, ..., 1], to broadcast along dimension 1 of a rank-`rank`
/// tensor.
static Value perChannel(NodeContext &ctx, Value v, int64_t rank) {
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = shapes::numElements(shapeOf(v));
  return ctx.reshape(v, shape);
}

static LogicalResult requireNCD(NodeContext &ctx, Value x) {
  if (shapeOf(x).size() >= 2)
    return success();
  return ctx.emitError() << "input must have rank >= 2 (N x C x ...); got "
                         << shapes::str(shapeOf(x));
}

static LogicalResult importInstanceNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  if (failed(ctx.requireFloat(x)) || failed(requireNCD(ctx, x)) ||
      ctx.hasError())
    return failure();
  int64_t rank = shapeOf(x).size();
  Type et = elementTypeOf(x);
  Normalized n = normalize(ctx, stash(ctx, x), axesFrom(2, rank), epsilon);
  Value y = ctx.binary<MulOp>(ctx.castTo(n.y, et),
                              perChannel(ctx, ctx.input(1), rank));
  y = ctx.binary<AddOp>(y, perChannel(ctx, ctx.input(2), rank));
  return ctx.result(y);
}

static LogicalResult importGroupNorm(NodeContext &ctx) {
  ctx.ignoreAttrs({"stash_type"});
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  int64_t groups = ctx.getInt("num_groups", 0);
  if (failed(ctx.requireFloat(x)) || failed(requireNCD(ctx, x)) ||
      ctx.hasError())
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size(), c = shape[1];
  if (groups <= 0 || ShapedType::isDynamic(c) || c % groups != 0)
    return ctx.emitError() << "num_groups = " << groups
                           << " does not divide the " << c << " channels";
  // Each group's row holds the spatial size times c / groups values.
  int64_t spatial = shapes::numElements(shape.drop_front(2));
  if (ShapedType::isDynamic(spatial))
    return ctx.emitError() << "input shape " << shapes::str(shape)
                           << " needs static spatial dimensions; fix it with "
                              "--input-shape";
  // Opset 18 scales and shifts per group, 21 per channel.
  if (ctx.opset < 21) {
    auto expand = [&](Value v) {
      Value g = ctx.reshape(v, {groups, 1});
      return ctx.reshape(ctx.broadcastTo(g, {groups, c / groups}), {c});
    };
    scale = expand(scale);
    bias = expand(bias);
  }
  Type et = elementTypeOf(x);
  SmallVector<int64_t> grouped = {shape[0], groups, -1};
  grouped[2] = spatial * (c / groups);
  Value g = ctx.reshape(stash(ctx, x), grouped);
  Normalized n = normalize(ctx, g, {2}, epsilon);
  Value y = ctx.castTo(ctx.reshape(n.y, shape), et);
  y = ctx.binary<MulOp>(y, perChannel(ctx, scale, rank));
  y = ctx.binary<AddOp>(y, perChannel(ctx, bias, rank));
  return ctx.result(y);
}

static LogicalResult importMVN(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> axes = ctx.getInts("axes");
  if (!ctx.hasAttr("axes"))
    axes = {0, 2, 3};
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  FailureOr<SmallVector<int64_t>> sorted = ctx.normalizeAxes(axes, rank);
  if (failed(sorted))
    return failure();
  // (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), as ONNX's function body.
  Value mean = ctx.reduce<ReduceMeanOp>(x, *sorted, true);
  Value sqMean =
      ctx.reduce<ReduceMeanOp>(ctx.binary<MulOp>(x, x), *sorted, true);
  Value std = ctx.unary<SqrtOp>(
      ctx.binary<SubOp>(sqMean, ctx.binary<MulOp>(mean, mean)));
  Value y = ctx.binary<DivOp>(ctx.binary<SubOp>(x, mean),
                              ctx.binary<AddOp>(std, ctx.scalarLike(x, 1e-9)));
  return ctx.result(y);
}

static LogicalResult importLpNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  int64_t p = ctx.getInt("p", 2);
  if (failed(axis) || failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  Value norm;
  if (p == 1)
    norm = ctx.reduce<ReduceSumOp>(ctx.unary<AbsOp>(x), {*axis}, true);
  else if (p == 2)
    norm = ctx.unary<SqrtOp>(
        ctx.reduce<ReduceSumOp>(ctx.binary<MulOp>(x, x), {*axis}, true));
  else
    return ctx.emitError() << "attribute p = " << p
                           << " is not supported (1 or 2)";
  // A zero norm gives zeros (0 / 1), not NaN.
  Value zero = ctx.compare(ComparePredicate::eq, norm, ctx.scalarLike(x, 0));
  norm = ctx.select(zero, ctx.scalarLike(x, 1), norm);
  Value y = ctx.binary<DivOp>(x, norm);
  return ctx.result(y);
}

static LogicalResult importLRN(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1e-4), beta = ctx.getFloat("beta", 0.75),
         bias = ctx.getFloat("bias", 1.0);
  int64_t size = ctx.getInt("size", 0);
  if (failed(ctx.requireFloat(x)) || failed(requireNCD(ctx, x)) ||
      ctx.hasError())
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t c = shape[1];
  if (size < 1 || ShapedType::isDynamic(c))
    return ctx.emitError() << "attribute size = " << size
                           << " is not supported";
  // The sum of squares over channels [c - floor((size-1)/2),
  // c + ceil((size-1)/2)]: pad the channels with zeros, add `size` slices.
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value sq = ctx.binary<MulOp>(x, x);
  SmallVector<int64_t> low(shape.size(), 0), high(shape.size(), 0);
  low[1] = before;
  high[1] = after;
  Value p = ctx.pad(sq, low, high);
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    Value s = ctx.slice(p, 1, k, c);
    sum = sum ? ctx.binary<AddOp>(sum, s) : s;
  }
  Value denom =
      ctx.binary<AddOp>(ctx.binary<MulOp>(sum, ctx.scalarLike(x, alpha / size)),
                        ctx.scalarLike(x, bias));
  Value y =
      ctx.binary<DivOp>(x, ctx.binary<PowOp>(denom, ctx.scalarLike(x, beta)));
  return ctx.result(y);
}

static LogicalResult importBatchNorm(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs", "is_test"});
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)) || failed(requireNCD(ctx, x)))
    return failure();
  if (ctx.opset < 9 && ctx.getInt("spatial", 1) != 1)
    return ctx.emitError() << "attribute spatial = 0 is not supported";
  bool training = ctx.opset >= 14 && ctx.getInt("training_mode", 0) != 0;
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  double momentum = ctx.getFloat("momentum", 0.9);
  if (ctx.hasError())
    return failure();
  if (!training) {
    if (ctx.hasOutput(1) || ctx.hasOutput(2) || ctx.hasOutput(3) ||
        ctx.hasOutput(4))
      return ctx.emitError() << "the statistics outputs need training_mode";
    ctx.setResult(
        0, ctx.create<BatchNormOp>(
               {x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
               {ctx.attr("epsilon", ctx.b.getF64FloatAttr(epsilon))}));
    return success();
  }
  // Training: normalize with the batch's statistics (biased variance) and
  // blend them into the running ones with `momentum`.
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> axes = {0};
  llvm::append_range(axes, llvm::seq<int64_t>(2, rank));
  Value mean = ctx.reduce<ReduceMeanOp>(x, axes, false);
  Value meanKept = perChannel(ctx, mean, rank);
  Value d = ctx.binary<SubOp>(x, meanKept);
  Value var = ctx.reduce<ReduceMeanOp>(ctx.binary<MulOp>(d, d), axes, false);
  Value inv = ctx.unary<ReciprocalOp>(
      ctx.unary<SqrtOp>(ctx.binary<AddOp>(var, ctx.scalarLike(x, epsilon))));
  Value y = ctx.binary<MulOp>(d, perChannel(ctx, inv, rank));
  y = ctx.binary<MulOp>(y, perChannel(ctx, ctx.input(1), rank));
  y = ctx.binary<AddOp>(y, perChannel(ctx, ctx.input(2), rank));
  auto blend = [&](Value running, Value current) {
    return ctx.binary<AddOp>(
        ctx.binary<MulOp>(running, ctx.scalarLike(x, momentum)),
        ctx.binary<MulOp>(current, ctx.scalarLike(x, 1 - momentum)));
  };
  ctx.setResult(0, y);
  ctx.setResult(1, blend(ctx.input(3), mean));
  ctx.setResult(2, blend(ctx.input(4), var));
  return success(y);
}

void mlir::tcc::onnx::registerNormalizationOps(OpTable &t) {
  t.add("BatchNormalization", 1, 5, 5, 5, importBatchNorm);
  t.add("BatchNormalization", 14, 5, 5, 3, importBatchNorm);
  t.add("LayerNormalization", 17, 2, 3, 3, importLayerNorm);
  t.add("RMSNormalization", 23, 2, 2, 1, importRMSNorm);
  t.add("InstanceNormalization", 1, 3, 3, 1, importInstanceNorm);
  t.add("GroupNormalization", 18, 3, 3, 1, importGroupNorm);
  t.add("MeanVarianceNormalization", 9, 1, 1, 1, importMVN);
  t.add("LpNormalization", 1, 1, 1, 1, importLpNorm);
  t.add("LRN", 1, 1, 1, 1, importLRN);
}
