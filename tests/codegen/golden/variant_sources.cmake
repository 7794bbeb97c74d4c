# @generated from native_functions.yaml by codegen/templates/variant_sources.cmake.j2 (generator 0.6.0) — DO NOT EDIT.
# Regenerate with: python -m structgen.codegen (run by the CMake build)
# Each kernel variant's declared sources (`kernels: sources:` in the manifest), for
# cmake/autotune_build.cmake, which hashes them into the variant's source hash (the autotune cache
# key) in one small translation unit:
#   kernel_variant(<hash symbol> <device> <manifest hash> <where> [<path under csrc/> ...])
kernel_variant(bmm_out_cpu__loop CPU 30ecc225cec5f6f792e020868827cdb255acc7950837e4237239a3584e6c52da "native_functions.yaml: bmm.out" ops/linalg include/fixture/reduce.h)
kernel_variant(bmm_out_cpu__blas CPU 3c491993623b28afe5daa012e22f8cd1b3803db47bdf64ee6f98ab0bb39ae27e "native_functions.yaml: bmm.out" ops/linalg include/fixture/reduce.h)
kernel_variant(scaled_act_out_cuda__wide CUDA f4839823a71d6afaf0587b7b7cabdf962bcfcb5f51dee14ef9dd66f1f4a158c9 "native_functions.yaml: scaled_act.out")
kernel_variant(scaled_act_out_cuda__narrow CUDA 593947d55ce345c015a880eac88e9a399844b0c508d24d8eff7a9c5653c906e9 "native_functions.yaml: scaled_act.out")
