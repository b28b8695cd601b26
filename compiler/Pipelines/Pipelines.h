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

/// Registers the pipelines above by name (tcc-graph-pipeline,
/// tcc-to-linalg-pipeline, tcc-linalg-to-llvm-pipeline, tcc-cpu-pipeline).
void registerTccPipelines();

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_PIPELINES_PIPELINES_H
