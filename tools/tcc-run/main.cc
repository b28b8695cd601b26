// tcc-run: runs a compiled tcc artifact on ONNX test_data_set folders,
// compares its outputs with the expected ones and measures its latency.
// It is a client of libtccrt's public API only.
#include "tcc/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace fs = std::filesystem;

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

/// A bad command line: exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Bad input data or files: exit status 1.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string artifact, inputs, outputs, compare;
  bool check = false, json = false, help = false, memoryStats = false,
       profile = false;
  double rtol = 1e-3, atol = 1e-7;
  long bench = 0, warmup = 3, threads = 0;
  uint64_t maxInputBytes = 0; // 0: the runtime's default cap
};

// A positive byte count with an optional K, M, G or T (binary) suffix.
uint64_t parseSize(const std::string &flag, const std::string &text) {
  int shift = 0;
  std::string digits = text;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    }
    if (shift)
      digits.pop_back();
  }
  char *end;
  errno = 0;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  if (digits.empty() || *end || errno || digits[0] == '-' || v == 0 ||
      v > (UINT64_MAX >> shift))
    throw UsageError(flag + " expects a positive size such as 4096, 64M or "
                            "4G, got '" + text + "'");
  return static_cast<uint64_t>(v) << shift;
}

template <typename T> T parseNumber(const std::string &flag, const char *text);
template <> double parseNumber(const std::string &flag, const char *text) {
  char *end;
  errno = 0;
  double v = std::strtod(text, &end);
  if (!*text || *end || errno || !(v >= 0) || std::isinf(v))
    throw UsageError(flag + " expects a non-negative number, got '" + text +
                     "'");
  return v;
}
template <> long parseNumber(const std::string &flag, const char *text) {
  char *end;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (!*text || *end || errno || v < 0 || v > INT32_MAX)
    throw UsageError(flag + " expects a non-negative integer, got '" + text +
                     "'");
  return v;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
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
    std::string flag = arg, inlineValue;
    bool hasInline = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      inlineValue = arg.substr(eq + 1);
      hasInline = true;
    }
    static const char *const valued[] = {
        "--inputs", "--outputs", "--rtol",    "--atol",
        "--bench",  "--warmup",  "--threads", "--max-input-bytes",
        "--compare"};
    if (std::find(std::begin(valued), std::end(valued), flag) ==
        std::end(valued))
      throw UsageError("unknown option '" + arg + "'");
    if (!hasInline && i + 1 == argc)
      throw UsageError(flag + " needs a value");
    const char *value = hasInline ? inlineValue.c_str() : argv[++i];
    if (flag == "--inputs")
      o.inputs = value;
    else if (flag == "--outputs")
      o.outputs = value;
    else if (flag == "--rtol")
      o.rtol = parseNumber<double>(flag, value);
    else if (flag == "--atol")
      o.atol = parseNumber<double>(flag, value);
    else if (flag == "--bench")
      o.bench = parseNumber<long>(flag, value);
    else if (flag == "--warmup")
      o.warmup = parseNumber<long>(flag, value);
    else if (flag == "--max-input-bytes")
      o.maxInputBytes = parseSize(flag, value);
    else if (flag == "--compare")
      o.compare = value;
    else
      o.threads = parseNumber<long>(flag, value);
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

//===----------------------------------------------------------------------===//
// Formatting
//===----------------------------------------------------------------------===//

std::string describe(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string s = std::string(tcc_dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> shapeOf(const tcc_tensor_desc_t &d) {
  return std::vector<int64_t>(d.shape, d.shape + d.rank);
}

std::string format(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', static_cast<char>(c)};
    else if (c < 0x20)
      out += format("\\u%04x", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

// JSON has no infinities or NaN: those become the strings "inf", "-inf" and
// "nan".
std::string jsonNumber(double v) {
  return std::isfinite(v) ? format("%.17g", v) : jsonString(format("%g", v));
}

using JsonFields = std::vector<std::pair<std::string, std::string>>;

std::string jsonObject(const JsonFields &fields) {
  std::string out = "{";
  for (const auto &[key, value] : fields)
    out += (out.size() > 1 ? "," : "") + jsonString(key) + ":" + value;
  return out + "}";
}

std::string jsonArray(const std::vector<std::string> &items) {
  std::string out = "[";
  for (const std::string &item : items)
    out += (out.size() > 1 ? "," : "") + item;
  return out + "]";
}

std::string jsonShape(const std::vector<int64_t> &shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape)
    dims.push_back(std::to_string(d));
  return jsonArray(dims);
}

std::string jsonTensorDesc(const tcc_tensor_desc_t &d) {
  return jsonObject({{"name", jsonString(d.name)},
                     {"dtype", jsonString(tcc_dtype_name(d.dtype))},
                     {"shape", jsonShape(shapeOf(d))}});
}

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

bool isFloat(int32_t dtype) {
  return dtype == TCC_DTYPE_F16 || dtype == TCC_DTYPE_BF16 ||
         dtype == TCC_DTYPE_F32 || dtype == TCC_DTYPE_F64;
}

template <typename T> T load(const tcc::Tensor &t, int64_t i) {
  T v;
  std::memcpy(&v, t.data<char>() + i * sizeof(T), sizeof(T));
  return v;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) { // zero or subnormal
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exponent == 0x1f
                      ? sign | 0x7f800000u | mantissa << 13
                      : sign | (exponent + 112) << 23 | mantissa << 13;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double floatAt(const tcc::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case TCC_DTYPE_F16:
    return halfToFloat(load<uint16_t>(t, i));
  case TCC_DTYPE_BF16: {
    uint32_t bits = static_cast<uint32_t>(load<uint16_t>(t, i)) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  case TCC_DTYPE_F32:
    return load<float>(t, i);
  }
  return load<double>(t, i);
}

// Wide enough for every integer dtype, u64 and i64 alike, so that integers
// compare exactly.
using Wide = __int128;

Wide intAt(const tcc::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case TCC_DTYPE_U8:
  case TCC_DTYPE_BOOL:
    return load<uint8_t>(t, i);
  case TCC_DTYPE_I8:
    return load<int8_t>(t, i);
  case TCC_DTYPE_U16:
    return load<uint16_t>(t, i);
  case TCC_DTYPE_I16:
    return load<int16_t>(t, i);
  case TCC_DTYPE_I32:
    return load<int32_t>(t, i);
  case TCC_DTYPE_U32:
    return load<uint32_t>(t, i);
  case TCC_DTYPE_I64:
    return load<int64_t>(t, i);
  }
  return load<uint64_t>(t, i);
}

std::string valueAt(const tcc::Tensor &t, int64_t i) {
  if (isFloat(t.dtype()))
    return format(t.dtype() == TCC_DTYPE_F64 ? "%.17g" : "%.9g", floatAt(t, i));
  Wide v = intAt(t, i);
  return v < 0 ? std::to_string(static_cast<int64_t>(v))
               : std::to_string(static_cast<uint64_t>(v));
}

// "[1,2]": the position of flat index i in a row-major tensor.
std::vector<int64_t> position(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> pos(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    pos[d] = i % shape[d];
    i /= shape[d];
  }
  return pos;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

struct CheckResult {
  bool pass = true;
  std::string reason; // set when the types differ and nothing was compared
  double maxAbs = 0, maxRel = 0;
  int64_t mismatches = 0, elements = 0;
  int64_t first = -1; // flat index of the first mismatch
  std::string actual, expected;
};

// |a - b| <= atol + rtol * |b|, except that NaN matches only NaN and an
// infinity only the same infinity; integers and bools must be equal.
CheckResult compare(const tcc::Tensor &actual, const tcc::Tensor &expected,
                    const std::string &expectedFile, const Options &o) {
  CheckResult r;
  std::string a = describe(actual.dtype(), actual.shape());
  std::string e = describe(expected.dtype(), expected.shape());
  if (a != e) {
    r.pass = false;
    r.reason =
        std::string(actual.dtype() != expected.dtype() ? "dtype" : "shape") +
        " mismatch: the output is " + a + ", " + expectedFile + " holds " + e;
    return r;
  }
  r.elements = actual.elementCount();
  bool floats = isFloat(actual.dtype());
  for (int64_t i = 0; i < r.elements; ++i) {
    double abs, rel;
    bool ok;
    if (floats) {
      double x = floatAt(actual, i), y = floatAt(expected, i);
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
        ok = (std::isnan(x) && std::isnan(y)) || x == y;
        abs = rel = ok ? 0 : INFINITY;
      } else {
        abs = std::fabs(x - y);
        rel = abs == 0 ? 0 : abs / std::fabs(y); // inf when y is 0
        ok = abs <= o.atol + o.rtol * std::fabs(y);
      }
    } else {
      Wide x = intAt(actual, i), y = intAt(expected, i);
      ok = x == y;
      abs = static_cast<double>(x > y ? x - y : y - x);
      rel = abs == 0 ? 0 : abs / std::fabs(static_cast<double>(y));
    }
    r.maxAbs = std::max(r.maxAbs, abs);
    r.maxRel = std::max(r.maxRel, rel);
    if (ok)
      continue;
    if (r.mismatches++ == 0) {
      r.first = i;
      r.actual = valueAt(actual, i);
      r.expected = valueAt(expected, i);
    }
  }
  r.pass = r.mismatches == 0;
  return r;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

struct BenchResult {
  long runs = 0, warmup = 0;
  double medianMs = 0, minMs = 0, p90Ms = 0, meanMs = 0;
};

/// --compare: the second artifact's runs, paired with the first's.
struct CompareResult {
  BenchResult bench;
  double medianRatio = 0; // of B's time over A's, pair by pair
  long bFaster = 0;       // pairs in which B took less time
  std::vector<CheckResult> checks; // B's outputs, with --check
};

struct SetResult {
  fs::path dir;
  double latencyMs = 0;
  std::vector<tcc::Tensor> outputs;
  std::vector<CheckResult> checks; // with --check
  bool benched = false;
  BenchResult bench;
  bool compared = false;
  CompareResult compare;
};

/// The other artifact of --compare, with its own context and memory.
struct Other {
  tcc::Model model;
  tcc::Context context;
};

// The set folders DIR stands for: its test_data_set_* subfolders, in
// numeric order, or DIR itself.
std::vector<fs::path> findSets(const fs::path &dir) {
  if (!fs::is_directory(dir))
    throw UserError("'" + dir.string() + "' is not a directory");
  std::vector<fs::path> sets;
  for (const fs::directory_entry &e : fs::directory_iterator(dir))
    if (e.is_directory() &&
        e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end(), [](const fs::path &a, const fs::path &b) {
    std::string x = a.filename().string(), y = b.filename().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  if (sets.empty())
    sets.push_back(dir);
  return sets;
}

// DIR/<kind>_K.pb, else DIR/<kind>_K.npy; empty if neither exists.
fs::path findTensorFile(const fs::path &dir, const char *kind, uint32_t k) {
  for (const char *ext : {".pb", ".npy"}) {
    fs::path p = dir / (std::string(kind) + "_" + std::to_string(k) + ext);
    if (fs::exists(p))
      return p;
  }
  return {};
}

// How many K have an input_K.pb or input_K.npy in `dir`.
size_t countInputFiles(const fs::path &dir) {
  std::vector<std::string> ks;
  for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
    std::string stem = e.path().stem().string(), ext = e.path().extension();
    if ((ext == ".pb" || ext == ".npy") && stem.rfind("input_", 0) == 0 &&
        stem.size() > 6 &&
        stem.find_first_not_of("0123456789", 6) == std::string::npos)
      ks.push_back(stem);
  }
  std::sort(ks.begin(), ks.end());
  return std::unique(ks.begin(), ks.end()) - ks.begin();
}

std::vector<tcc::Tensor> loadInputs(const tcc::Model &model,
                                    const fs::path &dir, const Options &o) {
  size_t files = countInputFiles(dir);
  if (files != model.numInputs())
    throw UserError("'" + dir.string() + "' holds " + std::to_string(files) +
                    " input files, the artifact takes " +
                    std::to_string(model.numInputs()) + " inputs");
  std::vector<tcc::Tensor> inputs;
  for (uint32_t k = 0; k < model.numInputs(); ++k) {
    const tcc_tensor_desc_t &d = model.input(k);
    fs::path file = findTensorFile(dir, "input", k);
    if (file.empty())
      throw UserError("'" + dir.string() + "' has no input_" +
                      std::to_string(k) + ".pb or .npy for input " +
                      std::to_string(k) + " '" + d.name + "'");
    tcc::Tensor t = tcc::Tensor::load(file, o.maxInputBytes);
    std::string want = describe(d.dtype, shapeOf(d));
    std::string got = describe(t.dtype(), t.shape());
    if (want != got)
      throw UserError(file.string() + ": input " + std::to_string(k) + " '" +
                      d.name + "' expects " + want + ", the file holds " + got);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

double elapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Per-kernel times from the artifact's profile points (tcc --profile).
struct Profiler {
  struct Kernel {
    std::string name;
    int64_t calls = 0;
    double totalMs = 0;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<Kernel> kernels;

  static void callback(void *user, int64_t kernel, const char *name,
                       int32_t end) {
    auto now = std::chrono::steady_clock::now();
    auto &p = *static_cast<Profiler *>(user);
    if (kernel < 0)
      return;
    if (static_cast<size_t>(kernel) >= p.kernels.size())
      p.kernels.resize(kernel + 1);
    Kernel &k = p.kernels[kernel];
    if (!end) {
      k.start = now;
      if (k.name.empty() && name)
        k.name = name;
      return;
    }
    ++k.calls;
    k.totalMs +=
        std::chrono::duration<double, std::milli>(now - k.start).count();
  }
  /// Forgets what was measured (before the timed runs).
  void reset() {
    for (Kernel &k : kernels)
      k.calls = 0, k.totalMs = 0;
  }
  double totalMs() const {
    double t = 0;
    for (const Kernel &k : kernels)
      t += k.totalMs;
    return t;
  }
  /// Kernel indices by total time, largest first.
  std::vector<size_t> order() const {
    std::vector<size_t> idx(kernels.size());
    for (size_t i = 0; i < idx.size(); ++i)
      idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return kernels[a].totalMs > kernels[b].totalMs;
    });
    return idx;
  }
};
Profiler *activeProfiler = nullptr;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

BenchResult summarize(std::vector<double> ms, const Options &o) {
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  BenchResult b{o.bench, o.warmup};
  b.medianMs = median(ms);
  b.minMs = ms.front();
  b.p90Ms = ms[(n * 9 + 9) / 10 - 1]; // nearest rank
  for (double m : ms)
    b.meanMs += m / n;
  return b;
}

BenchResult bench(tcc::Context &context, const std::vector<tcc::Tensor> &in,
                  const std::vector<tcc::Tensor> &out, const Options &o) {
  for (long i = 0; i < o.warmup; ++i)
    context.run(in, out);
  if (activeProfiler)
    activeProfiler->reset();
  std::vector<double> ms;
  for (long i = 0; i < o.bench; ++i) {
    auto start = std::chrono::steady_clock::now();
    context.run(in, out);
    ms.push_back(elapsedMs(start));
  }
  return summarize(ms, o);
}

/// A's and B's runs in turn (A B B A A B ...: neither always goes first),
/// after the warm-up runs of both. On a machine whose speed drifts (a VM
/// sharing its cores), a pair's two runs see the same machine, so the
/// median of their ratios is steadier than the ratio of two medians taken
/// one after the other.
BenchResult benchPaired(tcc::Context &a, const std::vector<tcc::Tensor> &in,
                        const std::vector<tcc::Tensor> &outA, Other &b,
                        const std::vector<tcc::Tensor> &outB,
                        const Options &o, CompareResult &cmp) {
  for (long i = 0; i < o.warmup; ++i) {
    a.run(in, outA);
    b.context.run(in, outB);
  }
  std::vector<double> msA, msB, ratios;
  for (long i = 0; i < o.bench; ++i) {
    double t[2];
    for (int k = 0; k < 2; ++k) {
      const bool runA = (k == 0) == (i % 2 == 0);
      auto start = std::chrono::steady_clock::now();
      if (runA)
        a.run(in, outA);
      else
        b.context.run(in, outB);
      t[runA ? 0 : 1] = elapsedMs(start);
    }
    msA.push_back(t[0]);
    msB.push_back(t[1]);
    ratios.push_back(t[1] / t[0]);
    cmp.bFaster += t[1] < t[0];
  }
  cmp.bench = summarize(msB, o);
  cmp.medianRatio = median(ratios);
  return summarize(msA, o);
}

/// Tensors for the model's outputs, named as they are.
std::vector<tcc::Tensor> makeOutputs(const tcc::Model &model) {
  std::vector<tcc::Tensor> outputs;
  for (uint32_t k = 0; k < model.numOutputs(); ++k) {
    const tcc_tensor_desc_t &d = model.output(k);
    outputs.push_back(tcc::Tensor::create(d.dtype, shapeOf(d)));
    outputs.back().setName(d.name);
  }
  return outputs;
}

SetResult runSet(const tcc::Model &model, tcc::Context &context,
                 const fs::path &dir, const fs::path &outDir,
                 const Options &o, Other *other) {
  SetResult r;
  r.dir = dir;
  std::vector<tcc::Tensor> inputs = loadInputs(model, dir, o);
  r.outputs = makeOutputs(model);
  auto start = std::chrono::steady_clock::now();
  context.run(inputs, r.outputs);
  r.latencyMs = elapsedMs(start);

  // Loaded once: --compare checks B's outputs against them too.
  std::vector<tcc::Tensor> expected;
  std::vector<std::string> expectedNames;
  for (uint32_t k = 0; o.check && k < model.numOutputs(); ++k) {
    fs::path file = findTensorFile(dir, "output", k);
    if (file.empty())
      throw UserError("'" + dir.string() + "' has no output_" +
                      std::to_string(k) + ".pb or .npy to check output " +
                      std::to_string(k) + " '" + model.output(k).name +
                      "' against");
    expected.push_back(tcc::Tensor::load(file, o.maxInputBytes));
    expectedNames.push_back(file.filename().string());
    r.checks.push_back(
        compare(r.outputs[k], expected.back(), expectedNames.back(), o));
  }
  if (other) {
    std::vector<tcc::Tensor> outB = makeOutputs(model);
    r.bench = benchPaired(context, inputs, r.outputs, *other, outB, o,
                          r.compare);
    r.benched = r.compared = true;
    for (size_t k = 0; k < expected.size(); ++k)
      r.compare.checks.push_back(
          compare(outB[k], expected[k], expectedNames[k], o));
  } else if (o.bench) {
    r.bench = bench(context, inputs, r.outputs, o);
    r.benched = true;
  }
  if (!outDir.empty()) {
    fs::create_directories(outDir);
    for (uint32_t k = 0; k < model.numOutputs(); ++k)
      r.outputs[k].save(outDir / ("output_" + std::to_string(k) + ".pb"));
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

std::string joinPosition(const std::vector<int64_t> &pos) {
  std::string s = "[";
  for (size_t i = 0; i < pos.size(); ++i)
    s += (i ? "," : "") + std::to_string(pos[i]);
  return s + "]";
}

void printText(const tcc::Model &model, const tcc::Context &context,
               const Options &o, const std::vector<SetResult> &sets,
               const tcc::Allocator *memory) {
  std::printf("artifact %s: model '%s', target %s, tcc %s, %d threads\n",
              o.artifact.c_str(), model.name().c_str(), model.target().c_str(),
              model.version().c_str(), context.numThreads());
  for (const SetResult &s : sets) {
    std::printf("%s: latency %.3f ms\n", s.dir.string().c_str(), s.latencyMs);
    for (uint32_t k = 0; k < s.outputs.size(); ++k) {
      const tcc::Tensor &t = s.outputs[k];
      std::printf("  output %u '%s' %s", k, model.output(k).name,
                  describe(t.dtype(), t.shape()).c_str());
      if (!s.checks.empty()) {
        const CheckResult &c = s.checks[k];
        std::printf(": %s", c.pass ? "PASS" : "FAIL");
        if (!c.reason.empty()) {
          std::printf("  %s\n", c.reason.c_str());
          continue;
        }
        std::printf("  max_abs_err=%.3g max_rel_err=%.3g mismatches=%" PRId64
                    "/%" PRId64,
                    c.maxAbs, c.maxRel, c.mismatches, c.elements);
        if (c.first >= 0)
          std::printf("  first at %s (index %" PRId64 "): got %s, expected %s",
                      joinPosition(position(t.shape(), c.first)).c_str(),
                      c.first, c.actual.c_str(), c.expected.c_str());
      } else if (!s.benched) {
        // A preview of the values.
        const int64_t shown = std::min<int64_t>(t.elementCount(), 8);
        std::printf(" = [");
        for (int64_t i = 0; i < shown; ++i)
          std::printf("%s%s", i ? ", " : "", valueAt(t, i).c_str());
        std::printf("%s]", shown < t.elementCount() ? ", ..." : "");
      }
      std::printf("\n");
    }
    if (s.benched)
      std::printf("  bench: %ld runs (%ld warmup): median_ms=%.4f min_ms=%.4f "
                  "p90_ms=%.4f mean_ms=%.4f\n",
                  s.bench.runs, s.bench.warmup, s.bench.medianMs, s.bench.minMs,
                  s.bench.p90Ms, s.bench.meanMs);
    if (s.compared) {
      const CompareResult &c = s.compare;
      for (size_t k = 0; k < c.checks.size(); ++k)
        std::printf("  compare output %zu: %s  max_abs_err=%.3g "
                    "max_rel_err=%.3g mismatches=%" PRId64 "/%" PRId64 "\n",
                    k, c.checks[k].pass ? "PASS" : "FAIL", c.checks[k].maxAbs,
                    c.checks[k].maxRel, c.checks[k].mismatches,
                    c.checks[k].elements);
      std::printf("  compare %s: median_ms=%.4f min_ms=%.4f p90_ms=%.4f "
                  "mean_ms=%.4f\n",
                  o.compare.c_str(), c.bench.medianMs, c.bench.minMs,
                  c.bench.p90Ms, c.bench.meanMs);
      std::printf("  compare: B/A median of %ld paired runs %.4f, B faster "
                  "in %ld\n",
                  c.bench.runs, c.medianRatio, c.bFaster);
    }
  }
  if (memory)
    std::printf("%s", memory->summary().c_str());
  if (activeProfiler) {
    const Profiler &p = *activeProfiler;
    const double total = p.totalMs();
    std::printf("profile: %zu kernels, %.4f ms a run in kernels\n",
                p.kernels.size(),
                p.kernels.empty() || !p.kernels[0].calls
                    ? 0.0
                    : total / p.kernels[0].calls);
    std::printf("%6s %8s %12s %12s %7s  %s\n", "kernel", "calls", "total_ms",
                "mean_ms", "share", "name");
    for (size_t i : p.order()) {
      const Profiler::Kernel &k = p.kernels[i];
      std::printf("%6zu %8" PRId64 " %12.4f %12.4f %6.1f%%  %s\n", i, k.calls,
                  k.totalMs, k.calls ? k.totalMs / k.calls : 0.0,
                  total > 0 ? 100 * k.totalMs / total : 0.0, k.name.c_str());
    }
  }
}

std::string jsonMemory(const tcc::Allocator &memory) {
  tcc_allocator_stats_t s = memory.stats();
  auto n = [](uint64_t v) { return std::to_string(v); };
  return jsonObject(
      {{"allocator", jsonString(memory.name())},
       {"allocated_bytes", n(s.allocated_bytes[TCC_POOL_ALL].current)},
       {"peak_allocated_bytes", n(s.allocated_bytes[TCC_POOL_ALL].peak)},
       {"requested_bytes", n(s.requested_bytes[TCC_POOL_ALL].current)},
       {"reserved_bytes", n(s.reserved_bytes[TCC_POOL_ALL].current)},
       {"peak_reserved_bytes", n(s.reserved_bytes[TCC_POOL_ALL].peak)},
       {"cached_bytes", n(s.cached_bytes)},
       {"segments", n(s.segments[TCC_POOL_ALL].current)},
       {"num_allocs", n(s.num_allocs)},
       {"num_frees", n(s.num_frees)},
       {"num_cache_hits", n(s.num_cache_hits)},
       {"num_device_allocs", n(s.num_device_allocs)},
       {"num_device_frees", n(s.num_device_frees)},
       {"num_alloc_retries", n(s.num_alloc_retries)},
       {"num_ooms", n(s.num_ooms)},
       {"memory_limit", n(s.memory_limit)},
       {"fragmentation", jsonNumber(s.fragmentation)}});
}

std::string jsonCheck(const CheckResult &c, const std::vector<int64_t> &shape) {
  JsonFields f{{"pass", c.pass ? "true" : "false"}};
  if (!c.reason.empty()) {
    f.push_back({"reason", jsonString(c.reason)});
    return jsonObject(f);
  }
  f.push_back({"max_abs_error", jsonNumber(c.maxAbs)});
  f.push_back({"max_rel_error", jsonNumber(c.maxRel)});
  f.push_back({"mismatches", std::to_string(c.mismatches)});
  f.push_back({"elements", std::to_string(c.elements)});
  f.push_back(
      {"first_mismatch",
       c.first < 0
           ? "null"
           : jsonObject({{"index", std::to_string(c.first)},
                         {"position", jsonShape(position(shape, c.first))},
                         {"actual", jsonString(c.actual)},
                         {"expected", jsonString(c.expected)}})});
  return jsonObject(f);
}

void printJson(const tcc::Model &model, const tcc::Context &context,
               const Options &o, const std::vector<SetResult> &sets,
               bool passed, const tcc::Allocator *memory) {
  std::vector<std::string> inputs, outputs, jsonSets;
  for (uint32_t k = 0; k < model.numInputs(); ++k)
    inputs.push_back(jsonTensorDesc(model.input(k)));
  for (uint32_t k = 0; k < model.numOutputs(); ++k)
    outputs.push_back(jsonTensorDesc(model.output(k)));
  for (const SetResult &s : sets) {
    std::vector<std::string> results;
    for (uint32_t k = 0; k < s.outputs.size(); ++k) {
      JsonFields f{{"name", jsonString(model.output(k).name)},
                   {"dtype", jsonString(tcc_dtype_name(s.outputs[k].dtype()))},
                   {"shape", jsonShape(s.outputs[k].shape())}};
      if (!s.checks.empty())
        f.push_back({"check", jsonCheck(s.checks[k], s.outputs[k].shape())});
      results.push_back(jsonObject(f));
    }
    JsonFields f{{"dir", jsonString(s.dir.string())},
                 {"latency_ms", jsonNumber(s.latencyMs)},
                 {"outputs", jsonArray(results)}};
    if (s.benched)
      f.push_back(
          {"bench", jsonObject({{"runs", std::to_string(s.bench.runs)},
                                {"warmup", std::to_string(s.bench.warmup)},
                                {"median_ms", jsonNumber(s.bench.medianMs)},
                                {"min_ms", jsonNumber(s.bench.minMs)},
                                {"p90_ms", jsonNumber(s.bench.p90Ms)},
                                {"mean_ms", jsonNumber(s.bench.meanMs)}})});
    if (s.compared) {
      const CompareResult &c = s.compare;
      std::vector<std::string> checks;
      for (size_t k = 0; k < c.checks.size(); ++k)
        checks.push_back(jsonCheck(c.checks[k], s.outputs[k].shape()));
      JsonFields cf{
          {"artifact", jsonString(o.compare)},
          {"median_ms", jsonNumber(c.bench.medianMs)},
          {"min_ms", jsonNumber(c.bench.minMs)},
          {"p90_ms", jsonNumber(c.bench.p90Ms)},
          {"mean_ms", jsonNumber(c.bench.meanMs)},
          {"median_ratio", jsonNumber(c.medianRatio)},
          {"b_faster", std::to_string(c.bFaster)}};
      if (!checks.empty())
        cf.push_back({"checks", jsonArray(checks)});
      f.push_back({"compare", jsonObject(cf)});
    }
    jsonSets.push_back(jsonObject(f));
  }
  JsonFields fields{{"artifact", jsonString(o.artifact)},
                    {"model", jsonString(model.name())},
                    {"target", jsonString(model.target())},
                    {"tcc_version", jsonString(model.version())},
                    {"threads", std::to_string(context.numThreads())},
                    {"inputs", jsonArray(inputs)},
                    {"outputs", jsonArray(outputs)},
                    {"sets", jsonArray(jsonSets)}};
  if (memory)
    fields.push_back({"memory", jsonMemory(*memory)});
  if (activeProfiler) {
    std::vector<std::string> kernels;
    for (size_t i : activeProfiler->order()) {
      const Profiler::Kernel &k = activeProfiler->kernels[i];
      kernels.push_back(jsonObject(
          {{"kernel", std::to_string(i)},
           {"name", jsonString(k.name)},
           {"calls", std::to_string(k.calls)},
           {"total_ms", jsonNumber(k.totalMs)},
           {"mean_ms", jsonNumber(k.calls ? k.totalMs / k.calls : 0.0)}}));
    }
    fields.push_back({"profile", jsonArray(kernels)});
  }
  fields.push_back({"passed", passed ? "true" : "false"});
  std::string json = jsonObject(fields);
  std::printf("%s\n", json.c_str());
}

/// The --compare artifact, refused unless its inputs and outputs are A's
/// (dtype and shape, in order).
std::unique_ptr<Other> loadOther(const tcc::Model &a,
                                 const tcc::Context &threadsOf,
                                 const Options &o) {
  tcc::Model b = tcc::Model::load(o.compare);
  auto same = [](const tcc_tensor_desc_t &x, const tcc_tensor_desc_t &y) {
    return x.dtype == y.dtype && shapeOf(x) == shapeOf(y);
  };
  auto mismatch = [&](const char *what, uint32_t k, const tcc_tensor_desc_t &x,
                      const tcc_tensor_desc_t &y) {
    return UserError("--compare: '" + o.compare + "' " + what + " " +
                     std::to_string(k) + " is " +
                     describe(y.dtype, shapeOf(y)) + ", '" + o.artifact +
                     "' has " + describe(x.dtype, shapeOf(x)));
  };
  if (a.numInputs() != b.numInputs() || a.numOutputs() != b.numOutputs())
    throw UserError("--compare: '" + o.compare + "' takes " +
                    std::to_string(b.numInputs()) + " inputs and gives " +
                    std::to_string(b.numOutputs()) + " outputs, '" +
                    o.artifact + "' " + std::to_string(a.numInputs()) +
                    " and " + std::to_string(a.numOutputs()));
  for (uint32_t k = 0; k < a.numInputs(); ++k)
    if (!same(a.input(k), b.input(k)))
      throw mismatch("input", k, a.input(k), b.input(k));
  for (uint32_t k = 0; k < a.numOutputs(); ++k)
    if (!same(a.output(k), b.output(k)))
      throw mismatch("output", k, a.output(k), b.output(k));
  // Memory of its own, so that the two never share a segment, and A's
  // threads: two pools would each spin while the other artifact runs.
  tcc::Context context =
      tcc::Context::sharingThreads(b, threadsOf, tcc::Allocator::host());
  return std::unique_ptr<Other>(new Other{std::move(b), std::move(context)});
}

int run(const Options &o) {
  tcc::Model model = tcc::Model::load(o.artifact);
  // With --compare each artifact has memory of its own; else the process's
  // default allocator serves inputs, outputs and the workspace.
  tcc::Context context =
      o.compare.empty()
          ? tcc::Context(model, static_cast<int32_t>(o.threads))
          : tcc::Context(model, tcc::Allocator::host(),
                         static_cast<int32_t>(o.threads));
  Profiler profiler;
  if (o.profile) {
    activeProfiler = &profiler;
    tcc_context_set_profiler(context.get(), Profiler::callback, &profiler);
  }
  std::unique_ptr<Other> other;
  if (!o.compare.empty())
    other = loadOther(model, context, o);
  fs::path inputs = o.inputs;
  std::vector<fs::path> setDirs = findSets(inputs);
  std::vector<SetResult> sets;
  bool passed = true;
  for (const fs::path &dir : setDirs) {
    // With several sets, each writes to a folder of its own name.
    fs::path outDir = o.outputs;
    if (!outDir.empty() && dir != inputs)
      outDir /= dir.filename();
    sets.push_back(runSet(model, context, dir, outDir, o, other.get()));
    for (const CheckResult &c : sets.back().checks)
      passed &= c.pass;
    for (const CheckResult &c : sets.back().compare.checks)
      passed &= c.pass;
  }
  // The context's allocator: the workspace's (and, without --compare,
  // the inputs' and outputs', from the process's default one).
  tcc::Allocator memory = context.allocator();
  const tcc::Allocator *stats = o.memoryStats ? &memory : nullptr;
  if (o.profile && profiler.kernels.empty())
    throw UserError("'" + o.artifact + "' reported no kernels to --profile "
                    "(compile it with tcc --profile)");
  if (o.json)
    printJson(model, context, o, sets, passed, stats);
  else
    printText(model, context, o, sets, stats);
  return passed ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  try {
    options = parseArgs(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "tcc-run: error: %s\nrun 'tcc-run --help' for usage\n",
                 e.what());
    return 2;
  }
  if (options.help) {
    std::fputs(kUsage, stdout);
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
