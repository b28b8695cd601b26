// test_util.h - helpers shared by the runtime's unit tests.
#ifndef TCC_TEST_UNIT_RUNTIME_TEST_UTIL_H
#define TCC_TEST_UNIT_RUNTIME_TEST_UTIL_H

#include "tcc/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tcc::testing {

/// A status taken apart (and freed) so that tests can compare its parts.
struct Result {
  tcc_status_code_t code;
  std::string message;
};

inline Result result(tcc_status_t status) {
  Result r{tcc_status_code(status), tcc_status_message(status)};
  tcc_status_free(status);
  return r;
}

/// A fresh directory, removed with everything in it at the end of a test.
class TempDir {
public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "tcc-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path &path() const { return path_; }
  std::string operator/(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  std::filesystem::path path_;
};

/// An f32[2x3] tensor holding first, first + step, ...
inline Tensor iota(float first, float step = 1) {
  Tensor t = Tensor::create(TCC_DTYPE_F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.data<float>()[i] = first + step * i;
  return t;
}

} // namespace tcc::testing

#define EXPECT_TCC_OK(expr)                                                    \
  do {                                                                         \
    ::tcc::testing::Result r_ = ::tcc::testing::result(expr);                  \
    EXPECT_EQ(r_.code, TCC_STATUS_OK) << r_.message;                           \
  } while (0)

#define ASSERT_TCC_OK(expr)                                                    \
  do {                                                                         \
    ::tcc::testing::Result r_ = ::tcc::testing::result(expr);                  \
    ASSERT_EQ(r_.code, TCC_STATUS_OK) << r_.message;                           \
  } while (0)

#endif // TCC_TEST_UNIT_RUNTIME_TEST_UTIL_H
