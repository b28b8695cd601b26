//===- OnnxImporter.h - ONNX models to the tcc dialect ----------*- C++ -*-===//
//
// The public entry point of the ONNX frontend. It stays free of onnx and
// protobuf headers so that tools include it cheaply.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTENDS_ONNX_ONNXIMPORTER_H
#define TCC_FRONTENDS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::tcc::onnx {

/// The default caps of ImportOptions: 2^31 elements and 4 GiB a tensor.
constexpr int64_t kDefaultMaxElements = int64_t(1) << 31;
constexpr int64_t kDefaultMaxTensorBytes = int64_t(1) << 32;

struct ImportOptions {
  /// Shapes that replace the declared shapes of graph inputs, e.g. from
  /// `--input-shape NAME=1x3x224x224`; they fix dynamic dimensions.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Names of the dynamic dimensions of `inputShapes` ("" where unnamed).
  llvm::StringMap<llvm::SmallVector<std::string>> inputDimNames;
  /// Run the onnx library's checker on each node (default-domain opsets up
  /// to 17 only: the linked libonnx does not know newer ones).
  bool runChecker = true;
  /// Caps on any one tensor of the model (graph inputs, initializers, every
  /// result the import computes): elements, and bytes. They bound what a
  /// hostile model can make the compiler allocate; a tensor beyond them is
  /// refused with a diagnostic naming it and the flag that raises the cap
  /// (`--max-elements`, `--max-tensor-bytes`).
  int64_t maxElements = kDefaultMaxElements;
  int64_t maxTensorBytes = kDefaultMaxTensorBytes;
  /// Bounds of sizes (`--dim NAME=MIN..MAX`): of dynamic input dimensions,
  /// and of sizes the run computes from data, named after the output they
  /// size (`Range` to a limit known only at run time).
  llvm::StringMap<std::pair<int64_t, int64_t>> dimBounds;
};

/// Reads a binary .onnx ModelProto, or the ONNX textual syntax when the file
/// name ends in .onnxtxt, into a module holding `func.func @main`: one
/// argument per graph input that is not an initializer, one result per graph
/// output, each with a `tcc.name` attribute. Loads the dialects it uses.
/// Returns null after emitting exactly one error diagnostic of the form
/// "<path>: [node '<name>' (<OpType>, opset <N>): ]<what is wrong>".
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &ctx, llvm::StringRef path,
                                     const ImportOptions &opts);

/// The ONNX ops the importer handles: each default-domain op type with the
/// opsets at which its versions start, sorted by op type (for generated
/// documentation).
std::vector<std::pair<std::string, std::vector<int64_t>>> supportedOps();

} // namespace mlir::tcc::onnx

#endif // TCC_FRONTENDS_ONNX_ONNXIMPORTER_H
