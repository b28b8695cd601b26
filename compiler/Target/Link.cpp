//===- Link.cpp - linking objects into libraries and executables ----------===//

#include "compiler/Target/Link.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

using namespace mlir;

/// Runs the system C compiler driver with `args`; its own messages are
/// captured so the error names what failed.
static LogicalResult runDriver(ArrayRef<std::string> args, std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    cc = llvm::sys::findProgramByName("clang-19");
  if (!cc) {
    error = "no C compiler driver (cc) found to link with";
    return failure();
  }
  SmallVector<StringRef> argv = {*cc};
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
  int rc = llvm::sys::ExecuteAndWait(*cc, argv, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    error = "linking failed (" + *cc + " exited with " + std::to_string(rc) +
            ")" + (execError.empty() ? "" : ": " + execError);
    if (auto text = llvm::MemoryBuffer::getFile(log))
      error += "\n" + (*text)->getBuffer().trim().str();
  }
  llvm::sys::fs::remove(log);
  return success(rc == 0);
}

LogicalResult tcc::linkSharedLibrary(StringRef object, StringRef output,
                                     std::string &error) {
  return runDriver({"-shared", "-o", output.str(), object.str(), "-lm",
                    "-Wl,-z,noexecstack"},
                   error);
}

LogicalResult tcc::linkExecutable(StringRef object,
                                  ArrayRef<std::string> libraries,
                                  StringRef output, std::string &error) {
  std::vector<std::string> args = {"-o", output.str(), object.str()};
  args.insert(args.end(), libraries.begin(), libraries.end());
  for (const char *lib : {"-lstdc++", "-lm", "-ldl", "-lpthread"})
    args.push_back(lib);
  return runDriver(args, error);
}
