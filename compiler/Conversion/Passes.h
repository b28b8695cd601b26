//===- Passes.h - tcc conversion passes -------------------------*- C++ -*-===//

#ifndef TCC_COMPILER_CONVERSION_PASSES_H
#define TCC_COMPILER_CONVERSION_PASSES_H

#include "compiler/Conversion/UkernelIsa.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace tcc {

#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

/// The tcc -> linalg/tensor/arith/math patterns, for use in other passes.
void populateTccToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_CONVERSION_PASSES_H
