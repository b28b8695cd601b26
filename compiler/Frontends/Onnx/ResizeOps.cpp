//===- ResizeOps.cpp - ONNX Resize and Upsample ---------------------------===//
//
// Resizing is separable: each resized axis applies, at compile time, a
// weight matrix [out, in] computed exactly as ONNX's reference computes its
// per-axis coefficients (coordinate transformation, nearest rounding,
// linear and cubic kernels, antialiasing, exclude_outside, edge clamping).
// Nearest resizing becomes a tcc.gather of the one source index per output;
// the others a tcc.matmul of the weights with the data viewed as
// [before, in, after]. tf_crop_and_resize positions outside the input take
// extrapolation_value. Scales or sizes known only at run time (graph
// inputs) give sizes the run computes: nearest and linear taps are then
// computed as the model runs, at the --dim bound of each resized axis, and
// trimmed (resizeAtRunTime).
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

namespace {
struct ResizeParams {
  std::string mode = "nearest", ctm = "half_pixel",
              nearestMode = "round_prefer_floor";
  double cubicA = -0.75, extrapolation = 0;
  bool antialias = false, excludeOutside = false;
};

/// One output position's taps along an axis.
struct Row {
  SmallVector<int64_t> index;
  SmallVector<double> weight;
  bool extrapolated = false;
};
} // namespace

static SmallVector<double> coefficients(const ResizeParams &p, double ratio,
                                        double scale) {
  if (p.mode == "nearest") {
    if (ratio == std::floor(ratio))
      return {0, 1};
    if (p.nearestMode == "round_prefer_floor")
      return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (p.nearestMode == "round_prefer_ceil")
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (p.nearestMode == "floor")
      return {1, 0};
    return {0, 1}; // ceil
  }
  if (p.mode == "linear") {
    if (!p.antialias)
      return {1 - ratio, ratio};
    double s = std::min(scale, 1.0);
    int64_t start = (int64_t)std::floor(-1 / s) + 1;
    int64_t footprint = 2 - 2 * start;
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < start + footprint; ++i) {
      double v = std::clamp(1 - std::abs((i - ratio) * s), 0.0, 1.0);
      c.push_back(v);
      sum += v;
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  // cubic
  double a = p.cubicA;
  if (!p.antialias) {
    double r = ratio, q = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a};
  }
  double s = std::min(scale, 1.0);
  auto kernel = [&](double x) {
    x = std::abs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1)
      return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2)
      return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0.0;
  };
  int64_t iStart = (int64_t)std::floor(-2 / s) + 1, iEnd = 2 - iStart;
  SmallVector<double> c;
  double sum = 0;
  for (int64_t i = iStart; i < iEnd; ++i) {
    c.push_back(kernel(s * (i - ratio)));
    sum += c.back();
  }
  for (double &v : c)
    v /= sum;
  return c;
}

/// The taps of every output position along one axis (ONNX's
/// _interpolate_1d_along_axis).
static FailureOr<SmallVector<Row>> axisRows(NodeContext &ctx,
                                            const ResizeParams &p, int64_t in,
                                            int64_t out, double scale,
                                            double roiStart, double roiEnd) {
  SmallVector<Row> rows;
  double outWidth = scale * in;
  for (int64_t y = 0; y < out; ++y) {
    double x;
    bool extrapolated = false;
    const std::string &m = p.ctm;
    if (m == "align_corners") {
      x = outWidth == 1 ? 0 : y * double(in - 1) / (outWidth - 1);
    } else if (m == "asymmetric") {
      x = y / scale;
    } else if (m == "tf_crop_and_resize") {
      x = outWidth == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                        : y * (roiEnd - roiStart) * (in - 1) / (outWidth - 1);
      x += roiStart * (in - 1);
      extrapolated = x < 0 || x > in - 1;
    } else if (m == "pytorch_half_pixel") {
      x = outWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    } else if (m == "half_pixel") {
      x = (y + 0.5) / scale - 0.5;
    } else if (m == "half_pixel_symmetric") {
      double adjustment = out / outWidth, center = in / 2.0;
      x = center * (1 - adjustment) + (y + 0.5) / scale - 0.5;
    } else {
      (void)ctx.unsupportedValue("coordinate_transformation_mode", m);
      return failure();
    }
    // Bounded so that the tap arithmetic below cannot overflow (hostile
    // scales or roi give infinities, NaN or huge coordinates).
    if (!(std::abs(x) <= (double)kMaxElements)) {
      ctx.emitError() << "output position " << y << " samples coordinate " << x
                      << ", which is out of range";
      return failure();
    }
    double xi = std::floor(x);
    double ratio = x == xi ? 1.0 : x - xi;
    SmallVector<double> c = coefficients(p, ratio, scale);
    int64_t n = c.size(), pad = (n + 1) / 2;
    double padded = x + pad, pp = std::floor(padded), frac = padded - pp;
    int64_t offset;
    if (n % 2 == 0)
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    int64_t start = (int64_t)pp + offset - pad;
    Row row;
    row.extrapolated = extrapolated;
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      int64_t idx = start + k;
      double w = c[k];
      if (p.excludeOutside && (idx < 0 || idx >= in))
        w = 0;
      sum += w;
      row.index.push_back(std::clamp<int64_t>(idx, 0, in - 1));
      row.weight.push_back(w);
    }
    if (p.excludeOutside)
      for (double &w : row.weight)
        w /= sum == 0 ? 1 : sum;
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Applies one axis' rows to `x`.
static Value resizeAxis(NodeContext &ctx, const ResizeParams &p, Value x,
                        int64_t axis, ArrayRef<Row> rows) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t in = shape[axis], out = rows.size();
  Type et = elementTypeOf(x);
  Type i64 = ctx.b.getI64Type();
  bool anyExtrapolated =
      llvm::any_of(rows, [](const Row &r) { return r.extrapolated; });
  Value y;
  if (p.mode == "nearest") {
    SmallVector<double> idx;
    for (const Row &r : rows) {
      int64_t pick = r.index.back();
      for (auto [i, w] : llvm::zip(r.index, r.weight))
        if (w != 0)
          pick = i;
      idx.push_back(pick);
    }
    y = ctx.gather(x, ctx.constant({out}, i64, idx), axis);
  } else {
    Type ft = isa<FloatType>(et) ? et : ctx.b.getF32Type();
    // The interpolation matrix is built in doubles: it must fit the caps
    // before it is allocated.
    if (failed(checkTensorSize({out, in}, ctx.b.getF64Type(), ctx.limits,
                               "the interpolation matrix", ctx.errorFn())))
      return {};
    SmallVector<double> w(out * in, 0.0);
    for (auto [o, r] : llvm::enumerate(rows))
      if (!r.extrapolated)
        for (auto [i, wt] : llvm::zip(r.index, r.weight))
          w[o * in + i] += wt;
    int64_t before = shapes::numElements(shape.take_front(axis));
    int64_t after = shapes::numElements(shape.drop_front(axis + 1));
    Value v = ctx.reshape(ctx.castTo(x, ft), {before, in, after});
    y = ctx.matmul(ctx.constant({out, in}, ft, w), v);
    SmallVector<int64_t> outShape(shape);
    outShape[axis] = out;
    y = ctx.reshape(y, outShape);
    if (ft != et)
      y = ctx.castTo(y, et);
  }
  if (anyExtrapolated && y) {
    SmallVector<double> mask;
    for (const Row &r : rows)
      mask.push_back(r.extrapolated);
    SmallVector<int64_t> maskShape(shape.size(), 1);
    maskShape[axis] = out;
    y = ctx.select(ctx.constant(maskShape, ctx.b.getI1Type(), mask),
                   ctx.scalar(et, p.extrapolation), y);
  }
  return y;
}

/// Resizes `x` to `sizes` with `scales` (both full rank) and `roi` (2 *
/// rank entries, or empty).
static Value resize(NodeContext &ctx, const ResizeParams &p, Value x,
                    ArrayRef<int64_t> sizes, ArrayRef<double> scales,
                    ArrayRef<double> roi) {
  int64_t rank = shapeOf(x).size();
  // The result must fit the caps before any axis' taps are computed.
  if (!ctx.tensorType(sizes, elementTypeOf(x)))
    return {};
  for (int64_t a = 0; a < rank && x; ++a) {
    int64_t in = shapeOf(x)[a];
    if (in == 0 && sizes[a] != 0) {
      ctx.emitError() << "cannot resize an empty dimension " << a << " to "
                      << sizes[a];
      return {};
    }
    double r0 = roi.empty() ? 0 : roi[a], r1 = roi.empty() ? 1 : roi[a + rank];
    if (std::abs(scales[a] - 1) < 1e-9 && sizes[a] == in &&
        std::abs(r0) < 1e-9 && std::abs(r1 - 1) < 1e-9)
      continue;
    FailureOr<SmallVector<Row>> rows =
        axisRows(ctx, p, in, sizes[a], scales[a], r0, r1);
    if (failed(rows))
      return {};
    x = resizeAxis(ctx, p, x, a, *rows);
  }
  return x;
}

/// The floats of a constant input, or empty when the input is absent or
/// holds nothing.
static FailureOr<SmallVector<double>> constFloats(NodeContext &ctx,
                                                  unsigned i) {
  if (!ctx.input(i) || shapes::numElements(shapeOf(ctx.input(i))) == 0)
    return SmallVector<double>();
  DenseElementsAttr dense = ctx.constInput(i);
  if (!dense)
    return failure();
  SmallVector<double> out;
  if (isa<FloatType>(dense.getElementType())) {
    for (const APFloat &v : dense.getValues<APFloat>())
      out.push_back(v.convertToDouble());
  } else {
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back((double)v.getSExtValue());
  }
  return out;
}

static LogicalResult checkSpatial(NodeContext &ctx, Value x) {
  if (cast<RankedTensorType>(x.getType()).hasStaticShape())
    return success();
  return ctx.emitError() << "the input's shape " << shapes::str(shapeOf(x))
                         << " must be static; fix it with --input-shape";
}

/// Resize by scales or sizes known only at run time (`given`, one entry
/// per axis of `axes`; `isSizes` for sizes): each resized axis holds its
/// --dim bound of output positions, whose source coordinates, taps and
/// weights are computed as the model runs (nearest: one gathered index;
/// linear: two, blended), trimmed to the run's size.
static LogicalResult resizeAtRunTime(NodeContext &ctx, const ResizeParams &p,
                                     Value x, ArrayRef<int64_t> axes,
                                     unsigned givenAt, bool isSizes,
                                     StringRef policy) {
  Value given = ctx.input(givenAt);
  // (What only constant scales or sizes support asks for them.)
  auto refuse = [&](StringRef what) {
    (void)ctx.constInput(givenAt, (what + " needs it").str());
    return failure();
  };
  if (p.mode == "cubic")
    return refuse("mode = 'cubic'");
  if (p.antialias)
    return refuse("antialias");
  if (p.excludeOutside)
    return refuse("exclude_outside");
  if (policy != "stretch")
    return refuse("keep_aspect_ratio_policy = '" + policy.str() + "'");
  static const char *const modes[] = {"half_pixel", "asymmetric",
                                      "align_corners", "pytorch_half_pixel",
                                      "half_pixel_symmetric"};
  if (!llvm::is_contained(modes, p.ctm))
    return refuse("coordinate_transformation_mode = '" + p.ctm + "'");
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> computed(shape);
  for (int64_t a : axes) {
    if (shape[a] == 0)
      return ctx.emitError()
             << "cannot resize the empty dimension " << a << " by "
             << (isSizes ? "sizes" : "scales") << " known only at run time";
    computed[a] = ShapedType::kDynamic;
  }
  FailureOr<SmallVector<int64_t>> box =
      ctx.computedBox("the resized size", computed);
  if (failed(box))
    return failure();
  Type f64 = ctx.b.getF64Type(), i64 = ctx.b.getI64Type();
  Type et = elementTypeOf(x);
  Type ft = isa<FloatType>(et) ? et : ctx.b.getF32Type();
  auto f = [&](double v) { return ctx.scalar(f64, v); };
  Value y = p.mode == "linear" ? ctx.castTo(x, ft) : x;
  SmallVector<Value> counts;
  for (auto [k, a] : llvm::enumerate(axes)) {
    int64_t in = shape[a], bound = (*box)[a];
    Value entry =
        ctx.castTo(ctx.elementAt(given, int64_t(k)), isSizes ? i64 : f64);
    // The run's size and scale (ONNX: size = floor(scale * in); a scale
    // from sizes is size / in).
    Value size, scale;
    if (isSizes) {
      size = entry;
      scale = ctx.binary<DivOp>(ctx.castTo(entry, f64), f(double(in)));
    } else {
      scale = entry;
      size =
          ctx.castTo(ctx.unary<FloorOp>(ctx.binary<MulOp>(entry, f(in))), i64);
    }
    Value out = ctx.castTo(ctx.iota(bound, i64), f64);
    Value outWidth = ctx.binary<MulOp>(scale, f(double(in)));
    Value centered = ctx.binary<SubOp>(
        ctx.binary<DivOp>(ctx.binary<AddOp>(out, f(0.5)), scale), f(0.5));
    Value coord;
    if (p.ctm == "asymmetric") {
      coord = ctx.binary<DivOp>(out, scale);
    } else if (p.ctm == "align_corners") {
      Value one = ctx.compare(ComparePredicate::eq, outWidth, f(1));
      Value den = ctx.select(one, f(1), ctx.binary<SubOp>(outWidth, f(1)));
      coord = ctx.select(
          one, f(0),
          ctx.binary<DivOp>(ctx.binary<MulOp>(out, f(double(in - 1))), den));
    } else if (p.ctm == "pytorch_half_pixel") {
      coord = ctx.select(ctx.compare(ComparePredicate::eq, outWidth, f(1)),
                         f(-0.5), centered);
    } else if (p.ctm == "half_pixel_symmetric") {
      Value adjustment = ctx.binary<DivOp>(ctx.castTo(size, f64), outWidth);
      coord = ctx.binary<AddOp>(
          ctx.binary<MulOp>(f(in / 2.0), ctx.binary<SubOp>(f(1), adjustment)),
          centered);
    } else { // half_pixel
      coord = centered;
    }
    Value floor = ctx.unary<FloorOp>(coord);
    Value ratio = ctx.binary<SubOp>(coord, floor);
    auto index = [&](Value v) {
      return ctx.binary<MinOp>(
          ctx.binary<MaxOp>(ctx.castTo(v, i64), ctx.scalar(i64, 0)),
          ctx.scalar(i64, double(in - 1)));
    };
    if (p.mode == "nearest") {
      Value pick;
      if (p.nearestMode == "floor") {
        pick = floor;
      } else if (p.nearestMode == "ceil") {
        pick = ctx.unary<CeilOp>(coord);
      } else {
        auto predicate = p.nearestMode == "round_prefer_floor"
                             ? ComparePredicate::le
                             : ComparePredicate::lt;
        pick = ctx.select(ctx.compare(predicate, ratio, f(0.5)), floor,
                          ctx.binary<AddOp>(floor, f(1)));
      }
      y = ctx.gather(y, index(pick), a);
    } else {
      SmallVector<int64_t> at(rank, 1);
      at[a] = bound;
      Value w = ctx.reshape(ctx.castTo(ratio, ft), at);
      Value lo = ctx.gather(y, index(floor), a);
      Value hi = ctx.gather(y, index(ctx.binary<AddOp>(floor, f(1))), a);
      y = ctx.binary<AddOp>(lo,
                            ctx.binary<MulOp>(ctx.binary<SubOp>(hi, lo), w));
    }
    counts.push_back(size);
  }
  if (ft != et && p.mode == "linear")
    y = ctx.castTo(y, et);
  for (auto [k, a] : llvm::enumerate(axes))
    y = ctx.trimDim(y, counts[k], a);
  return ctx.result(y);
}

static LogicalResult importResize(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(checkSpatial(ctx, x)))
    return failure();
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  if (ctx.opset >= 11) {
    p.ctm = ctx.getString("coordinate_transformation_mode", "half_pixel");
    p.nearestMode = ctx.getString("nearest_mode", "round_prefer_floor");
    p.cubicA = ctx.getFloat("cubic_coeff_a", -0.75);
    p.excludeOutside = ctx.getInt("exclude_outside", 0);
    p.extrapolation = ctx.getFloat("extrapolation_value", 0);
  } else {
    // Resize-10 is Upsample: asymmetric coordinates, nearest rounds down.
    p.ctm = "asymmetric";
    p.nearestMode = "floor";
  }
  std::string policy = "stretch";
  SmallVector<int64_t> axes;
  if (ctx.opset >= 18) {
    p.antialias = ctx.getInt("antialias", 0);
    policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
    axes = ctx.getInts("axes");
  }
  if (ctx.hasError())
    return failure();
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    return ctx.unsupportedValue("mode", p.mode);
  if (p.nearestMode != "round_prefer_floor" &&
      p.nearestMode != "round_prefer_ceil" && p.nearestMode != "floor" &&
      p.nearestMode != "ceil")
    return ctx.unsupportedValue("nearest_mode", p.nearestMode);
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return ctx.unsupportedValue("keep_aspect_ratio_policy", policy);
  if (p.mode == "nearest" && p.antialias)
    return ctx.emitError() << "antialias with mode = 'nearest' is not "
                              "supported";
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t &a : axes) {
    FailureOr<int64_t> n = ctx.normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  unsigned scalesAt = ctx.opset >= 11 ? 2 : 1;
  // Scales or sizes known only at run time: sizes the run computes.
  for (unsigned i : {scalesAt, 3u}) {
    Value v = i < ctx.numInputs() ? ctx.input(i) : Value();
    if (!v || (i == 3 && ctx.opset < 11) ||
        shapes::numElements(shapeOf(v)) == 0 || matchPattern(v, m_Constant()))
      continue;
    if (shapeOf(v) != ArrayRef<int64_t>{int64_t(axes.size())})
      return ctx.emitError() << (i == 3 ? "sizes" : "scales") << " must hold "
                             << axes.size() << " values; got " << v.getType();
    return resizeAtRunTime(ctx, p, x, axes, i, i == 3, policy);
  }
  FailureOr<SmallVector<double>> scalesIn = constFloats(ctx, scalesAt);
  FailureOr<SmallVector<double>> sizesIn =
      ctx.opset >= 11 ? constFloats(ctx, 3) : SmallVector<double>();
  FailureOr<SmallVector<double>> roiIn =
      ctx.opset >= 11 ? constFloats(ctx, 1) : SmallVector<double>();
  if (failed(scalesIn) || failed(sizesIn) || failed(roiIn))
    return failure();
  if (scalesIn->empty() == sizesIn->empty())
    return ctx.emitError() << "exactly one of scales and sizes must be given";
  size_t n = axes.size();
  SmallVector<double> scales(rank, 1.0);
  SmallVector<int64_t> sizes(shape);
  if (!scalesIn->empty()) {
    if (scalesIn->size() != n)
      return ctx.emitError() << "scales has " << scalesIn->size()
                             << " entries for " << n << " axes";
    for (size_t i = 0; i < n; ++i) {
      if ((*scalesIn)[i] <= 0)
        return ctx.emitError()
               << "scale " << (*scalesIn)[i] << " must be positive";
      scales[axes[i]] = (*scalesIn)[i];
      sizes[axes[i]] = saturatingInt((*scalesIn)[i] * shape[axes[i]]);
    }
  } else {
    if (sizesIn->size() != n)
      return ctx.emitError() << "sizes has " << sizesIn->size()
                             << " entries for " << n << " axes";
    for (size_t i = 0; i < n; ++i) {
      sizes[axes[i]] = saturatingInt((*sizesIn)[i]);
      scales[axes[i]] = (*sizesIn)[i] / shape[axes[i]];
    }
    if (policy != "stretch") {
      double s = scales[axes[0]];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scales[a])
                                   : std::max(s, scales[a]);
      for (int64_t a : axes) {
        scales[a] = s;
        sizes[a] = saturatingInt(s * shape[a] + 0.5);
      }
    }
  }
  for (int64_t s : sizes)
    if (s < 0 || s > kMaxElements)
      return ctx.emitError() << "output size " << s << " is out of range";
  SmallVector<double> roi;
  if (!roiIn->empty()) {
    if (roiIn->size() != 2 * n)
      return ctx.emitError()
             << "roi has " << roiIn->size() << " entries for " << n << " axes";
    roi.assign(rank, 0.0);
    roi.append(rank, 1.0);
    for (size_t i = 0; i < n; ++i) {
      roi[axes[i]] = (*roiIn)[i];
      roi[rank + axes[i]] = (*roiIn)[n + i];
    }
  }
  if (p.ctm == "tf_crop_and_resize" && roi.empty())
    return ctx.emitError() << "tf_crop_and_resize needs roi";
  Value y = resize(ctx, p, x, sizes, scales, roi);
  return ctx.result(y);
}

static LogicalResult importUpsample(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(checkSpatial(ctx, x)))
    return failure();
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  p.ctm = "asymmetric";
  p.nearestMode = "floor";
  if (p.mode == "bilinear")
    p.mode = "linear";
  if (p.mode != "nearest" && p.mode != "linear")
    return ctx.unsupportedValue("mode", p.mode);
  int64_t rank = shapeOf(x).size();
  SmallVector<double> scales;
  if (ctx.opset < 7) {
    if (rank != 4)
      return ctx.emitError() << "input must be 4-D";
    scales = {1, 1, ctx.getFloat("height_scale", 1),
              ctx.getFloat("width_scale", 1)};
  } else if (ctx.opset < 9) {
    for (float s : ctx.getFloats("scales"))
      scales.push_back(s);
  } else {
    FailureOr<SmallVector<double>> s = constFloats(ctx, 1);
    if (failed(s))
      return failure();
    scales = *s;
  }
  if (ctx.hasError())
    return failure();
  if ((int64_t)scales.size() != rank)
    return ctx.emitError() << "scales has " << scales.size()
                           << " entries for rank " << rank;
  SmallVector<int64_t> sizes;
  for (auto [d, s] : llvm::zip(shapeOf(x), scales))
    sizes.push_back(saturatingInt(d * s));
  Value y = resize(ctx, p, x, sizes, scales, {});
  return ctx.result(y);
}

void mlir::tcc::onnx::registerResizeOps(OpTable &t) {
  t.add("Resize", 10, 2, 2, 1, importResize);
  t.add("Resize", 11, 1, 4, 1, importResize);
  t.add("Upsample", 1, 1, 1, 1, importUpsample);
  t.add("Upsample", 9, 2, 2, 1, importUpsample);
}
