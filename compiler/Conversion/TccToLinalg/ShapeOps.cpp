//===- ShapeOps.cpp - tcc shape ops to tensor and linalg ------------------===//
//
// Reshapes, slices and concatenations become tensor ops that bufferize to
// views or copies; data-dependent reads (gather, non-constant padding) are
// linalg.generic ops whose bodies compute the source index.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {
struct ReshapeToTensor : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(),
                                         adaptor.getInput(), op.getType()));
    return success();
  }
};

struct TransposeToLinalg : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOp(op, rewriter
                               .create<linalg::TransposeOp>(
                                   loc, adaptor.getInput(),
                                   emptyTensor(rewriter, loc, op.getType()),
                                   op.getPerm())
                               ->getResults());
    return success();
  }
};

struct BroadcastToLinalg : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessTensor(op.getType());
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    rewriter.replaceOp(
        op, gatherThroughMap(rewriter, loc, adaptor.getInput(), type,
                             broadcastMap(op.getContext(), inType.getShape(),
                                          type.getShape())));
    return success();
  }
};

struct ConcatToTensor : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessTensor(op.getType());
    int64_t axis = op.getAxis(), rank = type.getRank();
    Value result = emptyTensor(rewriter, loc, type);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto inType = cast<RankedTensorType>(in.getType());
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[axis] = offset;
      offset += inType.getDimSize(axis);
      if (inType.getNumElements() == 0)
        continue;
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, in, result, ValueRange{}, ValueRange{}, ValueRange{},
          rewriter.getDenseI64ArrayAttr(offsets),
          rewriter.getDenseI64ArrayAttr(inType.getShape()),
          rewriter.getDenseI64ArrayAttr(strides));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceToTensor : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessTensor(op.getType());
    ArrayRef<int64_t> steps = op.getSteps();
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, adaptor.getInput(), ValueRange{}, ValueRange{},
          ValueRange{}, rewriter.getDenseI64ArrayAttr(op.getOffsets()),
          rewriter.getDenseI64ArrayAttr(type.getShape()),
          rewriter.getDenseI64ArrayAttr(steps));
      return success();
    }
    // Negative steps read backwards: offset + i * step in the indexing map.
    SmallVector<AffineExpr> exprs;
    for (auto [i, off, step] : llvm::enumerate(op.getOffsets(), op.getSteps()))
      exprs.push_back(getAffineDimExpr(i, op.getContext()) * step + off);
    rewriter.replaceOp(op,
                       gatherThroughMap(rewriter, loc, adaptor.getInput(), type,
                                        AffineMap::get(type.getRank(), 0, exprs,
                                                       op.getContext())));
    return success();
  }
};

struct SplitToTensor : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = op.getAxis(), offset = 0;
    SmallVector<Value> pieces;
    for (Type t : op.getResultTypes()) {
      auto type = signlessTensor(t);
      SmallVector<int64_t> offsets(type.getRank(), 0),
          strides(type.getRank(), 1);
      offsets[axis] = offset;
      offset += type.getDimSize(axis);
      pieces.push_back(rewriter.create<tensor::ExtractSliceOp>(
          op.getLoc(), type, adaptor.getInput(), ValueRange{}, ValueRange{},
          ValueRange{}, rewriter.getDenseI64ArrayAttr(offsets),
          rewriter.getDenseI64ArrayAttr(type.getShape()),
          rewriter.getDenseI64ArrayAttr(strides)));
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

/// index in [0, size): negative indices count from the end; anything still
/// out of range is clamped so a bad index never reads outside the data.
static Value normalizeIndex(OpBuilder &b, Location loc, Value index,
                            int64_t size) {
  Value idx = b.create<arith::IndexCastOp>(loc, b.getIndexType(), index);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value n = b.create<arith::ConstantIndexOp>(loc, size);
  Value isNeg =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx, zero);
  idx = b.create<arith::SelectOp>(loc, isNeg,
                                  b.create<arith::AddIOp>(loc, idx, n), idx);
  idx = b.create<arith::MaxSIOp>(loc, idx, zero);
  return b.create<arith::MinSIOp>(
      loc, idx, b.create<arith::ConstantIndexOp>(loc, size - 1));
}

struct GatherToLinalg : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType type = signlessTensor(op.getType());
    Value data = adaptor.getData();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto idxType = cast<RankedTensorType>(adaptor.getIndices().getType());
    int64_t axis = op.getAxis(), q = idxType.getRank();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < q; ++i)
      idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(type.getRank(), 0, idxExprs, ctx),
        rewriter.getMultiDimIdentityMap(type.getRank())};
    rewriter.replaceOp(
        op,
        rewriter
            .create<linalg::GenericOp>(
                loc, type, adaptor.getIndices(),
                emptyTensor(rewriter, loc, type), maps,
                parallelIterators(type.getRank()),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  SmallVector<Value> coords;
                  for (int64_t i = 0; i < axis; ++i)
                    coords.push_back(b.create<linalg::IndexOp>(l, i));
                  coords.push_back(
                      normalizeIndex(b, l, args[0], dataType.getDimSize(axis)));
                  for (int64_t i = axis + 1; i < dataType.getRank(); ++i)
                    coords.push_back(b.create<linalg::IndexOp>(l, i - 1 + q));
                  b.create<linalg::YieldOp>(
                      l,
                      b.create<tensor::ExtractOp>(l, data, coords).getResult());
                })
            .getResults());
    return success();
  }
};

/// Source index of output index `i` along a padded dimension of `size`
/// elements with `low` elements before it.
static Value borderIndex(OpBuilder &b, Location loc, PadMode mode, Value i,
                         int64_t low, int64_t size) {
  auto cst = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value j = b.create<arith::SubIOp>(loc, i, cst(low));
  auto positiveMod = [&](Value x, int64_t m) -> Value {
    Value r = b.create<arith::RemSIOp>(loc, x, cst(m));
    return b.create<arith::RemSIOp>(
        loc, b.create<arith::AddIOp>(loc, r, cst(m)), cst(m));
  };
  switch (mode) {
  case PadMode::edge:
    return b.create<arith::MinSIOp>(
        loc, b.create<arith::MaxSIOp>(loc, j, cst(0)), cst(size - 1));
  case PadMode::wrap:
    return positiveMod(j, size);
  case PadMode::reflect: {
    if (size == 1)
      return cst(0);
    // Mirror without repeating the edge: period 2 * (size - 1).
    int64_t period = 2 * (size - 1);
    Value k = positiveMod(j, period);
    Value over =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, k, cst(size));
    return b.create<arith::SelectOp>(
        loc, over, b.create<arith::SubIOp>(loc, cst(period), k), k);
  }
  case PadMode::constant:
    break;
  }
  llvm_unreachable("constant padding has no border index");
}

struct PadToLinalg : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessTensor(op.getType());
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    if (op.getMode() == PadMode::constant) {
      Value v = scalarConstant(rewriter, loc, op.getType().getElementType(),
                               op.getValue().convertToDouble());
      rewriter.replaceOp(
          op, padTensor(rewriter, loc, input, op.getLow(), op.getHigh(), v));
      return success();
    }
    if (type.getNumElements() == 0) { // e.g. an empty batch: nothing to copy
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    if (inType.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "cannot pad an empty tensor "
                                             "from its border");
    rewriter.replaceOp(
        op, rewriter
                .create<linalg::GenericOp>(
                    loc, type, ValueRange{}, emptyTensor(rewriter, loc, type),
                    rewriter.getMultiDimIdentityMap(type.getRank()),
                    parallelIterators(type.getRank()),
                    [&](OpBuilder &b, Location l, ValueRange) {
                      SmallVector<Value> coords;
                      for (int64_t i = 0; i < type.getRank(); ++i)
                        coords.push_back(borderIndex(
                            b, l, op.getMode(), b.create<linalg::IndexOp>(l, i),
                            op.getLow()[i], inType.getDimSize(i)));
                      b.create<linalg::YieldOp>(
                          l, b.create<tensor::ExtractOp>(l, input, coords)
                                 .getResult());
                    })
                .getResults());
    return success();
  }
};
} // namespace

void mlir::tcc::populateShapeToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeToTensor, TransposeToLinalg, BroadcastToLinalg,
               ConcatToTensor, SliceToTensor, SplitToTensor, GatherToLinalg,
               PadToLinalg>(signlessConverter(), patterns.getContext());
}
