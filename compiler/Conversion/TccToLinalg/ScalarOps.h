//===- ScalarOps.h - scalar bodies of tcc elementwise ops -------*- C++ -*-===//

#ifndef TCC_COMPILER_CONVERSION_TCCTOLINALG_SCALAROPS_H
#define TCC_COMPILER_CONVERSION_TCCTOLINALG_SCALAROPS_H

#include "mlir/IR/Builders.h"

namespace mlir::tcc {

/// Emits the scalar computation of one element of a tcc op that has the
/// BroadcastingElementwise trait, given one scalar per operand. The op's
/// tensor types say which element types are involved. Used for one op per
/// kernel and for the bodies of fused groups alike.
FailureOr<Value> emitScalarElementwise(OpBuilder &b, Location loc,
                                       Operation *op, ValueRange args);

/// Converts a scalar between element types with tcc.cast's semantics.
/// `from` and `to` are the tcc element types (they say whether an integer is
/// unsigned); `value` and the result are signless.
Value emitScalarCast(OpBuilder &b, Location loc, Value value, Type from,
                     Type to);

} // namespace mlir::tcc

#endif // TCC_COMPILER_CONVERSION_TCCTOLINALG_SCALAROPS_H
