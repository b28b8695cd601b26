// tcc-run: runs a compiled tcc artifact on ONNX test_data_set folders,
// compares its outputs with the expected ones and measures its latency
// (see docs/tcc-run.md). The work is done by the tooling library
// (runtime/tooling); this is the command line around it.
#include "tooling/options.h"
#include "tooling/run.h"

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
  using namespace tcc::tooling;
  Options options;
  try {
    options = parseArgs(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "tcc-run: error: %s\nrun 'tcc-run --help' for usage\n",
                 e.what());
    return 2;
  }
  if (options.help) {
    std::fputs(usageText(), stdout);
    return 0;
  }
  try {
    return run(options);
  } catch (const std::exception &e) {
    // tcc::Error, UserError, and filesystem errors all name what was wrong.
    std::fprintf(stderr, "tcc-run: error: %s\n", e.what());
    return 1;
  }
}
