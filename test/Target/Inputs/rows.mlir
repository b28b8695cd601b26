// A model of big elementwise ops and row reductions, no contraction: the
// loops themselves run in parallel. y = softmax(exp(x) - x) over rows.
module attributes {tcc.model_name = "rows"} {
  func.func @main(%x: tensor<300x257xf32> {tcc.name = "x"}) -> (tensor<300x257xf32> {tcc.name = "y"}) {
    %0 = tcc.exp %x : tensor<300x257xf32>
    %1 = tcc.sub %0, %x : (tensor<300x257xf32>, tensor<300x257xf32>) -> tensor<300x257xf32>
    %2 = tcc.softmax %1 axis = 1 : tensor<300x257xf32>
    return %2 : tensor<300x257xf32>
  }
}
