//===- VjpElementwise.cpp - VJP rules of elementwise tcc ops --------------===//
//
// Operands broadcast to the result's shape, so each operand cotangent is
// summed back to the operand's shape. Where a function has a kink or a tie
// (abs at 0, relu at 0, max of equal values) the rules pick what PyTorch
// picks, so that gradients agree with it.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tcc/Transforms/VjpRules.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

using P = ComparePredicate;

namespace {

/// Sets the cotangent of operand `i` of `op` to `g` summed to its shape.
void setReduced(Operation *op, VjpBuilder &b, MutableArrayRef<Value> out,
                unsigned i, Value g) {
  out[i] = b.sumToShape(g, VjpBuilder::shapeOf(op->getOperand(i)));
}

//===----------------------------------------------------------------------===//
// Binary arithmetic
//===----------------------------------------------------------------------===//

LogicalResult vjpAdd(AddOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  setReduced(op, b, out, 0, ct[0]);
  setReduced(op, b, out, 1, ct[0]);
  return success();
}

LogicalResult vjpSub(SubOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  setReduced(op, b, out, 0, ct[0]);
  setReduced(op, b, out, 1, b.neg(ct[0]));
  return success();
}

LogicalResult vjpMul(MulOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  setReduced(op, b, out, 0, b.mul(ct[0], op.getRhs()));
  setReduced(op, b, out, 1, b.mul(ct[0], op.getLhs()));
  return success();
}

/// d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b.
LogicalResult vjpDiv(DivOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  Value ga = b.div(ct[0], op.getRhs());
  setReduced(op, b, out, 0, ga);
  setReduced(op, b, out, 1, b.neg(b.mul(ga, op.getResult())));
  return success();
}

/// fmod: r = a - b * trunc(a / b), so dr/da = 1 and dr/db = -trunc(a / b),
/// which is exactly (a - r) / b.
LogicalResult vjpRem(RemOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  Value quotient = b.div(b.sub(op.getLhs(), op.getResult()), op.getRhs());
  setReduced(op, b, out, 0, ct[0]);
  setReduced(op, b, out, 1, b.neg(b.mul(ct[0], quotient)));
  return success();
}

/// As PyTorch: d/da = b * a^(b-1), 0 where b == 0; d/db = a^b * log(a),
/// 0 where a == 0 and b >= 0.
LogicalResult vjpPow(PowOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  Value a = op.getLhs(), e = op.getRhs(), y = op.getResult();
  Value da = b.mul(e, b.binary<PowOp>(a, b.add(e, -1.0)));
  da = b.select(b.cmp(P::eq, e, 0.0), b.scalarLike(a, 0.0), da);
  setReduced(op, b, out, 0, b.mul(ct[0], da));
  Value de = b.mul(y, b.unary<LogOp>(a));
  de = b.select(b.logicalAnd(b.cmp(P::eq, a, 0.0), b.cmp(P::ge, e, 0.0)),
                b.scalarLike(a, 0.0), de);
  setReduced(op, b, out, 1, b.mul(ct[0], de));
  return success();
}

/// The larger operand gets the gradient; ties split it evenly (PyTorch's
/// maximum/minimum).
template <typename OpT, P Wins>
LogicalResult vjpMaxMin(OpT op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  Value l = op.getLhs(), r = op.getRhs(), g = ct[0];
  Value half = b.mul(g, 0.5);
  Value tie = b.cmp(P::eq, l, r);
  setReduced(op, b, out, 0, b.select(b.cmp(Wins, l, r), g, b.where(tie, half)));
  setReduced(op, b, out, 1, b.select(b.cmp(Wins, r, l), g, b.where(tie, half)));
  return success();
}

LogicalResult vjpSelect(SelectOp op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  Value c = op.getCondition(), g = ct[0];
  if (isa<FloatType>(VjpBuilder::elementOf(g))) {
    setReduced(op, b, out, 1, b.where(c, g));
    setReduced(op, b, out, 2, b.select(c, b.scalarLike(g, 0.0), g));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Unary functions: g * f'(x), with f' written in terms of x and y = f(x)
//===----------------------------------------------------------------------===//

using Derivative = Value (*)(VjpBuilder &, Value x, Value y);

template <typename OpT, Derivative D>
LogicalResult vjpUnary(OpT op, VjpBuilder &b, ValueRange ct,
                       MutableArrayRef<Value> out) {
  if (!isa<FloatType>(VjpBuilder::elementOf(op.getInput())))
    return success();
  out[0] = b.mul(ct[0], D(b, op.getInput(), op.getResult()));
  return success();
}

Value dExp(VjpBuilder &, Value, Value y) { return y; }
Value dLog(VjpBuilder &b, Value x, Value) { return b.unary<ReciprocalOp>(x); }
Value dSqrt(VjpBuilder &b, Value, Value y) {
  return b.mul(b.unary<ReciprocalOp>(y), 0.5);
}
/// d x^-1/2 = -1/2 x^-3/2 = -1/2 y^3.
Value dRsqrt(VjpBuilder &b, Value, Value y) {
  return b.mul(b.mul(b.mul(y, y), y), -0.5);
}
Value dReciprocal(VjpBuilder &b, Value, Value y) { return b.neg(b.mul(y, y)); }
Value dTanh(VjpBuilder &b, Value, Value y) { return b.rsub(1.0, b.mul(y, y)); }
Value dSigmoid(VjpBuilder &b, Value, Value y) {
  return b.mul(y, b.rsub(1.0, y));
}
Value dErf(VjpBuilder &b, Value x, Value) {
  return b.mul(b.unary<ExpOp>(b.neg(b.mul(x, x))), 2.0 / std::sqrt(M_PI));
}
Value dSin(VjpBuilder &b, Value x, Value) { return b.unary<CosOp>(x); }
Value dCos(VjpBuilder &b, Value x, Value) { return b.neg(b.unary<SinOp>(x)); }
Value dTan(VjpBuilder &b, Value, Value y) { return b.add(b.mul(y, y), 1.0); }
Value dAsin(VjpBuilder &b, Value x, Value) {
  return b.unary<RsqrtOp>(b.rsub(1.0, b.mul(x, x)));
}
Value dAcos(VjpBuilder &b, Value x, Value y) { return b.neg(dAsin(b, x, y)); }
Value dAtan(VjpBuilder &b, Value x, Value) {
  return b.unary<ReciprocalOp>(b.add(b.mul(x, x), 1.0));
}
Value dSinh(VjpBuilder &b, Value x, Value) { return b.unary<CoshOp>(x); }
Value dCosh(VjpBuilder &b, Value x, Value) { return b.unary<SinhOp>(x); }
Value dAsinh(VjpBuilder &b, Value x, Value) {
  return b.unary<RsqrtOp>(b.add(b.mul(x, x), 1.0));
}
Value dAcosh(VjpBuilder &b, Value x, Value) {
  return b.unary<RsqrtOp>(b.add(b.mul(x, x), -1.0));
}
Value dAtanh(VjpBuilder &b, Value x, Value) {
  return b.unary<ReciprocalOp>(b.rsub(1.0, b.mul(x, x)));
}
/// |x|' = sign(x) (0 at 0, as PyTorch).
Value dAbs(VjpBuilder &b, Value x, Value) { return b.unary<SignOp>(x); }

LogicalResult vjpNeg(NegOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  if (isa<FloatType>(VjpBuilder::elementOf(op.getInput())))
    out[0] = b.neg(ct[0]);
  return success();
}

/// relu passes the gradient where its result is positive.
LogicalResult vjpRelu(ReluOp op, VjpBuilder &b, ValueRange ct,
                      MutableArrayRef<Value> out) {
  if (isa<FloatType>(VjpBuilder::elementOf(op.getInput())))
    out[0] = b.where(b.cmp(P::gt, op.getResult(), 0.0), ct[0]);
  return success();
}

/// Piecewise constant functions: zero gradient (as PyTorch gives).
template <typename OpT>
LogicalResult vjpZero(OpT op, VjpBuilder &b, ValueRange,
                      MutableArrayRef<Value> out) {
  if (isa<FloatType>(VjpBuilder::elementOf(op.getInput())))
    out[0] = b.zerosLike(op.getInput());
  return success();
}

/// The gradient passes where min <= x <= max.
LogicalResult vjpClamp(ClampOp op, VjpBuilder &b, ValueRange ct,
                       MutableArrayRef<Value> out) {
  Value x = op.getInput();
  if (!isa<FloatType>(VjpBuilder::elementOf(x)))
    return success();
  Value inside;
  if (auto min = op.getMin())
    inside = b.cmp(P::ge, x, min->convertToDouble());
  if (auto max = op.getMax()) {
    Value below = b.cmp(P::le, x, max->convertToDouble());
    inside = inside ? b.logicalAnd(inside, below) : below;
  }
  out[0] = inside ? b.where(inside, ct[0]) : ct[0];
  return success();
}

/// gelu(x) = x * Phi(x): Phi(x) + x * phi(x) exactly; for the tanh form
/// with u = k (x + c x^3), t = tanh(u):
///   1/2 (1 + t) + 1/2 x (1 - t^2) k (1 + 3 c x^2).
LogicalResult vjpGelu(GeluOp op, VjpBuilder &b, ValueRange ct,
                      MutableArrayRef<Value> out) {
  Value x = op.getInput();
  Value d;
  if (op.getApproximate() == GeluApproximation::none) {
    Value cdf =
        b.mul(b.add(b.unary<ErfOp>(b.mul(x, 1.0 / std::sqrt(2.0))), 1.0), 0.5);
    Value pdf = b.mul(b.unary<ExpOp>(b.mul(b.mul(x, x), -0.5)),
                      1.0 / std::sqrt(2.0 * M_PI));
    d = b.add(cdf, b.mul(x, pdf));
  } else {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Value x2 = b.mul(x, x);
    Value u = b.mul(b.mul(x, b.add(b.mul(x2, c), 1.0)), k);
    Value t = b.unary<TanhOp>(u);
    Value left = b.mul(b.add(t, 1.0), 0.5);
    Value du = b.mul(b.add(b.mul(x2, 3.0 * c), 1.0), k);
    Value right = b.mul(b.mul(b.mul(x, b.rsub(1.0, b.mul(t, t))), du), 0.5);
    d = b.add(left, right);
  }
  out[0] = b.mul(ct[0], d);
  return success();
}

/// Between float types the gradient converts back; integers carry none.
LogicalResult vjpCast(CastOp op, VjpBuilder &b, ValueRange ct,
                      MutableArrayRef<Value> out) {
  Type from = VjpBuilder::elementOf(op.getInput());
  if (isa<FloatType>(from) &&
      isa<FloatType>(VjpBuilder::elementOf(op.getResult())))
    out[0] = b.cast(ct[0], from);
  return success();
}

} // namespace

void mlir::tcc::attachElementwiseVjps(MLIRContext &ctx) {
  attachVjp<AddOp, vjpAdd>(ctx);
  attachVjp<SubOp, vjpSub>(ctx);
  attachVjp<MulOp, vjpMul>(ctx);
  attachVjp<DivOp, vjpDiv>(ctx);
  attachVjp<RemOp, vjpRem>(ctx);
  attachVjp<PowOp, vjpPow>(ctx);
  attachVjp<MaxOp, vjpMaxMin<MaxOp, P::gt>>(ctx);
  attachVjp<MinOp, vjpMaxMin<MinOp, P::lt>>(ctx);
  attachVjp<SelectOp, vjpSelect>(ctx);

  attachVjp<NegOp, vjpNeg>(ctx);
  attachVjp<AbsOp, vjpUnary<AbsOp, dAbs>>(ctx);
  attachVjp<ReluOp, vjpRelu>(ctx);
  attachVjp<ExpOp, vjpUnary<ExpOp, dExp>>(ctx);
  attachVjp<LogOp, vjpUnary<LogOp, dLog>>(ctx);
  attachVjp<SqrtOp, vjpUnary<SqrtOp, dSqrt>>(ctx);
  attachVjp<RsqrtOp, vjpUnary<RsqrtOp, dRsqrt>>(ctx);
  attachVjp<ReciprocalOp, vjpUnary<ReciprocalOp, dReciprocal>>(ctx);
  attachVjp<TanhOp, vjpUnary<TanhOp, dTanh>>(ctx);
  attachVjp<SigmoidOp, vjpUnary<SigmoidOp, dSigmoid>>(ctx);
  attachVjp<ErfOp, vjpUnary<ErfOp, dErf>>(ctx);
  attachVjp<SinOp, vjpUnary<SinOp, dSin>>(ctx);
  attachVjp<CosOp, vjpUnary<CosOp, dCos>>(ctx);
  attachVjp<TanOp, vjpUnary<TanOp, dTan>>(ctx);
  attachVjp<AsinOp, vjpUnary<AsinOp, dAsin>>(ctx);
  attachVjp<AcosOp, vjpUnary<AcosOp, dAcos>>(ctx);
  attachVjp<AtanOp, vjpUnary<AtanOp, dAtan>>(ctx);
  attachVjp<SinhOp, vjpUnary<SinhOp, dSinh>>(ctx);
  attachVjp<CoshOp, vjpUnary<CoshOp, dCosh>>(ctx);
  attachVjp<AsinhOp, vjpUnary<AsinhOp, dAsinh>>(ctx);
  attachVjp<AcoshOp, vjpUnary<AcoshOp, dAcosh>>(ctx);
  attachVjp<AtanhOp, vjpUnary<AtanhOp, dAtanh>>(ctx);
  attachVjp<SignOp, vjpZero<SignOp>>(ctx);
  attachVjp<FloorOp, vjpZero<FloorOp>>(ctx);
  attachVjp<CeilOp, vjpZero<CeilOp>>(ctx);
  attachVjp<RoundOp, vjpZero<RoundOp>>(ctx);
  attachVjp<ClampOp, vjpClamp>(ctx);
  attachVjp<GeluOp, vjpGelu>(ctx);
  attachVjp<CastOp, vjpCast>(ctx);
}
