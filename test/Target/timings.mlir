// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/linear.mlir --timings --jobs=1 -o %t/linear.so 2>&1 | FileCheck %s
// RUN: tcc %S/Inputs/linear.mlir --timings --jobs=3 -o %t/pieces.so 2>&1 | FileCheck %s --check-prefix=PIECES
// RUN: tcc %S/Inputs/linear.mlir -o %t/quiet.so 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty

// Tests that --timings reports every pipeline with its passes, then each
// step of code generation, and that nothing is reported without it.
// CHECK: Execution time report
// CHECK: graph passes
// CHECK: TccFuse
// CHECK: tcc to linalg
// CHECK: ConvertTccToLinalg
// CHECK: linalg to LLVM
// CHECK: TccPlanMemory
// CHECK: TccParallelizeLoops
// CHECK: translate to LLVM IR
// CHECK: LLVM optimization
// CHECK: machine code
// CHECK: link
// CHECK: Total
// With --jobs=3 the optimization and machine code run in three pieces at
// once.
// PIECES: translate to LLVM IR
// PIECES: LLVM optimization and machine code (3 pieces)
// PIECES: link
// QUIET-NOT: Execution time report
