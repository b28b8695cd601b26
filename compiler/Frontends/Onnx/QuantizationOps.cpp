//===- QuantizationOps.cpp - ONNX linear quantization ---------------------===//
//
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as casts,
// rounding (half to even) and saturation, with per-tensor, per-axis and
// blocked scales; MatMulInteger and QLinearMatMul as integer (or f64)
// products of zero-point-shifted operands. Integer quantized types only:
// float8, int4 and friends are types tcc lacks.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// A scale or zero point shaped to broadcast against `x`: one value, one per
/// entry along `axis`, or (blocked) one per `block` entries along `axis`.
static Value spread(NodeContext &ctx, Value v, Value x, int64_t axis,
                    int64_t block) {
  if (!v)
    return {};
  ArrayRef<int64_t> xs = shapeOf(x), vs = shapeOf(v);
  int64_t n = shapes::numElements(vs);
  if (n == 1)
    return ctx.reshape(v, {});
  if (block <= 0) {
    if (vs.size() != 1 || vs[0] != xs[axis]) {
      ctx.emitError() << "scale or zero point " << shapes::str(vs)
                      << " does not match axis " << axis << " of "
                      << shapes::str(xs);
      return {};
    }
    SmallVector<int64_t> s(xs.size(), 1);
    s[axis] = n;
    return ctx.reshape(v, s);
  }
  // Blocked: repeat each entry `block` times along the axis, then cut.
  if (vs.size() != xs.size()) {
    ctx.emitError() << "blocked scale " << shapes::str(vs)
                    << " must have the input's rank";
    return {};
  }
  SmallVector<int64_t> split(vs), wide(vs), merged(vs);
  split.insert(split.begin() + axis + 1, 1);
  wide.insert(wide.begin() + axis + 1, block);
  wide[axis] = vs[axis];
  merged[axis] = vs[axis] * block;
  Value r = ctx.reshape(ctx.broadcastTo(ctx.reshape(v, split), wide), merged);
  return ctx.slice(r, axis, 0, xs[axis]);
}

/// Fails (one diagnostic) unless the scale and zero point have static
/// shapes, and the input too where they are per axis or blocked: spread()
/// computes with those sizes.
static LogicalResult requireStaticScales(NodeContext &ctx, Value x) {
  if (failed(ctx.requireStatic(ctx.input(1), "scale")) ||
      (ctx.input(2) && failed(ctx.requireStatic(ctx.input(2), "zero point"))))
    return failure();
  if (shapes::numElements(shapeOf(ctx.input(1))) != 1)
    return ctx.requireStatic(x);
  return success();
}

/// The quantized integer type: the zero point's, output_dtype, or uint8.
static Type quantizedType(NodeContext &ctx, Value zeroPoint) {
  if (zeroPoint)
    return elementTypeOf(zeroPoint);
  int32_t dtype = ctx.opset >= 21 ? ctx.getInt("output_dtype", 0) : 0;
  if (!dtype)
    return IntegerType::get(ctx.b.getContext(), 8, IntegerType::Unsigned);
  return convertDataType(ctx.b.getContext(), dtype);
}

static LogicalResult requireQuantizedInt(NodeContext &ctx, Type et) {
  if (et && isa<IntegerType>(et) && !et.isInteger(1) &&
      et.getIntOrFloatBitWidth() <= 16)
    return success();
  return ctx.emitError() << "quantized type " << et
                         << " is not supported (8- and 16-bit integers)";
}

/// saturate(round(v) + zeroPoint) in `et` (v floating point).
static Value saturate(NodeContext &ctx, Value v, Value zeroPoint, Type et) {
  unsigned width = et.getIntOrFloatBitWidth();
  bool isUnsigned = et.isUnsignedInteger();
  double lo = isUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  double hi =
      isUnsigned ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  v = ctx.unary<RoundOp>(v);
  if (zeroPoint)
    v = ctx.binary<AddOp>(v, ctx.castTo(zeroPoint, elementTypeOf(v)));
  v = ctx.clamp(v, lo, hi);
  return ctx.castTo(v, et);
}

static LogicalResult importQuantizeLinear(NodeContext &ctx) {
  ctx.ignoreAttrs({"saturate"}); // concerns float8 outputs only
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  int64_t axisValue = ctx.opset >= 13 ? ctx.getInt("axis", 1) : 1;
  int64_t block = ctx.opset >= 21 ? ctx.getInt("block_size", 0) : 0;
  if (ctx.opset >= 25 && ctx.hasAttr("precision"))
    return ctx.emitError() << "attribute 'precision' is not supported";
  Type qt = quantizedType(ctx, ctx.input(2));
  if (ctx.hasError() || failed(requireQuantizedInt(ctx, qt)) ||
      failed(requireStaticScales(ctx, x)))
    return failure();
  // The axis matters only for per-axis and blocked scales.
  bool perAxis = shapes::numElements(shapeOf(ctx.input(1))) != 1;
  FailureOr<int64_t> axis =
      perAxis ? ctx.normalizeAxis(axisValue, rank) : FailureOr<int64_t>(0);
  if (failed(axis))
    return failure();
  Value scale = spread(ctx, ctx.input(1), x, *axis, block);
  Value zp = spread(ctx, ctx.input(2), x, *axis, block);
  if (!scale || (ctx.input(2) && !zp))
    return failure();
  // x / scale in the wider float type of the two, as numpy promotes.
  Type ft = elementTypeOf(scale);
  if (isa<FloatType>(elementTypeOf(x)) &&
      elementTypeOf(x).getIntOrFloatBitWidth() > ft.getIntOrFloatBitWidth())
    ft = elementTypeOf(x);
  Value q = ctx.binary<DivOp>(ctx.castTo(x, ft), ctx.castTo(scale, ft));
  Value y = saturate(ctx, q, zp, qt);
  return ctx.result(y);
}

static LogicalResult importDequantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  int64_t axisValue = ctx.opset >= 13 ? ctx.getInt("axis", 1) : 1;
  int64_t block = ctx.opset >= 21 ? ctx.getInt("block_size", 0) : 0;
  Type out = elementTypeOf(ctx.input(1));
  if (ctx.opset >= 23 && ctx.hasAttr("output_dtype")) {
    int32_t dtype = ctx.getInt("output_dtype", 0);
    out = convertDataType(ctx.b.getContext(), dtype);
    if (!out)
      return ctx.emitError()
             << "output_dtype " << dataTypeName(dtype) << " is not supported";
  }
  if (ctx.hasError())
    return failure();
  Type xt = elementTypeOf(x);
  if (!isa<IntegerType>(xt) || xt.isInteger(1))
    return ctx.emitError() << "input type " << xt << " is not supported";
  if (failed(requireStaticScales(ctx, x)))
    return failure();
  bool perAxis = shapes::numElements(shapeOf(ctx.input(1))) != 1;
  FailureOr<int64_t> axis =
      perAxis ? ctx.normalizeAxis(axisValue, rank) : FailureOr<int64_t>(0);
  if (failed(axis))
    return failure();
  Type f32 = ctx.b.getF32Type();
  Value scale = spread(ctx, ctx.input(1), x, *axis, block);
  Value zp = spread(ctx, ctx.input(2), x, *axis, block);
  if (!scale || (ctx.input(2) && !zp))
    return failure();
  Value d = ctx.castTo(x, f32);
  if (zp)
    d = ctx.binary<SubOp>(d, ctx.castTo(zp, f32));
  Value y = ctx.castTo(ctx.binary<MulOp>(d, ctx.castTo(scale, f32)), out);
  return ctx.result(y);
}

static LogicalResult importDynamicQuantizeLinear(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Type f32 = ctx.b.getF32Type();
  Value xf = ctx.castTo(x, f32);
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value zero = ctx.scalar(f32, 0);
  Value maxv = ctx.binary<MaxOp>(ctx.reduce<ReduceMaxOp>(xf, all, false), zero);
  Value minv = ctx.binary<MinOp>(ctx.reduce<ReduceMinOp>(xf, all, false), zero);
  Value range = ctx.binary<SubOp>(maxv, minv);
  Value same = ctx.compare(ComparePredicate::eq, maxv, minv);
  Value scale = ctx.binary<DivOp>(ctx.select(same, ctx.scalar(f32, 1), range),
                                  ctx.scalar(f32, 255));
  Value zp = ctx.binary<SubOp>(zero, ctx.binary<DivOp>(minv, scale));
  zp = ctx.unary<RoundOp>(ctx.clamp(zp, 0, 255));
  Type u8 = IntegerType::get(ctx.b.getContext(), 8, IntegerType::Unsigned);
  Value q =
      ctx.binary<AddOp>(ctx.unary<RoundOp>(ctx.binary<DivOp>(xf, scale)), zp);
  q = ctx.clamp(q, 0, 255);
  ctx.setResult(0, ctx.castTo(q, u8));
  ctx.setResult(1, ctx.castTo(scale, elementTypeOf(x)));
  ctx.setResult(2, ctx.castTo(zp, u8));
  return success();
}

/// `v` as int32 minus its zero point: one value, or (`perRow`) one per row
/// of a matrix `v`, or one per column.
static Value shifted(NodeContext &ctx, Value v, Value zp, bool perRow) {
  Type i32 = ctx.b.getI32Type();
  Value r = ctx.castTo(v, i32);
  if (!zp)
    return r;
  Value z = ctx.castTo(zp, i32);
  int64_t n = shapes::numElements(shapeOf(zp));
  if (n == 1)
    z = ctx.reshape(z, {});
  else if (perRow)
    z = ctx.reshape(z, {n, 1});
  return ctx.binary<SubOp>(r, z);
}

static LogicalResult importMatMulInteger(NodeContext &ctx) {
  Value a = shifted(ctx, ctx.input(0), ctx.input(2), true);
  Value b = shifted(ctx, ctx.input(1), ctx.input(3), false);
  Value y = ctx.matmul(a, b);
  return ctx.result(y);
}

static LogicalResult importQLinearMatMul(NodeContext &ctx) {
  Type f64 = ctx.b.getF64Type();
  Value a = shifted(ctx, ctx.input(0), ctx.input(2), true);
  Value b = shifted(ctx, ctx.input(3), ctx.input(5), false);
  Value c = ctx.castTo(ctx.matmul(a, b), f64);
  auto scalar = [&](unsigned i) {
    return ctx.reshape(ctx.castTo(ctx.input(i), f64), {});
  };
  // C * (a_scale * b_scale / y_scale), in double as numpy promotes.
  Value y = ctx.binary<MulOp>(
      c, ctx.binary<DivOp>(ctx.binary<MulOp>(scalar(1), scalar(4)), scalar(6)));
  Type qt = elementTypeOf(ctx.input(7) ? ctx.input(7) : ctx.input(0));
  Value zp = ctx.input(7) ? ctx.reshape(ctx.input(7), {}) : Value();
  y = saturate(ctx, y, zp, qt);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerQuantizationOps(OpTable &t) {
  t.add("QuantizeLinear", 10, 2, 3, 1, importQuantizeLinear);
  t.add("DequantizeLinear", 10, 2, 3, 1, importDequantizeLinear);
  t.add("DynamicQuantizeLinear", 11, 1, 1, 3, importDynamicQuantizeLinear);
  t.add("MatMulInteger", 10, 2, 4, 1, importMatMulInteger);
  t.add("QLinearMatMul", 10, 8, 8, 1, importQLinearMatMul);
}
