// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/make_rows_data.py %t
// RUN: tcc %S/Inputs/rows.mlir --emit=llvm-ir -o - | FileCheck %s --check-prefix=IR
// RUN: tcc %S/Inputs/rows.mlir -o %t/rows.so
// RUN: tcc-run %t/rows.so --inputs %t --check --threads 1 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tcc-run %t/rows.so --inputs %t --check --threads 2 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tcc-run %t/rows.so --inputs %t --check --threads 7 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tcc %S/Inputs/rows.mlir --ukernels=none -o %t/rows_none.so
// RUN: tcc-run %t/rows_none.so --inputs %t --check --threads 2 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tcc %S/Inputs/rows.mlir -o %t/rows
// RUN: %t/rows --inputs %t --outputs %t/out | FileCheck %s --check-prefix=EXE
// RUN: %python -c "import numpy as np, onnx.numpy_helper as h, onnx; t = onnx.TensorProto(); t.ParseFromString(open('%t/out/output_0.pb', 'rb').read()); e = np.load('%t/output_0.npy'); print('close' if np.allclose(h.to_array(t), e, rtol=1e-5, atol=1e-6) else 'differ')" | FileCheck %s --check-prefix=EXE-DATA

// Tests that big loops fork through the OpenMP entry points, which the
// kernels' object implements on the caller's thread pool (nothing else is
// linked in), and that the run entry hands that pool over.
// IR-DAG: call {{.*}}@__kmpc_fork_call(
// IR-DAG: call void @__kmpc_for_static_init_8u(
// IR-DAG: call void @tcc_ukabi_set_host(ptr %
// IR-DAG: declare {{.*}}@__kmpc_fork_call(

// Tests that any number of threads computes the same rows (each row is one
// thread's, whole): 300 rows over 1, 2 and 7 threads, with and without the
// kernels, and in a standalone executable (no pool: one thread).
// CHECK: output 0 'y' f32[300x257]: PASS
// EXE: y: f32[300,257]
// EXE-DATA: close
