// options_test.cc - tcc-run's argument parser: defaults, every option in
// both spellings, --help, and every usage error with its message.
#include "tooling/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using tcc::tooling::Options;
using tcc::tooling::parseArgs;
using tcc::tooling::parseSize;
using tcc::tooling::UsageError;
using tcc::tooling::usageText;

namespace {

// The message of the UsageError that parsing `args` throws ("" if none).
std::string usageError(const std::vector<std::string> &args) {
  try {
    parseArgs(args);
  } catch (const UsageError &e) {
    return e.what();
  }
  return "";
}

TEST(OptionsTest, Defaults) {
  Options o = parseArgs({"m.so", "--inputs", "data"});
  EXPECT_EQ(o.artifact, "m.so");
  EXPECT_EQ(o.inputs, "data");
  EXPECT_EQ(o.outputs, "");
  EXPECT_EQ(o.compare, "");
  EXPECT_FALSE(o.check || o.json || o.help || o.memoryStats || o.profile);
  EXPECT_EQ(o.rtol, 1e-3);
  EXPECT_EQ(o.atol, 1e-7);
  EXPECT_EQ(o.bench, 0);
  EXPECT_EQ(o.warmup, 3);
  EXPECT_EQ(o.threads, 0);
  EXPECT_EQ(o.maxInputBytes, 0u);
}

TEST(OptionsTest, EveryOptionWithSeparateValues) {
  Options o = parseArgs({"--inputs",
                         "in",
                         "--check",
                         "--rtol",
                         "0.5",
                         "--atol",
                         "2e-6",
                         "--bench",
                         "10",
                         "--warmup",
                         "0",
                         "--threads",
                         "4",
                         "--outputs",
                         "out",
                         "--json",
                         "--memory-stats",
                         "--compare",
                         "b.so",
                         "--max-input-bytes",
                         "64M",
                         "a.so"});
  EXPECT_EQ(o.artifact, "a.so"); // the artifact may come last
  EXPECT_EQ(o.inputs, "in");
  EXPECT_EQ(o.outputs, "out");
  EXPECT_EQ(o.compare, "b.so");
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.json);
  EXPECT_TRUE(o.memoryStats);
  EXPECT_FALSE(o.profile);
  EXPECT_EQ(o.rtol, 0.5);
  EXPECT_EQ(o.atol, 2e-6);
  EXPECT_EQ(o.bench, 10);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.threads, 4);
  EXPECT_EQ(o.maxInputBytes, 64u << 20);
}

TEST(OptionsTest, EveryOptionWithInlineValues) {
  Options o = parseArgs({"a.so", "--inputs=in=x", "--rtol=0", "--atol=1",
                         "--bench=2", "--warmup=7", "--threads=1",
                         "--outputs=o", "--max-input-bytes=1K", "--profile"});
  EXPECT_EQ(o.inputs, "in=x"); // only the first '=' separates
  EXPECT_EQ(o.rtol, 0);
  EXPECT_EQ(o.atol, 1);
  EXPECT_EQ(o.bench, 2);
  EXPECT_EQ(o.warmup, 7);
  EXPECT_EQ(o.threads, 1);
  EXPECT_EQ(o.outputs, "o");
  EXPECT_EQ(o.maxInputBytes, 1024u);
  EXPECT_TRUE(o.profile);
}

TEST(OptionsTest, LastValueWins) {
  Options o = parseArgs(
      {"a.so", "--inputs", "x", "--threads", "2", "--threads=3", "--inputs=y"});
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.inputs, "y");
}

TEST(OptionsTest, HelpStopsParsing) {
  EXPECT_TRUE(parseArgs({"--help"}).help);
  EXPECT_TRUE(parseArgs({"-h"}).help);
  // Nothing after it is looked at, and nothing is required.
  EXPECT_TRUE(parseArgs({"-h", "--frobnicate"}).help);
  // What comes before it still is.
  EXPECT_EQ(usageError({"--frobnicate", "--help"}),
            "unknown option '--frobnicate'");
}

TEST(OptionsTest, ArgcArgvSkipsTheProgramName) {
  const char *argv[] = {"tcc-run", "m.so", "--inputs", "d", "--check"};
  Options o = parseArgs(5, const_cast<char **>(argv));
  EXPECT_EQ(o.artifact, "m.so");
  EXPECT_EQ(o.inputs, "d");
  EXPECT_TRUE(o.check);
}

TEST(OptionsTest, UnknownOptionAndMissingValue) {
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--frobnicate"}),
            "unknown option '--frobnicate'");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--check=yes"}),
            "unknown option '--check=yes'");
  // A single dash is not an option but a second ARTIFACT.
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "-x"}),
            "unexpected argument '-x': only one ARTIFACT");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--bench"}),
            "--bench needs a value");
  EXPECT_EQ(usageError({"a.so", "--inputs"}), "--inputs needs a value");
}

TEST(OptionsTest, ArtifactAndInputsAreRequired) {
  EXPECT_EQ(usageError({}), "no ARTIFACT given");
  EXPECT_EQ(usageError({"--inputs", "d"}), "no ARTIFACT given");
  EXPECT_EQ(usageError({"a.so"}), "--inputs DIR is required");
  EXPECT_EQ(usageError({"a.so", "--inputs="}), "--inputs DIR is required");
  EXPECT_EQ(usageError({"a.so", "b.so", "--inputs", "d"}),
            "unexpected argument 'b.so': only one ARTIFACT");
}

TEST(OptionsTest, TolerancesMustBeFiniteAndNonNegative) {
  for (const char *bad : {"abc", "-1", "nan", "inf", "1e999", "1x", ""})
    EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--rtol", bad}),
              std::string("--rtol expects a non-negative number, got '") + bad +
                  "'")
        << bad;
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--atol=-0.5"}),
            "--atol expects a non-negative number, got '-0.5'");
}

TEST(OptionsTest, CountsMustBeNonNegativeInt32) {
  for (const char *bad : {"-1", "1.5", "x", "", "2147483648"})
    EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--threads", bad}),
              std::string("--threads expects a non-negative integer, got '") +
                  bad + "'")
        << bad;
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--bench=-3"}),
            "--bench expects a non-negative integer, got '-3'");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--warmup", "w"}),
            "--warmup expects a non-negative integer, got 'w'");
  EXPECT_EQ(parseArgs({"a.so", "--inputs", "d", "--bench", "2147483647"}).bench,
            2147483647);
}

TEST(OptionsTest, CompareNeedsBenchAndExcludesProfile) {
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--compare", "b.so"}),
            "--compare needs --bench N (the runs to pair)");
  EXPECT_EQ(usageError(
                {"a.so", "--inputs", "d", "--compare", "b.so", "--bench", "0"}),
            "--compare needs --bench N (the runs to pair)");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--compare", "b.so", "--bench",
                        "2", "--profile"}),
            "--compare and --profile do not go together");
  EXPECT_EQ(
      parseArgs({"a.so", "--inputs", "d", "--compare", "b.so", "--bench", "2"})
          .compare,
      "b.so");
}

TEST(OptionsTest, DeviceIsCpuOrCuda) {
  EXPECT_EQ(parseArgs({"a.so", "--inputs", "d"}).device, "");
  EXPECT_EQ(parseArgs({"a.so", "--inputs", "d", "--device", "cuda"}).device,
            "cuda");
  EXPECT_EQ(parseArgs({"a.so", "--inputs", "d", "--device=cpu"}).device, "cpu");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--device", "gpu"}),
            "--device expects cpu or cuda, got 'gpu'");
  EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--device"}),
            "--device needs a value");
}

TEST(OptionsTest, Sizes) {
  EXPECT_EQ(parseSize("--max-input-bytes", "4096"), 4096u);
  EXPECT_EQ(parseSize("--max-input-bytes", "1K"), 1024u);
  EXPECT_EQ(parseSize("--max-input-bytes", "64m"), 64ull << 20);
  EXPECT_EQ(parseSize("--max-input-bytes", "4G"), 4ull << 30);
  EXPECT_EQ(parseSize("--max-input-bytes", "2t"), 2ull << 40);
  // The largest count of T that fits in 64 bits.
  EXPECT_EQ(parseSize("--max-input-bytes", "16777215T"), 16777215ull << 40);
}

TEST(OptionsTest, BadSizes) {
  for (const char *bad : {"0", "0K", "12Q", "-1", "K", "", "1.5G", "16777216T",
                          "18446744073709551616"})
    EXPECT_EQ(usageError({"a.so", "--inputs", "d", "--max-input-bytes", bad}),
              std::string("--max-input-bytes expects a positive size such as "
                          "4096, 64M or 4G, got '") +
                  bad + "'")
        << bad;
}

TEST(OptionsTest, UsageTextNamesEveryOption) {
  const std::string usage = usageText();
  EXPECT_EQ(usage.rfind("usage: tcc-run ARTIFACT --inputs DIR", 0), 0u);
  for (const char *option :
       {"--inputs DIR", "--check", "--rtol R", "--atol A", "--bench N",
        "--warmup W", "--threads T", "--outputs DIR", "--json",
        "--memory-stats", "--profile", "--compare B", "--max-input-bytes N",
        "--device D", "--help",
        "exit status: 0 success, 1 error or failed check, 2 usage "
        "error"})
    EXPECT_NE(usage.find(option), std::string::npos) << option;
}

} // namespace
