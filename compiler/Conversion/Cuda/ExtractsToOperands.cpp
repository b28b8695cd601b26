//===- ExtractsToOperands.cpp - captured element reads as operands --------===//
//
// On the GPU every read of a buffer happens in a kernel. A linalg body that
// uses an element extracted outside it (a 0-d reduction's result, a shape
// computation's scalar) would need the host to read device memory; as an
// operand of the generic, indexed at constant positions, the element is
// read by the kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCEXTRACTSTOOPERANDS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
/// The extract's indices as constants, if they all are.
std::optional<SmallVector<int64_t>> constantIndices(tensor::ExtractOp e) {
  SmallVector<int64_t> out;
  for (Value i : e.getIndices()) {
    std::optional<int64_t> c = getConstantIntValue(i);
    if (!c)
      return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

struct TccExtractsToOperandsPass
    : tcc::impl::TccExtractsToOperandsBase<TccExtractsToOperandsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.hasPureTensorSemantics())
        generics.push_back(g);
    });
    for (linalg::GenericOp g : generics)
      rewrite(g);
  }

  void rewrite(linalg::GenericOp g) {
    llvm::SetVector<tensor::ExtractOp> extracts;
    g.getRegion().walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (auto e = v.getDefiningOp<tensor::ExtractOp>())
          if (!g->isAncestor(e) && constantIndices(e))
            extracts.insert(e);
    });
    if (extracts.empty())
      return;
    MLIRContext *ctx = g.getContext();
    unsigned loops = g.getNumLoops();
    SmallVector<Value> inputs(g.getInputs());
    SmallVector<AffineMap> maps;
    for (OpOperand *in : g.getDpsInputOperands())
      maps.push_back(g.getMatchingIndexingMap(in));
    for (tensor::ExtractOp e : extracts) {
      inputs.push_back(e.getTensor());
      SmallVector<AffineExpr> at;
      for (int64_t i : *constantIndices(e))
        at.push_back(getAffineConstantExpr(i, ctx));
      maps.push_back(AffineMap::get(loops, 0, at, ctx));
    }
    for (OpOperand &out : g.getDpsInitsMutable())
      maps.push_back(g.getMatchingIndexingMap(&out));
    OpBuilder b(g);
    auto replacement = b.create<linalg::GenericOp>(
        g.getLoc(), g.getResultTypes(), inputs, g.getOutputs(), maps,
        g.getIteratorTypesArray());
    replacement->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    replacement.getRegion().takeBody(g.getRegion());
    Block &body = replacement.getRegion().front();
    unsigned first = g.getNumDpsInputs();
    for (auto [k, extract] : llvm::enumerate(extracts)) {
      tensor::ExtractOp e = extract;
      BlockArgument arg =
          body.insertArgument(first + k, e.getType(), e.getLoc());
      e.getResult().replaceUsesWithIf(arg, [&](OpOperand &use) {
        return replacement->isAncestor(use.getOwner());
      });
    }
    g->replaceAllUsesWith(replacement->getResults());
    g->erase();
    for (tensor::ExtractOp e : extracts.takeVector())
      if (e->use_empty())
        e->erase();
  }
};
} // namespace
