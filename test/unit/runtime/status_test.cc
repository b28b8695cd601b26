// status_test.cc - tcc_status_t.
#include "status.h"

#include "test_util.h"

using tcc::testing::result;

namespace {

TEST(Status, NullIsOk) {
  EXPECT_EQ(tcc_status_code(nullptr), TCC_STATUS_OK);
  EXPECT_STREQ(tcc_status_message(nullptr), "");
  tcc_status_free(nullptr);
}

TEST(Status, CarriesCodeAndFormattedMessage) {
  tcc_status_t s =
      tcc::makeStatus(TCC_STATUS_NOT_FOUND, "no '%s' (%d)", "x.pb", 3);
  EXPECT_EQ(tcc_status_code(s), TCC_STATUS_NOT_FOUND);
  EXPECT_STREQ(tcc_status_message(s), "no 'x.pb' (3)");
  tcc_status_free(s);
}

TEST(Status, CodeNames) {
  EXPECT_STREQ(tcc_status_code_name(TCC_STATUS_OK), "OK");
  EXPECT_STREQ(tcc_status_code_name(TCC_STATUS_FAILED_PRECONDITION),
               "FAILED_PRECONDITION");
  EXPECT_STREQ(tcc_status_code_name(TCC_STATUS_UNIMPLEMENTED), "UNIMPLEMENTED");
  EXPECT_STREQ(tcc_status_code_name(static_cast<tcc_status_code_t>(42)),
               "UNKNOWN");
}

TEST(Status, GuardTurnsExceptionsIntoStatuses) {
  auto oom =
      result(tcc::guard([]() -> tcc_status_t { throw std::bad_alloc(); }));
  EXPECT_EQ(oom.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  auto other = result(
      tcc::guard([]() -> tcc_status_t { throw std::runtime_error("boom"); }));
  EXPECT_EQ(other.code, TCC_STATUS_INTERNAL);
  EXPECT_EQ(other.message, "boom");
}

TEST(Status, CppLayerThrowsError) {
  try {
    tcc::check(tcc::makeStatus(TCC_STATUS_INVALID_ARGUMENT, "bad"));
    FAIL() << "no exception";
  } catch (const tcc::Error &e) {
    EXPECT_EQ(e.code(), TCC_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "bad");
  }
  EXPECT_NO_THROW(tcc::check(nullptr));
}

} // namespace
