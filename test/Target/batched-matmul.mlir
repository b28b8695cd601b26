// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_batched_data.py %t
// RUN: tcc %S/Inputs/batched.mlir --emit=linalg --mcpu=x86-64-v4 -o - | FileCheck %s --check-prefix=KERNEL
// RUN: tcc %S/Inputs/batched.mlir -o %t/batched.so
// RUN: tcc-run %t/batched.so --inputs %t --check --rtol 1e-5 --atol 1e-5 --threads 1 | FileCheck %s
// RUN: tcc-run %t/batched.so --inputs %t --check --rtol 1e-5 --atol 1e-5 --threads 2 | FileCheck %s
// RUN: tcc-run %t/batched.so --inputs %t --check --rtol 1e-5 --atol 1e-5 --threads 4 | FileCheck %s
// RUN: tcc-run %t/batched.so --inputs %t --check --rtol 1e-5 --atol 1e-5 --threads 7 | FileCheck %s

// Tests that a batch of products that pack B (the AVX-512 kernel, whatever
// the host) may run one product a thread:
// the compiler gives each product scratch of its own (six slots of the
// one-product size, 64-byte aligned) and says so to the kernel.
// KERNEL: tcc.ukernel "sgemm"
// KERNEL-SAME: outs(%{{.*}}, %{{.*}} : tensor<6x32x24xf32>, tensor<[[BYTES:[0-9]+]]xi8>)
// KERNEL-SAME: batch = 6 : i64, batch_parallel = 1 : i64
// KERNEL-SAME: scratch_stride = {{[0-9]+}} : i64

// Tests that the results match numpy with one thread, with products spread
// over threads (2: three each; 4: uneven, 6 >= 4), and with more threads
// than products (7: each product split inside instead). The tolerance
// covers the kernels' reassociated sums.
// CHECK: output 0 'y' f32[6x32x24]: PASS
