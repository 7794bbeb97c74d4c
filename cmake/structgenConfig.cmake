# find_package(structgen CONFIG REQUIRED): the generator's CMake package, as pybind11 and torch
# ship theirs. It defines add_generated_extension() (generated_extension.cmake: finds torch, the
# CPU's ISA and nvcc once) and structgen_GENERATOR_ROOT (the generator's folder: the installed
# structgen package, or the root of its checkout). Find it with
#   -Dstructgen_DIR="$(python -m structgen.codegen cmake-dir)"
# or, as a project's CMakeLists.txt may do itself, with that command's output as a HINTS path.
include("${CMAKE_CURRENT_LIST_DIR}/generated_extension.cmake")
get_filename_component(structgen_GENERATOR_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
