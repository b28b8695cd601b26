// RUN: tcc-opt %s --tcc-merge-gpu-modules | FileCheck %s

// Tests that the kernels of two outlined modules (each named as its
// module's kernel) move into one module, @tcc_kernels, named after their
// old modules, and that the launches follow.
// CHECK: gpu.module @tcc_kernels
// CHECK-NEXT: gpu.func @main_kernel(
// CHECK: gpu.func @main_kernel_0(
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func @tcc_kernels::@main_kernel blocks
// CHECK: gpu.launch_func @tcc_kernels::@main_kernel_0 blocks
module attributes {gpu.container_module} {
  gpu.module @main_kernel {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}
