//===- tcc.cpp - the tcc compiler driver ----------------------------------===//
//
// tcc MODEL -o OUT: compiles an ONNX (or tcc .mlir) model into a shared
// library (OUT.so + OUT.h), an object (OUT.o + OUT.h) or an executable (OUT);
// --emit=STAGE stops early and writes that stage's IR. All the work is in
// compiler/Driver; this file only reads the command line.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/UkernelIsa.h"
#include "compiler/Driver/Driver.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("tcc options");

static cl::opt<std::string>
    input(cl::Positional, cl::Required,
          cl::desc("<model.onnx | model.onnxtxt | model.mlir>"),
          cl::cat(category));
static cl::opt<std::string>
    output("o",
           cl::desc("Output: OUT.so (library + header), OUT.o (object + "
                    "header), OUT (executable), or - for text stages"),
           cl::value_desc("file"), cl::cat(category));
static cl::opt<tcc::EmitKind> emit(
    "emit", cl::desc("Stop at a stage and write it"),
    cl::values(
        clEnumValN(tcc::EmitKind::Import, "import",
                   "tcc dialect as imported, before any pass"),
        clEnumValN(tcc::EmitKind::Tcc, "tcc",
                   "tcc dialect after graph passes (fusion groups)"),
        clEnumValN(tcc::EmitKind::Linalg, "linalg", "linalg on tensors"),
        clEnumValN(tcc::EmitKind::LLVMDialect, "llvm-dialect", "LLVM dialect"),
        clEnumValN(tcc::EmitKind::Ptx, "ptx",
                   "the kernels' PTX (--target=cuda)"),
        clEnumValN(tcc::EmitKind::LLVMIR, "llvm-ir", "LLVM IR"),
        clEnumValN(tcc::EmitKind::Asm, "asm", "assembly"),
        clEnumValN(tcc::EmitKind::Object, "obj", "object file + header"),
        clEnumValN(tcc::EmitKind::Library, "lib", "shared library + header"),
        clEnumValN(tcc::EmitKind::Executable, "exe", "standalone executable")),
    cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Target device: cpu, or cuda (NVIDIA GPUs: PTX kernels, "
                    "cuBLAS, host code for this CPU)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("GPU architecture for --target=cuda: sm_80, sm_86, "
                      "sm_89 or sm_90 (default sm_90), or a list of them "
                      "(sm_80,sm_90: a cubin for each, the PTX for the "
                      "oldest); emulate runs the kernels on this CPU (a "
                      "check of the CUDA path without a GPU)"),
             cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string>
    mcpu("mcpu", cl::desc("CPU to generate code for (default: the host)"),
         cl::init("native"), cl::cat(category));
enum OptLevel { O0, O1, O2, O3 };
static cl::opt<OptLevel>
    optLevel(cl::desc("Optimization level"),
             cl::values(clEnumVal(O0, "none"), clEnumVal(O1, "some"),
                        clEnumVal(O2, "more"), clEnumVal(O3, "all (default)")),
             cl::init(O3), cl::cat(category));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Set an input's shape, e.g. input=1x3x224x224; a dimension "
             "given as ? or a name (batchx3x224x224) is dynamic"),
    cl::value_desc("NAME=DxDx..."), cl::cat(category));
static cl::list<std::string>
    dimBounds("dim",
              cl::desc("Bound a dynamic dimension, e.g. batch=1..64 "
                       "(default 1..2147483647)"),
              cl::value_desc("NAME=MIN..MAX"), cl::cat(category));
static cl::opt<std::string>
    name("name",
         cl::desc("Symbol prefix of the exported <name>_artifact_get "
                  "(default: from the output file name)"),
         cl::cat(category));
static cl::opt<std::string> ukernels(
    "ukernels",
    cl::desc("Micro-kernels for matmuls and convolutions: auto (the best "
             "the target CPU runs), none, generic, avx2 or avx512"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> memoryReport(
    "memory-report",
    cl::desc("Print the memory plan (each buffer's size, live range and "
             "offset in the arena, then the totals); =json for JSON"),
    cl::ValueOptional, cl::value_desc("text|json"), cl::cat(category));
static cl::opt<bool> kernelStats(
    "kernel-stats",
    cl::desc("Print the number of ops after import and of kernels after "
             "fusion"),
    cl::cat(category));
static cl::opt<bool> timings(
    "timings",
    cl::desc("Print how long each pass and each code generation step took "
             "(on stderr)"),
    cl::cat(category));
static cl::opt<bool>
    profile("profile",
            cl::desc("Let the artifact time each kernel through the caller's "
                     "profiler (tcc-run --profile)"),
            cl::cat(category));
static cl::opt<std::string> maxElements(
    "max-elements",
    cl::desc("Refuse a model with a tensor of more elements than this "
             "(default 2G = 2^31; suffixes K, M, G, T)"),
    cl::value_desc("N"), cl::init("2G"), cl::cat(category));
static cl::opt<std::string> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("Refuse a model with a tensor of more bytes than this "
             "(default 4G; suffixes K, M, G, T)"),
    cl::value_desc("N"), cl::init("4G"), cl::cat(category));
static cl::opt<unsigned> compileJobs(
    "jobs",
    cl::desc("Optimize and generate the machine code of a library or "
             "executable in N pieces at once (default: the machine's cores, "
             "at most 8; 1: in one piece)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool>
    printDebugInfo("print-debuginfo",
                   cl::desc("Print locations (ONNX node names) in IR output"),
                   cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tcc " << TCC_VERSION_STRING << "\n";
  });
  // Usage errors (unknown flags, bad values) exit with 2.
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "tcc: ahead-of-time tensor compiler\n\n"
                                   "  tcc model.onnx -o model.so\n",
                                   &llvm::errs()))
    return 2;
  auto usage = [](const llvm::Twine &msg) {
    llvm::errs() << "error: " << msg << " (see tcc --help)\n";
    return 2;
  };
  bool textStage = emit.getNumOccurrences() && emit != tcc::EmitKind::Object &&
                   emit != tcc::EmitKind::Library &&
                   emit != tcc::EmitKind::Executable;
  if (output.empty() && !textStage)
    return usage("no output file: give -o OUT (OUT.so, OUT.o or OUT) or "
                 "--emit=STAGE");
  if (target != "cpu" && target != "cuda")
    return usage("unknown --target '" + target + "' (available: cpu, cuda)");
  // One architecture, or several (sm_80,sm_90): a cubin for each.
  static const char *const archs[] = {"sm_80", "sm_86", "sm_89", "sm_90"};
  std::string cudaArchs = cudaArch;
  if (cudaArch != "emulate") {
    llvm::SmallVector<llvm::StringRef> list;
    llvm::StringRef(cudaArch).split(list, ',');
    for (llvm::StringRef arch : list) {
      if (arch == "emulate")
        return usage("--cuda-arch=emulate takes no other architecture");
      if (!llvm::is_contained(archs, arch))
        return usage("unknown --cuda-arch '" + arch +
                     "' (available: sm_80, sm_86, sm_89, sm_90, a list of "
                     "them such as sm_80,sm_90, or emulate)");
    }
    // Oldest first, each once: sm_90,sm_80 is sm_80,sm_90.
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
    cudaArchs = llvm::join(list, ",");
  }
  if (cudaArch.getNumOccurrences() && target != "cuda")
    return usage("--cuda-arch needs --target=cuda");

  tcc::CompileOptions options;
  options.inputPath = input;
  options.outputPath = output;
  if (emit.getNumOccurrences())
    options.emit = emit;
  options.mcpu = mcpu;
  options.target = target;
  options.cudaArch = cudaArchs;
  options.optLevel = optLevel;
  options.printDebugInfo = printDebugInfo;
  options.stats = kernelStats;
  options.timings = timings;
  if (compileJobs > 256)
    return usage("--jobs " + llvm::Twine(compileJobs.getValue()) +
                 " is more than 256 pieces");
  options.jobs = compileJobs;
  options.profile = profile;
  options.name = name;
  if (ukernels != "auto" && !mlir::tcc::parseUkernelIsa(ukernels))
    return usage("unknown --ukernels '" + ukernels + "'");
  options.ukernels = ukernels;
  if (memoryReport.getNumOccurrences()) {
    if (!memoryReport.empty() && memoryReport != "text" &&
        memoryReport != "json")
      return usage("--memory-report takes text or json, not '" + memoryReport +
                   "'");
    options.memoryReport =
        memoryReport.empty() ? std::string("text") : memoryReport.getValue();
  }
  if (!tcc::parseSize(maxElements, options.maxElements))
    return usage("invalid --max-elements '" + maxElements +
                 "' (expected a positive count such as 4096, 64M or 4G)");
  if (!tcc::parseSize(maxTensorBytes, options.maxTensorBytes))
    return usage("invalid --max-tensor-bytes '" + maxTensorBytes +
                 "' (expected a positive size such as 4096, 64M or 4G)");
  if (!name.empty() && (!llvm::all_of(name, [](char c) {
        return llvm::isAlnum(c) || c == '_';
      }) || llvm::isDigit(name[0])))
    return usage("--name '" + name + "' is not a C identifier");
  for (const std::string &spec : inputShapes) {
    auto [inputName, dims] = llvm::StringRef(spec).rsplit('=');
    llvm::SmallVector<int64_t> shape;
    llvm::SmallVector<std::string> names;
    if (inputName.empty() || dims.data() == nullptr ||
        !tcc::parseShape(dims, shape, names) ||
        !options.inputShapes.try_emplace(inputName, shape).second)
      return usage("invalid or repeated --input-shape '" + spec +
                   "' (expected NAME=DxDx..., a D a size, ? or a name)");
    options.inputDimNames[inputName] = names;
  }
  for (const std::string &spec : dimBounds) {
    std::string dimName;
    int64_t lo, hi;
    if (!tcc::parseDimBounds(spec, dimName, lo, hi) ||
        !options.dimBounds.try_emplace(dimName, lo, hi).second)
      return usage("invalid or repeated --dim '" + spec +
                   "' (expected NAME=MIN..MAX, 1 <= MIN <= MAX < 2^31)");
  }
  // What artifacts link in (the runtime's static libraries and the
  // micro-kernels), found from where this tcc is: <prefix>/lib/tcc when
  // installed, the build's lib/ otherwise.
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&main);
  llvm::SmallString<256> libDir =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(libDir, "lib");
  llvm::SmallString<256> installed(libDir);
  llvm::sys::path::append(installed, "tcc", "tcc_ukernels_generic.o");
  if (llvm::sys::fs::exists(installed))
    llvm::sys::path::append(libDir, "tcc");
  options.libDir = libDir.str().str();
  // TorchScript files go to the torch frontend in tcc's Python package:
  // <prefix>/lib/tcc/python installed, the build's python/ otherwise.
  llvm::SmallString<256> package(libDir);
  if (llvm::sys::path::filename(libDir) != "tcc")
    llvm::sys::path::remove_filename(package);
  llvm::sys::path::append(package, "python");
  options.pythonPackageDir = package.str().str();
  options.python = TCC_PYTHON_PATH;

  MLIRContext context(MLIRContext::Threading::DISABLED);
  return mlir::failed(tcc::compile(context, options)) ? 1 : 0;
}
