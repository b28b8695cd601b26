//===- CpuPipeline.cpp - the CPU compilation pipeline ---------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tcc::buildTccGraphPipeline(OpPassManager &pm) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createTccDecompose());
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
  fpm.addPass(createTccMergeSiblingConvs());
  fpm.addPass(createTccFuse());
  fpm.addPass(createTccSchedule());
}

void mlir::tcc::buildTccToLinalgPipeline(OpPassManager &pm,
                                         const CpuPipelineOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Attention as one group where its micro-kernel will take it.
  if (options.ukernels != UkernelIsa::none)
    fpm.addPass(createTccFuseAttention());
  ConvertTccToLinalgOptions lowering;
  lowering.ukernels = options.ukernels;
  fpm.addPass(createConvertTccToLinalg(lowering));
  fpm.addPass(createApproximateMath());
  fpm.addPass(createLinalgElementwiseOpFusionPass());
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
}

void mlir::tcc::buildLinalgToLLVMPipeline(OpPassManager &pm) {
  buildLinalgToLLVMPipeline(pm, /*profileKernels=*/false);
}

void mlir::tcc::buildBufferizationPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(tcc::createTccCopyResults());
  pm.addNestedPass<func::FuncOp>(tcc::createTccSplitEmptyTensors());
  pm.addNestedPass<func::FuncOp>(tcc::createTccConcatInPlace());
  // Bufferize the whole module, with plain (identity-layout) memrefs at the
  // function boundary so the entry point takes dense buffers.
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Results become caller-provided out-parameters; a result computed into a
  // fresh buffer is computed straight into the caller's.
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  outParams.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // A concatenation's inserts computed in place are copies of a slice onto
  // the same slice: CSE makes them one view, and the canonicalizer drops
  // the copy.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tcc::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                          bool profileKernels) {
  buildBufferizationPipeline(pm);
  // Intermediates go to the arena (loop-invariant buffers first leave their
  // loops); whatever the plan cannot place is freed by the deallocation
  // pipeline.
  pm.addNestedPass<func::FuncOp>(tcc::createTccMarkRowTemporaries());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  pm.addPass(tcc::createTccPlanMemory());
  pm.addPass(tcc::createConvertUkernelsToCalls());
  if (profileKernels)
    pm.addPass(tcc::createTccInstrumentKernels());
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());

  // Big ops get a parallel outer loop, run on the caller's thread pool
  // through the OpenMP entry points the kernels' object provides.
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(tcc::createConvertMemRefCopyToLinalg());
  fpm.addPass(tcc::createTccParallelizeLoops());
  fpm.addPass(createConvertLinalgToLoopsPass());
  fpm.addPass(tcc::createTccPromoteAccumulators());
  fpm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToOpenMPPass());
  OpPassManager &lowerLoops = pm.nest<func::FuncOp>();
  lowerLoops.addPass(tcc::createTccInlineAllocaScopes());
  lowerLoops.addPass(createConvertSCFToCFPass());
  lowerLoops.addPass(createCanonicalizerPass());
  buildHostToLLVMPipeline(pm);
}

void mlir::tcc::buildHostToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // f16/bf16 arithmetic and math functions run in f32.
  static const std::string emulated[] = {"f16", "bf16"};
  arith::ArithEmulateUnsupportedFloatsOptions floats;
  floats.sourceTypeStrs = emulated;
  floats.targetTypeStr = "f32";
  pm.addPass(math::createMathLegalizeToF32());
  pm.addPass(arith::createArithEmulateUnsupportedFloats(floats));
  // f32 <-> bf16 conversions as integer arithmetic (round to nearest even):
  // LLVM would call __truncsfbf2, which libgcc 12 lacks, on CPUs without
  // AVX512-BF16.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tcc::buildTccCpuPipeline(OpPassManager &pm,
                                    const CpuPipelineOptions &options) {
  buildTccGraphPipeline(pm);
  buildTccToLinalgPipeline(pm, options);
  buildLinalgToLLVMPipeline(pm);
}

void mlir::tcc::registerTccPipelines() {
  PassPipelineRegistration<>("tcc-graph-pipeline",
                             "tcc graph-level clean-up and decomposition",
                             buildTccGraphPipeline);
  PassPipelineRegistration<CpuPipelineOptions>("tcc-to-linalg-pipeline",
                                               "Lower tcc to linalg on tensors",
                                               buildTccToLinalgPipeline);
  PassPipelineRegistration<>(
      "tcc-linalg-to-llvm-pipeline",
      "Bufferize and lower linalg to the LLVM dialect",
      [](OpPassManager &pm) { buildLinalgToLLVMPipeline(pm); });
  PassPipelineRegistration<CpuPipelineOptions>(
      "tcc-cpu-pipeline", "Compile tcc to the LLVM dialect for the CPU",
      buildTccCpuPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "tcc-linalg-to-cuda-pipeline",
      "Bufferize linalg, make CUDA kernels and lower the host code to LLVM",
      buildLinalgToCudaPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "tcc-cuda-pipeline",
      "Compile tcc to PTX kernels and host code in the LLVM dialect",
      buildTccCudaPipeline);
}
