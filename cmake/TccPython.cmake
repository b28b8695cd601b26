# The Python of the project's environment (TCC_PYTHON) and what extension
# modules for it need: its headers, extension suffix and pybind11. Sets
# TCC_PY_FOUND, TCC_PY_INCLUDE, TCC_PY_SUFFIX and TCC_PYBIND11_INCLUDE for
# the runtime's and the compiler's bindings, and TCC_PYTHON_PACKAGE_DIR,
# where the `tcc` package is assembled (<build>/python/tcc).
#
# The interpreter is asked rather than found with find_package(Python3
# Development), which would change the Python3_EXECUTABLE the rest of the
# build uses.
if(NOT TCC_PYTHON)
  find_package(Python3 COMPONENTS Interpreter)
  set(TCC_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH
      "Python of the project's virtual environment (torch, onnx, numpy)")
endif()
execute_process(
  COMMAND ${TCC_PYTHON} -c "import sysconfig, pybind11; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX')); print(pybind11.get_include())"
  OUTPUT_VARIABLE tcc_py_info RESULT_VARIABLE tcc_py_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(TCC_PY_FOUND OFF)
if(tcc_py_rc EQUAL 0)
  string(REPLACE "\n" ";" tcc_py_info "${tcc_py_info}")
  list(GET tcc_py_info 0 TCC_PY_INCLUDE)
  list(GET tcc_py_info 1 TCC_PY_SUFFIX)
  list(GET tcc_py_info 2 TCC_PYBIND11_INCLUDE)
  if(EXISTS "${TCC_PY_INCLUDE}/Python.h")
    set(TCC_PY_FOUND ON)
  endif()
endif()
if(NOT TCC_PY_FOUND)
  message(WARNING "The tcc Python package is not built: ${TCC_PYTHON} lacks "
          "pybind11 or the Python headers (tools/dev.sh setup installs both)")
endif()
set(TCC_PYTHON_PACKAGE_DIR ${CMAKE_BINARY_DIR}/python)

# A pybind11 module `tcc.<name>` in the package. With PRIVATE, only its
# init function leaves it (a version script), so what it links inside
# stays its own (the runtime's module: no clash with a libtccrt.so in the
# same process). Without, it exports what it defines: a module over
# libMLIR.so must, since MLIR's TypeIDs of templates are statics that
# libMLIR and the module share only through the dynamic linker.
function(tcc_add_python_module target name)
  cmake_parse_arguments(arg "PRIVATE" "" "" ${ARGN})
  add_library(${target} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_include_directories(${target} SYSTEM PRIVATE
    ${TCC_PY_INCLUDE} ${TCC_PYBIND11_INCLUDE})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${name} PREFIX "" SUFFIX "${TCC_PY_SUFFIX}"
    LIBRARY_OUTPUT_DIRECTORY ${TCC_PYTHON_PACKAGE_DIR}/tcc)
  if(arg_PRIVATE)
    set_target_properties(${target} PROPERTIES
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    set(map ${CMAKE_CURRENT_BINARY_DIR}/${name}.map)
    file(WRITE ${map} "{ global: PyInit_${name}; local: *; };\n")
    target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
  endif()
endfunction()
