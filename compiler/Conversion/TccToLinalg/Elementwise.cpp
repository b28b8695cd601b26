//===- Elementwise.cpp - tcc elementwise ops to linalg.generic ------------===//
//
// Every op with the BroadcastingElementwise trait becomes one parallel
// linalg.generic whose body is that op on scalars; the operands are read
// through broadcasting maps, so no broadcast is ever materialized.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/ScalarOps.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialects/Tcc/IR/TccOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

Value mlir::tcc::emitScalarCast(OpBuilder &b, Location loc, Value value,
                                Type from, Type to) {
  Type toScalar = signlessType(to);
  if (value.getType() == toScalar)
    return value;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    // Anything to bool is `x != 0` (NaN is true, as in C and numpy).
    if (fromF)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, value,
                                     scalarConstant(b, loc, from, 0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, value,
                                   scalarConstant(b, loc, from, 0));
  }
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return b.create<arith::ExtFOp>(loc, to, value);
    return b.create<arith::TruncFOp>(loc, to, value);
  }
  if (fromF)
    return to.isUnsignedInteger()
               ? b.create<arith::FPToUIOp>(loc, toScalar, value).getResult()
               : b.create<arith::FPToSIOp>(loc, toScalar, value).getResult();
  bool zeroExtend = from.isInteger(1) || from.isUnsignedInteger();
  if (toF)
    return zeroExtend ? b.create<arith::UIToFPOp>(loc, to, value).getResult()
                      : b.create<arith::SIToFPOp>(loc, to, value).getResult();
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return zeroExtend
               ? b.create<arith::ExtUIOp>(loc, toScalar, value).getResult()
               : b.create<arith::ExtSIOp>(loc, toScalar, value).getResult();
  return b.create<arith::TruncIOp>(loc, toScalar, value);
}

/// Python-style integer remainder: the sign follows the divisor.
static Value floorRem(OpBuilder &b, Location loc, Value x, Value y) {
  Value r = b.create<arith::RemSIOp>(loc, x, y);
  Value zero = scalarConstant(b, loc, x.getType(), 0);
  Value rNonZero =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, r, zero);
  Value rNeg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, r, zero);
  Value yNeg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, y, zero);
  Value signsDiffer = b.create<arith::XOrIOp>(loc, rNeg, yNeg);
  Value fix = b.create<arith::AndIOp>(loc, rNonZero, signsDiffer);
  return b.create<arith::SelectOp>(loc, fix, b.create<arith::AddIOp>(loc, r, y),
                                   r);
}

/// Integer power by squaring over the exponent's bits, a fixed number of
/// steps (negative exponents give an unspecified value, as in C).
static Value integerPower(OpBuilder &b, Location loc, Value base, Value exp,
                          bool isUnsigned) {
  Type t = base.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value steps = b.create<arith::ConstantIndexOp>(loc, width);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value c1 = scalarConstant(b, loc, t, 1);
  auto loop = b.create<scf::ForOp>(
      loc, zero, steps, one, ValueRange{c1, base, exp},
      [&](OpBuilder &nb, Location l, Value, ValueRange acc) {
        Value r = acc[0], x = acc[1], e = acc[2];
        Value bit = nb.create<arith::TruncIOp>(l, nb.getI1Type(), e);
        Value rx = nb.create<arith::MulIOp>(l, r, x);
        r = nb.create<arith::SelectOp>(l, bit, rx, r);
        x = nb.create<arith::MulIOp>(l, x, x);
        e = nb.create<arith::ShRUIOp>(l, e, c1);
        nb.create<scf::YieldOp>(l, ValueRange{r, x, e});
      });
  Value power = loop.getResult(0);
  if (isUnsigned || width == 1)
    return power;
  // A negative exponent (as PyTorch defines it): 1 for a base of 1, +-1 for
  // -1 (by the exponent's parity), 0 for every other base.
  Value c0 = scalarConstant(b, loc, t, 0);
  Value negative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, exp, c0);
  Value minusOne = scalarConstant(b, loc, t, -1);
  Value odd = b.create<arith::TruncIOp>(loc, b.getI1Type(), exp);
  Value ofMinusOne = b.create<arith::SelectOp>(loc, odd, minusOne, c1);
  Value isOne =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, c1);
  Value isMinusOne =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, minusOne);
  Value inverse = b.create<arith::SelectOp>(
      loc, isOne, c1,
      b.create<arith::SelectOp>(loc, isMinusOne, ofMinusOne, c0));
  return b.create<arith::SelectOp>(loc, negative, inverse, power);
}

/// `x << y` / `x >> y`, defined for every y: a shift by the bit width or more
/// gives 0 (or all sign bits for an arithmetic right shift).
static Value shift(OpBuilder &b, Location loc, Value x, Value y, bool left,
                   bool arithmetic) {
  Type t = x.getType();
  Value width = scalarConstant(b, loc, t, t.getIntOrFloatBitWidth());
  Value inRange =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, y, width);
  if (arithmetic) {
    Value last = scalarConstant(b, loc, t, t.getIntOrFloatBitWidth() - 1);
    Value amount = b.create<arith::SelectOp>(loc, inRange, y, last);
    return b.create<arith::ShRSIOp>(loc, x, amount);
  }
  Value shifted = left ? b.create<arith::ShLIOp>(loc, x, y).getResult()
                       : b.create<arith::ShRUIOp>(loc, x, y).getResult();
  return b.create<arith::SelectOp>(loc, inRange, shifted,
                                   scalarConstant(b, loc, t, 0));
}

static Value compare(OpBuilder &b, Location loc, ComparePredicate pred, Value x,
                     Value y, bool isUnsigned) {
  if (isa<FloatType>(x.getType())) {
    // Ordered predicates: NaN compares false, except `ne` (unordered).
    arith::CmpFPredicate p;
    switch (pred) {
    case ComparePredicate::eq:
      p = arith::CmpFPredicate::OEQ;
      break;
    case ComparePredicate::ne:
      p = arith::CmpFPredicate::UNE;
      break;
    case ComparePredicate::lt:
      p = arith::CmpFPredicate::OLT;
      break;
    case ComparePredicate::le:
      p = arith::CmpFPredicate::OLE;
      break;
    case ComparePredicate::gt:
      p = arith::CmpFPredicate::OGT;
      break;
    case ComparePredicate::ge:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    return b.create<arith::CmpFOp>(loc, p, x, y);
  }
  bool u = isUnsigned || x.getType().isInteger(1);
  arith::CmpIPredicate p;
  switch (pred) {
  case ComparePredicate::eq:
    p = arith::CmpIPredicate::eq;
    break;
  case ComparePredicate::ne:
    p = arith::CmpIPredicate::ne;
    break;
  case ComparePredicate::lt:
    p = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    break;
  case ComparePredicate::le:
    p = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    break;
  case ComparePredicate::gt:
    p = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    break;
  case ComparePredicate::ge:
    p = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    break;
  }
  return b.create<arith::CmpIOp>(loc, p, x, y);
}

/// Reinterprets the bits of a scalar of tcc type `from` as tcc type `to`
/// (same storage width; a bool is a byte).
static Value bitcast(OpBuilder &b, Location loc, Value x, Type from, Type to) {
  Type toScalar = signlessType(to);
  if (x.getType() == toScalar)
    return x;
  if (from.isInteger(1))
    return b.create<arith::ExtUIOp>(loc, toScalar, x);
  if (to.isInteger(1)) {
    Value bits = x;
    if (isa<FloatType>(x.getType()))
      bits = b.create<arith::BitcastOp>(loc, b.getI8Type(), x);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, bits,
                                   scalarConstant(b, loc, bits.getType(), 0));
  }
  return b.create<arith::BitcastOp>(loc, toScalar, x);
}

FailureOr<Value> mlir::tcc::emitScalarElementwise(OpBuilder &b, Location loc,
                                                  Operation *op,
                                                  ValueRange args) {
  Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
  Type operandType = op->getNumOperands()
                         ? getElementTypeOrSelf(op->getOperand(0).getType())
                         : resultType;
  Type type = signlessType(resultType);
  bool isFloat = isa<FloatType>(type);
  // Whether integers are unsigned, from the tcc types (the scalars are
  // signless).
  bool isUnsigned = resultType.isUnsignedInteger();
  auto c = [&](double v) { return scalarConstant(b, loc, type, v); };
  Value x = args.empty() ? Value() : args[0];
  Value y = args.size() > 1 ? args[1] : Value();
  // Integer-or-float pairs of the same op, to keep the switch short.
  auto pick = [&](auto floatOp, auto intOp) -> Value {
    using F = decltype(floatOp);
    using I = decltype(intOp);
    if (isFloat)
      return b.create<F>(loc, x, y);
    return b.create<I>(loc, x, y);
  };
  // Float, signed and unsigned variants of the same op.
  auto pick3 = [&](auto floatOp, auto signedOp, auto unsignedOp) -> Value {
    if (isFloat)
      return b.create<decltype(floatOp)>(loc, x, y);
    if (isUnsigned)
      return b.create<decltype(unsignedOp)>(loc, x, y);
    return b.create<decltype(signedOp)>(loc, x, y);
  };
  auto maxOf = [&](Value p, Value q) -> Value {
    if (isFloat)
      return b.create<arith::MaximumFOp>(loc, p, q);
    if (isUnsigned)
      return b.create<arith::MaxUIOp>(loc, p, q);
    return b.create<arith::MaxSIOp>(loc, p, q);
  };
  auto minOf = [&](Value p, Value q) -> Value {
    if (isFloat)
      return b.create<arith::MinimumFOp>(loc, p, q);
    if (isUnsigned)
      return b.create<arith::MinUIOp>(loc, p, q);
    return b.create<arith::MinSIOp>(loc, p, q);
  };
  // Integer division by zero is undefined; it must not trap the process.
  if (isa<DivOp, RemOp>(op) && !isFloat) {
    Value isZero =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, c(0));
    y = b.create<arith::SelectOp>(loc, isZero, c(1), y);
  }
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](AddOp) { return pick(arith::AddFOp(), arith::AddIOp()); })
      .Case([&](SubOp) { return pick(arith::SubFOp(), arith::SubIOp()); })
      .Case([&](MulOp) { return pick(arith::MulFOp(), arith::MulIOp()); })
      .Case([&](DivOp) {
        return pick3(arith::DivFOp(), arith::DivSIOp(), arith::DivUIOp());
      })
      .Case([&](RemOp) -> Value {
        if (isFloat)
          return b.create<arith::RemFOp>(loc, x, y);
        if (isUnsigned)
          return b.create<arith::RemUIOp>(loc, x, y);
        return floorRem(b, loc, x, y);
      })
      .Case([&](PowOp) -> Value {
        if (isFloat)
          return b.create<math::PowFOp>(loc, x, y);
        return integerPower(b, loc, x, y, isUnsigned);
      })
      .Case([&](MaxOp) { return maxOf(x, y); })
      .Case([&](MinOp) { return minOf(x, y); })
      .Case([&](AndOp) -> Value { return b.create<arith::AndIOp>(loc, x, y); })
      .Case([&](OrOp) -> Value { return b.create<arith::OrIOp>(loc, x, y); })
      .Case([&](XorOp) -> Value { return b.create<arith::XOrIOp>(loc, x, y); })
      .Case([&](ShiftLeftOp) { return shift(b, loc, x, y, true, false); })
      .Case(
          [&](ShiftRightOp) { return shift(b, loc, x, y, false, !isUnsigned); })
      .Case([&](CompareOp cmp) {
        return compare(b, loc, cmp.getPredicate(), x, y,
                       operandType.isUnsignedInteger());
      })
      .Case([&](SelectOp) -> Value {
        return b.create<arith::SelectOp>(loc, args[0], args[1], args[2]);
      })
      .Case([&](NegOp) -> Value {
        if (isFloat)
          return b.create<arith::NegFOp>(loc, x);
        return b.create<arith::SubIOp>(loc, c(0), x);
      })
      .Case([&](AbsOp) -> Value {
        if (isFloat)
          return b.create<math::AbsFOp>(loc, x);
        if (isUnsigned)
          return x;
        return b.create<math::AbsIOp>(loc, x);
      })
      .Case([&](SignOp) -> Value {
        Value zero = c(0);
        Value pos = compare(b, loc, ComparePredicate::gt, x, zero, isUnsigned);
        Value neg = compare(b, loc, ComparePredicate::lt, x, zero, isUnsigned);
        Value r = b.create<arith::SelectOp>(
            loc, pos, c(1), b.create<arith::SelectOp>(loc, neg, c(-1), zero));
        if (!isFloat)
          return r;
        // sign(NaN) is NaN.
        Value isNan =
            b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
        return b.create<arith::SelectOp>(loc, isNan, x, r);
      })
      .Case([&](ReluOp) { return maxOf(x, c(0)); })
      .Case([&](ExpOp) -> Value { return b.create<math::ExpOp>(loc, x); })
      .Case([&](LogOp) -> Value { return b.create<math::LogOp>(loc, x); })
      .Case([&](SqrtOp) -> Value { return b.create<math::SqrtOp>(loc, x); })
      .Case([&](RsqrtOp) -> Value { return b.create<math::RsqrtOp>(loc, x); })
      .Case([&](ReciprocalOp) -> Value {
        return b.create<arith::DivFOp>(loc, c(1), x);
      })
      .Case([&](TanhOp) -> Value { return b.create<math::TanhOp>(loc, x); })
      .Case([&](SigmoidOp) -> Value {
        Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
        return b.create<arith::DivFOp>(loc, c(1),
                                       b.create<arith::AddFOp>(loc, c(1), e));
      })
      .Case([&](ErfOp) -> Value { return b.create<math::ErfOp>(loc, x); })
      .Case([&](SinOp) -> Value { return b.create<math::SinOp>(loc, x); })
      .Case([&](CosOp) -> Value { return b.create<math::CosOp>(loc, x); })
      .Case([&](TanOp) -> Value { return b.create<math::TanOp>(loc, x); })
      .Case([&](AsinOp) -> Value { return b.create<math::AsinOp>(loc, x); })
      .Case([&](AcosOp) -> Value { return b.create<math::AcosOp>(loc, x); })
      .Case([&](AtanOp) -> Value { return b.create<math::AtanOp>(loc, x); })
      .Case([&](SinhOp) -> Value { return b.create<math::SinhOp>(loc, x); })
      .Case([&](CoshOp) -> Value { return b.create<math::CoshOp>(loc, x); })
      .Case([&](AsinhOp) -> Value { return b.create<math::AsinhOp>(loc, x); })
      .Case([&](AcoshOp) -> Value { return b.create<math::AcoshOp>(loc, x); })
      .Case([&](AtanhOp) -> Value { return b.create<math::AtanhOp>(loc, x); })
      .Case([&](FloorOp) -> Value { return b.create<math::FloorOp>(loc, x); })
      .Case([&](CeilOp) -> Value { return b.create<math::CeilOp>(loc, x); })
      .Case(
          [&](RoundOp) -> Value { return b.create<math::RoundEvenOp>(loc, x); })
      .Case([&](NotOp) -> Value {
        // All ones: true for i1, ~x for wider integers.
        Value ones = b.create<arith::ConstantOp>(
            loc, b.getIntegerAttr(
                     type, APInt::getAllOnes(type.getIntOrFloatBitWidth())));
        return b.create<arith::XOrIOp>(loc, x, ones);
      })
      .Case([&](GeluOp gelu) -> Value {
        Value half = b.create<arith::MulFOp>(loc, x, c(0.5));
        Value inner;
        if (gelu.getApproximate() == GeluApproximation::tanh) {
          // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
          Value x3 = b.create<arith::MulFOp>(
              loc, x, b.create<arith::MulFOp>(loc, x, x));
          Value poly = b.create<arith::AddFOp>(
              loc, x, b.create<arith::MulFOp>(loc, x3, c(0.044715)));
          inner = b.create<math::TanhOp>(
              loc,
              b.create<arith::MulFOp>(loc, poly, c(std::sqrt(2.0 / M_PI))));
        } else {
          inner = b.create<math::ErfOp>(
              loc, b.create<arith::MulFOp>(loc, x, c(M_SQRT1_2)));
        }
        return b.create<arith::MulFOp>(
            loc, half, b.create<arith::AddFOp>(loc, c(1), inner));
      })
      .Case([&](ClampOp clamp) -> Value {
        Value r = x;
        if (auto lo = clamp.getMin())
          r = maxOf(r, c(lo->convertToDouble()));
        if (auto hi = clamp.getMax())
          r = minOf(r, c(hi->convertToDouble()));
        return r;
      })
      .Case([&](CastOp) {
        return emitScalarCast(b, loc, x, operandType, resultType);
      })
      .Case([&](BitcastOp) {
        return bitcast(b, loc, x, operandType, resultType);
      })
      .Default([&](Operation *other) -> FailureOr<Value> {
        return other->emitOpError() << "has no scalar lowering";
      });
}

namespace {
/// Lowers any BroadcastingElementwise op to one parallel linalg.generic.
struct ElementwiseToGeneric
    : OpTraitConversionPattern<tcc::OpTrait::BroadcastingElementwise> {
  using OpTraitConversionPattern::OpTraitConversionPattern;

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "expects one result");
    auto type = signlessTensor(op->getResult(0).getType());
    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps;
    for (Value v : operands)
      maps.push_back(
          broadcastMap(ctx, cast<RankedTensorType>(v.getType()).getShape(),
                       type.getShape()));
    maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
    bool failedBody = false;
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, operands, emptyTensor(rewriter, loc, type), maps,
        parallelIterators(type.getRank()),
        [&](OpBuilder &b, Location l, ValueRange args) {
          FailureOr<Value> r =
              emitScalarElementwise(b, l, op, args.drop_back());
          failedBody = failed(r);
          b.create<linalg::YieldOp>(l, failedBody ? args.back() : *r);
        });
    if (failedBody) {
      rewriter.eraseOp(generic);
      return failure();
    }
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct ConstantToArith : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // arith takes signless integers: the same bits under the signless type.
    ElementsAttr value = op.getValue();
    auto type = signlessTensor(value.getType());
    if (type != value.getType()) {
      if (auto dense = dyn_cast<DenseElementsAttr>(value))
        value = dense.bitcast(type.getElementType());
      else if (auto blob = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, blob.getRawHandle());
      else
        return rewriter.notifyMatchFailure(op, "unsupported constant kind");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, cast<TypedAttr>(value));
    return success();
  }
};
} // namespace

void mlir::tcc::populateElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ElementwiseToGeneric, ConstantToArith>(signlessConverter(),
                                                      patterns.getContext());
}
