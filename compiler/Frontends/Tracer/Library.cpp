// Library.cpp - the one source of libtcc_tracer.so, which is the TccTracer
// library whole (see CMakeLists.txt); the header is what it exports.
#include "tcc/tracer.h"
