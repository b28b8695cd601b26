//===- TccDialect.td - the tcc dialect, its types and enums --*- tablegen -*-===//
//
// The dialect every frontend produces and every lowering consumes: tensor
// operations with value semantics, verified shapes and dtypes.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECT_TD
#define TCC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tcc_Dialect : Dialect {
  let name = "tcc";
  let summary = "Tensor operations with value semantics for the tcc compiler";
  let description = [{
    The `tcc` dialect is the contract between tcc's frontends (ONNX,
    TorchScript/FX, the define-by-run tracer) and its lowerings (CPU through
    linalg and LLVM, CUDA through NVVM). Every op works on ranked tensors with
    value semantics; elementwise ops broadcast their operands numpy-style;
    axes are always normalized to `[0, rank)` by the frontends, so the
    dialect never sees negative axes. Verifiers check shapes, dtypes and
    attributes; dimensions may be dynamic (`?`) wherever an op's result shape
    does not depend on a value.

    Large weights are held as `dense_resource` constants, so importing a big
    model neither copies nor uniques its weights.
  }];
  let cppNamespace = "::mlir::tcc";
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Tcc_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tcc_Int : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Tcc_ElementType : AnyTypeOf<[Tcc_Float, I1, Tcc_Int]>;
def Tcc_Index : AnyTypeOf<[I32, I64]>;

def Tcc_Tensor : RankedTensorOf<[Tcc_ElementType]>;
def Tcc_FloatTensor : RankedTensorOf<[Tcc_Float]>;
def Tcc_NumericTensor : RankedTensorOf<[Tcc_Float, Tcc_Int]>;
def Tcc_BoolTensor : RankedTensorOf<[I1]>;
def Tcc_IntegerLikeTensor : RankedTensorOf<[I1, Tcc_Int]>;
def Tcc_IndexTensor : RankedTensorOf<[Tcc_Index]>;
def Tcc_I64Tensor : RankedTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tcc_ComparePredicateAttr : I32EnumAttr<"ComparePredicate",
    "elementwise comparison", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::tcc";
}

def Tcc_GeluApproximationAttr : I32EnumAttr<"GeluApproximation",
    "how gelu computes the normal CDF", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::tcc";
}

def Tcc_LossReductionAttr : I32EnumAttr<"LossReduction",
    "how a loss combines its per-position terms", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"mean", 2>]> {
  let cppNamespace = "::mlir::tcc";
}

def Tcc_PadModeAttr : I32EnumAttr<"PadMode", "how pad fills the border", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
      I32EnumAttrCase<"edge", 2>, I32EnumAttrCase<"wrap", 3>]> {
  let cppNamespace = "::mlir::tcc";
}

//===----------------------------------------------------------------------===//
// Traits and base classes
//===----------------------------------------------------------------------===//

/// Elementwise over operands broadcast numpy-style to the result's shape.
/// Fusion and lowering key off this trait, not off op names.
def Tcc_BroadcastingElementwise
    : NativeOpTrait<"BroadcastingElementwise"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}

class Tcc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tcc_Dialect, mnemonic, traits>;

#endif // TCC_DIALECT_TD
