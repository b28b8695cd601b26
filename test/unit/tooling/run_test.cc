// run_test.cc - finding test data, loading inputs, and whole runs of the
// fake artifact (sum = a + b over f32[2x3]) through the library.
#include "tooling/run.h"

#include "runtime/test_util.h"

#include <cstdio>
#include <fstream>

using namespace tcc::tooling;
using tcc::testing::iota;
using tcc::testing::TempDir;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path &p) { std::ofstream(p) << "x"; }

std::string names(const std::vector<fs::path> &paths) {
  std::string s;
  for (const fs::path &p : paths)
    s += (s.empty() ? "" : " ") + p.filename().string();
  return s;
}

TEST(RunTest, FindSetsInNumericOrder) {
  TempDir dir;
  for (const char *name :
       {"test_data_set_10", "test_data_set_2", "test_data_set_0", "other"})
    fs::create_directory(dir / name);
  touch(dir / "test_data_set_3"); // a file, not a set
  EXPECT_EQ(names(findSets(dir.path())),
            "test_data_set_0 test_data_set_2 test_data_set_10");
}

TEST(RunTest, FindSetsFallsBackToTheFolder) {
  TempDir dir;
  fs::create_directory(dir / "other");
  std::vector<fs::path> sets = findSets(dir.path());
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0], dir.path());
}

TEST(RunTest, FindSetsNeedsAFolder) {
  TempDir dir;
  touch(dir / "file");
  try {
    findSets(dir / "file");
    FAIL() << "no error";
  } catch (const UserError &e) {
    EXPECT_EQ(std::string(e.what()),
              "'" + (dir / "file") + "' is not a directory");
  }
  EXPECT_THROW(findSets(dir / "missing"), UserError);
}

TEST(RunTest, FindTensorFilePrefersPb) {
  TempDir dir;
  EXPECT_TRUE(findTensorFile(dir.path(), "input", 0).empty());
  touch(dir / "input_0.npy");
  EXPECT_EQ(findTensorFile(dir.path(), "input", 0).filename(), "input_0.npy");
  touch(dir / "input_0.pb");
  EXPECT_EQ(findTensorFile(dir.path(), "input", 0).filename(), "input_0.pb");
  touch(dir / "output_3.npy");
  EXPECT_EQ(findTensorFile(dir.path(), "output", 3).filename(), "output_3.npy");
}

TEST(RunTest, CountInputFiles) {
  TempDir dir;
  EXPECT_EQ(countInputFiles(dir.path()), 0u);
  for (const char *name :
       {"input_0.pb", "input_0.npy", "input_1.npy", "input_12.pb",
        // none of these is an input file
        "input_.pb", "input_x.pb", "input_1.txt", "output_0.pb", "notes"})
    touch(dir / name);
  EXPECT_EQ(countInputFiles(dir.path()), 3u); // 0 once, 1 and 12
}

/// A test_data_set folder for the fake artifact, the expected output right.
class RunFakeArtifact : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directory(set);
    iota(1).save(set + "/input_0.pb");
    iota(10, 10).save(set + "/input_1.npy");
    iota(11, 11).save(set + "/output_0.pb");
    options.artifact = TCC_FAKE_ARTIFACT;
    options.inputs = set;
    options.threads = 1;
  }

  // What run() writes, and its exit status.
  std::pair<int, std::string> runToString() {
    std::FILE *f = std::tmpfile();
    int status = run(options, f);
    std::string text(std::ftell(f), '\0');
    std::rewind(f);
    text.resize(std::fread(text.data(), 1, text.size(), f));
    std::fclose(f);
    return {status, text};
  }

  TempDir dir;
  std::string set = dir / "test_data_set_0";
  Options options;
};

TEST_F(RunFakeArtifact, LoadInputsChecksDtypeAndShape) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  std::vector<tcc::Tensor> inputs = loadInputs(model, set, 0);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].data<float>()[5], 60);

  tcc::Tensor::create(TCC_DTYPE_I32, {2, 3}).save(set + "/input_1.npy");
  try {
    loadInputs(model, set, 0);
    FAIL() << "no error";
  } catch (const UserError &e) {
    EXPECT_EQ(std::string(e.what()),
              set + "/input_1.npy: input 1 'b' expects f32[2x3], the file "
                    "holds i32[2x3]");
  }
}

TEST_F(RunFakeArtifact, LoadInputsHonoursTheSizeCap) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  EXPECT_THROW(loadInputs(model, set, 16), tcc::Error);
  EXPECT_EQ(loadInputs(model, set, 1024).size(), 2u);
}

TEST_F(RunFakeArtifact, MakeOutputsNamesThem) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  std::vector<tcc::Tensor> outputs =
      makeOutputs(model, loadInputs(model, set, 1024));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name(), "sum");
  EXPECT_EQ(outputs[0].shape(), (std::vector<int64_t>{2, 3}));
}

TEST_F(RunFakeArtifact, ExecuteChecksAndBenches) {
  options.check = true;
  options.bench = 3;
  options.warmup = 1;
  Report r = execute(options);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.model.name, "fake_add");
  EXPECT_EQ(r.threads, 1);
  ASSERT_EQ(r.sets.size(), 1u);
  const SetResult &s = r.sets[0];
  EXPECT_EQ(s.dir, fs::path(set));
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0].data<float>()[5], 66);
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_TRUE(s.checks[0].pass);
  EXPECT_EQ(s.checks[0].elements, 6);
  EXPECT_TRUE(s.benched);
  EXPECT_EQ(s.bench.runs, 3);
  EXPECT_EQ(s.bench.warmup, 1);
  EXPECT_FALSE(s.compared);
  EXPECT_FALSE(r.memory);
  EXPECT_FALSE(r.profile);
}

TEST_F(RunFakeArtifact, RunReturnsOneOnAFailedCheck) {
  options.check = true;
  auto [status, text] = runToString();
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("output 0 'sum' f32[2x3]: PASS"), std::string::npos)
      << text;

  iota(11, 12).save(set + "/output_0.pb");
  options.json = true;
  std::tie(status, text) = runToString();
  EXPECT_EQ(status, 1);
  nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["passed"], false);
  EXPECT_EQ(doc["sets"][0]["outputs"][0]["check"]["mismatches"], 5);
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(RunFakeArtifact, CompareChecksBothArtifacts) {
  options.check = true;
  options.bench = 2;
  options.warmup = 0;
  options.compare = TCC_FAKE_ARTIFACT;
  Report r = execute(options);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_TRUE(r.sets[0].compared);
  EXPECT_EQ(r.sets[0].compare.bench.runs, 2);
  ASSERT_EQ(r.sets[0].compare.checks.size(), 1u);
  EXPECT_TRUE(r.sets[0].compare.checks[0].pass);
  EXPECT_EQ(r.compare, TCC_FAKE_ARTIFACT);
}

TEST_F(RunFakeArtifact, MissingExpectedOutputIsAnError) {
  fs::remove(set + "/output_0.pb");
  options.check = true;
  try {
    execute(options);
    FAIL() << "no error";
  } catch (const UserError &e) {
    EXPECT_EQ(std::string(e.what()),
              "'" + set +
                  "' has no output_0.pb or .npy to check output 0 "
                  "'sum' against");
  }
}

TEST_F(RunFakeArtifact, ProfileNeedsProfilePoints) {
  options.profile = true;
  try {
    execute(options);
    FAIL() << "no error";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("reported no kernels to --profile"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
