//===- ApproximateMath.cpp - the tcc-approximate-math pass ----------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct ApproximateMathPass
    : mlir::tcc::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // exp (softmax, sigmoid, GELU's tanh form): upstream's approximation
    // comes only with all the others (sin, cos, log, atan...), so it is
    // applied to the f32 math.exp ops alone, and the ops it makes are left
    // as they are.
    SmallVector<Operation *> exps;
    getOperation().walk([&](math::ExpOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        exps.push_back(op);
    });
    if (exps.empty())
      return;
    RewritePatternSet all(&getContext());
    populateMathPolynomialApproximationPatterns(all);
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyOpPatternsAndFold(exps, std::move(all), config)))
      return signalPassFailure();
  }
};
} // namespace
