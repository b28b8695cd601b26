//===- NNOps.cpp - ONNX convolution, pooling, GEMM and normalization ------===//
//
// Window attributes (kernel_shape, strides, dilations, pads, auto_pad) are
// read once for Conv and the pools; SAME_* padding is resolved here from
// the static input size, so the tcc ops only see explicit pads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>
#include <limits>

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

/// The node's convolution of `x` by `weight` (+ `bias`) with its window
/// attributes (kernel_shape, strides, pads, dilations, auto_pad, group).
static Value convolve(NodeContext &ctx, Value x, Value weight, Value bias) {
  if (!x || !weight || failed(requireSpatial(ctx, x)))
    return {};
  // Half precision accumulates in f32, rounding once.
  Type et = elementTypeOf(x);
  if (NodeContext::isHalf(et))
    return ctx.castTo(convolve(ctx, ctx.widenHalf(x), ctx.widenHalf(weight),
                               ctx.widenHalf(bias)),
                      et);
  ArrayRef<int64_t> w = shapeOf(weight);
  if (w.size() != shapeOf(x).size()) {
    ctx.emitError() << "weight " << shapes::str(w)
                    << " must have the input's rank " << shapeOf(x).size();
    return {};
  }
  ArrayRef<int64_t> kernel = w.drop_front(2);
  SmallVector<int64_t> kernelAttr = ctx.getInts("kernel_shape");
  if (!kernelAttr.empty() &&
      (kernelAttr.size() != kernel.size() ||
       llvm::any_of(llvm::zip(kernelAttr, kernel), [](auto p) {
         auto [a, k] = p;
         return !ShapedType::isDynamic(k) && a != k;
       }))) {
    ctx.emitError() << "kernel_shape " << shapes::str(kernelAttr)
                    << " disagrees with the weight " << shapes::str(w);
    return {};
  }
  if (llvm::any_of(kernel, ShapedType::isDynamic)) {
    ctx.emitError() << "the weight's kernel size must be static";
    return {};
  }
  FailureOr<Window> win = readWindow(ctx, shapeOf(x), kernel, true);
  int64_t groups = ctx.getInt("group", 1);
  if (failed(win) || ctx.hasError())
    return {};
  return ctx.conv(x, weight, bias, win->strides, win->padding, win->dilations,
                  groups);
}

static LogicalResult importConv(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = convolve(ctx, x, ctx.input(1), ctx.input(2));
  return ctx.result(y);
}

/// `v` - `zeroPoint` in f64, with a zero point of one value or, when
/// `perChannel`, one per dimension-0 entry of `v`.
static Value minusZeroPoint(NodeContext &ctx, Value v, Value zeroPoint,
                            bool perChannel) {
  Value f = ctx.castTo(v, ctx.b.getF64Type());
  if (!zeroPoint)
    return f;
  Value z = ctx.castTo(zeroPoint, ctx.b.getF64Type());
  int64_t n = shapes::numElements(shapeOf(zeroPoint));
  if (n == 1) {
    z = ctx.reshape(z, {});
  } else if (perChannel) {
    SmallVector<int64_t> s(shapeOf(v).size(), 1);
    if (s.empty()) {
      ctx.emitError() << "a zero point of " << n
                      << " values for a scalar operand";
      return {};
    }
    s[0] = n;
    z = ctx.reshape(z, s);
  }
  return ctx.binary<SubOp>(f, z);
}

/// ConvInteger: the int32 convolution of zero-point-shifted integers
/// (computed in f64, which holds every product sum exactly).
static LogicalResult importConvInteger(NodeContext &ctx) {
  Value x = minusZeroPoint(ctx, ctx.input(0), ctx.input(2), false);
  Value w = x ? minusZeroPoint(ctx, ctx.input(1), ctx.input(3), true) : x;
  if (!x || !w)
    return failure();
  Value y = convolve(ctx, x, w, Value());
  y = ctx.castTo(y, ctx.b.getI32Type());
  return ctx.result(y);
}

/// round(v) + zero point, saturated to the zero point's (or `dflt`'s) type.
static Value requantize(NodeContext &ctx, Value v, Value zeroPoint, Type dflt) {
  Type et = zeroPoint ? elementTypeOf(zeroPoint) : dflt;
  unsigned width = et.getIntOrFloatBitWidth();
  bool isUnsigned = et.isUnsignedInteger();
  double lo = isUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  double hi =
      isUnsigned ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  if (zeroPoint)
    v = ctx.binary<AddOp>(
        v, ctx.reshape(ctx.castTo(zeroPoint, elementTypeOf(v)), {}));
  v = ctx.clamp(v, lo, hi);
  return ctx.castTo(ctx.unary<RoundOp>(v), et);
}

static LogicalResult importQLinearConv(NodeContext &ctx) {
  Value x = minusZeroPoint(ctx, ctx.input(0), ctx.input(2), false);
  Value w = x ? minusZeroPoint(ctx, ctx.input(3), ctx.input(5), true) : x;
  if (!x || !w)
    return failure();
  Value bias = ctx.input(8);
  Value y = convolve(ctx, x, w,
                     bias ? ctx.castTo(bias, ctx.b.getF64Type()) : Value());
  if (!y)
    return failure();
  Type f64 = ctx.b.getF64Type();
  Value ws = ctx.castTo(ctx.input(4), f64);
  int64_t n = shapes::numElements(shapeOf(ws));
  if (n > 1) {
    SmallVector<int64_t> s(shapeOf(y).size(), 1);
    s[1] = n;
    ws = ctx.reshape(ws, s);
  } else {
    ws = ctx.reshape(ws, {});
  }
  Value scale = ctx.binary<DivOp>(
      ctx.binary<MulOp>(ctx.reshape(ctx.castTo(ctx.input(1), f64), {}), ws),
      ctx.reshape(ctx.castTo(ctx.input(6), f64), {}));
  y = requantize(ctx, ctx.binary<MulOp>(y, scale), ctx.input(7),
                 elementTypeOf(ctx.input(0)));
  return ctx.result(y);
}

/// ConvTranspose as a convolution: the input spread out by the strides
/// (zeros in between), a full convolution with the channel-swapped, flipped
/// kernel, then the window the pads and output_shape select.
static LogicalResult importConvTranspose(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1), bias = ctx.input(2);
  if (failed(ctx.requireFloat(x)) || failed(requireSpatial(ctx, x)))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  size_t n = xs.size() - 2;
  if (ws.size() != xs.size() ||
      !cast<RankedTensorType>(x.getType()).hasStaticShape() ||
      !cast<RankedTensorType>(w.getType()).hasStaticShape())
    return ctx.emitError() << "input and weight must be static and of the "
                              "same rank";
  int64_t groups = ctx.getInt("group", 1);
  auto strides = spatialList(ctx, "strides", n, 1);
  auto dilations = spatialList(ctx, "dilations", n, 1);
  auto outPad = spatialList(ctx, "output_padding", n, 0);
  SmallVector<int64_t> pads = ctx.getInts("pads");
  SmallVector<int64_t> outShape = ctx.getInts("output_shape");
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  (void)ctx.getInts("kernel_shape");
  if (failed(strides) || failed(dilations) || failed(outPad) || ctx.hasError())
    return failure();
  if (groups < 1 || xs[1] % groups || ws[0] != xs[1])
    return ctx.emitError() << "weight " << shapes::str(ws)
                           << " does not match the " << xs[1]
                           << " input channels in " << groups << " groups";
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID")
    return ctx.unsupportedValue("auto_pad", autoPad);
  if (outShape.size() > n)
    outShape.erase(outShape.begin(), outShape.begin() + (outShape.size() - n));
  // Sizes from the file, checked before the arithmetic below uses them.
  auto bounded = [](ArrayRef<int64_t> list) {
    return llvm::all_of(list, [](int64_t v) {
      return v >= -kMaxElements && v <= kMaxElements;
    });
  };
  if ((!outShape.empty() && outShape.size() != n) || !bounded(outShape))
    return ctx.emitError() << "output_shape " << shapes::str(outShape)
                           << " does not give the " << n
                           << " spatial sizes of the output";
  if ((!pads.empty() && pads.size() != 2 * n) || !bounded(pads))
    return ctx.emitError() << "pads " << shapes::str(pads) << " are not "
                           << 2 * n << " sizes";
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  SmallVector<int64_t> begin(n, 0), size(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t span = (ws[i + 2] - 1) * (*dilations)[i] + 1;
    int64_t natural = (*strides)[i] * (xs[i + 2] - 1) + (*outPad)[i] + span;
    if (same && pads.empty()) {
      int64_t target =
          outShape.empty() ? xs[i + 2] * (*strides)[i] : outShape[i];
      int64_t total = natural - target;
      begin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      size[i] = target;
    } else {
      int64_t pb = pads.size() == 2 * n ? pads[i] : 0;
      int64_t pe = pads.size() == 2 * n ? pads[i + n] : 0;
      begin[i] = pb;
      size[i] = outShape.empty() ? natural - pb - pe : outShape[i];
    }
    if (size[i] < 0)
      return ctx.emitError() << "the output size " << size[i]
                             << " of spatial dimension " << i << " is negative";
  }
  // Spread the input: s - 1 zeros after each element along each axis.
  Value v = x;
  for (size_t i = 0; i < n && v; ++i) {
    int64_t s = (*strides)[i], d = shapeOf(v)[i + 2];
    if (s == 1)
      continue;
    SmallVector<int64_t> split(shapeOf(v));
    split.insert(split.begin() + i + 3, 1);
    Value t = ctx.reshape(v, split);
    SmallVector<int64_t> low(split.size(), 0), high(split.size(), 0);
    high[i + 3] = s - 1;
    t = ctx.pad(t, low, high);
    // The s - 1 zeros after the last element stay: they only add outputs
    // past the natural end, which the window below never takes (they are
    // zeros there anyway), and the input stays one contiguous buffer.
    SmallVector<int64_t> merged(shapeOf(v));
    merged[i + 2] = d * s;
    v = ctx.reshape(t, merged);
  }
  // [C, M/g, k...] -> [M, C/g, k...], spatially flipped.
  int64_t c = ws[0], mg = ws[1], m = mg * groups;
  SmallVector<int64_t> g5 = {groups, c / groups, mg};
  g5.append(ws.begin() + 2, ws.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (size_t i = 0; i < n; ++i)
    perm.push_back(3 + i);
  Value k = ctx.transpose(ctx.reshape(w, g5), perm);
  SmallVector<int64_t> kShape = {m, c / groups};
  kShape.append(ws.begin() + 2, ws.end());
  k = ctx.reshape(k, kShape);
  for (size_t i = 0; i < n && k; ++i)
    k = ctx.slice(k, i + 2, ws[i + 2] - 1, ws[i + 2], -1);
  if (!v || !k)
    return failure();
  // The full convolution, then the selected window (zeros beyond it).
  SmallVector<int64_t> padding(2 * n), ones(n, 1);
  for (size_t i = 0; i < n; ++i)
    padding[i] = padding[i + n] = (ws[i + 2] - 1) * (*dilations)[i];
  Value y = ctx.conv(v, k, Value(), ones, padding, *dilations, groups);
  SmallVector<int64_t> low(n + 2, 0), high(n + 2, 0);
  bool pad = false;
  for (size_t i = 0; i < n; ++i) {
    int64_t span = (ws[i + 2] - 1) * (*dilations)[i] + 1;
    int64_t full = (*strides)[i] * (xs[i + 2] - 1) + span;
    int64_t from = std::max<int64_t>(begin[i], 0);
    int64_t to = std::min<int64_t>(begin[i] + size[i], full);
    y = ctx.slice(y, i + 2, from, std::max<int64_t>(to - from, 0));
    low[i + 2] = from - begin[i];
    high[i + 2] = size[i] - low[i + 2] - std::max<int64_t>(to - from, 0);
    pad |= low[i + 2] || high[i + 2];
  }
  if (pad)
    y = ctx.pad(y, low, high);
  if (bias) {
    SmallVector<int64_t> bs(xs.size() - 1, 1);
    bs[0] = m;
    y = ctx.binary<AddOp>(y, ctx.reshape(bias, bs));
  }
  return ctx.result(y);
}

/// CausalConvWithState: the past state (or zeros) before the input, a
/// depthwise convolution over it, an optional SiLU, and the last k - 1
/// positions as the next state.
static LogicalResult importCausalConvWithState(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1), bias = ctx.input(2);
  Value past = ctx.input(3);
  std::string activation = ctx.getString("activation", "none");
  if (ctx.hasError() || failed(ctx.requireFloat(x)))
    return failure();
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.unsupportedValue("activation", activation);
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  if (xs.size() != 3 || ws.size() != 3 ||
      !cast<RankedTensorType>(x.getType()).hasStaticShape() ||
      !cast<RankedTensorType>(w.getType()).hasStaticShape())
    return ctx.emitError() << "input and weight must be static and 3-D";
  int64_t c = xs[1], k = ws[2];
  if (k < 1)
    return ctx.emitError() << "the kernel must have a width of 1 or more; got "
                           << shapes::str(ws);
  // The state's width sets where the next state starts: it must be the
  // kernel's k - 1 positions of every channel, statically.
  if (past && shapeOf(past) != ArrayRef<int64_t>{xs[0], c, k - 1})
    return ctx.emitError() << "past_state " << shapes::str(shapeOf(past))
                           << " must be " << xs[0] << "x" << c << "x" << k - 1
                           << " (batch x channels x kernel width - 1)";
  Value pad =
      past ? past : ctx.constant({xs[0], c, k - 1}, elementTypeOf(x), {0.0});
  Value padded = k > 1 ? ctx.concat({pad, x}, 2) : x;
  if (!padded)
    return failure();
  Type et = elementTypeOf(x);
  Value y = ctx.conv(ctx.widenHalf(padded), ctx.widenHalf(w),
                     ctx.widenHalf(bias), {1}, {0, 0}, {1}, c);
  y = ctx.castTo(y, et);
  if (activation != "none") {
    // SiLU in f32 on the rounded convolution, as the reference computes it.
    Value w32 = ctx.widenHalf(y);
    y = ctx.castTo(ctx.binary<MulOp>(w32, ctx.unary<SigmoidOp>(w32)), et);
  }
  int64_t len = shapeOf(padded)[2];
  ctx.setResult(0, y);
  ctx.setResult(1, ctx.slice(padded, 2, len - (k - 1), k - 1));
  return success(y);
}

/// MaxUnpool: zeros with the input's values scattered to their indices
/// (flat positions in the output).
static LogicalResult importMaxUnpool(NodeContext &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1);
  if (failed(requireSpatial(ctx, x)) || failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(x);
  size_t n = xs.size() - 2;
  auto kernel = spatialList(ctx, "kernel_shape", n, 1);
  auto strides = spatialList(ctx, "strides", n, 1);
  auto pads = spatialList(ctx, "pads", 2 * n, 0);
  if (failed(kernel) || failed(strides) || failed(pads) || ctx.hasError())
    return failure();
  // Indices address the inferred shape; a bigger output_shape (ONNX's
  // reference semantics) pads that result with zeros at the end.
  SmallVector<int64_t> inferred(xs.begin(), xs.begin() + 2);
  for (size_t i = 0; i < n; ++i)
    inferred.push_back((xs[i + 2] - 1) * (*strides)[i] + (*kernel)[i] -
                       (*pads)[i] - (*pads)[i + n]);
  SmallVector<int64_t> out = inferred;
  if (ctx.input(2)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constInts(2);
    if (failed(given))
      return failure();
    out = *given;
  }
  if (out.size() != xs.size() ||
      !cast<RankedTensorType>(x.getType()).hasStaticShape() ||
      llvm::any_of(llvm::zip(out, inferred),
                   [](auto p) { return std::get<0>(p) < std::get<1>(p); }))
    return ctx.emitError() << "output_shape " << shapes::str(out)
                           << " does not fit the input (at least "
                           << shapes::str(inferred) << ")";
  int64_t total = shapes::numElements(inferred),
          count = shapes::numElements(xs);
  Value zeros = ctx.constant({total}, elementTypeOf(x), {0.0});
  Value y = ctx.scatter(
      zeros, ctx.reshape(ctx.castTo(idx, ctx.b.getI64Type()), {count}),
      ctx.reshape(x, {count}), 0, ScatterReduction::none);
  y = ctx.reshape(y, inferred);
  if (out != inferred) {
    SmallVector<int64_t> low(out.size(), 0), high;
    for (auto [o, i] : llvm::zip(out, inferred))
      high.push_back(o - i);
    y = ctx.pad(y, low, high);
  }
  return ctx.result(y);
}

/// Col2Im: each column entry added into its image position (a scatter-add
/// with indices computed at compile time), then the pads cropped.
static LogicalResult importCol2Im(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> image = ctx.constInts(1);
  if (failed(image))
    return failure();
  FailureOr<SmallVector<int64_t>> block = ctx.constInts(2);
  if (failed(block))
    return failure();
  size_t n = image->size();
  auto dil = spatialList(ctx, "dilations", n, 1);
  auto pads = spatialList(ctx, "pads", 2 * n, 0);
  auto strides = spatialList(ctx, "strides", n, 1);
  // The input's sizes are divided below: they must be known first.
  if (failed(dil) || failed(pads) || failed(strides) || ctx.hasError() ||
      failed(ctx.requireStatic(x)))
    return failure();
  // Sizes and steps from the file, bounded before any arithmetic with them.
  auto inRange = [](ArrayRef<int64_t> list, int64_t lo) {
    return llvm::all_of(
        list, [&](int64_t v) { return v >= lo && v <= kMaxElements; });
  };
  if (!inRange(*image, 1) || !inRange(*block, 1) || !inRange(*strides, 1) ||
      !inRange(*dil, 1))
    return ctx.emitError() << "image shape " << shapes::str(*image)
                           << ", block " << shapes::str(*block) << ", strides "
                           << shapes::str(*strides) << " and dilations "
                           << shapes::str(*dil) << " must be positive sizes";
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t k = shapes::numElements(*block);
  if (xs.size() != 3 || block->size() != n || k == 0 || xs[1] % k)
    return ctx.emitError() << "input " << shapes::str(xs)
                           << " does not fit block " << shapes::str(*block);
  int64_t c = xs[1] / k, l = xs[2];
  SmallVector<int64_t> padded(n), blocks(n);
  for (size_t i = 0; i < n; ++i) {
    padded[i] = (*image)[i] + (*pads)[i] + (*pads)[i + n];
    int64_t span = ((*block)[i] - 1) * (*dil)[i] + 1;
    blocks[i] = padded[i] < span ? 0 : (padded[i] - span) / (*strides)[i] + 1;
  }
  // Saturating products: sizes from the file may be large.
  int64_t positions = shapes::numElements(blocks);
  int64_t padTotal = shapes::numElements(padded);
  if (padTotal > kMaxElements / std::max<int64_t>(c, 1))
    return ctx.emitError() << "the padded image " << shapes::str(padded)
                           << " of " << c << " channels is too large";
  if (positions != l)
    return ctx.emitError() << "the input has " << l
                           << " columns; the image has " << positions
                           << " block positions";
  // Target of entry (ch, kernel offset, column) in the padded image.
  SmallVector<double> target;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t col = 0; col < l; ++col) {
        int64_t restK = kk, restL = col, flat = 0, stride = 1;
        SmallVector<int64_t> ko(n), lo(n);
        for (int64_t i = n - 1; i >= 0; --i) {
          ko[i] = restK % (*block)[i];
          restK /= (*block)[i];
          lo[i] = restL % blocks[i];
          restL /= blocks[i];
        }
        for (int64_t i = n - 1; i >= 0; --i) {
          flat += (lo[i] * (*strides)[i] + ko[i] * (*dil)[i]) * stride;
          stride *= padded[i];
        }
        target.push_back(ch * padTotal + flat);
      }
  Type i64 = ctx.b.getI64Type();
  int64_t entries = c * k * l;
  Value idx = ctx.broadcastTo(ctx.constant({1, entries}, i64, target),
                              {xs[0], entries});
  Value zeros = ctx.constant({xs[0], c * padTotal}, elementTypeOf(x), {0.0});
  Value y = ctx.scatter(zeros, idx, ctx.reshape(x, {xs[0], entries}), 1,
                        ScatterReduction::add);
  SmallVector<int64_t> shape = {xs[0], c};
  shape.append(padded.begin(), padded.end());
  y = ctx.reshape(y, shape);
  for (size_t i = 0; i < n; ++i)
    y = ctx.slice(y, i + 2, (*pads)[i], (*image)[i]);
  return ctx.result(y);
}

/// LpPool: (sum over each window of |x|^p)^(1/p), the sum being a depthwise
/// convolution with a kernel of ones (padding counts as zeros).
static LogicalResult importLpPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)) || failed(requireSpatial(ctx, x)))
    return failure();
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.emitError() << "attribute 'kernel_shape' is required";
  ArrayRef<int64_t> xs = shapeOf(x);
  size_t n = xs.size() - 2;
  FailureOr<SmallVector<int64_t>> kernel =
      spatialList(ctx, "kernel_shape", n, 1);
  if (failed(kernel))
    return failure();
  FailureOr<Window> win = readWindow(ctx, xs, *kernel, ctx.opset >= 18);
  bool ceilMode = ctx.opset >= 18 && ctx.getInt("ceil_mode", 0);
  double p = ctx.opset < 2 ? ctx.getFloat("p", 2.0) : ctx.getInt("p", 2);
  if (failed(win) || ctx.hasError())
    return failure();
  if (failed(ctx.requireStatic(x)))
    return failure();
  // The window must fit (the checks of every pooling op).
  if (failed(shapes::pool(xs, *kernel, win->strides, win->padding,
                          win->dilations, ceilMode,
                          [&] { return ctx.emitError(); })))
    return failure();
  // ceil_mode: more end padding so the last (partial) window is computed.
  SmallVector<int64_t> padding = win->padding;
  for (size_t i = 0; i < n; ++i) {
    int64_t out =
        shapes::pooledSize(xs[i + 2], (*kernel)[i], win->strides[i], padding[i],
                           padding[i + n], win->dilations[i], ceilMode);
    int64_t reach = (out - 1) * win->strides[i] +
                    ((*kernel)[i] - 1) * win->dilations[i] + 1;
    padding[i + n] = std::max(padding[i + n], reach - xs[i + 2] - padding[i]);
  }
  Type et = elementTypeOf(x);
  Value a = ctx.unary<AbsOp>(x);
  Value powered = p == 1   ? a
                  : p == 2 ? ctx.binary<MulOp>(a, a)
                           : ctx.binary<PowOp>(a, ctx.scalar(et, p));
  SmallVector<int64_t> wShape = {xs[1], 1};
  wShape.append(kernel->begin(), kernel->end());
  Value ones = ctx.constant(wShape, et, {1.0});
  FailureOr<shapes::Shape> shape = shapes::conv(
      xs, wShape, win->strides, padding, win->dilations, xs[1], ctx.errorFn());
  if (failed(shape) || !powered || !ones)
    return failure();
  Value sum = ctx.b.create<ConvOp>(ctx.loc, RankedTensorType::get(*shape, et),
                                   powered, ones, Value(), win->strides,
                                   padding, win->dilations, xs[1]);
  Value y = p == 1   ? sum
            : p == 2 ? ctx.unary<SqrtOp>(sum)
                     : ctx.binary<PowOp>(sum, ctx.scalar(et, 1.0 / p));
  return ctx.result(y);
}

/// MaxPool's Indices: for each window, the flat input index (row-major, or
/// column-major over the spatial dimensions with storage_order = 1) of its
/// first largest element. Each kernel tap is a strided slice of the input
/// padded with -inf; the taps are visited last to first, each taking the
/// index where it equals the maximum.
static Value maxPoolIndices(NodeContext &ctx, Value x, Value y,
                            const Window &win, int64_t storageOrder) {
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  size_t n = xs.size() - 2;
  if (!cast<RankedTensorType>(x.getType()).hasStaticShape()) {
    ctx.emitError() << "the Indices output needs a static input shape";
    return {};
  }
  if (storageOrder && n != 2) {
    ctx.emitError() << "storage_order = 1 is supported for 2-D pooling only";
    return {};
  }
  SmallVector<int64_t> low(xs.size(), 0), high(xs.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t reach = (ys[i + 2] - 1) * win.strides[i] +
                    (win.kernel[i] - 1) * win.dilations[i] + 1;
    low[i + 2] = win.padding[i];
    high[i + 2] =
        std::max(win.padding[i + n], reach - xs[i + 2] - win.padding[i]);
  }
  Value p = ctx.pad(x, low, high, -std::numeric_limits<double>::infinity());
  Type i64 = ctx.b.getI64Type();
  int64_t rank = xs.size();
  int64_t spatialSize = shapes::numElements(xs.drop_front(2));
  // Flat index of the (batch, channel) plane.
  Value plane = ctx.binary<AddOp>(
      ctx.binary<MulOp>(ctx.iota(xs[0], i64, 0, rank),
                        ctx.scalar(i64, (double)xs[1] * spatialSize)),
      ctx.binary<MulOp>(ctx.iota(xs[1], i64, 1, rank),
                        ctx.scalar(i64, (double)spatialSize)));
  SmallVector<int64_t> taps(n, 0);
  SmallVector<SmallVector<int64_t>> all;
  for (;;) {
    all.push_back(taps);
    int64_t i = n - 1;
    while (i >= 0 && ++taps[i] == win.kernel[i])
      taps[i--] = 0;
    if (i < 0)
      break;
  }
  Value result = ctx.constant(ys, i64, {0.0});
  for (const SmallVector<int64_t> &tap : llvm::reverse(all)) {
    SmallVector<int64_t> offsets(rank, 0), steps(rank, 1);
    Value index = plane;
    int64_t stride = 1;
    SmallVector<int64_t> strideOf(n);
    for (int64_t i = n - 1; i >= 0; --i) {
      strideOf[i] = stride;
      stride *= xs[i + 2];
    }
    if (storageOrder) // column-major over (h, w)
      strideOf = {1, xs[2]};
    for (size_t i = 0; i < n; ++i) {
      offsets[i + 2] = tap[i] * win.dilations[i];
      steps[i + 2] = win.strides[i];
      // Input coordinate of this tap at each output position.
      Value coord = ctx.binary<AddOp>(
          ctx.binary<MulOp>(ctx.iota(ys[i + 2], i64, i + 2, rank),
                            ctx.scalar(i64, (double)win.strides[i])),
          ctx.scalar(i64, (double)(offsets[i + 2] - win.padding[i])));
      index = ctx.binary<AddOp>(
          index,
          ctx.binary<MulOp>(coord, ctx.scalar(i64, (double)strideOf[i])));
    }
    Value cand = ctx.check(ctx.builder().slice(p, offsets, steps, ys));
    Value hit = ctx.compare(ComparePredicate::eq, cand, y);
    result = ctx.select(hit, ctx.broadcastTo(index, ys), result);
  }
  return result;
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
  Value y = ctx.check(ctx.builder().pool<OpT>(x, win->kernel, win->strides,
                                              win->padding, win->dilations,
                                              ceilMode, countPad));
  ctx.setResult(0, viaFloat ? ctx.castTo(y, et) : y);
  if (isMax && ctx.hasOutput(1)) {
    int64_t order = ctx.opset >= 8 ? ctx.getInt("storage_order", 0) : 0;
    Value idx = maxPoolIndices(ctx, x, y, *win, order);
    if (!idx)
      return failure();
    ctx.setResult(1, idx);
  }
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
  ctx.setResult(0, ctx.check(ctx.builder().reduce<OpT>(x, axes, true)));
  return success();
}

static LogicalResult importMatMul(NodeContext &ctx) {
  Value y = ctx.matmul(ctx.input(0), ctx.input(1));
  return ctx.result(y);
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
  Value y = ctx.matmul(a, b);
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
  return ctx.result(y);
}

template <typename OpT> static LogicalResult importSoftmax(NodeContext &ctx) {
  FailureOr<SoftmaxRows> rows = softmaxRows(ctx);
  if (failed(rows))
    return failure();
  Value y = ctx.check(ctx.builder().softmax<OpT>(rows->rows, rows->axis));
  ctx.setResult(0, ctx.reshape(y, shapeOf(ctx.input(0))));
  return success();
}

void mlir::tcc::onnx::registerNNOps(OpTable &t) {
  t.add("Conv", 1, 2, 3, 1, importConv);
  t.add("ConvTranspose", 1, 2, 3, 1, importConvTranspose);
  t.add("ConvInteger", 10, 2, 4, 1, importConvInteger);
  t.add("QLinearConv", 10, 8, 9, 1, importQLinearConv);
  t.add("LpPool", 1, 1, 1, 1, importLpPool);
  t.add("MaxUnpool", 9, 2, 3, 1, importMaxUnpool);
  t.add("Col2Im", 18, 3, 3, 1, importCol2Im);
  t.add("CausalConvWithState", 27, 2, 4, 2, importCausalConvWithState);
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
}
