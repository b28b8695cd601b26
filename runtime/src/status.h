// status.h - making tcc_status_t values inside the runtime.
#ifndef TCC_RUNTIME_SRC_STATUS_H
#define TCC_RUNTIME_SRC_STATUS_H

#include "tcc/runtime.h"

#include <exception>
#include <new>

namespace tcc {

/// A status with a printf-formatted message. Never returns NULL, even when
/// memory runs out.
tcc_status_t makeStatus(tcc_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// Runs `fn` (which returns a tcc_status_t) so that no C++ exception crosses
/// the C API.
template <typename Fn> tcc_status_t guard(Fn &&fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception &e) {
    return makeStatus(TCC_STATUS_INTERNAL, "%s", e.what());
  }
}

} // namespace tcc

#endif // TCC_RUNTIME_SRC_STATUS_H
