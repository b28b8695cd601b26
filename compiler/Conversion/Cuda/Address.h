//===- Address.h - host code's calls of the CUDA entry points ---*- C++ -*-===//
//
// Host code calls the artifact's CUDA entry points (tcc_cuda_launch,
// tcc_cuda_gemm, tcc_cuda_h2d) and hands them buffers as integer addresses.
// `memref.extract_aligned_pointer_as_index` of a `memref.view` folds to the
// viewed buffer's pointer, losing the view's byte shift, so the address is
// assembled here by walking the chain of views.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H
#define TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// The private declaration of the entry point `name` in `module` (made at
/// its end the first time), which compiler/Target/Artifact.cpp defines.
inline func::FuncOp declareEntryPoint(ModuleOp module, StringRef name,
                                      TypeRange arguments, Location loc) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = b.create<func::FuncOp>(loc, name, b.getFunctionType(arguments, {}));
  f.setPrivate();
  return f;
}

} // namespace mlir::tcc

#endif // TCC_COMPILER_CONVERSION_CUDA_ADDRESS_H
