// uk_variants.h - every ISA build of the micro-kernels side by side in one
// program, for the unit tests and the benchmark (library
// tcc_ukernels_variants). Not part of what the compiler ships.
//
// Each variant is the shipped bitcode module compiled to an object with its
// entry points renamed tcc_uk_<name>_<variant>; "host" is the native
// tcc_ukernels library (the project's compiler, baseline x86-64, original
// names, internals in namespace tcc::uk::host), the build the compiler
// itself calls to prepack weights.
#ifndef TCC_RUNTIME_UKERNELS_UK_VARIANTS_H
#define TCC_RUNTIME_UKERNELS_UK_VARIANTS_H

#include "ukernels.h"

namespace tcc {
namespace ukvariants {

struct Variant {
  const char *name;     // generic, avx2, avx512, host
  int32_t isa;          // the tcc_uk_isa_t it was built for; -1 for host
  const char *cpuLevel; // what __builtin_cpu_supports must accept
  decltype(&tcc_uk_isa) isaFn;
  decltype(&tcc_uk_pack_a_bytes) packABytes;
  decltype(&tcc_uk_pack_a) packA;
  decltype(&tcc_uk_pack_b_bytes) packBBytes;
  decltype(&tcc_uk_pack_b) packB;
  decltype(&tcc_uk_sgemm_scratch_bytes) sgemmScratchBytes;
  decltype(&tcc_uk_sgemm) sgemm;
  decltype(&tcc_uk_conv2d_pack_weights_bytes) convPackWeightsBytes;
  decltype(&tcc_uk_conv2d_pack_weights) convPackWeights;
  decltype(&tcc_uk_conv2d_scratch_bytes) convScratchBytes;
  decltype(&tcc_uk_conv2d_pool_fits) convPoolFits;
  decltype(&tcc_uk_conv2d_prologue_fits) convPrologueFits;
  decltype(&tcc_uk_conv2d_nchw) conv2d;
  decltype(&tcc_uk_dwpw_fast) dwpwFast;
  decltype(&tcc_uk_dwpw_scratch_bytes) dwpwScratchBytes;
  decltype(&tcc_uk_dwpw_conv2d_nchw) dwpwConv2d;
  decltype(&tcc_uk_block_fast) blockFast;
  decltype(&tcc_uk_block_scratch_bytes) blockScratchBytes;
  decltype(&tcc_uk_block_conv2d_nchw) blockConv2d;
  decltype(&tcc_uk_block_blocked) blockBlocked;
  decltype(&tcc_uk_block_pack_weights_bytes) blockPackWeightsBytes;
  decltype(&tcc_uk_block_pack_weights) blockPackWeights;
  decltype(&tcc_uk_maxpool2d_fast) maxpoolFast;
  decltype(&tcc_uk_maxpool2d_nchw) maxpool2d;
  decltype(&tcc_uk_avgpool2d_fast) avgpoolFast;
  decltype(&tcc_uk_avgpool2d_nchw) avgpool2d;
  decltype(&tcc_uk_attention_scratch_bytes) attentionScratchBytes;
  decltype(&tcc_uk_attention) attention;
  decltype(&tcc_uk_transpose32) transpose32;
};

/// All variants in the program, lowest ISA first; sets *count.
const Variant *const *allVariants(int *count);

/// Whether this CPU can run v.
bool cpuSupports(const Variant &v);

} // namespace ukvariants
} // namespace tcc

#endif // TCC_RUNTIME_UKERNELS_UK_VARIANTS_H
