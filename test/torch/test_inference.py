"""torch.compile(model, backend="tcc") against eager, for inference.

Tolerances: rtol 1e-4, atol 1e-5 (f32 products summed in another order).
Each test also asserts that tcc compiled every op (no eager fallback), so
that a regression to eager cannot pass unnoticed.
"""

import pytest
import torch
import torch.nn.functional as F

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


@pytest.mark.parametrize("kernel,stride,padding,ceil", [
    (2, 2, 0, False),  # windows that tile the input
    (3, 2, 1, False),  # overlapping, padded
    (2, 2, 0, True),   # a partial window at the end
    ((1, 3), (1, 2), (0, 1), False),
])
def test_max_pool_indices(kernel, stride, padding, ceil):
    """The indices of max pooling: each window's first maximum, as a flat
    index in its plane; exact, with ties (integers) and a NaN."""
    def pool(x):
        return F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil,
                            return_indices=True)

    x = torch.randint(-2, 3, (2, 3, 7, 9)).float()
    x[1, 2, 3, 4] = float("nan")
    if (kernel, stride) == (2, 2) and not ceil:
        x = x[..., :6, :8].contiguous()
    compiled = tcc_compile(pool, fallback=False)
    values, indices = compiled(x)
    expected_values, expected_indices = pool(x)
    torch.testing.assert_close(values, expected_values, equal_nan=True)
    assert torch.equal(indices, expected_indices)


def test_complex_results_and_ffts():
    """Complex results come back as complex tensors (pairs viewed as
    complex), in the layout eager gives them (an FFT along dim 0 is
    column-major); a round trip through rfft/irfft; rtol 1e-4, atol 1e-5:
    the DFT tables are float64, rounded once."""
    def f(x):
        spectrum = torch.fft.fft(x, dim=0)
        half = torch.fft.rfft(x, norm="ortho")
        back = torch.fft.irfft(half, n=x.shape[-1], norm="ortho")
        return spectrum, torch.polar(x.abs(), x), back

    x = torch.randn(6, 10)
    compiled = tcc_compile(f, fallback=False)
    for got, want in zip(compiled(x), f(x)):
        assert got.dtype == want.dtype and got.stride() == want.stride()
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_complex_inputs():
    """A complex input crosses as its (re, im) pairs; an op tcc does not
    take complex tensors for is refused, naming the dtype."""
    z = torch.randn(4, 6, dtype=torch.complex64)
    compiled = tcc_compile(lambda z: torch.fft.ifft(z.conj()).real,
                           fallback=False)
    torch.testing.assert_close(compiled(z), torch.fft.ifft(z.conj()).real,
                               rtol=1e-4, atol=1e-5)
    compiled = tcc_compile(lambda z: z * 2, fallback=False)
    with pytest.raises(Exception, match="complex64"):
        compiled(z)
