// A model over a dynamic sequence for the artifact tests: the softmax of
// each row of x over the sequence, and each row's mean.
module attributes {tcc.model_name = "seqs"} {
  func.func @main(%x: tensor<2x?xf32> {tcc.name = "x", tcc.dims = ["", "seq"]}) -> (tensor<2x?xf32> {tcc.name = "p"}, tensor<2xf32> {tcc.name = "m"}) {
    %p = tcc.softmax %x axis = 1 : tensor<2x?xf32>
    %m = tcc.reduce_mean %x axes = [1] : tensor<2x?xf32> -> tensor<2xf32>
    return %p, %m : tensor<2x?xf32>, tensor<2xf32>
  }
}
