//===- Address.h - device addresses of buffers in host code -----*- C++ -*-===//
//
// Host code hands buffers to kernels and cuBLAS as integer addresses.
// `memref.extract_aligned_pointer_as_index` of a `memref.view` folds to the
// viewed buffer's pointer, losing the view's byte shift, so the address is
// assembled here by walking the chain of views.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H
#define TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tcc {

/// The aligned base address (an index) of `buffer`: what the `aligned`
/// field of its descriptor holds. Ops that only change the offset, sizes or
/// strides keep their source's; a `memref.view` adds its byte shift.
inline Value alignedAddress(OpBuilder &b, Location loc, Value buffer) {
  Operation *def = buffer.getDefiningOp();
  if (auto view = dyn_cast_or_null<memref::ViewOp>(def))
    return b.create<arith::AddIOp>(
        loc, alignedAddress(b, loc, view.getSource()), view.getByteShift());
  if (isa_and_nonnull<memref::SubViewOp, memref::TransposeOp,
                      memref::ExpandShapeOp, memref::CollapseShapeOp,
                      memref::CastOp, memref::ReinterpretCastOp>(def))
    return alignedAddress(b, loc, def->getOperand(0));
  return b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
}

} // namespace mlir::tcc

#endif // TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H
