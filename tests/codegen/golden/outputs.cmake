# @generated from native_functions.yaml by codegen/templates/outputs.cmake.j2 — DO NOT EDIT.
# Regenerate with: python -m codegen (run by the CMake build)
# The generated files, relative to the generation folder. CMake re-configures when this list
# changes (an op added or removed), so every output is a declared byproduct of codegen.
set(STRUCTOPS_GENERATED_OUTPUTS
  "src/registration.cpp"
  "src/meta_0.cpp"
  "src/meta_1.cpp"
  "src/wrappers_cpu_0.cpp"
  "src/wrappers_cpu_1.cpp"
  "src/wrappers_meta_0.cpp"
  "src/wrappers_meta_1.cpp"
  "src/wrappers_cuda_0.cpp"
  "src/wrappers_cuda_1.cpp"
  "src/autograd_0.cpp"
  "src/autograd_1.cpp"
  "src/multi_kernel_cpu_0.cpp"
  "src/multi_kernel_cpu_1.cpp"
  "src/multi_kernel_cuda_0.cpp"
  "src/multi_kernel_cuda_1.cpp"
  "python/structops/_ops.py"
  "python/structops/_ops.pyi"
  "python/structops/_rules.py"
  "src/kernels_cpu_scaled_act.cpp"
  "src/kernels_cuda_scaled_act.cu"
  "src/kernels_cuda_host_scaled_act.cpp"
  "include/structops/ops/add_Tensor.h"
  "include/structops/ops/bmm_out.h"
  "include/structops/ops/amax.h"
  "include/structops/ops/aminmax.h"
  "include/structops/ops/scaled_act.h"
  "include/structops/ops/my_fused.h"
)
