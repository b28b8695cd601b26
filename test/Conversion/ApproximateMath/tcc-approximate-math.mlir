// RUN: tcc-opt %s --tcc-approximate-math | FileCheck %s

// Tests that f32 erf and tanh become arithmetic (no libm call left), while
// other math ops and f64 stay.
// CHECK-LABEL: func @approximate
// CHECK-NOT: math.erf %{{.*}} : f32
// CHECK-NOT: math.tanh %{{.*}} : f32
// CHECK: arith.mulf
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.erf %{{.*}} : f64
func.func @approximate(%x: f32, %d: f64) -> (f32, f32, f32, f64) {
  %0 = math.erf %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %x : f32
  %3 = math.erf %d : f64
  return %0, %1, %2, %3 : f32, f32, f32, f64
}
