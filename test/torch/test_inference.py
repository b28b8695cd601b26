"""torch.compile(model, backend="tcc") against eager, for inference.

Tolerances: rtol 1e-4, atol 1e-5 (f32 products summed in another order).
Each test also asserts that tcc compiled every op (no eager fallback), so
that a regression to eager cannot pass unnoticed.
"""

import pytest
import torch

from conftest import tcc_compile
from models import CNN, GPT, MLP, Encoder

import tcc.torch

torchvision = pytest.importorskip("torchvision")

RTOL, ATOL = 1e-4, 1e-5


def check(model, *inputs, **options):
    model = model.eval()
    compiled = tcc_compile(model, **options)
    before = len(tcc.torch.stats.fallbacks)
    with torch.no_grad():
        expected = model(*inputs)
        got = compiled(*inputs)
        again = compiled(*inputs)  # the compiled artifact, not the first call
    assert tcc.torch.stats.fallbacks[before:] == []
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(again, expected, rtol=RTOL, atol=ATOL)


def test_mlp():
    check(MLP(), torch.randn(8, 32))


def test_cnn_with_batch_norm():
    model = CNN()
    with torch.no_grad():  # statistics other than the defaults
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    check(model, torch.randn(2, 3, 16, 16))


def test_resnet18():
    check(torchvision.models.resnet18(weights=None), torch.randn(1, 3, 64, 64))


def test_mobilenet_v2():
    check(torchvision.models.mobilenet_v2(weights=None),
          torch.randn(1, 3, 64, 64))


def test_transformer_encoder_layer():
    # Under no_grad PyTorch runs the layer as one fused op
    # (_transformer_encoder_layer_fwd), which tcc compiles whole.
    check(Encoder(), torch.randn(2, 12, 64))


def test_gpt_decoder():
    check(GPT(), torch.randint(0, 97, (2, 16)))


def test_weights_changed_in_place_are_seen():
    # Inference graphs freeze parameters; changing one recompiles.
    model = MLP().eval()
    compiled = tcc_compile(model)
    x = torch.randn(4, 32)
    with torch.no_grad():
        compiled(x)
        model.fc2.weight.mul_(2)
        torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


def test_without_freezing():
    check(CNN(), torch.randn(2, 3, 16, 16), freeze=False)
