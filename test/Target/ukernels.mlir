// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/make_linear_data.py %t
// RUN: tcc %S/Inputs/linear.mlir --emit=llvm-ir -o - | FileCheck %s --check-prefix=IR
// RUN: tcc %S/Inputs/linear.mlir -o %t/linear.so
// RUN: tcc-run %t/linear.so --inputs %t --check --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: tcc %S/Inputs/linear.mlir --ukernels=generic -o %t/generic.so
// RUN: tcc-run %t/generic.so --inputs %t --check --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: nm -D --defined-only %t/linear.so | FileCheck %s --check-prefix=EXPORTS
// RUN: tcc %S/Inputs/linear.mlir -o %t/linear
// RUN: %t/linear --inputs %t --outputs %t/out | FileCheck %s --check-prefix=EXE
// RUN: %python -c "import numpy as np, onnx.numpy_helper as h, onnx; t = onnx.TensorProto(); t.ParseFromString(open('%t/out/output_0.pb', 'rb').read()); e = np.load('%t/output_0.npy'); print('close' if np.allclose(h.to_array(t), e, rtol=1e-5, atol=1e-5) else 'differ')" | FileCheck %s --check-prefix=EXE-DATA
// RUN: tcc %S/Inputs/linear.mlir -o %t/net_a.o --jobs=2
// RUN: tcc %S/Inputs/linear.mlir -o %t/net_b.o --jobs=2
// RUN: nm %t/net_a.o | FileCheck %s --check-prefix=OBJECT
// RUN: cc -shared %t/net_a.o %t/net_b.o -lm -o %t/both.so
// RUN: mkdir -p %t/moved/bin && cp %tcc_bin/tcc %t/moved/bin/tcc
// RUN: not %t/moved/bin/tcc %S/Inputs/linear.mlir -o %t/moved/linear.so 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not ls %t/moved/linear.so %t/moved/linear.h

// Tests that the model's code calls the kernels' entry point, which the
// compiler does not re-compile: it is only declared in the model's IR.
// IR-NOT: define {{.*}} @tcc_uk_sgemm
// IR: declare {{.*}} @tcc_ukabi_sgemm(
// The run entry hands the caller's thread pool to the kernels for the run,
// then takes it back (without it every kernel runs on one thread).
// IR-LABEL: define internal {{.*}}i32 @{{.*}}run_entry(ptr
// IR: call void @tcc_ukabi_set_host(ptr %
// IR: call i32 @tcc_ukabi_sgemm(
// IR: call void @tcc_ukabi_set_host(ptr null)

// Tests that the precompiled kernels are linked into a library, an
// executable and an object, and compute x @ w + b at float tolerance
// (the kernels reassociate the sums; the tolerance covers that).
// CHECK: model 'linear'
// CHECK: output 0 'y' f32[4x8]: PASS

// Tests that the kernels stay private to the library.
// EXPORTS: T linear_artifact_get
// EXPORTS-NEXT: T tcc_artifact_get
// EXPORTS-NOT: T

// EXE: y: f32[4,8]
// EXE-DATA: close

// Tests that in an object the kernels are local symbols, so two models'
// objects link into one program (the last RUN line) without clashing.
// OBJECT-NOT: {{ T tcc_uk}}
// OBJECT: T net_a_artifact_get
// OBJECT-NOT: {{ T tcc_uk}}

// Tests that a tcc installed without its lib/ folder says which kernels it
// misses, and writes nothing.
// MISSING: error: {{.*}}linear.mlir: the micro-kernels '{{.*}}moved/lib/tcc_ukernels_{{.*}}.o' are missing (is tcc installed whole?)
