// tcc_run_test.cc - the tcc-run tool, run as a user would on the fake
// artifact: output, checks, exit codes and diagnostics.
#include "test_util.h"

#include <cmath>
#include <cstdio>
#include <sys/wait.h>

using tcc::testing::iota;
using tcc::testing::TempDir;

namespace {

struct Outcome {
  int exitCode;
  std::string output; // stdout and stderr together
};

Outcome tccRun(const std::string &args) {
  std::string command = std::string(TCC_RUN_EXE) + " " + args + " 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

/// A test_data_set folder for the fake artifact (sum = a + b over f32[2x3])
/// whose expected output is right.
class TccRunTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::filesystem::create_directory(set);
    iota(1).save(set + "/input_0.pb");
    iota(10, 10).save(set + "/input_1.npy");
    iota(11, 11).save(set + "/output_0.pb");
  }
  std::string args(const std::string &extra = "") {
    return std::string(TCC_FAKE_ARTIFACT) + " --inputs " + set + " " + extra;
  }

  TempDir dir;
  std::string set = dir / "test_data_set_0";
};

TEST_F(TccRunTest, PrintsOutputs) {
  Outcome o = tccRun(args("--threads 2"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "output 0 'sum' f32[2x3] = [11, 22, 33, 44, "
                                 "55, 66]"))
      << o.output;
  EXPECT_TRUE(contains(o.output, "latency")) << o.output;
  EXPECT_TRUE(contains(o.output, "2 threads")) << o.output;
}

TEST_F(TccRunTest, CheckPasses) {
  Outcome o = tccRun(args("--check"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "output 0 'sum' f32[2x3]: PASS  "
                                 "max_abs_err=0 max_rel_err=0 mismatches=0/6"))
      << o.output;
}

TEST_F(TccRunTest, CheckFailsWithFirstMismatch) {
  tcc::Tensor expected = iota(11, 11);
  expected.data<float>()[4] = 50;
  expected.data<float>()[5] = 66.05f; // within rtol 1e-3
  expected.save(set + "/output_0.pb");
  Outcome o = tccRun(args("--check"));
  EXPECT_EQ(o.exitCode, 1) << o.output;
  EXPECT_TRUE(contains(o.output, "FAIL  max_abs_err=5 max_rel_err=0.1 "
                                 "mismatches=1/6  first at [1,1] (index 4): "
                                 "got 55, expected 50"))
      << o.output;
  // A looser tolerance lets it pass.
  EXPECT_EQ(tccRun(args("--check --rtol 0.2")).exitCode, 0);
}

TEST_F(TccRunTest, CheckFailsOnShapeMismatch) {
  tcc::Tensor::create(TCC_DTYPE_F32, {3, 2}).save(set + "/output_0.pb");
  Outcome o = tccRun(args("--check"));
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "FAIL  shape mismatch: the output is "
                                 "f32[2x3], output_0.pb holds f32[3x2]"))
      << o.output;
}

TEST_F(TccRunTest, NanMatchesNanOnly) {
  tcc::Tensor a = iota(1);
  a.data<float>()[0] = NAN;
  a.save(set + "/input_0.pb");
  tcc::Tensor expected = iota(11, 11);
  expected.data<float>()[0] = NAN;
  expected.save(set + "/output_0.pb");
  EXPECT_EQ(tccRun(args("--check")).exitCode, 0);
  expected.data<float>()[0] = INFINITY;
  expected.save(set + "/output_0.pb");
  Outcome o = tccRun(args("--check --atol 1e30"));
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "got nan, expected inf")) << o.output;
}

TEST_F(TccRunTest, WrongInputShapeNamesFileAndInput) {
  tcc::Tensor::create(TCC_DTYPE_F32, {3, 2}).save(set + "/input_0.pb");
  Outcome o = tccRun(args());
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_EQ(o.output, "tcc-run: error: " + set +
                          "/input_0.pb: input 0 'a' expects f32[2x3], the "
                          "file holds f32[3x2]\n");
}

TEST_F(TccRunTest, WrongInputCount) {
  iota(0).save(set + "/input_2.pb");
  Outcome o = tccRun(args());
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "holds 3 input files, the artifact takes 2 "
                                 "inputs"))
      << o.output;
  std::filesystem::remove(set + "/input_2.pb");
  std::filesystem::rename(set + "/input_1.npy", set + "/input_5.npy");
  o = tccRun(args());
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "has no input_1.pb or .npy for input 1 'b'"))
      << o.output;
}

TEST_F(TccRunTest, BadArtifact) {
  Outcome o = tccRun(std::string(TCC_FAKE_ARTIFACT_ABI99) + " --inputs " + set);
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "tcc-run: error: ")) << o.output;
  EXPECT_TRUE(contains(o.output, "ABI version 99")) << o.output;
  o = tccRun(dir / "missing.so --inputs " + set);
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "missing.so")) << o.output;
}

// --device names what the artifact must run on: the fake artifact is a
// CPU one (its target x86_64-fake), so --device cpu runs it and --device
// cuda is one error naming the artifact, its target and the fix.
TEST_F(TccRunTest, DeviceMustMatchTheArtifact) {
  Outcome o = tccRun(args("--device cpu"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  o = tccRun(args("--device cuda"));
  EXPECT_EQ(o.exitCode, 1) << o.output;
  EXPECT_TRUE(contains(o.output, "tcc-run: error: '" +
                                     std::string(TCC_FAKE_ARTIFACT) +
                                     "' was compiled for the CPU (target "
                                     "x86_64-fake), not --device cuda "
                                     "(compile it with tcc --target=cuda)"))
      << o.output;
  EXPECT_EQ(tccRun(args("--device tpu")).exitCode, 2);
}

TEST_F(TccRunTest, UsageErrors) {
  EXPECT_EQ(tccRun(args("--frobnicate")).exitCode, 2);
  EXPECT_EQ(tccRun(args("--bench")).exitCode, 2);
  EXPECT_EQ(tccRun(args("--rtol abc")).exitCode, 2);
  EXPECT_EQ(tccRun(args("--threads -1")).exitCode, 2);
  EXPECT_EQ(tccRun(TCC_FAKE_ARTIFACT).exitCode, 2); // no --inputs
  Outcome o = tccRun("--inputs " + set);
  EXPECT_EQ(o.exitCode, 2);
  EXPECT_TRUE(contains(o.output, "tcc-run: error: no ARTIFACT given"));
  o = tccRun("--help");
  EXPECT_EQ(o.exitCode, 0);
  EXPECT_TRUE(contains(o.output, "usage: tcc-run ARTIFACT --inputs DIR"));
}

TEST_F(TccRunTest, Bench) {
  Outcome o = tccRun(args("--bench 5 --warmup=1"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const char *stat :
       {"5 runs (1 warmup)", "median_ms=", "min_ms=", "p90_ms=", "mean_ms="})
    EXPECT_TRUE(contains(o.output, stat)) << o.output;
}

TEST_F(TccRunTest, JsonReport) {
  Outcome o = tccRun(args("--check --bench 3 --json"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const char *part :
       {"{\"artifact\":", "\"model\":\"fake_add\"",
        "\"target\":\"x86_64-fake\"",
        "\"inputs\":[{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[2,3]},",
        "\"check\":{\"pass\":true,\"max_abs_error\":0,\"max_rel_error\":0,"
        "\"mismatches\":0,\"elements\":6,\"first_mismatch\":null}",
        "\"bench\":{\"runs\":3,\"warmup\":3,\"median_ms\":",
        "\"passed\":true}"})
    EXPECT_TRUE(contains(o.output, part)) << part << "\n" << o.output;
  EXPECT_EQ(o.output.back(), '\n');
  EXPECT_EQ(std::count(o.output.begin(), o.output.end(), '\n'), 1);
}

// --compare B: A and B in turn in one process, B's outputs checked too.
TEST_F(TccRunTest, CompareRunsBothInTurn) {
  const std::string b = TCC_FAKE_ARTIFACT;
  Outcome o = tccRun(args("--check --bench 6 --threads 2 --compare " + b));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const std::string &part :
       {std::string("bench: 6 runs (3 warmup): median_ms="),
        std::string("compare output 0: PASS  max_abs_err=0"),
        "compare " + b + ": median_ms=",
        std::string("compare: B/A median of 6 paired runs "),
        std::string(", B faster in ")})
    EXPECT_TRUE(contains(o.output, part)) << part << "\n" << o.output;
  o = tccRun(args("--check --bench 4 --json --compare " + b));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const std::string &part :
       {"\"compare\":{\"artifact\":\"" + b + "\",\"median_ms\":",
        std::string("\"median_ratio\":"), std::string("\"b_faster\":"),
        std::string("\"checks\":[{\"pass\":true,")})
    EXPECT_TRUE(contains(o.output, part)) << part << "\n" << o.output;
}

TEST_F(TccRunTest, CompareNeedsTheSameInputsAndOutputs) {
  Outcome o =
      tccRun(args("--bench 2 --compare " + std::string(TCC_FAKE_ARTIFACT_3X3)));
  EXPECT_EQ(o.exitCode, 1) << o.output;
  EXPECT_TRUE(contains(o.output, std::string("--compare: '") +
                                     TCC_FAKE_ARTIFACT_3X3 +
                                     "' input 0 is f32[3x3], '" +
                                     TCC_FAKE_ARTIFACT + "' has f32[2x3]"))
      << o.output;
  o = tccRun(
      args("--bench 2 --compare " + std::string(TCC_FAKE_ARTIFACT_FAILS)));
  EXPECT_EQ(o.exitCode, 1) << o.output;
  EXPECT_TRUE(contains(o.output, "tcc-run: error: ")) << o.output;
  o = tccRun(args("--bench 2 --compare " + dir / "missing.so"));
  EXPECT_EQ(o.exitCode, 1) << o.output;
  EXPECT_TRUE(contains(o.output, "missing.so")) << o.output;
}

TEST_F(TccRunTest, CompareUsageErrors) {
  Outcome o = tccRun(args("--compare " + std::string(TCC_FAKE_ARTIFACT)));
  EXPECT_EQ(o.exitCode, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--compare needs --bench N")) << o.output;
  o = tccRun(
      args("--bench 2 --profile --compare " + std::string(TCC_FAKE_ARTIFACT)));
  EXPECT_EQ(o.exitCode, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "--compare and --profile do not go together"))
      << o.output;
}

TEST_F(TccRunTest, MemoryStats) {
  Outcome o = tccRun(args("--check --memory-stats"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const char *part :
       {"tcc caching allocator summary: host",
        // a, b, the expected output, the output and the workspace; all but
        // the last two are freed by the time it prints
        "allocations 5, frees 3,", "| Allocated memory      |",
        "| Reserved memory       |   2.00 MiB |   2.00 MiB |   2.00 MiB |"})
    EXPECT_TRUE(contains(o.output, part)) << part << "\n" << o.output;

  o = tccRun(args("--json --memory-stats"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  for (const char *part :
       {"\"memory\":{\"allocator\":\"host\",\"allocated_bytes\":",
        "\"num_allocs\":4,\"num_frees\":2,", "\"num_ooms\":0,",
        "\"fragmentation\":", "},\"passed\":true}"})
    EXPECT_TRUE(contains(o.output, part)) << part << "\n" << o.output;
  EXPECT_FALSE(contains(tccRun(args("--json")).output, "\"memory\""));
}

TEST_F(TccRunTest, SeveralSetsAndOutputs) {
  std::string second = dir / "test_data_set_1";
  std::filesystem::copy(set, second);
  Outcome o =
      tccRun(std::string(TCC_FAKE_ARTIFACT) + " --inputs " +
             dir.path().string() + " --check --outputs " + (dir / "out"));
  EXPECT_EQ(o.exitCode, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "test_data_set_0: latency")) << o.output;
  EXPECT_TRUE(contains(o.output, "test_data_set_1: latency")) << o.output;
  tcc::Tensor written =
      tcc::Tensor::load(dir / "out/test_data_set_1/output_0.pb");
  EXPECT_EQ(written.name(), "sum");
  EXPECT_EQ(written.data<float>()[5], 66);
}

TEST_F(TccRunTest, MissingExpectedOutput) {
  std::filesystem::remove(set + "/output_0.pb");
  Outcome o = tccRun(args("--check"));
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_TRUE(contains(o.output, "has no output_0.pb or .npy")) << o.output;
}

} // namespace
