// CUDA host glue of index_select, gather, take, embedding and embedding_bag: device guard, current stream,
// contiguous operands, the index values checked before the launch, then the torch-free kernels of
// index.cu.
//
// Index values are data the meta functions cannot see. torch's CUDA kernels assert on the device
// (which poisons the CUDA context); here one aminmax and a 16-byte copy to the host (one
// synchronisation per call) decide whether every value is in range, and only if one is not is the
// index copied to the host to find the first bad one in index order and raise the CPU impl's
// message (same text, same IndexError / RuntimeError). embedding_bag's offsets are checked on a
// host copy of them (a second synchronisation). While a CUDA graph is captured none of this runs
// (no synchronisation is allowed): the kernels check every index and __trap() on a bad one, as
// torch's device-side asserts do (structgen/cuda/host.h). Compiled only when the installed torch
// has CUDA (CMakeLists.txt).
#include <structgen/cuda/host.h>
#include <ops/index/launch.h>
#include <structops/ops/cumsum.h>  // cuda_kernels::cumsum_scan: the count scan runs cumsum's kernel
#include <structops/ops/embedding.h>
#include <structops/ops/embedding_bag.h>
#include <structops/ops/gather.h>
#include <structops/ops/index_select.h>
#include <structops/ops/take.h>
#include <structgen/scan_launch.h>

#include <ATen/ExpandUtils.h>
#include <ATen/ops/aminmax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// The first value of `index` (in row-major order) outside [lo, size), with its position; nullopt
// when all are in range (the common case: no copy of the index to the host).
std::optional<std::pair<int64_t, int64_t>> first_bad_index(std::string_view op, const at::Tensor& index,
                                                           int64_t lo, int64_t size) {
  if (index.numel() == 0 || cuda_host::capturing()) return std::nullopt;  // capturing: the kernels trap
  const auto [min, max] = at::aminmax(index);
  const at::Tensor bounds = cuda_host::to_host(at::stack({min.to(at::kLong), max.to(at::kLong)}), op);
  const int64_t* b = bounds.const_data_ptr<int64_t>();
  if (b[0] >= lo && b[1] < size) return std::nullopt;
  const at::Tensor flat = cuda_host::to_host(index.reshape({-1}).to(at::kLong), op).contiguous();
  const int64_t* p = flat.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    if (p[i] < lo || p[i] >= size) return std::pair{p[i], i};
  }
  TORCH_INTERNAL_ASSERT(false, "aminmax found an index outside [", lo, ", ", size,
                        ") but the host copy has none");
}

// The CPU impls' message (cpu.cpp raise_bad_index): `dim` >= 0 names a dim of `src`,
// otherwise its `size` counts `what`.
void check_indices(std::string_view op, std::string_view src, std::string_view index_name,
                   const at::Tensor& index, int64_t size, bool index_error, int64_t dim, bool negative_ok,
                   std::string_view what) {
  const int64_t lo = negative_ok ? -size : 0;
  const auto bad = first_bad_index(op, index, lo, size);
  if (!bad) return;
  std::ostringstream msg;
  msg << op << ": index " << bad->first << " is out of range for ";
  if (dim >= 0)
    msg << "dim " << dim << " of '" << src << "' with size " << size;
  else
    msg << "'" << src << "' with " << size << " " << what;
  msg << " (at position " << bad->second << " of '" << index_name << "'; expected " << lo << " <= index < "
      << size << ")";
  if (index_error) TORCH_CHECK_INDEX(false, msg.str());
  TORCH_CHECK(false, msg.str());
}

// Launches into `out`, through a contiguous stand-in if out is not contiguous (the meta layout is).
void launch(const char* name, IndexLaunch& p, const at::Tensor& out) {
  const at::Tensor dense = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  p.element_size = static_cast<int>(out.element_size());
  p.numel = out.numel();
  p.out = dense.data_ptr();
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::index(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
  if (!dense.is_same(out)) out.copy_(dense);
}

// index_select and embedding: a contiguous self as [outer, size, inner], rows picked along size.
void select(const char* name, const at::Tensor& self, int64_t d, const at::Tensor& index,
            const at::Tensor& out) {
  const at::Tensor s = self.contiguous(), idx = index.reshape({-1}).contiguous();
  IndexLaunch p;
  p.op = IndexOp::Select;
  p.index_int32 = idx.scalar_type() == at::kInt;
  for (int64_t k = 0; k < d; ++k) p.outer *= s.size(k);
  for (int64_t k = d + 1; k < s.dim(); ++k) p.inner *= s.size(k);
  p.size = s.dim() ? s.size(d) : 1;
  p.n = idx.numel();
  p.self = s.const_data_ptr();
  p.index = idx.const_data_ptr();
  launch(name, p, out);
}

}  // namespace

void index_select_out_cuda(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const int64_t d = self.dim() ? (dim < 0 ? dim + self.dim() : dim) : 0;
  const int64_t size = self.dim() ? self.size(d) : 1;
  // Checked even when out is empty (an empty self dim), as on the CPU.
  check_indices("index_select", "self", "index", index, size, /*index_error=*/true, d, /*negative_ok=*/false,
                "");
  if (out.numel() == 0) return;
  select("index_select", self, d, index, out);
}

void embedding_out_cuda(const at::Tensor& weight, const at::Tensor& indices, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const int64_t rows = weight.size(0);
  if (const auto bad = first_bad_index("embedding", indices, 0, rows)) {
    TORCH_CHECK_INDEX(false, "embedding: index ", bad->first, " is out of range for 'weight' with ", rows,
                      " rows (at position ", bad->second, " of 'indices')");
  }
  if (out.numel() == 0) return;
  select("embedding", weight, 0, indices, out);
}

void take_out_cuda(const at::Tensor& self, const at::Tensor& index, at::ScalarType /*compute_dtype*/,
                   const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (index.numel() == 0) return;
  const int64_t numel = self.numel();
  check_indices("take", "self", "index", index, numel, /*index_error=*/true, -1, /*negative_ok=*/true,
                "elements");
  // The linear positions address self's row-major order: a contiguous copy where it is not.
  const at::Tensor s = self.contiguous(), idx = index.contiguous();
  IndexLaunch p;
  p.op = IndexOp::Take;
  p.size = numel;
  p.self = s.const_data_ptr();
  p.index = idx.const_data_ptr();
  launch("take", p, out);
}

void gather_out_cuda(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool /*sparse_grad*/,
                     at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const int64_t d = self.dim() ? (dim < 0 ? dim + self.dim() : dim) : 0;
  const int64_t size = self.dim() ? self.size(d) : 1;
  check_indices("gather", "self", "index", index, size, /*index_error=*/false, d, /*negative_ok=*/false, "");
  // A 0-dim self or index counts as 1-dim (torch's rule); out has index's shape. self is read in
  // place through its strides; the index is laid out like out.
  const at::Tensor s = self.dim() ? self : self.reshape({1});
  const at::Tensor idx = (index.dim() ? index : index.reshape({1})).contiguous();
  IndexLaunch p;
  p.op = IndexOp::Gather;
  p.size = size;
  p.index_int32 = idx.scalar_type() == at::kInt;
  p.ndim = static_cast<int>(idx.dim());
  p.dim = static_cast<int>(d);
  TORCH_CHECK(p.ndim <= kPointwiseMaxDims, "gather: the CUDA kernel supports at most ", kPointwiseMaxDims,
              " dims, got ", p.ndim);
  for (int k = 0; k < p.ndim; ++k) {
    p.sizes[k] = idx.size(k);
    p.self_strides[k] = s.stride(k);
  }
  p.self = s.const_data_ptr();
  p.index = idx.const_data_ptr();
  launch("gather", p, out);
}

void embedding_bag_out_cuda(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                            bool /*scale_grad_by_freq*/, int64_t mode, bool /*sparse*/,
                            const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                            at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const int64_t rows = weight.size(0), d = weight.size(1), n = indices.numel(), bags = out.size(0);
  const int64_t noff = offsets.numel();
  // The CPU impl's offset checks, on a host copy of the offsets (they are data the shapes cannot check).
  // Capturing a graph: no host copy; the kernel traps on offsets out of order or beyond the indices.
  const at::Tensor off_host = cuda_host::capturing()
                                  ? at::Tensor()
                                  : cuda_host::to_host(offsets.to(at::kLong), "embedding_bag").contiguous();
  const int64_t* off = off_host.defined() ? off_host.const_data_ptr<int64_t>() : nullptr;
  if (off != nullptr && noff > 0) {
    TORCH_CHECK(off[0] == 0,
                "embedding_bag: offsets[0] must be 0 (the first bag starts at the first index), got ",
                off[0]);
  }
  for (int64_t i = 1; off != nullptr && i < noff; ++i) {
    TORCH_CHECK(off[i] >= off[i - 1] && off[i] <= n,
                "embedding_bag: 'offsets' must be non-decreasing and at most ", n,
                " (the number of indices), got offsets[", i, "]=", off[i], " after ", off[i - 1]);
  }
  if (bags == 0 || d == 0) return;
  // The indices some bag reads (with include_last_offset, those after the last offset are in none).
  const int64_t used = off != nullptr && include_last_offset && noff > 0 ? off[noff - 1] : n;
  check_indices("embedding_bag", "weight", "indices", indices.narrow(0, 0, used), rows, /*index_error=*/true,
                -1,
                /*negative_ok=*/false, "rows");
  // Mixed int32/int64 indices and offsets are both read as int64 (torch promotes them too).
  const at::ScalarType index_type = at::promoteTypes(indices.scalar_type(), offsets.scalar_type());
  const at::Tensor w = weight.contiguous(), ix = indices.to(index_type).contiguous();
  const at::Tensor of = offsets.to(index_type).contiguous();
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  const at::Tensor psw = weighted ? per_sample_weights->contiguous() : at::Tensor();
  EmbeddingBagLaunch p;
  p.dtype = static_cast<Dtype>(weight.scalar_type());
  p.index_int32 = index_type == at::kInt;
  p.rows = rows, p.d = d, p.n = n, p.noff = noff, p.bags = bags;
  p.mode = mode;
  p.weight = w.const_data_ptr();
  p.indices = ix.const_data_ptr();
  p.offsets = of.const_data_ptr();
  p.per_sample_weights = weighted ? psw.const_data_ptr() : nullptr;
  p.out = out.data_ptr();  // contiguous: the meta layout
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::embedding_bag(p);
  TORCH_CHECK(error == nullptr, "embedding_bag: CUDA kernel failed for dtype ", weight.scalar_type(), ": ",
              error);
}

void masked_select_out_cuda(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
  const at::Tensor s = self.expand(shape).contiguous(), m = mask.expand(shape).contiguous();
  const at::Tensor dense = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  MaskedSelectLaunch p;
  p.element_size = static_cast<int>(out.element_size());
  p.numel = s.numel();
  p.self = s.const_data_ptr();
  p.mask = m.const_data_ptr<bool>();
  p.out = dense.data_ptr();
  const int64_t chunks = (p.numel + kMaskedSelectChunk - 1) / kMaskedSelectChunk;
  const at::Tensor counts = at::empty({chunks}, out.options().dtype(at::kLong));
  p.counts = counts.data_ptr<int64_t>();
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::masked_select_count(p);
  if (error == nullptr) {  // the counts' inclusive prefix sums, in place, on cumsum's generated scan
    ScanLaunch scan;
    scan.dtype = Dtype::Int64;
    scan.n = chunks;
    scan.in = p.counts;
    scan.out = p.counts;
    at::Tensor workspace;
    if (const int64_t bytes = cuda_kernels::cumsum_scan_plan(scan).workspace_bytes; bytes > 0) {
      workspace = at::empty({bytes}, out.options().dtype(at::kByte));
      scan.workspace = workspace.data_ptr();
    }
    scan.stream = p.stream;
    error = cuda_kernels::cumsum_scan(scan);
  }
  if (error == nullptr) error = cuda_kernels::masked_select_write(p);
  TORCH_CHECK(error == nullptr, "masked_select: CUDA kernel failed for dtype ", out.scalar_type(), ": ",
              error);
  if (!dense.is_same(out)) out.copy_(dense);
}

}  // namespace structops::impl
