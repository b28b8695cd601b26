//===- TccTraits.h - traits of tcc ops --------------------------*- C++ -*-===//

#ifndef TCC_DIALECT_TCC_IR_TCCTRAITS_H
#define TCC_DIALECT_TCC_IR_TCCTRAITS_H

#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir::tcc {
/// Result type of an elementwise op: its operands' shapes broadcast
/// numpy-style, of `elementType` (the first operand's when null). Reports at
/// `location`, when given, as the op's verifier would.
LogicalResult inferBroadcastType(std::optional<Location> location,
                                 StringRef opName, ValueRange operands,
                                 Type elementType,
                                 SmallVectorImpl<Type> &types);

/// Checks that every tensor operand broadcasts (numpy-style) to the shape of
/// every result.
LogicalResult verifyBroadcastingElementwise(Operation *op);

namespace OpTrait {
/// An op computed element by element over operands broadcast to its result
/// shape. Fusion and the lowering use this trait instead of op names.
template <typename ConcreteType>
class BroadcastingElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, BroadcastingElementwise> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBroadcastingElementwise(op);
  }
};
} // namespace OpTrait
} // namespace mlir::tcc

#endif // TCC_DIALECT_TCC_IR_TCCTRAITS_H
