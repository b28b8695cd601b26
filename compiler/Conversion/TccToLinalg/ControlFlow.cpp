//===- ControlFlow.cpp - tcc.if and tcc.loop to scf -----------------------===//
//
// tcc.if becomes scf.if and tcc.loop becomes scf.while, before the rest of
// the conversion runs: the regions move over as they are, and the tcc ops
// inside them are then lowered like any others. The loop carries its
// iteration number as an index, the condition as an i1, the carried tensors
// and one buffer per scan output, into which each iteration inserts its
// slice.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// The single element of a tensor that holds one.
static Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(),
                           b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<tensor::ExtractOp>(loc, tensor, zeros);
}

/// A rank-0 tensor holding `scalar`.
static Value wrapScalar(OpBuilder &b, Location loc, Value scalar) {
  return b.create<tensor::FromElementsOp>(
      loc, RankedTensorType::get({}, scalar.getType()), scalar);
}

static void lowerIf(IRRewriter &rewriter, IfOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value cond = extractScalar(rewriter, loc, op.getCondition());
  auto ifOp = rewriter.create<scf::IfOp>(loc, op.getResultTypes(), cond,
                                         /*addThenBlock=*/false,
                                         /*addElseBlock=*/false);
  for (auto [from, to] :
       {std::make_pair(&op.getThenRegion(), &ifOp.getThenRegion()),
        std::make_pair(&op.getElseRegion(), &ifOp.getElseRegion())}) {
    rewriter.inlineRegionBefore(*from, *to, to->end());
    Operation *yield = to->front().getTerminator();
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield->getOperands());
  }
  rewriter.replaceOp(op, ifOp.getResults());
}

static void lowerLoop(IRRewriter &rewriter, LoopOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  size_t n = op.getInits().size();
  SmallVector<RankedTensorType> scanTypes;
  for (Value r : op.getResults().drop_front(n))
    scanTypes.push_back(cast<RankedTensorType>(r.getType()));

  // Iteration state: (i, carried..., scan buffers..., cond). The condition
  // comes last: a body that computes it without reading it leaves it
  // unused in the after region, where the canonicalizer drops it, and the
  // tensors before it must keep their positions for bufferization to
  // match each forwarded tensor with its iteration argument.
  Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  SmallVector<Value> inits = {zero};
  llvm::append_range(inits, op.getInits());
  for (RankedTensorType t : scanTypes)
    inits.push_back(emptyTensor(rewriter, loc, t));
  inits.push_back(extractScalar(rewriter, loc, op.getCondition()));
  size_t condAt = inits.size() - 1;
  Value tripCount = extractScalar(rewriter, loc, op.getTripCount());
  SmallVector<Type> types = llvm::map_to_vector(
      ValueRange(inits), [](Value v) { return v.getType(); });
  SmallVector<Location> locs(types.size(), loc);

  auto loop = rewriter.create<scf::WhileOp>(loc, types, inits);
  // Before: keep going while i < trip count (and the scan buffers' size)
  // and the condition holds.
  Block *before = rewriter.createBlock(&loop.getBefore(), {}, types, locs);
  {
    Value i = before->getArgument(0);
    Value i64 =
        rewriter.create<arith::IndexCastOp>(loc, rewriter.getI64Type(), i);
    Value more = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                                i64, tripCount);
    Value go =
        rewriter.create<arith::AndIOp>(loc, more, before->getArgument(condAt));
    if (!scanTypes.empty()) {
      Value room = rewriter.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::slt, i,
          rewriter.create<arith::ConstantIndexOp>(
              loc, scanTypes.front().getDimSize(0)));
      go = rewriter.create<arith::AndIOp>(loc, go, room);
    }
    rewriter.create<scf::ConditionOp>(loc, go, before->getArguments());
  }
  // After: the body, then the next state.
  Block *after = rewriter.createBlock(&loop.getAfter(), {}, types, locs);
  Value i = after->getArgument(0);
  Value iteration = wrapScalar(
      rewriter, loc,
      rewriter.create<arith::IndexCastOp>(loc, rewriter.getI64Type(), i));
  Value cond = wrapScalar(rewriter, loc, after->getArgument(condAt));
  SmallVector<Value> bodyArgs = {iteration, cond};
  llvm::append_range(bodyArgs, after->getArguments().slice(1, n));
  Block &body = op.getBody().front();
  Operation *yield = body.getTerminator();
  rewriter.mergeBlocks(&body, after, bodyArgs);

  rewriter.setInsertionPoint(yield);
  SmallVector<Value> next = {rewriter.create<arith::AddIOp>(
      loc, i, rewriter.create<arith::ConstantIndexOp>(loc, 1))};
  // The scan rows first: they may read this iteration's carried values,
  // which the copies below overwrite.
  SmallVector<Value> rows;
  for (auto [k, t] : llvm::enumerate(scanTypes)) {
    Value slice = yield->getOperand(1 + n + k);
    Value buffer = after->getArgument(1 + n + k);
    int64_t rank = t.getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    offsets[0] = i;
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
    for (int64_t d : t.getShape().drop_front())
      sizes.push_back(rewriter.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    rows.push_back(rewriter.create<tensor::InsertSliceOp>(
        loc, slice, buffer, offsets, sizes, strides));
  }
  // Each carried value is written into its block argument's tensor, so that
  // bufferization keeps one buffer per carried value across iterations. A
  // value that is another carried one as it came in (a swap) is copied
  // out first, before any copy overwrites it.
  SmallVector<Value> carried;
  for (size_t k = 0; k < n; ++k) {
    Value v = yield->getOperand(1 + k);
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == after && arg != after->getArgument(1 + k))
      v = rewriter
              .create<linalg::CopyOp>(
                  loc, v,
                  emptyTensor(rewriter, loc,
                              cast<RankedTensorType>(v.getType())))
              .getResult(0);
    carried.push_back(v);
  }
  for (size_t k = 0; k < n; ++k)
    next.push_back(
        rewriter
            .create<linalg::CopyOp>(loc, carried[k], after->getArgument(1 + k))
            .getResult(0));
  llvm::append_range(next, rows);
  next.push_back(extractScalar(rewriter, loc, yield->getOperand(0)));
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
  rewriter.replaceOp(op, loop.getResults().slice(1, condAt - 1));
}

void mlir::tcc::lowerControlFlowToScf(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<IfOp, LoopOp>(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (Operation *op : ops) {
    if (auto ifOp = dyn_cast<IfOp>(op))
      lowerIf(rewriter, ifOp);
    else
      lowerLoop(rewriter, cast<LoopOp>(op));
  }
}
