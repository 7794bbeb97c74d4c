# @generated from native_functions.yaml by codegen/templates/outputs.cmake.j2 (generator 0.6.0) — DO NOT EDIT.
# Regenerate with: python -m structgen.codegen (run by the CMake build)
# The generated files by kind (codegen/gen.py's OutputKind), under this file's folder: the build's
# file lists. CMake includes it at configure time (python -m structgen.codegen --cmake-outputs writes it) and
# re-configures when codegen rewrites it, which it does only when the set of outputs changes.
set(GENERATED_FILES
  "${CMAKE_CURRENT_LIST_DIR}/src/registration.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/composites.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/meta_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/meta_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cuda_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cuda_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/autograd_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/autograd_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cpu_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cpu_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cuda_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cuda_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_host_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_host_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_ops.py"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_ops.pyi"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_rules.py"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_lowerings.py"
  "${CMAKE_CURRENT_LIST_DIR}/outputs.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/variant_sources.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/hooks.txt"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_scaled_act.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_scaled_act.cu"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_host_scaled_act.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_scaled_tanh.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_scaled_tanh.cu"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_host_scaled_tanh.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cpu.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cuda.cu"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cuda_host.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/add_Tensor.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/bmm_out.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/amax.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/aminmax.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/scaled_act.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/scaled_tanh.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/_scaled_tanh_backward_self.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/cumprod.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/tril.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/my_fused.h"
)
set(GENERATED_GLUE
  "${CMAKE_CURRENT_LIST_DIR}/src/registration.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/composites.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/autograd_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/autograd_1.cpp"
)
set(GENERATED_KERNELS
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_scaled_act.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_scaled_tanh.cpp"
)
set(GENERATED_OPS
  "${CMAKE_CURRENT_LIST_DIR}/src/meta_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/meta_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cpu_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cpu_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_host_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cpu_host_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cpu.cpp"
)
set(GENERATED_CUDA_HOST
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cuda_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cuda_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cuda_0.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/multi_kernel_cuda_1.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_host_scaled_act.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_host_scaled_tanh.cpp"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cuda_host.cpp"
)
set(GENERATED_CUDA_DEVICE
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_scaled_act.cu"
  "${CMAKE_CURRENT_LIST_DIR}/src/kernels_cuda_scaled_tanh.cu"
  "${CMAKE_CURRENT_LIST_DIR}/src/runtime_kernels_cuda.cu"
)
set(GENERATED_HEADERS
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/add_Tensor.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/bmm_out.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/amax.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/aminmax.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/scaled_act.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/scaled_tanh.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/_scaled_tanh_backward_self.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/cumprod.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/tril.h"
  "${CMAKE_CURRENT_LIST_DIR}/include/fixture/include/ops/my_fused.h"
)
set(GENERATED_PYTHON
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_ops.py"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_ops.pyi"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_rules.py"
  "${CMAKE_CURRENT_LIST_DIR}/python/fixture_pkg/ops/_lowerings.py"
)
set(GENERATED_BUILD
  "${CMAKE_CURRENT_LIST_DIR}/outputs.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/variant_sources.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/hooks.txt"
)
# Files that compile as one translation unit: set(GENERATED_UNITY_<group> ...).
set(GENERATED_UNITY_GROUPS registration wrappers_0 wrappers_1)
set(GENERATED_UNITY_registration "${CMAKE_CURRENT_LIST_DIR}/src/registration.cpp" "${CMAKE_CURRENT_LIST_DIR}/src/composites.cpp")
set(GENERATED_UNITY_wrappers_0 "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_0.cpp" "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_0.cpp")
set(GENERATED_UNITY_wrappers_1 "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_1.cpp" "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_meta_1.cpp")
# The project header's names the build needs.
set(GENERATED_PROJECT "fixture_ops")
set(GENERATED_PYTHON_PACKAGE "fixture_pkg.ops")
set(GENERATED_SOURCE_FOLDERS "csrc")
