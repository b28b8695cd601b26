"""Attention as one kernel end to end: self-attention modules exported to
ONNX (the zoo's exporter settings), compiled by tcc, checked to call the
attention micro-kernel (tcc-fuse-attention took the scores' product, the
softmax and the product with V), its Q, K and V projected apart (no copy
out of the fused projection) and run against PyTorch: the scale as a
division, split between Q and K (torch's MultiheadAttention), an additive
mask and a causal mask selecting -inf."""

import pytest

torch = pytest.importorskip("torch")
from torch_module import check_against_torch, emit, export  # noqa: E402

SEQ, DIM, HEADS = 40, 64, 4  # 40 keys: rows of the scores end off a vector


class SelfAttention(torch.nn.Module):
    """Q, K, V projections of [1, SEQ, DIM], heads split by reshapes and
    transposes, softmax(Q K^T / sqrt(d) + mask) V, heads joined again."""

    def __init__(self, mask=None):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.out = torch.nn.Linear(DIM, DIM)
        self.mask = mask

    def forward(self, x):
        b, s, _ = x.shape
        hd = DIM // HEADS
        q, k, v = self.qkv(x).split(DIM, dim=2)
        q, k, v = (t.reshape(b, s, HEADS, hd).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / hd ** 0.5
        if self.mask == "add":
            scores = scores + torch.linspace(-2, 2, s * s).reshape(s, s)
        elif self.mask == "causal":
            causal = torch.ones(s, s, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(causal, float("-inf"))
        p = scores.softmax(-1)
        return self.out((p @ v).transpose(1, 2).reshape(b, s, DIM))


class TorchMha(torch.nn.Module):
    """torch.nn.MultiheadAttention, whose export scales Q and K apart and
    takes Q, K and V from its fused projection by a transpose and three
    gathers (biases made nonzero: torch starts them at 0)."""

    def __init__(self):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        torch.nn.init.normal_(self.mha.in_proj_bias)
        torch.nn.init.normal_(self.mha.out_proj.bias)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


@pytest.mark.parametrize("make", [
    lambda: SelfAttention(),
    lambda: SelfAttention("add"),
    lambda: SelfAttention("causal"),
    TorchMha,
], ids=["scaled", "additive-mask", "causal-mask", "torch-mha"])
def test_attention_is_one_call(make, tmp_path):
    torch.manual_seed(0)
    model = make().eval()
    x = torch.randn(1, SEQ, DIM)
    path = export(model, x, tmp_path)
    assert emit(path, "linalg").count('tcc.ukernel "attention"') == 1, \
        "attention was not one kernel call"
    # Q, K and V as projections of their own (the fused projection's
    # blocks), not gathered or split out of one product.
    graph = emit(path, "tcc")
    assert "tcc.gather" not in graph and "tcc.split" not in graph, \
        "Q, K, V copied out of one product"
    # Softmax's exp within a few ulp and sums in another order than
    # PyTorch's: 1e-4 relative, as the encoder in test_models.py.
    check_against_torch(model, x, path, tmp_path, rtol=1e-4, atol=1e-5)
