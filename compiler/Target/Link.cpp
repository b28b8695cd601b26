//===- Link.cpp - linking objects into libraries and executables ----------===//

#include "compiler/Target/Link.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

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
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    error = "linking failed (" + program + " exited with " + std::to_string(rc) +
            ")" + (execError.empty() ? "" : ": " + execError);
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
  return runProgram(*cc, args, error);
}

LogicalResult tcc::linkSharedLibrary(ArrayRef<std::string> objects,
                                     StringRef output, std::string &error) {
  std::vector<std::string> args = {"-shared", "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const char *flag : {"-lm", "-Wl,-z,noexecstack"})
    args.push_back(flag);
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
