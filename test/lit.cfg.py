# lit configuration for tcc: IR tests (.mlir), ONNX text models (.onnxtxt)
# and CLI tests (.test), all checked with FileCheck.
import os
import lit.formats

config.name = "tcc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "unit", "e2e", "fuzz", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tcc_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.tcc_tools_dir, config.filecheck_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%tcc_src", config.tcc_src_root))
config.substitutions.append(("%tcc_lib", os.path.join(config.tcc_obj_root, "lib")))
config.substitutions.append(("%tcc_bin", config.tcc_tools_dir))
# The test double of the CUDA driver and cuBLAS (test/unit/runtime/fake_cuda.c).
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.tcc_obj_root, "test", "unit", "libtcc_fake_cuda.so")))
