// uk_variant.cc - one entry of the variant table (uk_variants.h). Built once
// per variant with TCC_UK_SUFFIX=<variant> (or none, for the host build) and
// TCC_UK_VARIANT_NAME, TCC_UK_VARIANT_ISA, TCC_UK_VARIANT_CPU.
#include "uk_variants.h"

#define TCC_UK_STR2_(x) #x
#define TCC_UK_STR_(x) TCC_UK_STR2_(x)
#define TCC_UK_VAR2_(a, b) a##b
#define TCC_UK_VAR_(a, b) TCC_UK_VAR2_(a, b)

namespace tcc {
namespace ukvariants {

extern const Variant TCC_UK_VAR_(kVariant_, TCC_UK_VARIANT_NAME);
const Variant TCC_UK_VAR_(kVariant_, TCC_UK_VARIANT_NAME) = {
    TCC_UK_STR_(TCC_UK_VARIANT_NAME),
    TCC_UK_VARIANT_ISA,
    TCC_UK_VARIANT_CPU,
    &tcc_uk_isa,
    &tcc_uk_pack_a_bytes,
    &tcc_uk_pack_a,
    &tcc_uk_pack_b_bytes,
    &tcc_uk_pack_b,
    &tcc_uk_sgemm_scratch_bytes,
    &tcc_uk_sgemm,
    &tcc_uk_conv2d_pack_weights_bytes,
    &tcc_uk_conv2d_pack_weights,
    &tcc_uk_conv2d_scratch_bytes,
    &tcc_uk_conv2d_pool_fits,
    &tcc_uk_conv2d_prologue_fits,
    &tcc_uk_conv2d_nchw,
    &tcc_uk_dwpw_fast,
    &tcc_uk_dwpw_scratch_bytes,
    &tcc_uk_dwpw_conv2d_nchw,
    &tcc_uk_block_fast,
    &tcc_uk_block_scratch_bytes,
    &tcc_uk_block_conv2d_nchw,
    &tcc_uk_block_blocked,
    &tcc_uk_block_pack_weights_bytes,
    &tcc_uk_block_pack_weights,
    &tcc_uk_maxpool2d_fast,
    &tcc_uk_maxpool2d_nchw,
    &tcc_uk_avgpool2d_fast,
    &tcc_uk_avgpool2d_nchw,
    &tcc_uk_attention_scratch_bytes,
    &tcc_uk_attention,
    &tcc_uk_transpose32,
};

} // namespace ukvariants
} // namespace tcc
