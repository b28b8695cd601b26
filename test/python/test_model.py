"""End to end: a real model compiled by tcc, run through the binding and
checked against the outputs PyTorch produced for it."""

import os
import subprocess

import numpy as np
import pytest

import tcc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "models", "tiny_cnn")


def load_pb(path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


@pytest.fixture(scope="module")
def tiny_cnn(tcc_bin_dir, tmp_path_factory):
    artifact = tmp_path_factory.mktemp("tiny_cnn") / "tiny_cnn.so"
    subprocess.run([os.path.join(tcc_bin_dir, "tcc"),
                    os.path.join(MODEL, "model.onnx"), "-o", str(artifact)],
                   check=True)
    return tcc.load(str(artifact))


def test_tiny_cnn_matches_pytorch(tiny_cnn):
    data = os.path.join(MODEL, "test_data_set_0")
    x = load_pb(os.path.join(data, "input_0.pb"))
    expected = load_pb(os.path.join(data, "output_0.pb"))
    assert tiny_cnn.inputs[0].shape == x.shape
    assert tiny_cnn.inputs[0].dtype == x.dtype
    (y,) = tiny_cnn(x)
    assert y.shape == expected.shape and y.dtype == expected.dtype
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-4)
    # By name, and again: the same answer.
    np.testing.assert_array_equal(tiny_cnn(**{tiny_cnn.inputs[0].name: x})[0], y)


def test_tiny_cnn_refuses_a_wrong_batch(tiny_cnn):
    shape = tiny_cnn.inputs[0].shape
    wrong = np.zeros((shape[0] + 1,) + shape[1:], np.float32)
    with pytest.raises(ValueError, match="expects float32 of shape"):
        tiny_cnn(wrong)
