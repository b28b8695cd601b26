// RUN: tcc-opt %s --tcc-approximate-math | FileCheck %s

// Tests that f32 erf, tanh and exp become arithmetic (no libm call left),
// while other math ops (log, sin) and f64 stay.
// CHECK-LABEL: func @approximate
// CHECK-NOT: math.erf %{{.*}} : f32
// CHECK-NOT: math.tanh %{{.*}} : f32
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: arith.mulf
// CHECK-DAG: math.log %{{.*}} : f32
// CHECK-DAG: math.sin %{{.*}} : f32
// CHECK-DAG: math.erf %{{.*}} : f64
// CHECK-DAG: math.exp %{{.*}} : f64
func.func @approximate(%x: f32, %d: f64) -> (f32, f32, f32, f64, f32, f32, f64) {
  %0 = math.erf %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %x : f32
  %3 = math.erf %d : f64
  %4 = math.log %x : f32
  %5 = math.sin %x : f32
  %6 = math.exp %d : f64
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f64, f32, f32, f64
}

// Tests that vectors of f32 get the same arithmetic.
// CHECK-LABEL: func @approximate_vector
// CHECK-NOT: math.exp
// CHECK: return
func.func @approximate_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  return %0 : vector<16xf32>
}
