//===- Reductions.cpp - tcc reductions to linalg.generic ------------------===//
//
// A reduction is one linalg.generic over the input's iteration space with
// the reduced dimensions as reduction iterators, into a tensor filled with
// the reduction's identity. keepdims is a reshape of the result.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// The loop nest of a reduction over `axes` of `inputType`: identity map for
/// the input, the kept dimensions for the output.
static void reductionLoops(MLIRContext *ctx, RankedTensorType inputType,
                           ArrayRef<int64_t> axes,
                           SmallVectorImpl<AffineMap> &maps,
                           SmallVectorImpl<utils::IteratorType> &iterators,
                           SmallVectorImpl<int64_t> &keptShape) {
  int64_t rank = inputType.getRank();
  SmallVector<AffineExpr> kept;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      kept.push_back(getAffineDimExpr(i, ctx));
      keptShape.push_back(inputType.getDimSize(i));
    }
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  maps.push_back(AffineMap::get(rank, 0, kept, ctx));
}

namespace {
template <typename Op> struct ReduceToGeneric : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type et = inputType.getElementType();
    // The tcc type says whether integers are unsigned.
    Type tccType = op.getInput().getType().getElementType();
    bool isUnsigned = tccType.isUnsignedInteger();
    bool isFloat = isa<FloatType>(et);
    SmallVector<AffineMap> maps;
    SmallVector<utils::IteratorType> iterators;
    SmallVector<int64_t> keptShape;
    reductionLoops(op.getContext(), inputType, op.getAxes(), maps, iterators,
                   keptShape);
    auto accType = RankedTensorType::get(keptShape, et);

    Value init;
    if constexpr (std::is_same_v<Op, ReduceMaxOp>)
      init = lowestValue(rewriter, loc, tccType);
    else if constexpr (std::is_same_v<Op, ReduceMinOp>)
      init = highestValue(rewriter, loc, tccType);
    else if constexpr (std::is_same_v<Op, ReduceProdOp>)
      init = scalarConstant(rewriter, loc, et, 1);
    else
      init = scalarConstant(rewriter, loc, et, 0);

    // Float sums and products may be reassociated, so that LLVM vectorizes
    // them with several partial accumulators: in order, a sum over a row is
    // one chain of dependent adds (a layer norm's 768-element rows took
    // 3072 cycles a reduction).
    const auto reassoc = arith::FastMathFlagsAttr::get(
        rewriter.getContext(), arith::FastMathFlags::reassoc);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, accType, adaptor.getInput(),
        filledTensor(rewriter, loc, accType, init), maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], acc = args[1], r;
          if constexpr (std::is_same_v<Op, ReduceMaxOp>)
            r = isFloat ? b.create<arith::MaximumFOp>(l, acc, x).getResult()
                : isUnsigned ? b.create<arith::MaxUIOp>(l, acc, x).getResult()
                             : b.create<arith::MaxSIOp>(l, acc, x).getResult();
          else if constexpr (std::is_same_v<Op, ReduceMinOp>)
            r = isFloat ? b.create<arith::MinimumFOp>(l, acc, x).getResult()
                : isUnsigned ? b.create<arith::MinUIOp>(l, acc, x).getResult()
                             : b.create<arith::MinSIOp>(l, acc, x).getResult();
          else if constexpr (std::is_same_v<Op, ReduceProdOp>)
            r = isFloat
                    ? b.create<arith::MulFOp>(l, acc, x, reassoc).getResult()
                    : b.create<arith::MulIOp>(l, acc, x).getResult();
          else
            r = isFloat
                    ? b.create<arith::AddFOp>(l, acc, x, reassoc).getResult()
                    : b.create<arith::AddIOp>(l, acc, x).getResult();
          b.create<linalg::YieldOp>(l, r);
        });
    Value result = generic.getResult(0);

    if constexpr (std::is_same_v<Op, ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t a : op.getAxes())
        count *= inputType.getDimSize(a);
      Value n = scalarConstant(rewriter, loc, et, count);
      result =
          rewriter
              .create<linalg::GenericOp>(
                  loc, accType, result, emptyTensor(rewriter, loc, accType),
                  SmallVector<AffineMap>(
                      2, rewriter.getMultiDimIdentityMap(accType.getRank())),
                  parallelIterators(accType.getRank()),
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    b.create<linalg::YieldOp>(
                        l, b.create<arith::DivFOp>(l, args[0], n).getResult());
                  })
              .getResult(0);
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// argmax / argmin: a reduction carrying (best value, its index). NaN wins
/// over numbers, as numpy's argmax; ties keep the first index unless
/// select_last_index.
template <typename Op> struct ArgReduceToGeneric : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<Op, ArgMaxOp>;
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type et = inputType.getElementType();
    Type tccType = op.getInput().getType().getElementType();
    bool isUnsigned = tccType.isUnsignedInteger();
    bool isFloat = isa<FloatType>(et);
    int64_t axis = op.getAxis();
    SmallVector<AffineMap> maps;
    SmallVector<utils::IteratorType> iterators;
    SmallVector<int64_t> keptShape;
    reductionLoops(op.getContext(), inputType, {axis}, maps, iterators,
                   keptShape);
    maps.push_back(maps.back());
    auto valType = RankedTensorType::get(keptShape, et);
    auto idxType = RankedTensorType::get(keptShape, rewriter.getI64Type());
    Value start = isMax ? lowestValue(rewriter, loc, tccType)
                        : highestValue(rewriter, loc, tccType);
    bool last = op.getSelectLastIndex();

    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valType, idxType}, adaptor.getInput(),
        ValueRange{filledTensor(rewriter, loc, valType, start),
                   filledTensor(rewriter, loc, idxType,
                                scalarConstant(rewriter, loc,
                                               rewriter.getI64Type(), 0))},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIdx = args[2];
          Value idx = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
          Value better;
          if (isFloat) {
            auto strict =
                isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
            auto loose =
                isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
            better = b.create<arith::CmpFOp>(l, last ? loose : strict, x, best);
            Value xNan =
                b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
            Value bestNan = b.create<arith::CmpFOp>(
                l, arith::CmpFPredicate::UNO, best, best);
            Value firstNan = b.create<arith::AndIOp>(
                l, xNan,
                b.create<arith::XOrIOp>(
                    l, bestNan, scalarConstant(b, l, b.getI1Type(), 1)));
            better = b.create<arith::OrIOp>(l, better, firstNan);
          } else {
            auto strict = isMax ? (isUnsigned ? arith::CmpIPredicate::ugt
                                              : arith::CmpIPredicate::sgt)
                                : (isUnsigned ? arith::CmpIPredicate::ult
                                              : arith::CmpIPredicate::slt);
            auto loose = isMax ? (isUnsigned ? arith::CmpIPredicate::uge
                                             : arith::CmpIPredicate::sge)
                               : (isUnsigned ? arith::CmpIPredicate::ule
                                             : arith::CmpIPredicate::sle);
            better = b.create<arith::CmpIOp>(l, last ? loose : strict, x, best);
          }
          // The first element always counts, so an all -inf row gives 0.
          Value first =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, idx,
                                      scalarConstant(b, l, b.getI64Type(), 0));
          better = b.create<arith::OrIOp>(l, better, first);
          b.create<linalg::YieldOp>(
              l,
              ValueRange{b.create<arith::SelectOp>(l, better, x, best),
                         b.create<arith::SelectOp>(l, better, idx, bestIdx)});
        });
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, generic.getResult(1), op.getType()));
    return success();
  }
};
} // namespace

void mlir::tcc::populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToGeneric<ReduceSumOp>, ReduceToGeneric<ReduceMeanOp>,
               ReduceToGeneric<ReduceMaxOp>, ReduceToGeneric<ReduceMinOp>,
               ReduceToGeneric<ReduceProdOp>, ArgReduceToGeneric<ArgMaxOp>,
               ArgReduceToGeneric<ArgMinOp>>(signlessConverter(),
                                             patterns.getContext());
}
