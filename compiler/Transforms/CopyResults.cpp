//===- CopyResults.cpp - the tcc-copy-results pass ------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCCOPYRESULTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct TccCopyResultsPass
    : mlir::tcc::impl::TccCopyResultsBase<TccCopyResultsPass> {
  void runOnOperation() override {
    // The caller's inputs are read, never written: bufferization copies an
    // argument before anything would update it in place (a loop carrying
    // it).
    func::FuncOp f = getOperation();
    for (BlockArgument arg : f.getArguments())
      if (isa<TensorType>(arg.getType()))
        f.setArgAttr(arg.getArgNumber(), "bufferization.writable",
                     BoolAttr::get(f.getContext(), false));
    f.walk([](func::ReturnOp ret) {
      DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        Operation *def = v.getDefiningOp();
        bool computed = def && !def->hasTrait<OpTrait::ConstantLike>();
        if (!type || (computed && seen.insert(v).second))
          continue;
        Value init = b.create<tensor::EmptyOp>(ret.getLoc(), type.getShape(),
                                               type.getElementType());
        operand.set(
            b.create<linalg::CopyOp>(ret.getLoc(), v, init).getResult(0));
      }
    });
  }
};
} // namespace
