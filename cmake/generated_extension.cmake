# add_generated_extension(): an outside project's operators, generated from its manifest and
# compiled with its hand-written sources and the runtime into one shared library that registers
# them with torch's dispatcher (docs/projects.md).
#
#   include(<generator>/cmake/generated_extension.cmake)
#   add_generated_extension(<target>
#     MANIFEST native_functions.yaml       # its first entry is the project header
#     [SOURCES csrc/ops/scale/cpu.cpp ...] # the hand-written kernels and meta functions (default:
#                                          # the .cpp files of the header's `sources:` folders)
#     [SHARDS 2])                          # translation units per dispatch key
#
# Makes the shared library <target> (lib<target>.so) next to the generated Python modules, in
# ${CMAKE_CURRENT_BINARY_DIR}/<target>_generated/python/<package>/, where the project's own
# __init__.py loads it (torch.ops.load_library). The runtime is compiled into it, its symbols bound
# inside the library (-Bsymbolic), so extensions built this way load side by side. CPU kernels
# only; the generated CUDA host glue needs CUDA torch (structops' own build compiles it). Where
# torch has no CUDA, the target <target>_cuda_emu (built on demand: the conformance suite builds
# it) is the CUDA path compiled as host C++ for the CPU emulator (tests/cuda_emu), and _build.py
# in the package says where both lie.
# Needs find_package(Torch) and find_package(Python) before the call.
cmake_minimum_required(VERSION 3.25)

set(_GENERATOR_ROOT "${CMAKE_CURRENT_LIST_DIR}/..")

function(add_generated_extension target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MANIFEST;SHARDS" "SOURCES")
  if(NOT arg_MANIFEST)
    message(FATAL_ERROR "add_generated_extension(${target}): MANIFEST <native_functions.yaml> is missing")
  endif()
  if(NOT arg_SHARDS)
    set(arg_SHARDS 2)
  endif()
  get_filename_component(manifest "${arg_MANIFEST}" ABSOLUTE)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_generated")
  set(codegen "${CMAKE_COMMAND}" -E env "PYTHONPATH=${_GENERATOR_ROOT}" "${Python_EXECUTABLE}" -m codegen
              --manifest "${manifest}" --out-dir "${gen}" --shards ${arg_SHARDS})

  # The generated files by kind (GENERATED_GLUE, GENERATED_KERNELS, GENERATED_OPS, ...).
  execute_process(COMMAND ${codegen} --cmake-outputs COMMAND_ERROR_IS_FATAL ANY)
  include("${gen}/outputs.cmake")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${gen}/outputs.cmake" "${manifest}")
  file(GLOB_RECURSE generator_sources CONFIGURE_DEPENDS
       "${_GENERATOR_ROOT}/codegen/*.py" "${_GENERATOR_ROOT}/codegen/templates/*.j2")
  add_custom_command(
    OUTPUT "${gen}/codegen.stamp"
    BYPRODUCTS ${GENERATED_FILES}
    COMMAND ${codegen} --stamp "${gen}/codegen.stamp"
    DEPENDS "${manifest}" ${generator_sources}
    COMMENT "codegen: ${arg_MANIFEST} -> ${gen}"
    VERBATIM)

  # What the autotune cache key takes from this build (the kernel variants' source hashes).
  get_filename_component(sources_root "${manifest}" DIRECTORY)
  # Paths in `kernels: sources:` and includes such as <ops/...> are relative to the first folder.
  list(GET GENERATED_SOURCE_FOLDERS 0 first_folder)
  set(source_dirs "")
  foreach(folder IN LISTS GENERATED_SOURCE_FOLDERS)
    list(APPEND source_dirs "${sources_root}/${folder}")
  endforeach()
  set(build_info "${CMAKE_CURRENT_BINARY_DIR}/${target}_autotune_build.cpp")
  add_custom_command(
    OUTPUT "${build_info}.stamp"
    BYPRODUCTS "${build_info}"
    COMMAND "${CMAKE_COMMAND}" "-DVARIANTS=${gen}/variant_sources.cmake" "-DCSRC=${sources_root}/${first_folder}"
            "-DOUT=${build_info}" "-DDEPFILE=${build_info}.d" "-DSTAMP=${build_info}.stamp"
            "-DCOMPILE_FLAGS=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}" "-DTORCH_VERSION=${Torch_VERSION}"
            -P "${_GENERATOR_ROOT}/cmake/autotune_build.cmake"
    DEPENDS "${gen}/codegen.stamp" "${_GENERATOR_ROOT}/cmake/autotune_build.cmake"
    DEPFILE "${build_info}.d"
    VERBATIM)

  if(NOT arg_SOURCES)  # the project header's folders: CPU files (cuda_host*.cpp needs CUDA torch)
    foreach(folder IN LISTS GENERATED_SOURCE_FOLDERS)
      file(GLOB_RECURSE found CONFIGURE_DEPENDS "${sources_root}/${folder}/*.cpp")
      list(FILTER found EXCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
      list(APPEND arg_SOURCES ${found})
    endforeach()
  endif()
  file(GLOB runtime_sources "${_GENERATOR_ROOT}/csrc/runtime/*.cpp" "${_GENERATOR_ROOT}/csrc/runtime/autotune/*.cpp")
  list(FILTER runtime_sources EXCLUDE REGEX "/cuda_host[^/]*\\.cpp$")
  set(openmp "${_GENERATOR_ROOT}/csrc/runtime/openmp/parallel.cpp")
  add_library(${target} SHARED
    ${GENERATED_GLUE} ${GENERATED_KERNELS} ${GENERATED_OPS} ${runtime_sources} "${openmp}" "${build_info}"
    ${arg_SOURCES} "${gen}/codegen.stamp" "${build_info}.stamp")
  set_source_files_properties("${openmp}" PROPERTIES COMPILE_OPTIONS -fopenmp)
  target_include_directories(${target} PRIVATE "${_GENERATOR_ROOT}/csrc/include" "${_GENERATOR_ROOT}/csrc"
                             "${gen}/include" ${source_dirs})
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_compile_options(${target} PRIVATE -O2 -fno-math-errno -fno-trapping-math -Wno-unused-parameter)
  target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES})
  target_link_options(${target} PRIVATE -Wl,-Bsymbolic)
  # A hook the manifest declares and no source defines stops the build at its manifest line.
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${_GENERATOR_ROOT}"
            "${Python_EXECUTABLE}" -m codegen.link "$<TARGET_FILE:${target}>" "${gen}/hooks.txt"
    VERBATIM)
  string(REPLACE "." "/" package_dir "${GENERATED_PYTHON_PACKAGE}")
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${gen}/python/${package_dir}")

  set(emulator "")
  if(NOT TORCH_CUDA_LIBRARIES)
    _add_generated_emulator(${target} "${gen}" "${source_dirs}")
    set(emulator "lib${target}_cuda_emu.so")
  endif()
  file(GENERATE OUTPUT "${gen}/python/${package_dir}/_build.py" CONTENT
"\"\"\"Where this build of ${GENERATED_PYTHON_PACKAGE} lies (add_generated_extension): the conformance
suite builds the CPU emulator of its CUDA path there on first use.\"\"\"

BUILD_DIR = \"${CMAKE_CURRENT_BINARY_DIR}\"
CMAKE = \"${CMAKE_COMMAND}\"
EMULATOR = \"${emulator}\"  # under BUILD_DIR; empty where torch has CUDA
EMULATOR_TARGET = \"${target}_cuda_emu\"
LIBRARY = \"$<TARGET_FILE:${target}>\"
")
  set(${target}_GENERATED_DIR "${gen}" PARENT_SCOPE)
  set(${target}_PACKAGE_DIR "${gen}/python/${package_dir}" PARENT_SCOPE)
endfunction()

# <target>_cuda_emu: the project's CUDA path (generated wrappers and host glue, its hand-written
# and generated device code) as host C++ against CPU torch, run by the emulator, which registers
# the CUDA wrappers for CPU tensors under torch.ops.<project>_emu (docs/cuda_emulation.md).
function(_add_generated_emulator target gen source_dirs)
  set(emu "${_GENERATOR_ROOT}/tests/cuda_emu")
  set(device ${GENERATED_CUDA_DEVICE} "${emu}/emulator_checks.cu")
  set(host ${GENERATED_CUDA_HOST})
  foreach(dir IN LISTS source_dirs)
    file(GLOB_RECURSE found_cu CONFIGURE_DEPENDS "${dir}/*.cu")
    file(GLOB_RECURSE found_host CONFIGURE_DEPENDS "${dir}/cuda_host*.cpp")
    list(APPEND device ${found_cu})
    list(APPEND host ${found_host})
  endforeach()
  add_library(${target}_cuda_emu SHARED EXCLUDE_FROM_ALL
    "${emu}/emu.cpp" "${emu}/emulator_checks.cpp" ${device} ${host} "${gen}/codegen.stamp")
  # Device code is C++ with __CUDA_ARCH__ (the runtime's pointwise/math.h device semantics); -O1
  # and hidden symbols: a quick build, and device variants never bind to the host library's.
  set_source_files_properties(${device} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-x;c++;-D__CUDA_ARCH__=900")
  target_include_directories(${target}_cuda_emu BEFORE PRIVATE "${emu}/include")
  target_include_directories(${target}_cuda_emu PRIVATE "${_GENERATOR_ROOT}/csrc/include" "${_GENERATOR_ROOT}/csrc"
                             "${gen}/include" ${source_dirs})
  target_compile_features(${target}_cuda_emu PRIVATE cxx_std_20)
  target_compile_definitions(${target}_cuda_emu PRIVATE STRUCTOPS_CUDA_EMULATION)
  target_compile_options(${target}_cuda_emu PRIVATE -O1 -fvisibility=hidden -fvisibility-inlines-hidden
                         -Wno-unused-parameter)
  target_link_libraries(${target}_cuda_emu PRIVATE ${target} ${TORCH_LIBRARIES})
endfunction()
