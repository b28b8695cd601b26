#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it as a user would, from
# a folder outside the source and build trees: the installed tcc compiles a
# model and a standalone executable; a CMake project finds the package
# (find_package(tcc): tcc::runtime, TCC_COMPILER) and runs the model, and
# trains two steps through tcc::tracer; a C
# program builds with pkg-config's tccrt; the Python package loads the model.
# It works in a temporary folder (outside the build tree, which nothing
# installed may name), removed at the end.
#   test/install/run.sh BUILD_DIR [PYTHON]
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$1" && pwd)
python=${2:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/tcc-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > install.log
# Nothing installed may point back into the build tree.
if grep -rl --exclude='*.py' --exclude='*.pyc' "$build" "$prefix/bin" "$prefix/lib" \
    2>/dev/null | grep -v '/python/'; then
  echo "FAIL: installed files name the build tree $build"; exit 1
fi
for tool in tcc tcc-run tcc-opt; do
  if readelf -d "$prefix/bin/$tool" | grep -q "$build"; then
    echo "FAIL: $tool's run path names the build tree"; exit 1
  fi
done

version=$("$prefix/bin/tcc" --version | awk '{print $2}')
pc_version=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion tccrt)
[ "$version" = "$pc_version" ] || { echo "FAIL: tcc $version, tccrt.pc $pc_version"; exit 1; }

# The installed compiler, from here: a library and a standalone executable.
"$prefix/bin/tcc" "$src/add.onnxtxt" -o add.so
"$prefix/bin/tcc" "$src/add.onnxtxt" --emit=exe -o add_exe
[ -x add_exe ] || { echo "FAIL: no executable"; exit 1; }

# find_package(tcc) from a downstream CMake project.
cmake -S "$src/downstream" -B downstream -DCMAKE_PREFIX_PATH="$prefix" \
  -DMODEL="$src/add.onnxtxt" > downstream.log
cmake --build downstream >> downstream.log
./downstream/run_model
./downstream/train

# pkg-config for C.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c11 "$src/main.c" $(pkg-config --cflags --libs tccrt) \
  -Wl,-rpath,"$prefix/lib" -o c_run
./c_run add.so

# The Python package, as installed.
if [ -n "$python" ] && [ -d "$prefix/lib/tcc/python/tcc" ]; then
  PYTHONPATH=$prefix/lib/tcc/python "$python" - add.so "$src/add.onnxtxt" <<'PY'
import sys
import numpy as np
import tcc
a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = a + 10
# The artifact of the installed tcc, and one the installed package compiles.
for m in (tcc.load(sys.argv[1]), tcc.compile(sys.argv[2])):
    np.testing.assert_array_equal(m(a, b)[0], a * b + b)
assert "/prefix/lib/tcc/python/tcc/" in tcc.__file__, tcc.__file__
np.save("a.npy", a)
np.save("b.npy", b)
print("python: ok,", tcc.__file__)
PY
  # The standalone executable, on those inputs.
  ./add_exe a.npy b.npy | grep -qx "sum: f32\[2,3\] 10 22 36 52 70 90" ||
    { echo "FAIL: the standalone executable printed: $(./add_exe a.npy b.npy)"; exit 1; }
fi
echo "install: ok (tcc $version in $prefix)"
