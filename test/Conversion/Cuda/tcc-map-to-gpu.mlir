// RUN: tcc-opt %s --tcc-map-to-gpu --canonicalize --split-input-file | FileCheck %s

// Tests that an elementwise op becomes one launch with a thread per element
// (256 a block, a guard for the last block) and the index split back into
// the two loop indices, the last one fastest.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CHECK-DAG: %[[C25:.*]] = arith.constant 25 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]]
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[C1000]]
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %[[C25]]
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %[[C25]]
// CHECK: memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @elementwise(%a: memref<40x25xf32>, %b: memref<40x25xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<40x25xf32>) outs(%b : memref<40x25xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Tests that a reduction keeps its reduction loop inside each thread, and
// that a full reduction (no parallel dimension) runs on one thread.
// CHECK-LABEL: func.func @reductions
// CHECK: gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8,
// CHECK: scf.if
// CHECK: scf.for
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1,
// CHECK-NEXT: scf.for
// CHECK: gpu.terminator
func.func @reductions(%a: memref<8x16xf32>, %rows: memref<8xf32>, %all: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%rows : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%rows : memref<8xf32>) outs(%all : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a host loop around parallel work stays on the host, and that
// a slice at its index (a run-time offset) is made inside the kernel, so
// the kernel takes the whole buffer.
// CHECK-LABEL: func.func @host_loop
// CHECK: scf.for %[[IV:.*]] =
// CHECK: gpu.launch
// CHECK: memref.subview %{{.*}}[%[[IV]], 0] [1, 16] [1, 1] : memref<4x16xf32>
// CHECK: gpu.terminator
func.func @host_loop(%a: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %a[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.fill ins(%one : f32) outs(%row : memref<16xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Tests that a read on the host and the ops that use what it read (a 0-d
// copy: a load and a store) run together on one thread.
// CHECK-LABEL: func.func @scalar_copy
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1,
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %arg1[] : memref<f32>
// CHECK-NEXT: gpu.terminator
func.func @scalar_copy(%a: memref<f32>, %b: memref<f32>) {
  linalg.copy ins(%a : memref<f32>) outs(%b : memref<f32>)
  return
}
