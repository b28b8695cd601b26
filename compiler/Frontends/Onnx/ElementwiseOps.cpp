//===- ElementwiseOps.cpp - ONNX elementwise ops --------------------------===//
//
// Unary and binary math, comparisons and logic, variadic Min/Max/Sum/Mean,
// activations (some decomposed into tcc ops), Cast, and the ops that pass a
// value through at inference (Identity, Dropout).
//
// Opsets before 7 broadcast binary ops the legacy way: with `broadcast = 1`
// the second operand lines up with the first starting at `axis`; that is
// rewritten into numpy broadcasting by appending unit dimensions.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// The second operand of a binary op, reshaped for legacy broadcasting.
static Value legacyBroadcastOperand(NodeContext &ctx, Value lhs, Value rhs) {
  if (ctx.opset >= 7)
    return rhs;
  ctx.ignoreAttrs({"consumed_inputs"});
  bool hasAxis = ctx.hasAttr("axis");
  int64_t rank = shapeOf(lhs).size();
  int64_t axis = ctx.getInt("axis", 0);
  // Without `broadcast` the shapes must match, which numpy rules accept too.
  if (!ctx.getInt("broadcast", 0) || !hasAxis)
    return rhs;
  if (failed(ctx.normalizeAxis(axis, rank)))
    return {};
  axis = axis < 0 ? axis + rank : axis;
  int64_t trailing = rank - axis - (int64_t)shapeOf(rhs).size();
  if (trailing < 0) {
    ctx.emitError() << "legacy broadcast of " << shapes::str(shapeOf(rhs))
                    << " at axis " << axis << " overruns "
                    << shapes::str(shapeOf(lhs));
    return {};
  }
  SmallVector<int64_t> shape(shapeOf(rhs));
  shape.append(trailing, 1);
  return ctx.reshape(rhs, shape);
}

template <typename OpT> static LogicalResult importBinary(NodeContext &ctx) {
  Value lhs = ctx.input(0);
  Value rhs = legacyBroadcastOperand(ctx, lhs, ctx.input(1));
  Value result = ctx.binary<OpT>(lhs, rhs);
  return ctx.result(result);
}

static LogicalResult importPow(NodeContext &ctx) {
  Value base = ctx.input(0);
  Value exponent = legacyBroadcastOperand(ctx, base, ctx.input(1));
  // Since opset 12 the exponent may have another type; tcc.pow wants one.
  if (exponent && elementTypeOf(exponent) != elementTypeOf(base))
    exponent = ctx.castTo(exponent, elementTypeOf(base));
  Value result = ctx.binary<PowOp>(base, exponent);
  return ctx.result(result);
}

template <ComparePredicate predicate>
static LogicalResult importCompare(NodeContext &ctx) {
  Value lhs = ctx.input(0);
  Value rhs = legacyBroadcastOperand(ctx, lhs, ctx.input(1));
  Value result = ctx.compare(predicate, lhs, rhs);
  return ctx.result(result);
}

template <typename OpT, bool floatOnly>
static LogicalResult importUnary(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0);
  if (floatOnly && failed(ctx.requireFloat(x)))
    return failure();
  ctx.setResult(0, ctx.unary<OpT>(x));
  return success();
}

static LogicalResult importNot(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a bool tensor; got "
                           << x.getType();
  ctx.setResult(0, ctx.unary<NotOp>(x));
  return success();
}

/// Min, Max, Sum and Mean fold their inputs left to right.
template <typename OpT, bool mean = false>
static LogicalResult importVariadic(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value acc = ctx.input(0);
  for (unsigned i = 1; i < ctx.numInputs() && acc; ++i)
    acc = ctx.binary<OpT>(acc, ctx.input(i));
  if (acc && mean) {
    if (failed(ctx.requireFloat(acc)))
      return failure();
    acc =
        ctx.binary<DivOp>(acc, ctx.scalar(elementTypeOf(acc), ctx.numInputs()));
  }
  return ctx.result(acc);
}

static LogicalResult importWhere(NodeContext &ctx) {
  Value cond = ctx.input(0), lhs = ctx.input(1), rhs = ctx.input(2);
  if (!elementTypeOf(cond).isInteger(1))
    return ctx.emitError() << "condition must be a bool tensor; got "
                           << cond.getType();
  ctx.setResult(0, ctx.select(cond, lhs, rhs));
  return success();
}

static LogicalResult importClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<double> lo, hi;
  if (ctx.opset < 11) {
    ctx.ignoreAttrs({"consumed_inputs"});
    // Opset 6 made the bounds default to the float range.
    double lowest = std::numeric_limits<float>::lowest();
    double highest = std::numeric_limits<float>::max();
    if (ctx.hasAttr("min") || ctx.opset >= 6)
      lo = ctx.getFloat("min", lowest);
    if (ctx.hasAttr("max") || ctx.opset >= 6)
      hi = ctx.getFloat("max", highest);
  } else {
    // Bounds computed at run time become max/min ops.
    Value bounds[2] = {ctx.input(1), ctx.input(2)};
    for (int i = 0; i < 2; ++i) {
      if (!bounds[i])
        continue;
      if (shapes::numElements(shapeOf(bounds[i])) != 1)
        return ctx.emitError()
               << "bound " << (i ? "max" : "min") << " must hold one value";
      Attribute attr;
      if (!matchPattern(bounds[i], m_Constant(&attr))) {
        Value bound = ctx.reshape(bounds[i], {});
        x = i == 0 ? ctx.binary<MaxOp>(x, bound) : ctx.binary<MinOp>(x, bound);
        continue;
      }
      FailureOr<double> v = ctx.constScalar(i + 1);
      if (failed(v))
        return failure();
      (i == 0 ? lo : hi) = *v;
    }
    if (!x)
      return failure();
  }
  if (ctx.hasError())
    return failure();
  // ONNX: when min > max every element becomes max.
  if (lo && hi && *lo > *hi)
    lo = hi;
  ctx.setResult(0, lo || hi ? ctx.clamp(x, lo, hi) : x);
  return success();
}

static LogicalResult importLeakyRelu(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  double alpha = ctx.getFloat("alpha", 0.01);
  Type et = elementTypeOf(x);
  Value negative = ctx.compare(ComparePredicate::lt, x, ctx.scalar(et, 0));
  Value scaled = ctx.binary<MulOp>(x, ctx.scalar(et, alpha));
  ctx.setResult(0, ctx.select(negative, scaled, x));
  return success();
}

/// max(0, min(1, alpha * x + beta))
static Value hardSigmoid(NodeContext &ctx, Value x, double alpha, double beta) {
  Type et = elementTypeOf(x);
  Value scaled = ctx.binary<MulOp>(x, ctx.scalar(et, alpha));
  Value y = ctx.binary<AddOp>(scaled, ctx.scalar(et, beta));
  return ctx.clamp(y, 0.0, 1.0);
}

static LogicalResult importHardSigmoid(NodeContext &ctx) {
  ctx.ignoreAttrs({"consumed_inputs"});
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = hardSigmoid(ctx, x, ctx.getFloat("alpha", 0.2),
                        ctx.getFloat("beta", 0.5));
  return ctx.result(y);
}

static LogicalResult importHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  Value y = ctx.binary<MulOp>(x, hardSigmoid(ctx, x, 1.0 / 6, 0.5));
  return ctx.result(y);
}

static LogicalResult importGelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  std::string approximate = ctx.getString("approximate", "none");
  std::optional<GeluApproximation> kind =
      symbolizeGeluApproximation(approximate);
  if (!kind)
    return ctx.unsupportedValue("approximate", approximate);
  ctx.setResult(
      0, ctx.create<GeluOp>(
             {x}, {ctx.attr("approximate", GeluApproximationAttr::get(
                                               x.getContext(), *kind))}));
  return success();
}

/// Cast-1 names its target type as a string ("FLOAT").
static int32_t legacyCastTarget(StringRef name) {
  static const char *const names[] = {
      "UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
      "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
      "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  for (auto [i, n] : llvm::enumerate(names))
    if (name.equals_insensitive(n))
      return i;
  return -1;
}

static LogicalResult importCast(NodeContext &ctx) {
  // saturate and round_mode only concern float8 types, which tcc lacks.
  ctx.ignoreAttrs({"saturate", "round_mode"});
  int32_t to;
  if (ctx.opset < 6) {
    std::string name = ctx.getString("to", "");
    to = legacyCastTarget(name);
    if (to < 0)
      return ctx.unsupportedValue("to", name);
  } else {
    if (!ctx.hasAttr("to"))
      return ctx.emitError() << "attribute 'to' is required";
    to = ctx.getInt("to", 0);
  }
  Type et = convertDataType(ctx.b.getContext(), to);
  if (ctx.hasError())
    return failure();
  if (!et)
    return ctx.emitError() << "cast to " << dataTypeName(to)
                           << " is not supported";
  ctx.setResult(0, ctx.castTo(ctx.input(0), et));
  return success();
}

static LogicalResult importIdentity(NodeContext &ctx) {
  if (const SmallVector<Value> *seq = ctx.sequence(0))
    ctx.sequenceResults[0] = *seq;
  else
    ctx.setResult(0, ctx.input(0));
  return success();
}

static LogicalResult importDropout(NodeContext &ctx) {
  // Inference only: the output is the input and the mask keeps everything.
  ctx.ignoreAttrs({"consumed_inputs", "is_test", "ratio", "seed"});
  if (ctx.input(2)) {
    FailureOr<double> on = ctx.constScalar(2);
    if (failed(on))
      return failure();
    // Training drops elements at random, except with a ratio of 0.
    if (*on != 0) {
      if (!ctx.input(1))
        return ctx.emitError() << "training_mode = true is not supported "
                                  "(random dropout)";
      FailureOr<double> ratio = ctx.constScalar(1);
      if (failed(ratio))
        return failure();
      if (*ratio != 0)
        return ctx.emitError() << "training_mode = true with ratio " << *ratio
                               << " is not supported (random dropout)";
    }
  }
  Value x = ctx.input(0);
  ctx.setResult(0, x);
  if (ctx.hasOutput(1)) {
    if (!cast<RankedTensorType>(x.getType()).hasStaticShape())
      return ctx.emitError() << "the mask output needs a static shape";
    // Opsets before 10 give the mask the data's type.
    Type et = ctx.opset < 10 ? elementTypeOf(x) : ctx.b.getI1Type();
    auto type = RankedTensorType::get(shapeOf(x), et);
    Attribute one = isa<FloatType>(et) ? Attribute(ctx.b.getFloatAttr(et, 1))
                                       : Attribute(ctx.b.getIntegerAttr(et, 1));
    ctx.setResult(1, ctx.constant(DenseElementsAttr::get(type, one)));
  }
  return success();
}

void mlir::tcc::onnx::registerElementwiseOps(OpTable &t) {
  auto binary = [&](StringRef name, OpHandler fn, int64_t since = 1) {
    t.add(name, since, 2, 2, 1, fn);
    if (since < 7)
      t.add(name, 7, 2, 2, 1, fn);
  };
  binary("Add", importBinary<AddOp>);
  binary("Sub", importBinary<SubOp>);
  binary("Mul", importBinary<MulOp>);
  binary("Div", importBinary<DivOp>);
  binary("Pow", importPow);
  binary("And", importBinary<AndOp>);
  binary("Or", importBinary<OrOp>);
  binary("Xor", importBinary<XorOp>);
  binary("Equal", importCompare<ComparePredicate::eq>);
  binary("Less", importCompare<ComparePredicate::lt>);
  binary("Greater", importCompare<ComparePredicate::gt>);
  binary("LessOrEqual", importCompare<ComparePredicate::le>, 12);
  binary("GreaterOrEqual", importCompare<ComparePredicate::ge>, 12);

  auto unary = [&](StringRef name, OpHandler fn, int64_t since = 1) {
    t.add(name, since, 1, 1, 1, fn);
  };
  unary("Relu", importUnary<ReluOp, false>);
  unary("Neg", importUnary<NegOp, false>);
  unary("Abs", importUnary<AbsOp, false>);
  unary("Sqrt", importUnary<SqrtOp, true>);
  unary("Exp", importUnary<ExpOp, true>);
  unary("Log", importUnary<LogOp, true>);
  unary("Erf", importUnary<ErfOp, true>, 9);
  unary("Tanh", importUnary<TanhOp, true>);
  unary("Sigmoid", importUnary<SigmoidOp, true>);
  unary("Reciprocal", importUnary<ReciprocalOp, true>);
  unary("Floor", importUnary<FloorOp, true>);
  unary("Ceil", importUnary<CeilOp, true>);
  unary("Not", importNot);
  unary("LeakyRelu", importLeakyRelu);
  unary("HardSigmoid", importHardSigmoid);
  unary("HardSwish", importHardSwish, 14);
  unary("Gelu", importGelu, 20);
  unary("Cast", importCast);
  unary("Identity", importIdentity);

  t.add("Min", 1, 1, kVariadic, 1, importVariadic<MinOp>);
  t.add("Max", 1, 1, kVariadic, 1, importVariadic<MaxOp>);
  t.add("Sum", 1, 1, kVariadic, 1, importVariadic<AddOp>);
  t.add("Mean", 1, 1, kVariadic, 1, importVariadic<AddOp, true>);
  t.add("Where", 9, 3, 3, 1, importWhere);
  t.add("Clip", 1, 1, 1, 1, importClip);
  t.add("Clip", 11, 1, 3, 1, importClip);
  t.add("Dropout", 1, 1, 1, 2, importDropout);
  t.add("Dropout", 12, 1, 3, 2, importDropout);
}
