//===- Pipelines.h - tcc's named pass pipelines -----------------*- C++ -*-===//
//
// The order of the compiler's passes lives here and only here. Stages, each
// a prefix of the next (and a `tcc --emit=` value):
//   tcc          graph-level clean-up and decomposition on the tcc dialect
//   linalg       tcc lowered to linalg/tensor/arith/math on tensors
//   llvm-dialect bufferized, lowered to loops and then to the LLVM dialect
// `tcc-cpu-pipeline` runs all three.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_PIPELINES_PIPELINES_H
#define TCC_COMPILER_PIPELINES_PIPELINES_H

#include "compiler/Conversion/UkernelIsa.h"

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace tcc {

struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<UkernelIsa> ukernels{
      *this, "ukernels",
      llvm::cl::desc("ISA of the micro-kernels contractions call"),
      llvm::cl::init(UkernelIsa::none),
      llvm::cl::values(
          clEnumValN(UkernelIsa::none, "none", "generated loops"),
          clEnumValN(UkernelIsa::generic, "generic", "baseline x86-64"),
          clEnumValN(UkernelIsa::avx2, "avx2", "AVX2 and FMA"),
          clEnumValN(UkernelIsa::avx512, "avx512", "AVX-512"))};
};

/// tcc -> tcc: canonicalization, CSE, decomposition of composite ops,
/// fusion into tcc.fused groups.
void buildTccGraphPipeline(OpPassManager &pm);
/// tcc -> linalg on tensors (and tcc.ukernel calls).
void buildTccToLinalgPipeline(OpPassManager &pm,
                              const CpuPipelineOptions &options);
/// linalg on tensors -> LLVM dialect, for the host CPU. Function arguments
/// become bare pointers: inputs first, then one out-parameter per result,
/// then (when the memory plan needs one) the workspace arena.
void buildLinalgToLLVMPipeline(OpPassManager &pm);
/// The same; with `profileKernels`, every kernel of @main reports its start
/// and end to the host's profiler (tcc-instrument-kernels, tcc --profile).
void buildLinalgToLLVMPipeline(OpPassManager &pm, bool profileKernels);
/// All of the above.
void buildTccCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// The first steps of both targets' buffer pipelines: one-shot
/// bufferization with identity layouts at the function boundary, results
/// as out-parameters.
void buildBufferizationPipeline(OpPassManager &pm);
/// Host code in memref/scf/arith/math form to the LLVM dialect (bare
/// pointers at function boundaries).
void buildHostToLLVMPipeline(OpPassManager &pm);

struct CudaPipelineOptions : PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("CUDA architecture (sm_80, sm_90)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("NVPTX features (PTX version)"),
                               llvm::cl::init("+ptx80")};
  Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Run the kernels as host loops instead of making PTX "
                     "(tcc-gpu-launches-to-loops): the CUDA pipeline checked "
                     "on a machine without a GPU"),
      llvm::cl::init(false)};
};

/// linalg on tensors -> host code in the LLVM dialect that launches kernels
/// (their PTX in the module attribute `tcc.cuda.ptx`) and calls cuBLAS, both
/// through the artifact's CUDA entry points; weights in one device buffer.
void buildLinalgToCudaPipeline(OpPassManager &pm,
                               const CudaPipelineOptions &options);
/// tcc -> that: the graph passes, the lowering to linalg without
/// micro-kernels, and the above.
void buildTccCudaPipeline(OpPassManager &pm,
                          const CudaPipelineOptions &options);

/// Registers the pipelines above by name (tcc-graph-pipeline,
/// tcc-to-linalg-pipeline, tcc-linalg-to-llvm-pipeline, tcc-cpu-pipeline,
/// tcc-linalg-to-cuda-pipeline, tcc-cuda-pipeline).
void registerTccPipelines();

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_PIPELINES_PIPELINES_H
