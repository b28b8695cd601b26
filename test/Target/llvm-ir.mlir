// RUN: tcc %S/Inputs/affine.mlir --emit=llvm-ir --name=m -o - | FileCheck %s

// Tests that the artifact's LLVM IR carries its descriptor (ABI version 2,
// names, dtypes, shapes), an entry point that unpacks the pointer arrays,
// the graph's code inlined into it, and the two exported getters.
// CHECK-DAG: @m.inputs0.name = private constant [2 x i8] c"x\00"
// CHECK-DAG: @m.outputs1.name = private constant [6 x i8] c"total\00"
// CHECK-DAG: @m.inputs0.shape = private constant [2 x i64] [i64 2, i64 3]
// CHECK-DAG: @m.model_name = private constant [7 x i8] c"affine\00"
// CHECK-DAG: @m.desc = private constant %tcc_artifact_desc_t { i32 4, i32 0, ptr @m.version, ptr @m.target, ptr @m.model_name, i32 1, i32 2, ptr @m.inputs, ptr @m.outputs, i64 0, i64 64, ptr @m_run_entry, i32 0, ptr null, ptr null }
// CHECK-DAG: define internal {{.*}}i32 @m_run_entry(ptr
// CHECK-DAG: define {{.*}}ptr @m_artifact_get()
// CHECK-DAG: define {{.*}}ptr @tcc_artifact_get()
