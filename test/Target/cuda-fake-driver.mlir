// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/linear.mlir --target=cuda -o %t/linear.so
// RUN: %python %S/Inputs/make_linear_data.py %t
// RUN: env TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log tcc-run %t/linear.so --inputs %t --bench 2 --warmup 0
// RUN: FileCheck %s < %t/log

// Tests what the runtime asks of the CUDA driver and cuBLAS to run a CUDA
// artifact (y = relu(x @ w + b), x 4x16, w 16x8), through a test double of
// both on host memory that logs each call: the PTX loaded once, the
// buffers allocated once (weights, workspace, inputs, output), the weights
// uploaded, then per run the inputs copied in, cuBLAS's GEMM
// (y^T = w^T x^T: 8x4, k 16) into the workspace, the bias-and-ReLU kernel
// on 32 threads reading the workspace and the weights and writing the
// output, the output copied back, the stream synchronized; everything
// freed at the end.
// CHECK: cuInit
// CHECK: load module: .target sm_90
// CHECK: cublasCreate
// CHECK: alloc buffer 0: 256 bytes
// CHECK: alloc buffer 1: 128 bytes
// CHECK: alloc buffer 2: 256 bytes
// CHECK: alloc buffer 3: 512 bytes
// CHECK: alloc buffer 4: 128 bytes
// CHECK: copy to device: 32 bytes to buffer 0 + 0
// CHECK: synchronize
// CHECK-COUNT-2: copy to device: {{256 bytes to buffer 2 \+ 0|512 bytes to buffer 3 \+ 0}}
// CHECK: sgemm NN m 8 n 4 k 16 alpha 1 beta 0 lda 8 ldb 16 ldc 8 strides 0 0 0 batch 1: A [buffer 3 + 0] B [buffer 2 + 0] C [buffer 1 + 0]
// CHECK: launch main_kernel grid 1,1,1 block 32,1,1:{{.*}} [buffer 1 + 0]{{.*}} [buffer 0 + 0]{{.*}} [buffer 4 + 0]
// CHECK: copy to host: 128 bytes from buffer 4 + 0
// CHECK: synchronize
// CHECK: launch main_kernel
// CHECK: copy to host: 128 bytes from buffer 4 + 0
// CHECK: synchronize
// CHECK-NOT: out of bounds
// CHECK-NOT: error
// CHECK-DAG: free buffer 0
// CHECK-DAG: free buffer 1
// CHECK-DAG: free buffer 2
// CHECK-DAG: free buffer 3
// CHECK-DAG: free buffer 4
// CHECK-DAG: cublasDestroy
// CHECK-DAG: unload module
// CHECK: release context
