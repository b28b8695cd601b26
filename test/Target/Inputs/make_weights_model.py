"""Writes a model with a 2048-float constant of distinct values (8 KB,
w[i] = i / 4) and a 2-float one: y = x + w, t = s + v."""
import sys

values = ", ".join(str(i / 4) for i in range(2048))
sys.stdout.write(f"""module attributes {{tcc.model_name = "w"}} {{
  func.func @main(%x: tensor<2048xf32> {{tcc.name = "x"}}, %s: tensor<2xf32> {{tcc.name = "s"}}) -> (tensor<2048xf32> {{tcc.name = "y"}}, tensor<2xf32> {{tcc.name = "t"}}) {{
    %w = tcc.constant dense<[{values}]> : tensor<2048xf32>
    %v = tcc.constant dense<[2.0, 3.0]> : tensor<2xf32>
    %0 = tcc.add %x, %w : (tensor<2048xf32>, tensor<2048xf32>) -> tensor<2048xf32>
    %1 = tcc.add %s, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0, %1 : tensor<2048xf32>, tensor<2xf32>
  }}
}}
""")
