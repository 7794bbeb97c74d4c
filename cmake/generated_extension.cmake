# add_generated_extension(): a project's operators, generated from its manifest and compiled with
# its hand-written sources and the runtime into one shared library that registers them with
# torch's dispatcher (docs/projects.md). Every project is built by such a call, the repository's
# own operators included.
#
#   find_package(structgen CONFIG REQUIRED)   # includes this file: finds torch (and CUDA, nvcc) once
#   add_generated_extension(<target>
#     MANIFEST native_functions.yaml       # its first entry is the project header
#     [SOURCES a.cpp ...]                  # hand-written CPU kernels and meta functions (default:
#                                          # the .cpp files of the header's `sources:` folders)
#     [CUDA_SOURCES a.cu ...]              # hand-written device code (default: their .cu files)
#     [CUDA_HOST_SOURCES cuda_host.cpp ...]  # its host glue (default: their cuda_host*.cpp)
#     [SHARDS 2])                          # generated translation units per dispatch key
#
# Makes the shared library <target> (lib<target>.so) next to the generated Python modules, in
# ${CMAKE_CURRENT_BINARY_DIR}/<target>_generated/python/<package>/, and _build.py there (where the
# build lies; the conformance suite reads it). The runtime is compiled into it, its symbols bound
# inside the library (-Bsymbolic), so extensions built this way load side by side.
#
# Where torch has CUDA, the device code and host glue link in. Where it has not and nvcc exists,
# the device code is compile-checked (STRUCTGEN_CUDA_CHECK: AUTO, ON, OFF), and the target
# <target>_cuda_emu (built on demand: the conformance suite builds it) is the CUDA path compiled
# as host C++ for the CPU emulator (csrc/emulator/CMakeLists.txt, docs/cuda_emulation.md).
#
# Why each compile flag, precompiled header and unity group: docs/build.md. The STRUCTGEN_ prefix
# of the cache variables and macros is the runtime's (codegen/api/names.py RUNTIME.macro).
cmake_minimum_required(VERSION 3.25)
include_guard(GLOBAL)

get_filename_component(_GENERATOR_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_RUNTIME_CSRC "${_GENERATOR_ROOT}/csrc")
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

include("${CMAKE_CURRENT_LIST_DIR}/torch.cmake")

# --- the generator: the Python package beside this file, run by the Python the build runs -------
# The build runs `python -m structgen.codegen`; it must be this CMake package's own generator (a
# checkout and an installed copy of different versions would otherwise mix).
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c "import os, structgen.codegen as c; print(os.path.dirname(os.path.dirname(os.path.realpath(c.__file__))))"
  OUTPUT_VARIABLE _imported_root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE _import_error RESULT_VARIABLE _import_failed)
file(REAL_PATH "${_GENERATOR_ROOT}" _generator_real)
if(_import_failed)
  message(FATAL_ERROR "${Python_EXECUTABLE} cannot import structgen.codegen (${_import_error}): install the "
                      "generator into that Python (pip install structgen, or pip install -e <its checkout>)")
elseif(NOT _imported_root STREQUAL _generator_real)
  message(FATAL_ERROR "this structgen CMake package is ${_generator_real}, but ${Python_EXECUTABLE} imports the "
                      "generator from ${_imported_root}: find the one that Python has, "
                      "-Dstructgen_DIR=\"$(python -m structgen.codegen cmake-dir)\"")
endif()

# --- the CPU instruction set --------------------------------------------------------------------
# native (the default, for a build that runs where it is built, as `pip install` from source does):
# every file is compiled once for this machine's CPU (-march=native), and the vectorised loops are
# not cloned; the ISA macros the compiler defined are recorded (_build.py CPU_FEATURES) so that an
# import on a CPU without one fails naming it. portable (for wheels): the baseline x86-64, with the
# vectorised loops cloned for x86-64-v4 and x86-64-v3 and picked at load time (cpu/rows.h).
set(STRUCTGEN_CPU_ISA native CACHE STRING "CPU instruction set: native (this machine's) or portable (clones for x86-64-v4/v3)")
set(_CPU_NATIVE OFF)
set(_CPU_FEATURES "")
if(STRUCTGEN_CPU_ISA STREQUAL "native")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native STRUCTGEN_HAS_MARCH_NATIVE)
  if(STRUCTGEN_HAS_MARCH_NATIVE)
    set(_CPU_NATIVE ON)
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -march=native -dM -E -x c++ /dev/null
                    OUTPUT_VARIABLE _macros COMMAND_ERROR_IS_FATAL ANY)
    string(REGEX MATCHALL "#define __(AVX[A-Z0-9_]*|FMA|F16C|BMI2?|LZCNT|POPCNT|MOVBE|SSE[0-9_]*|SSSE3)__ "
           _isa_defines "${_macros}")
    foreach(_define IN LISTS _isa_defines)
      string(REGEX REPLACE "^#define __(.*)__ $" "\\1" _feature "${_define}")
      list(APPEND _CPU_FEATURES "${_feature}")
    endforeach()
    list(SORT _CPU_FEATURES)
    message(STATUS "generated extensions: compiling for this machine's CPU (-march=native): ${_CPU_FEATURES}")
  else()
    message(STATUS "generated extensions: ${CMAKE_CXX_COMPILER} has no -march=native, so the CPU build is portable")
  endif()
elseif(NOT STRUCTGEN_CPU_ISA STREQUAL "portable")
  message(FATAL_ERROR "STRUCTGEN_CPU_ISA='${STRUCTGEN_CPU_ISA}': write native (this machine's CPU) or portable "
                      "(runs on any x86-64, vectorised loops cloned per ISA)")
endif()

# --- CUDA (enable_language must run at file scope: here, when this file is included) -------------
# The GPUs the kernels are built for: CMAKE_CUDA_ARCHITECTURES if given, else torch's
# TORCH_CUDA_ARCH_LIST ("7.5;8.0;9.0+PTX"), else machine code for sm_75 (T4), sm_80 (A100; sm_86
# and sm_89 GPUs such as A10 and L4 run it) and sm_90 (H100), plus PTX for sm_75, which every newer
# GPU JIT-compiles: no "no kernel image" on a GPU the list misses.
set(STRUCTGEN_CUDA_CHECK AUTO CACHE STRING "compile CUDA kernels without CUDA torch: ON, OFF or AUTO (if nvcc is found)")
set(STRUCTGEN_CUDA_EMULATION AUTO CACHE STRING "configure <target>_cuda_emu: ON, OFF or AUTO (when torch has no CUDA)")
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_ARCHITECTURES AND DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  string(REPLACE " " ";" _arch_list "$ENV{TORCH_CUDA_ARCH_LIST}")
  foreach(_arch IN LISTS _arch_list)
    if(NOT _arch MATCHES "^([0-9]+)\\.([0-9]+)([a-z]?)(\\+PTX)?$")
      message(FATAL_ERROR "TORCH_CUDA_ARCH_LIST: '${_arch}' is not of the form 8.0, 9.0a or 9.0+PTX — "
                          "write compute capabilities, or set CMAKE_CUDA_ARCHITECTURES instead")
    endif()
    if(CMAKE_MATCH_4)
      list(APPEND CMAKE_CUDA_ARCHITECTURES "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")  # machine code + PTX
    else()
      list(APPEND CMAKE_CUDA_ARCHITECTURES "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}-real")
    endif()
  endforeach()
endif()
set(_CHECK_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
if(NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 75 80-real 90-real)
  # The compile check needs one architecture: the oldest, where an intrinsic or type a kernel uses
  # is least likely to exist (no kernel branches on __CUDA_ARCH__'s value).
  set(_CHECK_ARCHITECTURES 75)
endif()
set(_CUDA_MODE none)  # link (CUDA torch), check (nvcc without CUDA torch), none
if(TORCH_CUDA_LIBRARIES)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 20)
  set(_CUDA_MODE link)
elseif(STRUCTGEN_CUDA_CHECK STREQUAL "ON" OR (STRUCTGEN_CUDA_CHECK STREQUAL "AUTO" AND CMAKE_CUDA_COMPILER))
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "STRUCTGEN_CUDA_CHECK=ON but no nvcc was found: install the CUDA toolkit or set it OFF")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 20)
  set(_CUDA_MODE check)
  message(STATUS "generated extensions: compile-checking CUDA kernels for ${_CHECK_ARCHITECTURES} (not linked: torch has no CUDA)")
elseif(STRUCTGEN_CUDA_CHECK STREQUAL "AUTO")
  message(WARNING "generated extensions: no nvcc found; CUDA kernels are not compile-checked")
endif()
set(_CUDA_KERNEL_FLAGS --expt-relaxed-constexpr -O3)
# Hand-written kernel files: -O3 makes gcc vectorise the contiguous loops; -fopenmp-simd with
# -fno-math-errno lets it call glibc's vector math (libmvec) for exp/log/tanh (cpu/rows.h).
set(STRUCTGEN_KERNEL_FLAGS -O3 -fopenmp-simd)
find_library(MVEC_LIBRARY mvec)

function(add_generated_extension target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MANIFEST;SHARDS" "SOURCES;CUDA_SOURCES;CUDA_HOST_SOURCES")
  if(NOT arg_MANIFEST)
    message(FATAL_ERROR "add_generated_extension(${target}): MANIFEST <native_functions.yaml> is missing")
  endif()
  if(NOT arg_SHARDS)
    set(arg_SHARDS 2)
  endif()
  get_filename_component(manifest "${arg_MANIFEST}" ABSOLUTE)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_generated")
  set(codegen "${Python_EXECUTABLE}" -m structgen.codegen
              --manifest "${manifest}" --out-dir "${gen}" --shards ${arg_SHARDS})

  # The generated files by kind (GENERATED_GLUE, GENERATED_KERNELS, GENERATED_OPS, ...): the
  # generator's registry of outputs (codegen/gen.py OutputKind), not patterns over file names.
  # Codegen rewrites outputs.cmake only when the set of outputs changes: configure again then.
  execute_process(COMMAND ${codegen} --cmake-outputs COMMAND_ERROR_IS_FATAL ANY)
  include("${gen}/outputs.cmake")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${gen}/outputs.cmake" "${manifest}")
  file(GLOB_RECURSE generator_sources CONFIGURE_DEPENDS
       "${_GENERATOR_ROOT}/codegen/*.py" "${_GENERATOR_ROOT}/codegen/templates/*.j2")
  # The stamp is the command's only OUTPUT; the generated files are BYPRODUCTS that the generator
  # rewrites only when their content changes, so ninja (restat) recompiles just their dependents.
  add_custom_command(
    OUTPUT "${gen}/codegen.stamp"
    BYPRODUCTS ${GENERATED_FILES}
    COMMAND ${codegen} --stamp "${gen}/codegen.stamp"
    DEPENDS "${manifest}" ${generator_sources}
    COMMENT "codegen: ${arg_MANIFEST} -> ${gen}"
    VERBATIM)

  # Sources: the header's `sources:` folders (relative to the manifest) are include roots, where
  # `kernels: sources:` paths are read, and where the default source lists come from.
  get_filename_component(sources_root "${manifest}" DIRECTORY)
  list(GET GENERATED_SOURCE_FOLDERS 0 first_folder)
  set(source_dirs "")
  foreach(folder IN LISTS GENERATED_SOURCE_FOLDERS)
    list(APPEND source_dirs "${sources_root}/${folder}")
  endforeach()
  if(NOT arg_SOURCES AND NOT arg_CUDA_SOURCES AND NOT arg_CUDA_HOST_SOURCES)
    foreach(dir IN LISTS source_dirs)
      file(GLOB_RECURSE found CONFIGURE_DEPENDS "${dir}/*.cpp")
      file(GLOB_RECURSE found_cu CONFIGURE_DEPENDS "${dir}/*.cu")
      set(found_host ${found})
      list(FILTER found EXCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
      list(FILTER found_host INCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
      list(APPEND arg_SOURCES ${found})
      list(APPEND arg_CUDA_SOURCES ${found_cu})
      list(APPEND arg_CUDA_HOST_SOURCES ${found_host})
    endforeach()
  endif()
  foreach(file IN LISTS arg_SOURCES)  # kernel flags, unless the project set its own for the file
    get_source_file_property(options "${file}" COMPILE_OPTIONS)
    if(NOT options)
      set_source_files_properties("${file}" PROPERTIES COMPILE_OPTIONS "${STRUCTGEN_KERNEL_FLAGS}")
    endif()
  endforeach()
  # The runtime's kernels of scan and triangle ops (with torch's dispatch) compile as kernels do.
  set(generated_runtime_kernels ${GENERATED_OPS})
  list(FILTER generated_runtime_kernels INCLUDE REGEX "/runtime_kernels_cpu\\.cpp$")
  set_source_files_properties(${generated_runtime_kernels} PROPERTIES COMPILE_OPTIONS "${STRUCTGEN_KERNEL_FLAGS}")

  # The runtime: its sources compile into every extension (two unity units), the autograd
  # runtime with the generated glue; its CUDA host files where torch has CUDA.
  file(GLOB runtime_sources "${_RUNTIME_CSRC}/runtime/*.cpp" "${_RUNTIME_CSRC}/runtime/autotune/*.cpp")
  set(runtime_cuda_host ${runtime_sources})
  list(FILTER runtime_cuda_host INCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
  list(FILTER runtime_sources EXCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
  set(autograd_runtime "${_RUNTIME_CSRC}/runtime/autograd.cpp" "${_RUNTIME_CSRC}/runtime/autograd_formulas.cpp"
      "${_RUNTIME_CSRC}/runtime/autograd_jvp.cpp" "${_RUNTIME_CSRC}/runtime/autograd_attention.cpp")
  list(REMOVE_ITEM runtime_sources ${autograd_runtime})
  set(openmp "${_RUNTIME_CSRC}/runtime/openmp/parallel.cpp")
  # at::parallel_for's OpenMP backend runs in parallel only in a unit built with -fopenmp
  # (compile-only: linking it would add the system libgomp next to torch's own).
  set_source_files_properties("${openmp}" PROPERTIES COMPILE_OPTIONS -fopenmp SKIP_PRECOMPILE_HEADERS ON)

  # What the autotune cache key takes from this build: each kernel variant's source hash, the
  # compiler, its flags and CPU features, torch's version (cmake/autotune_build.cmake).
  set(build_info "${CMAKE_CURRENT_BINARY_DIR}/${target}_autotune_build.cpp")
  list(JOIN _CPU_FEATURES "," cpu_features)
  add_custom_command(
    OUTPUT "${build_info}.stamp"
    BYPRODUCTS "${build_info}"
    COMMAND "${CMAKE_COMMAND}" "-DVARIANTS=${gen}/variant_sources.cmake" "-DCSRC=${sources_root}/${first_folder}"
            "-DRUNTIME_INCLUDE=${_RUNTIME_CSRC}/include"
            "-DOUT=${build_info}" "-DDEPFILE=${build_info}.d" "-DSTAMP=${build_info}.stamp"
            "-DCOMPILE_FLAGS=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_BUILD_TYPE} ${CMAKE_CXX_FLAGS} ${STRUCTGEN_CPU_ISA} ${cpu_features}"
            "-DTORCH_VERSION=${Torch_VERSION}"
            -P "${_GENERATOR_ROOT}/cmake/autotune_build.cmake"
    DEPENDS "${gen}/codegen.stamp" "${_GENERATOR_ROOT}/cmake/autotune_build.cmake"
    DEPFILE "${build_info}.d"
    COMMENT "${target}: kernel variants' source hashes -> ${target}_autotune_build.cpp"
    VERBATIM)

  # Three compilations, each with the precompiled header its files need: the glue (wrappers,
  # registration, autograd: torch's dispatcher and autograd headers, at -O1), the generated
  # pointwise kernels (no torch header: c10's scalar types), and the rest (the library).
  set(glue ${target}_glue)
  set(kernels ${target}_kernels)
  add_library(${glue} OBJECT ${GENERATED_GLUE} ${autograd_runtime} "${gen}/codegen.stamp")
  add_library(${kernels} OBJECT ${GENERATED_KERNELS} "${gen}/codegen.stamp")
  set(ops ${arg_SOURCES} ${GENERATED_OPS} ${runtime_sources} "${openmp}" "${build_info}")
  if(_CUDA_MODE STREQUAL "link")
    list(APPEND ops ${GENERATED_CUDA_HOST} ${GENERATED_CUDA_DEVICE} ${arg_CUDA_SOURCES} ${arg_CUDA_HOST_SOURCES}
         ${runtime_cuda_host})
    set_source_files_properties(${GENERATED_CUDA_DEVICE} ${arg_CUDA_SOURCES} PROPERTIES COMPILE_OPTIONS "${_CUDA_KERNEL_FLAGS}")
  endif()
  add_library(${target} SHARED ${ops} $<TARGET_OBJECTS:${glue}> $<TARGET_OBJECTS:${kernels}>
              "${gen}/codegen.stamp" "${build_info}.stamp")
  set_target_properties(${glue} ${kernels} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # Unity groups: the runtime's files as two units (runtime/, runtime/autotune/), the glue as one
  # per group the generator names (GENERATED_UNITY_GROUPS), the autograd runtime as one.
  set_target_properties(${target} ${glue} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  foreach(file IN LISTS runtime_sources)
    if(file MATCHES "/runtime/autotune/[a-z_]+\\.cpp$")
      set_source_files_properties("${file}" PROPERTIES UNITY_GROUP autotune)
    else()
      set_source_files_properties("${file}" PROPERTIES UNITY_GROUP runtime)
    endif()
  endforeach()
  foreach(group IN LISTS GENERATED_UNITY_GROUPS)
    set_source_files_properties(${GENERATED_UNITY_${group}} PROPERTIES UNITY_GROUP "${group}")
  endforeach()
  set_source_files_properties(${autograd_runtime} PROPERTIES UNITY_GROUP autograd_runtime)

  foreach(t IN ITEMS ${target} ${glue} ${kernels})
    target_include_directories(${t} PRIVATE "${_RUNTIME_CSRC}/include" "${_RUNTIME_CSRC}" "${gen}/include"
                               ${source_dirs})
    target_compile_features(${t} PRIVATE cxx_std_20)
    target_link_libraries(${t} PRIVATE ${TORCH_LIBRARIES})
    # Nothing reads errno after a math call, nor the floating-point exception flags; with
    # trapping math gcc keeps float comparisons as branches, and loops stay scalar on AVX2.
    target_compile_options(${t} PRIVATE -Wall -Wextra -Wno-unused-parameter -fno-math-errno -fno-trapping-math)
    if(_CPU_NATIVE)
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
      target_compile_definitions(${t} PRIVATE STRUCTGEN_HOST_ISA)
    endif()
  endforeach()
  set(pch "${_RUNTIME_CSRC}/include/structgen/precompiled.h")
  target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${pch}>")
  target_precompile_headers(${glue} PRIVATE "${pch}" "${_RUNTIME_CSRC}/include/structgen/precompiled_glue.h")
  target_precompile_headers(${kernels} PRIVATE "${_RUNTIME_CSRC}/include/structgen/precompiled_kernels.h")
  target_compile_options(${kernels} PRIVATE ${STRUCTGEN_KERNEL_FLAGS})
  target_compile_options(${glue} PRIVATE -O1)  # it moves arguments and calls: no loop to vectorise
  if(MVEC_LIBRARY)
    target_link_libraries(${target} PRIVATE ${MVEC_LIBRARY})
  endif()
  target_link_options(${target} PRIVATE -Wl,-Bsymbolic)
  # A function the manifest declares and no source defines stops the build at its manifest line.
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${Python_EXECUTABLE}" -m structgen.codegen.link "$<TARGET_FILE:${target}>" "${gen}/hooks.txt"
    VERBATIM)
  string(REPLACE "." "/" package_dir "${GENERATED_PYTHON_PACKAGE}")
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${gen}/python/${package_dir}")

  if(_CUDA_MODE STREQUAL "check")
    _add_generated_cuda_check(${target} "${gen}" "${arg_CUDA_SOURCES}" "${source_dirs}")
  endif()
  # <target>_cuda_emu, in a directory of its own (csrc/emulator/CMakeLists.txt says why).
  set(emulator "")
  if(STRUCTGEN_CUDA_EMULATION STREQUAL "ON" OR (STRUCTGEN_CUDA_EMULATION STREQUAL "AUTO" AND NOT TORCH_CUDA_LIBRARIES))
    set(EMU_TARGET ${target}_cuda_emu)
    set(EMU_LIBRARY ${target})
    set(EMU_CHECKS ${GENERATED_PROJECT}_emu_checks)
    set(EMU_DEVICE ${GENERATED_CUDA_DEVICE} ${arg_CUDA_SOURCES})
    set(EMU_HOST ${GENERATED_CUDA_HOST} ${arg_CUDA_HOST_SOURCES})
    set(EMU_INCLUDES "${_RUNTIME_CSRC}/include" "${_RUNTIME_CSRC}" "${gen}/include" ${source_dirs})
    set(EMU_PCH "${pch}")
    set(EMU_STAMP "${gen}/codegen.stamp")
    add_subdirectory("${_RUNTIME_CSRC}/emulator" "${CMAKE_CURRENT_BINARY_DIR}/${target}_cuda_emu")
    set(emulator "${target}_cuda_emu/lib${target}_cuda_emu.so")
  endif()
  file(GENERATE OUTPUT "${gen}/python/${package_dir}/_build.py" CONTENT
"\"\"\"Where this build of ${GENERATED_PYTHON_PACKAGE} lies (add_generated_extension): the conformance
suite builds the CPU emulator of its CUDA path there on first use.\"\"\"

BUILD_DIR = \"${CMAKE_CURRENT_BINARY_DIR}\"
CMAKE = \"${CMAKE_COMMAND}\"
EMULATOR = \"${emulator}\"  # under BUILD_DIR; empty where torch has CUDA
EMULATOR_TARGET = \"${target}_cuda_emu\"
LIBRARY = \"$<TARGET_FILE:${target}>\"
# The CPU features a native build (STRUCTGEN_CPU_ISA=native) was compiled for, as the compiler's
# macro names (AVX2, FMA, ...); empty for a portable build. The runtime checks them on import.
CPU_FEATURES = tuple(\"${_CPU_FEATURES}\".split(\";\")) if \"${_CPU_FEATURES}\" else ()
")
  set(${target}_GENERATED_DIR "${gen}" PARENT_SCOPE)
  set(${target}_PACKAGE_DIR "${gen}/python/${package_dir}" PARENT_SCOPE)
endfunction()

# <target>_cuda_check: the device code compiled with nvcc for the oldest architecture (where torch
# has no CUDA), so a kernel that does not compile fails the build. Device code only (--fatbin) at
# -O0 (NVVM and ptxas): the front end and ptxas still check every kernel.
function(_add_generated_cuda_check target gen cuda_sources source_dirs)
  add_library(${target}_cuda_check OBJECT ${GENERATED_CUDA_DEVICE} ${cuda_sources} "${gen}/codegen.stamp")
  target_include_directories(${target}_cuda_check PRIVATE "${_RUNTIME_CSRC}/include" "${_RUNTIME_CSRC}" ${source_dirs})
  target_compile_options(${target}_cuda_check PRIVATE ${_CUDA_KERNEL_FLAGS} -Xcicc -O0 --ptxas-options=-O0)
  set_target_properties(${target}_cuda_check PROPERTIES CUDA_ARCHITECTURES "${_CHECK_ARCHITECTURES}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.27)
    set_target_properties(${target}_cuda_check PROPERTIES CUDA_FATBIN_COMPILATION ON)
  endif()
  # Each nvcc run has a fixed cost: the generated kernels compile 8 groups to a file, grouped by a
  # hash of the file name (adding an op changes one group).
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.31)
    set_target_properties(${target}_cuda_check PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
    foreach(cu IN LISTS GENERATED_CUDA_DEVICE)
      get_filename_component(name "${cu}" NAME)
      string(MD5 hash "${name}")
      string(SUBSTRING "${hash}" 0 8 hash)
      math(EXPR group "0x${hash} % 8")
      set_source_files_properties("${cu}" PROPERTIES UNITY_GROUP "kernels_${group}")
    endforeach()
  endif()
endfunction()
