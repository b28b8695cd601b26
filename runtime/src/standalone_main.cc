// standalone_main.cc - main() of the executables `tcc model.onnx -o model`
// makes: runs the artifact linked into the program on tensor files.
//
//   model --inputs DIR [--outputs DIR] [--threads N]
//   model IN_0 [IN_1 ...] [--outputs DIR] [--threads N]
//
// Inputs are DIR/input_K.pb (or .npy) or the files given, in the model's
// input order; outputs are written as output_K.pb into --outputs (default:
// the current directory). Exit codes: 0 success, 1 error, 2 usage.

#include "tcc/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

extern "C" const tcc_artifact_desc_t *tcc_artifact_get(void);

namespace {
int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s --inputs DIR [--outputs DIR] [--threads N]\n"
          "       %s INPUT_FILE... [--outputs DIR] [--threads N]\n",
          argv0, argv0);
  return 2;
}

int fail(tcc_status_t status) {
  fprintf(stderr, "error: %s\n", tcc_status_message(status));
  tcc_status_free(status);
  return 1;
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

void printTensor(const char *name, const tcc_tensor_t *t) {
  printf("%s: %s[", name, tcc_dtype_name(tcc_tensor_dtype(t)));
  for (int32_t i = 0; i < tcc_tensor_rank(t); ++i)
    printf(i ? ",%lld" : "%lld", (long long)tcc_tensor_shape(t)[i]);
  printf("]");
  if (tcc_tensor_dtype(t) == TCC_DTYPE_F32) {
    const float *v = static_cast<const float *>(tcc_tensor_data(t));
    int64_t n = tcc_tensor_element_count(t);
    for (int64_t i = 0; i < n && i < 8; ++i)
      printf(" %g", v[i]);
    if (n > 8)
      printf(" ...");
  }
  printf("\n");
}
} // namespace

int main(int argc, char **argv) {
  std::string inputDir, outputDir = ".";
  std::vector<std::string> files;
  int32_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--inputs" && hasValue)
      inputDir = argv[++i];
    else if (arg == "--outputs" && hasValue)
      outputDir = argv[++i];
    else if (arg == "--threads" && hasValue)
      threads = atoi(argv[++i]);
    else if (arg == "-h" || arg == "--help")
      return usage(argv[0]), 0;
    else if (!arg.empty() && arg[0] == '-')
      return usage(argv[0]);
    else
      files.push_back(arg);
  }
  if (inputDir.empty() == files.empty())
    return usage(argv[0]);

  tcc_model_t *model = nullptr;
  if (tcc_status_t s = tcc_model_wrap(tcc_artifact_get(), &model))
    return fail(s);
  uint32_t numIn = tcc_model_num_inputs(model);
  uint32_t numOut = tcc_model_num_outputs(model);
  if (files.empty())
    for (uint32_t k = 0; k < numIn; ++k) {
      std::string base = inputDir + "/input_" + std::to_string(k);
      files.push_back(exists(base + ".pb") || !exists(base + ".npy")
                          ? base + ".pb"
                          : base + ".npy");
    }
  if (files.size() != numIn) {
    fprintf(stderr, "error: the model takes %u inputs; got %zu files\n", numIn,
            files.size());
    return 1;
  }

  int rc = 0;
  std::vector<tcc_tensor_t *> ins, outs;
  std::vector<int64_t> sizes(tcc_model_num_symbols(model));
  tcc_context_t *context = nullptr;
  tcc_context_options_t options = {};
  options.num_threads = threads;
  for (const std::string &f : files) {
    tcc_tensor_t *t = nullptr;
    if (tcc_status_t s = tcc_tensor_load_file(f.c_str(), &t)) {
      rc = fail(s);
      goto done;
    }
    ins.push_back(t);
  }
  // The sizes of symbolic dimensions come from the inputs' shapes.
  if (tcc_status_t s =
          tcc_model_bind_inputs(model, ins.data(), ins.size(), sizes.data())) {
    rc = fail(s);
    goto done;
  }
  for (uint32_t k = 0; k < numOut; ++k) {
    const tcc_tensor_desc_t *d = tcc_model_output(model, k);
    tcc_tensor_t *t = nullptr;
    std::vector<int64_t> shape(d->rank);
    if (tcc_status_t s =
            tcc_model_output_shape(model, k, sizes.data(), shape.data())) {
      rc = fail(s);
      goto done;
    }
    if (tcc_status_t s =
            tcc_tensor_create(d->dtype, d->rank, shape.data(), &t)) {
      rc = fail(s);
      goto done;
    }
    tcc_tensor_set_name(t, d->name);
    outs.push_back(t);
  }
  if (tcc_status_t s = tcc_context_create(model, &options, &context)) {
    rc = fail(s);
    goto done;
  }
  if (tcc_status_t s = tcc_context_run(context, ins.data(), ins.size(),
                                       outs.data(), outs.size())) {
    rc = fail(s);
    goto done;
  }
  for (uint32_t k = 0; k < numOut; ++k) {
    std::string path = outputDir + "/output_" + std::to_string(k) + ".pb";
    if (tcc_status_t s = tcc_tensor_save_file(outs[k], path.c_str())) {
      rc = fail(s);
      goto done;
    }
    printTensor(tcc_model_output(model, k)->name, outs[k]);
  }
done:
  tcc_context_free(context);
  for (tcc_tensor_t *t : ins)
    tcc_tensor_free(t);
  for (tcc_tensor_t *t : outs)
    tcc_tensor_free(t);
  tcc_model_free(model);
  return rc;
}
