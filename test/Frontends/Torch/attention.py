# RUN: env TCC_CACHE_DIR=%t %python %s | FileCheck %s
# Tests a GPT-style block: layer norm, the fused qkv projection split into
# heads, causal scaled-dot-product attention (a masked softmax, no
# logsumexp in inference), GELU and the residual.
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(16)
        self.qkv = torch.nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(self.ln(x)).view(1, 4, 3, 2, 8).transpose(1, 3) \
            .unbind(2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.gelu(a.transpose(1, 2).reshape(1, 4, 16)) + x


torch.manual_seed(0)
compiled = torch.compile(Block().eval(), backend="tcc",
                         options={"emit": "import", "fallback": False})
with torch.no_grad():
    compiled(torch.randn(1, 4, 16))

# CHECK-LABEL: module attributes {tcc.model_name = "inference1"}
# CHECK: func.func @main(%[[X:.*]]: tensor<1x4x16xf32>
# CHECK: %[[LN:.*]] = tcc.layer_norm %[[X]], %{{.*}}, %{{.*}} axis = 2 epsilon = 1.000000e-05
# CHECK: %[[H:.*]] = tcc.transpose %{{.*}} perm = [0, 3, 2, 1, 4] : tensor<1x4x3x2x8xf32> -> tensor<1x2x3x4x8xf32>
# CHECK: %[[QKV:.*]]:3 = tcc.split %[[H]] axis = 2
# CHECK: %[[KT:.*]] = tcc.transpose %{{.*}} perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
# CHECK: %[[S:.*]] = tcc.matmul %{{.*}}, %[[KT]] : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
# CHECK: %[[M:.*]] = tcc.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>)
# CHECK-NOT: tcc.log
# CHECK: %[[P:.*]] = tcc.softmax %[[M]] axis = 3
# CHECK: %[[A:.*]] = tcc.matmul %[[P]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
# CHECK: %[[G:.*]] = tcc.gelu
# CHECK: %[[Y:.*]] = tcc.add %[[G]], %[[X]]
# CHECK: return %[[Y]]
