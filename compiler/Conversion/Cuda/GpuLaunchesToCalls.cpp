//===- GpuLaunchesToCalls.cpp - one kernel module, launched by the runtime ===//
//
// An artifact carries one PTX module and launches its kernels through the
// runtime's CUDA services (tcc_cuda_api_t in tcc/abi.h): the kernels are
// gathered into one gpu.module before PTX is made, and afterwards each
// gpu.launch_func becomes a call with the kernel's index and its arguments
// packed in 8-byte slots.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Cuda/Address.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCMERGEGPUMODULES
#define GEN_PASS_DEF_TCCGPULAUNCHESTOCALLS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
constexpr StringLiteral kKernelModule = "tcc_kernels";

struct TccMergeGpuModulesPass
    : tcc::impl::TccMergeGpuModulesBase<TccMergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    // Outlining names each module after its kernel (main_kernel,
    // main_kernel_0, ...) and each kernel after its function: the merged
    // kernels take their old module's name.
    MLIRContext *ctx = &getContext();
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    gpu::GPUModuleOp target = modules.front();
    Block &body = target.getBodyRegion().front();
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op : llvm::make_early_inc_range(
               m.getBodyRegion().front().without_terminator())) {
        auto f = dyn_cast<gpu::GPUFuncOp>(op);
        if (!f) {
          op.emitError("only kernels are expected in an outlined module");
          return signalPassFailure();
        }
        renamed[std::make_pair(m.getSymNameAttr(),
                               SymbolTable::getSymbolName(f))] =
            m.getSymNameAttr();
        SymbolTable::setSymbolName(f, m.getSymNameAttr());
        if (m != target)
          f->moveBefore(body.getTerminator());
      }
    }
    for (gpu::GPUModuleOp m : ArrayRef(modules).drop_front())
      m.erase();
    target.setSymName(kKernelModule);
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name = renamed.lookup(
          std::make_pair(launch.getKernelModuleName(), launch.getKernelName()));
      launch.setKernelAttr(SymbolRefAttr::get(
          ctx, kKernelModule, {FlatSymbolRefAttr::get(ctx, name)}));
    });
  }
};

struct TccGpuLaunchesToCallsPass
    : tcc::impl::TccGpuLaunchesToCallsBase<TccGpuLaunchesToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    if (binaries.size() > 1) {
      binaries[1].emitError("an artifact carries one kernel module");
      return signalPassFailure();
    }
    SmallVector<Attribute> names;
    llvm::StringMap<int64_t> kernelIndex;
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
    if (!binaries.empty()) {
      auto objects = binaries.front().getObjects();
      if (objects.size() != 1) {
        binaries.front().emitError("expected one object (one architecture)");
        return signalPassFailure();
      }
      auto object = cast<gpu::ObjectAttr>(objects[0]);
      StringRef ptx = object.getObject().getValue();
      // format=isa ends the text with a NUL byte, which ptxas refuses.
      ptx = ptx.rtrim(StringRef("\0", 1));
      module->setAttr("tcc.cuda.ptx", StringAttr::get(ctx, ptx));
      binaries.front().erase();
    }
    OpBuilder b(ctx);
    Type i64 = b.getI64Type();
    for (gpu::LaunchFuncOp l : launches) {
      StringRef name = l.getKernelName().getValue();
      auto [it, inserted] = kernelIndex.try_emplace(name, names.size());
      if (inserted)
        names.push_back(StringAttr::get(ctx, name));
      if (!l.getAsyncDependencies().empty() || l.getAsyncToken() ||
          l.getDynamicSharedMemorySize() || l.hasClusterSize()) {
        l.emitError("unexpected launch form for an artifact");
        return signalPassFailure();
      }
      Location loc = l.getLoc();
      auto f = l->getParentOfType<func::FuncOp>();
      ValueRange args = l.getKernelOperands();
      // The slots live for the whole function: allocated at its entry.
      b.setInsertionPointToStart(&f.getBody().front());
      auto slotsType =
          MemRefType::get({std::max<int64_t>(args.size(), 1)}, i64);
      Value slots = b.create<memref::AllocaOp>(loc, slotsType);
      b.setInsertionPoint(l);
      for (auto [i, arg] : llvm::enumerate(args)) {
        Value v = arg;
        Type t = v.getType();
        if (isa<MemRefType>(t)) {
          v = tcc::alignedAddress(b, loc, v);
          v = b.create<arith::IndexCastUIOp>(loc, i64, v);
        } else if (t.isIndex()) {
          v = b.create<arith::IndexCastOp>(loc, i64, v);
        } else if (auto ft = dyn_cast<FloatType>(t)) {
          v = b.create<arith::BitcastOp>(
              loc, IntegerType::get(ctx, ft.getWidth()), v);
          if (ft.getWidth() < 64)
            v = b.create<arith::ExtUIOp>(loc, i64, v);
        } else if (auto it = dyn_cast<IntegerType>(t)) {
          if (it.getWidth() < 64)
            v = b.create<arith::ExtUIOp>(loc, i64, v);
          else if (it.getWidth() > 64)
            v = nullptr;
        } else {
          v = nullptr;
        }
        if (!v) {
          l.emitError("a kernel argument of type ")
              << t << " cannot be passed to the device";
          return signalPassFailure();
        }
        Value at = b.create<arith::ConstantIndexOp>(loc, i);
        b.create<memref::StoreOp>(loc, v, slots, at);
      }
      Value slotsPtr =
          b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, slots);
      SmallVector<Value> call = {
          b.create<arith::ConstantIntOp>(loc, it->second, i64),
          l.getGridSizeX(),
          l.getGridSizeY(),
          l.getGridSizeZ(),
          l.getBlockSizeX(),
          l.getBlockSizeY(),
          l.getBlockSizeZ(),
          slotsPtr,
          b.create<arith::ConstantIntOp>(loc, args.size(), i64)};
      for (Value &v : call)
        if (v.getType().isIndex())
          v = b.create<arith::IndexCastOp>(loc, i64, v);
      func::FuncOp callee = tcc::declareEntryPoint(
          module, "tcc_cuda_launch", SmallVector<Type>(call.size(), i64), loc);
      b.create<func::CallOp>(loc, callee, call);
      l.erase();
    }
    module->setAttr("tcc.cuda.kernels", ArrayAttr::get(ctx, names));
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};
} // namespace
