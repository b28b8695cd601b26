// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %s -o %t/chain.so --ukernels=none --memory-report | FileCheck %s
// RUN: tcc %s -o %t/chain.so --ukernels=none --memory-report=json | FileCheck %s --check-prefix=JSON
// RUN: not tcc %s -o %t/chain.so --memory-report=xml 2>&1 | FileCheck %s --check-prefix=BAD

// Tests the memory report: one line per buffer with its size, live range
// and offset, then the totals; the arena reaches the peak-live bound.
// CHECK: memory plan of 'chain': 2 buffers in one arena
// CHECK: arena_bytes: {{ *}}32768
// CHECK: peak_live_bytes: {{ *}}32768
// CHECK: naive_bytes: {{ *}}32768
// JSON: {"model": "chain", "arena_bytes": 32768, "naive_bytes": 32768, "peak_live_bytes": 32768, "buffers": [{"bytes": 16384, "first": {{[0-9]+}}, "last": {{[0-9]+}}, "offset": {{[0-9]+}}, "type": "memref<64x64xf32>"}, {"bytes": 16384,
// BAD: --memory-report takes text or json, not 'xml'
module attributes {tcc.model_name = "chain"} {
  func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = tcc.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %1 = tcc.matmul %0, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %2 = tcc.matmul %1, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %2 : tensor<64x64xf32>
  }
}
