// report_test.cc - the text and JSON reports of known results, byte for
// byte, non-finite numbers included.
#include "tooling/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace tcc::tooling;
using json = nlohmann::ordered_json;

namespace {

tcc::Tensor tensor(std::vector<int64_t> shape, float first = 0.5f) {
  tcc::Tensor t = tcc::Tensor::create(TCC_DTYPE_F32, shape);
  for (int64_t i = 0; i < t.elementCount(); ++i)
    t.data<float>()[i] = first + i;
  return t;
}

/// The model of docs/tcc-run.md: sum = a + b over f32[2x3].
Report addReport() {
  Report r;
  r.artifact = "model.so";
  r.model.name = "add";
  r.model.target = "x86_64-unknown-linux-gnu:znver4";
  r.model.version = "0.1.0";
  r.model.inputs = {{"a", TCC_DTYPE_F32, {2, 3}}, {"b", TCC_DTYPE_F32, {2, 3}}};
  r.model.outputs = {{"sum", TCC_DTYPE_F32, {2, 3}}};
  r.threads = 16;
  SetResult s;
  s.dir = "data/test_data_set_0";
  s.latencyMs = 0.023;
  s.outputs.push_back(tensor({2, 3}));
  r.sets.push_back(std::move(s));
  return r;
}

CheckResult failedCheck() {
  CheckResult c;
  c.pass = false;
  c.maxAbs = 94.5;
  c.maxRel = 0.945;
  c.mismatches = 1;
  c.elements = 6;
  c.first = 5;
  c.actual = "5.5";
  c.expected = "100";
  return c;
}

BenchResult someBench() {
  BenchResult b;
  b.runs = 100;
  b.warmup = 3;
  b.medianMs = 0.0121;
  b.minMs = 0.0116;
  b.p90Ms = 0.0135;
  b.meanMs = 0.0129;
  return b;
}

TEST(ReportTest, JsonNumbers) {
  EXPECT_EQ(jsonNumber(INFINITY), json("inf"));
  EXPECT_EQ(jsonNumber(-INFINITY), json("-inf"));
  EXPECT_EQ(jsonNumber(NAN), json("nan"));
  EXPECT_EQ(jsonNumber(-NAN), json("nan"));
  EXPECT_EQ(jsonNumber(0.0).dump(), "0");
  EXPECT_TRUE(jsonNumber(0.0).is_number_integer());
  EXPECT_EQ(jsonNumber(-0.0).dump(), "0");
  EXPECT_EQ(jsonNumber(42.0).dump(), "42");
  EXPECT_EQ(jsonNumber(-7.0).dump(), "-7");
  EXPECT_EQ(jsonNumber(2.5).dump(), "2.5");
  EXPECT_EQ(jsonNumber(0.0121).dump(), "0.0121");
  EXPECT_TRUE(jsonNumber(1e300).is_number_float());
  EXPECT_EQ(jsonNumber(1e300).get<double>(), 1e300);
}

TEST(ReportTest, DumpJsonEscapesAndSurvivesBadUtf8) {
  EXPECT_EQ(dumpJson(json("a\"b\\c")), R"("a\"b\\c")");
  EXPECT_EQ(dumpJson(json("\x01\t")), R"("\u0001\t")");
  EXPECT_EQ(dumpJson(json("caf\xc3\xa9")), "\"caf\xc3\xa9\"");
  EXPECT_EQ(dumpJson(json("latin\xe9")), "\"latin\xef\xbf\xbd\""); // U+FFFD
  EXPECT_EQ(dumpJson(json{{"k", {1, 2}}}), R"({"k":[1,2]})");      // no spaces
}

TEST(ReportTest, JsonCheck) {
  EXPECT_EQ(dumpJson(jsonCheck(failedCheck(), {2, 3})),
            R"({"pass":false,"max_abs_error":94.5,"max_rel_error":0.945,)"
            R"("mismatches":1,"elements":6,"first_mismatch":{"index":5,)"
            R"("position":[1,2],"actual":"5.5","expected":"100"}})");
  EXPECT_EQ(dumpJson(jsonCheck(CheckResult{}, {2, 3})),
            R"({"pass":true,"max_abs_error":0,"max_rel_error":0,)"
            R"("mismatches":0,"elements":0,"first_mismatch":null})");
  CheckResult mismatch;
  mismatch.pass = false;
  mismatch.reason = "shape mismatch: the output is f32[2x3], output_0.pb "
                    "holds f32[3x2]";
  EXPECT_EQ(dumpJson(jsonCheck(mismatch, {2, 3})),
            R"({"pass":false,"reason":"shape mismatch: the output is )"
            R"(f32[2x3], output_0.pb holds f32[3x2]"})");
}

TEST(ReportTest, JsonOfTheDocumentedExample) {
  Report r = addReport();
  r.sets[0].checks.push_back(failedCheck());
  r.sets[0].benched = true;
  r.sets[0].bench = someBench();
  r.passed = false;
  EXPECT_EQ(
      dumpJson(jsonReport(r)),
      R"({"artifact":"model.so","model":"add",)"
      R"("target":"x86_64-unknown-linux-gnu:znver4","tcc_version":"0.1.0",)"
      R"("threads":16,)"
      R"("inputs":[{"name":"a","dtype":"f32","shape":[2,3]},)"
      R"({"name":"b","dtype":"f32","shape":[2,3]}],)"
      R"("outputs":[{"name":"sum","dtype":"f32","shape":[2,3]}],)"
      R"("sets":[{"dir":"data/test_data_set_0","latency_ms":0.023,)"
      R"("outputs":[{"name":"sum","dtype":"f32","shape":[2,3],)"
      R"("check":{"pass":false,"max_abs_error":94.5,"max_rel_error":0.945,)"
      R"("mismatches":1,"elements":6,"first_mismatch":{"index":5,)"
      R"("position":[1,2],"actual":"5.5","expected":"100"}}}],)"
      R"("bench":{"runs":100,"warmup":3,"median_ms":0.0121,"min_ms":0.0116,)"
      R"("p90_ms":0.0135,"mean_ms":0.0129}}],)"
      R"("passed":false})");
}

TEST(ReportTest, JsonNonFiniteNumbersAreStrings) {
  Report r = addReport();
  CheckResult c = failedCheck();
  c.maxAbs = INFINITY;
  c.maxRel = NAN;
  c.actual = "nan";
  c.expected = "inf";
  r.sets[0].checks.push_back(c);
  r.sets[0].latencyMs = -INFINITY;
  r.passed = false;
  json doc = jsonReport(r);
  const json &check = doc["sets"][0]["outputs"][0]["check"];
  EXPECT_EQ(check["max_abs_error"], "inf");
  EXPECT_EQ(check["max_rel_error"], "nan");
  EXPECT_EQ(check["first_mismatch"]["actual"], "nan");
  EXPECT_EQ(doc["sets"][0]["latency_ms"], "-inf");
  const std::string text = dumpJson(doc);
  EXPECT_NE(text.find(R"("max_abs_error":"inf","max_rel_error":"nan")"),
            std::string::npos)
      << text;
  // Valid JSON that reads back as it was.
  EXPECT_EQ(json::parse(text), doc);
}

TEST(ReportTest, JsonCompareMemoryAndProfile) {
  Report r = addReport();
  r.compare = "b.so";
  SetResult &s = r.sets[0];
  s.checks.push_back(CheckResult{});
  s.benched = s.compared = true;
  s.bench = someBench();
  s.compare.bench = someBench();
  s.compare.medianRatio = 1.0037;
  s.compare.bFaster = 42;
  s.compare.checks.push_back(CheckResult{});
  MemoryStats m;
  m.allocator = "host";
  m.stats.allocated_bytes[TCC_POOL_ALL].current = 32256;
  m.stats.num_allocs = 3;
  m.stats.fragmentation = 0.0017;
  r.memory = m;
  Profiler p;
  p.kernels.resize(2);
  p.kernels[0] = {"k0", 2, 1.0, {}};
  p.kernels[1] = {"k1", 2, 3.0, {}};
  r.profile = p;
  json doc = jsonReport(r);

  std::vector<std::string> keys;
  for (const auto &item : doc.items())
    keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"artifact", "model", "target",
                                            "tcc_version", "threads", "inputs",
                                            "outputs", "sets", "memory",
                                            "profile", "passed"}));
  EXPECT_EQ(dumpJson(doc["sets"][0]["compare"]),
            R"({"artifact":"b.so","median_ms":0.0121,"min_ms":0.0116,)"
            R"("p90_ms":0.0135,"mean_ms":0.0129,"median_ratio":1.0037,)"
            R"("b_faster":42,"checks":[{"pass":true,"max_abs_error":0,)"
            R"("max_rel_error":0,"mismatches":0,"elements":0,)"
            R"("first_mismatch":null}]})");
  EXPECT_EQ(dumpJson(doc["memory"]),
            R"({"allocator":"host","allocated_bytes":32256,)"
            R"("peak_allocated_bytes":0,"requested_bytes":0,)"
            R"("reserved_bytes":0,"peak_reserved_bytes":0,"cached_bytes":0,)"
            R"("segments":0,"num_allocs":3,"num_frees":0,)"
            R"("num_cache_hits":0,"num_device_allocs":0,)"
            R"("num_device_frees":0,"num_alloc_retries":0,"num_ooms":0,)"
            R"("memory_limit":0,"fragmentation":0.0017})");
  EXPECT_EQ(dumpJson(doc["profile"]),
            R"([{"kernel":1,"name":"k1","calls":2,"total_ms":3,"mean_ms":1.5},)"
            R"({"kernel":0,"name":"k0","calls":2,"total_ms":1,)"
            R"("mean_ms":0.5}])");
  EXPECT_EQ(doc["passed"], true);
}

TEST(ReportTest, JsonLeavesOutWhatWasNotAskedFor) {
  json doc = jsonReport(addReport());
  EXPECT_FALSE(doc.contains("memory"));
  EXPECT_FALSE(doc.contains("profile"));
  const json &set = doc["sets"][0];
  EXPECT_FALSE(set.contains("bench"));
  EXPECT_FALSE(set.contains("compare"));
  EXPECT_FALSE(set["outputs"][0].contains("check"));
  EXPECT_EQ(doc["passed"], true);
}

TEST(ReportTest, TextPreviewsValues) {
  Report r = addReport();
  r.sets[0].outputs.push_back(tensor({10}, 1));
  r.model.outputs.push_back({"long", TCC_DTYPE_F32, {10}});
  EXPECT_EQ(textReport(r),
            "artifact model.so: model 'add', target "
            "x86_64-unknown-linux-gnu:znver4, tcc 0.1.0, 16 threads\n"
            "data/test_data_set_0: latency 0.023 ms\n"
            "  output 0 'sum' f32[2x3] = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]\n"
            "  output 1 'long' f32[10] = [1, 2, 3, 4, 5, 6, 7, 8, ...]\n");
}

TEST(ReportTest, TextCheckAndBench) {
  Report r = addReport();
  r.sets[0].checks.push_back(failedCheck());
  r.sets[0].benched = true;
  r.sets[0].bench = someBench();
  EXPECT_EQ(textReport(r),
            "artifact model.so: model 'add', target "
            "x86_64-unknown-linux-gnu:znver4, tcc 0.1.0, 16 threads\n"
            "data/test_data_set_0: latency 0.023 ms\n"
            "  output 0 'sum' f32[2x3]: FAIL  max_abs_err=94.5 "
            "max_rel_err=0.945 mismatches=1/6  first at [1,2] (index 5): got "
            "5.5, expected 100\n"
            "  bench: 100 runs (3 warmup): median_ms=0.0121 min_ms=0.0116 "
            "p90_ms=0.0135 mean_ms=0.0129\n");
}

TEST(ReportTest, TextBenchWithoutCheckHasNoPreview) {
  Report r = addReport();
  r.sets[0].benched = true;
  r.sets[0].bench = someBench();
  const std::string text = textReport(r);
  EXPECT_NE(text.find("  output 0 'sum' f32[2x3]\n  bench: "),
            std::string::npos)
      << text;
}

TEST(ReportTest, TextMismatchReason) {
  Report r = addReport();
  CheckResult c;
  c.pass = false;
  c.reason = "dtype mismatch: the output is f32[2x3], output_0.npy holds "
             "f64[2x3]";
  r.sets[0].checks.push_back(c);
  const std::string text = textReport(r);
  EXPECT_NE(text.find("  output 0 'sum' f32[2x3]: FAIL  dtype mismatch: the "
                      "output is f32[2x3], output_0.npy holds f64[2x3]\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("max_abs_err"), std::string::npos) << text;
}

TEST(ReportTest, TextCompare) {
  Report r = addReport();
  r.compare = "b.so";
  SetResult &s = r.sets[0];
  s.benched = s.compared = true;
  s.bench = someBench();
  s.compare.bench = someBench();
  s.compare.bench.runs = 300;
  s.compare.medianRatio = 1.0037;
  s.compare.bFaster = 142;
  CheckResult c;
  c.maxAbs = 8.94e-08;
  c.maxRel = 0.000115;
  c.elements = 1000;
  s.compare.checks.push_back(c);
  const std::string text = textReport(r);
  EXPECT_NE(text.find("  compare output 0: PASS  max_abs_err=8.94e-08 "
                      "max_rel_err=0.000115 mismatches=0/1000\n"
                      "  compare b.so: median_ms=0.0121 min_ms=0.0116 "
                      "p90_ms=0.0135 mean_ms=0.0129\n"
                      "  compare: B/A median of 300 paired runs 1.0037, B "
                      "faster in 142\n"),
            std::string::npos)
      << text;
}

TEST(ReportTest, TextMemoryAndProfile) {
  Report r = addReport();
  r.sets[0].benched = true;
  r.sets[0].bench = someBench();
  MemoryStats m;
  m.summary = "|== the allocator's table ==|\n";
  r.memory = m;
  Profiler p;
  p.kernels.resize(2);
  p.kernels[0] = {"node_Conv_0 (Conv)", 4, 1.0, {}};
  p.kernels[1] = {"node_Add_1 (Add)", 4, 3.0, {}};
  r.profile = p;
  const std::string text = textReport(r);
  EXPECT_NE(
      text.find("mean_ms=0.0129\n"
                "|== the allocator's table ==|\n"
                "profile: 2 kernels, 1.0000 ms a run in kernels\n"
                "kernel    calls     total_ms      mean_ms   share  name\n"
                "     1        4       3.0000       0.7500   75.0%  "
                "node_Add_1 (Add)\n"
                "     0        4       1.0000       0.2500   25.0%  "
                "node_Conv_0 (Conv)\n"),
      std::string::npos)
      << text;
}

// With the context's thread usage, the profile says how many threads each
// kernel kept busy on average (thread time over wall time), in text and
// JSON, and over all kernels in its first line.
TEST(ReportTest, ProfileWithThreadUsage) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context(model, 2);
  Report r = addReport();
  r.threads = 2;
  Profiler p;
  p.context = context.get();
  p.kernels.resize(2);
  p.kernels[0] = {"node_Conv_0 (Conv)", 4, 1.0, {}, 1.5};
  p.kernels[1] = {"node_Add_1 (Add)", 4, 3.0, {}, 6.0};
  r.profile = p;
  const std::string text = textReport(r);
  EXPECT_NE(text.find("profile: 2 kernels, 1.0000 ms a run in kernels, 1.88 "
                      "of 2 threads busy\n"
                      "kernel    calls     total_ms      mean_ms   share "
                      "threads  name\n"
                      "     1        4       3.0000       0.7500   75.0%    "
                      "2.00  node_Add_1 (Add)\n"
                      "     0        4       1.0000       0.2500   25.0%    "
                      "1.50  node_Conv_0 (Conv)\n"),
            std::string::npos)
      << text;
  json doc = jsonReport(r);
  EXPECT_EQ(dumpJson(doc["profile"][1]),
            R"j({"kernel":0,"name":"node_Conv_0 (Conv)","calls":4,)j"
            R"j("total_ms":1,"mean_ms":0.25,"threads_busy":1.5})j");
}

TEST(ReportTest, ModelInfoOfAnArtifact) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  ModelInfo m = ModelInfo::of(model);
  EXPECT_EQ(m.name, "fake_add");
  EXPECT_EQ(m.target, "x86_64-fake");
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_EQ(m.inputs[1].name, "b");
  EXPECT_EQ(m.inputs[1].dtype, TCC_DTYPE_F32);
  EXPECT_EQ(m.inputs[1].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].name, "sum");
}

} // namespace
