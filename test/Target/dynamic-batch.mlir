// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/dynamic-batch.mlir --emit=llvm-ir --name=m --dim batch=1..5 -o - | FileCheck %s
// RUN: tcc %S/Inputs/dynamic-batch.mlir -o %t/rows.o --dim batch=1..7
// RUN: FileCheck %s --check-prefix=HEADER --input-file %t/rows.h
// RUN: tcc %S/Inputs/dynamic-batch.mlir -o %t/rows.so --ukernels=none --memory-report | FileCheck %s --check-prefix=REPORT
// RUN: cc -std=c11 -I%t %S/Inputs/use_dynamic_header.c %t/rows.o -lm -o %t/prog
// RUN: %t/prog | FileCheck %s --check-prefix=PROG

// Tests a dynamic batch's artifact: the descriptor names the symbol and its
// bounds and marks the batched dimensions (-1, symbol 0); the entry point
// reads the size, refuses one out of bounds (2), and runs slabs of 4, 2 and
// 1 rows on the rows of the batched tensors; the header's function takes
// the size; the memory report is the largest slab's.
// CHECK-DAG: @m.symbol0.name = private constant [6 x i8] c"batch\00"
// CHECK-DAG: @m.symbols = private constant [1 x %tcc_symbol_desc_t] [%tcc_symbol_desc_t { ptr @m.symbol0.name, i64 1, i64 5, i32 0 }]
// CHECK-DAG: @m.inputs0.shape = private constant [2 x i64] [i64 -1, i64 3]
// CHECK-DAG: @m.inputs0.symbols = private constant [2 x i32] [i32 0, i32 -1]
// CHECK-DAG: @m.outputs1.shape = private constant [1 x i64] [i64 3]
// CHECK-DAG: @m.desc = private constant %tcc_artifact_desc_t { i32 4, {{.*}}, ptr @m_run_entry, i32 1, ptr @m.symbols, ptr null }
// CHECK-DAG: define internal {{.*}}i32 @m_run_entry(ptr

// HEADER: *   0 "x": float32[batch,3]
// HEADER: *   1 "wb": float32[3]
// HEADER: * Sizes given at run time:
// HEADER: *   batch: 1 to 7
// HEADER: static inline int32_t rows_run(const float *x, float *y, float *wb, int64_t batch, void *workspace)
// HEADER: const int64_t sizes[] = {batch};

// REPORT: memory plan of 'rows': {{.*}} (a slab of 8 rows of the dynamic batch; every batch size uses this arena)

// The C program (bounds 1..7) runs 7 rows (slabs 4 + 2 + 1), then 8:
// above the bound.
// PROG: rc 0
// PROG: 0.25 0.25 1.25 | 3.25 0.25 2.75 | 6.25 0.25 4.25 | 9.25 0.25 5.75 | 12.25 0.25 7.25 | 15.25 0.25 8.75 | 18.25 0.25 10.25
// PROG: wb 1.25 -1.75 0.75
// PROG: rc 2
