// @generated from native_functions.yaml by codegen/templates/runtime_kernels_cuda_host.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA impls of the ops whose kernels are the runtime's (manifest `scan:`, `triangle:`): the
// runtime's host glue (structgen/cuda/scan_host.h, triangle_host.h) with each op's
// device entry points (runtime_kernels_cuda.cu, declared in the op's header). Compiled only when
// the installed torch has CUDA (and in the emulator's build).
#include <structgen/cuda/scan_host.h>
#include <structgen/cuda/triangle_host.h>
#include <fixture/include/ops/cumprod.h>
#include <fixture/include/ops/tril.h>

namespace fixture::ops::impl {

void cumprod_out_cuda(const at::Tensor& self, at::IntArrayRef scan_dim, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cuda_host::scan_out("cumprod", self, scan_dim, out, cuda_kernels::cumprod_scan_plan,
                        cuda_kernels::cumprod_scan, /*complex_pairs=*/false);
}

void tril_out_cuda(const at::Tensor& self, c10::SymInt diagonal, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cuda_host::triangle_out("tril", self, c10::SymInt(diagonal).guard_int(__FILE__, __LINE__), out,
                            /*lower=*/true, cuda_kernels::tril_triangle);
}

}  // namespace fixture::ops::impl
