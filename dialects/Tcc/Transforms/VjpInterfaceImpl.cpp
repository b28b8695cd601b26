//===- VjpInterfaceImpl.cpp - the VJP rules of tcc ops --------------------===//

#include "dialects/Tcc/Transforms/VjpInterfaceImpl.h"

#include "dialects/Tcc/Transforms/VjpRules.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void mlir::tcc::registerDifferentiableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TccDialect *) {
    attachElementwiseVjps(*ctx);
    attachReductionVjps(*ctx);
    attachContractionVjps(*ctx);
    attachShapeVjps(*ctx);
  });
}
