// RUN: tcc-opt %s --tcc-extracts-to-operands | FileCheck %s

// Tests that an element extracted at constant indices and used in a
// generic's body becomes an input of the generic indexed at those
// indices, so that the kernel reads it.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0) -> (1, 2)>
// CHECK-LABEL: func.func @captured
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[AT]], #[[ID]]]
// CHECK-SAME: ins(%arg0, %arg1, %arg2 : tensor<8xf32>, tensor<f32>, tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %[[T:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.divf %[[X]], %[[S]]
// CHECK: arith.addf %{{.*}}, %[[T]]
func.func @captured(%x: tensor<8xf32>, %max: tensor<f32>, %m: tensor<2x3xf32>) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = tensor.extract %max[] : tensor<f32>
  %t = tensor.extract %m[%c1, %c2] : tensor<2x3xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    %y = arith.addf %d, %t : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
