//===- TccDialect.h - the tcc dialect ---------------------------*- C++ -*-===//
//
// Declares the dialect, its enums and attributes. Include TccOps.h for ops.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TCC_IR_TCCDIALECT_H
#define TCC_DIALECT_TCC_IR_TCCDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Tcc/IR/TccDialect.h.inc"
#include "dialects/Tcc/IR/TccEnums.h.inc"

#endif // TCC_DIALECT_TCC_IR_TCCDIALECT_H
