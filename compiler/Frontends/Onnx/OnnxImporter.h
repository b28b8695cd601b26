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

namespace mlir::tcc::onnx {

struct ImportOptions {
  /// Shapes that replace the declared shapes of graph inputs, e.g. from
  /// `--input-shape NAME=1x3x224x224`; they fix dynamic dimensions.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Run the onnx library's checker on each node (default-domain opsets up
  /// to 17 only: the linked libonnx does not know newer ones).
  bool runChecker = true;
};

/// Reads a binary .onnx ModelProto, or the ONNX textual syntax when the file
/// name ends in .onnxtxt, into a module holding `func.func @main`: one
/// argument per graph input that is not an initializer, one result per graph
/// output, each with a `tcc.name` attribute. Loads the dialects it uses.
/// Returns null after emitting exactly one error diagnostic of the form
/// "<path>: [node '<name>' (<OpType>, opset <N>): ]<what is wrong>".
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &ctx, llvm::StringRef path,
                                     const ImportOptions &opts);

} // namespace mlir::tcc::onnx

#endif // TCC_FRONTENDS_ONNX_ONNXIMPORTER_H
