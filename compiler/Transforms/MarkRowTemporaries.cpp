//===- MarkRowTemporaries.cpp - mark the buffers of rows loops' bodies ----===//
//
// tcc-mark-row-temporaries (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCMARKROWTEMPORARIES
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct TccMarkRowTemporariesPass
    : mlir::tcc::impl::TccMarkRowTemporariesBase<TccMarkRowTemporariesPass> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForOp loop) {
      if (!loop->hasAttr(mlir::tcc::kRowsLoopAttrName))
        return;
      loop.getBody()->walk([](memref::AllocOp alloc) {
        alloc->setAttr(mlir::tcc::kRowTemporaryAttrName,
                       UnitAttr::get(alloc.getContext()));
      });
    });
  }
};

} // namespace
