//===- Link.cpp - linking objects into libraries and executables ----------===//

#include "compiler/Target/Link.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

/// Runs `program` with `args`; its own messages are captured so the error
/// names what failed.
static LogicalResult runProgram(const std::string &program,
                                ArrayRef<std::string> args,
                                std::string &error) {
  SmallVector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  SmallString<128> log;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("tcc-link", "log", fd, log)) {
    error = "cannot create a temporary file for the linker's messages";
    return failure();
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0,
                                     0, &execError);
  if (rc != 0) {
    error = program + " exited with " + std::to_string(rc) +
            (execError.empty() ? "" : ": " + execError);
    if (auto text = llvm::MemoryBuffer::getFile(log))
      error += "\n" + (*text)->getBuffer().trim().str();
  }
  llvm::sys::fs::remove(log);
  return success(rc == 0);
}

/// Runs the system C compiler driver with `args`.
static LogicalResult runDriver(ArrayRef<std::string> args, std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    cc = llvm::sys::findProgramByName("clang-19");
  if (!cc) {
    error = "no C compiler driver (cc) found to link with";
    return failure();
  }
  if (failed(runProgram(*cc, args, error))) {
    error = "linking failed: " + error;
    return failure();
  }
  return success();
}

/// Segments aligned to 2 MiB in the file as in memory, so that the kernel
/// can map a model's weights (its read-only data) with huge pages when the
/// page cache holds them so (Linux with large folios; see docs/compiler.md).
/// The padding between segments is a hole in the file, not disk space, but
/// it shows in the file's size: only for objects of at least kHugeObjects
/// bytes (weights of a few huge pages), so small models stay small.
static const char *const kHugePageSegments = "-Wl,-z,max-page-size=0x200000";
constexpr uint64_t kHugeObjects = uint64_t(4) << 20;

static bool wantsHugePageSegments(ArrayRef<std::string> objects) {
  uint64_t total = 0;
  for (const std::string &o : objects) {
    uint64_t size = 0;
    if (!llvm::sys::fs::file_size(o, size))
      total += size;
  }
  return total >= kHugeObjects;
}

LogicalResult tcc::linkSharedLibrary(ArrayRef<std::string> objects,
                                     StringRef output, std::string &error) {
  std::vector<std::string> args = {"-shared", "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const char *flag : {"-lm", "-Wl,-z,noexecstack"})
    args.push_back(flag);
  if (wantsHugePageSegments(objects))
    args.push_back(kHugePageSegments);
  return runDriver(args, error);
}

LogicalResult tcc::linkExecutable(ArrayRef<std::string> objects,
                                  ArrayRef<std::string> libraries,
                                  StringRef output, std::string &error) {
  std::vector<std::string> args = {"-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), libraries.begin(), libraries.end());
  for (const char *lib : {"-lstdc++", "-lm", "-ldl", "-lpthread"})
    args.push_back(lib);
  if (wantsHugePageSegments(objects))
    args.push_back(kHugePageSegments);
#ifdef TCC_LINK_SANITIZE_FLAGS
  // This tcc's own runtime library is instrumented (a TCC_SANITIZE build).
  args.push_back(TCC_LINK_SANITIZE_FLAGS);
#endif
  return runDriver(args, error);
}

LogicalResult tcc::linkRelocatable(ArrayRef<std::string> objects,
                                   StringRef output, std::string &error) {
  std::vector<std::string> args = {"-r", "-nostdlib", "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  if (failed(runDriver(args, error)))
    return failure();
  // What the objects share only among themselves (hidden symbols: the
  // micro-kernels) becomes local, so that two models' objects link into one
  // program without clashing.
  llvm::ErrorOr<std::string> objcopy = llvm::sys::findProgramByName("objcopy");
  if (!objcopy)
    objcopy = llvm::sys::findProgramByName("llvm-objcopy-19");
  if (!objcopy) {
    error = "no objcopy found to finish the object with";
    return failure();
  }
  return runProgram(*objcopy, {"--localize-hidden", output.str()}, error);
}

/// A CUDA toolkit program: on $PATH, in $CUDA_HOME/bin or in
/// /usr/local/cuda/bin.
static llvm::ErrorOr<std::string> findCudaTool(StringRef name) {
  llvm::ErrorOr<std::string> tool = llvm::sys::findProgramByName(name);
  SmallVector<std::string> places;
  if (const char *home = std::getenv("CUDA_HOME"))
    places.push_back(std::string(home) + "/bin");
  places.push_back("/usr/local/cuda/bin");
  for (const std::string &place : places)
    if (!tool)
      tool = llvm::sys::findProgramByName(name, {place});
  return tool;
}

LogicalResult tcc::assemblePtx(StringRef ptx, StringRef arch,
                               std::string &cubin, std::string &error) {
  cubin.clear();
  llvm::ErrorOr<std::string> ptxas = findCudaTool("ptxas");
  if (!ptxas)
    return success();
  SmallString<128> in, out;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("tcc-kernels", "ptx", fd, in) ||
      llvm::sys::fs::createTemporaryFile("tcc-kernels", "cubin", out)) {
    error = "cannot create temporary files for ptxas";
    return failure();
  }
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
  });
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  if (failed(runProgram(
          *ptxas,
          {"-arch=" + arch.str(), "-O3", in.str().str(), "-o", out.str().str()},
          error))) {
    error = "ptxas refused the kernels' PTX: " + error;
    return failure();
  }
  auto bytes = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!bytes) {
    error = "ptxas wrote no cubin";
    return failure();
  }
  cubin = (*bytes)->getBuffer().str();
  return success();
}

LogicalResult tcc::assembleDeviceCode(StringRef ptx,
                                      ArrayRef<std::string> archs,
                                      std::string &image, std::string &error) {
  image.clear();
  if (archs.size() == 1)
    return assemblePtx(ptx, archs.front(), image, error);
  llvm::ErrorOr<std::string> fatbinary = findCudaTool("fatbinary");
  // The parts: a cubin for each architecture, then the PTX, as files.
  SmallVector<SmallString<128>> files;
  auto cleanup = llvm::make_scope_exit([&] {
    for (const SmallString<128> &file : files)
      llvm::sys::fs::remove(file);
  });
  // A new temporary file holding `bytes`; false (the error set) when
  // none can be made.
  auto write = [&](StringRef bytes, StringRef suffix) -> bool {
    int fd;
    files.emplace_back();
    if (llvm::sys::fs::createTemporaryFile("tcc-kernels", suffix, fd,
                                           files.back())) {
      error = "cannot create temporary files for fatbinary";
      return false;
    }
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    return true;
  };
  std::vector<std::string> args = {"--create=", "-64"};
  for (const std::string &arch : archs) {
    std::string cubin;
    if (failed(assemblePtx(ptx, arch, cubin, error)))
      return failure();
    if (cubin.empty() || !fatbinary)
      return success(); // no ptxas or no fatbinary: the PTX alone
    if (!write(cubin, "cubin"))
      return failure();
    args.push_back("--image3=kind=elf,sm=" + arch.substr(3) +
                   ",file=" + files.back().str().str());
  }
  if (!write(ptx, "ptx"))
    return failure();
  args.push_back("--image3=kind=ptx,sm=" + archs.front().substr(3) +
                 ",file=" + files.back().str().str());
  if (!write("", "fatbin")) // fatbinary's output
    return failure();
  args[0] += files.back().str().str();
  if (failed(runProgram(*fatbinary, args, error))) {
    error = "fatbinary could not pack the kernels: " + error;
    return failure();
  }
  auto bytes = llvm::MemoryBuffer::getFile(files.back(), /*IsText=*/false);
  if (!bytes) {
    error = "fatbinary wrote nothing";
    return failure();
  }
  image = (*bytes)->getBuffer().str();
  return success();
}
