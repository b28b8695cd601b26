//===- Fused.cpp - tcc.fused groups to one kernel each --------------------===//
//
// An "elementwise" group is one linalg.generic whose body chains the scalar
// forms of its ops. A "rows" group is one loop over the leading dimensions;
// its body is the group's ops cloned at the shape of one row, which the rest
// of the conversion then lowers like any other ops.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/ScalarOps.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {
struct FusedElementwiseToGeneric : OpConversionPattern<FusedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getKind() != "elementwise")
      return rewriter.notifyMatchFailure(op, "not an elementwise group");
    Location loc = op.getLoc();
    auto type = signlessTensor(op.getResult(0).getType());
    SmallVector<AffineMap> maps;
    for (Value v : adaptor.getInputs())
      maps.push_back(broadcastMap(
          op.getContext(), cast<RankedTensorType>(v.getType()).getShape(),
          type.getShape()));
    SmallVector<Value> inits;
    for (Type t : op.getResultTypes()) {
      inits.push_back(emptyTensor(rewriter, loc, cast<RankedTensorType>(t)));
      maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
    }
    Block &body = op.getBody().front();
    bool failedBody = false;
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, llvm::map_to_vector(op.getResultTypes(), signlessType),
        adaptor.getInputs(), inits, maps, parallelIterators(type.getRank()),
        [&](OpBuilder &b, Location l, ValueRange args) {
          IRMapping scalars;
          for (auto [arg, scalar] :
               llvm::zip(body.getArguments(),
                         args.take_front(body.getNumArguments())))
            scalars.map(arg, scalar);
          for (Operation &inner : body.without_terminator()) {
            SmallVector<Value> operands =
                llvm::map_to_vector(inner.getOperands(),
                                    [&](Value v) { return scalars.lookup(v); });
            FailureOr<Value> r = emitScalarElementwise(b, l, &inner, operands);
            if (failed(r)) {
              failedBody = true;
              r = operands.front();
            }
            scalars.map(inner.getResult(0), *r);
          }
          b.create<linalg::YieldOp>(
              l,
              llvm::map_to_vector(body.getTerminator()->getOperands(),
                                  [&](Value v) { return scalars.lookup(v); }));
        });
    if (failedBody) {
      rewriter.eraseOp(generic);
      return failure();
    }
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// Where the rows of a row group split: its ops compute over the full shape
/// or one value per row (see tcc-fuse).
static int64_t rowSplit(FusedOp op, ArrayRef<int64_t> full) {
  int64_t split = -1;
  op.getBody().walk([&](Operation *inner) {
    for (Value r : inner->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType()))
        split = std::max(split, shapes::rowSplit(full, t.getShape()));
  });
  return split;
}

struct FusedRowsToLoop : OpConversionPattern<FusedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getKind() != "rows")
      return rewriter.notifyMatchFailure(op, "not a row group");
    // Row clones keep their tcc types, which unsigned integers must not
    // reach linalg with; such groups lower op by op. The ops are inlined on
    // the original inputs, so that they keep saying which integers are
    // unsigned.
    if (op.getBody()
            .walk([](Operation *inner) {
              return llvm::any_of(inner->getResultTypes(), isUnsignedInt) ||
                             llvm::any_of(inner->getOperandTypes(),
                                          isUnsignedInt)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted()) {
      Block &body = op.getBody().front();
      IRMapping map;
      map.map(body.getArguments(), op.getInputs());
      for (Operation &inner : body.without_terminator())
        rewriter.clone(inner, map);
      rewriter.replaceOp(
          op, llvm::map_to_vector(body.getTerminator()->getOperands(),
                                  [&](Value v) { return map.lookup(v); }));
      return success();
    }
    ArrayRef<int64_t> full =
        cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    int64_t split = rowSplit(op, full);
    if (split < 0)
      return rewriter.notifyMatchFailure(op, "no op computes per row");
    Location loc = op.getLoc();
    int64_t rank = full.size();
    int64_t rows = 1;
    for (int64_t d : full.take_front(split))
      rows *= d;
    // `t` restricted to one row: leading (aligned) dimensions become 1.
    auto rowType = [&](Type t) {
      auto tensor = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape(tensor.getShape());
      int64_t lead = rank - tensor.getRank();
      for (int64_t i = 0; i < tensor.getRank(); ++i)
        if (lead + i < split)
          shape[i] = 1;
      return RankedTensorType::get(shape, tensor.getElementType());
    };
    auto sliceParams = [&](RankedTensorType t, ArrayRef<Value> index,
                           SmallVectorImpl<OpFoldResult> &offsets,
                           SmallVectorImpl<OpFoldResult> &sizes) {
      int64_t lead = rank - t.getRank();
      for (int64_t i = 0; i < t.getRank(); ++i) {
        bool outer = lead + i < split;
        offsets.push_back(outer && t.getDimSize(i) != 1
                              ? OpFoldResult(index[lead + i])
                              : OpFoldResult(rewriter.getIndexAttr(0)));
        sizes.push_back(rewriter.getIndexAttr(outer ? 1 : t.getDimSize(i)));
      }
    };

    SmallVector<Value> inits =
        llvm::map_to_vector(op.getResultTypes(), [&](Type t) {
          return emptyTensor(rewriter, loc, cast<RankedTensorType>(t));
        });
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value count = rewriter.create<arith::ConstantIndexOp>(loc, rows);
    Block &body = op.getBody().front();
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, count, one, inits,
        [&](OpBuilder &b, Location l, Value iv, ValueRange acc) {
          // The row's coordinates in the leading dimensions.
          SmallVector<Value> index(split);
          Value rest = iv;
          for (int64_t i = split - 1; i >= 0; --i) {
            Value d = b.create<arith::ConstantIndexOp>(l, full[i]);
            index[i] = b.create<arith::RemUIOp>(l, rest, d);
            rest = b.create<arith::DivUIOp>(l, rest, d);
          }
          IRMapping map;
          for (auto [arg, input] :
               llvm::zip(body.getArguments(), adaptor.getInputs())) {
            auto t = cast<RankedTensorType>(input.getType());
            SmallVector<OpFoldResult> offsets, sizes;
            sliceParams(t, index, offsets, sizes);
            SmallVector<OpFoldResult> strides(t.getRank(), b.getIndexAttr(1));
            map.map(arg, b.create<tensor::ExtractSliceOp>(
                             l, rowType(t), input, offsets, sizes, strides));
          }
          for (Operation &inner : body.without_terminator()) {
            Operation *row = b.clone(inner, map);
            for (Value r : row->getResults())
              r.setType(rowType(r.getType()));
          }
          SmallVector<Value> updated;
          for (auto [v, dest] :
               llvm::zip(body.getTerminator()->getOperands(), acc)) {
            auto t = cast<RankedTensorType>(dest.getType());
            SmallVector<OpFoldResult> offsets, sizes;
            sliceParams(t, index, offsets, sizes);
            SmallVector<OpFoldResult> strides(t.getRank(), b.getIndexAttr(1));
            updated.push_back(b.create<tensor::InsertSliceOp>(
                l, map.lookup(v), dest, offsets, sizes, strides));
          }
          b.create<scf::YieldOp>(l, updated);
        });
    // Each iteration writes its own rows and keeps its temporaries to
    // itself: tcc-parallelize-loops may run it in parallel.
    loop->setAttr(kRowsLoopAttrName, rewriter.getUnitAttr());
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};
/// Any group no other pattern takes (e.g. a "contraction" group when no
/// micro-kernels are available) lowers op by op: its body is inlined and
/// the inlined ops are converted like any others.
struct InlineFusedGroup : OpConversionPattern<FusedOp> {
  InlineFusedGroup(MLIRContext *ctx)
      : OpConversionPattern(ctx, /*benefit=*/0) {}
  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    IRMapping map;
    for (auto [arg, v] : llvm::zip(body.getArguments(), adaptor.getInputs()))
      map.map(arg, v);
    for (Operation &inner : body.without_terminator())
      rewriter.clone(inner, map);
    rewriter.replaceOp(
        op, llvm::map_to_vector(body.getTerminator()->getOperands(),
                                [&](Value v) { return map.lookup(v); }));
    return success();
  }
};
} // namespace

void mlir::tcc::populateFusedToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedElementwiseToGeneric, FusedRowsToLoop>(
      signlessConverter(), patterns.getContext());
  patterns.add<InlineFusedGroup>(patterns.getContext());
}
