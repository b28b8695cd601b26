// run.cc - the run loop of tcc-run: test data in, report out.
#include "tooling/run.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

namespace fs = std::filesystem;

namespace tcc::tooling {

namespace {

/// The other artifact of --compare, with its own context and memory.
struct Other {
  tcc::Model model;
  tcc::Context context;
};

/// The --compare artifact, refused unless its inputs and outputs are A's
/// (dtype and shape, in order).
std::unique_ptr<Other> loadOther(const tcc::Model &a,
                                 const tcc::Context &threadsOf,
                                 const Options &o) {
  tcc::Model b = tcc::Model::load(o.compare);
  // A symbolic dimension (-1) matches any size: a dynamic artifact can be
  // compared with a static one on inputs that fit both.
  auto same = [](const tcc_tensor_desc_t &x, const tcc_tensor_desc_t &y) {
    std::vector<int64_t> a = shapeOf(x), b = shapeOf(y);
    bool fits = x.dtype == y.dtype && a.size() == b.size();
    for (size_t i = 0; fits && i < a.size(); ++i)
      fits = a[i] == b[i] || a[i] == -1 || b[i] == -1;
    return fits;
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

SetResult runSet(const tcc::Model &model, tcc::Context &context,
                 const fs::path &dir, const fs::path &outDir, const Options &o,
                 Other *other, Profiler *profiler) {
  SetResult r;
  r.dir = dir;
  std::vector<tcc::Tensor> inputs = loadInputs(model, dir, o.maxInputBytes);
  r.outputs = makeOutputs(model, inputs);
  auto start = std::chrono::steady_clock::now();
  context.run(inputs, r.outputs);
  r.latencyMs = elapsedMs(start);

  // Loaded once: --compare checks B's outputs against them too.
  const Tolerance tolerance{o.rtol, o.atol};
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
    r.checks.push_back(compare(r.outputs[k], expected.back(),
                               expectedNames.back(), tolerance));
  }
  auto runA = [&] { context.run(inputs, r.outputs); };
  if (other) {
    std::vector<tcc::Tensor> outB = makeOutputs(model, inputs);
    PairedResult paired = benchPaired(
        runA, [&] { other->context.run(inputs, outB); }, o.bench, o.warmup);
    r.bench = paired.a;
    r.compare.bench = paired.b;
    r.compare.medianRatio = paired.medianRatio;
    r.compare.bFaster = paired.bFaster;
    r.benched = r.compared = true;
    for (size_t k = 0; k < expected.size(); ++k)
      r.compare.checks.push_back(
          compare(outB[k], expected[k], expectedNames[k], tolerance));
  } else if (o.bench) {
    r.bench = bench(runA, o.bench, o.warmup, profiler);
    r.benched = true;
  }
  if (!outDir.empty()) {
    fs::create_directories(outDir);
    for (uint32_t k = 0; k < model.numOutputs(); ++k)
      r.outputs[k].save(outDir / ("output_" + std::to_string(k) + ".pb"));
  }
  return r;
}

} // namespace

std::vector<fs::path> findSets(const fs::path &dir) {
  if (!fs::is_directory(dir))
    throw UserError("'" + dir.string() + "' is not a directory");
  std::vector<fs::path> sets;
  for (const fs::directory_entry &e : fs::directory_iterator(dir))
    if (e.is_directory() &&
        e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  // Shorter names first: numeric order for the digits that follow.
  std::sort(sets.begin(), sets.end(), [](const fs::path &a, const fs::path &b) {
    std::string x = a.filename().string(), y = b.filename().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  if (sets.empty())
    sets.push_back(dir);
  return sets;
}

fs::path findTensorFile(const fs::path &dir, const char *kind, uint32_t k) {
  for (const char *ext : {".pb", ".npy"}) {
    fs::path p = dir / (std::string(kind) + "_" + std::to_string(k) + ext);
    if (fs::exists(p))
      return p;
  }
  return {};
}

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
                                    const fs::path &dir,
                                    uint64_t maxFileBytes) {
  // Counted first, so that a stray input_K file is an error rather than
  // silently ignored.
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
    tcc::Tensor t = tcc::Tensor::load(file, maxFileBytes);
    // A symbolic dimension (-1) takes any size here; the run checks that
    // the inputs agree on it and that it lies in its bounds.
    std::vector<int64_t> want = shapeOf(d), got = t.shape();
    bool fits = d.dtype == t.dtype() && want.size() == got.size();
    for (size_t i = 0; fits && i < want.size(); ++i)
      fits = want[i] == -1 || want[i] == got[i];
    if (!fits)
      throw UserError(file.string() + ": input " + std::to_string(k) + " '" +
                      d.name + "' expects " + describe(d.dtype, want) +
                      ", the file holds " + describe(t.dtype(), got));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::vector<tcc::Tensor> makeOutputs(const tcc::Model &model,
                                     const std::vector<tcc::Tensor> &inputs) {
  // Symbolic dimensions take the sizes the inputs give.
  std::vector<const tcc_tensor_t *> in;
  for (const tcc::Tensor &t : inputs)
    in.push_back(t.get());
  std::vector<int64_t> sizes(model.numSymbols());
  if (tcc_status_t s = tcc_model_bind_inputs(model.get(), in.data(), in.size(),
                                             sizes.data())) {
    std::string message = tcc_status_message(s);
    tcc_status_free(s);
    throw UserError(message);
  }
  std::vector<tcc::Tensor> outputs;
  for (uint32_t k = 0; k < model.numOutputs(); ++k) {
    const tcc_tensor_desc_t &d = model.output(k);
    std::vector<int64_t> shape(d.rank);
    tcc::check(
        tcc_model_output_shape(model.get(), k, sizes.data(), shape.data()));
    outputs.push_back(tcc::Tensor::create(d.dtype, shape));
    outputs.back().setName(d.name);
  }
  return outputs;
}

/// Refuses an artifact compiled for another device than --device names.
void checkDevice(const tcc::Model &model, const Options &o) {
  if (o.device.empty())
    return;
  const std::string target = model.target();
  const bool cuda = target.rfind("cuda:", 0) == 0;
  if ((o.device == "cuda") == cuda)
    return;
  throw UserError("'" + o.artifact + "' was compiled for the " +
                  (cuda ? "GPU" : "CPU") + " (target " + target +
                  "), not --device " + o.device +
                  (cuda ? "" : " (compile it with tcc --target=cuda)"));
}

Report execute(const Options &o) {
  tcc::Model model = tcc::Model::load(o.artifact);
  checkDevice(model, o);
  // Before the context, which calls it, and so destroyed after it.
  Profiler profiler;
  // With --compare each artifact has memory of its own; else the process's
  // default allocator serves inputs, outputs and the workspace.
  tcc::Context context =
      o.compare.empty() ? tcc::Context(model, static_cast<int32_t>(o.threads))
                        : tcc::Context(model, tcc::Allocator::host(),
                                       static_cast<int32_t>(o.threads));
  if (o.profile) {
    tcc_context_set_profiler(context.get(), Profiler::callback, &profiler);
    profiler.context = context.get();
  }
  std::unique_ptr<Other> other;
  if (!o.compare.empty())
    other = loadOther(model, context, o);

  Report report;
  report.artifact = o.artifact;
  report.compare = o.compare;
  report.model = ModelInfo::of(model);
  report.threads = context.numThreads();
  fs::path inputs = o.inputs;
  for (const fs::path &dir : findSets(inputs)) {
    // With several sets, each writes to a folder of its own name.
    fs::path outDir = o.outputs;
    if (!outDir.empty() && dir != inputs)
      outDir /= dir.filename();
    report.sets.push_back(runSet(model, context, dir, outDir, o, other.get(),
                                 o.profile ? &profiler : nullptr));
    for (const CheckResult &c : report.sets.back().checks)
      report.passed &= c.pass;
    for (const CheckResult &c : report.sets.back().compare.checks)
      report.passed &= c.pass;
  }
  // The context's allocator: the workspace's (and, without --compare,
  // the inputs' and outputs', from the process's default one).
  if (o.memoryStats)
    report.memory = MemoryStats::of(context.allocator());
  if (o.profile) {
    if (profiler.kernels.empty())
      throw UserError("'" + o.artifact +
                      "' reported no kernels to --profile "
                      "(compile it with tcc --profile)");
    report.profile = profiler;
  }
  return report;
}

int run(const Options &o, std::FILE *out) {
  Report report = execute(o);
  std::string text =
      o.json ? dumpJson(jsonReport(report)) + "\n" : textReport(report);
  std::fputs(text.c_str(), out);
  return report.passed ? 0 : 1;
}

} // namespace tcc::tooling
