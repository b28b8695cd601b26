// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/linear.mlir --target=cuda -o %t/linear.so
// RUN: %python %S/Inputs/make_linear_data.py %t
// RUN: env TCC_FAKE_CUDA_REFUSE_CUBIN=1 TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log tcc-run %t/linear.so --inputs %t --bench 2 --warmup 0
// RUN: FileCheck %s < %t/log
// RUN: FileCheck %t/sgemm.check < %t/log
// RUN: env TCC_CUDA_GRAPHS=0 TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-direct tcc-run %t/linear.so --inputs %t --bench 2 --warmup 0
// RUN: FileCheck %s --check-prefix=DIRECT < %t/log-direct
// RUN: env TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-cubin tcc-run %t/linear.so --inputs %t
// RUN: FileCheck %s --check-prefix=CUBIN < %t/log-cubin
// RUN: cc -std=c11 -I%tcc_src/runtime/include %S/Inputs/run_on_device.c -L%tcc_lib -ltccrt -Wl,-rpath,%tcc_lib -o %t/run_on_device
// RUN: env TCC_FAKE_CUDA_REFUSE_CUBIN=1 TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-device %t/run_on_device %t/linear.so | FileCheck %s --check-prefix=DEVICE
// RUN: FileCheck %s --check-prefix=DEVICE-LOG < %t/log-device
// RUN: not tcc-run %t/linear.so --inputs %t 2>&1 | FileCheck %s --check-prefix=NOGPU
// RUN: tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_90,sm_80 -o %t/fat.so
// RUN: env TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-fat90 tcc-run %t/fat.so --inputs %t
// RUN: FileCheck %s --check-prefix=FAT90 < %t/log-fat90
// RUN: env TCC_FAKE_CUDA_ARCH=80 TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-fat80 tcc-run %t/fat.so --inputs %t
// RUN: FileCheck %s --check-prefix=FAT80 < %t/log-fat80
// RUN: env TCC_FAKE_CUDA_ARCH=86 TCC_CUDA_DRIVER=%fake_cuda TCC_CUBLAS=%fake_cuda TCC_FAKE_CUDA_LOG=%t/log-fat86 tcc-run %t/fat.so --inputs %t
// RUN: FileCheck %s --check-prefix=FAT86 < %t/log-fat86
// RUN: not grep -e error -e "out of bounds" %t/log %t/log-direct %t/log-cubin %t/log-device %t/log-fat90 %t/log-fat80 %t/log-fat86

// Tests what the runtime asks of the CUDA driver and cuBLAS to run a CUDA
// artifact (y = relu(x @ w + b), x 4x16, w 16x8), through a test double of
// both on host memory that logs each call: the PTX loaded once; the device
// buffers, once, from the process's CUDA caching allocator (one 2 MiB
// segment of its small pool, blocks rounded to 512 bytes: the weights at
// 0, the workspace at 512, x at 1024, w at 1536, y at 2048); the weights
// uploaded; page-locked staging for the inputs and the output, once (x at
// 0, w at 256, y at 768: 256-byte steps); then per run the inputs copied
// in from the staging, cuBLAS's GEMM (y^T = w^T x^T: 8x4, k 16) into the
// workspace, the bias-and-ReLU kernel on 32 threads reading the workspace
// and the weights and writing the output, the output copied back into the
// staging, the stream synchronized; at the end the staging freed, the
// blocks back in the allocator's cache (nothing freed: it lives as long as
// the process) and the module and handle released.
// (The driver refuses the cubin here, as one for another GPU: the runtime
// loads the PTX.)
// CHECK: cuInit
// CHECK: load module: cubin refused
// CHECK-NEXT: load module: .target sm_90
// CHECK: cublasCreate
// CHECK: alloc buffer 0: 2097152 bytes
// CHECK-NOT: alloc buffer
// CHECK: copy to device: 32 bytes to buffer 0 + 0 from pageable
// CHECK: synchronize
// CHECK-NEXT: alloc pinned 0: 1024 bytes
// CHECK-NEXT: copy to device: 256 bytes to buffer 0 + 1024 from pinned 0 + 0
// CHECK-NEXT: copy to device: 512 bytes to buffer 0 + 1536 from pinned 0 + 256
// CHECK-NEXT: sgemm NN m 8 n 4 k 16 alpha 1 beta 0 lda 8 ldb 16 ldc 8 strides 0 0 0 batch 1: A [buffer 0 + 1536] B [buffer 0 + 1024] C [buffer 0 + 512]
// CHECK: launch main_kernel grid 1,1,1 block 32,1,1:{{.*}} [buffer 0 + 512]{{.*}} [buffer 0 + 0]{{.*}} [buffer 0 + 2048]
// CHECK-NEXT: copy to host: 128 bytes from buffer 0 + 2048 to pinned 0 + 768
// CHECK-NEXT: synchronize

// Tests that the second run, the staging's copies with it, is captured
// into a CUDA graph (the first warms cuBLAS up), which that run and the
// next launch whole: the host copies the inputs into the staging before
// and the output out of it after.
// CHECK-NEXT: begin capture
// CHECK-NEXT: captured copy to device: 256 bytes to buffer 0 + 1024 from pinned 0 + 0
// CHECK-NEXT: captured copy to device: 512 bytes to buffer 0 + 1536 from pinned 0 + 256
// CHECK-NEXT: captured sgemm NN m 8 n 4 k 16
// CHECK-NEXT: captured launch main_kernel grid 1,1,1 block 32,1,1
// CHECK-NEXT: captured copy to host: 128 bytes from buffer 0 + 2048 to pinned 0 + 768
// CHECK-NEXT: end capture: 5 operations
// CHECK-NEXT: instantiate graph
// CHECK-NEXT: graph launch: 5 operations
// CHECK-NEXT: replayed copy to device: 256 bytes
// CHECK-NEXT: replayed copy to device: 512 bytes
// CHECK-NEXT: replayed sgemm NN m 8 n 4 k 16
// CHECK: replayed launch main_kernel
// CHECK-NEXT: replayed copy to host: 128 bytes
// CHECK-NEXT: synchronize
// CHECK-NEXT: graph launch: 5 operations
// CHECK: replayed copy to host: 128 bytes
// CHECK-NEXT: synchronize
// CHECK-NOT: copy to
// CHECK-NOT: out of bounds
// CHECK-NOT: error
// CHECK-NOT: free buffer
// CHECK: destroy graph
// CHECK-NEXT: free pinned 0
// CHECK-NEXT: cublasDestroy
// CHECK: unload module
// CHECK: release context

// Tests that the inputs' values reach the device through the staging on
// every run: cuBLAS's product of them (x @ w, its first and last
// elements) on the first, direct run and on both replays of the graph
// (Inputs/make_linear_data.py writes the check lines from the data).

// Tests that TCC_CUDA_GRAPHS=0 launches the work of every run (one, then
// two timed) directly, the staging's copies with it.
// DIRECT-NOT: capture
// DIRECT: copy to device: 512 bytes to buffer 0 + 1536 from pinned 0 + 256
// DIRECT-NOT: capture
// DIRECT: launch main_kernel
// DIRECT-NEXT: copy to host: 128 bytes from buffer 0 + 2048 to pinned 0 + 768
// DIRECT: copy to device: 512 bytes to buffer 0 + 1536 from pinned 0 + 256
// DIRECT-NOT: capture
// DIRECT: launch main_kernel
// DIRECT-NEXT: copy to host: 128 bytes from buffer 0 + 2048 to pinned 0 + 768
// DIRECT: copy to device: 512 bytes to buffer 0 + 1536 from pinned 0 + 256
// DIRECT-NOT: capture
// DIRECT: launch main_kernel
// DIRECT-NEXT: copy to host: 128 bytes from buffer 0 + 2048 to pinned 0 + 768
// DIRECT-NOT: graph
// DIRECT-NOT: launch main_kernel

// Tests that the artifact carries ptxas's cubin (the CUDA toolkit is on
// this machine), which the runtime loads where the GPU takes it.
// CUBIN: load module: cubin of {{[0-9]+}} bytes
// CUBIN-NOT: load module
// CUBIN: launch main_kernel grid 1,1,1 block 32,1,1

// Tests tcc_context_run_device on buffers of the process's CUDA allocator
// (the caller's, on stream 0, in a segment of their own: buffer 1, x at 0,
// w at 512, y at 1024, another output at 1536, a larger block at 2048):
// the artifact reads the caller's inputs and writes its output where they
// lie, nothing copied and nothing through the host; the second run on the
// same buffers is captured into a CUDA graph, which the third replays; a
// run with another output buffer runs directly; an output over an input,
// or an input off the 256-byte alignment, is copied on the device through
// the context's buffers instead (whose graph the second such run
// captures). Two graphs are kept: the first buffers' replays after that;
// two runs on the other output capture a third, which drops the first
// buffers' (the oldest), so the run after on them runs directly. A NULL
// output is refused.
// DEVICE: run: ok
// DEVICE-NEXT: run: ok
// DEVICE-NEXT: run: ok
// DEVICE-NEXT: another output: ok
// DEVICE-NEXT: output over an input: ok
// DEVICE-NEXT: unaligned input: ok
// DEVICE-NEXT: first buffers again: ok
// DEVICE-NEXT: another output: ok
// DEVICE-NEXT: another output: ok
// DEVICE-NEXT: first buffers again: ok
// DEVICE-NEXT: null output: {{.*}}linear.so: output 0 is NULL
// DEVICE-LOG: alloc buffer 0: 2097152 bytes
// DEVICE-LOG: alloc buffer 1: 2097152 bytes
// DEVICE-LOG-NOT: copy
// DEVICE-LOG: sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0] C [buffer 0 + 512]
// DEVICE-LOG-NEXT: sgemm result:
// DEVICE-LOG-NEXT: launch main_kernel {{.*}} [buffer 0 + 512] [buffer 0 + 0] 0 [buffer 1 + 1024]
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: begin capture
// DEVICE-LOG-NEXT: captured sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0]
// DEVICE-LOG-NEXT: captured launch main_kernel {{.*}} [buffer 1 + 1024]
// DEVICE-LOG-NEXT: end capture: 2 operations
// DEVICE-LOG-NEXT: instantiate graph
// DEVICE-LOG-NEXT: graph launch: 2 operations
// DEVICE-LOG: synchronize
// DEVICE-LOG-NEXT: graph launch: 2 operations
// DEVICE-LOG: synchronize
// DEVICE-LOG-NEXT: sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0]
// DEVICE-LOG-NEXT: sgemm result:
// DEVICE-LOG-NEXT: launch main_kernel {{.*}} [buffer 1 + 1536]
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: copy on device: 256 bytes from buffer 1 + 0 to buffer 0 + 1024
// DEVICE-LOG-NEXT: copy on device: 512 bytes from buffer 1 + 512 to buffer 0 + 1536
// DEVICE-LOG-NEXT: sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 0 + 1536] B [buffer 0 + 1024]
// DEVICE-LOG-NEXT: sgemm result:
// DEVICE-LOG-NEXT: launch main_kernel {{.*}} [buffer 0 + 2048]
// DEVICE-LOG-NEXT: copy on device: 128 bytes from buffer 0 + 2048 to buffer 1 + 0
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: copy on device: 256 bytes from buffer 1 + 2112 to buffer 0 + 1024
// DEVICE-LOG-NEXT: copy on device: 512 bytes from buffer 1 + 512 to buffer 0 + 1536
// DEVICE-LOG-NEXT: begin capture
// DEVICE-LOG: copy on device: 128 bytes from buffer 0 + 2048 to buffer 1 + 1024
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: graph launch: 2 operations
// DEVICE-LOG-NEXT: replayed sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0]
// DEVICE-LOG: replayed launch main_kernel {{.*}} [buffer 1 + 1024]
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0]
// DEVICE-LOG: launch main_kernel {{.*}} [buffer 1 + 1536]
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NEXT: begin capture
// DEVICE-LOG: captured launch main_kernel {{.*}} [buffer 1 + 1536]
// DEVICE-LOG-NEXT: end capture: 2 operations
// DEVICE-LOG-NEXT: instantiate graph
// DEVICE-LOG-NEXT: destroy graph
// DEVICE-LOG-NEXT: graph launch: 2 operations
// DEVICE-LOG: synchronize
// DEVICE-LOG-NEXT: sgemm NN m 8 n 4 k 16 {{.*}} A [buffer 1 + 512] B [buffer 1 + 0]
// DEVICE-LOG-NEXT: sgemm result:
// DEVICE-LOG-NEXT: launch main_kernel {{.*}} [buffer 1 + 1024]
// DEVICE-LOG-NEXT: synchronize
// DEVICE-LOG-NOT: copy to host

// Tests an artifact for two architectures (--cuda-arch=sm_90,sm_80): a fat
// binary of a cubin for each and the PTX for the older, from which the
// driver loads the cubin of the GPU at hand (sm_90, sm_80); on a GPU of
// neither (sm_86) the runtime loads the PTX, compiled for sm_80.
// FAT90: load module: fat binary of elf sm_80, elf sm_90, ptx sm_80
// FAT90-NEXT: load module: cubin of {{[0-9]+}} bytes
// FAT90-NOT: load module
// FAT90: launch main_kernel
// FAT80: load module: fat binary of elf sm_80, elf sm_90, ptx sm_80
// FAT80-NEXT: load module: cubin of {{[0-9]+}} bytes
// FAT80: launch main_kernel
// FAT86: load module: fat binary of elf sm_80, elf sm_90, ptx sm_80
// FAT86-NEXT: load module: no cubin for sm_86
// FAT86-NEXT: load module: .target sm_80
// FAT86: launch main_kernel

// (No log holds an error of the fake driver: an out-of-bounds address, a
// context popped that was not pushed, an unknown entry point.)

// Tests that without the driver (TCC_CUDA_DRIVER unset, no libcuda here)
// the same artifact is one clear error.
// NOGPU: error: {{.*}}this artifact runs on an NVIDIA GPU
