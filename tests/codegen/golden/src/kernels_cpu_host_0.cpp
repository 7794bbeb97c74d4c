// @generated from native_functions.yaml by codegen/templates/kernels_cpu_host.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU host glue of the generated pointwise kernels of a shard of ops: the inputs brought to the
// common dtype, the host conditions decided and the numbers checked for it (as Scalar::to does),
// then the torch-free launchers in kernels_cpu_<op>.cpp. A shard, not a file per op: torch's
// headers cost a file more than its ops' glue, and a formula's edit does not change the glue.
#include <structgen/cpu/pointwise.h>
#include <fixture/include/ops/scaled_act.h>

#include <c10/util/Exception.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace cpu_kernels {
const char* scaled_act_out(const cpu::RowLaunch& p);
}  // namespace cpu_kernels

namespace impl {

void scaled_act_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out) {
  const std::array<at::Tensor, 2> so_inputs{
      cpu::operand(self, common_dtype, out.device()),
      cpu::operand(other, common_dtype, out.device()),
  };
  cpu::RowLaunch launch = cpu::make_row_launch(out, so_inputs, common_dtype, /*grain=*/32768);
  cpu::set_value(launch, 0, self);
  cpu::set_value(launch, 1, other);
  launch.conditions[0] = mode == "relu";
  launch.conditions[1] = mode == "tanh";
  launch.scalars[0] = cpu::scalar_arg(alpha, common_dtype);
  const char* error = cpu_kernels::scaled_act_out(launch);
  TORCH_CHECK(error == nullptr, "scaled_act: no CPU kernel for dtype ", common_dtype);
}

}  // namespace impl
}  // namespace fixture::ops
