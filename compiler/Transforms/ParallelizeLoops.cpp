//===- ParallelizeLoops.cpp - parallel outer loops for big linalg ops -----===//
//
// tcc-parallelize-loops (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCPARALLELIZELOOPS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {

/// Which loop of `op` to run in parallel, or -1 for none.
int64_t chooseParallelLoop(linalg::LinalgOp op, int64_t minIterations,
                           int64_t minTripCount) {
  if (!op.hasPureBufferSemantics())
    return -1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t total = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r))
      return -1;
    total *= r;
  }
  if (total < minIterations)
    return -1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [i, it] : llvm::enumerate(iterators)) {
    if (it != utils::IteratorType::parallel)
      return -1;
    if (ranges[i] >= minTripCount)
      return static_cast<int64_t>(i);
  }
  return -1;
}

/// Replaces `loop` (no iter_args) by a one-dimensional scf.parallel.
void makeParallel(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  auto parallel = rewriter.create<scf::ParallelOp>(
      loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  Block *old = loop.getBody();
  rewriter.eraseOp(old->getTerminator());
  rewriter.inlineBlockBefore(old, body->getTerminator(),
                             parallel.getInductionVars());
  rewriter.eraseOp(loop);
}

/// Bytes of a statically shaped memref, or -1.
int64_t staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return -1;
  return type.getNumElements() *
         ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

/// The temporaries of a rows loop: buffers that tcc-mark-row-temporaries
/// marked inside it, which buffer hoisting then moved out of it and the
/// memory plan placed once for all iterations (arena views, or allocations
/// the plan left alone). Fails if one is used outside the loop, unless in
/// another rows loop: CSE makes one view of two rows loops' temporaries at
/// the same offset (the encoder's two layer norms), which is no data
/// passing between them, and must not keep either loop sequential.
FailureOr<SmallVector<Operation *>> loopTemporaries(scf::ForOp loop) {
  auto inOtherRowsLoop = [&](Operation *user) {
    for (Operation *p = user->getParentOp(); p; p = p->getParentOp())
      if (p != loop.getOperation() && p->hasAttr(mlir::tcc::kRowsLoopAttrName))
        return true;
    return false;
  };
  SmallVector<Operation *> temps;
  for (Operation &op : *loop->getBlock()) {
    if (!op.hasAttr(mlir::tcc::kRowTemporaryAttrName) ||
        !isa<memref::ViewOp, memref::AllocOp>(op))
      continue;
    bool inside = false, outside = false;
    for (Operation *user : op.getUsers()) {
      if (loop->isAncestor(user))
        inside = true;
      else if (!isa<memref::DeallocOp>(user) && !inOtherRowsLoop(user))
        outside = true;
    }
    if (!inside)
      continue;
    auto type = cast<MemRefType>(op.getResult(0).getType());
    if (outside || staticBytes(type) < 0 || !type.getLayout().isIdentity())
      return failure();
    temps.push_back(&op);
  }
  return temps;
}

/// The most elements of any memref the body of `loop` reads or writes: an
/// estimate of one row's work.
int64_t rowElements(scf::ForOp loop) {
  int64_t most = 1;
  loop.getBody()->walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (auto t = dyn_cast<MemRefType>(v.getType()); t && t.hasStaticShape())
        most = std::max(most, t.getNumElements());
  });
  return most;
}

/// Collapses the trailing reduction loops of a linalg.generic on buffers to
/// one where they are contiguous in every operand (a global average pool's
/// 14 x 14 window: one loop of 196, which LLVM vectorizes, where an inner
/// loop of 14 mostly ran its scalar remainder).
void collapseTrailingReductions(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t n = static_cast<int64_t>(iterators.size()), first = n;
  while (first > 0 && iterators[first - 1] == utils::IteratorType::reduction)
    --first;
  if (n - first < 2)
    return;
  ReassociationIndices dims;
  for (int64_t d = first; d < n; ++d)
    dims.push_back(d);
  SmallVector<ReassociationIndices> folded = {dims};
  // Only plain indexing (each operand indexed by loops, not by sums of them
  // as a window's input is): what the collapse can rewrite.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }) ||
      !linalg::areDimSequencesPreserved(maps, folded))
    return;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, folded, rewriter);
  if (failed(collapsed))
    return;
  rewriter.eraseOp(op); // on buffers: no results to replace
}

/// `type` without its dimensions of size 1: the type of a rank-reducing
/// subview of all of it.
MemRefType dropUnitDims(MemRefType type) {
  SmallVector<int64_t> shape;
  for (int64_t n : type.getShape())
    if (n != 1)
      shape.push_back(n);
  int64_t rank = type.getRank();
  return cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      shape, type, SmallVector<int64_t>(rank, 0), type.getShape(),
      SmallVector<int64_t>(rank, 1)));
}

ReassociationIndices allDimsOf(int64_t rank) {
  ReassociationIndices all;
  for (int64_t k = 0; k < rank; ++k)
    all.push_back(k);
  return all;
}

/// Flattens an elementwise linalg.generic on buffers inside a rows loop to
/// one loop over contiguous elements, where each operand either covers its
/// non-unit loops in order (a row slice: collapsed to 1-D) or none of them
/// (a broadcast scalar: collapsed to rank 0). A row body of [1, 1, 56, 56]
/// (a squeeze-and-excitation scale of one channel) had an inner loop of 56
/// that LLVM unrolled whole and vectorized the loop around it, across rows
/// 56 floats apart, with gathers and scatters: 7x slower per element than
/// the same body over 112 x 112.
void flattenRowBody(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return;
  SmallVector<unsigned> wide; // the loops of more than one trip
  for (auto [d, n] : llvm::enumerate(ranges))
    if (n != 1)
      wide.push_back(d);
  if (wide.size() < 2)
    return; // already one loop of work
  // Per operand: true for a row slice, false for a scalar.
  SmallVector<bool> full;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<unsigned> used;
    for (auto [k, e] : llvm::enumerate(map.getResults())) {
      if (type.getDimSize(k) == 1)
        continue; // a unit dimension: always index 0
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim)
        return;
      used.push_back(dim.getPosition());
    }
    if (!used.empty() && used != wide)
      return;
    // Its unit dimensions dropped (a rank-reducing view), then its others
    // as one, which their strides must allow.
    MemRefType reduced = dropUnitDims(type);
    if (reduced.getRank() > 1 &&
        !memref::CollapseShapeOp::isGuaranteedCollapsible(
            reduced, {allDimsOf(reduced.getRank())}))
      return;
    full.push_back(!used.empty());
  }
  if (!llvm::all_of(ArrayRef<bool>(full).drop_front(op.getNumDpsInputs()),
                    [](bool f) { return f; }))
    return; // every output must be a row
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  SmallVector<Value> flat;
  SmallVector<AffineMap> maps;
  for (auto [operand, isFull] : llvm::zip(op->getOpOperands(), full)) {
    Value v = operand.get();
    auto type = cast<MemRefType>(v.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0)),
        ones(rank, rewriter.getIndexAttr(1)), sizes;
    for (int64_t n : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(n));
    v = rewriter.create<memref::SubViewOp>(loc, dropUnitDims(type), v, zeros,
                                           sizes, ones);
    auto reduced = cast<MemRefType>(v.getType());
    if (reduced.getRank() > 1)
      v = rewriter.create<memref::CollapseShapeOp>(
          loc, v,
          SmallVector<ReassociationIndices>{allDimsOf(reduced.getRank())});
    flat.push_back(v);
    maps.push_back(isFull ? AffineMap::getMultiDimIdentityMap(1, ctx)
                          : AffineMap::get(1, 0, {}, ctx));
  }
  unsigned inputs = op.getNumDpsInputs();
  auto flatOp = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange(flat).take_front(inputs),
      ValueRange(flat).drop_front(inputs), maps,
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel});
  rewriter.inlineRegionBefore(op.getRegion(), flatOp.getRegion(),
                              flatOp.getRegion().begin());
  rewriter.eraseOp(op);
}

struct TccParallelizeLoopsPass
    : mlir::tcc::impl::TccParallelizeLoopsBase<TccParallelizeLoopsPass> {
  using TccParallelizeLoopsBase::TccParallelizeLoopsBase;

  void runOnOperation() override {
    {
      IRRewriter rewriter(&getContext());
      SmallVector<linalg::GenericOp> generics;
      if (!getOperation().isExternal())
        for (Operation &op : getOperation().getBody().front())
          if (auto g = dyn_cast<linalg::GenericOp>(&op))
            generics.push_back(g);
      for (linalg::GenericOp g : generics)
        collapseTrailingReductions(rewriter, g);
      SmallVector<linalg::GenericOp> rowBodies;
      getOperation().walk([&](linalg::GenericOp g) {
        auto loop = g->getParentOfType<scf::ForOp>();
        if (loop && loop->hasAttr(mlir::tcc::kRowsLoopAttrName))
          rowBodies.push_back(g);
      });
      for (linalg::GenericOp g : rowBodies)
        flattenRowBody(rewriter, g);
    }
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Only ops at the top of the function: nested ones are already
      // inside some loop.
      if (op->getParentOp() != getOperation().getOperation())
        return;
      int64_t loop = chooseParallelLoop(op, minIterations, minTripCount);
      if (loop >= 0)
        work.emplace_back(op, loop);
    });
    IRRewriter rewriter(&getContext());
    // Rows loops: each iteration gets its own temporaries (stack buffers,
    // which tcc-inline-alloca-scopes makes one per thread).
    SmallVector<scf::ForOp> rowLoops;
    if (!getOperation().isExternal())
      for (Operation &op : getOperation().getBody().front())
        if (auto loop = dyn_cast<scf::ForOp>(&op);
            loop && loop->hasAttr(mlir::tcc::kRowsLoopAttrName))
          rowLoops.push_back(loop);
    for (scf::ForOp loop : rowLoops) {
      std::optional<int64_t> trips = constantTripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (!trips || *trips < minTripCount || loop.getNumRegionIterArgs() != 0 ||
          *trips * rowElements(loop) < minIterations)
        continue;
      FailureOr<SmallVector<Operation *>> temps = loopTemporaries(loop);
      if (failed(temps))
        continue;
      int64_t bytes = 0;
      for (Operation *temp : *temps)
        bytes += staticBytes(cast<MemRefType>(temp->getResult(0).getType()));
      if (bytes > maxPrivateBytes)
        continue;
      rewriter.setInsertionPointToStart(loop.getBody());
      for (Operation *temp : *temps) {
        auto alloca = rewriter.create<memref::AllocaOp>(
            temp->getLoc(), cast<MemRefType>(temp->getResult(0).getType()),
            rewriter.getI64IntegerAttr(64));
        rewriter.replaceUsesWithIf(
            temp->getResult(0), alloca.getResult(),
            [&](OpOperand &use) { return loop->isAncestor(use.getOwner()); });
        // Other loops' uses keep it; else only deallocs are left.
        if (llvm::any_of(temp->getUsers(), [](Operation *user) {
              return !isa<memref::DeallocOp>(user);
            }))
          continue;
        for (Operation *user : llvm::to_vector(temp->getUsers()))
          rewriter.eraseOp(user); // deallocs
        rewriter.eraseOp(temp);
      }
      loop->removeAttr(mlir::tcc::kRowsLoopAttrName);
      makeParallel(rewriter, loop);
    }
    for (auto [op, index] : work) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops) || static_cast<int64_t>(loops->size()) <= index) {
        op->emitError("tcc-parallelize-loops: cannot lower to loops");
        return signalPassFailure();
      }
      auto loop = dyn_cast<scf::ForOp>((*loops)[index]);
      if (!loop || loop.getNumRegionIterArgs() != 0) {
        op->emitError("tcc-parallelize-loops: unexpected loop nest");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      makeParallel(rewriter, loop);
    }
  }
};

} // namespace
