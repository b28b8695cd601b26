//===- TccToLinalg.cpp - the convert-tcc-to-linalg pass -------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include "dialects/Tcc/IR/TccOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CONVERTTCCTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::populateTccToLinalgPatterns(RewritePatternSet &patterns) {
  populateElementwiseToLinalgPatterns(patterns);
  populateReductionToLinalgPatterns(patterns);
  populateContractionToLinalgPatterns(patterns);
  populateWindowToLinalgPatterns(patterns);
  populateShapeToTensorPatterns(patterns);
  populateFusedToLinalgPatterns(patterns);
  populateScanToLinalgPatterns(patterns);
  populateScatterToLoopsPatterns(patterns);
  // Composite ops lower through their decompositions.
  populateTccDecompositionPatterns(patterns);
}

namespace {
struct ConvertTccToLinalgPass
    : mlir::tcc::impl::ConvertTccToLinalgBase<ConvertTccToLinalgPass> {
  using ConvertTccToLinalgBase::ConvertTccToLinalgBase;
  void runOnOperation() override {
    // Say precisely what cannot be lowered before trying, rather than
    // leaving it to a generic "failed to legalize".
    WalkResult check = getOperation().walk([](Operation *op) {
      if (isa<TccDialect>(op->getDialect()) && failed(checkLowerable(op)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (check.wasInterrupted())
      return signalPassFailure();
    lowerControlFlowToScf(getOperation());
    padEmptyInterface(getOperation());

    ConversionTarget target(getContext());
    target.addIllegalDialect<TccDialect>();
    target.addLegalOp<UkernelOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateTccToLinalgPatterns(patterns);
    // Unsigned integers become signless at the function boundary too (the
    // artifact's interface was recorded before this pass).
    TypeConverter signless = signlessConverter();
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   signless);
    populateReturnOpTypeConversionPattern(patterns, signless);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return signless.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp r) {
      return signless.isLegal(r.getOperandTypes());
    });
    if (ukernels != UkernelIsa::none)
      populateUkernelPatterns(patterns,
                              static_cast<int32_t>(ukernels.getValue()));
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
