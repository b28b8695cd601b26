//===- Passes.h - tcc graph-level passes ------------------------*- C++ -*-===//

#ifndef TCC_COMPILER_TRANSFORMS_PASSES_H
#define TCC_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace tcc {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

/// Patterns that expand composite ops (softmax, log_softmax, layer_norm,
/// batch_norm) into elementwise ops and reductions.
void populateTccDecompositionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_TRANSFORMS_PASSES_H
