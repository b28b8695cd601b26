//===- NNOps.cpp - ONNX convolution, pooling, GEMM and normalization ------===//
//
// Window attributes (kernel_shape, strides, dilations, pads, auto_pad) are
// read once for Conv and the pools; SAME_* padding is resolved here from
// the static input size, so the tcc ops only see explicit pads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

namespace {
struct Window {
  SmallVector<int64_t> kernel, strides, padding, dilations;
};
} // namespace

/// Checks that `x` is N x C x D1 x ... x Dn with n >= 1.
static LogicalResult requireSpatial(NodeContext &ctx, Value x) {
  if (shapeOf(x).size() >= 3)
    return success();
  return ctx.emitError() << "input must have rank >= 3 (N x C x D...); got "
                         << shapes::str(shapeOf(x));
}

/// A per-spatial-dimension list attribute, `fill` when absent.
static FailureOr<SmallVector<int64_t>>
spatialList(NodeContext &ctx, StringRef name, size_t size, int64_t fill) {
  SmallVector<int64_t> list = ctx.getInts(name);
  if (list.empty())
    list.assign(size, fill);
  if (list.size() != size) {
    ctx.emitError() << "attribute '" << name << "' has " << list.size()
                    << " entries; expected " << size;
    return failure();
  }
  // Bounded so that the window arithmetic cannot overflow.
  if (llvm::any_of(list, [](int64_t v) { return v < 0 || v > kMaxElements; })) {
    ctx.emitError() << "attribute '" << name << "' = " << shapes::str(list)
                    << " is out of range";
    return failure();
  }
  return list;
}

static FailureOr<Window> readWindow(NodeContext &ctx, ArrayRef<int64_t> input,
                                    ArrayRef<int64_t> kernel,
                                    bool hasDilations) {
  size_t n = input.size() - 2;
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto strides = spatialList(ctx, "strides", n, 1);
  FailureOr<SmallVector<int64_t>> dilations = SmallVector<int64_t>(n, 1);
  if (hasDilations)
    dilations = spatialList(ctx, "dilations", n, 1);
  auto pads = spatialList(ctx, "pads", 2 * n, 0);
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  if (autoPad == "NOTSET") {
    w.padding = *pads;
  } else if (autoPad == "VALID") {
    w.padding.assign(2 * n, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Output size ceil(d / stride); the odd pad goes to the end (UPPER) or
    // the beginning (LOWER).
    w.padding.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t d = input[i + 2], s = w.strides[i];
      if (ShapedType::isDynamic(d)) {
        ctx.emitError() << "auto_pad = " << autoPad
                        << " needs static spatial dimensions";
        return failure();
      }
      if (s < 1) {
        ctx.emitError() << "strides must be >= 1";
        return failure();
      }
      int64_t out = (d + s - 1) / s;
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + span - d);
      int64_t small = total / 2, big = total - small;
      w.padding[i] = autoPad == "SAME_UPPER" ? small : big;
      w.padding[i + n] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else {
    return ctx.unsupportedValue("auto_pad", autoPad);
  }
  return w;
}

static LogicalResult importConv(NodeContext &ctx) {
  Value x = ctx.input(0), weight = ctx.input(1), bias = ctx.input(2);
  if (failed(ctx.requireFloat(x)) || failed(requireSpatial(ctx, x)))
    return failure();
  ArrayRef<int64_t> w = shapeOf(weight);
  if (w.size() != shapeOf(x).size())
    return ctx.emitError() << "weight " << shapes::str(w)
                           << " must have the input's rank "
                           << shapeOf(x).size();
  ArrayRef<int64_t> kernel = w.drop_front(2);
  SmallVector<int64_t> kernelAttr = ctx.getInts("kernel_shape");
  if (!kernelAttr.empty() &&
      (kernelAttr.size() != kernel.size() ||
       llvm::any_of(llvm::zip(kernelAttr, kernel), [](auto p) {
         auto [a, k] = p;
         return !ShapedType::isDynamic(k) && a != k;
       })))
    return ctx.emitError() << "kernel_shape " << shapes::str(kernelAttr)
                           << " disagrees with the weight " << shapes::str(w);
  if (llvm::any_of(kernel, ShapedType::isDynamic))
    return ctx.emitError() << "the weight's kernel size must be static";
  FailureOr<Window> win = readWindow(ctx, shapeOf(x), kernel, true);
  int64_t groups = ctx.getInt("group", 1);
  if (failed(win) || ctx.hasError())
    return failure();
  FailureOr<shapes::Shape> shape =
      shapes::conv(shapeOf(x), w, win->strides, win->padding, win->dilations,
                   groups, ctx.errorFn());
  if (failed(shape))
    return failure();
  RankedTensorType type = ctx.tensorType(*shape, elementTypeOf(x));
  if (!type)
    return failure();
  ctx.setResult(0, ctx.b.create<ConvOp>(ctx.loc, type, x, weight, bias,
                                        win->strides, win->padding,
                                        win->dilations, groups));
  return success();
}

template <typename OpT> static LogicalResult importPool(NodeContext &ctx) {
  bool isMax = std::is_same_v<OpT, MaxPoolOp>;
  Value x = ctx.input(0);
  // MaxPool takes int8/uint8 since opset 12: f32 holds them exactly.
  Type et = elementTypeOf(x);
  bool viaFloat = isMax && (et.isInteger(8) || et.isUnsignedInteger(8));
  if (viaFloat)
    x = ctx.castTo(x, ctx.b.getF32Type());
  if (failed(ctx.requireFloat(x)) || failed(requireSpatial(ctx, x)))
    return failure();
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.emitError() << "attribute 'kernel_shape' is required";
  FailureOr<SmallVector<int64_t>> kernel =
      spatialList(ctx, "kernel_shape", shapeOf(x).size() - 2, 1);
  if (failed(kernel))
    return failure();
  bool hasDilations = ctx.opset >= (isMax ? 10 : 19);
  FailureOr<Window> win = readWindow(ctx, shapeOf(x), *kernel, hasDilations);
  bool ceilMode = ctx.opset >= 10 && ctx.getInt("ceil_mode", 0);
  bool countPad =
      !isMax && ctx.opset >= 7 && ctx.getInt("count_include_pad", 0);
  // storage_order only shapes the Indices output, which tcc does not make.
  if (isMax && ctx.opset >= 8)
    ctx.ignoreAttrs({"storage_order"});
  if (failed(win) || ctx.hasError())
    return failure();
  FailureOr<shapes::Shape> shape =
      shapes::pool(shapeOf(x), win->kernel, win->strides, win->padding,
                   win->dilations, ceilMode, ctx.errorFn());
  if (failed(shape))
    return failure();
  RankedTensorType type = ctx.tensorType(*shape, elementTypeOf(x));
  if (!type)
    return failure();
  Value y;
  if constexpr (std::is_same_v<OpT, MaxPoolOp>)
    y = ctx.b.create<MaxPoolOp>(ctx.loc, type, x, win->kernel, win->strides,
                                win->padding, win->dilations, ceilMode);
  else
    y = ctx.b.create<AvgPoolOp>(ctx.loc, type, x, win->kernel, win->strides,
                                win->padding, win->dilations, ceilMode,
                                countPad);
  ctx.setResult(0, viaFloat ? ctx.castTo(y, et) : y);
  return success();
}

/// Global pools reduce over the spatial dimensions, keeping them as 1s.
template <typename OpT>
static LogicalResult importGlobalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)) || failed(requireSpatial(ctx, x)))
    return failure();
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  FailureOr<shapes::Shape> shape =
      shapes::reduce(shapeOf(x), axes, true, ctx.errorFn());
  if (failed(shape))
    return failure();
  auto type = RankedTensorType::get(*shape, elementTypeOf(x));
  ctx.setResult(0, ctx.b.create<OpT>(ctx.loc, type, x, axes, true));
  return success();
}

static Value matmul(NodeContext &ctx, Value lhs, Value rhs) {
  if (elementTypeOf(lhs) != elementTypeOf(rhs)) {
    ctx.emitError() << "operand element types differ: " << lhs.getType()
                    << " and " << rhs.getType();
    return {};
  }
  FailureOr<shapes::Shape> shape =
      shapes::matmul(shapeOf(lhs), shapeOf(rhs), ctx.errorFn());
  if (failed(shape))
    return {};
  RankedTensorType type = ctx.tensorType(*shape, elementTypeOf(lhs));
  return type ? ctx.b.create<MatmulOp>(ctx.loc, type, lhs, rhs) : Value();
}

static LogicalResult importMatMul(NodeContext &ctx) {
  Value y = matmul(ctx, ctx.input(0), ctx.input(1));
  ctx.setResult(0, y);
  return success(y);
}

/// Y = alpha * A' * B' + beta * C, with A' and B' optionally transposed.
static LogicalResult importGemm(NodeContext &ctx) {
  ctx.ignoreAttrs({"broadcast"}); // opsets 1-6; C broadcasts either way
  Value a = ctx.input(0), b = ctx.input(1), c = ctx.input(2);
  if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
    return ctx.emitError() << "A and B must be matrices; got "
                           << shapes::str(shapeOf(a)) << " and "
                           << shapes::str(shapeOf(b));
  bool transA = ctx.getInt("transA", 0), transB = ctx.getInt("transB", 0);
  double alpha = ctx.getFloat("alpha", 1.0), beta = ctx.getFloat("beta", 1.0);
  if (ctx.hasError())
    return failure();
  if (transA)
    a = ctx.transpose(a, {1, 0});
  if (transB)
    b = ctx.transpose(b, {1, 0});
  Value y = matmul(ctx, a, b);
  if (!y)
    return failure();
  Type et = elementTypeOf(y);
  if (alpha != 1.0)
    y = ctx.binary<MulOp>(y, ctx.scalar(et, alpha));
  if (c && beta != 0.0) {
    if (!shapes::broadcastsTo(shapeOf(c), shapeOf(y)))
      return ctx.emitError()
             << "C of shape " << shapes::str(shapeOf(c))
             << " does not broadcast to " << shapes::str(shapeOf(y));
    if (beta != 1.0)
      c = ctx.binary<MulOp>(c, ctx.scalar(et, beta));
    y = ctx.binary<AddOp>(y, c);
  }
  ctx.setResult(0, y);
  return success(y);
}

template <typename OpT> static LogicalResult importSoftmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", ctx.opset < 13 ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (ctx.opset >= 13 || *axis == rank - 1) {
    ctx.setResult(0, ctx.b.create<OpT>(ctx.loc, type, x, *axis));
    return success();
  }
  // Before opset 13 the input is seen as a matrix: the dimensions before
  // `axis` are the rows, those from `axis` on are one normalized row.
  int64_t rows = shapes::numElements(shape.take_front(*axis));
  int64_t cols = shapes::numElements(shape.drop_front(*axis));
  Value flat = ctx.reshape(x, {rows, cols});
  if (!flat)
    return failure();
  Value y = ctx.b.create<OpT>(ctx.loc, flat.getType(), flat, 1);
  ctx.setResult(0, ctx.reshape(y, shape));
  return success();
}

static LogicalResult importLayerNorm(NodeContext &ctx) {
  ctx.ignoreAttrs({"stash_type"}); // tcc picks the accumulation precision
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (failed(ctx.requireFloat(x)))
    return failure();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), shapeOf(x).size());
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  if (failed(axis) || ctx.hasError())
    return failure();
  ctx.setResult(0,
                ctx.b.create<LayerNormOp>(ctx.loc, x.getType(), x, scale, bias,
                                          ctx.b.getI64IntegerAttr(*axis),
                                          ctx.b.getF64FloatAttr(epsilon)));
  return success();
}

static LogicalResult importBatchNorm(NodeContext &ctx) {
  ctx.ignoreAttrs({"momentum", "consumed_inputs", "is_test"});
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  if (ctx.opset < 9 && ctx.getInt("spatial", 1) != 1)
    return ctx.emitError() << "attribute spatial = 0 is not supported";
  if (ctx.opset >= 14 && ctx.getInt("training_mode", 0) != 0)
    return ctx.emitError() << "attribute training_mode = 1 is not supported";
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  if (ctx.hasError())
    return failure();
  ctx.setResult(0, ctx.b.create<BatchNormOp>(ctx.loc, x.getType(), x,
                                             ctx.input(1), ctx.input(2),
                                             ctx.input(3), ctx.input(4),
                                             ctx.b.getF64FloatAttr(epsilon)));
  return success();
}

void mlir::tcc::onnx::registerNNOps(OpTable &t) {
  t.add("Conv", 1, 2, 3, 1, importConv);
  t.add("MaxPool", 1, 1, 1, 1, importPool<MaxPoolOp>);
  t.add("MaxPool", 8, 1, 1, 2, importPool<MaxPoolOp>);
  t.add("AveragePool", 1, 1, 1, 1, importPool<AvgPoolOp>);
  t.add("GlobalAveragePool", 1, 1, 1, 1, importGlobalPool<ReduceMeanOp>);
  t.add("GlobalMaxPool", 1, 1, 1, 1, importGlobalPool<ReduceMaxOp>);
  t.add("MatMul", 1, 2, 2, 1, importMatMul);
  t.add("Gemm", 1, 3, 3, 1, importGemm);
  t.add("Gemm", 11, 2, 3, 1, importGemm);
  t.add("Softmax", 1, 1, 1, 1, importSoftmax<SoftmaxOp>);
  t.add("LogSoftmax", 1, 1, 1, 1, importSoftmax<LogSoftmaxOp>);
  t.add("LayerNormalization", 17, 2, 3, 3, importLayerNorm);
  t.add("BatchNormalization", 1, 5, 5, 5, importBatchNorm);
  t.add("BatchNormalization", 14, 5, 5, 3, importBatchNorm);
}
