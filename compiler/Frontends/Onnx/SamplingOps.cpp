//===- SamplingOps.cpp - ONNX GridSample and AffineGrid -------------------===//
//
// GridSample reads the input at data-dependent positions: the coordinates
// are computed from the grid with elementwise ops (denormalization, border
// clamping or reflection, rounding for nearest), and each interpolation tap
// (2 per dimension for linear, 4 for cubic, 1 for nearest) is one
// tcc.gather from the flattened input at the tap's linear index, weighted
// and summed. AffineGrid multiplies its constant base grid by theta.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// Reflects `v` into [lo, hi] (ONNX's reference `_gs_reflect`).
static Value reflect(NodeContext &ctx, Value v, double lo, double hi) {
  Type et = elementTypeOf(v);
  auto c = [&](double x) { return ctx.scalar(et, x); };
  double range = hi - lo;
  auto side = [&](Value dx, bool low) {
    Value n = ctx.unary<FloorOp>(ctx.binary<DivOp>(dx, c(range)));
    Value r = ctx.binary<SubOp>(dx, ctx.binary<MulOp>(n, c(range)));
    Value even =
        ctx.compare(ComparePredicate::eq, ctx.binary<RemOp>(n, c(2)), c(0));
    Value fromLo = ctx.binary<AddOp>(c(lo), r);
    Value fromHi = ctx.binary<SubOp>(c(hi), r);
    return low ? ctx.select(even, fromLo, fromHi)
               : ctx.select(even, fromHi, fromLo);
  };
  Value below = ctx.compare(ComparePredicate::lt, v, c(lo));
  Value above = ctx.compare(ComparePredicate::gt, v, c(hi));
  return ctx.select(
      below, side(ctx.binary<SubOp>(c(lo), v), true),
      ctx.select(above, side(ctx.binary<SubOp>(v, c(hi)), false), v));
}

/// Keys' cubic convolution weights (A = -0.75) for the four taps at
/// floor(x) - 1 .. floor(x) + 2, with `t` = x - floor(x).
static SmallVector<Value> cubicWeights(NodeContext &ctx, Value t) {
  Type et = elementTypeOf(t);
  auto c = [&](double x) { return ctx.scalar(et, x); };
  const double a = -0.75;
  auto far = [&](Value d) { // |d| in [1, 2]
    return ctx.binary<SubOp>(
        ctx.binary<MulOp>(
            ctx.binary<AddOp>(
                ctx.binary<MulOp>(
                    ctx.binary<SubOp>(ctx.binary<MulOp>(c(a), d), c(5 * a)), d),
                c(8 * a)),
            d),
        c(4 * a));
  };
  auto near = [&](Value d) { // |d| in [0, 1]
    return ctx.binary<AddOp>(
        ctx.binary<MulOp>(
            ctx.binary<MulOp>(
                ctx.binary<SubOp>(ctx.binary<MulOp>(c(a + 2), d), c(a + 3)), d),
            d),
        c(1));
  };
  Value one = c(1);
  Value u = ctx.binary<SubOp>(one, t);
  return {far(ctx.binary<AddOp>(t, one)), near(t), near(u),
          far(ctx.binary<AddOp>(u, one))};
}

static LogicalResult importGridSample(NodeContext &ctx) {
  Value x = ctx.input(0), grid = ctx.input(1);
  std::string mode =
      ctx.getString("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  std::string padding = ctx.getString("padding_mode", "zeros");
  bool align = ctx.getInt("align_corners", 0);
  if (ctx.hasError() || failed(ctx.requireFloat(x)))
    return failure();
  if (mode == "bilinear")
    mode = "linear";
  if (mode == "bicubic")
    mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    return ctx.unsupportedValue("mode", mode);
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.unsupportedValue("padding_mode", padding);
  ArrayRef<int64_t> xs = shapeOf(x), gs = shapeOf(grid);
  int64_t n = xs.size() - 2;
  if (n < 1 || (int64_t)gs.size() != n + 2 || gs.back() != n ||
      gs[0] != xs[0] || !cast<RankedTensorType>(x.getType()).hasStaticShape() ||
      !cast<RankedTensorType>(grid.getType()).hasStaticShape())
    return ctx.emitError() << "input " << shapes::str(xs) << " and grid "
                           << shapes::str(gs) << " do not match";
  Type et = elementTypeOf(x), i64 = ctx.b.getI64Type();
  Type ft = NodeContext::isHalf(et) ? ctx.b.getF32Type() : et;
  auto c = [&](double v) { return ctx.scalar(ft, v); };
  int64_t batch = xs[0], channels = xs[1];
  ArrayRef<int64_t> dims = xs.drop_front(2);
  SmallVector<int64_t> outSpatial(gs.drop_front().drop_back());
  int64_t spatial = shapes::numElements(dims);
  // Coordinates per data dimension i (the grid lists them innermost first).
  SmallVector<Value> coord(n);
  for (int64_t i = 0; i < n; ++i) {
    Value g = ctx.castTo(ctx.slice(grid, n + 1, n - 1 - i, 1), ft);
    SmallVector<int64_t> s(gs.drop_back());
    g = ctx.reshape(g, s);
    double d = dims[i];
    Value v =
        align
            ? ctx.binary<MulOp>(
                  ctx.binary<DivOp>(ctx.binary<AddOp>(g, c(1)), c(2)), c(d - 1))
            : ctx.binary<DivOp>(
                  ctx.binary<SubOp>(
                      ctx.binary<MulOp>(ctx.binary<AddOp>(g, c(1)), c(d)),
                      c(1)),
                  c(2));
    if (mode == "nearest")
      v = ctx.unary<RoundOp>(v);
    double lo = align ? 0 : -0.5, hi = align ? d - 1 : d - 0.5;
    if (padding == "border")
      v = ctx.clamp(v, 0, d - 1);
    else if (padding == "reflection")
      v = reflect(ctx, v, lo, hi);
    coord[i] = v;
  }
  // Taps per dimension: (index as float, weight).
  SmallVector<SmallVector<std::pair<Value, Value>>> taps(n);
  for (int64_t i = 0; i < n; ++i) {
    Value v = coord[i];
    if (mode == "nearest") {
      taps[i].push_back({v, Value()});
      continue;
    }
    Value f = ctx.unary<FloorOp>(v);
    Value t = ctx.binary<SubOp>(v, f);
    if (mode == "linear") {
      taps[i].push_back({f, ctx.binary<SubOp>(c(1), t)});
      taps[i].push_back({ctx.binary<AddOp>(f, c(1)), t});
    } else {
      SmallVector<Value> w = cubicWeights(ctx, t);
      for (int64_t k = 0; k < 4; ++k)
        taps[i].push_back({ctx.binary<AddOp>(f, c(k - 1)), w[k]});
    }
  }
  // The flattened input and the offset of each (batch, channel) plane.
  Value flat = ctx.reshape(x, {shapes::numElements(xs)});
  SmallVector<int64_t> planeShape = {batch, channels};
  planeShape.append(outSpatial.size(), 1);
  Value plane = ctx.binary<AddOp>(
      ctx.binary<MulOp>(ctx.iota(batch, i64, 0, planeShape.size()),
                        ctx.scalar(i64, (double)channels * spatial)),
      ctx.binary<MulOp>(ctx.iota(channels, i64, 1, planeShape.size()),
                        ctx.scalar(i64, (double)spatial)));
  SmallVector<int64_t> coordShape = {batch, 1};
  coordShape.append(outSpatial.begin(), outSpatial.end());
  Value sum;
  SmallVector<int64_t> pick(n, 0);
  while (true) {
    // The tap combination `pick`: its weight, validity and linear index.
    Value weight, valid, linear;
    int64_t stride = spatial;
    for (int64_t i = 0; i < n; ++i) {
      auto [idxF, w] = taps[i][pick[i]];
      stride /= dims[i];
      Value idx = idxF;
      double d = dims[i];
      if (padding == "border")
        idx = ctx.clamp(idx, 0, d - 1);
      else if (padding == "reflection")
        idx = reflect(ctx, idx, align ? 0 : -0.5, align ? d - 1 : d - 0.5);
      Value ii = ctx.castTo(idx, i64);
      if (padding == "zeros") {
        Value ok = ctx.binary<AndOp>(
            ctx.compare(ComparePredicate::ge, ii, ctx.scalar(i64, 0)),
            ctx.compare(ComparePredicate::lt, ii, ctx.scalar(i64, d)));
        valid = valid ? ctx.binary<AndOp>(valid, ok) : ok;
      }
      ii = ctx.clamp(ii, 0, d - 1);
      Value term = ctx.binary<MulOp>(ii, ctx.scalar(i64, (double)stride));
      linear = linear ? ctx.binary<AddOp>(linear, term) : term;
      if (w)
        weight = weight ? ctx.binary<MulOp>(weight, w) : w;
    }
    Value idx = ctx.binary<AddOp>(ctx.reshape(linear, coordShape), plane);
    Value val = ctx.castTo(ctx.gather(flat, idx, 0), ft);
    if (valid)
      val = ctx.select(ctx.reshape(valid, coordShape), val, c(0));
    if (weight)
      val = ctx.binary<MulOp>(val, ctx.reshape(weight, coordShape));
    sum = sum ? ctx.binary<AddOp>(sum, val) : val;
    if (!sum)
      return failure();
    int64_t i = n - 1;
    while (i >= 0 && ++pick[i] == (int64_t)taps[i].size())
      pick[i--] = 0;
    if (i < 0)
      break;
  }
  ctx.setResult(0, ctx.castTo(sum, et));
  return success();
}

static LogicalResult importAffineGrid(NodeContext &ctx) {
  Value theta = ctx.input(0);
  bool align = ctx.getInt("align_corners", 0);
  FailureOr<SmallVector<int64_t>> size = ctx.constInts(1);
  if (failed(size) || ctx.hasError() || failed(ctx.requireFloat(theta)))
    return failure();
  int64_t n = size->size() - 2;
  ArrayRef<int64_t> ts = shapeOf(theta);
  if ((n != 2 && n != 3) || ts.size() != 3 || ts[1] != n || ts[2] != n + 1 ||
      ts[0] != (*size)[0])
    return ctx.emitError() << "theta " << shapes::str(ts)
                           << " does not match size " << shapes::str(*size);
  ArrayRef<int64_t> dims = ArrayRef<int64_t>(*size).drop_front(2);
  int64_t points = shapes::numElements(dims);
  Type et = elementTypeOf(theta);
  // The base grid's size is checked (negative sizes, the caps on a tensor)
  // before it is built element by element.
  if (llvm::any_of(dims, [](int64_t d) { return d < 1; }))
    return ctx.emitError() << "size " << shapes::str(*size)
                           << " has a spatial size below 1";
  if (!ctx.tensorType({points, n + 1}, et))
    return failure();
  // Base grid [points, n + 1]: (x, y[, z], 1) per output position, x the
  // innermost dimension.
  auto at = [&](int64_t i, int64_t len) {
    return align ? (len == 1 ? -1.0 : -1.0 + 2.0 * i / (len - 1))
                 : (2.0 * i + 1) / len - 1;
  };
  SmallVector<double> base;
  for (int64_t p = 0; p < points; ++p) {
    SmallVector<int64_t> idx(n);
    int64_t rest = p;
    for (int64_t i = n - 1; i >= 0; --i) {
      idx[i] = rest % dims[i];
      rest /= dims[i];
    }
    for (int64_t i = n - 1; i >= 0; --i)
      base.push_back(at(idx[i], dims[i]));
    base.push_back(1.0);
  }
  Value b = ctx.constant({points, n + 1}, et, base);
  // [N, points, n] = base @ theta^T
  Value g = ctx.matmul(b, ctx.transpose(theta, {0, 2, 1}));
  SmallVector<int64_t> out = {ts[0]};
  out.append(dims.begin(), dims.end());
  out.push_back(n);
  Value y = ctx.reshape(g, out);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerSamplingOps(OpTable &t) {
  t.add("GridSample", 16, 2, 2, 1, importGridSample);
  t.add("AffineGrid", 20, 2, 2, 1, importAffineGrid);
}
