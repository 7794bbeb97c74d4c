# cmake -P cmake/autotune_build.cmake: writes the translation unit that holds what the autotune
# cache key takes from the build (csrc/runtime/autotune/build_info.h): each kernel variant's
# source hash, the compiler and flags, torch's version. Run by the build (CMakeLists.txt) after
# codegen; the generator only forwards what the manifest declares, it never reads csrc/.
#
#   -DVARIANTS=<generated>/variant_sources.cmake  one kernel_variant() call per kernel variant
#   -DCSRC=<source>/csrc  -DRUNTIME_INCLUDE=<generator>/csrc/include
#   -DOUT=<build>/autotune_build.cpp  -DDEPFILE=...  -DSTAMP=...
#   -DCOMPILE_FLAGS=...  -DTORCH_VERSION=...
#
# A variant's hash is the SHA-256 of its manifest entry's hash and of every file it declares
# (`kernels: sources:`, paths under the project's csrc/, or the runtime's headers spelt as they are
# included, structgen/...; a folder stands for the files directly in it), by path and content.
# A path with a `cpu` part (ops/reduce/cpu_sum.cpp, ops/linalg/cpu_gemm.cpp, structgen/cpu/)
# counts for CPU variants only, one with a `cuda` part for CUDA variants
# only: a family folder serves both devices and an edit re-tunes only the device it touches.
# OUT is rewritten only when its text changes, so the build recompiles it only then; the depfile
# lists every hashed file and folder, so editing one of them (or adding a file to a folder) re-runs
# this script, and editing any other file does not.
cmake_minimum_required(VERSION 3.25)

foreach(var VARIANTS CSRC RUNTIME_INCLUDE OUT DEPFILE STAMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "autotune_build.cmake: -D${var}=... is missing (see the script's header)")
  endif()
endforeach()

set(_declarations "")
set(_hashed "")  # files and folders read, for the depfile

function(_c_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# The folder a declared path is under: the runtime's headers for structgen/..., else the project's.
function(_source_base out entry)
  if(entry MATCHES "^structgen(/|$)")
    set(${out} "${RUNTIME_INCLUDE}" PARENT_SCOPE)
  else()
    set(${out} "${CSRC}" PARENT_SCOPE)
  endif()
endfunction()

# kernel_variant(<symbol> <CPU|CUDA> <manifest hash> <where> [<path under csrc/> ...])
function(kernel_variant symbol device manifest_hash where)
  if(device STREQUAL "CPU")
    set(other "cuda")
  elseif(device STREQUAL "CUDA")
    set(other "cpu")
  else()
    message(FATAL_ERROR "${where}: unknown device '${device}' for ${symbol} (a codegen bug: CPU or CUDA)")
  endif()
  set(files "")
  set(read "")
  foreach(entry IN LISTS ARGN)
    _source_base(base "${entry}")
    set(path "${base}/${entry}")
    if(IS_DIRECTORY "${path}")
      file(GLOB found LIST_DIRECTORIES false RELATIVE "${base}" "${path}/*")
      list(APPEND read "${path}")
    elseif(EXISTS "${path}")
      set(found "${entry}")
    else()
      message(FATAL_ERROR "${where}: kernels.sources names '${entry}', which is not in csrc/ — "
                          "list the files or folders under csrc/ that the ${device} variants' code is in, "
                          "or the runtime's headers they include (e.g. ops/reduce, structgen/cpu/reduce.h)")
    endif()
    foreach(rel IN LISTS found)
      if(NOT "/${rel}" MATCHES "/${other}([._/]|$)")  # the other device's file
        list(APPEND files "${rel}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES files)
  list(SORT files)
  if(ARGN AND NOT files)
    message(FATAL_ERROR "${where}: kernels.sources (${ARGN}) holds no ${device} file — "
                        "name the files the ${device} variants run (cpu*/cuda* names count for one device only)")
  endif()
  set(text "${manifest_hash}\n")
  foreach(rel IN LISTS files)
    _source_base(base "${rel}")
    file(SHA256 "${base}/${rel}" file_hash)
    string(APPEND text "${rel} ${file_hash}\n")
    list(APPEND read "${base}/${rel}")
  endforeach()
  string(SHA256 hash "${text}")
  string(SUBSTRING "${hash}" 0 16 hash)
  list(JOIN files " " shown)
  set(_declarations "${_declarations}extern const char ${symbol}[] = \"${hash}\";  // ${shown}\n" PARENT_SCOPE)
  set(_hashed "${_hashed};${read}" PARENT_SCOPE)
endfunction()

include("${VARIANTS}")

_c_string(flags "${COMPILE_FLAGS}")
_c_string(torch "${TORCH_VERSION}")
set(tu "// Written by cmake/autotune_build.cmake at build time — DO NOT EDIT.
// What the autotune cache key takes from the build (csrc/runtime/autotune/build_info.h): each kernel
// variant's source hash, named by the generated choosers (src/multi_kernel_*.cpp), and the
// compiler, flags and torch the kernels were built with.
#include <runtime/autotune/build_info.h>

namespace structgen::autotune::build_info {
extern const char compile_flags[] = ${flags};
extern const char torch_version[] = ${torch};
}  // namespace structgen::autotune::build_info

namespace structgen::autotune::source_hash {
${_declarations}}  // namespace structgen::autotune::source_hash
")

# Rewritten only when the text changes: ninja then recompiles nothing.
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL tu)
  file(WRITE "${OUT}" "${tu}")
endif()

# The depfile (make syntax: a space in a path is escaped).
list(REMOVE_DUPLICATES _hashed)
set(deps "")
foreach(path IN LISTS VARIANTS _hashed)
  if(path)
    string(REPLACE " " "\\ " path "${path}")
    string(APPEND deps " \\\n  ${path}")
  endif()
endforeach()
string(REPLACE " " "\\ " target "${STAMP}")
file(WRITE "${DEPFILE}" "${target}:${deps}\n")
file(TOUCH "${STAMP}")
