// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/padded-dims.mlir --emit=llvm-ir --name=m --dim seq=1..24 -o - | FileCheck %s
// RUN: tcc %S/Inputs/padded-dims.mlir -o %t/seqs.o --dim seq=1..24
// RUN: tcc %S/Inputs/padded-dims.mlir -o %t/seqs.so --dim seq=1..24 --memory-report | FileCheck %s --check-prefix=REPORT
// RUN: tcc %S/Inputs/padded-dims.mlir -o %t/seqs.so --dim seq=1..24 --memory-report=json | FileCheck %s --check-prefix=JSON
// RUN: FileCheck %s --check-prefix=HEADER --input-file %t/seqs.h
// RUN: cc -std=c11 -I%t %S/Inputs/use_padded_header.c %t/seqs.o -lm -o %t/prog
// RUN: %t/prog | FileCheck %s --check-prefix=PROG

// Tests a padded dimension's artifact: the descriptor names the symbol and
// its bounds and marks the dimensions it sizes; there is a graph per
// bucket (16, 20, 24: four to a doubling); the entry point reads the size,
// refuses one out of bounds (2), pads the inputs into the workspace and trims the outputs
// (or passes the caller's buffers at a bucket's size); the header's
// function takes the size.
// CHECK-DAG: @m.symbol0.name = private constant [4 x i8] c"seq\00"
// CHECK-DAG: @m.symbols = private constant [1 x %tcc_symbol_desc_t] [%tcc_symbol_desc_t { ptr @m.symbol0.name, i64 1, i64 24, i32 0 }]
// CHECK-DAG: @m.inputs0.shape = private constant [2 x i64] [i64 2, i64 -1]
// CHECK-DAG: @m.inputs0.symbols = private constant [2 x i32] [i32 -1, i32 0]
// CHECK-DAG: @m.outputs0.shape = private constant [2 x i64] [i64 2, i64 -1]
// CHECK-DAG: @m.outputs1.shape = private constant [1 x i64] [i64 2]
// CHECK-DAG: define internal {{.*}} @m_graph_pad24(
// CHECK-DAG: define internal {{.*}} @m_graph_pad20(
// CHECK-DAG: define internal {{.*}} @m_graph_pad16(
// CHECK-DAG: define internal {{.*}}i32 @m_run_entry(ptr

// The memory plan is the largest bucket's, and says so.
// REPORT: memory plan of 'seqs': {{.*}} (seq padded to its largest bucket, 24; an upper bound every size uses)
// JSON: "padded_dimension":"seq","bucket":24

// HEADER: *   0 "x": float32[2,seq]
// HEADER: * Sizes given at run time:
// HEADER: *   seq: 1 to 24
// HEADER: static inline int32_t seqs_run(const float *x, float *p, float *m, int64_t seq, void *workspace)

// The rows are 0 1 2 3 0 1 2 3 ... and 1 2 3 4 1 2 3 4 ...; softmax over
// the first n of each, and their mean (3: padded to 16; 16: the bucket;
// 21: padded to 24; 25: above the bound).
// PROG: n 3 rc 0: p 0.0900 0.2447 0.6652 sum 1.0000 m 1.0000 2.0000
// PROG: n 16 rc 0: p 0.0080 0.0218 0.1610 sum 1.0000 m 1.5000 2.5000
// PROG: n 21 rc 0: p 0.0064 0.0173 0.0064 sum 1.0000 m 1.4286 2.4286
// PROG: n 25 rc 2:
