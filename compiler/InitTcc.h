//===- InitTcc.h - register tcc's dialect, passes and pipelines -*- C++ -*-===//

#ifndef TCC_COMPILER_INITTCC_H
#define TCC_COMPILER_INITTCC_H

#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tcc/IR/TccDialect.h"
#include "dialects/Tcc/Transforms/BufferizableOpInterfaceImpl.h"
#include "dialects/Tcc/Transforms/VjpInterfaceImpl.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

namespace mlir::tcc {
inline void registerTccDialect(DialectRegistry &registry) {
  registry.insert<TccDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerDifferentiableOpInterfaceExternalModels(registry);
}

/// The translations to LLVM IR that passes need in-process (the CUDA
/// pipeline's gpu-module-to-binary translates its kernels).
inline void registerTccTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

/// Makes every tcc pass and pipeline available to textual pipelines
/// (tcc-opt, --pass-pipeline).
inline void registerTccPassesAndPipelines() {
  registerTccConversionPasses();
  registerTccTransformsPasses();
  registerTccPipelines();
}
} // namespace mlir::tcc

#endif // TCC_COMPILER_INITTCC_H
