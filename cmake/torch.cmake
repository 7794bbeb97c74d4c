# torch, from the Python environment the build runs in (no build isolation): the generated
# extensions and the runtime's own Python module link the torch that will import them.
include_guard(GLOBAL)
if(NOT Python_EXECUTABLE)
  find_package(Python 3.10 REQUIRED COMPONENTS Interpreter)
endif()
if(NOT TARGET torch)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import torch; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
  find_package(Torch REQUIRED)
endif()
