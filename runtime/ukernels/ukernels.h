/* ukernels.h - tcc's CPU micro-kernels: a packed, cache-blocked SGEMM and
 * NCHW 2-D convolution, with a fused bias/residual/clamp epilogue.
 *
 * The compiler lowers matmul and convolution to calls into these functions.
 * The implementation is built into one LLVM bitcode module per ISA level
 * (tcc_ukernels_{generic,avx2,avx512}.bc, see docs/ukernels.md) that the
 * compiler links into every artifact it makes; the functions that describe
 * packed layouts and scratch sizes take the ISA as an argument so that the
 * compiler can call them natively (library tcc_ukernels) for any target.
 *
 * Conventions
 * - Matrices are row-major with leading dimensions in elements (>= the row
 *   width). Tensors are dense NCHW.
 * - Parameter structs are valid when zero-initialised (a zero stride,
 *   dilation or group count means 1).
 * - Threads come only from `host` (may be NULL, or have no parallel_for or
 *   num_threads <= 1: the caller's thread does all the work). Results are
 *   bit-identical for every thread count: work is split into disjoint output
 *   blocks, never along K.
 * - `scratch` is caller-owned memory of the size the matching
 *   *_scratch_bytes function returns for the same arguments, preferably
 *   64-byte aligned (4-byte alignment is enough). Its size depends only on
 *   the shape and the ISA, not on the thread count, so a compiler can plan
 *   it at compile time. NULL makes the kernel malloc and free it itself.
 * - Entry points that may need scratch return 0 on success and -1 only when
 *   scratch was NULL and malloc failed (nothing was written then).
 * - All functions are reentrant; concurrent calls need disjoint outputs and
 *   scratch.
 */
#ifndef TCC_UKERNELS_H
#define TCC_UKERNELS_H

#include <stdint.h>

#include "tcc/abi.h"

/* The unit tests link several ISA variants into one program; each is built
 * with TCC_UK_SUFFIX=<variant>, which renames every entry point below to
 * tcc_uk_<name>_<variant>. The shipped bitcode never defines it. */
#ifdef TCC_UK_SUFFIX
#define TCC_UK_CAT2_(a, b) a##_##b
#define TCC_UK_CAT_(a, b) TCC_UK_CAT2_(a, b)
#define TCC_UK_RENAME(name) TCC_UK_CAT_(name, TCC_UK_SUFFIX)
#define tcc_uk_isa TCC_UK_RENAME(tcc_uk_isa)
#define tcc_uk_pack_a_bytes TCC_UK_RENAME(tcc_uk_pack_a_bytes)
#define tcc_uk_pack_a TCC_UK_RENAME(tcc_uk_pack_a)
#define tcc_uk_pack_b_bytes TCC_UK_RENAME(tcc_uk_pack_b_bytes)
#define tcc_uk_pack_b TCC_UK_RENAME(tcc_uk_pack_b)
#define tcc_uk_sgemm_scratch_bytes TCC_UK_RENAME(tcc_uk_sgemm_scratch_bytes)
#define tcc_uk_sgemm TCC_UK_RENAME(tcc_uk_sgemm)
#define tcc_uk_conv2d_pack_weights_bytes                                       \
  TCC_UK_RENAME(tcc_uk_conv2d_pack_weights_bytes)
#define tcc_uk_conv2d_pack_weights TCC_UK_RENAME(tcc_uk_conv2d_pack_weights)
#define tcc_uk_conv2d_scratch_bytes TCC_UK_RENAME(tcc_uk_conv2d_scratch_bytes)
#define tcc_uk_conv2d_pool_fits TCC_UK_RENAME(tcc_uk_conv2d_pool_fits)
#define tcc_uk_conv2d_prologue_fits TCC_UK_RENAME(tcc_uk_conv2d_prologue_fits)
#define tcc_uk_conv2d_nchw TCC_UK_RENAME(tcc_uk_conv2d_nchw)
#define tcc_uk_dwpw_fast TCC_UK_RENAME(tcc_uk_dwpw_fast)
#define tcc_uk_dwpw_scratch_bytes TCC_UK_RENAME(tcc_uk_dwpw_scratch_bytes)
#define tcc_uk_dwpw_conv2d_nchw TCC_UK_RENAME(tcc_uk_dwpw_conv2d_nchw)
#define tcc_uk_block_fast TCC_UK_RENAME(tcc_uk_block_fast)
#define tcc_uk_block_scratch_bytes TCC_UK_RENAME(tcc_uk_block_scratch_bytes)
#define tcc_uk_block_conv2d_nchw TCC_UK_RENAME(tcc_uk_block_conv2d_nchw)
#define tcc_uk_block_blocked TCC_UK_RENAME(tcc_uk_block_blocked)
#define tcc_uk_block_pack_weights_bytes                                        \
  TCC_UK_RENAME(tcc_uk_block_pack_weights_bytes)
#define tcc_uk_block_pack_weights TCC_UK_RENAME(tcc_uk_block_pack_weights)
#define tcc_uk_maxpool2d_fast TCC_UK_RENAME(tcc_uk_maxpool2d_fast)
#define tcc_uk_maxpool2d_nchw TCC_UK_RENAME(tcc_uk_maxpool2d_nchw)
#define tcc_uk_avgpool2d_fast TCC_UK_RENAME(tcc_uk_avgpool2d_fast)
#define tcc_uk_avgpool2d_nchw TCC_UK_RENAME(tcc_uk_avgpool2d_nchw)
#define tcc_uk_attention_scratch_bytes                                         \
  TCC_UK_RENAME(tcc_uk_attention_scratch_bytes)
#define tcc_uk_attention TCC_UK_RENAME(tcc_uk_attention)
#define tcc_uk_transpose32 TCC_UK_RENAME(tcc_uk_transpose32)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The ISA levels the kernels are built for. Packed layouts and scratch
 * sizes differ between them (tile sizes), so whoever packs must name the
 * level of the kernels that will read the result. */
typedef enum tcc_uk_isa_e {
  TCC_UK_ISA_GENERIC = 0, /* -march=x86-64 (or any other CPU): 4x8 tiles */
  TCC_UK_ISA_AVX2 = 1,    /* -march=x86-64-v3, AVX2 + FMA: 6x16 tiles */
  TCC_UK_ISA_AVX512 = 2,  /* -march=x86-64-v4, AVX-512: 8x48 tiles */
} tcc_uk_isa_t;

/* The level this build of the kernels was compiled for (a tcc_uk_isa_t). */
int32_t tcc_uk_isa(void);

/* Flags of tcc_uk_sgemm and of tcc_uk_conv2d_params_t::flags. */
enum {
  TCC_UK_ACCUMULATE = 1u << 0, /* C += A*B instead of C = A*B */
  TCC_UK_TRANS_A = 1u << 1,    /* a holds A^T: element (i, p) is a[p*lda + i] */
  TCC_UK_TRANS_B = 1u << 2,    /* b holds B^T: element (p, j) is b[j*ldb + p] */
  TCC_UK_PACKED_A = 1u << 3,   /* a is tcc_uk_pack_a output (lda ignored) */
  TCC_UK_PACKED_B = 1u << 4,   /* b is tcc_uk_pack_b output (ldb ignored) */
  TCC_UK_PACKED_BLOCKED = 1u << 5, /* tcc_uk_block_params_t::exp.flags: the
                                      block's three weights are
                                      tcc_uk_block_pack_weights output */
};

/* Activations of the epilogue (tcc_uk_epilogue_t::activation). */
enum {
  TCC_UK_ACT_NONE = 0,
  TCC_UK_ACT_GELU = 1,      /* x * Phi(x), Phi through erf (Abramowitz and
                               Stegun 7.1.26: |error of Phi| < 1e-7) */
  TCC_UK_ACT_GELU_TANH = 2, /* x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3)))
                               (the tanh form, as a sigmoid) */
  TCC_UK_ACT_SILU = 3,      /* x * sigmoid(x) = x / (1 + exp(-x)) (swish) */
  TCC_UK_ACT_HARDSWISH = 4, /* x * min(max(x / 6 + 1/2, 0), 1) */
};

/* What happens to each element of the product before it is stored:
 *   C = clamp(act(A*B (+ C if accumulating) + bias + residual))
 * which fuses a bias, a residual add (a residual block's skip), GELU and
 * relu/relu6/clip. A NaN passes through the clamp. Zero-initialised means
 * "no epilogue". The GEMM and tcc_uk_conv2d_nchw apply the activation; the
 * fused convolution pairs and blocks refuse one (they return -2 and write
 * nothing). */
typedef struct tcc_uk_epilogue_t {
  const float *bias; /* NULL, or one value per row (bias_per_row != 0)
                        or per column of C */
  int32_t bias_per_row;
  int32_t has_clamp; /* C = min(max(C, clamp_min), clamp_max);
                        relu is (0, +inf) */
  float clamp_min, clamp_max;
  const float *residual; /* NULL, or an m x n matrix with leading dim ldr */
  int64_t ldr;
  int32_t activation; /* TCC_UK_ACT_*, before the clamp */
} tcc_uk_epilogue_t;

/*===------------------------------------------------------------------===*
 * Packing (at run time inside the GEMM; at compile time for constants)
 *===------------------------------------------------------------------===*/

/* A packed A is ceil(m/MR) panels of MR rows, each stored as k groups of
 * MR floats (element (i, p) at (i/MR)*k*MR + p*MR + i%MR); a packed B is
 * ceil(n/NR) panels of NR columns, each k rows of NR floats ((p, j) at
 * (j/NR)*k*NR + p*NR + j%NR). Both are zero-padded; MR x NR is the tile of
 * `isa` (4x8, 6x16, 8x48). The layout depends only on isa and the shape, so
 * the compiler can pack constant weights once with its native build of
 * these functions and embed the result (64-byte aligned preferred). */
int64_t tcc_uk_pack_a_bytes(int32_t isa, int64_t m, int64_t k);
/* Packs the m x k matrix A (a[i*lda + p], or a[p*lda + i] if trans). */
void tcc_uk_pack_a(int32_t isa, int64_t m, int64_t k, const float *a,
                   int64_t lda, int32_t trans, float *out);
int64_t tcc_uk_pack_b_bytes(int32_t isa, int64_t k, int64_t n);
/* Packs the k x n matrix B (b[p*ldb + j], or b[j*ldb + p] if trans). */
void tcc_uk_pack_b(int32_t isa, int64_t k, int64_t n, const float *b,
                   int64_t ldb, int32_t trans, float *out);

/*===------------------------------------------------------------------===*
 * SGEMM
 *===------------------------------------------------------------------===*/

/* Scratch tcc_uk_sgemm needs for these flags and sizes on `isa` (0 when B
 * is packed or m is small enough for the unpacked path; only B's ragged
 * last panel when B is read where it lies: m <= 64 and k <= 512). */
int64_t tcc_uk_sgemm_scratch_bytes(int32_t isa, uint32_t flags, int64_t m,
                                   int64_t n, int64_t k);

/* C[m x n] = A[m x k] * B[k x n] (+ C with TCC_UK_ACCUMULATE), then the
 * epilogue (may be NULL). `flags` is a set of TCC_UK_* bits; with k == 0
 * the product is zero and the epilogue still applies. C must not overlap A,
 * B, the residual or the scratch (an in-place add is TCC_UK_ACCUMULATE). */
int32_t tcc_uk_sgemm(const tcc_host_api_t *host, int64_t m, int64_t n,
                     int64_t k, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float *c, int64_t ldc, uint32_t flags,
                     const tcc_uk_epilogue_t *epilogue, void *scratch);

/*===------------------------------------------------------------------===*
 * 2-D convolution, NCHW
 *===------------------------------------------------------------------===*/

/* 2-D max pooling (tcc_uk_maxpool2d_nchw, and after a convolution):
 * output[n, c, oy, ox] = the largest input[n, c, oy*stride_h - pad_top +
 * ky*dilation_h, ox*stride_w - pad_left + kx*dilation_w] over the kh x kw
 * window's positions inside the input (padding never wins; a window with
 * none is -inf; a NaN in a window is its result). oh and ow are given, so
 * end padding and ceil mode are whatever they say. */
typedef struct tcc_uk_pool2d_params_t {
  int64_t n, c, h, w;
  int64_t kh, kw;
  int64_t stride_h, stride_w;     /* 0 means 1 */
  int64_t dilation_h, dilation_w; /* 0 means 1 */
  int64_t pad_top, pad_left;
  int64_t oh, ow;
} tcc_uk_pool2d_params_t;

/* input [n, c, h, w], weight [f, c/groups, kh, kw], output [n, f, oh, ow]:
 *   oh = (h + pad_top + pad_bottom - dilation_h*(kh-1) - 1) / stride_h + 1
 *   ow = (w + pad_left + pad_right - dilation_w*(kw-1) - 1) / stride_w + 1
 * groups must divide c and f. groups == c (one input channel per group,
 * any number of outputs per group) runs the direct depthwise kernel; the
 * rest are GEMMs per image and group: out[f, oh*ow] = W[f, c*kh*kw] *
 * im2col(x), where a 1x1, stride-1, unpadded convolution reads x in place
 * and the others pack im2col straight into the GEMM's B panels. */
typedef struct tcc_uk_conv2d_params_t {
  int64_t n, c, h, w; /* input */
  int64_t f, kh, kw;  /* weight */
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t groups;
  uint32_t flags; /* TCC_UK_PACKED_A: weight is tcc_uk_conv2d_pack_weights
                     output; TCC_UK_ACCUMULATE: output += conv */
  void *scratch;  /* tcc_uk_conv2d_scratch_bytes bytes, or NULL */
  int64_t pool;   /* 0; or 2: output is the max pooling of the convolution
                     over 2x2 windows of stride 2 (an odd last row or column
                     dropped), [n, f, oh/2, ow/2], the epilogue's bias and
                     clamp applied after it (they commute with max); or 1:
                     output is the max pooling `pool_window` of the
                     convolution's output (its n, c, h and w, the
                     convolution's n, f, oh and ow, are not read),
                     [n, f, pool_window.oh, pool_window.ow]. No residual,
                     activation or accumulation, and only where
                     tcc_uk_conv2d_pool_fits */
  /* An input prologue, or all NULL/0: the convolution reads
     x' = x * in_scale[c] + in_shift[c] (either NULL: 1 and 0), then
     max(x', 0) where in_relu, for each input channel c, as it reads the
     input (a BatchNorm and ReLU before a convolution); only where
     tcc_uk_conv2d_prologue_fits. */
  const float *in_scale, *in_shift;
  int32_t in_relu;
  tcc_uk_pool2d_params_t pool_window; /* with pool == 1 */
  /* NULL, or [n, f] floats: the mean of each output plane after the
     epilogue, written as the plane is finished (a squeeze-and-excitation
     block's global average pooling of its depthwise convolution). Only for
     depthwise convolutions (groups == c, one filter a group) without pool
     or accumulation; elsewhere tcc_uk_conv2d_nchw refuses it (-2). */
  float *plane_means;
} tcc_uk_conv2d_params_t;

/* Size and contents of the prepacked weights for `isa` (for depthwise
 * convolutions the weights are copied unchanged). */
int64_t tcc_uk_conv2d_pack_weights_bytes(int32_t isa,
                                         const tcc_uk_conv2d_params_t *p);
void tcc_uk_conv2d_pack_weights(int32_t isa, const tcc_uk_conv2d_params_t *p,
                                const float *weight, float *out);

/* Whether the kernels of `isa` pool this convolution's output as p->pool
 * says. pool == 2, in its epilogue: AVX-512, one group of at most 9 taps a
 * pixel, stride 1, filters a multiple of 8, the pixels along the vectors (a
 * 1-channel image's 3x3 before a small CNN's 2x2 pooling). pool == 1, a
 * band of pooled rows at a time (the convolution's rows it reads computed
 * into the scratch, pooled while they are in cache): one group of more
 * than one input channel, not a 1x1, not run as Winograd's tiles or with
 * the pixels along the vectors, a pooling of dilation 1 (a network's stem
 * and the 3x3 stride-2 pooling after it). */
int32_t tcc_uk_conv2d_pool_fits(int32_t isa, const tcc_uk_conv2d_params_t *p);

/* Whether the kernels of `isa` apply an input prologue (in_scale, in_shift,
 * in_relu) to this convolution: a 1x1, stride-1, unpadded one-group
 * convolution run as a GEMM (not pooled), whose B (the input) the GEMM
 * packs anyway, the prologue applied as it packs. Elsewhere
 * tcc_uk_conv2d_nchw refuses a prologue (-2). */
int32_t tcc_uk_conv2d_prologue_fits(int32_t isa,
                                    const tcc_uk_conv2d_params_t *p);

/* Scratch tcc_uk_conv2d_nchw needs (0 for depthwise and for 1x1 convs the
 * GEMM can run unpacked). */
int64_t tcc_uk_conv2d_scratch_bytes(int32_t isa,
                                    const tcc_uk_conv2d_params_t *p);

/* output = clamp(act(conv(input, weight) (+ output) + bias[f] + residual))
 * with the epilogue's bias per output channel (bias_per_row is ignored) and
 * its residual a dense tensor shaped like the output (ldr is ignored).
 * Returns 0, -1 (scratch NULL and malloc failed) or -2 (an activation that
 * is not a TCC_UK_ACT_*); nothing is written unless 0. */
int32_t tcc_uk_conv2d_nchw(const tcc_host_api_t *host,
                           const tcc_uk_conv2d_params_t *p, const float *input,
                           const float *weight, float *output,
                           const tcc_uk_epilogue_t *epilogue);

/*===------------------------------------------------------------------===*
 * Depthwise then pointwise convolution, NCHW, as one call
 *===------------------------------------------------------------------===*/

/* mid = clamp_dw(depthwise(input, dw_weight) + dw_bias[c])
 * output = clamp(pw_weight[f x c] * mid (per pixel) + bias[f] + residual)
 * where `dw` is a convolution with groups == c == f (one filter a channel)
 * and the second is 1x1, stride 1, unpadded, over its c output channels
 * (an inverted-residual block's tail), as one kernel: mid goes to the
 * scratch (the depthwise part split by planes across the threads), where
 * the GEMM reads it, so no tensor lies between the two. */
typedef struct tcc_uk_dwpw_params_t {
  tcc_uk_conv2d_params_t dw; /* the depthwise convolution (its flags and
                                scratch are ignored) */
  int64_t f;                 /* outputs of the pointwise convolution */
  const float *dw_bias;      /* NULL, or one value per channel */
  int32_t dw_has_clamp;
  float dw_clamp_min, dw_clamp_max;
  uint32_t flags; /* TCC_UK_PACKED_A: pw_weight is the pointwise conv's
                     tcc_uk_conv2d_pack_weights output */
  void *scratch;  /* tcc_uk_dwpw_scratch_bytes bytes, or NULL */
} tcc_uk_dwpw_params_t;

/* Whether the kernels of `isa` compute this pair's depthwise part a vector
 * at a time (3x3, stride 1 or 2, dilation 1, on AVX-512). Elsewhere it
 * goes one element at a time, and two tcc_uk_conv2d_nchw calls are faster:
 * a compiler should make those instead. 0 if p is not such a pair. */
int32_t tcc_uk_dwpw_fast(int32_t isa, const tcc_uk_dwpw_params_t *p);

/* Scratch tcc_uk_dwpw_conv2d_nchw needs (0 if p is not such a pair). */
int64_t tcc_uk_dwpw_scratch_bytes(int32_t isa, const tcc_uk_dwpw_params_t *p);

/* The epilogue is the pointwise convolution's, as for tcc_uk_conv2d_nchw
 * (bias per output channel, residual shaped like the output). Returns 0,
 * or -1 when scratch was NULL and malloc failed; a p that is not a
 * depthwise/pointwise pair, or an epilogue activation, writes nothing and
 * returns -2. */
int32_t tcc_uk_dwpw_conv2d_nchw(const tcc_host_api_t *host,
                                const tcc_uk_dwpw_params_t *p,
                                const float *input, const float *dw_weight,
                                const float *pw_weight, float *output,
                                const tcc_uk_epilogue_t *epilogue);

/*===------------------------------------------------------------------===*
 * Expansion, depthwise and pointwise convolution, NCHW, as one call
 *===------------------------------------------------------------------===*/

/* x = clamp_exp(conv(input, exp_weight) + exp_bias[e])
 * output = the depthwise/pointwise pair `pair` over x (pair.dw.c == e)
 * where the first convolution `exp` has one group and e filters: a 1x1,
 * stride-1, unpadded expansion (an inverted-residual block's),
 * or any other window (a network's stem), as one kernel: a band of output rows
 * at a time, the first convolution computes the rows of x the band's depthwise
 * windows need into the scratch (a GEMM reading the input's rows where they
 * lie, or their im2col), the depthwise part and the pointwise GEMM follow while
 * they are in cache; the bands are split across the threads. The e-channel
 * tensor never exists whole. Where x is smaller (under 1 MiB an image) and
 * the pair splits its GEMM's k in halves (AVX-512, a stride-1 pair with
 * 3f <= e), each half of x's channels is instead expanded, convolved and
 * multiplied by the task that owns it, so x stays in that core's cache and
 * no rows are computed twice. */
typedef struct tcc_uk_block_params_t {
  tcc_uk_dwpw_params_t pair;  /* pair.dw: the depthwise convolution over x
                                 (its n, c = e, h and w are x's); pair.flags:
                                 the pointwise weights; pair.scratch:
                                 tcc_uk_block_scratch_bytes bytes, or NULL */
  tcc_uk_conv2d_params_t exp; /* the first convolution: groups 1, f = e,
                                 its output pair.dw.h x pair.dw.w; flags
                                 TCC_UK_PACKED_A when exp_weight is its
                                 tcc_uk_conv2d_pack_weights output (scratch
                                 ignored). A 3x3 stride-1 one, which
                                 tcc_uk_conv2d_nchw runs as Winograd, is
                                 not taken. */
  const float *exp_bias;      /* NULL, or one value per channel of x */
  int32_t exp_has_clamp;
  float exp_clamp_min, exp_clamp_max;
} tcc_uk_block_params_t;

/* Whether the kernels of `isa` run this block as one call faster than as
 * a 1x1 convolution and a depthwise/pointwise pair: the pair is fast
 * (tcc_uk_dwpw_fast) and x of one image (e x h x w floats) takes 1 MiB or
 * more, more than the cores' caches keep from one call to the next, or the
 * block runs as halves of k (a smaller x from a 1x1 expansion before a
 * stride-1 pair that splits k). 0 if p is not such a block. */
int32_t tcc_uk_block_fast(int32_t isa, const tcc_uk_block_params_t *p);

/* Scratch tcc_uk_block_conv2d_nchw needs (0 if p is not such a block). */
int64_t tcc_uk_block_scratch_bytes(int32_t isa, const tcc_uk_block_params_t *p);

/* The epilogue is the pointwise convolution's (bias per output channel,
 * residual shaped like the output). The results are those of the three
 * convolutions as separate tcc_uk_conv2d_nchw calls, bit for bit, whatever
 * the thread count; in halves of k, those of the expansion and the pair as
 * separate calls (tcc_uk_conv2d_nchw, tcc_uk_dwpw_conv2d_nchw). A 1x1
 * expansion before a square odd window of 3 to 7 (stride 1 or 2) that does
 * not split k runs on AVX-512 in the channel-blocked layout (16 channels a
 * vector inside the call), its sums in another order: within rounding of
 * the three calls, and the same bits whatever the thread count. Returns 0, -1
 * when scratch was NULL and malloc failed, or -2 (writing nothing) when p is
 * not such a block or the epilogue has an activation. */
int32_t tcc_uk_block_conv2d_nchw(const tcc_host_api_t *host,
                                 const tcc_uk_block_params_t *p,
                                 const float *input, const float *exp_weight,
                                 const float *dw_weight, const float *pw_weight,
                                 float *output,
                                 const tcc_uk_epilogue_t *epilogue);

/* Whether the kernels of `isa` run this block in the channel-blocked layout
 * (a 1x1 expansion before a square odd window of 3 to 7, stride 1 or 2, on
 * AVX-512, where it does not run in halves of k). Its three weights may
 * then come packed for it by tcc_uk_block_pack_weights (all three, with
 * TCC_UK_PACKED_BLOCKED in exp.flags, p's other flags as asked here);
 * otherwise the call lays them out in its scratch each time (and
 * tcc_uk_block_scratch_bytes, asked with the call's flags, makes room for
 * them only then). 0 if p is not such a block. */
int32_t tcc_uk_block_blocked(int32_t isa, const tcc_uk_block_params_t *p);

/* The weights of a block, for tcc_uk_block_pack_weights. */
enum {
  TCC_UK_BLOCK_EXPANSION = 0,  /* [e, c] (a 1x1 convolution's weight) */
  TCC_UK_BLOCK_DEPTHWISE = 1,  /* [e, 1, kh, kw] */
  TCC_UK_BLOCK_PROJECTION = 2, /* [f, e] */
};

/* Size and contents of one of a blocked block's weights (`part`, from its
 * plain layout above) as the kernels of `isa` read it; 0 bytes where
 * tcc_uk_block_blocked(isa, p) is 0 or part is not a TCC_UK_BLOCK_*. */
int64_t tcc_uk_block_pack_weights_bytes(int32_t isa,
                                        const tcc_uk_block_params_t *p,
                                        int32_t part);
void tcc_uk_block_pack_weights(int32_t isa, const tcc_uk_block_params_t *p,
                               int32_t part, const float *weight, float *out);

/*===------------------------------------------------------------------===*
 * 2-D max pooling, NCHW
 *===------------------------------------------------------------------===*/

/* The max pooling's parameters: see tcc_uk_maxpool2d_nchw below. */

/* Whether the kernels of `isa` pool a vector at a time (AVX-512 or AVX2,
 * dilation 1, stride 1 or 2); elsewhere one element at a time, and a
 * compiler's own vectorized loops do better. */
int32_t tcc_uk_maxpool2d_fast(int32_t isa, const tcc_uk_pool2d_params_t *p);

/* Returns 0, or -2 (nothing written) if p is not a valid pooling. */
int32_t tcc_uk_maxpool2d_nchw(const tcc_host_api_t *host,
                              const tcc_uk_pool2d_params_t *p,
                              const float *input, float *output);

/*===------------------------------------------------------------------===*
 * 2-D average pooling, NCHW
 *===------------------------------------------------------------------===*/

/* output[n, c, oy, ox] = the sum of the window's taps inside the input (as
 * tcc_uk_pool2d_params_t places it; taps in the padding add nothing),
 * taken in row-major window order from zero, divided by the window's count:
 * the taps inside [-pad_top, h + pad_bottom) x [-pad_left, w + pad_right)
 * with count_include_pad, else inside the input (at least 1). The room ceil
 * mode adds past the declared end pads never counts. */
typedef struct tcc_uk_avgpool2d_params_t {
  tcc_uk_pool2d_params_t window;
  int64_t pad_bottom, pad_right;
  int32_t count_include_pad;
} tcc_uk_avgpool2d_params_t;

/* Whether the kernels of `isa` pool a vector at a time (AVX-512 or AVX2,
 * dilation 1, stride 1 or 2, the same both ways). */
int32_t tcc_uk_avgpool2d_fast(int32_t isa, const tcc_uk_avgpool2d_params_t *p);

/* Returns 0, -1 when its buffer of counts (a float an output row and
 * column) could not be allocated, or -2 (nothing written) if p is not a
 * valid pooling. The results are the same bits whatever the path and the
 * thread count. */
int32_t tcc_uk_avgpool2d_nchw(const tcc_host_api_t *host,
                              const tcc_uk_avgpool2d_params_t *p,
                              const float *input, float *output);

/*===------------------------------------------------------------------===*
 * Scaled dot-product attention
 *===------------------------------------------------------------------===*/

/* Masks of tcc_uk_attention_params_t::mask_kind. */
enum {
  TCC_UK_MASK_NONE = 0,
  TCC_UK_MASK_ADD = 1,    /* mask is float, added to the scaled scores */
  TCC_UK_MASK_SELECT = 2, /* mask is bytes: where nonzero, the score is fill */
};

/* Flags of tcc_uk_attention_params_t::flags: an operand given transposed. */
enum {
  TCC_UK_ATTN_TRANS_Q = 1u << 0, /* q holds Q^T: (i, c) at q[c*ldq + i] */
  TCC_UK_ATTN_TRANS_K =
      1u << 1, /* k holds K, not K^T: (c, j) at k[j*ldk + c] */
  TCC_UK_ATTN_TRANS_V = 1u << 2, /* v holds V^T: (j, c) at v[c*ldv + j] */
};

/* For each of `batch` problems b (a batch's heads) and query row i < sq:
 *   s[j]         = scale * (Q_b K_b^T)[i, j]    (+ mask, or fill where set)
 *   out[b, i, :] = sum_j softmax(s)[j] V_b[j, :]
 * Q_b is sq x d at q + b*stride_q, element (i, c) at i*ldq + c; K_b^T is
 * d x sk at k + b*stride_k, (c, j) at c*ldk + j; V_b is sk x dv at
 * v + b*stride_v, (j, c) at j*ldv + c; out's (i, c) at b*stride_o + i*ldo + c;
 * the mask's (b, i, j) at b*stride_m + i*ldm + j (strides of 0 broadcast).
 * The scores never reach memory: a block of query rows at a time, they stay
 * in the scratch. A row whose every score is -inf gives NaN, as softmax. */
typedef struct tcc_uk_attention_params_t {
  int64_t batch, sq, sk, d, dv;
  int64_t ldq, stride_q, ldk, stride_k, ldv, stride_v, ldo, stride_o;
  int64_t ldm, stride_m;
  float scale, fill;
  int32_t mask_kind; /* TCC_UK_MASK_* */
  uint32_t flags;    /* TCC_UK_ATTN_TRANS_* */
  void *scratch;     /* tcc_uk_attention_scratch_bytes bytes */
} tcc_uk_attention_params_t;

/* Scratch tcc_uk_attention needs on `isa` (packed K and V and a block of
 * scores for each of up to 8 threads at once; 0 for an empty problem). */
int64_t tcc_uk_attention_scratch_bytes(int32_t isa,
                                       const tcc_uk_attention_params_t *p);

/* Returns 0, or -1 (output undefined) if p is not a valid problem or its
 * scratch or mask is missing. */
int32_t tcc_uk_attention(const tcc_host_api_t *host,
                         const tcc_uk_attention_params_t *p, const float *q,
                         const float *k, const float *v, const void *mask,
                         float *out);

/*===------------------------------------------------------------------===*
 * Transposes
 *===------------------------------------------------------------------===*/

/* out[b, c, r] = in[b, r, c] for `batch` row-major rows x cols matrices of
 * 32-bit elements (any type: the bits are moved), each problem's output
 * cols x rows, problems rows * cols elements apart in both. Returns 0, or
 * -1 (nothing written) for negative sizes or missing buffers. */
int32_t tcc_uk_transpose32(const tcc_host_api_t *host, int64_t batch,
                           int64_t rows, int64_t cols, const void *input,
                           void *output);

#ifdef __cplusplus
}
#endif

#endif /* TCC_UKERNELS_H */
