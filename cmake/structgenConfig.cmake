# find_package(structgen CONFIG REQUIRED): the generator's CMake package, as pybind11 and torch
# ship theirs. It defines add_generated_extension() (generated_extension.cmake: finds torch, the
# CPU's ISA and nvcc once) and structgen_GENERATOR_ROOT (the generator's folder). Find it with
#   -Dstructgen_DIR="$(python -m codegen cmake-dir)"   (run with the generator on PYTHONPATH)
# or with the generator's folder on CMAKE_PREFIX_PATH (CMake looks in <prefix>/cmake/).
include("${CMAKE_CURRENT_LIST_DIR}/generated_extension.cmake")
get_filename_component(structgen_GENERATOR_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
