#!/usr/bin/env bash
# Builds the Debian packages with CPack and inspects them: tcc-runtime holds
# the runtime, tcc-run, the headers and the CMake and pkg-config files and
# depends on nothing of LLVM/MLIR; tcc holds the compiler and depends on
# tcc-runtime of its version and on Debian's LLVM/MLIR 19.
#   test/install/deb.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tcc-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work" > "$work/cpack.log")
version=$("$build/bin/tcc" --version | awk '{print $2}')
runtime=$work/tcc-runtime_${version}_amd64.deb
compiler=$work/tcc_${version}_amd64.deb
for deb in "$runtime" "$compiler"; do
  [ -f "$deb" ] || { echo "FAIL: no $deb"; ls "$work"; exit 1; }
done
has() { dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "$2" ||
  { echo "FAIL: $(basename "$1") lacks $2"; exit 1; }; }
for f in ./usr/lib/libtccrt.so.$version ./usr/lib/libtccrt_static.a \
    ./usr/bin/tcc-run ./usr/include/tcc/runtime.h ./usr/include/tcc/runtime.hpp \
    ./usr/lib/cmake/tcc/tccConfig.cmake ./usr/lib/cmake/tcc/tccTargets.cmake \
    ./usr/lib/pkgconfig/tccrt.pc; do
  has "$runtime" "$f"
done
for f in ./usr/bin/tcc ./usr/bin/tcc-opt ./usr/lib/tcc/tcc_ukernels_generic.o \
    ./usr/lib/tcc/tcc_ukernels_avx512.o ./usr/lib/tcc/libtccrt_main.a \
    ./usr/lib/libtcc_tracer.so.$version ./usr/include/tcc/tracer.h \
    ./usr/lib/cmake/tcc/tccTracerTargets.cmake ./usr/lib/tcc/python/tcc/__init__.py; do
  has "$compiler" "$f"
done
deps=$(dpkg-deb -f "$runtime" Depends)
if echo "$deps" | grep -qi "llvm\|mlir\|onnx\|protobuf"; then
  echo "FAIL: tcc-runtime depends on $deps"; exit 1
fi
deps=$(dpkg-deb -f "$compiler" Depends)
for d in "tcc-runtime (= $version)" libllvm19 libmlir-19 libonnx1 libprotobuf32; do
  echo "$deps" | grep -qF "$d" || { echo "FAIL: tcc does not depend on $d: $deps"; exit 1; }
done
# pkg-config's file names the package's prefix.
dpkg-deb --fsys-tarfile "$runtime" | tar -xO ./usr/lib/pkgconfig/tccrt.pc |
  grep -qx "prefix=/usr" || { echo "FAIL: tccrt.pc's prefix is not /usr"; exit 1; }
echo "deb: ok ($(basename "$runtime"), $(basename "$compiler"))"
dpkg-deb -f "$compiler" Package Version Depends
