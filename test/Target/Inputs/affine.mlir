// A tiny model used by the artifact tests: y = relu(x * w + b), s = sum(y).
module attributes {tcc.model_name = "affine"} {
  func.func @main(%x: tensor<2x3xf32> {tcc.name = "x"}) -> (tensor<2x3xf32> {tcc.name = "y"}, tensor<f32> {tcc.name = "total"}) {
    %w = tcc.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
    %b = tcc.constant dense<0.25> : tensor<3xf32>
    %0 = tcc.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = tcc.add %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %2 = tcc.relu %1 : tensor<2x3xf32>
    %3 = tcc.reduce_sum %2 axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %2, %3 : tensor<2x3xf32>, tensor<f32>
  }
}
