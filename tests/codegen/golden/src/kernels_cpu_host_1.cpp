// @generated from native_functions.yaml by codegen/templates/kernels_cpu_host.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU host glue of the generated pointwise kernels of a shard of ops: the inputs brought to the
// common dtype, the host conditions decided and the numbers checked for it (as Scalar::to does),
// then the torch-free launchers in kernels_cpu_<op>.cpp. A shard, not a file per op: torch's
// headers cost a file more than its ops' glue, and a formula's edit does not change the glue.
#include <structgen/cpu/pointwise.h>
#include <fixture/include/ops/scaled_tanh.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>

#include <c10/util/Exception.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace cpu_kernels {
const char* scaled_tanh_out(const cpu::RowLaunch& p);
const char* _scaled_tanh_backward_self_out(const cpu::RowLaunch& p);
}  // namespace cpu_kernels

namespace impl {

void scaled_tanh_out_cpu(const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const std::array<at::Tensor, 1> so_inputs{
      cpu::operand(self, common_dtype, out.device()),
  };
  cpu::RowLaunch launch = cpu::make_row_launch(out, so_inputs, common_dtype, /*grain=*/32768);
  cpu::set_value(launch, 0, self);
  launch.scalars[0] = cpu::scalar_arg(alpha, common_dtype);
  const char* error = cpu_kernels::scaled_tanh_out(launch);
  TORCH_CHECK(error == nullptr, "scaled_tanh: no CPU kernel for dtype ", common_dtype);
}

void _scaled_tanh_backward_self_out_cpu(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const std::array<at::Tensor, 2> so_inputs{
      cpu::operand(grad, common_dtype, out.device()),
      cpu::operand(self, common_dtype, out.device()),
  };
  cpu::RowLaunch launch = cpu::make_row_launch(out, so_inputs, common_dtype, /*grain=*/32768);
  cpu::set_value(launch, 0, grad);
  cpu::set_value(launch, 1, self);
  launch.scalars[0] = cpu::scalar_arg(alpha);
  const char* error = cpu_kernels::_scaled_tanh_backward_self_out(launch);
  TORCH_CHECK(error == nullptr, "_scaled_tanh_backward_self: no CPU kernel for dtype ", common_dtype);
}

}  // namespace impl
}  // namespace fixture::ops
