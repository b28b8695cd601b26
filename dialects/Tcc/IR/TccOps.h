//===- TccOps.h - tcc dialect operations ------------------------*- C++ -*-===//

#ifndef TCC_DIALECT_TCC_IR_TCCOPS_H
#define TCC_DIALECT_TCC_IR_TCCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Tcc/IR/TccDialect.h"
#include "dialects/Tcc/IR/TccTraits.h"

namespace mlir::tcc {
class TccBuilder;
} // namespace mlir::tcc

#include "dialects/Tcc/IR/TccInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Tcc/IR/TccOps.h.inc"

namespace mlir {
class RewriterBase;
namespace tcc {
/// Rewrites `matmul(a, broadcast_to(w))` (and the mirror image), where the
/// broadcast only stacks copies of w's matrices, to `matmul(a, w)`: numpy
/// matmul broadcasts the stacks itself, without the copies (a decomposed
/// `x @ W` over a batch: `bmm(x, expand(W))`). Fails, changing nothing,
/// unless the result type stays the same. (MatmulOp's canonicalization.)
LogicalResult unstackMatmulOperands(MatmulOp op, RewriterBase &rewriter);
} // namespace tcc
} // namespace mlir

#endif // TCC_DIALECT_TCC_IR_TCCOPS_H
