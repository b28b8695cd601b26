// options.cc - tcc-run's usage text and argument parser.
#include "tooling/options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>

namespace tcc::tooling {

namespace {

const char kUsage[] = R"(usage: tcc-run ARTIFACT --inputs DIR [options]

Runs a tcc artifact (.so) on an ONNX test_data_set_N folder holding
input_K.pb or input_K.npy, K = 0..n-1 in the artifact's input order. A DIR
holding test_data_set_* folders runs each of them.

options:
  --inputs DIR     the test data folder (required)
  --check          compare outputs with DIR/output_K.pb (or .npy)
  --rtol R         relative tolerance of --check (default 1e-3)
  --atol A         absolute tolerance of --check (default 1e-7)
  --bench N        time N runs and print median, min, p90 and mean
  --warmup W       untimed runs before --bench (default 3)
  --threads T      threads per run (default: the number of online CPUs)
  --device D       cpu or cuda: refuse an artifact compiled for the other
                   (a CUDA artifact runs on GPU 0, a CPU one here)
  --outputs DIR    write the outputs to DIR/output_K.pb
  --json           print one JSON object on stdout instead of text
  --memory-stats   print the allocator's statistics after the runs
  --profile        time each kernel of an artifact compiled with
                   tcc --profile: calls, total and mean ms, share of the
                   kernels' time (over the timed runs with --bench)
  --compare B      with --bench: time artifact B (same inputs and outputs)
                   in the same process, a run of each in turn (ABBA), and
                   print B's times and the median of B/A over the pairs;
                   --check checks B's outputs too
  --max-input-bytes N
                   refuse tensor files larger than N bytes (suffixes K, M,
                   G, T; default 4G)
  --help           print this help

exit status: 0 success, 1 error or failed check, 2 usage error
)";

// A tolerance: finite and not negative (NaN fails !(v >= 0) too).
double parseTolerance(const std::string &flag, const std::string &text) {
  char *end;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || errno || !(v >= 0) || std::isinf(v))
    throw UsageError(flag + " expects a non-negative number, got '" + text +
                     "'");
  return v;
}

// A count of runs or threads; capped at INT32_MAX because the runtime takes
// thread counts as int32_t.
long parseCount(const std::string &flag, const std::string &text) {
  char *end;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < 0 || v > INT32_MAX)
    throw UsageError(flag + " expects a non-negative integer, got '" + text +
                     "'");
  return v;
}

} // namespace

const char *usageText() { return kUsage; }

uint64_t parseSize(const std::string &flag, const std::string &text) {
  int shift = 0;
  std::string digits = text;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    }
    if (shift)
      digits.pop_back();
  }
  char *end;
  errno = 0;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  // strtoull accepts "-1" (as ULLONG_MAX), hence the explicit '-' test.
  if (digits.empty() || *end || errno || digits[0] == '-' || v == 0 ||
      v > (UINT64_MAX >> shift))
    throw UsageError(flag +
                     " expects a positive size such as 4096, 64M or "
                     "4G, got '" +
                     text + "'");
  return static_cast<uint64_t>(v) << shift;
}

Options parseArgs(const std::vector<std::string> &args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      return o;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.artifact.empty())
        throw UsageError("unexpected argument '" + arg +
                         "': only one ARTIFACT");
      o.artifact = arg;
      continue;
    }
    if (arg == "--check" || arg == "--json" || arg == "--memory-stats" ||
        arg == "--profile") {
      (arg == "--check"          ? o.check
       : arg == "--json"         ? o.json
       : arg == "--memory-stats" ? o.memoryStats
                                 : o.profile) = true;
      continue;
    }
    // Flags with a value, as "--flag VALUE" or "--flag=VALUE".
    std::string flag = arg, value;
    bool hasInline = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasInline = true;
    }
    static const char *const valued[] = {
        "--inputs",  "--outputs", "--rtol",    "--atol",
        "--bench",   "--warmup",  "--threads", "--max-input-bytes",
        "--compare", "--device"};
    if (std::find(std::begin(valued), std::end(valued), flag) ==
        std::end(valued))
      throw UsageError("unknown option '" + arg + "'");
    if (!hasInline && i + 1 == args.size())
      throw UsageError(flag + " needs a value");
    if (!hasInline)
      value = args[++i];
    if (flag == "--inputs")
      o.inputs = value;
    else if (flag == "--outputs")
      o.outputs = value;
    else if (flag == "--rtol")
      o.rtol = parseTolerance(flag, value);
    else if (flag == "--atol")
      o.atol = parseTolerance(flag, value);
    else if (flag == "--bench")
      o.bench = parseCount(flag, value);
    else if (flag == "--warmup")
      o.warmup = parseCount(flag, value);
    else if (flag == "--max-input-bytes")
      o.maxInputBytes = parseSize(flag, value);
    else if (flag == "--compare")
      o.compare = value;
    else if (flag == "--device") {
      if (value != "cpu" && value != "cuda")
        throw UsageError("--device expects cpu or cuda, got '" + value + "'");
      o.device = value;
    } else
      o.threads = parseCount(flag, value);
  }
  if (o.artifact.empty())
    throw UsageError("no ARTIFACT given");
  if (o.inputs.empty())
    throw UsageError("--inputs DIR is required");
  if (!o.compare.empty() && o.bench == 0)
    throw UsageError("--compare needs --bench N (the runs to pair)");
  if (!o.compare.empty() && o.profile)
    throw UsageError("--compare and --profile do not go together");
  return o;
}

Options parseArgs(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  return parseArgs(args);
}

} // namespace tcc::tooling
