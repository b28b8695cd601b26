//===- MemRefCopyToLinalg.cpp - strided copies as loops -------------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CONVERTMEMREFCOPYTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto contiguous = [](Value v) {
      auto type = cast<MemRefType>(v.getType());
      return type.getLayout().isIdentity() ||
             memref::isStaticShapeAndContiguousRowMajor(type);
    };
    if (contiguous(op.getSource()) && contiguous(op.getTarget()))
      return rewriter.notifyMatchFailure(op, "contiguous: becomes a memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct ConvertMemRefCopyToLinalgPass
    : mlir::tcc::impl::ConvertMemRefCopyToLinalgBase<
          ConvertMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
