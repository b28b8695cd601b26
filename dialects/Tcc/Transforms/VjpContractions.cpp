//===- VjpContractions.cpp - VJP rules of matmul, conv and pooling --------===//
//
// The gradients of contractions are contractions again, so they reach the
// same micro-kernels as the forward pass:
//   * matmul: g @ b^T and a^T @ g, with numpy's 1-D and batch cases;
//   * conv: the input gradient is a transposed convolution, written as a
//     convolution of the stride-dilated cotangent with the flipped weights
//     (input and output channels swapped per group); the weight gradient is
//     a convolution of the input with the cotangent, batch and channels
//     swapped, stride and dilation exchanged;
//   * pooling: one strided window per kernel tap; each tap's share of the
//     cotangent is scattered back with the transpose of that strided read.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tcc/Transforms/VjpRules.h"

#include "dialects/Tcc/IR/TccShapes.h"

#include <limits>

using namespace mlir;
using namespace mlir::tcc;

using P = ComparePredicate;

namespace {

LogicalResult vjpMatmul(MatmulOp op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  Value lhs = op.getLhs(), rhs = op.getRhs(), g = ct[0];
  if (!isa<FloatType>(VjpBuilder::elementOf(lhs)))
    return success();
  ArrayRef<int64_t> ls = VjpBuilder::shapeOf(lhs),
                    rs = VjpBuilder::shapeOf(rhs);
  if (ls.size() == 1 && rs.size() == 1) {
    out[0] = b.mul(g, rhs);
    out[1] = b.mul(g, lhs);
    return success();
  }
  // Vectors become matrices ([k] -> [1, k] on the left, [k, 1] on the
  // right), and the cotangent gets the dimension matmul dropped.
  SmallVector<int64_t> gShape(VjpBuilder::shapeOf(g));
  Value a = lhs, c = rhs;
  if (ls.size() == 1) {
    a = b.reshape(lhs, {1, ls[0]});
    gShape.insert(gShape.end() - 1, 1);
  }
  if (rs.size() == 1) {
    c = b.reshape(rhs, {rs[0], 1});
    gShape.push_back(1);
  }
  Value gm = b.reshape(g, gShape);
  ArrayRef<int64_t> as = VjpBuilder::shapeOf(a), cs = VjpBuilder::shapeOf(c);
  // dA = g @ B^T, summed over broadcast batch dimensions.
  Value da = b.sumToShape(b.matmul(gm, b.transposeLast2(c)), as);
  // dB = A^T @ g. With a matrix B and a batched A, the batch folds into the
  // rows: one matrix product instead of a batch and a sum.
  Value dc;
  if (cs.size() == 2 && as.size() > 2) {
    int64_t k = as.back(), n = cs.back();
    Value a2 = b.reshape(a, {shapes::numElements(as) / k, k});
    Value g2 = b.reshape(gm, {shapes::numElements(as) / as[as.size() - 2] / k *
                                  as[as.size() - 2],
                              n});
    dc = b.matmul(b.transposeLast2(a2), g2);
  } else {
    dc = b.sumToShape(b.matmul(b.transposeLast2(a), gm), cs);
  }
  out[0] = b.reshape(da, ls);
  out[1] = b.reshape(dc, rs);
  return success();
}

LogicalResult vjpConv(ConvOp op, VjpBuilder &b, ValueRange ct,
                      MutableArrayRef<Value> out) {
  Value x = op.getInput(), w = op.getWeight(), g = ct[0];
  ArrayRef<int64_t> xs = VjpBuilder::shapeOf(x), ws = VjpBuilder::shapeOf(w),
                    gs = VjpBuilder::shapeOf(g);
  int64_t n = xs.size() - 2, groups = op.getGroups();
  int64_t batch = xs[0], channels = xs[1], filters = ws[0];
  int64_t cg = channels / groups, fg = filters / groups;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    padding = op.getPadding();
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, n + 2));

  // Bias: the sum over everything but the channels.
  if (op.getBias()) {
    SmallVector<int64_t> axes = {0};
    axes.append(spatial);
    out[2] = b.reduceSum(g, axes, /*keepdims=*/false);
  }

  // Input: the stride-dilated cotangent convolved with the flipped kernels,
  // [F, C/G, K..] -> [G*C/G, F/G, K..].
  {
    SmallVector<int64_t> factors = {1, 1};
    factors.append(strides.begin(), strides.end());
    Value gd = b.dilate(g, factors);
    SmallVector<int64_t> flipOffsets = {0, 0}, flipSteps = {1, 1};
    for (int64_t i = 0; i < n; ++i) {
      flipOffsets.push_back(ws[2 + i] - 1);
      flipSteps.push_back(-1);
    }
    Value wf = b.slice(w, flipOffsets, flipSteps, ws);
    SmallVector<int64_t> grouped = {groups, fg, cg};
    grouped.append(ws.begin() + 2, ws.end());
    SmallVector<int64_t> perm = {0, 2, 1};
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(3 + i);
    SmallVector<int64_t> swapped = {channels, fg};
    swapped.append(ws.begin() + 2, ws.end());
    wf = b.reshape(b.transpose(b.reshape(wf, grouped), perm), swapped);
    SmallVector<int64_t> convPad(2 * n), crop(2 * n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t span = dilations[i] * (ws[2 + i] - 1);
      int64_t rest =
          (xs[2 + i] + padding[i] + padding[n + i] - span - 1) % strides[i];
      int64_t low = span - padding[i], high = span - padding[n + i] + rest;
      convPad[i] = std::max<int64_t>(low, 0);
      convPad[n + i] = std::max<int64_t>(high, 0);
      crop[i] = convPad[i] - low;
      crop[n + i] = convPad[n + i] - high;
    }
    SmallVector<int64_t> ones(n, 1);
    Value dx = b.conv(gd, wf, ones, convPad, dilations, groups);
    if (llvm::any_of(crop, [](int64_t c) { return c != 0; })) {
      SmallVector<int64_t> offsets = {0, 0}, steps(n + 2, 1);
      for (int64_t i = 0; i < n; ++i)
        offsets.push_back(crop[i]);
      dx = b.slice(dx, offsets, steps, xs);
    }
    out[0] = dx;
  }

  // Weight, 2-D ungrouped with a modest im2col: one GEMM over every output
  // position of every image, dW [F, C*KH*KW] = g [F, N*OH*OW] x cols
  // [N*OH*OW, C*KH*KW], the columns being the KH*KW strided windows of the
  // padded input. The general form below is a convolution whose kernel is
  // the whole cotangent image, which packs poorly when the result (KH x KW)
  // is small.
  int64_t taps = n == 2 ? ws[2] * ws[3] : 0;
  int64_t colsElements = n == 2 ? batch * gs[2] * gs[3] * channels * taps : 0;
  if (n == 2 && groups == 1 && colsElements <= (int64_t(1) << 22)) {
    Value xp = b.pad(x, {0, 0, padding[0], padding[1]},
                     {0, 0, padding[2], padding[3]});
    SmallVector<Value> windows;
    SmallVector<int64_t> window = {batch, channels, gs[2], gs[3]};
    SmallVector<int64_t> window5 = {batch, channels, 1, gs[2], gs[3]};
    for (int64_t i = 0; i < ws[2]; ++i)
      for (int64_t j = 0; j < ws[3]; ++j)
        windows.push_back(
            b.reshape(b.slice(xp, {0, 0, i * dilations[0], j * dilations[1]},
                              {1, 1, strides[0], strides[1]}, window),
                      window5));
    Value cols = windows.size() == 1 ? windows[0] : b.concat(windows, 2);
    cols = b.reshape(b.transpose(cols, {0, 3, 4, 1, 2}),
                     {batch * gs[2] * gs[3], channels * taps});
    Value g2 = b.reshape(b.transpose(g, {1, 0, 2, 3}),
                         {filters, batch * gs[2] * gs[3]});
    out[1] = b.reshape(b.matmul(g2, cols), ws);
    return success();
  }

  // Weight: x as [C/G, G*N, S..] convolved with g as [G*F/G, N, O..] in G
  // groups, stride and dilation exchanged: [C/G, F, K'..] with K' >= K.
  {
    SmallVector<int64_t> xGrouped = {batch, groups, cg}, xPerm = {2, 1, 0},
                         xShape = {cg, groups * batch};
    xGrouped.append(xs.begin() + 2, xs.end());
    xShape.append(xs.begin() + 2, xs.end());
    SmallVector<int64_t> gGrouped = {batch, groups, fg}, gPerm = {1, 2, 0},
                         gShape = {filters, batch};
    gGrouped.append(gs.begin() + 2, gs.end());
    gShape.append(gs.begin() + 2, gs.end());
    for (int64_t i = 0; i < n; ++i) {
      xPerm.push_back(3 + i);
      gPerm.push_back(3 + i);
    }
    Value xt = b.reshape(b.transpose(b.reshape(x, xGrouped), xPerm), xShape);
    Value gt = b.reshape(b.transpose(b.reshape(g, gGrouped), gPerm), gShape);
    Value dw = b.conv(xt, gt, dilations, padding, strides, groups);
    SmallVector<int64_t> zeros(n + 2, 0), steps(n + 2, 1), kept = {cg, filters};
    kept.append(ws.begin() + 2, ws.end());
    dw = b.slice(dw, zeros, steps, kept);
    SmallVector<int64_t> perm = {1, 0};
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(2 + i);
    out[1] = b.transpose(dw, perm);
  }
  return success();
}

/// The geometry of a pooling op: the input padded (at the end also for
/// ceil_mode's partial windows) so every window lies inside it.
struct PoolGeometry {
  SmallVector<int64_t> padded, low, high;
  SmallVector<SmallVector<int64_t>> taps; // Offsets of each kernel tap.
  SmallVector<int64_t> steps;
};

template <typename OpT> PoolGeometry poolGeometry(OpT op) {
  ArrayRef<int64_t> xs = VjpBuilder::shapeOf(op.getInput()),
                    os = VjpBuilder::shapeOf(op.getResult());
  int64_t n = xs.size() - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dilations = op.getDilations(), padding = op.getPadding();
  PoolGeometry geo;
  geo.padded = {xs[0], xs[1]};
  geo.low = {0, 0};
  geo.high = {0, 0};
  geo.steps = {1, 1};
  for (int64_t i = 0; i < n; ++i) {
    int64_t needed =
        (os[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
    int64_t extent = std::max(xs[2 + i] + padding[i] + padding[n + i], needed);
    geo.padded.push_back(extent);
    geo.low.push_back(padding[i]);
    geo.high.push_back(extent - xs[2 + i] - padding[i]);
    geo.steps.push_back(strides[i]);
  }
  int64_t taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  for (int64_t t = 0; t < taps; ++t) {
    SmallVector<int64_t> offsets = {0, 0};
    int64_t rest = t;
    SmallVector<int64_t> index(n);
    for (int64_t i = n - 1; i >= 0; --i) {
      index[i] = rest % kernel[i];
      rest /= kernel[i];
    }
    for (int64_t i = 0; i < n; ++i)
      offsets.push_back(index[i] * dilations[i]);
    geo.taps.push_back(offsets);
  }
  return geo;
}

/// Crops the padded gradient back to the input.
template <typename OpT>
Value cropPadded(OpT op, VjpBuilder &b, const PoolGeometry &geo, Value g) {
  SmallVector<int64_t> ones(geo.low.size(), 1);
  return b.slice(g, geo.low, ones, VjpBuilder::shapeOf(op.getInput()));
}

/// Windows that tile the input (stride = kernel, no dilation, padding or
/// partial window) are axes of their own in a view of it: x as
/// [N, C, O1, K1, O2, K2, ..], a window's value as [N, C, O1, 1, O2, 1, ..].
/// The backward then needs no scatter of one slice per tap.
struct TiledView {
  SmallVector<int64_t> input, window, taps, tapAxes;
};

template <typename OpT> std::optional<TiledView> tiledView(OpT op) {
  ArrayRef<int64_t> xs = VjpBuilder::shapeOf(op.getInput()),
                    os = VjpBuilder::shapeOf(op.getResult());
  int64_t n = xs.size() - 2;
  ArrayRef<int64_t> kernel = op.getKernel();
  TiledView view;
  view.input = {xs[0], xs[1]};
  view.window = {xs[0], xs[1]};
  view.taps = {1, 1};
  for (int64_t i = 0; i < n; ++i) {
    if (op.getStrides()[i] != kernel[i] || op.getDilations()[i] != 1 ||
        op.getPadding()[i] != 0 || op.getPadding()[n + i] != 0 ||
        os[2 + i] * kernel[i] != xs[2 + i])
      return std::nullopt;
    view.input.append({os[2 + i], kernel[i]});
    view.window.append({os[2 + i], 1});
    view.taps.append({1, kernel[i]});
    view.tapAxes.push_back(3 + 2 * i);
  }
  return view;
}

/// Each window's gradient goes to its first maximum, in the scan order of
/// the kernel (as PyTorch's kernels pick it); a NaN is a window's maximum.
LogicalResult vjpMaxPool(MaxPoolOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  Value x = op.getInput(), y = op.getResult(), g = ct[0];
  std::optional<TiledView> view = tiledView(op);
  int64_t taps = shapes::numElements(op.getKernel());
  if (view && taps <= 256) { // tap numbers exact even in bf16
    // Tap numbers counted down from the first: the first maximum of a
    // window has the largest among its maxima.
    Value x6 = b.reshape(x, view->input), y6 = b.reshape(y, view->window);
    SmallVector<double> countdown;
    for (int64_t t = taps - 1; t >= 0; --t)
      countdown.push_back(double(t));
    Value tap = b.constant(
        RankedTensorType::get(view->taps, VjpBuilder::elementOf(x)), countdown);
    Value hit = b.binary<OrOp>(b.cmp(P::eq, x6, y6), b.cmp(P::ne, x6, x6));
    Value first = b.reduceMax(b.select(hit, tap, b.scalarLike(x, -1.0)),
                              view->tapAxes, /*keepdims=*/true);
    Value taken = b.cmp(P::eq, tap, first);
    out[0] = b.reshape(b.where(taken, b.reshape(g, view->window)),
                       VjpBuilder::shapeOf(x));
    return success();
  }
  PoolGeometry geo = poolGeometry(op);
  Value xp =
      b.pad(x, geo.low, geo.high, -std::numeric_limits<double>::infinity());
  ArrayRef<int64_t> os = VjpBuilder::shapeOf(y);
  Value taken, grad;
  for (ArrayRef<int64_t> offsets : geo.taps) {
    Value window = b.slice(xp, offsets, geo.steps, os);
    Value hit = b.cmp(P::eq, window, y);
    if (taken) {
      Value first = b.logicalAnd(hit, b.logicalNot(taken));
      taken = b.binary<OrOp>(taken, hit);
      hit = first;
    } else {
      taken = hit;
    }
    Value share = b.unslice(b.where(hit, g), geo.padded, offsets, geo.steps);
    grad = grad ? b.add(grad, share) : share;
  }
  out[0] = cropPadded(op, b, geo, grad);
  return success();
}

/// Each tap gets the cotangent divided by its window's divisor.
LogicalResult vjpAvgPool(AvgPoolOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  Value x = op.getInput(), g = ct[0];
  ArrayRef<int64_t> xs = VjpBuilder::shapeOf(x),
                    os = VjpBuilder::shapeOf(op.getResult());
  int64_t n = xs.size() - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dilations = op.getDilations(), padding = op.getPadding();
  // The divisor is separable: per dimension, the taps of window o that lie
  // inside the input (or inside the input and its explicit pads).
  SmallVector<SmallVector<double>> perDim(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < os[2 + i]; ++o) {
      int64_t count = 0;
      for (int64_t t = 0; t < kernel[i]; ++t) {
        int64_t pos = o * strides[i] + t * dilations[i] - padding[i];
        int64_t lo = op.getCountIncludePad() ? -padding[i] : 0;
        int64_t hi =
            op.getCountIncludePad() ? xs[2 + i] + padding[n + i] : xs[2 + i];
        count += pos >= lo && pos < hi;
      }
      perDim[i].push_back(count ? 1.0 / double(count) : 0.0);
    }
  SmallVector<int64_t> windowShape(os.begin() + 2, os.end());
  int64_t windows = shapes::numElements(windowShape);
  SmallVector<double> inverse(windows, 1.0);
  for (int64_t w = 0; w < windows; ++w) {
    int64_t rest = w;
    for (int64_t i = n - 1; i >= 0; --i) {
      inverse[w] *= perDim[i][rest % os[2 + i]];
      rest /= os[2 + i];
    }
  }
  Value scale = b.constant(
      RankedTensorType::get(windowShape, VjpBuilder::elementOf(x)), inverse);
  Value gs = b.mul(g, scale);
  if (std::optional<TiledView> view = tiledView(op)) {
    out[0] =
        b.reshape(b.broadcastTo(b.reshape(gs, view->window), view->input), xs);
    return success();
  }
  PoolGeometry geo = poolGeometry(op);
  Value grad;
  for (ArrayRef<int64_t> offsets : geo.taps) {
    Value share = b.unslice(gs, geo.padded, offsets, geo.steps);
    grad = grad ? b.add(grad, share) : share;
  }
  out[0] = cropPadded(op, b, geo, grad);
  return success();
}

} // namespace

void mlir::tcc::attachContractionVjps(MLIRContext &ctx) {
  attachVjp<MatmulOp, vjpMatmul>(ctx);
  attachVjp<ConvOp, vjpConv>(ctx);
  attachVjp<MaxPoolOp, vjpMaxPool>(ctx);
  attachVjp<AvgPoolOp, vjpAvgPool>(ctx);
}
