//===- Artifact.h - what a compiled model exposes (runtime/include/tcc/abi.h)
//===----------------------------------------------------------------------===//
//
// An artifact carries its own description (input/output names, dtypes and
// shapes, workspace size, target, tcc version) as constant data next to the
// code, behind one exported function, so nothing else is needed to run it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TARGET_ARTIFACT_H
#define TCC_COMPILER_TARGET_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::tcc {

struct TensorInfo {
  std::string name;
  int32_t dtype = 0;          ///< tcc_dtype_t (ONNX TensorProto numbering).
  SmallVector<int64_t> shape; ///< -1 where a symbol sizes the dimension.
  /// Empty when every dimension is fixed; else, per dimension, the index of
  /// its symbol in ArtifactInfo::symbols or -1.
  SmallVector<int32_t> symbols;
  int64_t elementBytes = 4;
};

/// A symbolic dimension: its name and the sizes a run accepts.
struct SymbolInfo {
  std::string name;
  int64_t min = 1, max = 1;
  /// A size the graph computes (its padded bucket returns it last), which
  /// the run reports; else one the inputs' shapes give.
  bool computed = false;
};

struct ArtifactInfo {
  std::string modelName;
  std::string symbolPrefix; ///< Exports <prefix>_artifact_get.
  std::string target;
  std::vector<TensorInfo> inputs, outputs;
  uint64_t workspaceBytes = 0;
  uint64_t workspaceAlign = 64;
  /// A dynamic batch (tcc-specialize-batch): its one symbol, and the graph
  /// compiled at each slab size, largest first (@main_chunk<size>).
  std::vector<SymbolInfo> symbols;
  SmallVector<int64_t> chunks;
  /// A padded dynamic dimension (tcc-pad-dynamic-dims): the graph compiled
  /// at each bucket size, largest first (@main_pad<size>, which takes the
  /// run's size as one more input). The workspace holds the arena
  /// (`arenaBytes`) and after it the padded copies of the tensors that the
  /// symbol sizes (`stagingBytes(bucket)`).
  SmallVector<int64_t> buckets;
  uint64_t arenaBytes = 0;
  /// Bytes of `t` with its symbols at `symbolSizes` (one per symbol).
  static uint64_t bytesAt(const TensorInfo &t, ArrayRef<int64_t> symbolSizes);
  /// Whether the padded symbol (the last) sizes a dimension of `t`.
  bool isPadded(const TensorInfo &t) const;
  /// Where each padded tensor's copy lies after the arena (inputs, then
  /// outputs; 0 for the others), and the bytes they take, at `bucket` (and
  /// the largest slab of a batch beside it).
  uint64_t stagingBytes(int64_t bucket,
                        SmallVectorImpl<uint64_t> *offsets = nullptr) const;
  /// Sets the workspace from the memory plan's arena (and the staging).
  void setArena(uint64_t bytes);
  /// A CUDA artifact (tcc --target=cuda): its PTX, the architecture, the
  /// kernels' names in launch-index order and the device weight buffer's
  /// size. Empty `cudaArch` for a CPU artifact.
  std::string cudaArch;
  std::string cudaPtx;
  /// ptxas's cubin for cudaArch, a fat binary for a list (empty: none)
  std::string cudaCubin;
  std::vector<std::string> cudaKernels;
  uint64_t cudaWeightsBytes = 0;
};

/// The tcc_dtype_t of an element type, or 0 if it has none.
int32_t dtypeOf(Type elementType);
/// "float32", "int64", ... for headers and messages.
StringRef dtypeName(int32_t dtype);

/// Reads the interface of `@main` (names from `tcc.name` argument/result
/// attributes, the model name from `tcc.model_name`), or of the slabs of a
/// dynamic batch (`tcc.batch`, see tcc-specialize-batch). Fails with a
/// diagnostic for a type the ABI cannot describe.
FailureOr<ArtifactInfo> describeArtifact(ModuleOp module);

/// Adds the descriptor, the `run` entry point that calls `graphFunction`
/// (inputs, then outputs, then the workspace if it has one, as bare
/// pointers; for a dynamic batch, `<graphFunction>_chunk<size>` once per
/// slab, on the slab's rows) and the exported getter(s) to a
/// translated module. Everything else in the module becomes internal, so
/// several artifacts can be linked into one program. With
/// `exportGenericGetter` the module also exports `tcc_artifact_get`.
/// For a CUDA artifact the graph also takes the device weight buffer (last)
/// and the module defines the CUDA entry points its host code calls
/// (tcc_cuda_launch, tcc_cuda_gemm, tcc_cuda_h2d) over the caller's
/// tcc_cuda_api_t.
LogicalResult addArtifactEntry(llvm::Module &module, const ArtifactInfo &info,
                               StringRef graphFunction,
                               bool exportGenericGetter, std::string &error);

/// A self-contained C header for an artifact linked as a library or object.
std::string artifactHeader(const ArtifactInfo &info, StringRef source);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TARGET_ARTIFACT_H
