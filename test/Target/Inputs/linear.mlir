// A model whose matmul runs in a micro-kernel: y = relu(x @ w + b).
module attributes {tcc.model_name = "linear"} {
  func.func @main(%x: tensor<4x16xf32> {tcc.name = "x"}, %w: tensor<16x8xf32> {tcc.name = "w"}) -> (tensor<4x8xf32> {tcc.name = "y"}) {
    %b = tcc.constant dense<[0.5, -0.5, 1.0, -1.0, 0.25, -0.25, 2.0, -2.0]> : tensor<8xf32>
    %0 = tcc.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %1 = tcc.add %0, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %2 = tcc.relu %1 : tensor<4x8xf32>
    return %2 : tensor<4x8xf32>
  }
}
