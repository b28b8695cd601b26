//===- SplitEmptyTensors.cpp - the tcc-split-empty-tensors pass -----------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCSPLITEMPTYTENSORS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct TccSplitEmptyTensorsPass
    : mlir::tcc::impl::TccSplitEmptyTensorsBase<TccSplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    for (tensor::EmptyOp empty : empties) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          empty->getUses(), [](OpOperand &use) { return &use; });
      // In program order: the first use keeps the original, each later one
      // gets a clone next to it (so none moves into a loop).
      Block *block = empty->getBlock();
      auto top = [&](OpOperand *use) {
        return block->findAncestorOpInBlock(*use->getOwner());
      };
      llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
        return top(a) != top(b) && top(a)->isBeforeInBlock(top(b));
      });
      OpBuilder b(empty);
      b.setInsertionPointAfter(empty);
      for (OpOperand *use : llvm::drop_begin(uses)) {
        Operation *clone = b.clone(*empty);
        use->set(clone->getResult(0));
        b.setInsertionPointAfter(clone);
      }
    }
  }
};
} // namespace
