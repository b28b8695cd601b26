//===- VjpRules.h - attaching VJP rules to tcc ops --------------*- C++ -*-===//
//
// Each differentiable tcc op gets its DifferentiableOpInterface as an
// external model whose buildVjp calls one rule function:
//
//   LogicalResult rule(XOp op, VjpBuilder &b, ValueRange resultCotangents,
//                      MutableArrayRef<Value> operandCotangents);
//
// The model fills every operand cotangent with a null Value first, so a rule
// only sets the operands it differentiates, and it is only called when at
// least one result has a cotangent. Rules return cotangents with exactly the
// operand's type (broadcasting is summed away by the rule).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_TRANSFORMS_VJPRULES_H
#define TCC_DIALECT_TCC_TRANSFORMS_VJPRULES_H

#include "dialects/Tcc/Transforms/VjpBuilder.h"

#include "mlir/IR/MLIRContext.h"

namespace mlir::tcc {

template <typename OpT, auto Rule>
struct VjpModel
    : DifferentiableOpInterface::ExternalModel<VjpModel<OpT, Rule>, OpT> {
  LogicalResult buildVjp(Operation *op, OpBuilder &builder,
                         ValueRange resultCotangents,
                         SmallVectorImpl<Value> &operandCotangents) const {
    operandCotangents.assign(op->getNumOperands(), Value());
    if (llvm::all_of(resultCotangents, [](Value v) { return !v; }))
      return success();
    VjpBuilder b(builder, op->getLoc());
    return Rule(cast<OpT>(op), b, resultCotangents,
                MutableArrayRef<Value>(operandCotangents));
  }
};

template <typename OpT, auto Rule> void attachVjp(MLIRContext &ctx) {
  OpT::template attachInterface<VjpModel<OpT, Rule>>(ctx);
}

/// Rules by op family, one file each.
void attachElementwiseVjps(MLIRContext &ctx);
void attachReductionVjps(MLIRContext &ctx);
void attachContractionVjps(MLIRContext &ctx);
void attachShapeVjps(MLIRContext &ctx);

} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_TRANSFORMS_VJPRULES_H
