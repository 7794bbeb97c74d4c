// structops' hand-written code calls the runtime (structgen) unqualified, as its generated code
// does (codegen/templates/runtime_names.j2): structops' namespace, and the two it shares with the
// runtime's kernel building blocks (cpu, cuda_kernels), see the runtime's names. Included by every
// file of csrc/ops/ that opens structops' namespace; torch-free, so device code includes it too.
#pragma once

namespace structgen::cpu {}
namespace structgen::cuda_kernels {}

namespace structops {
using namespace ::structgen;
}  // namespace structops

namespace structops::cpu {
using namespace ::structgen::cpu;
}  // namespace structops::cpu

namespace structops::cuda_kernels {
using namespace ::structgen::cuda_kernels;
}  // namespace structops::cuda_kernels
