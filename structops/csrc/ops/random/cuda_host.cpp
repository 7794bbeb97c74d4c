// CUDA host glue of dropout: device guard, current stream, the generator's seed and offset
// (structgen/cuda/random.h), the input made contiguous for the torch-free kernel of cuda.cu.
// Compiled only when the installed torch has CUDA (CMakeLists.txt), and by the CPU emulator.
#include <structops/ops/dropout.h>
#include <ops/random/launch.h>
#include <ops/random/probability.h>

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <structgen/cuda/random.h>

#include <cmath>

#include <ops/runtime_names.h>

namespace structops::impl {

void dropout_out_cuda(const at::Tensor& input, double p, std::optional<bool> train,
                      at::ScalarType /*compute_dtype*/, const at::Tensor& out, const at::Tensor& mask) {
  const c10::cuda::CUDAGuard guard(out.device());
  check_probability(p);
  if (input.numel() == 0) return;
  if (!training(train)) {
    out.copy_(input);
    mask.fill_(true);
    return;
  }
  const at::Tensor x = input.contiguous();
  const bool direct = out.is_contiguous() && mask.is_contiguous();
  const at::Tensor o = direct ? out : at::empty(x.sizes(), out.options());
  const at::Tensor m = direct ? mask : at::empty(x.sizes(), mask.options());
  DropoutLaunch l;
  l.dtype = static_cast<Dtype>(out.scalar_type());
  l.n = x.numel();
  l.in = x.const_data_ptr();
  l.out = o.data_ptr();
  l.mask = m.data_ptr<bool>();
  l.keep_threshold = static_cast<uint32_t>(std::ceil((1.0 - p) * 16777216.0));  // 2^24 * (1 - p)
  l.scale = dropout_scale(p, train);
  l.seed = structgen::cuda_host::philox_seed(cuda_kernels::kDropoutOffsetIncrement);
  l.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::dropout(l);
  TORCH_CHECK(error == nullptr, "dropout: CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
  if (!direct) {
    out.copy_(o);
    mask.copy_(m);
  }
}

}  // namespace structops::impl
