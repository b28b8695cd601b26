//===- InlineAllocaScopes.cpp - inline the alloca scopes of parallel loops ===//
//
// tcc-inline-alloca-scopes (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCINLINEALLOCASCOPES
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct TccInlineAllocaScopesPass
    : mlir::tcc::impl::TccInlineAllocaScopesBase<TccInlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      Region &region = scope.getBodyRegion();
      if (!region.hasOneBlock())
        return;
      SmallVector<memref::AllocaOp> allocas;
      for (Operation &op : region.front())
        if (auto alloca = dyn_cast<memref::AllocaOp>(&op))
          allocas.push_back(alloca);
      if (!allocas.empty()) {
        // Statically shaped allocas in the body of a parallel loop are the
        // iteration's private buffers: one per thread serves as well, at
        // the top of the omp.parallel region, which every thread runs once.
        auto parallel = scope->getParentOfType<omp::ParallelOp>();
        if (!parallel || llvm::any_of(allocas, [](memref::AllocaOp a) {
              return a->getNumOperands() != 0;
            }))
          return;
        Block &entry = parallel.getRegion().front();
        for (memref::AllocaOp alloca : allocas)
          alloca->moveBefore(&entry, entry.begin());
      }
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
