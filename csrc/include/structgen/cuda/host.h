// What the CUDA host glue (csrc/ops/*/cuda_host.cpp) asks of the current stream, and the one way it
// reads device memory on the host. CUDA torch only; the CPU emulator's build (tests/cuda_emu) has
// stand-ins for c10/cuda.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/util/Exception.h>

#include <string_view>

namespace structgen::cuda_host {

// True while the current stream records a CUDA graph (torch.cuda.graph, torch.compile's
// "reduce-overhead"): no host synchronisation is allowed then, so the glue reads no device flag
// and copies nothing to the host; data checks move into the kernels, which stop with __trap() on
// a bad value, as torch's device-side asserts do.
inline bool capturing() {
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
}

// A read of device memory on the host synchronises, which a GPU refuses while a graph is captured.
// The glue reads only through to_host() and item() (tests/cuda_emu/test_graph_capture.py lints it),
// which raise then with the op's name: in the emulated build device memory is CPU tensors, whose
// reads nothing else would stop, and on a GPU the message names the op instead of a CUDA error.
inline void check_host_read(std::string_view op) {
  TORCH_CHECK(!capturing(), op,
              ": reads device memory on the host while a CUDA graph is captured (operation ",
              "not permitted when stream is capturing)");
}

// `t` copied to the host (synchronises).
inline at::Tensor to_host(const at::Tensor& t, std::string_view op) {
  check_host_read(op);
  return t.to(at::kCPU);
}

// The one value of `t` (synchronises).
template <typename T>
T item(const at::Tensor& t, std::string_view op) {
  check_host_read(op);
  return t.item<T>();
}

}  // namespace structgen::cuda_host
