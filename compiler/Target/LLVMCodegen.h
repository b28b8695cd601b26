//===- LLVMCodegen.h - LLVM dialect to machine code, in process -*- C++ -*-===//
//
// Translation of the LLVM dialect to LLVM IR, LLVM's optimization pipeline
// and machine-code emission through a TargetMachine, without running any
// external tool. Heavy LLVM headers stay in the .cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TARGET_LLVMCODEGEN_H
#define TCC_COMPILER_TARGET_LLVMCODEGEN_H

#include "compiler/Conversion/UkernelIsa.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir::tcc {

/// A TargetMachine for the host's triple and `cpu` ("" or "native" means the
/// host CPU and its features), position independent, at -O`optLevel`.
/// Returns null and sets `error` when the CPU is unknown.
std::unique_ptr<llvm::TargetMachine>
createCpuTargetMachine(StringRef cpu, int optLevel, std::string &error);

/// "<triple>:<cpu>", as recorded in artifacts.
std::string describeTarget(const llvm::TargetMachine &machine);

/// Translates a module in the LLVM dialect; diagnostics go to the context.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context,
                                                llvm::TargetMachine &machine);

/// The micro-kernel ISA level (runtime/ukernels) `machine` can run.
UkernelIsa ukernelIsaFor(const llvm::TargetMachine &machine);

/// When `module` calls the micro-kernels, sets `object` to the precompiled
/// kernels it must be linked with (`libDir`/tcc_ukernels_<isa>.o), else
/// clears it. Fails when that file is missing.
LogicalResult findUkernelObject(const llvm::Module &module, StringRef libDir,
                                UkernelIsa isa, std::string &object,
                                std::string &error);

/// Optimizes `module` (as optimizeLLVMModule, then addBFloatConversions)
/// and emits it as object files in `partitions` pieces, one thread each:
/// llvm::SplitModule spreads the functions round-robin by size, locals
/// made hidden globals so the pieces link to one program. `machines` makes
/// a TargetMachine (one a piece, each in its own context). The objects are
/// temporary files the caller links and removes (`objects`, even on
/// failure). Only for linked outputs whose hidden symbols are not seen by
/// other artifacts (a library, an executable, an object whose hidden
/// symbols are made local).
LogicalResult emitObjectsInParallel(
    llvm::Module &module,
    const std::function<std::unique_ptr<llvm::TargetMachine>()> &machines,
    int optLevel, unsigned partitions, std::vector<std::string> &objects,
    std::string &error);

/// Runs LLVM's standard -O`optLevel` pipeline for `machine`.
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        int optLevel);

/// Where `module` computes in bfloat, defines the f32/f64 -> bfloat
/// conversions LLVM's x86 back end may call (__truncsfbf2, __truncdfbf2) as
/// hidden functions of the module: without AVX512-BF16 it promotes bfloat
/// arithmetic to f32 and rounds back through them, and an artifact must not
/// depend on a compiler runtime library being loaded. Call after
/// optimization, which would drop them as unused.
void addBFloatConversions(llvm::Module &module);

/// Emits an object file, or assembly text.
LogicalResult emitMachineCode(llvm::Module &module,
                              llvm::TargetMachine &machine,
                              llvm::raw_pwrite_stream &os, bool assembly,
                              std::string &error);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TARGET_LLVMCODEGEN_H
