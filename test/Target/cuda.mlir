// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX80
// RUN: tcc %S/Inputs/linear.mlir --target=cuda --emit=ptx -o %t/linear.ptx
// RUN: FileCheck %s --check-prefix=PTX90 < %t/linear.ptx
// RUN: tcc %S/Inputs/linear.mlir --target=cuda -o %t/linear.so
// RUN: nm -D --defined-only %t/linear.so | FileCheck %s --check-prefix=EXPORTS
// RUN: ldd %t/linear.so | FileCheck %s --check-prefix=LDD
// RUN: %python %S/Inputs/make_linear_data.py %t
// RUN: env TCC_CUDA_DRIVER=%t/no-libcuda.so not tcc-run %t/linear.so --inputs %t 2>&1 | FileCheck %s --check-prefix=NOGPU
// RUN: not tcc %S/Inputs/linear.mlir --target=cuda -o %t/linear-exe 2>&1 | FileCheck %s --check-prefix=EXE
// RUN: not ls %t/linear-exe
// RUN: not tcc %S/Inputs/linear.mlir --emit=ptx -o - 2>&1 | FileCheck %s --check-prefix=PTXCPU
// RUN: not tcc %S/Inputs/linear.mlir --target=cuda --profile -o %t/p.so 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: %python %S/../Frontends/Onnx/Inputs/expect_exit.py 2 tcc %S/Inputs/linear.mlir --target=gpu -o %t/g.so | FileCheck %s --check-prefix=TARGET
// RUN: %python %S/../Frontends/Onnx/Inputs/expect_exit.py 2 tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_70 -o %t/g.so | FileCheck %s --check-prefix=ARCH
// RUN: %python %S/../Frontends/Onnx/Inputs/expect_exit.py 2 tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_80,sm_75 -o %t/g.so | FileCheck %s --check-prefix=ARCHLIST
// RUN: %python %S/../Frontends/Onnx/Inputs/expect_exit.py 2 tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_80,emulate -o %t/g.so | FileCheck %s --check-prefix=ARCHEMU
// RUN: not ls %t/g.so
// RUN: %python %S/../Frontends/Onnx/Inputs/expect_exit.py 2 tcc %S/Inputs/linear.mlir --cuda-arch=sm_80 -o %t/g.so | FileCheck %s --check-prefix=ARCHCPU
// RUN: tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_90,sm_80,sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=PTX80
// RUN: not tcc %S/Inputs/dynamic-batch.mlir --target=cuda -o %t/d.so 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: mkdir -p %t/bad-ptxas %t/bad-fatbinary
// RUN: %python -c "open('%t/bad-ptxas/ptxas.sh', 'w').write('#!/bin/sh\necho \"ptxas fatal : Unsupported .version 8.0\" >&2\nexit 255\n')"
// RUN: %python -c "open('%t/bad-fatbinary/fatbinary.sh', 'w').write('#!/bin/sh\necho \"fatbinary fatal : out of disk\" >&2\nexit 1\n')"
// RUN: %python %S/Inputs/with_tools.py %t/bad-ptxas 1 tcc %S/Inputs/linear.mlir --target=cuda -o %t/bad1.so | FileCheck %s --check-prefix=PTXAS
// RUN: not ls %t/bad1.so
// RUN: %python %S/Inputs/with_tools.py %t/bad-fatbinary 1 tcc %S/Inputs/linear.mlir --target=cuda --cuda-arch=sm_80,sm_90 -o %t/bad2.so | FileCheck %s --check-prefix=FATBIN
// RUN: not ls %t/bad2.so

// Tests that --target=cuda makes PTX for the requested architecture (of a
// list, the oldest: its PTX runs on the newer GPUs too), with the bias and
// ReLU as a kernel (the matmul goes to cuBLAS).
// PTX80: .target sm_80
// PTX80: .visible .entry main_kernel(
// PTX80-NOT: .entry
// PTX90: .target sm_90
// PTX90: .visible .entry main_kernel(

// Tests that a CUDA library exports only the getters and links no CUDA
// library (the runtime finds the driver and cuBLAS when it runs it).
// EXPORTS: T linear_artifact_get
// EXPORTS-NEXT: T tcc_artifact_get
// EXPORTS-NOT: T
// LDD-NOT: libcuda
// LDD-NOT: libcublas

// Tests that running it without CUDA is one clear error, not a crash.
// NOGPU: tcc-run: error: {{.*}}linear.so: this artifact runs on an NVIDIA GPU (compiled for sm_90): CUDA is not available: cannot load the driver library {{.*}}no-libcuda.so

// Tests the CUDA target's user errors; a toolkit whose ptxas refuses the
// PTX, or whose fatbinary fails, is one error with the tool's own message,
// and no artifact.
// EXE: error: {{.*}}linear.mlir: --target=cuda makes a library (-o OUT.so) or an object (-o OUT.o); a standalone executable is CPU-only
// PTXCPU: error: {{.*}}linear.mlir: --emit=ptx needs --target=cuda
// PROFILE: error: {{.*}}linear.mlir: --profile is CPU-only (--target=cuda)
// TARGET: error: unknown --target 'gpu' (available: cpu, cuda)
// ARCH: error: unknown --cuda-arch 'sm_70' (available: sm_80, sm_86, sm_89, sm_90, a list of them such as sm_80,sm_90, or emulate)
// ARCHLIST: error: unknown --cuda-arch 'sm_75' (available:
// ARCHEMU: error: --cuda-arch=emulate takes no other architecture
// ARCHCPU: error: --cuda-arch needs --target=cuda
// PTXAS: error: {{.*}}linear.mlir: ptxas refused the kernels' PTX: {{.*}}bad-ptxas/ptxas exited with 255
// PTXAS-NEXT: ptxas fatal : Unsupported .version 8.0
// FATBIN: error: {{.*}}linear.mlir: fatbinary could not pack the kernels: {{.*}}bad-fatbinary/fatbinary exited with 1
// FATBIN-NEXT: fatbinary fatal : out of disk
// DYNAMIC: error: {{.*}}dynamic-batch.mlir: symbolic dimensions are CPU-only for now: give --target=cuda models fixed shapes (--input-shape)
