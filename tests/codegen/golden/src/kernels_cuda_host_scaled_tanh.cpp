// @generated from native_functions.yaml by codegen/templates/kernels_cuda_host.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA host glue of one pointwise op and of its generated backward ops: device guard, current
// stream, inputs brought to the common dtype and device (a 0-dim CPU input stays there and
// travels as a value in the launch), then the torch-free launchers in kernels_cuda_<op>.cu.
// Compiled only when the installed torch has CUDA.
#include <structgen/cpu/pointwise.h>
#include <structgen/pointwise/launch.h>
#include <fixture/include/ops/scaled_tanh.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>

#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>


namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace cuda_kernels {
const char* scaled_tanh_out(const PointwiseLaunch& p);
const char* _scaled_tanh_backward_self_out(const PointwiseLaunch& p);
}  // namespace cuda_kernels

namespace impl {

void scaled_tanh_out_cuda(const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const std::array<at::ScalarType, 1> so_dtypes{
      common_dtype,
  };
  const std::array<at::Tensor, 1> so_inputs{
      cpu::launch_operand(self, so_dtypes[0], out.device()),
  };
  PointwiseLaunch launch = cpu::make_launch(out, so_inputs, common_dtype, so_dtypes);
  launch.scalars[0] = cpu::scalar_arg(alpha, common_dtype);
  launch.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::scaled_tanh_out(launch);
  TORCH_CHECK(error == nullptr, "scaled_tanh: CUDA kernel failed for dtype ", common_dtype, ": ", error);
}

void _scaled_tanh_backward_self_out_cuda(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const std::array<at::ScalarType, 2> so_dtypes{
      common_dtype,
      common_dtype,
  };
  const std::array<at::Tensor, 2> so_inputs{
      cpu::launch_operand(grad, so_dtypes[0], out.device()),
      cpu::launch_operand(self, so_dtypes[1], out.device()),
  };
  PointwiseLaunch launch = cpu::make_launch(out, so_inputs, common_dtype, so_dtypes);
  launch.scalars[0] = cpu::scalar_arg(alpha);
  launch.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::_scaled_tanh_backward_self_out(launch);
  TORCH_CHECK(error == nullptr, "_scaled_tanh_backward_self: CUDA kernel failed for dtype ", common_dtype, ": ", error);
}

}  // namespace impl
}  // namespace fixture::ops
