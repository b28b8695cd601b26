// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/affine.mlir -o %t/affine_net.o
// RUN: FileCheck %s --check-prefix=HEADER --input-file %t/affine_net.h
// RUN: nm %t/affine_net.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: cc -std=c11 -I%t %S/Inputs/use_header.c %t/affine_net.o -lm -o %t/prog
// RUN: %t/prog | FileCheck %s --check-prefix=PROG

// Tests the .o + header path: a C program includes the generated header,
// links the object alone and runs the model through the typed wrapper.
// HEADER: #define AFFINE_NET_NUM_INPUTS 1
// HEADER: #define AFFINE_NET_NUM_OUTPUTS 2
// HEADER: #define AFFINE_NET_WORKSPACE_BYTES 0u
// HEADER: const tcc_artifact_desc_t *affine_net_artifact_get(void);
// HEADER: static inline int32_t affine_net_run(const float *x, float *y, float *total, void *workspace)

// Only the getter is exported from an object, so objects combine.
// SYMBOLS: T affine_net_artifact_get
// SYMBOLS-NOT: T tcc_artifact_get
// SYMBOLS-NOT: T main

// PROG: abi 4 inputs 1 outputs 2 model affine
// PROG: 0.25 0 1.25 3.25 0 2.75 | 7.5
