//===- InstrumentKernels.cpp - the tcc-instrument-kernels pass ------------===//

#include "compiler/Transforms/Locations.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCINSTRUMENTKERNELS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kProfileFn = "tcc_ukabi_profile";

/// Whether `op` is a kernel: it reads or writes memory (a call, a loop
/// nest, a copy), and is not an allocation.
bool isKernel(Operation &op) {
  if (op.hasTrait<OpTrait::IsTerminator>() ||
      isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
    return false;
  return !isMemoryEffectFree(&op);
}

/// What the profile calls the kernel `op`.
std::string kernelName(Operation &op) {
  std::string name = tcc::describeNodes(op.getLoc());
  if (!name.empty())
    return name;
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee().str();
  return op.getName().getStringRef().str();
}

struct TccInstrumentKernelsPass
    : mlir::tcc::impl::TccInstrumentKernelsBase<TccInstrumentKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The graph: @main, or its slabs of a dynamic batch, whose kernels are
    // numbered one slab after the other (each slab's show on their own).
    std::vector<func::FuncOp> graphs = tcc::graphFunctions(module);
    if (graphs.empty())
      return;
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    Type i64 = mb.getI64Type();
    auto profile = module.lookupSymbol<func::FuncOp>(kProfileFn);
    if (!profile) {
      profile = mb.create<func::FuncOp>(
          module.getLoc(), kProfileFn, mb.getFunctionType({i64, i64, i64}, {}));
      profile.setPrivate();
    }
    SmallVector<Operation *> kernels;
    for (func::FuncOp graph : graphs)
      for (Operation &op : graph.front())
        if (isKernel(op))
          kernels.push_back(&op);
    for (auto [index, op] : llvm::enumerate(kernels)) {
      std::string text = kernelName(*op);
      SmallVector<int8_t> bytes(text.begin(), text.end());
      bytes.push_back(0);
      auto type = MemRefType::get({int64_t(bytes.size())}, mb.getI8Type());
      std::string symbol = "__tcc_kernel_name_" + std::to_string(index);
      mb.create<memref::GlobalOp>(
          module.getLoc(), symbol, mb.getStringAttr("private"), type,
          DenseElementsAttr::get(
              RankedTensorType::get(type.getShape(), mb.getI8Type()),
              ArrayRef<int8_t>(bytes)),
          /*constant=*/true, /*alignment=*/nullptr);
      Location loc = op->getLoc();
      OpBuilder b(op);
      Value global = b.create<memref::GetGlobalOp>(loc, type, symbol);
      Value address = b.create<arith::IndexCastOp>(
          loc, i64,
          b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, global));
      Value id = b.create<arith::ConstantIntOp>(loc, index, 64);
      auto call = [&](int64_t end) {
        b.create<func::CallOp>(
            loc, profile,
            ValueRange{id, address,
                       b.create<arith::ConstantIntOp>(loc, end, 64)});
      };
      call(0);
      b.setInsertionPointAfter(op);
      call(1);
    }
  }
};
} // namespace
