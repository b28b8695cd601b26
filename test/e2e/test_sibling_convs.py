"""Pointwise convolutions of one input merged into one end to end: modules
with inception-style branches exported to ONNX (the zoo's exporter
settings), compiled by tcc, checked to hold the merged convolution and its
split where the branches allow it (and not where they do not), and run
against PyTorch."""

import pytest

torch = pytest.importorskip("torch")
from torch_module import check_against_torch, emit, export  # noqa: E402

C, H = 40, 13  # 13 x 13 planes: the pieces end off a vector


def branch(cin, cout, k=1, bn=True):
    """A convolution with BatchNorm (folded by tcc) and ReLU, as
    torchvision's BasicConv2d."""
    layers = [torch.nn.Conv2d(cin, cout, k, padding=k // 2, bias=not bn)]
    if bn:
        layers.append(torch.nn.BatchNorm2d(cout))
    layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class Inception(torch.nn.Module):
    """A 1x1 branch, two 1x1 reductions before 3x3s, a pooled projection,
    concatenated: three 1x1s of the input merge into one."""

    def __init__(self):
        super().__init__()
        self.b1 = branch(C, 24)
        self.b2 = torch.nn.Sequential(branch(C, 16), branch(16, 32, 3))
        self.b3 = torch.nn.Sequential(branch(C, 8, bn=False), branch(8, 16, 3))
        self.b4 = torch.nn.Sequential(torch.nn.MaxPool2d(3, 1, 1),
                                      branch(C, 16))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


class MixedTails(torch.nn.Module):
    """Two 1x1s with ReLU (merged), one with a sigmoid and one read by two
    ops (apart: another activation, and none), a 3x3 (apart: not
    pointwise)."""

    def __init__(self):
        super().__init__()
        self.a = branch(C, 16)
        self.b = branch(C, 8)
        self.c = torch.nn.Conv2d(C, 8, 1)
        self.d = torch.nn.Conv2d(C, 8, 1)
        self.e = torch.nn.Conv2d(C, 8, 3, padding=1)

    def forward(self, x):
        d = self.d(x)
        return torch.cat([self.a(x), self.b(x), torch.sigmoid(self.c(x)),
                          d * d + d, self.e(x)], 1)


def merged_convs(graph: str) -> int:
    """Convolutions with stacked filters in `--emit=tcc` output."""
    return graph.count("merged_weight")


@pytest.mark.parametrize("make,batch,merges", [
    (Inception, 1, 1),
    (MixedTails, 1, 1),
    (Inception, 2, 0),
], ids=["inception", "mixed-tails", "batch-2"])
def test_sibling_convs(make, batch, merges, tmp_path):
    torch.manual_seed(0)
    model = make().eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):  # statistics that matter
            torch.nn.init.uniform_(m.running_mean, -0.5, 0.5)
            torch.nn.init.uniform_(m.running_var, 0.5, 1.5)
    x = torch.randn(batch, C, H, H)
    path = export(model, x, tmp_path)
    graph = emit(path, "tcc")
    # Each merged convolution's constant is defined once and used once.
    assert merged_convs(graph) == 2 * merges, graph[-4000:]
    assert ("tcc.split" in graph) == (merges > 0)
    # Sums over at most 40 x 9 products in another order than PyTorch's,
    # BatchNorm folded into the weights: 1e-4 relative.
    check_against_torch(model, x, path, tmp_path, rtol=1e-4, atol=1e-5)
