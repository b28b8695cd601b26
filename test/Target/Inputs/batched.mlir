// A batch of six products (attention-sized heads, scaled down) with both
// operands inputs, so each product packs B into scratch of its own:
// y = a @ b + bias.
module attributes {tcc.model_name = "batched"} {
  func.func @main(%a: tensor<6x32x40xf32> {tcc.name = "a"}, %b: tensor<6x40x24xf32> {tcc.name = "b"}) -> (tensor<6x32x24xf32> {tcc.name = "y"}) {
    %bias = tcc.constant dense<0.5> : tensor<24xf32>
    %0 = tcc.matmul %a, %b : (tensor<6x32x40xf32>, tensor<6x40x24xf32>) -> tensor<6x32x24xf32>
    %1 = tcc.add %0, %bias : (tensor<6x32x24xf32>, tensor<24xf32>) -> tensor<6x32x24xf32>
    return %1 : tensor<6x32x24xf32>
  }
}
