// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %s -o %t/chain.so --ukernels=none --memory-report | FileCheck %s
// RUN: tcc %s -o %t/chain.so --ukernels=none --memory-report=json | FileCheck %s --check-prefix=JSON
// RUN: not tcc %s -o %t/chain.so --memory-report=xml 2>&1 | FileCheck %s --check-prefix=BAD

// Tests the memory report: one line per buffer with its size, live range,
// offset, type and the model node that first writes it (from the op's
// location), then the totals; the arena reaches the peak-live bound. The
// JSON form escapes what the names hold.
// CHECK: memory plan of 'chain': 2 buffers in one arena
// CHECK: buffer {{ *}}bytes {{ *}}live {{ *}}offset  type {{ *}}written first by
// CHECK: 0 {{ *}}16384 {{ *}}{{[0-9]+}}..{{[0-9]+}} {{ *}}{{[0-9]+}}  memref<64x64xf32> {{ *}}first "mm" (MatMul)
// CHECK: 1 {{ *}}16384 {{ *}}{{[0-9]+}}..{{[0-9]+}} {{ *}}{{[0-9]+}}  memref<64x64xf32> {{ *}}second (MatMul)
// CHECK: arena_bytes: {{ *}}32768
// CHECK: peak_live_bytes: {{ *}}32768
// CHECK: naive_bytes: {{ *}}32768
// JSON: {"model":"chain","arena_bytes":32768,"naive_bytes":32768,"peak_live_bytes":32768,"buffers":[{"bytes":16384,"first":{{[0-9]+}},"last":{{[0-9]+}},"offset":{{[0-9]+}},"type":"memref<64x64xf32>","writer":"first \"mm\" (MatMul)"},{"bytes":16384,
// JSON-SAME: "writer":"second (MatMul)"}]}
// BAD: --memory-report takes text or json, not 'xml'
module attributes {tcc.model_name = "chain"} {
  func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = tcc.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("first \"mm\" (MatMul)")
    %1 = tcc.matmul %0, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("second (MatMul)")
    %2 = tcc.matmul %1, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("third (MatMul)")
    return %2 : tensor<64x64xf32>
  }
}
