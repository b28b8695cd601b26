//===- ParallelizeLoops.cpp - parallel outer loops for big linalg ops -----===//
//
// tcc-parallelize-loops and tcc-inline-alloca-scopes (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCPARALLELIZELOOPS
#define GEN_PASS_DEF_TCCINLINEALLOCASCOPES
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

struct TccParallelizeLoopsPass
    : mlir::tcc::impl::TccParallelizeLoopsBase<TccParallelizeLoopsPass> {
  using TccParallelizeLoopsBase::TccParallelizeLoopsBase;

  void runOnOperation() override {
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
    for (auto [op, index] : work) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops) ||
          static_cast<int64_t>(loops->size()) <= index) {
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

struct TccInlineAllocaScopesPass
    : mlir::tcc::impl::TccInlineAllocaScopesBase<TccInlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      Region &region = scope.getBodyRegion();
      if (!region.hasOneBlock())
        return;
      bool allocates = llvm::any_of(region.front(), [](Operation &op) {
        return isa<memref::AllocaOp>(op);
      });
      if (!allocates)
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body->getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

} // namespace
