//===- Scatter.cpp - tcc.scatter to loops over tensors --------------------===//
//
// Writes go to data-dependent positions, which linalg cannot express, so
// tcc.scatter is a loop nest over the updates that carries the result
// tensor: each step reads its index, skips it when out of range, and
// inserts the (combined) update. Bufferization turns the carried tensor
// into one buffer written in place, initialised with a copy of `data`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {
struct ScatterToLoops : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value updates = adaptor.getUpdates(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
    auto updType = cast<RankedTensorType>(updates.getType());
    Type et = dataType.getElementType();
    bool isFloat = isa<FloatType>(et);
    bool isUnsigned = isUnsignedInt(op.getData().getType());
    int64_t rank = dataType.getRank(), axis = op.getAxis();
    int64_t size = dataType.getDimSize(axis);
    ScatterReduction reduction = op.getReduction();

    // A copy of data that the loops then update.
    Value result =
        rewriter
            .create<linalg::CopyOp>(loc, adaptor.getData(),
                                    emptyTensor(rewriter, loc, dataType))
            .getResult(0);
    // (Nothing to update, or nowhere to: every index is out of range.)
    if (updType.getNumElements() == 0 || size == 0) {
      rewriter.replaceOp(op, result);
      return success();
    }
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    SmallVector<Value> lbs(rank, zero), steps(rank, one), ubs;
    for (int64_t d : updType.getShape())
      ubs.push_back(rewriter.create<arith::ConstantIndexOp>(loc, d));

    auto combine = [&](OpBuilder &b, Location l, Value old,
                       Value upd) -> Value {
      switch (reduction) {
      case ScatterReduction::none:
        return upd;
      case ScatterReduction::add:
        return isFloat ? b.create<arith::AddFOp>(l, old, upd).getResult()
                       : b.create<arith::AddIOp>(l, old, upd).getResult();
      case ScatterReduction::mul:
        return isFloat ? b.create<arith::MulFOp>(l, old, upd).getResult()
                       : b.create<arith::MulIOp>(l, old, upd).getResult();
      case ScatterReduction::max:
        return isFloat ? b.create<arith::MaximumFOp>(l, old, upd).getResult()
               : isUnsigned ? b.create<arith::MaxUIOp>(l, old, upd).getResult()
                            : b.create<arith::MaxSIOp>(l, old, upd).getResult();
      case ScatterReduction::min:
        return isFloat ? b.create<arith::MinimumFOp>(l, old, upd).getResult()
               : isUnsigned ? b.create<arith::MinUIOp>(l, old, upd).getResult()
                            : b.create<arith::MinSIOp>(l, old, upd).getResult();
      }
      llvm_unreachable("unknown scatter reduction");
    };

    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{result},
        [&](OpBuilder &b, Location l, ValueRange ivs,
            ValueRange acc) -> scf::ValueVector {
          Value idx = b.create<arith::IndexCastOp>(
              l, b.getIndexType(),
              b.create<tensor::ExtractOp>(l, indices, ivs));
          Value n = b.create<arith::ConstantIndexOp>(l, size);
          Value negative =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, idx,
                                      b.create<arith::ConstantIndexOp>(l, 0));
          idx = b.create<arith::SelectOp>(
              l, negative, b.create<arith::AddIOp>(l, idx, n), idx);
          // Unsigned compare: also false for what is still negative.
          Value inRange =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, idx, n);
          // An index out of range writes its own element back: one insert,
          // no branch (bufferization then updates the copy in place, where
          // branches yielding either a new buffer or the old one would
          // need ownership tracked at run time).
          Value zeroIndex = b.create<arith::ConstantIndexOp>(l, 0);
          SmallVector<Value> target(ivs);
          target[axis] = b.create<arith::SelectOp>(l, inRange, idx, zeroIndex);
          Value old = b.create<tensor::ExtractOp>(l, acc[0], target);
          Value upd = b.create<tensor::ExtractOp>(l, updates, ivs);
          if (reduction != ScatterReduction::none)
            upd = combine(b, l, old, upd);
          Value value = b.create<arith::SelectOp>(l, inRange, upd, old);
          return {
              b.create<tensor::InsertOp>(l, value, acc[0], target).getResult()};
        });
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};
} // namespace

void mlir::tcc::populateScatterToLoopsPatterns(RewritePatternSet &patterns) {
  patterns.add<ScatterToLoops>(signlessConverter(), patterns.getContext());
}
