// A model with a dynamic batch for the artifact tests: y = relu(x * w) + b
// over rows of 3, and the unbatched w + b.
module attributes {tcc.model_name = "rows"} {
  func.func @main(%x: tensor<?x3xf32> {tcc.name = "x", tcc.dims = ["batch", ""]}) -> (tensor<?x3xf32> {tcc.name = "y"}, tensor<3xf32> {tcc.name = "wb"}) {
    %w = tcc.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
    %b = tcc.constant dense<0.25> : tensor<3xf32>
    %0 = tcc.mul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %1 = tcc.relu %0 : tensor<?x3xf32>
    %2 = tcc.add %1, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %3 = tcc.add %w, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    return %2, %3 : tensor<?x3xf32>, tensor<3xf32>
  }
}
