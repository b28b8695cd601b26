//===- TccOps.td - tcc dialect operations -------------------*- tablegen -*-===//
//
// Every op has value semantics on ranked tensors. Shapes follow numpy/ONNX
// conventions; axes are normalized to [0, rank) by the frontends.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_OPS_TD
#define TCC_OPS_TD

include "dialects/Tcc/IR/TccDialect.td"
include "dialects/Tcc/IR/TccInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Result-type inference
//===----------------------------------------------------------------------===//

/// The op's result type follows from its operands and attributes by the rules
/// of TccShapes.h, so it is built without one (`b.create<MatmulOp>(loc, a, w)`,
/// or TccBuilder for input that may be wrong). The op's own verifier checks a
/// written result type against the same rules and says which dimension
/// disagrees; refineReturnTypes leaves that check to it instead of reporting
/// the mismatch a second time in other words.
def Tcc_InfersResultType : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface, ["refineReturnTypes"]>,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
    static ::llvm::LogicalResult
    inferReturnTypes(::mlir::MLIRContext *context,
                     std::optional<::mlir::Location> location, Adaptor adaptor,
                     ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes);
  }], [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      $cppClass::Adaptor adaptor(operands, attributes, properties, regions);
      return $cppClass::inferReturnTypes(context, location, adaptor,
                                         inferredReturnTypes);
    }
    ::llvm::LogicalResult $cppClass::refineReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        ::mlir::ValueRange, ::mlir::DictionaryAttr, ::mlir::OpaqueProperties,
        ::mlir::RegionRange, ::llvm::SmallVectorImpl<::mlir::Type> &) {
      return ::mlir::success();
    }
  }]>
]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Tcc_ConstantOp : Tcc_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Holds a tensor known at compile time. Weights use a `dense_resource`
    value so that big blobs are neither copied nor uniqued; small constants
    use `dense` and fold.

    ```mlir
    %0 = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %1 = tcc.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops (numpy-style broadcasting)
//===----------------------------------------------------------------------===//

class Tcc_BinaryOp<string mnemonic, string what, Type operandType,
                   list<Trait> traits = []>
    : Tcc_Op<mnemonic, !listconcat(traits, [Pure, Tcc_BroadcastingElementwise,
        AllElementTypesMatch<["lhs", "rhs", "result"]>, Tcc_InfersResultType])> {
  let summary = "elementwise " # what;
  let description = "Computes " # what # [{ of `lhs` and `rhs` element by
    element, after broadcasting both to the result's shape numpy-style (the
    shapes are aligned at their trailing dimensions, and a dimension of 1
    stretches to match the other).

    ```mlir
    %r = tcc.}] # mnemonic # [{ %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::tcc::inferBroadcastType(location, getOperationName(),
                                             adaptor.getOperands(), {}, types);
    }
  }];
}

def Tcc_AddOp : Tcc_BinaryOp<"add", "sum", Tcc_NumericTensor, [Commutative]> {
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}
def Tcc_SubOp : Tcc_BinaryOp<"sub", "difference", Tcc_NumericTensor> {
  let hasFolder = 1;
}
def Tcc_MulOp : Tcc_BinaryOp<"mul", "product", Tcc_NumericTensor,
    [Commutative]> {
  let hasFolder = 1;
}
def Tcc_DivOp : Tcc_BinaryOp<"div", "quotient (truncating for integers)",
    Tcc_NumericTensor> {
  let hasFolder = 1;
}
def Tcc_RemOp : Tcc_BinaryOp<"rem",
    "remainder (its sign follows the divisor for integers, as Python's `%`; "
    "C's fmod for floats)", Tcc_NumericTensor> {
  let hasFolder = 1;
}
def Tcc_PowOp : Tcc_BinaryOp<"pow", "power `lhs ** rhs`", Tcc_NumericTensor>;
def Tcc_MaxOp : Tcc_BinaryOp<"max", "maximum (NaN-propagating)",
    Tcc_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tcc_MinOp : Tcc_BinaryOp<"min", "minimum (NaN-propagating)",
    Tcc_NumericTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tcc_AndOp : Tcc_BinaryOp<"and", "logical or bitwise and",
    Tcc_IntegerLikeTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tcc_OrOp : Tcc_BinaryOp<"or", "logical or bitwise or",
    Tcc_IntegerLikeTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tcc_XorOp : Tcc_BinaryOp<"xor", "logical or bitwise exclusive or",
    Tcc_IntegerLikeTensor, [Commutative]> {
  let hasFolder = 1;
}

def Tcc_CompareOp : Tcc_Op<"cmp", [Pure, Tcc_BroadcastingElementwise,
    AllElementTypesMatch<["lhs", "rhs"]>, Tcc_InfersResultType]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares `lhs` and `rhs` element by element after numpy-style
    broadcasting and gives an `i1` tensor. The predicate is one of `eq`,
    `ne`, `lt`, `le`, `gt`, `ge`; comparisons with NaN are false except `ne`.

    ```mlir
    %r = tcc.cmp lt, %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Tcc_ComparePredicateAttr:$predicate,
                       Tcc_Tensor:$lhs, Tcc_Tensor:$rhs);
  let results = (outs Tcc_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Tcc_SelectOp : Tcc_Op<"select", [Pure, Tcc_BroadcastingElementwise,
    AllElementTypesMatch<["on_true", "on_false", "result"]>,
    Tcc_InfersResultType]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    Gives `on_true` where `condition` holds and `on_false` elsewhere, after
    broadcasting all three numpy-style (ONNX `Where`).

    ```mlir
    %r = tcc.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_BoolTensor:$condition, Tcc_Tensor:$on_true,
                       Tcc_Tensor:$on_false);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

class Tcc_UnaryOp<string mnemonic, string what, Type type,
                  list<Trait> traits = []>
    : Tcc_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
        Tcc_BroadcastingElementwise])> {
  let summary = "elementwise " # what;
  let description = "Applies " # what # [{ to each element.

    ```mlir
    %r = tcc.}] # mnemonic # [{ %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tcc_NegOp : Tcc_UnaryOp<"neg", "negation", Tcc_NumericTensor> {
  let hasFolder = 1;
}
def Tcc_AbsOp : Tcc_UnaryOp<"abs", "absolute value", Tcc_NumericTensor>;
def Tcc_SignOp : Tcc_UnaryOp<"sign", "sign (-1, 0 or 1)", Tcc_NumericTensor>;
def Tcc_ReluOp : Tcc_UnaryOp<"relu", "`max(x, 0)`", Tcc_NumericTensor>;
def Tcc_ExpOp : Tcc_UnaryOp<"exp", "the exponential", Tcc_FloatTensor>;
def Tcc_LogOp : Tcc_UnaryOp<"log", "the natural logarithm", Tcc_FloatTensor>;
def Tcc_SqrtOp : Tcc_UnaryOp<"sqrt", "the square root", Tcc_FloatTensor> {
  let hasFolder = 1;
}
def Tcc_RsqrtOp : Tcc_UnaryOp<"rsqrt", "the reciprocal square root",
    Tcc_FloatTensor> {
  let hasFolder = 1;
}
def Tcc_ReciprocalOp : Tcc_UnaryOp<"reciprocal", "`1 / x`", Tcc_FloatTensor> {
  let hasFolder = 1;
}
def Tcc_TanhOp : Tcc_UnaryOp<"tanh", "the hyperbolic tangent",
    Tcc_FloatTensor>;
def Tcc_SigmoidOp : Tcc_UnaryOp<"sigmoid", "the logistic function "
    "`1 / (1 + exp(-x))`", Tcc_FloatTensor>;
def Tcc_ErfOp : Tcc_UnaryOp<"erf", "the Gauss error function",
    Tcc_FloatTensor>;
def Tcc_SinOp : Tcc_UnaryOp<"sin", "the sine", Tcc_FloatTensor>;
def Tcc_CosOp : Tcc_UnaryOp<"cos", "the cosine", Tcc_FloatTensor>;
def Tcc_FloorOp : Tcc_UnaryOp<"floor", "rounding down", Tcc_FloatTensor>;
def Tcc_CeilOp : Tcc_UnaryOp<"ceil", "rounding up", Tcc_FloatTensor>;
def Tcc_RoundOp : Tcc_UnaryOp<"round", "rounding half to even",
    Tcc_FloatTensor>;
def Tcc_NotOp : Tcc_UnaryOp<"not", "logical or bitwise not",
    Tcc_IntegerLikeTensor> {
  let hasFolder = 1;
}

def Tcc_GeluOp : Tcc_Op<"gelu", [Pure, SameOperandsAndResultType,
    Tcc_BroadcastingElementwise]> {
  let summary = "elementwise Gaussian error linear unit";
  let description = [{
    `x * Phi(x)` with `Phi` the standard normal CDF, computed exactly through
    `erf` (`approximate = none`, the default) or with the tanh formula
    (`approximate = tanh`).

    ```mlir
    %r = tcc.gelu %x approximate = tanh : tensor<2x768xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
      DefaultValuedAttr<Tcc_GeluApproximationAttr,
                        "GeluApproximation::none">:$approximate);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` `=` $approximate^)? attr-dict `:` type($input)
  }];
}

def Tcc_ClampOp : Tcc_Op<"clamp", [Pure, SameOperandsAndResultType,
    Tcc_BroadcastingElementwise]> {
  let summary = "elementwise clamp to a range";
  let description = [{
    `min(max(x, min), max)`; either bound may be absent. The bounds are
    written as f64 and converted to the element type.

    ```mlir
    %r = tcc.clamp %x min = 0.0 max = 6.0 : tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Tcc_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Tcc_NumericTensor:$result);
  let assemblyFormat = [{
    $input (`min` `=` $min^)? (`max` `=` $max^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tcc_CastOp : Tcc_Op<"cast", [Pure, SameOperandsAndResultShape,
    Tcc_BroadcastingElementwise]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest even; float to integer truncates toward zero; to `i1` gives
    `x != 0`.

    ```mlir
    %r = tcc.cast %x : tensor<4xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Tcc_ReduceOp<string mnemonic, string what, Type type>
    : Tcc_Op<mnemonic, [Pure, AllElementTypesMatch<["input", "result"]>,
                        Tcc_InfersResultType]> {
  let summary = what # " over axes";
  let description = "Reduces `input` to its " # what # [{ over `axes`
    (sorted, unique, in `[0, rank)`; empty reduces nothing). With `keepdims`
    the reduced axes stay as size 1, otherwise they are dropped.

    ```mlir
    %r = tcc.}] # mnemonic # [{ %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins type:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_ReduceSumOp : Tcc_ReduceOp<"reduce_sum", "sum", Tcc_NumericTensor>;
def Tcc_ReduceMeanOp : Tcc_ReduceOp<"reduce_mean", "mean", Tcc_FloatTensor>;
def Tcc_ReduceMaxOp : Tcc_ReduceOp<"reduce_max", "maximum",
    Tcc_NumericTensor>;
def Tcc_ReduceMinOp : Tcc_ReduceOp<"reduce_min", "minimum",
    Tcc_NumericTensor>;
def Tcc_ReduceProdOp : Tcc_ReduceOp<"reduce_prod", "product",
    Tcc_NumericTensor>;

class Tcc_ArgReduceOp<string mnemonic, string what>
    : Tcc_Op<mnemonic, [Pure, Tcc_InfersResultType]> {
  let summary = "index of the " # what # " along an axis";
  let description = "Gives, along `axis`, the `i64` index of the " # what #
    [{ element: the first one, or the last with `select_last_index`. With
    `keepdims` the axis stays as size 1.

    ```mlir
    %r = tcc.}] # mnemonic # [{ %x axis = 1 : tensor<2x3xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Tcc_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$keepdims, UnitAttr:$select_last_index);
  let results = (outs Tcc_I64Tensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`keepdims` $keepdims^)? (`select_last_index` $select_last_index^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tcc_ArgMaxOp : Tcc_ArgReduceOp<"argmax", "largest">;
def Tcc_ArgMinOp : Tcc_ArgReduceOp<"argmin", "smallest">;

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

def Tcc_MatmulOp : Tcc_Op<"matmul", [Pure,
    AllElementTypesMatch<["lhs", "rhs", "result"]>, Tcc_InfersResultType]> {
  let summary = "matrix product with numpy semantics";
  let description = [{
    `numpy.matmul`: 2-D operands multiply as matrices; a 1-D operand is a
    vector (its dimension is dropped from the result); leading batch
    dimensions broadcast.

    ```mlir
    %r = tcc.matmul %a, %b : (tensor<8x128x64xf32>, tensor<64x32xf32>) -> tensor<8x128x32xf32>
    ```
  }];
  let arguments = (ins Tcc_NumericTensor:$lhs, Tcc_NumericTensor:$rhs);
  let results = (outs Tcc_NumericTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_ConvOp : Tcc_Op<"conv", [Pure,
    AllElementTypesMatch<["input", "weight", "result"]>, Tcc_InfersResultType]> {
  let summary = "N-d grouped convolution (cross-correlation)";
  let description = [{
    `input` is `N x C x D1 x ... x Dn`, `weight` is
    `F x C/groups x K1 x ... x Kn`, the optional `bias` is `F`, the result is
    `N x F x O1 x ... x On` with
    `Oi = (Di + pad_begin_i + pad_end_i - dilation_i * (Ki - 1) - 1) / stride_i + 1`.
    `padding` lists the n begin pads, then the n end pads (ONNX order).

    ```mlir
    %r = tcc.conv %x, %w, %b strides = [2, 2] padding = [3, 3, 3, 3]
           dilations = [1, 1] groups = 1
           : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `strides` `=` $strides `padding` `=` $padding
    `dilations` `=` $dilations `groups` `=` $groups attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

class Tcc_PoolOp<string mnemonic, string what, dag extraArgs>
    : Tcc_Op<mnemonic, [Pure, AllElementTypesMatch<["input", "result"]>,
                        Tcc_InfersResultType]> {
  let summary = what # " pooling over the spatial dimensions";
  let arguments = !con((ins Tcc_FloatTensor:$input,
      DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilations,
      UnitAttr:$ceil_mode), extraArgs);
  let results = (outs Tcc_FloatTensor:$result);
  let hasVerifier = 1;
}

def Tcc_MaxPoolOp : Tcc_PoolOp<"max_pool", "max", (ins)> {
  let description = [{
    Takes the largest element of each window over the spatial dimensions of
    an `N x C x D1 x ... x Dn` input. Padding never wins. `ceil_mode` rounds
    the output size up (a window must still start inside the input or its
    begin padding). `padding` lists begin pads, then end pads.

    ```mlir
    %r = tcc.max_pool %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1]
           dilations = [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `strides` `=` $strides `padding` `=` $padding
    `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Tcc_AvgPoolOp : Tcc_PoolOp<"avg_pool", "average",
    (ins UnitAttr:$count_include_pad)> {
  let description = [{
    Averages each window over the spatial dimensions of an
    `N x C x D1 x ... x Dn` input. The divisor counts only elements inside
    the input unless `count_include_pad` is set (padding beyond the begin/end
    pads added by `ceil_mode` is never counted).

    ```mlir
    %r = tcc.avg_pool %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0]
           dilations = [1, 1] : tensor<1x8x4x4xf32> -> tensor<1x8x2x2xf32>
    ```
  }];
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `strides` `=` $strides `padding` `=` $padding
    `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)?
    attr-dict `:` type($input) `->` type($result)
  }];
}

class Tcc_SoftmaxLikeOp<string mnemonic, string what>
    : Tcc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " along one axis";
  let description = "Computes " # what # [{ along `axis`, stably (the
    maximum is subtracted first).

    ```mlir
    %r = tcc.}] # mnemonic # [{ %x axis = 1 : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tcc_SoftmaxOp : Tcc_SoftmaxLikeOp<"softmax", "softmax">;
def Tcc_LogSoftmaxOp : Tcc_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Tcc_LayerNormOp : Tcc_Op<"layer_norm", [Pure,
    AllElementTypesMatch<["input", "scale", "result"]>, Tcc_InfersResultType]> {
  let summary = "layer normalization over the trailing axes";
  let description = [{
    Normalizes `input` over the axes `[axis, rank)` to zero mean and unit
    variance (biased, plus `epsilon`), then multiplies by `scale` and adds
    `bias` (both broadcast to the normalized shape numpy-style).

    ```mlir
    %r = tcc.layer_norm %x, %g, %b axis = 2 epsilon = 1.0e-05
           : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$scale,
                       Optional<Tcc_FloatTensor>:$bias, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? `axis` `=` $axis `epsilon` `=` $epsilon
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tcc_BatchNormOp : Tcc_Op<"batch_norm", [Pure,
    AllElementTypesMatch<["input", "scale", "bias", "mean", "variance",
                          "result"]>, Tcc_InfersResultType]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    `(x - mean) / sqrt(variance + epsilon) * scale + bias` along dimension 1
    of an `N x C x ...` input; the four parameters are `C`-vectors.

    ```mlir
    %r = tcc.batch_norm %x, %s, %b, %m, %v epsilon = 1.0e-05
           : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$scale,
                       Tcc_FloatTensor:$bias, Tcc_FloatTensor:$mean,
                       Tcc_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance `epsilon` `=` $epsilon
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tcc_NllLossOp : Tcc_Op<"nll_loss", [Pure,
    AllElementTypesMatch<["input", "result"]>, Tcc_InfersResultType]> {
  let summary = "negative log-likelihood loss of log-probabilities";
  let description = [{
    `input` holds log-probabilities `N x C x d1 x ... x dk` (class along
    dimension 1), `target` the class index of each position `N x d1 x ... x dk`.
    Each position contributes `-weight[t] * input[n, t, d...]` with `t` its
    target (`weight` defaults to ones); a position whose target equals
    `ignore_index` contributes 0 and does not count. `reduction = none` gives
    the per-position terms, `sum` their sum, `mean` their sum divided by the
    summed weights of the positions that count (their number without
    `weight`). Targets outside `[0, C)` other than `ignore_index` pick
    nothing. This is ONNX `NegativeLogLikelihoodLoss` and PyTorch `nll_loss`;
    cross-entropy is `nll_loss` of `log_softmax` along dimension 1.

    ```mlir
    %l = tcc.nll_loss %logp, %t reduction = mean
           : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    %m = tcc.nll_loss %logp, %t, %w reduction = none ignore_index = 3
           : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_IndexTensor:$target,
                       Optional<Tcc_FloatTensor>:$weight,
                       Tcc_LossReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target (`,` $weight^)? `reduction` `=` $reduction
    (`ignore_index` `=` $ignore_index^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The one-hot mask of the targets (`i1`, the input's shape) and each
    /// position's weight (the target's shape; null when all weigh 1): what
    /// the decomposition and the VJP build from.
    ::mlir::FailureOr<std::pair<::mlir::Value, ::mlir::Value>>
    buildPick(::mlir::tcc::TccBuilder &b);
  }];
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Tcc_ReshapeOp : Tcc_Op<"reshape", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "the same elements in another shape";
  let description = [{
    Reinterprets the row-major elements of `input` with the result's shape;
    both hold the same number of elements.

    ```mlir
    %r = tcc.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_TransposeOp : Tcc_Op<"transpose", [Pure,
    AllElementTypesMatch<["input", "result"]>, Tcc_InfersResultType]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.

    ```mlir
    %r = tcc.transpose %x perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_BroadcastToOp : Tcc_Op<"broadcast_to", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "numpy-style broadcast to a shape";
  let description = [{
    Repeats `input` along dimensions of size 1 and new leading dimensions to
    reach the result's shape (ONNX `Expand` once its shape is known).

    ```mlir
    %r = tcc.broadcast_to %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_IotaOp : Tcc_Op<"iota", [Pure]> {
  let summary = "the positions 0, 1, ... along one dimension";
  let description = [{
    Holds its index along `dimension` (0, 1, ..., n - 1), every other
    dimension of size 1; combined with other tensors by broadcasting. Its
    size may be dynamic -- `torch.arange(x.shape[1])`, ONNX `Range` to a
    size from `Shape`, the masks of `Trilu` over a dynamic dimension -- and
    is then the size of the dynamic dimension it is combined with (which
    tcc-pad-dynamic-dims makes a bucket's). A static one folds to a
    constant.

    ```mlir
    %i = tcc.iota {dimension = 0 : i64} : tensor<?x1xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dimension);
  let results = (outs RankedTensorOf<[Tcc_Int, AnyFloat]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_TrimOp : Tcc_Op<"trim", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "the first n elements along one dimension, n known at run time";
  let description = [{
    A result whose size depends on the data (ONNX `NonZero`, `Compress`):
    `input` holds it at its upper bound, of which the first `size`
    elements along `dimension` are the result (`size` is computed by the
    graph, between 0 and the input's size there). The result's dimension
    is dynamic; tcc-pad-dynamic-dims compiles the graph at the input's size
    (one bucket), masking what reads past `size`, and the artifact reports
    `size` after the run. A result with several such sizes (a `Pad` by
    pads known only at run time) is trimmed once per dimension, each trim's
    input static in its own dimension.

    ```mlir
    %r = tcc.trim %coords, %count {dimension = 1 : i64, name = "y"} : (tensor<2x12xi64>, tensor<i64>) -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, TensorOf<[I64]>:$size,
                       I64Attr:$dimension, StrAttr:$name);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $size attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tcc_ConcatOp : Tcc_Op<"concat", [Pure, Tcc_InfersResultType]> {
  let summary = "joining tensors along an axis";
  let description = [{
    Concatenates the inputs along `axis`; all other dimensions agree.

    ```mlir
    %r = tcc.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_SliceOp : Tcc_Op<"slice", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "a strided window of a tensor";
  let description = [{
    Result element `r` along dimension `i` is input element
    `offsets[i] + r * steps[i]`; the result's shape gives the count per
    dimension. Steps are non-zero and may be negative (a reversed window);
    every index touched lies inside the input.

    ```mlir
    %r = tcc.slice %x offsets = [0, 7] steps = [1, -2] : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `steps` `=` $steps attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_SplitOp : Tcc_Op<"split", [Pure]> {
  let summary = "cutting a tensor into consecutive pieces along an axis";
  let description = [{
    Each result takes the next `result.shape[axis]` entries of `input` along
    `axis`; the pieces add up to the whole.

    ```mlir
    %a, %b = tcc.split %x axis = 1 : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Tcc_Tensor>:$results);
  let assemblyFormat = [{
    $input `axis` `=` $axis attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_GatherOp : Tcc_Op<"gather", [Pure,
    AllElementTypesMatch<["data", "result"]>, Tcc_InfersResultType]> {
  let summary = "taking entries of a tensor along an axis by index";
  let description = [{
    ONNX `Gather`: the result's shape is
    `data.shape[:axis] + indices.shape + data.shape[axis+1:]`. Negative
    indices count from the end; indices out of range give an unspecified
    value but never read outside `data`.

    ```mlir
    %r = tcc.gather %table, %ids axis = 0 : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$data, Tcc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `axis` `=` $axis attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_PadOp : Tcc_Op<"pad", [Pure, AllElementTypesMatch<["input", "result"]>,
    Tcc_InfersResultType]> {
  let summary = "padding a tensor on each side";
  let description = [{
    Adds `low[i]` elements before and `high[i]` after dimension `i` (both
    non-negative), filled with `value` (`constant`), the mirror image
    without the edge (`reflect`), the edge repeated (`edge`) or the other
    end (`wrap`).

    ```mlir
    %r = tcc.pad %x low = [0, 1] high = [0, 2] mode = constant value = 0.0 : tensor<2x3xf32> -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, Tcc_PadModeAttr:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $input `low` `=` $low `high` `=` $high `mode` `=` $mode (`value` `=` $value^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Fused groups
//===----------------------------------------------------------------------===//

def Tcc_FusedOp : Tcc_Op<"fused", [IsolatedFromAbove, RecursiveMemoryEffects,
    SingleBlock]> {
  let summary = "a group of ops compiled as one kernel";
  let description = [{
    The fusion pass moves a producer-consumer group of tcc ops into the body
    of a `tcc.fused`; the lowering turns each group into one kernel. The
    body's arguments stand for `inputs`, and its `tcc.yield` gives the
    results. `kind` names the shape of the group (e.g. `elementwise`,
    `reduction`, `matmul_epilogue`) for the code generator.

    ```mlir
    %r = tcc.fused "elementwise" (%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = tcc.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %t = tcc.relu %s : tensor<4xf32>
      tcc.yield %t : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<Tcc_Tensor>:$inputs);
  let results = (outs Variadic<Tcc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `:` type($inputs) `)` `->` type($results) attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Tcc_YieldOp : Tcc_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["FusedOp", "IfOp", "LoopOp"]>]> {
  let summary = "the results of a fused group or of a control-flow region";
  let description = [{
    Ends the body of a `tcc.fused`, a branch of a `tcc.if` or the body of a
    `tcc.loop`, and gives its results.

    ```mlir
    tcc.yield %t : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// More elementwise math: trigonometry, shifts, bit casts
//===----------------------------------------------------------------------===//

def Tcc_IntTensor : RankedTensorOf<[Tcc_Int]>;

def Tcc_TanOp : Tcc_UnaryOp<"tan", "the tangent", Tcc_FloatTensor>;
def Tcc_AsinOp : Tcc_UnaryOp<"asin", "the arcsine", Tcc_FloatTensor>;
def Tcc_AcosOp : Tcc_UnaryOp<"acos", "the arccosine", Tcc_FloatTensor>;
def Tcc_AtanOp : Tcc_UnaryOp<"atan", "the arctangent", Tcc_FloatTensor>;
def Tcc_SinhOp : Tcc_UnaryOp<"sinh", "the hyperbolic sine", Tcc_FloatTensor>;
def Tcc_CoshOp : Tcc_UnaryOp<"cosh", "the hyperbolic cosine",
    Tcc_FloatTensor>;
def Tcc_AsinhOp : Tcc_UnaryOp<"asinh", "the inverse hyperbolic sine",
    Tcc_FloatTensor>;
def Tcc_AcoshOp : Tcc_UnaryOp<"acosh", "the inverse hyperbolic cosine",
    Tcc_FloatTensor>;
def Tcc_AtanhOp : Tcc_UnaryOp<"atanh", "the inverse hyperbolic tangent",
    Tcc_FloatTensor>;

def Tcc_ShiftLeftOp : Tcc_BinaryOp<"shift_left",
    "left shift `lhs << rhs` (0 once `rhs` reaches the bit width)",
    Tcc_IntTensor>;
def Tcc_ShiftRightOp : Tcc_BinaryOp<"shift_right",
    "right shift `lhs >> rhs`, logical for unsigned and arithmetic for "
    "signed integers (all sign bits once `rhs` reaches the bit width)",
    Tcc_IntTensor>;

def Tcc_BitcastOp : Tcc_Op<"bitcast", [Pure, SameOperandsAndResultShape,
    Tcc_BroadcastingElementwise]> {
  let summary = "elementwise reinterpretation of the bits";
  let description = [{
    Gives each element's bits as the result's element type, which has the
    same width (a bool counts as one byte: `false` is 0, `true` is 1, and a
    byte becomes `true` when it is not 0).

    ```mlir
    %r = tcc.bitcast %x : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Scans, selection and scatter
//===----------------------------------------------------------------------===//

class Tcc_CumulativeOp<string mnemonic, string what>
    : Tcc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "running " # what # " along an axis";
  let description = "Element `i` along `axis` is the " # what # [{ of the
    elements `0..i` (`0..i-1` with `exclusive`, whose first element is the
    identity); `reverse` runs from the end instead.

    ```mlir
    %r = tcc.}] # mnemonic # [{ %x axis = 1 exclusive : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Tcc_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs Tcc_NumericTensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)?
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tcc_CumsumOp : Tcc_CumulativeOp<"cumsum", "sum">;
def Tcc_CumprodOp : Tcc_CumulativeOp<"cumprod", "product">;

def Tcc_TopKOp : Tcc_Op<"topk", [Pure,
    AllElementTypesMatch<["input", "values"]>]> {
  let summary = "the k largest or smallest elements along an axis";
  let description = [{
    Gives, along `axis`, the `k` largest elements (the smallest without
    `largest`) in order, best first, and their `i64` indices; `k` is the
    results' size along `axis`. Equal elements keep their order (the lower
    index first).

    ```mlir
    %v, %i = tcc.topk %x axis = 1 largest : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
    ```
  }];
  let arguments = (ins Tcc_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$largest);
  let results = (outs Tcc_NumericTensor:$values, Tcc_I64Tensor:$indices);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`largest` $largest^)? attr-dict `:` type($input)
    `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Tcc_ScatterReductionAttr : I32EnumAttr<"ScatterReduction",
    "how scatter combines an update with the existing element", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
      I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::mlir::tcc";
}

def Tcc_ScatterOp : Tcc_Op<"scatter", [Pure,
    AllTypesMatch<["data", "result"]>,
    AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "writing updates into a copy of a tensor along an axis";
  let description = [{
    ONNX `ScatterElements`: the result is `data`, except that each element
    of `updates` goes to the position of its own index with the coordinate
    along `axis` replaced by the matching element of `indices` (negative
    indices count from the end). `reduction` combines it with what is there
    (`none` replaces; with duplicate indices the last update wins). Indices
    out of range are skipped.

    ```mlir
    %r = tcc.scatter %data, %idx, %upd axis = 0 reduction = add
           : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$data, Tcc_IndexTensor:$indices,
                       Tcc_Tensor:$updates, I64Attr:$axis,
                       Tcc_ScatterReductionAttr:$reduction);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates `axis` `=` $axis `reduction` `=` $reduction
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

def Tcc_IfOp : Tcc_Op<"if", [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "a choice between two regions";
  let description = [{
    Runs `then_region` when the single element of `condition` is true and
    `else_region` otherwise; each ends with a `tcc.yield` of values with the
    result types (ONNX `If`). The regions may use values defined above.

    ```mlir
    %r = tcc.if %c : tensor<i1> -> tensor<2xf32> {
      tcc.yield %a : tensor<2xf32>
    } else {
      tcc.yield %b : tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins Tcc_BoolTensor:$condition);
  let results = (outs Variadic<Tcc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$then_region,
                        SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` type($results)^)? $then_region
    `else` $else_region attr-dict
  }];
  let hasRegionVerifier = 1;
}

def Tcc_LoopOp : Tcc_Op<"loop", [RecursiveMemoryEffects]> {
  let summary = "a loop with carried values and stacked per-iteration outputs";
  let description = [{
    ONNX `Loop`. The body runs while the iteration number is below
    `trip_count` and the condition holds (`condition` before the first
    iteration, then the body's). Its block arguments are the iteration
    number (`tensor<i64>`), the condition (`tensor<i1>`) and the carried
    values, starting as `inits`. Its `tcc.yield` gives the next condition,
    the next carried values, then one value per scan output. The results are
    the final carried values, then the scan outputs: each stacks the values
    of the first `S` iterations along a new leading dimension of static size
    `S`, and the loop runs at most `S` iterations when it has scan outputs.
    The body may use values defined above.

    ```mlir
    %sum, %all = tcc.loop %n, %true, %x : (tensor<i64>, tensor<i1>, tensor<2xf32>)
        -> (tensor<2xf32>, tensor<3x2xf32>) {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
      %next = tcc.add %acc, %acc : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tcc.yield %c, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins Tcc_I64Tensor:$trip_count, Tcc_BoolTensor:$condition,
                       Variadic<Tcc_Tensor>:$inits);
  let results = (outs Variadic<Tcc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $trip_count `,` $condition (`,` $inits^)? attr-dict `:`
    functional-type(operands, results) $body
  }];
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Micro-kernel calls
//===----------------------------------------------------------------------===//

def Tcc_UkernelOp : Tcc_Op<"ukernel", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "a call to one of tcc's CPU micro-kernels";
  let description = [{
    The CPU lowering replaces heavy contractions (matrix products,
    convolutions) by calls to hand-tuned micro-kernels (runtime/ukernels),
    linked into the artifact as LLVM bitcode. This op is such a call in
    destination-passing style: it reads `inputs` and writes `outputs`
    (the result, then the kernel's scratch memory if it needs any). On
    tensors it returns the new values of `outputs`; after bufferization it
    works on memrefs and has no results. `params` holds the kernel's scalar
    arguments (sizes, strides, flags, epilogue) by name; which inputs are
    present (bias, residual) is in `params` too.

    A call whose last input is a residual it adds to its result may say, in
    `accumulate_params`, how the same kernel computes that sum in place:
    called with those params and without the residual, it accumulates into
    its first output, which must then hold the residual. The memory planner
    does this when the residual's buffer dies at the call; it needs to know
    nothing else of the kernel.

    ```mlir
    %r:2 = tcc.ukernel "conv2d" ins(%x, %w, %b : tensor<1x3x8x8xf32>, tensor<512xf32>, tensor<4xf32>)
             outs(%init, %scratch : tensor<1x4x8x8xf32>, tensor<2048xi8>)
             params {kh = 3 : i64, kw = 3 : i64, has_bias = true} -> tensor<1x4x8x8xf32>, tensor<2048xi8>
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs, DictionaryAttr:$params,
                       OptionalAttr<DictionaryAttr>:$accumulate_params);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $name `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)` `params` $params
    (`accumulate` $accumulate_params^)? attr-dict
    (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getOutputsMutable(); }
  }];
  let hasVerifier = 1;
}

#endif // TCC_OPS_TD
