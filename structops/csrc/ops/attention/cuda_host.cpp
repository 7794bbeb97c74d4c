// CUDA host glue of scaled_dot_product_attention: query, key and value made contiguous, the
// mask's per-head offsets copied to the device, then the torch-free kernel of cuda.cu (tiled)
// or ATen's math (common.h). Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <ops/attention/common.h>
#include <ops/attention/launch.h>
#include <structops/ops/scaled_dot_product_attention.h>

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <ops/runtime_names.h>

namespace structops::impl {

void scaled_dot_product_attention_out_cuda_tiled(const at::Tensor& query, const at::Tensor& key,
                                                 const at::Tensor& value,
                                                 const std::optional<at::Tensor>& attn_mask, bool is_causal,
                                                 std::optional<double> scale, bool /*enable_gqa*/,
                                                 at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                                 const at::Tensor& logsumexp) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (logsumexp.numel() == 0) return;
  const at::ScalarType ct = at::toOpMathType(query.scalar_type());
  const attention::Mask mask(attn_mask, logsumexp, key.size(-2), ct);
  const at::Tensor offsets = mask.offsets().defined() ? mask.offsets().to(out.device()) : at::Tensor();
  const attention::MaskView view = mask.view(offsets.defined() ? offsets.const_data_ptr<int64_t>() : nullptr);
  const at::Tensor q = query.contiguous(), k = key.contiguous(), v = value.contiguous();
  AttentionLaunch p;
  p.dtype = static_cast<Dtype>(query.scalar_type());
  p.l = query.size(-2);
  p.heads = logsumexp.numel() / std::max<int64_t>(1, p.l);
  p.group = attention::group_of(query, key);
  p.s = key.size(-2);
  p.e = query.size(-1);
  p.ev = value.size(-1);
  p.query = q.const_data_ptr();
  p.key = k.const_data_ptr();
  p.value = v.const_data_ptr();
  p.mask_kind = view.kind;
  p.mask = view.data;
  p.mask_offsets = view.offsets;
  p.mask_stride_l = view.stride_l;
  p.mask_stride_s = view.stride_s;
  p.causal = is_causal;
  p.scale = attention::scale_of(query, scale);
  p.out = out.data_ptr();
  p.logsumexp = logsumexp.data_ptr();
  const at::Tensor workspace = at::empty({std::max<int64_t>(1, cuda_kernels::attention_workspace_bytes(p))},
                                         out.options().dtype(at::kByte));
  p.workspace = workspace.data_ptr();
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::attention(p);
  TORCH_CHECK(error == nullptr, "scaled_dot_product_attention: CUDA kernel failed for dtype ",
              query.scalar_type(), ": ", error);
}

void scaled_dot_product_attention_out_cuda_math(const at::Tensor& query, const at::Tensor& key,
                                                const at::Tensor& value,
                                                const std::optional<at::Tensor>& attn_mask, bool is_causal,
                                                std::optional<double> scale, bool /*enable_gqa*/,
                                                at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                                const at::Tensor& logsumexp) {
  const c10::cuda::CUDAGuard guard(out.device());
  attention::math(query, key, value, attn_mask, is_causal, scale, out, logsumexp);
}

}  // namespace structops::impl
