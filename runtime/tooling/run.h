// run.h - a whole tcc-run invocation, from test data to exit status.
#ifndef TCC_RUNTIME_TOOLING_RUN_H
#define TCC_RUNTIME_TOOLING_RUN_H

#include "tooling/options.h"
#include "tooling/report.h"

#include "tcc/runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace tcc::tooling {

/// Bad input data or files (as opposed to a bad command line); tcc-run
/// exits with status 1 on it.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The set folders `dir` stands for: its test_data_set_* subfolders in
/// numeric order (test_data_set_2 before test_data_set_10), or, if it has
/// none, `dir` itself. Throws UserError if `dir` is not a directory.
std::vector<std::filesystem::path> findSets(const std::filesystem::path &dir);

/// dir/<kind>_K.pb, else dir/<kind>_K.npy; empty if neither exists.
std::filesystem::path findTensorFile(const std::filesystem::path &dir,
                                     const char *kind, uint32_t k);

/// How many K have an input_K.pb or input_K.npy in `dir` (one K counts
/// once, whichever files it has).
size_t countInputFiles(const std::filesystem::path &dir);

/// The model's inputs from `dir`, each checked against its input's dtype and
/// shape; errors (UserError) name the file and the input. Files larger than
/// `maxFileBytes` are refused (0: the runtime's default cap).
std::vector<tcc::Tensor> loadInputs(const tcc::Model &model,
                                    const std::filesystem::path &dir,
                                    uint64_t maxFileBytes);

/// Tensors for the model's outputs, named as they are, their symbolic
/// dimensions sized by `inputs` (a UserError when the inputs disagree on
/// one or give a size outside its bounds).
std::vector<tcc::Tensor> makeOutputs(const tcc::Model &model,
                                     const std::vector<tcc::Tensor> &inputs);

/// Runs the invocation `o` describes, every set folder in turn, and returns
/// what the report needs. Throws tcc::Error, UserError or a filesystem error
/// on anything that stops it; a failed check is not an error (`passed` is
/// false).
Report execute(const Options &o);

/// execute(o), then its report (text, or JSON with --json) on `out`. Returns
/// the exit status: 0 if every check passed, else 1. Errors are thrown, as
/// by execute, and then nothing has been written.
int run(const Options &o, std::FILE *out = stdout);

} // namespace tcc::tooling

#endif // TCC_RUNTIME_TOOLING_RUN_H
