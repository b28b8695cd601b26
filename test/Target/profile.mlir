// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_batched_data.py %t
// RUN: tcc %S/Inputs/batched.mlir --profile -o %t/profiled.so
// RUN: tcc-run %t/profiled.so --inputs %t --check --rtol 1e-5 --atol 1e-5 --bench 4 --warmup 1 --threads 2 --profile | FileCheck %s
// RUN: tcc-run %t/profiled.so --inputs %t --bench 4 --warmup 1 --profile --json | FileCheck %s --check-prefix=JSON
// RUN: tcc %S/Inputs/batched.mlir -o %t/plain.so
// RUN: not tcc-run %t/plain.so --inputs %t --profile 2>&1 | FileCheck %s --check-prefix=NONE

// Tests that an artifact compiled with --profile reports each kernel to
// tcc-run --profile (the timed runs only: 4 calls after the warm-up), still
// computes the right result, and that one compiled without it is refused;
// with each kernel, how many of the threads it kept busy on average.
// CHECK: output 0 'y' f32[6x32x24]: PASS
// CHECK: profile: 1 kernels, {{[0-9.]+}} ms a run in kernels, {{[0-2]\.[0-9][0-9]}} of 2 threads busy
// CHECK: kernel {{ *}}calls {{ *}}total_ms {{ *}}mean_ms {{ *}}share threads  name
// CHECK: 0 {{ *}}4 {{ *}}{{[0-9.]+}} {{ *}}{{[0-9.]+}} {{ *}}100.0% {{ *}}{{[0-2]\.[0-9][0-9]}}  tcc_ukabi_sgemm
// JSON: "profile":[{"kernel":0,"name":"tcc_ukabi_sgemm","calls":4,"total_ms":{{[0-9.e+-]+}},"mean_ms":{{[0-9.e+-]+}},"threads_busy":{{[0-9.e+-]+}}}]
// NONE: tcc-run: error: '{{.*}}plain.so' reported no kernels to --profile (compile it with tcc --profile)
