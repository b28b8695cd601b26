"""The package as users meet it: tcc.compile in process, the on-disk cache
of compiled graphs across processes, and the backend found by name once
the package is installed with pip."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import onnx
from onnx import TensorProto, helper, numpy_helper

import tcc


def small_onnx():
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4),
                                "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])], [w])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 13)])


def test_compile_a_model_proto_and_a_file(tmp_path):
    proto = small_onnx()
    x = np.ones((2, 3), np.float32)
    expected = x @ np.arange(12, dtype=np.float32).reshape(3, 4)
    (y,) = tcc.compile(proto)(x)
    np.testing.assert_allclose(y, expected)
    path = tmp_path / "m.onnx"
    onnx.save(proto, str(path))
    model = tcc.compile(str(path), output=str(tmp_path / "m.so"), threads=1)
    np.testing.assert_allclose(model(x)[0], expected)
    assert (tmp_path / "m.so").exists() and (tmp_path / "m.h").exists()


def test_compile_errors_are_compile_error(tmp_path):
    bad = tmp_path / "bad.onnxtxt"
    bad.write_text('<ir_version: 8, opset_import: ["" : 13]>\n'
                   "g (float[2, 3] A, float[4] B) => (float[2, 3] Y) {\n"
                   "  Y = Add(A, B)\n}\n")
    with pytest.raises(tcc.CompileError) as e:
        tcc.compile(str(bad))
    assert "node 'Add_1' (Add, opset 13): shapes 2x3, 4 do not broadcast" \
        in str(e.value)
    with pytest.raises(tcc.CompileError) as e:
        tcc.compile(str(tmp_path / "missing.onnx"))
    assert "missing.onnx: cannot read the model: No such file or directory" \
        in str(e.value)


SCRIPT = textwrap.dedent("""
    import sys, torch, tcc.torch
    torch.manual_seed(int(sys.argv[1]))  # the weights
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).eval()
    c = torch.compile(m, backend="tcc", dynamic=False)
    x = torch.randn(4, 64)
    with torch.no_grad():
        y = c(x)
    assert torch.allclose(y, m(x), rtol=1e-4, atol=1e-5)
    s = tcc.torch.stats
    print(s.imports, s.compiled, s.cache_hits)
""")


def test_second_process_loads_from_the_cache(tmp_path):
    env = dict(os.environ, TCC_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", SCRIPT, seed], env=env,
                           capture_output=True, text=True)
            for seed in ("0", "0", "1")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    # imports, compiled, loaded. The first process imports the inference
    # graph twice: every input an input (what tcc can compile), then with
    # the weights as constants, and compiles it.
    assert runs[0].stdout.split() == ["2", "1", "0"]
    # The second finds the artifact and its signature by the first import
    # and the weights' bytes: no import with the weights, no compile.
    assert runs[1].stdout.split() == ["1", "0", "1"]
    # Other weights: another artifact.
    assert runs[2].stdout.split() == ["2", "1", "0"]
    assert len(list((tmp_path / "cache").glob("*.so"))) == 2
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2
    # A signature that cannot be read: imported again, the artifact reused
    # and the signature written anew.
    for sig in (tmp_path / "cache").glob("*.json"):
        sig.write_text("{not json")
    r = subprocess.run([sys.executable, "-c", SCRIPT, "0"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "0", "1"]
    r = subprocess.run([sys.executable, "-c", SCRIPT, "0"], env=env,
                       capture_output=True, text=True)
    assert r.stdout.split() == ["1", "0", "1"]


def test_backend_by_name_once_installed_with_pip(tmp_path):
    # pip installs the package (with its entry point) into a folder of its
    # own; torch then finds "tcc" there, not through the build's metadata.
    package = os.path.dirname(os.path.dirname(tcc.__file__))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--no-deps", "--no-build-isolation", "--target",
                        str(target), package], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert list(target.glob("tcc-*.dist-info/entry_points.txt"))
    check = ("import tcc, torch\n"
             "assert tcc.__file__.startswith(%r), tcc.__file__\n"
             "m = torch.compile(torch.nn.Linear(4, 2).eval(), backend='tcc',"
             " dynamic=False)\n"
             "with torch.no_grad():\n"
             "    print(m(torch.ones(1, 4)).shape)\n" % str(target))
    env = dict(os.environ, PYTHONPATH=str(target),
               TCC_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", check], env=env,
                       capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "torch.Size([1, 2])" in r.stdout


CONSTANT_SCRIPT = textwrap.dedent("""
    import sys, torch, tcc.torch
    scale = float(sys.argv[1])
    values = [scale * k for k in range(4096)]
    f = lambda x: x + torch.tensor(values)
    x = torch.randn(4096)
    got = torch.compile(f, backend="tcc", options={"fallback": False})(x)
    torch.testing.assert_close(got, f(x), rtol=0, atol=0)
    print(tcc.torch.stats.compiled, tcc.torch.stats.cache_hits)
""")


def test_graph_constants_key_the_cache(tmp_path):
    # Two processes compile graphs that differ only in the bytes of a
    # tensor literal (large enough for the graph's text to leave them out):
    # the second must not load the first one's artifact.
    env = dict(os.environ, TCC_CACHE_DIR=str(tmp_path / "cache"))
    for scale in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", CONSTANT_SCRIPT, scale],
                           env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["1", "0"]  # compiled, not loaded


def test_graph_loop(tmp_path):
    # Graph.loop builds a tcc.loop: a trip count, a condition the body
    # recomputes, carried values; the body may read values from outside.
    g = tcc.Graph("loop")
    x = g.add_input("x", "float32", [3])
    step = g.constant(np.array([1.0, 2.0, 3.0], dtype=np.float32), "float32")
    limit = g.constant(np.array(40.0, dtype=np.float32), "float32")

    def body(i, c, acc, count):
        nxt, = g.op("tcc.add", [acc, step])
        total, = g.op("tcc.reduce_sum", [nxt], {"axes": [0]})
        go, = g.op("tcc.cmp", [total, limit], {"predicate": "2 : i32"})
        more, = g.op("tcc.add", [count, g.constant(np.array(1), "int64")])
        return [go, nxt, more]

    trips = g.constant(np.array(100), "int64")
    go = g.constant(np.array(True), "bool")
    acc, count = g.loop(trips, go, [x, g.constant(np.array(0), "int64")],
                        body)
    g.set_outputs([acc, count], ["acc", "count"])
    g.compile(str(tmp_path / "loop.so"))
    m = tcc.load(str(tmp_path / "loop.so"))
    # Each iteration adds 6 to the sum: from 0 the sum passes 40 after 7.
    acc, count = m(np.zeros(3, dtype=np.float32))
    np.testing.assert_array_equal(acc, 7 * np.array([1, 2, 3], np.float32))
    assert int(count) == 7


def test_graph_loop_errors():
    g = tcc.Graph("bad_loop")
    x = g.add_input("x", "float32", [3])
    trips = g.constant(np.array(2), "int64")
    go = g.constant(np.array(True), "bool")
    with pytest.raises(ValueError, match="gives 1 values"):
        g.loop(trips, go, [x], lambda i, c, a: [c])
    with pytest.raises(ValueError, match="changes type"):
        g.loop(trips, go, [x], lambda i, c, a: [c, i])
    with pytest.raises(ZeroDivisionError):
        g.loop(trips, go, [x], lambda i, c, a: [c, a, 1 / 0])
    # A failed body leaves no loop behind: the graph still compiles.
    y, = g.op("tcc.relu", [x])
    g.set_outputs([y], ["y"])
    assert "tcc.loop" not in g.mlir()
