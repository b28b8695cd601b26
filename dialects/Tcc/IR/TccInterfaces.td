//===- TccInterfaces.td - interfaces of tcc ops -------------*- tablegen -*-===//
//
// Behaviour shared across ops is declared here once, so passes ask an op what
// it can do instead of switching over op names.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_INTERFACES_TD
#define TCC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tcc_DifferentiableOpInterface
    : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    An op that states its vector-Jacobian product (VJP). Given the cotangent
    of each result (the gradient of a scalar loss with respect to that
    result; a null Value where a result does not reach the loss), an op
    builds, at the builder's insertion point, the cotangent of each of its
    operands (a null Value where an operand is not differentiable, e.g. an
    integer index). The autodiff pass and the tracer's `backward()` both use
    this one rule per op.
  }];
  let cppNamespace = "::mlir::tcc";
  let methods = [
    InterfaceMethod<[{
        Builds the operand cotangents from the result cotangents.
        `operandCotangents` gets exactly one entry per operand. Fails, with a
        diagnostic on the op, when the VJP is not defined at this point
        (e.g. an argmax index).
      }],
      "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultCotangents,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>,
    InterfaceMethod<[{
        Whether the gradient may flow through operand `index` (false for
        integer indices, shapes and predicates).
      }],
      "bool", "isDifferentiableOperand", (ins "unsigned":$index),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        auto type = ::llvm::dyn_cast<::mlir::ShapedType>(
            $_op->getOperand(index).getType());
        return type && ::llvm::isa<::mlir::FloatType>(type.getElementType());
      }]>,
  ];
}

#endif // TCC_INTERFACES_TD
