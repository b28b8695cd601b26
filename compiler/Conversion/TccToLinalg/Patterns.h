//===- Patterns.h - tcc -> linalg pattern groups ----------------*- C++ -*-===//
//
// One populate function per op family; TccToLinalg.cpp gathers them.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H
#define TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H

namespace mlir {
class RewritePatternSet;
namespace tcc {
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(RewritePatternSet &patterns);
void populateContractionToLinalgPatterns(RewritePatternSet &patterns);
void populateWindowToLinalgPatterns(RewritePatternSet &patterns);
void populateShapeToTensorPatterns(RewritePatternSet &patterns);
void populateFusedToLinalgPatterns(RewritePatternSet &patterns);
} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_CONVERSION_TCCTOLINALG_PATTERNS_H
