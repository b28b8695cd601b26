// options.h - tcc-run's command line: its options, usage text and parser.
#ifndef TCC_RUNTIME_TOOLING_OPTIONS_H
#define TCC_RUNTIME_TOOLING_OPTIONS_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc::tooling {

/// A bad command line; tcc-run exits with status 2 on it.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the command line asks for.
struct Options {
  /// The artifact to run (the one positional argument).
  std::string artifact;
  /// --inputs: a test_data_set folder, or a folder of them.
  std::string inputs;
  /// --outputs: where to write the outputs (empty: nowhere).
  std::string outputs;
  /// --compare: the second artifact (empty: none).
  std::string compare;
  /// --device: "cpu" or "cuda", what the artifact must run on (empty:
  /// whatever it was compiled for).
  std::string device;
  bool check = false, json = false, help = false, memoryStats = false,
       profile = false;
  /// --check's tolerances (ONNX's defaults).
  double rtol = 1e-3, atol = 1e-7;
  long bench = 0;             ///< timed runs; 0: no benchmark
  long warmup = 3;            ///< untimed runs before the timed ones
  long threads = 0;           ///< 0: one per online CPU
  uint64_t maxInputBytes = 0; ///< 0: the runtime's default cap
};

/// The text --help prints.
const char *usageText();

/// Parses `args` (without the program name). Returns with `help` set as soon
/// as it meets --help or -h. Throws UsageError, with a message naming the
/// offending argument, on anything it does not accept.
Options parseArgs(const std::vector<std::string> &args);

/// The same for main's arguments (argv[0] is skipped).
Options parseArgs(int argc, char **argv);

/// A positive byte count with an optional binary suffix K, M, G or T, as
/// --max-input-bytes takes it; `flag` names the option in the error.
uint64_t parseSize(const std::string &flag, const std::string &text);

} // namespace tcc::tooling

#endif // TCC_RUNTIME_TOOLING_OPTIONS_H
