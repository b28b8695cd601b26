//===- onnx_op_table.cpp - print the ONNX importer's op table -------------===//
//
// One line per ONNX op the importer handles: the op type, then the opsets at
// which its versions start. test/onnx/onnx_backend.py reads it to write
// docs/onnx-ops.md.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/OnnxImporter.h"

#include <cstdio>

int main() {
  for (const auto &[op, since] : mlir::tcc::onnx::supportedOps()) {
    std::printf("%s", op.c_str());
    for (int64_t s : since)
      std::printf(" %lld", static_cast<long long>(s));
    std::printf("\n");
  }
  return 0;
}
