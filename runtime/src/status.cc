// status.cc - tcc_status_t: an error code and its message.
#include "status.h"

#include <cstdarg>
#include <cstdio>
#include <string>

struct tcc_status_s {
  tcc_status_code_t code;
  std::string message;
};

// Returned when there is no memory left for a status of its own; it is
// static so that tcc_status_free leaves it alone.
static tcc_status_s outOfMemory{TCC_STATUS_RESOURCE_EXHAUSTED, "out of memory"};

tcc_status_t tcc::makeStatus(tcc_status_code_t code, const char *format, ...) {
  try {
    va_list args;
    va_start(args, format);
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, format, copy);
    va_end(copy);
    std::string message(n > 0 ? n : 0, '\0');
    std::vsnprintf(message.data(), message.size() + 1, format, args);
    va_end(args);
    return new tcc_status_s{code, std::move(message)};
  } catch (const std::bad_alloc &) {
    return &outOfMemory;
  }
}

tcc_status_code_t tcc_status_code(tcc_status_t status) {
  return status ? status->code : TCC_STATUS_OK;
}

const char *tcc_status_message(tcc_status_t status) {
  return status ? status->message.c_str() : "";
}

const char *tcc_status_code_name(tcc_status_code_t code) {
  switch (code) {
  case TCC_STATUS_OK:
    return "OK";
  case TCC_STATUS_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case TCC_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case TCC_STATUS_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case TCC_STATUS_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case TCC_STATUS_INTERNAL:
    return "INTERNAL";
  case TCC_STATUS_UNIMPLEMENTED:
    return "UNIMPLEMENTED";
  }
  return "UNKNOWN";
}

tcc_status_t tcc_status_create(tcc_status_code_t code, const char *message) {
  if (code == TCC_STATUS_OK)
    return nullptr;
  return tcc::makeStatus(code, "%s", message ? message : "");
}

void tcc_status_free(tcc_status_t status) {
  if (status != &outOfMemory)
    delete status;
}
