// report.h - what a tcc-run invocation found, and its text and JSON reports.
#ifndef TCC_RUNTIME_TOOLING_REPORT_H
#define TCC_RUNTIME_TOOLING_REPORT_H

#include "tooling/bench.h"
#include "tooling/compare.h"

#include "tcc/runtime.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tcc::tooling {

/// A model's input or output as the reports name it.
struct TensorInfo {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;

  static TensorInfo of(const tcc_tensor_desc_t &desc);
};

/// What the reports say about the artifact. A copy, so that a report
/// outlives the model it describes (and tests need no artifact).
struct ModelInfo {
  std::string name, target, version;
  std::vector<TensorInfo> inputs, outputs;

  static ModelInfo of(const tcc::Model &model);
};

/// The allocator's statistics and summary table, taken after the runs.
struct MemoryStats {
  std::string allocator; ///< its name
  tcc_allocator_stats_t stats{};
  std::string summary; ///< the table tcc_allocator_summary prints

  static MemoryStats of(const tcc::Allocator &allocator);
};

/// --compare: the second artifact's runs, paired with the first's.
struct CompareResult {
  BenchResult bench;
  double medianRatio = 0;          ///< of B's time over A's, pair by pair
  long bFaster = 0;                ///< pairs in which B took less time
  std::vector<CheckResult> checks; ///< B's outputs, with --check
};

/// One test_data_set folder's run.
struct SetResult {
  std::filesystem::path dir;
  double latencyMs = 0; ///< of the first, untimed run
  std::vector<tcc::Tensor> outputs;
  std::vector<CheckResult> checks; ///< one per output with --check, else none
  bool benched = false;
  BenchResult bench;
  bool compared = false;
  CompareResult compare;
};

/// Everything a report prints.
struct Report {
  std::string artifact; ///< as given on the command line
  std::string compare;  ///< --compare's artifact; empty without
  ModelInfo model;
  int32_t threads = 0;
  std::vector<SetResult> sets;
  bool passed = true; ///< every check passed (true without --check)
  std::optional<MemoryStats> memory; ///< with --memory-stats
  std::optional<Profiler> profile;   ///< with --profile
};

/// The text report, as tcc-run prints it without --json: a header line, per
/// set its latency and per output a preview of the values or the check's
/// outcome, then the bench, compare, memory and profile sections that apply.
std::string textReport(const Report &report);

/// The JSON report: one object (see docs/tcc-run.md for its fields), keys in
/// the order they are documented.
nlohmann::ordered_json jsonReport(const Report &report);

/// A number for the JSON report. JSON has no infinities or NaN: those become
/// the strings "inf", "-inf" and "nan". Integral values are written as
/// integers (0, not 0.0).
nlohmann::ordered_json jsonNumber(double value);

/// One output's check, as "check" and "checks" hold it; `shape` is the
/// output's, to give the first mismatch's position.
nlohmann::ordered_json jsonCheck(const CheckResult &check,
                                 const std::vector<int64_t> &shape);

/// `json` on one line, without spaces. Bytes that are not UTF-8 (a file
/// name's, say) become U+FFFD rather than failing the report.
std::string dumpJson(const nlohmann::ordered_json &json);

} // namespace tcc::tooling

#endif // TCC_RUNTIME_TOOLING_REPORT_H
