// uk_variants.cc - the table of variants built into the program.
#include "uk_variants.h"

#include <string.h>

namespace tcc {
namespace ukvariants {

extern const Variant kVariant_generic, kVariant_avx2, kVariant_avx512,
    kVariant_host;

const Variant *const *allVariants(int *count) {
  static const Variant *const kAll[] = {&kVariant_host, &kVariant_generic,
                                        &kVariant_avx2, &kVariant_avx512};
  *count = sizeof(kAll) / sizeof(kAll[0]);
  return kAll;
}

bool cpuSupports(const Variant &v) {
  __builtin_cpu_init();
  if (!strcmp(v.cpuLevel, "x86-64-v3"))
    return __builtin_cpu_supports("x86-64-v3");
  if (!strcmp(v.cpuLevel, "x86-64-v4"))
    return __builtin_cpu_supports("x86-64-v4");
  return true;
}

} // namespace ukvariants
} // namespace tcc
