//===- Driver.h - the whole compilation as one library call ----*- C++ -*-===//
//
// What `tcc` does, callable from any tool (the CLI, the tracer, Python):
// import a model, run the pipelines, stop at the requested stage and write
// the result atomically (a failed compile never leaves a partial output).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_DRIVER_DRIVER_H
#define TCC_COMPILER_DRIVER_DRIVER_H

#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
class ModuleOp;
namespace tcc {

/// How far to compile and what to write.
enum class EmitKind {
  Import,      ///< tcc dialect as imported, before any pass (.mlir text)
  Tcc,         ///< tcc dialect after graph-level passes (.mlir text)
  Linalg,      ///< linalg on tensors (.mlir text)
  LLVMDialect, ///< LLVM dialect (.mlir text)
  Ptx,         ///< the kernels' PTX (--target=cuda only)
  LLVMIR,      ///< LLVM IR (.ll text)
  Asm,         ///< assembly (.s)
  Object,      ///< object file + C header
  Library,     ///< shared library + C header
  Executable,  ///< standalone program reading and writing tensor files
};

struct CompileOptions {
  std::string inputPath;
  /// "-" writes text stages to stdout. Empty: stdout for text stages,
  /// otherwise the input's stem.
  std::string outputPath;
  /// Empty: chosen from the output's suffix (.so, .o, none = executable).
  std::optional<EmitKind> emit;
  std::string mcpu; ///< "" or "native": the host CPU.
  /// "cpu", or "cuda": kernels for an NVIDIA GPU (PTX for `cudaArch`), host
  /// code for the CPU that launches them. `cudaArch` is one architecture or
  /// a comma-separated list, oldest first and each once (sm_80,sm_90: a
  /// cubin for each, the PTX for the first); "emulate" runs the kernels as
  /// host loops and the runtime emulates the device: the CUDA pipeline
  /// checked on machines without a GPU.
  std::string target = "cpu";
  std::string cudaArch = "sm_90";
  int optLevel = 3;
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Names of the dynamic dimensions of `inputShapes` ("" where unnamed).
  llvm::StringMap<llvm::SmallVector<std::string>> inputDimNames;
  /// Bounds of symbolic dimensions by name (--dim NAME=MIN..MAX).
  llvm::StringMap<std::pair<int64_t, int64_t>> dimBounds;
  /// Caps on any one tensor of an imported model (--max-elements,
  /// --max-tensor-bytes); see onnx::ImportOptions.
  int64_t maxElements = int64_t(1) << 31;
  int64_t maxTensorBytes = int64_t(1) << 32;
  bool printDebugInfo = false;
  /// Symbol prefix of the exported getter; empty: from the output name.
  std::string name;
  /// Micro-kernels for contractions: "auto" (the best the target CPU runs),
  /// "none" (generated loops only), or an ISA level (generic, avx2, avx512).
  std::string ukernels = "auto";
  /// Print how many ops the import made and how many kernels remain after
  /// the graph passes (fusion).
  bool stats = false;
  /// Print how long each pass and each code generation step took (stderr).
  bool timings = false;
  /// Pieces a library or executable is optimized and compiled in at once
  /// (--jobs; 0: the machine's cores, at most 8).
  unsigned jobs = 0;
  /// Bracket every kernel with calls of the host's profiler (--profile).
  bool profile = false;
  /// Print the memory plan: "text" or "json" (empty: don't).
  std::string memoryReport;
  /// tcc's lib/ folder: the runtime's static libraries (for executables)
  /// and the micro-kernels' bitcode.
  std::string libDir;
  /// TorchScript files are imported by the torch frontend, run by this
  /// Python (the environment tcc was built with; $TCC_PYTHON overrides it)
  /// with tcc's Python package (this folder) first on its path.
  std::string python;
  std::string pythonPackageDir;
};

/// Runs the compilation, printing diagnostics to stderr; fails on a user
/// error (the tools make that exit code 1).
LogicalResult compile(MLIRContext &context, const CompileOptions &options);

/// Reads `options.inputPath` (.onnx, .onnxtxt, .pb or .mlir) into a module
/// in the tcc dialect; null after reporting why through the context's
/// diagnostics.
OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                  const CompileOptions &options);

/// Loads every dialect the compilation needs into `context`.
void registerCompilerDialects(MLIRContext &context);

/// Compiles a module in the tcc dialect (with `func.func @main`) that is
/// already in memory, as `compile` does after import; `options.inputPath`
/// only names it in messages and the header. The module is transformed in
/// place. Diagnostics go to the context's handlers.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options);

/// Parses "1x3x224x224" (a lone "" is a scalar); false on a malformed shape.
bool parseShape(llvm::StringRef text, llvm::SmallVectorImpl<int64_t> &shape);
/// As parseShape, where a dimension may also be `?` or a name (letters,
/// digits and `_`, starting with a letter or `_`): a dynamic dimension,
/// kDynamic in `shape` and its name ("" for `?`) in `names`. Dimensions are
/// separated by `x`, or by `,` when the text has one (names with an x:
/// `seq_max,768`).
bool parseShape(llvm::StringRef text, llvm::SmallVectorImpl<int64_t> &shape,
                llvm::SmallVectorImpl<std::string> &names);
/// `NAME=MIN..MAX` (or `NAME=MAX`, MIN 1): a symbolic dimension's bounds.
bool parseDimBounds(llvm::StringRef text, std::string &name, int64_t &min,
                    int64_t &max);

/// Parses a positive count with an optional binary suffix: "1000", "64K",
/// "512M", "4G", "1T"; false when malformed, zero or beyond INT64_MAX.
bool parseSize(llvm::StringRef text, int64_t &size);

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_DRIVER_DRIVER_H
