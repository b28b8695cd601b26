//===- TccDialect.cpp - the tcc dialect -----------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

#include "dialects/Tcc/IR/TccDialect.cpp.inc"
#include "dialects/Tcc/IR/TccEnums.cpp.inc"

void TccDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Tcc/IR/TccOps.cpp.inc"
      >();
}

Operation *TccDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}
