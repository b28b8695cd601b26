//===- LLVMCodegen.cpp - LLVM dialect to machine code, in process ---------===//

#include "compiler/Target/LLVMCodegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;

static void initializeNativeTarget() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)done;
}

std::unique_ptr<llvm::TargetMachine>
tcc::createCpuTargetMachine(StringRef cpu, int optLevel, std::string &error) {
  initializeNativeTarget();
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpuName, features;
  if (cpu.empty() || cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(name, enabled);
    features = f.getString();
  } else {
    cpuName = cpu.str();
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(cpuName)) {
      error = "unknown CPU '" + cpuName + "' for " + triple +
              " (try --mcpu=native, x86-64-v3 or a name such as znver4)";
      return nullptr;
    }
  }
  llvm::CodeGenOptLevel level = optLevel <= 0   ? llvm::CodeGenOptLevel::None
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                : optLevel == 2
                                    ? llvm::CodeGenOptLevel::Default
                                    : llvm::CodeGenOptLevel::Aggressive;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpuName, features, options,
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    error = "cannot create a target machine for " + triple;
  return machine;
}

std::string tcc::describeTarget(const llvm::TargetMachine &machine) {
  return machine.getTargetTriple().str() + ":" + machine.getTargetCPU().str();
}

std::unique_ptr<llvm::Module>
tcc::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                       llvm::TargetMachine &machine) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return nullptr;
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple().str());
  return llvmModule;
}

tcc::UkernelIsa tcc::ukernelIsaFor(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f,+avx512bw,+avx512dq,+avx512vl"))
    return UkernelIsa::avx512;
  if (info->checkFeatures("+avx2,+fma"))
    return UkernelIsa::avx2;
  return UkernelIsa::generic;
}

LogicalResult tcc::findUkernelObject(const llvm::Module &module,
                                     StringRef libDir, UkernelIsa isa,
                                     std::string &object, std::string &error) {
  object.clear();
  bool used = llvm::any_of(module, [](const llvm::Function &f) {
    // The kernels' entry points, or the OpenMP ones of parallel loops,
    // which the same object implements.
    return f.isDeclaration() && (f.getName().starts_with("tcc_ukabi_") ||
                                 f.getName().starts_with("__kmpc_"));
  });
  if (!used)
    return success();
  SmallString<256> path(libDir);
  llvm::sys::path::append(path, "tcc_ukernels_" + ukernelIsaName(isa) + ".o");
  if (!llvm::sys::fs::exists(path)) {
    error = "the micro-kernels '" + path.str().str() +
            "' are missing (is tcc installed whole?)";
    return failure();
  }
  object = path.str().str();
  return success();
}

void tcc::optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                             int optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder pb(&machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = optLevel <= 0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

static bool usesBFloat(const llvm::Module &module) {
  for (const llvm::Function &function : module)
    for (const llvm::Instruction &inst : llvm::instructions(function)) {
      if (inst.getType()->getScalarType()->isBFloatTy())
        return true;
      for (const llvm::Value *operand : inst.operands())
        if (operand->getType()->getScalarType()->isBFloatTy())
          return true;
    }
  return false;
}

/// Defines `name`(from) -> bfloat, rounding to nearest even with NaNs kept
/// quiet, unless the module defines it already. An f64 argument is narrowed
/// to f32 first by rounding to odd, so that the second rounding is exact.
static void defineTruncToBFloat(llvm::Module &module, StringRef name,
                                llvm::Type *from) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  auto *type =
      llvm::FunctionType::get(llvm::Type::getBFloatTy(context), {from}, false);
  llvm::Function *function = module.getFunction(name);
  if (function &&
      (!function->isDeclaration() || function->getFunctionType() != type))
    return;
  if (!function)
    function = llvm::Function::Create(type, llvm::GlobalValue::WeakODRLinkage,
                                      name, module);
  function->setLinkage(llvm::GlobalValue::WeakODRLinkage);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *value = function->getArg(0);
  llvm::Value *bits;
  if (from->isDoubleTy()) {
    // f64 -> f32 rounding to odd: round to nearest, step back toward zero
    // when that went up in magnitude, then mark an inexact result odd.
    llvm::Value *narrow = b.CreateFPTrunc(value, f32);
    llvm::Value *wide = b.CreateFPExt(narrow, from);
    llvm::Value *magnitude = b.CreateBitCast(narrow, i32);
    llvm::Value *up =
        b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, wide),
                        b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
    magnitude = b.CreateSub(magnitude, b.CreateZExt(up, i32));
    llvm::Value *inexact = b.CreateFCmpONE(
        b.CreateFPExt(b.CreateBitCast(magnitude, f32), from), value);
    bits = b.CreateOr(magnitude, b.CreateZExt(inexact, i32));
  } else {
    bits = b.CreateBitCast(value, i32);
  }
  // Round to nearest even on the low 16 bits; a NaN stays a quiet NaN.
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff))), 16);
  llvm::Value *isNaN = b.CreateFCmpUNO(value, value);
  llvm::Value *quiet = b.CreateOr(b.CreateLShr(bits, 16), b.getInt32(0x40));
  llvm::Value *half =
      b.CreateTrunc(b.CreateSelect(isNaN, quiet, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(half, llvm::Type::getBFloatTy(context)));
}

void tcc::addBFloatConversions(llvm::Module &module) {
  if (!usesBFloat(module))
    return;
  llvm::LLVMContext &context = module.getContext();
  defineTruncToBFloat(module, "__truncsfbf2", llvm::Type::getFloatTy(context));
  defineTruncToBFloat(module, "__truncdfbf2", llvm::Type::getDoubleTy(context));
}

/// Appends the bytes of `c` (plain data: arrays of numbers, zeros) as
/// `layout` lays them out; false for anything else (addresses).
static bool appendBytes(const llvm::Constant *c, const llvm::DataLayout &layout,
                        std::string &bytes) {
  if (auto *data = dyn_cast<llvm::ConstantDataSequential>(c)) {
    if (!layout.isLittleEndian() && data->getElementByteSize() > 1)
      return false;
    bytes += data->getRawDataValues();
    return true;
  }
  if (isa<llvm::ConstantAggregateZero>(c)) {
    bytes.append(layout.getTypeAllocSize(c->getType()), '\0');
    return true;
  }
  if (auto *array = dyn_cast<llvm::ConstantArray>(c)) {
    for (const llvm::Use &element : array->operands())
      if (!appendBytes(cast<llvm::Constant>(element.get()), layout, bytes))
        return false;
    return true;
  }
  return false;
}

/// Gives each large constant global of numbers (the weights) a byte-string
/// initializer with the same bytes: the asm printer writes a byte string at
/// once but other arrays an element at a time, which made most of a big
/// model's machine-code time (vit_b_16's 330 MB of floats: 7.6 s).
static void flattenConstantData(llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  for (llvm::GlobalVariable &g : module.globals()) {
    if (!g.isConstant() || !g.hasInitializer() ||
        g.getInitializer()->getType()->isIntegerTy(8) ||
        layout.getTypeAllocSize(g.getValueType()) < 4096)
      continue;
    auto *seq = dyn_cast<llvm::ConstantDataSequential>(g.getInitializer());
    if (seq && seq->isString())
      continue;
    std::string bytes;
    if (!appendBytes(g.getInitializer(), layout, bytes) ||
        bytes.size() != layout.getTypeAllocSize(g.getValueType()))
      continue;
    auto *flat = new llvm::GlobalVariable(
        module,
        llvm::ArrayType::get(llvm::Type::getInt8Ty(module.getContext()),
                             bytes.size()),
        /*isConstant=*/true, g.getLinkage(),
        llvm::ConstantDataArray::getRaw(
            bytes, bytes.size(), llvm::Type::getInt8Ty(module.getContext())),
        "", &g, g.getThreadLocalMode(), g.getAddressSpace());
    flat->copyAttributesFrom(&g);
    flat->setAlignment(g.getAlign().valueOrOne() > llvm::Align(1)
                           ? g.getAlign()
                           : llvm::MaybeAlign(layout.getPreferredAlign(&g)));
    flat->takeName(&g);
    g.replaceAllUsesWith(flat);
  }
  llvm::SmallVector<llvm::GlobalVariable *> dead;
  for (llvm::GlobalVariable &g : module.globals())
    if (g.use_empty() && g.getName().empty() && g.hasInitializer() &&
        g.isConstant())
      dead.push_back(&g);
  for (llvm::GlobalVariable *g : dead)
    g->eraseFromParent();
}

LogicalResult tcc::emitMachineCode(llvm::Module &module,
                                   llvm::TargetMachine &machine,
                                   llvm::raw_pwrite_stream &os, bool assembly,
                                   std::string &error) {
  flattenConstantData(module);
  llvm::legacy::PassManager pm;
  auto type = assembly ? llvm::CodeGenFileType::AssemblyFile
                       : llvm::CodeGenFileType::ObjectFile;
  if (machine.addPassesToEmitFile(pm, os, nullptr, type)) {
    error = "the target cannot emit this file type";
    return failure();
  }
  pm.run(module);
  return success();
}

/// Emits `module` as an object into a new temporary file, named in
/// `path`; `error` says what failed.
static void emitTemporaryObject(llvm::Module &module,
                                llvm::TargetMachine &machine, std::string &path,
                                std::string &error) {
  SmallString<128> name;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("tcc", "o", fd, name)) {
    error = "cannot create a temporary object file";
    return;
  }
  path = name.str().str();
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  if (failed(tcc::emitMachineCode(module, machine, os, false, error)))
    return;
  os.close();
  if (os.has_error())
    error = "cannot write '" + path + "': " + os.error().message();
}

LogicalResult tcc::emitObjectsInParallel(
    llvm::Module &module,
    const std::function<std::unique_ptr<llvm::TargetMachine>()> &machines,
    int optLevel, unsigned partitions, std::vector<std::string> &objects,
    std::string &error) {
  // The weights stay in this context, in a module of their own that one
  // thread emits as it is (bitcode would copy them twice, and there is
  // nothing to optimize); the code refers to them as hidden globals.
  auto data = std::make_unique<llvm::Module>("weights", module.getContext());
  data->setDataLayout(module.getDataLayout());
  data->setTargetTriple(module.getTargetTriple());
  const llvm::DataLayout &layout = module.getDataLayout();
  unsigned moved = 0;
  for (llvm::GlobalVariable &g : module.globals()) {
    if (!g.isConstant() || !g.hasInitializer() ||
        layout.getTypeAllocSize(g.getValueType()) < (64 << 10))
      continue;
    if (!g.hasName() || g.hasLocalLinkage())
      g.setName("tcc.weights." + std::to_string(moved));
    auto *copy = new llvm::GlobalVariable(
        *data, g.getValueType(), /*isConstant=*/true,
        llvm::GlobalValue::ExternalLinkage, g.getInitializer(), g.getName());
    copy->setAlignment(g.getAlign().value_or(layout.getPreferredAlign(&g)));
    copy->setVisibility(llvm::GlobalValue::HiddenVisibility);
    copy->setDSOLocal(true);
    g.setInitializer(nullptr);
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
    g.setVisibility(llvm::GlobalValue::HiddenVisibility);
    g.setDSOLocal(true);
    ++moved;
  }
  // Each piece travels as bitcode into a context of its own (an
  // LLVMContext is not shared between threads).
  std::vector<SmallString<0>> pieces;
  llvm::SplitModule(
      module, partitions,
      [&](std::unique_ptr<llvm::Module> piece) {
        llvm::raw_svector_ostream os(pieces.emplace_back());
        llvm::WriteBitcodeToFile(*piece, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  std::vector<std::unique_ptr<llvm::TargetMachine>> targets;
  for (size_t i = 0; i < pieces.size(); ++i) {
    objects.emplace_back();
    targets.push_back(machines());
    if (!targets.back()) {
      error = "cannot create a target machine for a code generation thread";
      return failure();
    }
  }
  std::vector<std::string> errors(pieces.size() + 1);
  std::unique_ptr<llvm::TargetMachine> dataTarget =
      moved ? machines() : nullptr;
  if (moved && !dataTarget) {
    error = "cannot create a target machine for the weights";
    return failure();
  }
  if (moved)
    objects.emplace_back();
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(pieces.size()));
  if (moved)
    pool.async([&] {
      emitTemporaryObject(*data, *dataTarget, objects.back(), errors.back());
    });
  for (size_t i = 0; i < pieces.size(); ++i)
    pool.async([&, i] {
      llvm::LLVMContext context;
      auto piece = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(StringRef(pieces[i].data(), pieces[i].size()),
                                "piece"),
          context);
      if (!piece) {
        errors[i] = llvm::toString(piece.takeError());
        return;
      }
      optimizeLLVMModule(**piece, *targets[i], optLevel);
      addBFloatConversions(**piece);
      emitTemporaryObject(**piece, *targets[i], objects[i], errors[i]);
    });
  pool.wait();
  for (const std::string &e : errors)
    if (!e.empty()) {
      error = e;
      return failure();
    }
  return success();
}
