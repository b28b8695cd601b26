//===- DeviceConstants.cpp - constant globals into one device buffer ------===//
//
// Kernels on a GPU read device memory only. The model's weights (constant
// memref.globals) get places in one device buffer, passed to the graph as
// its last argument and filled once at load by @tcc_cuda_upload_weights.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Cuda/Address.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCDEVICECONSTANTS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
constexpr int64_t kWeightAlign = 256;

/// A global's size in memory: elements are whole bytes (i1 takes one).
int64_t bytesOf(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

struct TccDeviceConstantsPass
    : tcc::impl::TccDeviceConstantsBase<TccDeviceConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Places in the buffer, in order of first use.
    llvm::MapVector<memref::GlobalOp, int64_t> places;
    int64_t size = 0;
    SmallVector<func::FuncOp> graphs;
    bool failedAny = false;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal())
        continue;
      graphs.push_back(f);
      f.walk([&](memref::GetGlobalOp get) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            get, get.getNameAttr());
        if (!global || !global.getConstant() ||
            !global.getType().getLayout().isIdentity() ||
            !global.getType().hasStaticShape()) {
          get.emitError("a CUDA graph reads a global that is not a dense "
                        "constant; it cannot be placed in device memory");
          failedAny = true;
          return;
        }
        if (places.count(global))
          return;
        places[global] = size;
        size += llvm::alignTo(bytesOf(global.getType()), kWeightAlign);
      });
    }
    if (failedAny)
      return signalPassFailure();
    int64_t bufferBytes = std::max<int64_t>(size, kWeightAlign);
    auto bufferType = MemRefType::get({bufferBytes}, IntegerType::get(ctx, 8));
    OpBuilder b(ctx);
    for (func::FuncOp f : graphs) {
      SmallVector<memref::GetGlobalOp> gets;
      f.walk([&](memref::GetGlobalOp get) { gets.push_back(get); });
      unsigned index = f.getNumArguments();
      f.insertArgument(index, bufferType, DictionaryAttr(), f.getLoc());
      Value weights = f.getArgument(index);
      for (memref::GetGlobalOp get : gets) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            get, get.getNameAttr());
        b.setInsertionPoint(get);
        Value offset =
            b.create<arith::ConstantIndexOp>(get.getLoc(), places[global]);
        Value view = b.create<memref::ViewOp>(get.getLoc(), get.getType(),
                                              weights, offset, ValueRange());
        get.replaceAllUsesWith(view);
        get.erase();
      }
    }
    // The loader's copy of each global into its place.
    b.setInsertionPointToEnd(module.getBody());
    Location loc = module.getLoc();
    auto indexType = b.getIndexType();
    auto i64 = b.getI64Type();
    func::FuncOp h2d = tcc::declareEntryPoint(module, "tcc_cuda_h2d",
                                              {indexType, indexType, i64}, loc);
    auto upload = b.create<func::FuncOp>(loc, "tcc_cuda_upload_weights",
                                         b.getFunctionType({bufferType}, {}));
    Block *body = upload.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value buffer = body->getArgument(0);
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    for (auto [global, offset] : places) {
      Value src = b.create<memref::GetGlobalOp>(loc, global.getType(),
                                                global.getSymName());
      Value srcPtr = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, src);
      Value dst = b.create<arith::AddIOp>(
          loc, base, b.create<arith::ConstantIndexOp>(loc, offset));
      Value bytes =
          b.create<arith::ConstantIntOp>(loc, bytesOf(global.getType()), 64);
      b.create<func::CallOp>(loc, h2d, ValueRange{dst, srcPtr, bytes});
    }
    b.create<func::ReturnOp>(loc);
    module->setAttr("tcc.cuda.weights_bytes", b.getI64IntegerAttr(bufferBytes));
  }
};
} // namespace
