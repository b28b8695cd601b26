//===- Scans.cpp - cumulative ops and top-k to linalg.generic -------------===//
//
// Both compare positions along one axis with each other, so each is a
// generic over the input's dimensions plus one more, `k`, that runs along
// the axis again as a reduction:
//
// * cumsum / cumprod: y[i] folds x[k] over the k that precede i (or follow
//   it with `reverse`; `exclusive` leaves i itself out);
// * topk: the rank of x[i] counts the k that beat it (ties go to the lower
//   index), then output j picks the one element whose rank is j.
//
// That is quadratic in the axis' length, which suits the short axes these
// ops see; it needs no sorting network and no data-dependent control flow.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// Maps over `rank + 1` loops: the identity on the first `rank`, and the
/// same with dimension `axis` read from the extra loop `k`.
static std::pair<AffineMap, AffineMap> axisMaps(MLIRContext *ctx, int64_t rank,
                                                int64_t axis) {
  SmallVector<AffineExpr> id, alongK;
  for (int64_t i = 0; i < rank; ++i) {
    id.push_back(getAffineDimExpr(i, ctx));
    alongK.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
  }
  return {AffineMap::get(rank + 1, 0, id, ctx),
          AffineMap::get(rank + 1, 0, alongK, ctx)};
}

static SmallVector<utils::IteratorType> axisIterators(int64_t rank) {
  SmallVector<utils::IteratorType> it = parallelIterators(rank);
  it.push_back(utils::IteratorType::reduction);
  return it;
}

namespace {
template <typename Op> struct CumulativeToGeneric : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isSum = std::is_same_v<Op, CumsumOp>;
    Location loc = op.getLoc();
    RankedTensorType type = signlessTensor(op.getType());
    Type et = type.getElementType();
    bool isFloat = isa<FloatType>(et);
    int64_t rank = type.getRank(), axis = op.getAxis();
    auto [id, alongK] = axisMaps(op.getContext(), rank, axis);
    // Which k count for i.
    arith::CmpIPredicate pred =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::sgt
                                             : arith::CmpIPredicate::sge)
                        : (op.getExclusive() ? arith::CmpIPredicate::slt
                                             : arith::CmpIPredicate::sle);
    Value identity = scalarConstant(rewriter, loc, et, isSum ? 0 : 1);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, adaptor.getInput(),
        filledTensor(rewriter, loc, type, identity),
        ArrayRef<AffineMap>{alongK, id}, axisIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = b.create<linalg::IndexOp>(l, axis);
          Value k = b.create<linalg::IndexOp>(l, rank);
          Value counts = b.create<arith::CmpIOp>(l, pred, k, i);
          Value x = b.create<arith::SelectOp>(l, counts, args[0], identity);
          Value r;
          if (isSum)
            r = isFloat ? b.create<arith::AddFOp>(l, args[1], x).getResult()
                        : b.create<arith::AddIOp>(l, args[1], x).getResult();
          else
            r = isFloat ? b.create<arith::MulFOp>(l, args[1], x).getResult()
                        : b.create<arith::MulIOp>(l, args[1], x).getResult();
          b.create<linalg::YieldOp>(l, r);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct TopKToGeneric : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    Type et = inType.getElementType();
    bool isFloat = isa<FloatType>(et);
    bool isUnsigned = isUnsignedInt(op.getInput().getType());
    int64_t rank = inType.getRank(), axis = op.getAxis();
    bool largest = op.getLargest();
    auto [id, alongK] = axisMaps(ctx, rank, axis);
    Type i64 = rewriter.getI64Type();

    // rank[i] = #{k : x[k] beats x[i], or equals it with k < i}. NaN beats
    // every number when looking for the largest, as numpy sorts it last.
    auto rankType = RankedTensorType::get(inType.getShape(), i64);
    Value ranks =
        rewriter
            .create<linalg::GenericOp>(
                loc, rankType, ValueRange{input, input},
                filledTensor(rewriter, loc, rankType,
                             scalarConstant(rewriter, loc, i64, 0)),
                ArrayRef<AffineMap>{id, alongK, id}, axisIterators(rank),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value xi = args[0], xk = args[1];
                  Value i = b.create<linalg::IndexOp>(l, axis);
                  Value k = b.create<linalg::IndexOp>(l, rank);
                  Value beats, equal;
                  if (isFloat) {
                    beats = b.create<arith::CmpFOp>(
                        l,
                        largest ? arith::CmpFPredicate::OGT
                                : arith::CmpFPredicate::OLT,
                        xk, xi);
                    equal = b.create<arith::CmpFOp>(
                        l, arith::CmpFPredicate::OEQ, xk, xi);
                    Value kNan = b.create<arith::CmpFOp>(
                        l, arith::CmpFPredicate::UNO, xk, xk);
                    Value iNan = b.create<arith::CmpFOp>(
                        l, arith::CmpFPredicate::UNO, xi, xi);
                    // Two NaNs are equal; a NaN beats a number (largest) or
                    // loses to it (smallest).
                    Value both = b.create<arith::AndIOp>(l, kNan, iNan);
                    equal = b.create<arith::OrIOp>(l, equal, both);
                    Value one = scalarConstant(b, l, b.getI1Type(), 1);
                    Value nanWins = b.create<arith::AndIOp>(
                        l, largest ? kNan : iNan,
                        b.create<arith::XOrIOp>(l, largest ? iNan : kNan, one));
                    beats = b.create<arith::OrIOp>(l, beats, nanWins);
                  } else {
                    auto p = largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                                   : arith::CmpIPredicate::sgt)
                                     : (isUnsigned ? arith::CmpIPredicate::ult
                                                   : arith::CmpIPredicate::slt);
                    beats = b.create<arith::CmpIOp>(l, p, xk, xi);
                    equal = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                    xk, xi);
                  }
                  Value before = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::slt, k, i);
                  Value counts = b.create<arith::OrIOp>(
                      l, beats, b.create<arith::AndIOp>(l, equal, before));
                  Value add =
                      b.create<arith::ExtUIOp>(l, b.getI64Type(), counts);
                  b.create<linalg::YieldOp>(
                      l, b.create<arith::AddIOp>(l, args[2], add).getResult());
                })
            .getResult(0);

    // values[j] / indices[j] take the element whose rank is j: a reduction
    // over k that keeps the one match (no arithmetic on the values).
    auto valType = signlessTensor(op.getValues().getType());
    auto idxType = RankedTensorType::get(valType.getShape(), i64);
    SmallVector<AffineMap> maps = {alongK, alongK, id, id};
    auto pick = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valType, idxType}, ValueRange{input, ranks},
        ValueRange{filledTensor(rewriter, loc, valType,
                                scalarConstant(rewriter, loc, et, 0)),
                   filledTensor(rewriter, loc, idxType,
                                scalarConstant(rewriter, loc, i64, 0))},
        maps, axisIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value j = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
          Value k = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, rank));
          Value match =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, args[1], j);
          b.create<linalg::YieldOp>(
              l,
              ValueRange{b.create<arith::SelectOp>(l, match, args[0], args[2]),
                         b.create<arith::SelectOp>(l, match, k, args[3])});
        });
    rewriter.replaceOp(op, pick.getResults());
    return success();
  }
};
} // namespace

void mlir::tcc::populateScanToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CumulativeToGeneric<CumsumOp>, CumulativeToGeneric<CumprodOp>,
               TopKToGeneric>(signlessConverter(), patterns.getContext());
}
