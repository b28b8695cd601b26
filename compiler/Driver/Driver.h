//===- Driver.h - the whole compilation as one library call ----*- C++ -*-===//
//
// What `tcc` does, callable from any tool (the CLI, the tracer, Python):
// import a model, run the pipelines, stop at the requested stage and write
// the result atomically (a failed compile never leaves a partial output).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_DRIVER_DRIVER_H
#define TCC_COMPILER_DRIVER_DRIVER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
namespace tcc {

/// How far to compile and what to write.
enum class EmitKind {
  Import,      ///< tcc dialect as imported, before any pass (.mlir text)
  Tcc,         ///< tcc dialect after graph-level passes (.mlir text)
  Linalg,      ///< linalg on tensors (.mlir text)
  LLVMDialect, ///< LLVM dialect (.mlir text)
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
  int optLevel = 3;
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  bool printDebugInfo = false;
  /// Symbol prefix of the exported getter; empty: from the output name.
  std::string name;
  /// Print the memory plan: "text" or "json" (empty: don't).
  std::string memoryReport;
  /// Where libtccrt's static libraries are (for executables).
  std::string runtimeLibDir;
};

/// Runs the compilation, printing diagnostics to stderr. Returns the process
/// exit code: 0 on success, 1 on a user error.
int compile(MLIRContext &context, const CompileOptions &options);

/// Parses "1x3x224x224" (a lone "" is a scalar); false on a malformed shape.
bool parseShape(llvm::StringRef text, llvm::SmallVectorImpl<int64_t> &shape);

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_DRIVER_DRIVER_H
