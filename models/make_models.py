#!/usr/bin/env python3
"""Generate tcc's test/benchmark models with PyTorch reference outputs.

Layout written for every model NAME (the ONNX backend-test layout):

    <out>/<NAME>/model.onnx
    <out>/<NAME>/test_data_set_0/input_K.pb    (onnx.TensorProto)
    <out>/<NAME>/test_data_set_0/output_K.pb   (onnx.TensorProto, PyTorch float32 CPU)

Models: mlp, resnet18, mobilenet_v2, encoder by default, and with --zoo the
zoo of bench/run.py --models zoo (twelve torchvision families, a small CNN at
batch 8 and 32, the encoder at sequence 32 and 512, a GPT-style decoder
block; see MODELS below). Everything is deterministic: fixed seeds, random
weights, nothing is downloaded.

Usage:
    make_models.py --out build/models            # the four core models
    make_models.py --out build/models --zoo      # and the zoo
    make_models.py --out build/models mlp encoder
    make_models.py --out build/models --force    # regenerate even if up to date

A model whose files exist and are newer than this script is skipped. Each model
is written into a temporary folder next to its destination and renamed into
place, so an interrupted run never leaves a half-written model behind.

Exporter choice (pinned on purpose): torch >= 2.9 defaults to the torch.export
based ("dynamo") ONNX exporter, and the legacy TorchScript exporter is
deprecated and slated for removal. The dynamo exporter's output is the cleaner
one here: its optimizer folds constants and BatchNorm into Conv and leaves no
Identity/Constant nodes, whereas the legacy exporter (dynamo=False, opset 17)
leaves dozens of Identity and Constant nodes. So we pin dynamo=True with
optimize=True (its constant folding; the legacy-only `do_constant_folding` flag
has no effect on this path) and pin opset 20 so the output does not drift with
the torch version. All shapes are static (no dynamic_shapes). Weights are
embedded in model.onnx (external_data=False).

This module is also imported by bench/run.py, which rebuilds the same PyTorch
modules (same seeds, same weights) for its PyTorch-eager and torch.compile
peers: keep build_model() deterministic.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OPSET = 20
EXPORTER = "dynamo"  # see module docstring
RTOL, ATOL = 1e-3, 1e-4  # ORT-vs-PyTorch verification tolerances

SCRIPT = Path(__file__).resolve()


# --------------------------------------------------------------------------- #
# Model definitions
# --------------------------------------------------------------------------- #

def _torch():
    import torch  # imported lazily so `--help` is fast
    return torch


def _randomize_params(module, gen) -> None:
    """Make parameters that default to constants non-trivial.

    Freshly initialised BatchNorm layers are the identity in eval mode (mean 0,
    var 1, weight 1, bias 0), LayerNorm has gamma 1 / beta 0 and some torchvision
    heads zero their Linear bias (ViT's its weight too). Left like that, a lowering that ignores those
    parameters would still pass, and the exporter deduplicates the identical
    initializers (or drops zero biases). Values stay moderate so activations do
    not blow up with depth.
    """
    torch = _torch()
    nn = torch.nn
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(n, generator=gen) * 0.1)
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
            elif isinstance(m, nn.Linear):
                # torchvision's ViT zeroes its head: its output would not
                # depend on the input at all.
                if not m.weight.any():
                    m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.02)
                if m.bias is not None and not m.bias.any():
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.01)


def _build_mlp():
    torch = _torch()
    nn = torch.nn
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 256), nn.ReLU(),
        nn.Linear(256, 10),
    )


def _build_resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None)


def _build_mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None)


def _encoder_class():
    torch = _torch()
    nn = torch.nn
    F = torch.nn.functional

    class EncoderLayer(nn.Module):
        """One BERT-base encoder layer, written out op by op (post-LN)."""

        def __init__(self, hidden=768, heads=12, ffn=3072, eps=1e-12):
            super().__init__()
            assert hidden % heads == 0
            self.heads, self.head_dim = heads, hidden // heads
            self.q = nn.Linear(hidden, hidden)
            self.k = nn.Linear(hidden, hidden)
            self.v = nn.Linear(hidden, hidden)
            self.out = nn.Linear(hidden, hidden)
            self.ln1 = nn.LayerNorm(hidden, eps=eps)
            self.fc1 = nn.Linear(hidden, ffn)
            self.fc2 = nn.Linear(ffn, hidden)
            self.ln2 = nn.LayerNorm(hidden, eps=eps)

        def _split(self, t, b, s):
            # [b, s, hidden] -> [b, heads, s, head_dim]
            return t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

        def forward(self, x):
            b, s, hidden = x.shape
            q = self._split(self.q(x), b, s)
            k = self._split(self.k(x), b, s)
            v = self._split(self.v(x), b, s)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            probs = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, hidden)
            x = self.ln1(x + self.out(ctx))
            ff = self.fc2(F.gelu(self.fc1(x)))  # erf GELU (approximate="none")
            return self.ln2(x + ff)

    return EncoderLayer


def _build_encoder():
    return _encoder_class()()


def _torchvision(name, **kwargs):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return build


def _build_small_cnn():
    """A small classifier over 28x28 single-channel images: two 3x3
    convolutions with BatchNorm and ReLU (1 -> 32 -> 64 channels), a max
    pool between them, a global average pool and a linear head."""
    torch = _torch()
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def _build_decoder():
    """One GPT-2-style decoder block (pre-LN, causal self-attention, tanh
    GELU MLP), d 768, 12 heads, written out op by op."""
    torch = _torch()
    nn = torch.nn
    F = torch.nn.functional

    class DecoderBlock(nn.Module):
        def __init__(self, hidden=768, heads=12, eps=1e-5):
            super().__init__()
            self.heads, self.head_dim = heads, hidden // heads
            self.ln1 = nn.LayerNorm(hidden, eps=eps)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.ln2 = nn.LayerNorm(hidden, eps=eps)
            self.fc = nn.Linear(hidden, 4 * hidden)
            self.out = nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, s, hidden = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(hidden, dim=-1)
            q, k, v = (t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
                       for t in (q, k, v))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            mask = torch.ones(s, s, dtype=torch.bool).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
            att = torch.matmul(torch.softmax(scores, dim=-1), v)
            x = x + self.proj(att.transpose(1, 2).reshape(b, s, hidden))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    return DecoderBlock()


def _build_buffer_mask_attention():
    """nanoGPT's causal self-attention, small (d 64, 4 heads): learned
    positions of arange(T) and the causal mask registered as a
    [1, 1, 32, 32] buffer, cut to bias[:, :, :T, :T]. Not a bench model: a
    test of dynamic sequence lengths."""
    torch = _torch()
    nn = torch.nn

    class BufferMaskAttention(nn.Module):
        def __init__(self, d=64, heads=4, block=32):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.wpe = nn.Embedding(block, d)
            self.register_buffer("bias", torch.tril(torch.ones(block, block))
                                 .view(1, 1, block, block))

        def forward(self, x):
            b, t, c = x.size()
            x = x + self.wpe(torch.arange(0, t, dtype=torch.long))
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (y.view(b, t, self.heads, c // self.heads)
                       .transpose(1, 2) for y in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            y = torch.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

    return BufferMaskAttention()


IMAGE = [(1, 3, 224, 224)]

# name -> (builder, seed, input shapes)
MODELS = {
    "mlp": (_build_mlp, 1001, [(64, 784)]),
    "resnet18": (_build_resnet18, 1002, [(1, 3, 224, 224)]),
    "mobilenet_v2": (_build_mobilenet_v2, 1003, [(1, 3, 224, 224)]),
    "encoder": (_build_encoder, 1004, [(1, 128, 768)]),
    # The zoo (bench/run.py --models zoo): classification networks of
    # twelve torchvision families, a small CNN at two batch sizes, the
    # encoder at a short and a long sequence, and a decoder block.
    "efficientnet_b0": (_torchvision("efficientnet_b0"), 1101, IMAGE),
    "squeezenet1_1": (_torchvision("squeezenet1_1"), 1102, IMAGE),
    "shufflenet_v2_x1_0": (_torchvision("shufflenet_v2_x1_0"), 1103, IMAGE),
    "resnet50": (_torchvision("resnet50"), 1104, IMAGE),
    "vit_b_16": (_torchvision("vit_b_16"), 1105, IMAGE),
    "densenet121": (_torchvision("densenet121"), 1106, IMAGE),
    "mobilenet_v3_large": (_torchvision("mobilenet_v3_large"), 1107, IMAGE),
    "regnet_y_400mf": (_torchvision("regnet_y_400mf"), 1108, IMAGE),
    "mnasnet1_0": (_torchvision("mnasnet1_0"), 1109, IMAGE),
    "googlenet": (_torchvision("googlenet", aux_logits=False,
                               init_weights=True), 1110, IMAGE),
    "convnext_tiny": (_torchvision("convnext_tiny"), 1111, IMAGE),
    "resnext50_32x4d": (_torchvision("resnext50_32x4d"), 1112, IMAGE),
    "cnn_b8": (_build_small_cnn, 1120, [(8, 1, 28, 28)]),
    "cnn_b32": (_build_small_cnn, 1120, [(32, 1, 28, 28)]),
    "encoder_s32": (_build_encoder, 1004, [(1, 32, 768)]),
    "encoder_s512": (_build_encoder, 1004, [(1, 512, 768)]),
    "decoder": (_build_decoder, 1130, [(1, 128, 768)]),
}
# What make_models.py writes by default (the e2e tests' models), and the
# zoo (--zoo).
CORE = ["mlp", "resnet18", "mobilenet_v2", "encoder"]
ZOO = [n for n in MODELS if n not in CORE]


def build_model(name: str):
    """Return the deterministic eval-mode torch.nn.Module for NAME."""
    torch = _torch()
    builder, seed, _ = MODELS[name]
    torch.manual_seed(seed)
    model = builder()
    _randomize_params(model, torch.Generator().manual_seed(seed + 1))
    return model.eval()


def make_inputs(name: str, shapes=None, seed=None) -> list[np.ndarray]:
    """Deterministic float32 inputs (standard normal) for NAME."""
    if shapes is None or seed is None:
        _, mseed, mshapes = MODELS[name]
        shapes = mshapes if shapes is None else shapes
        seed = mseed if seed is None else seed
    rng = np.random.default_rng(seed + 7)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# --------------------------------------------------------------------------- #
# Export / reference / verification (shared with make_tiny_cnn.py)
# --------------------------------------------------------------------------- #

def export_onnx(model, inputs: list[np.ndarray], path: Path) -> None:
    """Export MODEL (eval mode) to PATH with the pinned exporter settings."""
    torch = _torch()
    import onnx

    args = tuple(torch.from_numpy(a) for a in inputs)
    in_names = [f"input_{i}" for i in range(len(inputs))]
    # The dynamo exporter prints progress lines; keep our output readable.
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        prog = torch.onnx.export(
            model.eval(), args,
            dynamo=True, optimize=True, opset_version=OPSET,
            input_names=in_names, output_names=["output_0"],
            external_data=False, verbose=False,
        )
    prog.save(str(path), external_data=False)
    onnx.checker.check_model(str(path), full_check=True)


def reference_outputs(model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """PyTorch float32 CPU outputs."""
    torch = _torch()
    with torch.inference_mode():
        out = model.eval()(*[torch.from_numpy(a.copy()) for a in inputs])
    if isinstance(out, torch.Tensor):
        out = (out,)
    return [o.detach().cpu().numpy().astype(np.float32) for o in out]


def ort_outputs(model_path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feed)


def verify_with_ort(name: str, model_path: Path, inputs, refs) -> None:
    outs = ort_outputs(model_path, inputs)
    if len(outs) != len(refs):
        raise RuntimeError(f"{name}: ORT returned {len(outs)} outputs, PyTorch {len(refs)}")
    for k, (o, r) in enumerate(zip(outs, refs)):
        if o.shape != r.shape:
            raise RuntimeError(f"{name}: output {k} shape ORT {o.shape} vs PyTorch {r.shape}")
        if not np.allclose(o, r, rtol=RTOL, atol=ATOL):
            err = np.abs(o - r)
            raise RuntimeError(
                f"{name}: ONNX Runtime disagrees with PyTorch on output {k}: "
                f"max abs err {err.max():.3g}, max |ref| {np.abs(r).max():.3g} "
                f"(rtol {RTOL}, atol {ATOL})")


def write_test_case(model_path: Path, case_dir: Path, inputs, outputs) -> None:
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(model_path), load_external_data=False).graph
    init_names = {t.name for t in graph.initializer}
    in_names = [i.name for i in graph.input if i.name not in init_names]
    out_names = [o.name for o in graph.output]
    assert len(in_names) == len(inputs) and len(out_names) == len(outputs)
    case_dir.mkdir(parents=True, exist_ok=True)
    for k, (n, a) in enumerate(zip(in_names, inputs)):
        (case_dir / f"input_{k}.pb").write_bytes(
            numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())
    for k, (n, a) in enumerate(zip(out_names, outputs)):
        (case_dir / f"output_{k}.pb").write_bytes(
            numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())


def generate(name: str, model, inputs, dest: Path) -> None:
    """Export, compute references, verify with ORT and atomically install DEST."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        model_path = tmp / "model.onnx"
        export_onnx(model, inputs, model_path)
        refs = reference_outputs(model, inputs)
        verify_with_ort(name, model_path, inputs, refs)
        write_test_case(model_path, tmp / "test_data_set_0", inputs, refs)
        os.chmod(tmp, 0o755)
        old = None
        if dest.exists():
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.replace(dest, old)
        os.replace(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def model_files(dest: Path) -> list[Path]:
    case = dest / "test_data_set_0"
    return [dest / "model.onnx", case / "input_0.pb", case / "output_0.pb"]


def up_to_date(dest: Path, scripts=(SCRIPT,)) -> bool:
    files = model_files(dest)
    if not all(f.is_file() for f in files):
        return False
    newest_script = max(Path(s).stat().st_mtime for s in scripts)
    return min(f.stat().st_mtime for f in files) > newest_script


def op_summary(model_path: Path) -> str:
    import collections
    import onnx
    m = onnx.load(str(model_path), load_external_data=False)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    opset = ",".join(f"{o.domain or 'ai.onnx'}:{o.version}" for o in m.opset_import)
    return f"opset {opset}; ops " + " ".join(f"{k}x{v}" for k, v in sorted(ops.items()))


def ensure(names, out: Path, force=False, quiet=False) -> None:
    for name in names:
        dest = Path(out) / name
        if not force and up_to_date(dest):
            if not quiet:
                print(f"[make_models] {name}: up to date ({dest})")
            continue
        t0 = time.perf_counter()
        generate(name, build_model(name), make_inputs(name), dest)
        if not quiet:
            print(f"[make_models] {name}: wrote {dest} in {time.perf_counter() - t0:.1f}s "
                  f"({op_summary(dest / 'model.onnx')})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output folder")
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    ap.add_argument("--zoo", action="store_true",
                    help=f"also the zoo: {', '.join(ZOO)}")
    ap.add_argument("names", nargs="*", help=f"models (default: {', '.join(CORE)})")
    a = ap.parse_args(argv)
    names = (a.names or list(CORE)) + (ZOO if a.zoo else [])
    bad = [n for n in names if n not in MODELS]
    if bad:
        ap.error(f"unknown model(s): {', '.join(bad)}; known: {', '.join(MODELS)}")
    try:
        ensure(names, a.out, force=a.force)
    except Exception as e:  # fail loudly, with a clear message
        print(f"[make_models] FAILED: {e}", file=sys.stderr)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
