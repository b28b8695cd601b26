"""The Python binding against the hand-written fake artifact (sum = a + b
over float32 (2, 3)): loading, calling, every argument error, threads and
the allocator's statistics."""

import gc
import os
import threading

import numpy as np
import pytest

import tcc


@pytest.fixture(scope="module")
def model(fake_artifact):
    return tcc.load(fake_artifact, num_threads=2)


def iota(first, step=1.0):
    return (first + step * np.arange(6, dtype=np.float32)).reshape(2, 3)


def test_load_describes_the_model(model, fake_artifact):
    assert model.name == "fake_add"
    assert model.target == "x86_64-fake"
    assert model.version == "0.0.0-fake"
    assert model.workspace_bytes == 24
    assert model.path == fake_artifact
    assert model.num_threads == 2
    assert [i.name for i in model.inputs] == ["a", "b"]
    assert model.inputs[0].dtype == np.float32
    assert model.inputs[0].shape == (2, 3)
    assert repr(model.outputs[0]) == (
        "TensorInfo(name='sum', dtype=float32, shape=(2, 3))"
    )
    assert repr(model) == (
        f"<tcc.Model 'fake_add' from '{fake_artifact}': "
        "2 inputs (a, b), 1 output (sum)>"
    )


def test_call_returns_a_list_of_arrays(model):
    outs = model(iota(1), iota(100, 10))
    assert isinstance(outs, list) and len(outs) == 1
    assert outs[0].dtype == np.float32 and outs[0].shape == (2, 3)
    np.testing.assert_array_equal(outs[0], iota(101, 11))
    outs[0][0, 0] = 7  # the caller's to keep and change
    again = model(iota(1), iota(100, 10))[0]
    assert again[0, 0] == 101


def test_inputs_by_name(model):
    np.testing.assert_array_equal(model(b=iota(1), a=iota(2))[0], iota(3, 2))
    np.testing.assert_array_equal(model(iota(1), b=iota(2))[0], iota(3, 2))


def test_lists_and_odd_layouts_are_accepted(model):
    rows = [[1, 2, 3], [4, 5, 6]]  # no dtype of its own: converted
    np.testing.assert_array_equal(model(rows, rows)[0], 2 * np.array(rows))
    transposed = np.ascontiguousarray(iota(0).T).T  # Fortran order
    strided = np.zeros((2, 6), np.float32)[:, ::2]
    strided[:] = iota(5)
    np.testing.assert_array_equal(model(transposed, strided)[0], iota(5, 2))
    # Misaligned data is copied through aligned memory by the runtime.
    raw = np.zeros(7, np.float32)
    raw[1:] = np.arange(6)
    misaligned = np.frombuffer(raw, np.float32, 6, offset=4).reshape(2, 3)
    readonly = iota(1)
    readonly.flags.writeable = False
    np.testing.assert_array_equal(model(misaligned, readonly)[0], iota(1, 2))


def test_wrong_counts_are_type_errors(model):
    with pytest.raises(TypeError, match=r"^model 'fake_add' takes 2 inputs "
                       r"\(a, b\), got 1$"):
        model(iota(0))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        model(iota(0), iota(0), iota(0))
    with pytest.raises(TypeError, match="has no input named 'c'; its inputs "
                       "are a, b"):
        model(iota(0), c=iota(0))
    with pytest.raises(TypeError, match="input 0 'a' given twice"):
        model(iota(0), a=iota(0))
    with pytest.raises(TypeError, match="input 1 'b' is missing"):
        model(a=iota(0))


def test_wrong_dtypes_are_type_errors(model):
    with pytest.raises(TypeError, match=r"^model 'fake_add': input 1 'b' "
                       r"expects float32 of shape \(2, 3\), got float64 of "
                       r"shape \(2, 3\)$"):
        model(iota(0), iota(0).astype(np.float64))
    with pytest.raises(TypeError, match="expects float32 of shape \\(2, 3\\), "
                       "got int32"):
        model(iota(0).astype(np.int32), iota(0))
    with pytest.raises(TypeError, match="got a str that NumPy cannot convert"):
        model(iota(0), "text")


def test_wrong_shapes_are_value_errors(model):
    with pytest.raises(ValueError, match=r"^model 'fake_add': input 0 'a' "
                       r"expects float32 of shape \(2, 3\), got float32 of "
                       r"shape \(3, 2\)$"):
        model(iota(0).T, iota(0))
    with pytest.raises(ValueError, match=r"got float32 of shape \(6,\)"):
        model(iota(0), iota(0).ravel())
    with pytest.raises(ValueError, match=r"got float32 of shape \(2,\)"):
        model([1, 2], iota(0))  # a list converts, then its shape is wrong


def test_run_into_given_outputs(model):
    out = np.full((2, 3), -1, np.float32)
    result = model.run([iota(1), iota(2)], [out])
    assert result[0] is out
    np.testing.assert_array_equal(out, iota(3, 2))
    np.testing.assert_array_equal(model.run([iota(1), iota(2)])[0], out)


def test_given_outputs_must_fit_exactly(model):
    ins = [iota(0), iota(0)]
    with pytest.raises(TypeError, match="has 1 output \\(sum\\), got 2 "
                       "output arrays"):
        model.run(ins, [np.zeros((2, 3), np.float32)] * 2)
    with pytest.raises(TypeError, match="output 0 'sum' expects float32 of "
                       "shape \\(2, 3\\), got float64"):
        model.run(ins, [np.zeros((2, 3))])
    with pytest.raises(ValueError, match="got float32 of shape \\(3, 2\\)"):
        model.run(ins, [np.zeros((3, 2), np.float32)])
    with pytest.raises(ValueError, match="must be C-contiguous"):
        model.run(ins, [np.zeros((3, 2), np.float32).T])
    readonly = np.zeros((2, 3), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="is read-only"):
        model.run(ins, [readonly])
    with pytest.raises(TypeError, match="must be a numpy.ndarray, got list"):
        model.run(ins, [[0] * 6])


def test_load_errors(tmp_path, fake_artifact):
    with pytest.raises(FileNotFoundError, match="nope.so"):
        tcc.load(str(tmp_path / "nope.so"))
    not_an_artifact = tmp_path / "empty.so"
    not_an_artifact.write_bytes(b"")
    with pytest.raises(tcc.Error, match="cannot load artifact") as e:
        tcc.load(str(not_an_artifact))
    assert e.value.code == "INVALID_ARGUMENT"
    assert isinstance(e.value, RuntimeError)
    abi99 = fake_artifact.replace("tcc_fake_artifact", "tcc_fake_artifact_abi99")
    with pytest.raises(tcc.Error, match="ABI version 99") as e:
        tcc.load(abi99)
    assert e.value.code == "FAILED_PRECONDITION"
    with pytest.raises(ValueError, match="num_threads must be >= 0"):
        tcc.load(fake_artifact, num_threads=-1)


def test_truncated_artifacts_are_errors(tmp_path, fake_artifact):
    # Never a SIGBUS from dlopen mapping what the file lacks.
    data = open(fake_artifact, "rb").read()
    cut = tmp_path / "cut.so"
    for length in range(0, len(data), 997):
        cut.write_bytes(data[:length])
        with pytest.raises(tcc.Error, match="cannot load artifact"):
            tcc.load(str(cut))
    with pytest.raises(tcc.Error, match="not a regular file"):
        tcc.load(str(tmp_path))


def test_a_failing_run_is_a_tcc_error(fake_artifact):
    failing = tcc.load(
        fake_artifact.replace("tcc_fake_artifact", "tcc_fake_artifact_fails"))
    with pytest.raises(tcc.Error, match="run failed with code 7") as e:
        failing(iota(0), iota(0))
    assert e.value.code == "INTERNAL"


def test_eight_threads_call_one_model(model):
    errors = []

    def work(t):
        try:
            a, b = iota(t), iota(1000 * t, t)
            for _ in range(200):
                np.testing.assert_array_equal(model(a, b)[0], a + b)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_memory_statistics(model):
    gc.collect()
    before = tcc.memory_stats()
    outs = [model(iota(0), iota(0))[0] for _ in range(10)]
    after = tcc.memory_stats()
    assert after["num_allocs"] >= before["num_allocs"] + 10
    assert (after["allocated_bytes.all.current"]
            >= before["allocated_bytes.all.current"] + 10 * 512)
    assert after["requested_bytes.small_pool.current"] >= 10 * 24
    assert 0 <= after["fragmentation"] < 1
    for key in ("reserved_bytes.all.peak", "segments.large_pool.current",
                "active_blocks.all.freed", "num_cache_hits", "num_ooms",
                "num_device_allocs", "cached_bytes", "memory_limit"):
        assert key in after
    summary = tcc.memory_summary()
    assert "tcc caching allocator summary: host" in summary
    assert "| Allocated memory      |" in summary
    del outs
    gc.collect()
    tcc.empty_cache()
    tcc.reset_peak_memory_stats()
    now = tcc.memory_stats()
    assert now["reserved_bytes.all.current"] <= after["reserved_bytes.all.current"]
    assert now["allocated_bytes.all.peak"] == now["allocated_bytes.all.current"]


def test_memory_limit_is_a_clear_error(model):
    stats = tcc.memory_stats()
    tcc.set_memory_limit(stats["reserved_bytes.all.current"] + 1)
    held = []
    try:
        with pytest.raises(tcc.Error, match="out of memory: cannot allocate "
                           ".*memory limit") as e:
            for _ in range(20000):  # fills the cached segments, then fails
                held.append(model(iota(0), iota(0)))
        assert e.value.code == "RESOURCE_EXHAUSTED"
    finally:
        tcc.set_memory_limit(0)
    assert tcc.memory_stats()["num_ooms"] >= 1
    del held
    assert model(iota(0), iota(0))  # fine again


def test_docstrings():
    assert "tcc.load" in tcc.__doc__
    for obj in (tcc.load, tcc.Model, tcc.Model.__call__, tcc.Model.run,
                tcc.Model.inputs, tcc.TensorInfo, tcc.memory_stats,
                tcc.memory_summary, tcc.empty_cache, tcc.set_memory_limit,
                tcc.reset_peak_memory_stats, tcc.Error):
        assert obj.__doc__ and len(obj.__doc__) > 30, obj


def test_the_module_exports_only_its_init():
    so = tcc._tcc.__file__
    with open(so, "rb") as f:
        data = f.read()
    assert b"PyInit__tcc" in data
    if os.path.exists("/usr/bin/nm"):
        import subprocess
        exported = subprocess.run(
            ["nm", "-D", "--defined-only", so], capture_output=True, text=True,
            check=True).stdout
        assert "tcc_model_load" not in exported


class _DLPack:
    """What np.from_dlpack takes: an object with __dlpack__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def test_run_cached_hands_out_allocator_memory_through_dlpack(model):
    # What tcc.torch calls: inputs by address, outputs from the caching
    # allocator as DLPack capsules; a consumer's deleter gives them back.
    a, b = iota(1), iota(100, 10)
    gc.collect()
    before = tcc.memory_stats()["allocated_bytes.all.current"]
    capsules = model._run_cached([a.ctypes.data, b.ctypes.data])
    assert len(capsules) == 1
    out = np.from_dlpack(_DLPack(capsules[0]))
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, iota(101, 11))
    assert tcc.memory_stats()["allocated_bytes.all.current"] > before
    del out, capsules
    gc.collect()
    assert tcc.memory_stats()["allocated_bytes.all.current"] == before
    # A capsule nobody consumed is freed with it.
    model._run_cached([a.ctypes.data, b.ctypes.data])
    gc.collect()
    assert tcc.memory_stats()["allocated_bytes.all.current"] == before
    with pytest.raises(TypeError, match="takes 2 inputs"):
        model._run_cached([a.ctypes.data])


class _Strided:
    """What _run_args reads of a tensor: is_contiguous, contiguous,
    data_ptr (here over NumPy arrays)."""

    def __init__(self, array):
        self.array = array

    def is_contiguous(self):
        return self.array.flags.c_contiguous

    def contiguous(self):
        return _Strided(np.ascontiguousarray(self.array))

    def data_ptr(self):
        return self.array.ctypes.data


def test_run_args_reads_the_tensors_it_is_pointed_at(model):
    # tcc.torch's call: the model's inputs are some items of the argument
    # list; one not contiguous runs as a contiguous copy; `convert` makes
    # the results.
    a, b = iota(1), iota(100, 10)
    strided = np.ascontiguousarray(b.T).T  # b's values, column-major
    assert not strided.flags.c_contiguous
    args = [None, _Strided(a), "x", _Strided(strided)]
    outs = model._run_args(args, (1, 3), lambda c: np.from_dlpack(_DLPack(c)))
    assert isinstance(outs, tuple) and len(outs) == 1
    np.testing.assert_array_equal(outs[0], iota(101, 11))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        model._run_args(args, (1,), None)
    with pytest.raises(AttributeError):
        model._run_args(args, (1, 2), None)  # a str has no is_contiguous


def test_run_cached_gives_the_outputs_back_when_the_run_fails(fake_artifact):
    failing = tcc.load(
        fake_artifact.replace("tcc_fake_artifact", "tcc_fake_artifact_fails"))
    a = iota(0)
    with pytest.raises(tcc.Error):  # makes (and keeps) the call's context
        failing(a, a)
    gc.collect()
    before = tcc.memory_stats()["allocated_bytes.all.current"]
    with pytest.raises(tcc.Error, match="run failed with code 7"):
        failing._run_cached([a.ctypes.data, a.ctypes.data])
    gc.collect()
    assert tcc.memory_stats()["allocated_bytes.all.current"] == before


def test_idle_spin_is_an_option_of_load(fake_artifact):
    # The workers' sleeping itself is tested in C++ (ContextIdleSpin).
    for spin in (-1, 0, 500):
        m = tcc.load(fake_artifact, num_threads=2, idle_spin_us=spin)
        np.testing.assert_array_equal(m(iota(1), iota(2))[0], iota(3, 2))


_OPENMP_RUN = """
import ctypes, ctypes.util, sys
import numpy as np
import tcc
if sys.argv[2] == "with":
    ctypes.CDLL(ctypes.util.find_library("gomp"), mode=ctypes.RTLD_GLOBAL)
try:
    m = tcc.load(sys.argv[1], num_threads=2, threads_from="openmp")
except ValueError as e:
    print("ValueError:", e)
    sys.exit(0)
a = np.arange(6, dtype=np.float32).reshape(2, 3)
for _ in range(3):  # every call on OpenMP's team, the same result
    np.testing.assert_array_equal(m(a, a)[0], 2 * a)
print("ok")
"""


def test_threads_from_openmp(fake_artifact):
    """threads_from="openmp" runs the loops on the OpenMP runtime already in
    the process (PyTorch's, in the torch backend; here the system's
    libgomp, loaded the way torch loads its own); without one loaded it is
    a ValueError, as is an unknown pool."""
    import ctypes.util
    import subprocess
    import sys
    if not ctypes.util.find_library("gomp"):
        pytest.skip("no libgomp on this machine to stand in for torch's")
    with_omp = subprocess.run(
        [sys.executable, "-c", _OPENMP_RUN, fake_artifact, "with"],
        capture_output=True, text=True, timeout=60)
    assert with_omp.stdout.strip() == "ok", with_omp.stderr
    # A team smaller than asked for (the runtime may give one) still runs
    # every part of each loop.
    one = subprocess.run(
        [sys.executable, "-c", _OPENMP_RUN, fake_artifact, "with"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    assert one.stdout.strip() == "ok", one.stderr
    without = subprocess.run(
        [sys.executable, "-c", _OPENMP_RUN, fake_artifact, "without"],
        capture_output=True, text=True, timeout=60)
    assert "no OpenMP runtime is loaded" in without.stdout, without.stderr
    with pytest.raises(ValueError, match="threads_from must be"):
        tcc.load(fake_artifact, threads_from="tbb")


_CUDA_STATS = """
import sys
import tcc
try:
    tcc.memory_stats(device="cuda")
except FileNotFoundError as e:
    print("no cuda:", e)
"""


def test_cuda_memory_statistics():
    # Without a driver: FileNotFoundError saying so; with the test double of
    # the driver (test/unit/runtime/fake_cuda.c): the statistics of the
    # allocator CUDA artifacts run on, as torch.cuda.memory_stats() keys.
    # Each case in its own process: the CUDA allocator lives as long as it.
    import subprocess
    import sys
    missing = subprocess.run(
        [sys.executable, "-c", _CUDA_STATS], capture_output=True, text=True,
        timeout=60,
        env={**os.environ, "TCC_CUDA_DRIVER": "/nonexistent/libcuda.so.1"})
    assert "no cuda: CUDA is not available" in missing.stdout, missing.stderr
    fake = os.environ.get("TCC_FAKE_CUDA")
    if not fake:
        pytest.skip("TCC_FAKE_CUDA (the fake driver library) is not set")
    script = ("import tcc; s = tcc.memory_stats(device='cuda'); "
              "print(s['num_allocs'], 'reserved_bytes.all.current' in s); "
              "tcc.empty_cache('cuda:0'); tcc.reset_peak_memory_stats('cuda')")
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True,
        timeout=60, env={**os.environ, "TCC_CUDA_DRIVER": fake})
    assert found.stdout.split() == ["0", "True"], found.stderr
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        tcc.memory_stats(device="tpu")


_CUDA_RUN = """
import sys
import numpy as np
import tcc


class CudaArray:
    # A CUDA array as frameworks describe one; under the fake driver
    # (test/unit/runtime/fake_cuda.c) device memory is host memory.
    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {
            "shape": a.shape, "typestr": a.dtype.str,
            "data": (a.ctypes.data, False), "strides": None, "version": 3}


m = tcc.load(sys.argv[1])
x = CudaArray(np.ones((4, 16), np.float32))
w = CudaArray(np.full((16, 8), 0.5, np.float32))
y = CudaArray(np.full((4, 8), -1.0, np.float32))
out = m.run([x, w], [y])
print("ran", out[0] is y)
try:
    m(x, w)
except TypeError as e:
    print("no outputs:", e)
try:
    m.run([x, CudaArray(np.ones((8, 16), np.float32))], [y])
except ValueError as e:
    print("wrong shape:", e)
"""


def test_cuda_arrays_run_on_the_device(tmp_path):
    # A CUDA artifact called with CUDA arrays runs on them through
    # tcc_context_run_device (copies on the device only), under the test
    # double of the driver and cuBLAS.
    import subprocess
    import sys
    fake = os.environ.get("TCC_FAKE_CUDA")
    bin_dir = os.environ.get("TCC_BIN_DIR")
    if not fake or not bin_dir:
        pytest.skip("TCC_FAKE_CUDA and TCC_BIN_DIR are set by ctest")
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "..", "Target", "Inputs", "linear.mlir")
    so = tmp_path / "linear.so"
    subprocess.run([os.path.join(bin_dir, "tcc"), source, "--target=cuda",
                    "-o", str(so)], check=True, timeout=300)
    log = tmp_path / "log"
    r = subprocess.run(
        [sys.executable, "-c", _CUDA_RUN, str(so)], capture_output=True,
        text=True, timeout=60,
        env={**os.environ, "TCC_CUDA_DRIVER": fake, "TCC_CUBLAS": fake,
             "TCC_FAKE_CUDA_LOG": str(log)})
    assert "ran True" in r.stdout, r.stdout + r.stderr
    assert "need their outputs given" in r.stdout, r.stdout
    assert ("wrong shape: model 'linear': input 1 'w' must be a dense CUDA "
            "array of float32 "
            "of shape (16, 8), got float32 of shape (8, 16)") in r.stdout, r.stdout
    calls = log.read_text()
    assert "copy on device: 256 bytes" in calls, calls
    assert "copy on device: 128 bytes" in calls, calls
    assert "copy to device: 256" not in calls, calls
