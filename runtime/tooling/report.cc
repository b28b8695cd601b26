// report.cc - tcc-run's text and JSON reports.
#include "tooling/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace tcc::tooling {

using json = nlohmann::ordered_json;

namespace {

// printf onto the end of `out`.
__attribute__((format(printf, 2, 3))) void appendf(std::string &out,
                                                   const char *fmt, ...) {
  va_list args, again;
  va_start(args, fmt);
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  if (n > 0) {
    size_t old = out.size();
    out.resize(old + n + 1);
    std::vsnprintf(&out[old], n + 1, fmt, again);
    out.resize(old + n);
  }
  va_end(again);
}

// Threads busy on average: thread time over wall time.
double busy(double threadMs, double wallMs) {
  return wallMs > 0 ? threadMs / wallMs : 0.0;
}

// "[1,2]"
std::string joinPosition(const std::vector<int64_t> &pos) {
  std::string s = "[";
  for (size_t i = 0; i < pos.size(); ++i)
    s += (i ? "," : "") + std::to_string(pos[i]);
  return s + "]";
}

json jsonTensorInfo(const TensorInfo &t) {
  return json{
      {"name", t.name}, {"dtype", tcc_dtype_name(t.dtype)}, {"shape", t.shape}};
}

json jsonMemory(const MemoryStats &m) {
  const tcc_allocator_stats_t &s = m.stats;
  return json{{"allocator", m.allocator},
              {"allocated_bytes", s.allocated_bytes[TCC_POOL_ALL].current},
              {"peak_allocated_bytes", s.allocated_bytes[TCC_POOL_ALL].peak},
              {"requested_bytes", s.requested_bytes[TCC_POOL_ALL].current},
              {"reserved_bytes", s.reserved_bytes[TCC_POOL_ALL].current},
              {"peak_reserved_bytes", s.reserved_bytes[TCC_POOL_ALL].peak},
              {"cached_bytes", s.cached_bytes},
              {"segments", s.segments[TCC_POOL_ALL].current},
              {"num_allocs", s.num_allocs},
              {"num_frees", s.num_frees},
              {"num_cache_hits", s.num_cache_hits},
              {"num_device_allocs", s.num_device_allocs},
              {"num_device_frees", s.num_device_frees},
              {"num_alloc_retries", s.num_alloc_retries},
              {"num_ooms", s.num_ooms},
              {"memory_limit", s.memory_limit},
              {"fragmentation", jsonNumber(s.fragmentation)}};
}

json jsonBench(const BenchResult &b) {
  return json{{"runs", b.runs},
              {"warmup", b.warmup},
              {"median_ms", jsonNumber(b.medianMs)},
              {"min_ms", jsonNumber(b.minMs)},
              {"p90_ms", jsonNumber(b.p90Ms)},
              {"mean_ms", jsonNumber(b.meanMs)}};
}

json jsonSet(const Report &report, const SetResult &s) {
  json outputs = json::array();
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const tcc::Tensor &t = s.outputs[k];
    json out{{"name", report.model.outputs[k].name},
             {"dtype", tcc_dtype_name(t.dtype())},
             {"shape", t.shape()}};
    if (!s.checks.empty())
      out["check"] = jsonCheck(s.checks[k], t.shape());
    outputs.push_back(std::move(out));
  }
  json set{{"dir", s.dir.string()},
           {"latency_ms", jsonNumber(s.latencyMs)},
           {"outputs", std::move(outputs)}};
  if (s.benched)
    set["bench"] = jsonBench(s.bench);
  if (s.compared) {
    const CompareResult &c = s.compare;
    json compare{{"artifact", report.compare},
                 {"median_ms", jsonNumber(c.bench.medianMs)},
                 {"min_ms", jsonNumber(c.bench.minMs)},
                 {"p90_ms", jsonNumber(c.bench.p90Ms)},
                 {"mean_ms", jsonNumber(c.bench.meanMs)},
                 {"median_ratio", jsonNumber(c.medianRatio)},
                 {"b_faster", c.bFaster}};
    if (!c.checks.empty()) {
      json checks = json::array();
      for (size_t k = 0; k < c.checks.size(); ++k)
        checks.push_back(jsonCheck(c.checks[k], s.outputs[k].shape()));
      compare["checks"] = std::move(checks);
    }
    set["compare"] = std::move(compare);
  }
  return set;
}

} // namespace

TensorInfo TensorInfo::of(const tcc_tensor_desc_t &desc) {
  return TensorInfo{desc.name ? desc.name : "", desc.dtype, shapeOf(desc)};
}

ModelInfo ModelInfo::of(const tcc::Model &model) {
  ModelInfo m;
  m.name = model.name();
  m.target = model.target();
  m.version = model.version();
  for (uint32_t k = 0; k < model.numInputs(); ++k)
    m.inputs.push_back(TensorInfo::of(model.input(k)));
  for (uint32_t k = 0; k < model.numOutputs(); ++k)
    m.outputs.push_back(TensorInfo::of(model.output(k)));
  return m;
}

MemoryStats MemoryStats::of(const tcc::Allocator &allocator) {
  return MemoryStats{allocator.name(), allocator.stats(), allocator.summary()};
}

std::string textReport(const Report &report) {
  const ModelInfo &model = report.model;
  std::string out;
  appendf(out, "artifact %s: model '%s', target %s, tcc %s, %d threads\n",
          report.artifact.c_str(), model.name.c_str(), model.target.c_str(),
          model.version.c_str(), report.threads);
  for (const SetResult &s : report.sets) {
    appendf(out, "%s: latency %.3f ms\n", s.dir.string().c_str(), s.latencyMs);
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const tcc::Tensor &t = s.outputs[k];
      appendf(out, "  output %zu '%s' %s", k, model.outputs[k].name.c_str(),
              describe(t.dtype(), t.shape()).c_str());
      if (!s.checks.empty()) {
        const CheckResult &c = s.checks[k];
        appendf(out, ": %s", c.pass ? "PASS" : "FAIL");
        if (!c.reason.empty()) {
          appendf(out, "  %s\n", c.reason.c_str());
          continue;
        }
        appendf(out,
                "  max_abs_err=%.3g max_rel_err=%.3g mismatches=%" PRId64
                "/%" PRId64,
                c.maxAbs, c.maxRel, c.mismatches, c.elements);
        if (c.first >= 0)
          appendf(out, "  first at %s (index %" PRId64 "): got %s, expected %s",
                  joinPosition(position(t.shape(), c.first)).c_str(), c.first,
                  c.actual.c_str(), c.expected.c_str());
      } else if (!s.benched) {
        // A preview of the values.
        const int64_t shown = std::min<int64_t>(t.elementCount(), 8);
        out += " = [";
        for (int64_t i = 0; i < shown; ++i)
          out += (i ? ", " : "") + valueAt(t, i);
        out += shown < t.elementCount() ? ", ...]" : "]";
      }
      out += "\n";
    }
    if (s.benched)
      appendf(out,
              "  bench: %ld runs (%ld warmup): median_ms=%.4f min_ms=%.4f "
              "p90_ms=%.4f mean_ms=%.4f\n",
              s.bench.runs, s.bench.warmup, s.bench.medianMs, s.bench.minMs,
              s.bench.p90Ms, s.bench.meanMs);
    if (s.compared) {
      const CompareResult &c = s.compare;
      for (size_t k = 0; k < c.checks.size(); ++k)
        appendf(out,
                "  compare output %zu: %s  max_abs_err=%.3g "
                "max_rel_err=%.3g mismatches=%" PRId64 "/%" PRId64 "\n",
                k, c.checks[k].pass ? "PASS" : "FAIL", c.checks[k].maxAbs,
                c.checks[k].maxRel, c.checks[k].mismatches,
                c.checks[k].elements);
      appendf(out,
              "  compare %s: median_ms=%.4f min_ms=%.4f p90_ms=%.4f "
              "mean_ms=%.4f\n",
              report.compare.c_str(), c.bench.medianMs, c.bench.minMs,
              c.bench.p90Ms, c.bench.meanMs);
      appendf(out,
              "  compare: B/A median of %ld paired runs %.4f, B faster "
              "in %ld\n",
              c.bench.runs, c.medianRatio, c.bFaster);
    }
  }
  if (report.memory)
    out += report.memory->summary;
  if (report.profile) {
    const Profiler &p = *report.profile;
    const double total = p.totalMs();
    // Every kernel that runs runs at least once a run, so the fewest calls
    // count the runs (a dynamic batch's largest slab may run several times
    // a run, and slabs its batch sizes do not need not at all: those are
    // left out).
    int64_t runs = 0;
    for (const Profiler::Kernel &k : p.kernels)
      if (k.calls && (!runs || k.calls < runs))
        runs = k.calls;
    // With the context's thread usage, how many threads each kernel kept
    // busy on average: where a split leaves threads waiting.
    const bool threads = p.context != nullptr;
    appendf(out, "profile: %zu kernels, %.4f ms a run in kernels",
            p.kernels.size(), runs ? total / runs : 0.0);
    if (threads)
      appendf(out, ", %.2f of %d threads busy", busy(p.threadMs(), total),
              report.threads);
    out += "\n";
    appendf(out, "%6s %8s %12s %12s %7s%s  %s\n", "kernel", "calls", "total_ms",
            "mean_ms", "share", threads ? " threads" : "", "name");
    for (size_t i : p.order()) {
      const Profiler::Kernel &k = p.kernels[i];
      if (!k.calls)
        continue;
      appendf(out, "%6zu %8" PRId64 " %12.4f %12.4f %6.1f%%", i, k.calls,
              k.totalMs, k.calls ? k.totalMs / k.calls : 0.0,
              total > 0 ? 100 * k.totalMs / total : 0.0);
      if (threads)
        appendf(out, " %7.2f", busy(k.threadMs, k.totalMs));
      appendf(out, "  %s\n", k.name.c_str());
    }
  }
  return out;
}

json jsonNumber(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  // Integral values are written as integers (0, not 0.0), as printf's
  // %.17g writes those below 1e17.
  if (v == std::trunc(v) && std::fabs(v) < 1e17)
    return static_cast<int64_t>(v);
  return v;
}

json jsonCheck(const CheckResult &c, const std::vector<int64_t> &shape) {
  json check{{"pass", c.pass}};
  if (!c.reason.empty()) {
    check["reason"] = c.reason;
    return check;
  }
  check["max_abs_error"] = jsonNumber(c.maxAbs);
  check["max_rel_error"] = jsonNumber(c.maxRel);
  check["mismatches"] = c.mismatches;
  check["elements"] = c.elements;
  check["first_mismatch"] = c.first < 0
                                ? json(nullptr)
                                : json{{"index", c.first},
                                       {"position", position(shape, c.first)},
                                       {"actual", c.actual},
                                       {"expected", c.expected}};
  return check;
}

json jsonReport(const Report &report) {
  json inputs = json::array(), outputs = json::array(), sets = json::array();
  for (const TensorInfo &t : report.model.inputs)
    inputs.push_back(jsonTensorInfo(t));
  for (const TensorInfo &t : report.model.outputs)
    outputs.push_back(jsonTensorInfo(t));
  for (const SetResult &s : report.sets)
    sets.push_back(jsonSet(report, s));
  json doc{
      {"artifact", report.artifact},   {"model", report.model.name},
      {"target", report.model.target}, {"tcc_version", report.model.version},
      {"threads", report.threads},     {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)}, {"sets", std::move(sets)}};
  if (report.memory)
    doc["memory"] = jsonMemory(*report.memory);
  if (report.profile) {
    json kernels = json::array();
    for (size_t i : report.profile->order()) {
      const Profiler::Kernel &k = report.profile->kernels[i];
      json kernel{{"kernel", i},
                  {"name", k.name},
                  {"calls", k.calls},
                  {"total_ms", jsonNumber(k.totalMs)},
                  {"mean_ms", jsonNumber(k.calls ? k.totalMs / k.calls : 0.0)}};
      if (report.profile->context)
        kernel["threads_busy"] = jsonNumber(busy(k.threadMs, k.totalMs));
      kernels.push_back(std::move(kernel));
    }
    doc["profile"] = std::move(kernels);
  }
  doc["passed"] = report.passed;
  return doc;
}

std::string dumpJson(const json &doc) {
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace tcc::tooling
