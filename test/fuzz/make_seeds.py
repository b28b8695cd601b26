"""Writes the seed inputs of the fuzzers (test/fuzz/run.sh).

usage: make_seeds.py --root TCC_SOURCE --out DIR [--suite DIR]...

DIR/onnx-text  every model of the lit tests' .onnxtxt files, one per
               `#--- name` section (or the whole file)
DIR/onnx       the same models in binary form, the models test/Frontends/
               Onnx/Inputs/make_model.py writes, and the bundled models
DIR/tensor     the bundled models' tensor files, and .npy/.pb files of
               every dtype

With --suite (a folder of ONNX backend test cases: the pip onnx package's
backend/test/data, the node cases generated into build/onnx-backend/node,
Debian's /usr/share/libonnx-testdata/data), every model.onnx below it of
at most 64 KiB is a binary seed and, printed in the text syntax, a text
seed; its test data files are tensor seeds.
"""
import argparse
import glob
import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np
import onnx
import onnx.parser
from onnx import numpy_helper


def write(folder, data):
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def text_models(root):
    for path in sorted(glob.glob(os.path.join(root, "test", "**", "*.onnxtxt"), recursive=True)):
        if os.sep + "fuzz" + os.sep in path:
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        parts = text.split("\n#--- ")
        yield from (parts[1:] if len(parts) > 1 else parts)


def suite_seeds(suite, text_dir, bin_dir, tensor_dir, limit=65536):
    import onnx.printer
    for path in sorted(glob.glob(os.path.join(suite, "**", "model.onnx"), recursive=True)):
        if os.path.getsize(path) > limit:
            continue
        data = open(path, "rb").read()
        write(bin_dir, data)
        try:
            write(text_dir, onnx.printer.to_text(onnx.load_from_string(data)))
        except Exception:
            pass  # a model the printer cannot write is a binary seed only
        for pb in glob.glob(os.path.join(os.path.dirname(path), "test_data_set_0", "*.pb")):
            if os.path.getsize(pb) <= limit:
                write(tensor_dir, open(pb, "rb").read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--suite", action="append", default=[],
                    help="a folder of ONNX backend test cases (repeatable)")
    args = ap.parse_args()
    text_dir, bin_dir, tensor_dir = (os.path.join(args.out, k) for k in ("onnx-text", "onnx", "tensor"))
    for d in (text_dir, bin_dir, tensor_dir):
        os.makedirs(d, exist_ok=True)

    for text in text_models(args.root):
        # The section's first line is its file name.
        body = text.split("\n", 1)[1] if not text.lstrip().startswith(("#", "<")) else text
        write(text_dir, body)
        try:
            write(bin_dir, onnx.parser.parse_model(body).SerializeToString())
        except Exception:
            pass  # error tests: not every model parses

    spec = importlib.util.spec_from_file_location(
        "make_model", os.path.join(args.root, "test", "Frontends", "Onnx", "Inputs", "make_model.py"))
    make_model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_model)
    with tempfile.TemporaryDirectory() as tmp:
        for kind, make in sorted(make_model.KINDS.items()):
            try:
                write(bin_dir, make(os.path.join(tmp, kind + ".onnx")).SerializeToString())
            except Exception as e:
                print(f"make_seeds.py: skipping {kind}: {e}", file=sys.stderr)
    for path in glob.glob(os.path.join(args.root, "models", "*", "model.onnx")):
        if os.path.getsize(path) <= 65536:
            write(bin_dir, open(path, "rb").read())

    for path in glob.glob(os.path.join(args.root, "models", "*", "test_data_set_*", "*.pb")):
        if os.path.getsize(path) <= 65536:
            write(tensor_dir, open(path, "rb").read())
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16,
                  np.int32, np.uint32, np.int64, np.uint64, np.bool_):
        for shape in ((), (0,), (3,), (2, 3)):
            a = (rng.random(shape) * 100).astype(dtype)
            with tempfile.NamedTemporaryFile(suffix=".npy") as f:
                np.save(f.name, a)
                write(tensor_dir, open(f.name, "rb").read())
            write(tensor_dir, numpy_helper.from_array(a, "x").SerializeToString())
    for suite in args.suite:
        suite_seeds(suite, text_dir, bin_dir, tensor_dir)
    print(f"make_seeds.py: {len(os.listdir(text_dir))} text models, {len(os.listdir(bin_dir))} binary "
          f"models, {len(os.listdir(tensor_dir))} tensor files", file=sys.stderr)


if __name__ == "__main__":
    main()
