//===- Patterns.h - tcc -> linalg pattern groups ----------------*- C++ -*-===//
//
// One populate function per op family; TccToLinalg.cpp gathers them.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H
#define TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H

#include <cstdint>

namespace mlir {
class Operation;
class RewritePatternSet;
namespace tcc {
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(RewritePatternSet &patterns);
void populateContractionToLinalgPatterns(RewritePatternSet &patterns);
void populateWindowToLinalgPatterns(RewritePatternSet &patterns);
void populateShapeToTensorPatterns(RewritePatternSet &patterns);
void populateFusedToLinalgPatterns(RewritePatternSet &patterns);
void populateScanToLinalgPatterns(RewritePatternSet &patterns);
void populateScatterToLoopsPatterns(RewritePatternSet &patterns);
/// Rewrites tcc.if / tcc.loop under `root` into scf ops (run before the
/// conversion; the tcc ops in their regions are converted afterwards).
void lowerControlFlowToScf(Operation *root);
/// Contractions as calls of the micro-kernels built for `isa` (a
/// tcc_uk_isa_t); they win over the generic lowering where they apply.
void populateUkernelPatterns(RewritePatternSet &patterns, int32_t isa);
} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H
