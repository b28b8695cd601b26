//===- onnx_fuzzer.cpp - libFuzzer target: the ONNX frontend --------------===//
//
// Each input is a model file: a binary ModelProto, or the ONNX text syntax
// when built with TCC_FUZZ_TEXT. It is imported as `tcc` imports it, under
// small size caps so that any allocation past them shows up as libFuzzer's
// out-of-memory. The importer's contract is checked, not just its survival:
// a module that verifies and no error, or no module and exactly one error
// that names the model.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef TCC_FUZZ_TEXT
static const char kSuffix[] = "model.onnxtxt";
#else
static const char kSuffix[] = "model.onnx";
#endif

/// A folder of this process's own, so that parallel fuzzers (-jobs) and
/// external data that names the model's folder stay apart from anything
/// else.
static const std::string &modelPath() {
  static const std::string path = [] {
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("tcc-fuzz-onnx", dir)) {
      std::fprintf(stderr, "cannot create a temporary folder\n");
      std::abort();
    }
    return (dir + "/" + kSuffix).str();
  }();
  return path;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = modelPath();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      std::abort();
    os.write(reinterpret_cast<const char *>(data), size);
  }
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  int errors = 0;
  bool named = true;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      ++errors;
      named &= llvm::StringRef(diag.str()).starts_with(path + ": ");
    }
    return mlir::success();
  });
  mlir::tcc::onnx::ImportOptions options;
  options.maxElements = int64_t(1) << 20;
  options.maxTensorBytes = int64_t(16) << 20;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tcc::onnx::importOnnxFile(ctx, path, options);
  if (module) {
    if (errors || mlir::failed(mlir::verify(*module))) {
      std::fprintf(stderr,
                   "imported a module with %d errors, or one that "
                   "does not verify\n",
                   errors);
      std::abort();
    }
  } else if (errors != 1 || !named) {
    std::fprintf(stderr,
                 "a failed import gave %d errors (%s), not one that "
                 "names the model\n",
                 errors, named ? "named" : "not named");
    std::abort();
  }
  return 0;
}
