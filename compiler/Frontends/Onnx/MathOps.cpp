//===- MathOps.cpp - ONNX math, bitwise ops and activations ---------------===//
//
// The trigonometric family, shifts and bitwise logic, Mod, CastLike,
// BitCast, Size, the NaN/infinity tests, and the activations that are
// compositions of tcc elementwise ops (Elu, Selu, Celu, Softplus, Softsign,
// Mish, ThresholdedRelu, Shrink, Swish, PRelu).
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <limits>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

template <typename OpT>
static LogicalResult importFloatUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  ctx.setResult(0, ctx.unary<OpT>(x));
  return success();
}

template <typename OpT>
static LogicalResult importNumericUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  ctx.setResult(0, ctx.unary<OpT>(x));
  return success();
}

static LogicalResult requireInteger(NodeContext &ctx, Value x) {
  Type et = elementTypeOf(x);
  if (isa<IntegerType>(et) && !et.isInteger(1))
    return success();
  return ctx.emitError() << "input must be an integer tensor; got "
                         << x.getType();
}

template <typename OpT>
static LogicalResult importBitwiseBinary(NodeContext &ctx) {
  if (failed(requireInteger(ctx, ctx.input(0))))
    return failure();
  Value y = ctx.binary<OpT>(ctx.input(0), ctx.input(1));
  return ctx.result(y);
}

static LogicalResult importBitwiseNot(NodeContext &ctx) {
  if (failed(requireInteger(ctx, ctx.input(0))))
    return failure();
  ctx.setResult(0, ctx.unary<NotOp>(ctx.input(0)));
  return success();
}

static LogicalResult importBitShift(NodeContext &ctx) {
  Value x = ctx.input(0), y = ctx.input(1);
  std::string direction = ctx.getString("direction", "");
  if (failed(requireInteger(ctx, x)))
    return failure();
  Value z;
  if (direction == "LEFT")
    z = ctx.binary<ShiftLeftOp>(x, y);
  else if (direction == "RIGHT")
    z = ctx.binary<ShiftRightOp>(x, y);
  else
    return ctx.unsupportedValue("direction", direction);
  return ctx.result(z);
}

static LogicalResult importMod(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  bool fmod = ctx.getInt("fmod", 0);
  if (ctx.hasError())
    return failure();
  bool isFloat = isa<FloatType>(elementTypeOf(a));
  Value r;
  if (isFloat == fmod) {
    // tcc.rem is C's fmod on floats and Python's % on integers.
    r = ctx.binary<RemOp>(a, b);
  } else if (!isFloat) {
    // C-style: a - trunc(a / b) * b (tcc.div truncates integers).
    r = ctx.binary<SubOp>(a, ctx.binary<MulOp>(ctx.binary<DivOp>(a, b), b));
  } else {
    // Python-style on floats: fmod, moved by b when the signs differ.
    Value m = ctx.binary<RemOp>(a, b);
    Value zero = ctx.scalarLike(a, 0);
    Value mNeg = ctx.compare(ComparePredicate::lt, m, zero);
    Value bNeg = ctx.compare(ComparePredicate::lt, b, zero);
    Value differ = ctx.compare(ComparePredicate::ne, mNeg, bNeg);
    Value nonZero = ctx.compare(ComparePredicate::ne, m, zero);
    Value fix = ctx.binary<AndOp>(differ, nonZero);
    r = ctx.select(fix, ctx.binary<AddOp>(m, b), m);
  }
  return ctx.result(r);
}

static LogicalResult importCastLike(NodeContext &ctx) {
  // saturate and round_mode only concern float8 types, which tcc lacks.
  ctx.ignoreAttrs({"saturate", "round_mode"});
  ctx.setResult(0, ctx.castTo(ctx.input(0), elementTypeOf(ctx.input(1))));
  return success();
}

static LogicalResult importBitCast(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!ctx.hasAttr("to"))
    return ctx.emitError() << "attribute 'to' is required";
  int32_t to = ctx.getInt("to", 0);
  Type et = convertDataType(ctx.b.getContext(), to);
  if (ctx.hasError())
    return failure();
  if (!et)
    return ctx.emitError() << "bit cast to " << dataTypeName(to)
                           << " is not supported";
  auto bits = [](Type t) {
    return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
  };
  if (bits(et) != bits(elementTypeOf(x)))
    return ctx.emitError() << "bit cast between types of different widths ("
                           << elementTypeOf(x) << " to " << et
                           << ") is not supported";
  Type type = cast<RankedTensorType>(x.getType()).clone(et);
  ctx.setResult(0, ctx.create<BitcastOp>({x}, {}, type));
  return success();
}

static LogicalResult importSize(NodeContext &ctx) {
  int64_t n = shapes::numElements(shapeOf(ctx.input(0)));
  if (ShapedType::isDynamic(n))
    return ctx.emitError() << "the input's shape "
                           << shapes::str(shapeOf(ctx.input(0)))
                           << " is not static; fix it with --input-shape";
  ctx.setResult(0, ctx.scalar(ctx.b.getI64Type(), (double)n));
  return success();
}

static LogicalResult importIsNaN(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  // Only NaN differs from itself.
  ctx.setResult(0, ctx.compare(ComparePredicate::ne, x, x));
  return success();
}

static LogicalResult importIsInf(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool neg = ctx.getInt("detect_negative", 1);
  bool pos = ctx.getInt("detect_positive", 1);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  // Detecting neither sign gives all false: a constant of the input's shape,
  // which must be static.
  if (!pos && !neg && failed(ctx.requireStatic(x)))
    return failure();
  double inf = std::numeric_limits<double>::infinity();
  Value y;
  if (pos && neg)
    y = ctx.compare(ComparePredicate::eq, ctx.unary<AbsOp>(x),
                    ctx.scalarLike(x, inf));
  else if (pos || neg)
    y = ctx.compare(ComparePredicate::eq, x,
                    ctx.scalarLike(x, pos ? inf : -inf));
  else
    y = ctx.constant(shapeOf(x), ctx.b.getI1Type(), {0.0});
  return ctx.result(y);
}

/// exp(x) - 1 on the negative side, scaled: Elu's and Selu's left branch.
static Value expm1Scaled(NodeContext &ctx, Value x, double alpha) {
  Value e = ctx.binary<SubOp>(ctx.unary<ExpOp>(x), ctx.scalarLike(x, 1));
  return ctx.binary<MulOp>(e, ctx.scalarLike(x, alpha));
}

static LogicalResult importElu(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  Value neg = ctx.compare(ComparePredicate::lt, x, ctx.scalarLike(x, 0));
  Value y = ctx.select(neg, expm1Scaled(ctx, x, alpha), x);
  return ctx.result(y);
}

static LogicalResult importSelu(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.67326319217681884765625);
  double gamma = ctx.getFloat("gamma", 1.05070102214813232421875);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  Value pos = ctx.compare(ComparePredicate::gt, x, ctx.scalarLike(x, 0));
  Value y = ctx.select(pos, x, expm1Scaled(ctx, x, alpha));
  y = ctx.binary<MulOp>(y, ctx.scalarLike(x, gamma));
  return ctx.result(y);
}

static LogicalResult importCelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  // Half precision: computed in f32 and rounded once (expm1 is one ufunc
  // in numpy).
  Type et = elementTypeOf(x);
  x = ctx.widenHalf(x);
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  Value zero = ctx.scalarLike(x, 0);
  Value scaled = ctx.binary<DivOp>(x, ctx.scalarLike(x, alpha));
  Value left = ctx.binary<MinOp>(zero, expm1Scaled(ctx, scaled, alpha));
  Value y = ctx.castTo(ctx.binary<AddOp>(ctx.binary<MaxOp>(zero, x), left), et);
  return ctx.result(y);
}

static Value softplus(NodeContext &ctx, Value x) {
  return ctx.unary<LogOp>(
      ctx.binary<AddOp>(ctx.unary<ExpOp>(x), ctx.scalarLike(x, 1)));
}

static LogicalResult importSoftplus(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = softplus(ctx, x);
  return ctx.result(y);
}

static LogicalResult importSoftsign(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = ctx.binary<DivOp>(
      x, ctx.binary<AddOp>(ctx.unary<AbsOp>(x), ctx.scalarLike(x, 1)));
  return ctx.result(y);
}

static LogicalResult importMish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = ctx.binary<MulOp>(x, ctx.unary<TanhOp>(softplus(ctx, x)));
  return ctx.result(y);
}

static LogicalResult importThresholdedRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  Value above = ctx.compare(ComparePredicate::gt, x, ctx.scalarLike(x, alpha));
  Value y = ctx.select(above, x, ctx.scalarLike(x, 0));
  return ctx.result(y);
}

static LogicalResult importShrink(NodeContext &ctx) {
  Value x = ctx.input(0);
  double bias = ctx.getFloat("bias", 0.0), lambd = ctx.getFloat("lambd", 0.5);
  if (ctx.hasError())
    return failure();
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  // Compared in the input's type, as the reference does after casting the
  // bounds.
  Value low = ctx.compare(ComparePredicate::lt, x, ctx.scalarLike(x, -lambd));
  Value high = ctx.compare(ComparePredicate::gt, x, ctx.scalarLike(x, lambd));
  Value y =
      ctx.select(low, ctx.binary<AddOp>(x, ctx.scalarLike(x, bias)),
                 ctx.select(high, ctx.binary<SubOp>(x, ctx.scalarLike(x, bias)),
                            ctx.scalarLike(x, 0)));
  return ctx.result(y);
}

static LogicalResult importSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  if (failed(ctx.requireFloat(x)) || ctx.hasError())
    return failure();
  Value scaled =
      alpha == 1.0 ? x : ctx.binary<MulOp>(x, ctx.scalarLike(x, alpha));
  Value y = ctx.binary<MulOp>(x, ctx.unary<SigmoidOp>(scaled));
  return ctx.result(y);
}

static LogicalResult importPRelu(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0), slope = ctx.input(1);
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  // Before opset 7 a slope of C values applies along dimension 1.
  if (ctx.opset < 7 && shapeOf(slope).size() == 1 && shapeOf(x).size() > 2 &&
      shapeOf(slope)[0] != 1) {
    SmallVector<int64_t> shape(shapeOf(x).size() - 1, 1);
    shape[0] = shapeOf(slope)[0];
    slope = ctx.reshape(slope, shape);
  }
  Value neg = ctx.compare(ComparePredicate::lt, x, ctx.scalarLike(x, 0));
  Value y = ctx.select(neg, ctx.binary<MulOp>(x, slope), x);
  if (y && shapeOf(y) != shapeOf(x))
    return ctx.emitError() << "slope " << shapes::str(shapeOf(slope))
                           << " does not broadcast to the input "
                           << shapes::str(shapeOf(x));
  return ctx.result(y);
}

static LogicalResult importSwiGLU(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  double alpha = ctx.getFloat("alpha", 1.0);
  if (failed(ctx.requireFloat(a)) || ctx.hasError())
    return failure();
  if (a.getType() != b.getType())
    return ctx.emitError() << "A and B must have one type; got " << a.getType()
                           << " and " << b.getType();
  Value scaled =
      alpha == 1.0 ? a : ctx.binary<MulOp>(a, ctx.scalarLike(a, alpha));
  Value y =
      ctx.binary<MulOp>(ctx.binary<MulOp>(a, ctx.unary<SigmoidOp>(scaled)), b);
  return ctx.result(y);
}

/// The determinant of the trailing [n, n] matrices by cofactor expansion
/// along the first row (small n only).
static Value determinant(NodeContext &ctx, Value m) {
  ArrayRef<int64_t> s = shapeOf(m);
  int64_t rank = s.size(), n = s.back();
  auto entry = [&](Value v, int64_t i, int64_t j) {
    return ctx.slice(ctx.slice(v, rank - 2, i, 1), rank - 1, j, 1);
  };
  if (n == 1)
    return entry(m, 0, 0);
  if (n == 2)
    return ctx.binary<SubOp>(ctx.binary<MulOp>(entry(m, 0, 0), entry(m, 1, 1)),
                             ctx.binary<MulOp>(entry(m, 0, 1), entry(m, 1, 0)));
  Value det;
  Value rest = ctx.slice(m, rank - 2, 1, n - 1); // rows 1..n-1
  for (int64_t j = 0; j < n; ++j) {
    SmallVector<Value> cols;
    if (j > 0)
      cols.push_back(ctx.slice(rest, rank - 1, 0, j));
    if (j < n - 1)
      cols.push_back(ctx.slice(rest, rank - 1, j + 1, n - 1 - j));
    Value minor = ctx.concat(cols, rank - 1);
    Value term = ctx.binary<MulOp>(entry(m, 0, j), determinant(ctx, minor));
    det = !det ? term
               : (j % 2 ? ctx.binary<SubOp>(det, term)
                        : ctx.binary<AddOp>(det, term));
  }
  return det;
}

static LogicalResult importDet(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  ArrayRef<int64_t> s = shapeOf(x);
  if (s.size() < 2 || s.back() != s[s.size() - 2] ||
      ShapedType::isDynamic(s.back()))
    return ctx.emitError() << "input " << shapes::str(s)
                           << " must end in static square matrices";
  if (s.back() > 4)
    return ctx.emitError() << "determinants of " << s.back() << "x" << s.back()
                           << " matrices are not supported "
                           << "(at most 4x4)";
  Value d = determinant(ctx, ctx.widenHalf(x));
  Value y = ctx.castTo(ctx.reshape(d, s.drop_back(2)), elementTypeOf(x));
  return ctx.result(y);
}

void mlir::tcc::onnx::registerMathOps(OpTable &t) {
  auto unary = [&](StringRef name, OpHandler fn, int64_t since) {
    t.add(name, since, 1, 1, 1, fn);
  };
  unary("Sin", importFloatUnary<SinOp>, 7);
  unary("Cos", importFloatUnary<CosOp>, 7);
  unary("Tan", importFloatUnary<TanOp>, 7);
  unary("Asin", importFloatUnary<AsinOp>, 7);
  unary("Acos", importFloatUnary<AcosOp>, 7);
  unary("Atan", importFloatUnary<AtanOp>, 7);
  unary("Sinh", importFloatUnary<SinhOp>, 9);
  unary("Cosh", importFloatUnary<CoshOp>, 9);
  unary("Asinh", importFloatUnary<AsinhOp>, 9);
  unary("Acosh", importFloatUnary<AcoshOp>, 9);
  unary("Atanh", importFloatUnary<AtanhOp>, 9);
  unary("Round", importFloatUnary<RoundOp>, 11);
  unary("Sign", importNumericUnary<SignOp>, 9);
  unary("IsNaN", importIsNaN, 9);
  unary("IsInf", importIsInf, 10);
  unary("BitwiseNot", importBitwiseNot, 18);
  t.add("CastLike", 15, 2, 2, 1, importCastLike);
  unary("BitCast", importBitCast, 26);
  unary("Size", importSize, 1);
  unary("Elu", importElu, 1);
  unary("Selu", importSelu, 1);
  unary("Celu", importCelu, 12);
  unary("Softplus", importSoftplus, 1);
  unary("Softsign", importSoftsign, 1);
  unary("Mish", importMish, 18);
  unary("ThresholdedRelu", importThresholdedRelu, 10);
  unary("Shrink", importShrink, 9);
  unary("Swish", importSwish, 24);
  t.add("PRelu", 1, 2, 2, 1, importPRelu);
  t.add("BitShift", 11, 2, 2, 1, importBitShift);
  t.add("BitwiseAnd", 18, 2, 2, 1, importBitwiseBinary<AndOp>);
  t.add("BitwiseOr", 18, 2, 2, 1, importBitwiseBinary<OrOp>);
  t.add("BitwiseXor", 18, 2, 2, 1, importBitwiseBinary<XorOp>);
  t.add("Mod", 10, 2, 2, 1, importMod);
  t.add("SwiGLU", 28, 2, 2, 1, importSwiGLU);
  t.add("Det", 11, 1, 1, 1, importDet);
}
