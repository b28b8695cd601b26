//===- CudaPipeline.cpp - the CUDA compilation pipeline -------------------===//
//
// The graph is bufferized and planned as for the CPU; then contractions go
// to cuBLAS, every other loop nest becomes a kernel (tcc-map-to-gpu), the
// kernels are outlined into one module and compiled to PTX by LLVM's NVPTX
// back end, and the host code that remains (views of the arena, launches,
// cuBLAS calls) is lowered to the LLVM dialect like the CPU's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tcc::buildLinalgToCudaPipeline(OpPassManager &pm,
                                          const CudaPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(tcc::createTccConvolutionsToGemm());
  pm.addNestedPass<func::FuncOp>(tcc::createTccExtractsToOperands());
  buildBufferizationPipeline(pm);
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  pm.addPass(tcc::createTccPlanMemory());
  pm.addPass(tcc::createTccDeviceConstants());
  pm.addNestedPass<func::FuncOp>(tcc::createTccContractionsToCublas());
  pm.addNestedPass<func::FuncOp>(tcc::createTccMapToGpu());
  pm.addPass(createCanonicalizerPass());
  if (options.emulate) {
    OpPassManager &host = pm.nest<func::FuncOp>();
    host.addPass(tcc::createTccGpuLaunchesToLoops());
    host.addPass(createConvertSCFToCFPass());
    host.addPass(createCanonicalizerPass());
    buildHostToLLVMPipeline(pm);
    return;
  }
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(tcc::createTccMergeGpuModules());

  // The kernels: NVVM, then PTX (LLVM's NVPTX back end, libdevice linked
  // in for the math functions).
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  static const std::string emulated[] = {"bf16"};
  arith::ArithEmulateUnsupportedFloatsOptions floats;
  floats.sourceTypeStrs = emulated;
  floats.targetTypeStr = "f32";
  kernels.addPass(math::createMathLegalizeToF32());
  kernels.addPass(arith::createArithEmulateUnsupportedFloats(floats));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What NVVM leaves of math (fma from tcc-approximate-math) becomes LLVM
  // intrinsics the NVPTX back end selects.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(tcc::createTccGpuLaunchesToCalls());

  // The host code.
  OpPassManager &host = pm.nest<func::FuncOp>();
  host.addPass(createConvertSCFToCFPass());
  host.addPass(createCanonicalizerPass());
  buildHostToLLVMPipeline(pm);
}

void mlir::tcc::buildTccCudaPipeline(OpPassManager &pm,
                                     const CudaPipelineOptions &options) {
  buildTccGraphPipeline(pm);
  buildTccToLinalgPipeline(pm, CpuPipelineOptions());
  buildLinalgToCudaPipeline(pm, options);
}
