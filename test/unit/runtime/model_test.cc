// model_test.cc - loading artifacts and validating their descriptors.
#include "test_util.h"

#include <cstdint>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

using tcc::testing::Result;
using tcc::testing::result;

namespace {

TEST(Model, LoadDescribes) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  EXPECT_EQ(model.numInputs(), 2u);
  EXPECT_EQ(model.numOutputs(), 1u);
  EXPECT_STREQ(model.input(1).name, "b");
  EXPECT_EQ(model.output(0).dtype, TCC_DTYPE_F32);
  EXPECT_EQ(model.output(0).rank, 2);
  EXPECT_EQ(model.name(), "fake_add");
  EXPECT_EQ(model.target(), "x86_64-fake");
  EXPECT_EQ(model.version(), "0.0.0-fake");
  EXPECT_EQ(model.workspaceBytes(), 24u);
  EXPECT_EQ(model.desc().abi_version, TCC_ABI_VERSION);
  EXPECT_EQ(tcc_model_input(model.get(), 2), nullptr);
  EXPECT_EQ(tcc_model_output(model.get(), 1), nullptr);
  EXPECT_THROW(model.output(1), std::out_of_range);
}

TEST(Model, LoadRuns) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context(model, 1);
  std::vector<tcc::Tensor> out =
      context.run({tcc::testing::iota(1), tcc::testing::iota(10, 10)});
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[0].data<float>()[i], 11 + 11 * i);
}

/// The file /proc/self/maps names for the mapping holding `p` ("" for an
/// anonymous one), or "?" where no mapping holds it.
std::string mappedFile(const void *p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    const size_t dash = range.find('-');
    const uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (at >= lo && at < hi)
      return path;
  }
  return "?";
}

/// Loads `path`, checks that a run reads its weights intact, and returns
/// the file the middle of its weights is mapped from.
std::string weightsMapping(const char *path) {
  tcc::Model model = tcc::Model::load(path);
  void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << "the model's library is loaded";
  if (!handle)
    return "?";
  const auto *w = static_cast<const float *>(dlsym(handle, "fake_weights"));
  constexpr int64_t n = 3145728;
  std::string file = "?";
  EXPECT_NE(w, nullptr);
  if (w) {
    EXPECT_EQ(w[0], 1.0f);
    EXPECT_EQ(w[n / 2], 0.0f);
    EXPECT_EQ(w[n - 1], 2.0f);
    file = mappedFile(w + n / 2);
  }
  tcc::Context context(model, 2);
  std::vector<tcc::Tensor> out =
      context.run({tcc::testing::iota(1), tcc::testing::iota(10, 10)});
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[0].data<float>()[i], 11 + 11 * i);
  dlclose(handle);
  return file;
}

// A loaded artifact's read-only segments of 4 MiB or more (its weights)
// are copied onto anonymous memory offered for huge pages, at the same
// addresses: the weights read the same, runs see them intact, and the
// mapping is no longer the file's. TCC_WEIGHT_PAGES=file keeps the file's,
// as does a kernel without transparent huge pages (mode "never"), where
// the copy would gain nothing.
TEST(Model, WeightsMoveOntoHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  const bool huge =
      std::getline(thp, mode) && mode.find("[never]") == std::string::npos;
  const std::string moved = weightsMapping(TCC_FAKE_ARTIFACT_WEIGHTS);
  if (huge)
    EXPECT_EQ(moved, "");
  else
    EXPECT_EQ(std::filesystem::canonical(moved),
              std::filesystem::canonical(TCC_FAKE_ARTIFACT_WEIGHTS))
        << "no transparent huge pages here: the file's pages stay";
  ::setenv("TCC_WEIGHT_PAGES", "file", 1);
  const std::string kept = weightsMapping(TCC_FAKE_ARTIFACT_WEIGHTS_FILE);
  ::unsetenv("TCC_WEIGHT_PAGES");
  EXPECT_EQ(std::filesystem::canonical(kept),
            std::filesystem::canonical(TCC_FAKE_ARTIFACT_WEIGHTS_FILE));
}

TEST(Model, MissingFileIsNotFound) {
  tcc_model_t *model = nullptr;
  Result r = result(tcc_model_load("/nonexistent/model.so", &model));
  EXPECT_EQ(r.code, TCC_STATUS_NOT_FOUND);
  EXPECT_NE(r.message.find("/nonexistent/model.so"), std::string::npos)
      << r.message;
  EXPECT_EQ(model, nullptr);
}

TEST(Model, AbiMismatchIsRefused) {
  tcc_model_t *model = nullptr;
  Result r = result(tcc_model_load(TCC_FAKE_ARTIFACT_ABI99, &model));
  EXPECT_EQ(r.code, TCC_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(r.message.find("ABI version 99, this runtime implements "
                           "version " +
                           std::to_string(TCC_ABI_VERSION)),
            std::string::npos)
      << r.message;
  EXPECT_EQ(model, nullptr);
}

TEST(Model, NotAnArtifact) {
  tcc_model_t *model = nullptr;
  Result r = result(tcc_model_load(TCC_NOT_AN_ARTIFACT, &model));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("does not export tcc_artifact_get"),
            std::string::npos)
      << r.message;

  tcc::testing::TempDir dir;
  std::ofstream(dir / "junk.so") << "not an ELF file";
  r = result(tcc_model_load((dir / "junk.so").c_str(), &model));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("cannot load artifact"), std::string::npos)
      << r.message;
  EXPECT_EQ(model, nullptr);
}

// A truncated artifact (a copy cut short, a download that stopped) is
// refused with an error at every length: dlopen alone maps the missing
// segments and the first touch raises SIGBUS.
TEST(Model, TruncatedArtifactIsRefused) {
  std::ifstream in(TCC_FAKE_ARTIFACT, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 4096u);
  tcc::testing::TempDir dir;
  std::string path = dir / "cut.so";
  for (size_t length = 0; length < bytes.size(); length += 509) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(length));
    tcc_model_t *model = nullptr;
    Result r = result(tcc_model_load(path.c_str(), &model));
    EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT) << length << " bytes";
    EXPECT_NE(r.message.find("cannot load artifact"), std::string::npos)
        << length << " bytes: " << r.message;
    EXPECT_EQ(model, nullptr);
  }
}

// An ELF for another machine is named as such.
TEST(Model, OtherMachineIsRefused) {
  std::ifstream in(TCC_FAKE_ARTIFACT, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  bytes[18] = 183; // e_machine = EM_AARCH64
  bytes[19] = 0;
  tcc::testing::TempDir dir;
  std::string path = dir / "arm.so";
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
  tcc_model_t *model = nullptr;
  Result r = result(tcc_model_load(path.c_str(), &model));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("built for another machine"), std::string::npos)
      << r.message;
}

int32_t noop(const tcc_run_args_t *) { return 0; }

const int64_t kShape[] = {2, 3};
const int64_t kNegative[] = {2, -3};

/// A valid descriptor for wrap tests to break one field of.
struct Descriptor {
  tcc_tensor_desc_t inputs[1] = {{"x", TCC_DTYPE_F32, 2, kShape}};
  tcc_tensor_desc_t outputs[1] = {{"y", TCC_DTYPE_I64, 2, kShape}};
  tcc_artifact_desc_t desc = {TCC_ABI_VERSION, 0,       "v", "t", "m", 1, 1,
                              inputs,          outputs, 0,   0,   noop};
};

Result wrap(const tcc_artifact_desc_t *desc) {
  tcc_model_t *model = nullptr;
  Result r = result(tcc_model_wrap(desc, &model));
  tcc_model_free(model);
  return r;
}

TEST(Model, WrapValidatesDescriptor) {
  Descriptor ok;
  EXPECT_EQ(wrap(&ok.desc).code, TCC_STATUS_OK);
  EXPECT_EQ(wrap(nullptr).code, TCC_STATUS_INVALID_ARGUMENT);

  struct Case {
    const char *message;
    void (*breakIt)(Descriptor &);
  } cases[] = {
      {"ABI version 99", [](Descriptor &d) { d.desc.abi_version = 99; }},
      {"no run function", [](Descriptor &d) { d.desc.run = nullptr; }},
      {"lists 1 inputs but no array",
       [](Descriptor &d) { d.desc.inputs = nullptr; }},
      {"lists 3 outputs",
       [](Descriptor &d) {
         d.desc.num_outputs = 3;
         d.desc.outputs = nullptr;
       }},
      {"input 0 has no name",
       [](Descriptor &d) { d.inputs[0].name = nullptr; }},
      {"input 0 'x': negative rank -1",
       [](Descriptor &d) { d.inputs[0].rank = -1; }},
      {"output 0 'y': dimension 1 is negative in i64[2x-3]",
       [](Descriptor &d) { d.outputs[0].shape = kNegative; }},
      {"output 0 'y': unknown dtype 8",
       [](Descriptor &d) { d.outputs[0].dtype = 8; }},
      {"output 0 'y': rank 2 with a NULL shape",
       [](Descriptor &d) { d.outputs[0].shape = nullptr; }},
      {"workspace_align 48 is not a power of two",
       [](Descriptor &d) { d.desc.workspace_align = 48; }},
      {"lists 2 symbols but no array",
       [](Descriptor &d) { d.desc.num_symbols = 2; }},
      {"symbol 0 has no name or bounds 5..1",
       [](Descriptor &d) {
         static const tcc_symbol_desc_t backwards[] = {{"batch", 5, 1}};
         d.desc.num_symbols = 1;
         d.desc.symbols = backwards;
       }},
      {"input 0 'x': dimension 0 names symbol 3 of 1",
       [](Descriptor &d) {
         static const tcc_symbol_desc_t batch[] = {{"batch", 1, 8}};
         static const int64_t shape[] = {-1, 3};
         static const int32_t symbols[] = {3, -1};
         d.desc.num_symbols = 1;
         d.desc.symbols = batch;
         d.inputs[0].shape = shape;
         d.inputs[0].symbols = symbols;
       }},
      {"its CUDA image lacks its architecture, PTX, kernel names or weight "
       "upload",
       [](Descriptor &d) {
         static const tcc_cuda_image_t image = {"sm_90", nullptr};
         d.desc.cuda = &image;
       }},
      {"input 0 'x': dimension 1 is fixed but names a symbol",
       [](Descriptor &d) {
         static const tcc_symbol_desc_t batch[] = {{"batch", 1, 8}};
         static const int32_t symbols[] = {-1, 0};
         d.desc.num_symbols = 1;
         d.desc.symbols = batch;
         d.inputs[0].symbols = symbols;
       }},
      {"symbol 0 has unknown flags 6",
       [](Descriptor &d) {
         static const tcc_symbol_desc_t odd[] = {{"n", 0, 8, 6}};
         d.desc.num_symbols = 1;
         d.desc.symbols = odd;
       }},
      // A size the run computes cannot come from an input.
      {"input 0 has the computed size count",
       [](Descriptor &d) {
         static const tcc_symbol_desc_t count[] = {
             {"count", 0, 8, TCC_SYMBOL_COMPUTED}};
         static const int64_t shape[] = {-1, 3};
         static const int32_t symbols[] = {0, -1};
         d.desc.num_symbols = 1;
         d.desc.symbols = count;
         d.inputs[0].shape = shape;
         d.inputs[0].symbols = symbols;
       }},
  };
  for (const Case &c : cases) {
    Descriptor d;
    c.breakIt(d);
    Result r = wrap(&d.desc);
    EXPECT_NE(r.code, TCC_STATUS_OK) << c.message;
    EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("linked artifact 'm'"), std::string::npos)
        << r.message;
  }
}

// A symbol's size comes from a tensor's shape: bare buffers have none.
TEST(Model, SymbolicModelsRunOnTensorsNotBuffers) {
  static const tcc_symbol_desc_t batch[] = {{"batch", 1, 8}};
  static const int64_t shape[] = {-1, 3};
  static const int32_t symbols[] = {0, -1};
  Descriptor d;
  d.desc.num_symbols = 1;
  d.desc.symbols = batch;
  d.inputs[0].shape = shape;
  d.inputs[0].symbols = symbols;
  tcc::Model model = tcc::Model::wrap(&d.desc);
  tcc::Context context(model, 1);
  alignas(64) float x[6] = {};
  alignas(64) int64_t y[6] = {};
  const void *in[] = {x};
  void *out[] = {y};
  Result r = result(tcc_context_run_buffers(context.get(), in, 1, out, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("has symbolic dimensions"), std::string::npos)
      << r.message;
}

TEST(Model, StringsMayBeMissing) {
  Descriptor d;
  d.desc.target = d.desc.tcc_version = d.desc.model_name = nullptr;
  tcc::Model model = tcc::Model::wrap(&d.desc);
  EXPECT_EQ(model.name(), "");
  EXPECT_EQ(model.target(), "");
  EXPECT_EQ(model.version(), "");
}

} // namespace
