// What the cache key takes from the build, defined in the translation unit that CMake writes
// (cmake/autotune_build.cmake -> <build>/autotune_build.cpp): the compiler and flags the kernels
// were built with and torch's version. The same TU holds each kernel variant's source hash
// (structgen::autotune::source_hash::<impl>__<variant>, named by the generated choosers).
#pragma once

namespace structgen::autotune::build_info {

extern const char compile_flags[];  // "GNU 12.2.0 Release <CMAKE_CXX_FLAGS>"
extern const char torch_version[];  // "2.13.0"

}  // namespace structgen::autotune::build_info
