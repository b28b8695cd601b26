//===- tcc-opt.cpp - runs tcc and upstream passes on .mlir files ----------===//

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "compiler/InitTcc.h"

namespace mlir::tcc {
void registerTestBuildPass();
} // namespace mlir::tcc

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::tcc::registerTccDialect(registry);
  mlir::tcc::registerTccTranslations(registry);
  mlir::tcc::registerTccPassesAndPipelines();
  mlir::tcc::registerTestBuildPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tcc optimizer driver\n", registry));
}
