// RUN: tcc-opt %s --convert-tcc-to-linalg --split-input-file | FileCheck %s

// Tests that cumsum is one generic with an extra reduction loop over the
// axis that adds the elements before each position (exclusive: strictly).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @cumsum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
// CHECK:   arith.addf
func.func @cumsum(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = tcc.cumsum %x axis = 1 exclusive : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that cumprod in reverse multiplies the elements from each position
// to the end.
// CHECK-LABEL: func @cumprod_reverse
// CHECK: arith.cmpi sge
// CHECK: arith.muli
func.func @cumprod_reverse(%x: tensor<5xi32>) -> tensor<5xi32> {
  %0 = tcc.cumprod %x axis = 0 reverse : tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

// Tests that top-k ranks each element (comparing unsigned integers as
// unsigned), then picks the element of each rank below k.
// CHECK-LABEL: func @topk
// CHECK: linalg.generic
// CHECK:   arith.cmpi ugt
// CHECK:   arith.extui
// CHECK: } -> tensor<2x5xi64>
// CHECK: linalg.generic
// CHECK:   arith.cmpi eq
// CHECK:   arith.select
// CHECK: } -> (tensor<2x2xi8>, tensor<2x2xi64>)
func.func @topk(%x: tensor<2x5xui8>) -> (tensor<2x2xui8>, tensor<2x2xi64>) {
  %0:2 = tcc.topk %x axis = 1 largest : tensor<2x5xui8> -> tensor<2x2xui8>, tensor<2x2xi64>
  return %0#0, %0#1 : tensor<2x2xui8>, tensor<2x2xi64>
}
