// RUN: rm -rf %t && mkdir -p %t
// RUN: not tcc %S/Inputs/affine.mlir -o %t/missing-dir/affine.so 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not ls %t/missing-dir
// RUN: not tcc %S/Inputs/affine.mlir --mcpu=no-such-cpu -o %t/a.so 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not ls %t/a.so
// RUN: not tcc %t/absent.onnx -o %t/b.so 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tcc %S/Inputs/affine.mlir 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: not tcc %S/Inputs/affine.mlir --emit=llvm-dialect --target=gpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tcc %S/Inputs/affine.mlir --jobs=1000 -o %t/c.so 2>&1 | FileCheck %s --check-prefix=JOBS
// RUN: ls %t | count 0

// Tests the driver's user errors: each is one line, exits non-zero and
// leaves no output behind.
// UNWRITABLE: error: {{.*}}affine.mlir: cannot write '{{.*}}missing-dir/affine.so': no such directory
// CPU: error: {{.*}}unknown CPU 'no-such-cpu'
// MISSING: error: {{.*}}absent.onnx
// NOOUT: error: no output file: give -o OUT
// TARGET: error: unknown --target 'gpu' (available: cpu, cuda)
// JOBS: error: --jobs 1000 is more than 256 pieces
