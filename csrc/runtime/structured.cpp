#include <structgen/structured.h>

#include <structgen/autotune.h>

#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/ScalarType.h>

#include <structgen/parallel.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace structgen {
namespace {

#if defined(__linux__)
// Linux 5.14's madvise advice; an older kernel answers EINVAL, and this is not tried again.
constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE
#if defined(MADV_POPULATE_WRITE)
static_assert(MADV_POPULATE_WRITE == kPopulateWrite);
#endif
#endif

// Maps the pages of a large fresh CPU output, in parallel, before the kernel writes it. Above
// glibc's largest mmap threshold (32 MiB) malloc hands out freshly mapped memory, and below it
// often does too (a free at the top of the heap past the trim threshold returns the pages); a
// kernel writing it takes a page fault per 4 KiB page (~1 us each on this VM: a 4 MiB add costs
// 1.2 ms fresh against 70 us reused, for torch's own ops as much). madvise(MADV_POPULATE_WRITE)
// maps each thread's half in one call, without the fault per page: with every allocation fresh
// (MALLOC_MMAP_THRESHOLD_=131072), 4-16 MiB outputs over four runs: add 0.99-1.02x -> 0.93-1.17x
// torch (1.07 on average), exp 1.05-1.23x -> 1.23-1.43x. Memory an allocator reuses is mapped
// already (a page from the middle says so: mincore, ~1 us on the VM against the >= 50 us of
// writing 4 MiB, which is why smaller outputs are not checked), and mapping it again would cost a
// walk of its page tables, so it is left alone.
constexpr int64_t kFreshBytes = int64_t{4} << 20;

void map_fresh_pages(void* data, int64_t nbytes) {
#if defined(__linux__)
  constexpr int64_t kChunk = int64_t{2} << 20;
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed)) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(nbytes)) & ~(page - 1);
  unsigned char resident = 0;
  const uintptr_t middle = begin + ((end - begin) / 2 & ~(page - 1));
  if (mincore(reinterpret_cast<void*>(middle), page, &resident) != 0 || (resident & 1)) return;
  const int64_t chunks = static_cast<int64_t>((end - begin + kChunk - 1) / kChunk);
  structgen::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    const uintptr_t lo = begin + static_cast<uintptr_t>(b * kChunk);
    const uintptr_t hi = std::min(end, begin + static_cast<uintptr_t>(e * kChunk));
    if (madvise(reinterpret_cast<void*>(lo), hi - lo, kPopulateWrite) != 0 && errno == EINVAL) {
      unsupported.store(true, std::memory_order_relaxed);
    }
  });
#else
  (void)data, (void)nbytes;
#endif
}

// Every CPU output passes here: the size is checked before anything else.
at::Tensor fresh(at::Tensor t) {
  const auto nbytes = static_cast<int64_t>(t.nbytes());
  if (nbytes >= kFreshBytes) map_fresh_pages(t.data_ptr(), nbytes);
  return t;
}

// The current call's outputs that no input overlaps (autotune::is_private_output), by identity:
// they are alive while the call runs, and check_devices forgets them when the next one starts.
// An op with more outputs than this has the rest timed on scratch copies.
struct PrivateOutputs {
  std::array<const c10::TensorImpl*, 4> impls{};
  size_t count = 0;
};
constinit thread_local PrivateOutputs private_outputs;  // constant: no guard on each access

void mark_private(const at::Tensor& t) {
  PrivateOutputs& p = private_outputs;
  if (p.count < p.impls.size()) p.impls[p.count++] = t.unsafeGetTensorImpl();
}

}  // namespace

bool autotune::is_private_output(const at::Tensor& t) {
  const PrivateOutputs& p = private_outputs;
  const auto end = p.impls.begin() + p.count;
  return std::find(p.impls.begin(), end, t.unsafeGetTensorImpl()) != end;
}

static at::Tensor new_output(const TensorSpec& spec, at::Device device) {
  // A CPU output straight from the allocator, as torch's own structured kernels make theirs
  // (at::detail::empty_cpu; every kernel writes all of its output, so at::empty's NaN fill under
  // deterministic algorithms has nothing to show): at::empty through the dispatcher costs a
  // small call ~0.1-0.2 us more.
  // Symbolic sizes (fake tensors) and other devices take the dispatcher.
  if (device.is_cpu()) {
    if (const auto sizes = c10::asIntArrayRefSlowOpt(spec.sizes)) {
      if (spec.strides.empty()) return fresh(at::detail::empty_cpu(*sizes, spec.dtype));
      if (const auto strides = c10::asIntArrayRefSlowOpt(spec.strides)) {
        return fresh(at::detail::empty_strided_cpu(*sizes, *strides, spec.dtype));
      }
    }
  }
  auto options = at::TensorOptions().dtype(spec.dtype).device(device);
  if (spec.strides.empty()) return at::empty_symint(spec.sizes, options);
  return at::empty_strided_symint(spec.sizes, spec.strides, options);
}

at::Tensor allocate(const TensorSpec& spec, at::Device device) {
  at::Tensor t = new_output(spec, device);
  mark_private(t);
  return t;
}

const at::Tensor& tensor_or_undefined(const std::optional<at::Tensor>& t) {
  static const at::Tensor undefined;
  return t.has_value() ? *t : undefined;
}

at::Device device_of(c10::ArrayRef<NamedTensor> tensors, at::Device otherwise) {
  const at::Tensor* first = nullptr;
  for (const auto& t : tensors) {
    if (!t.tensor.defined()) continue;
    if (!(t.tensor.device().is_cpu() && t.tensor.dim() == 0)) return t.tensor.device();
    if (first == nullptr) first = &t.tensor;
  }
  return first != nullptr ? first->device() : otherwise;
}

void check_devices(std::string_view op, at::Device device, c10::ArrayRef<NamedTensor> tensors,
                   bool cpu_scalars) {
  private_outputs.count = 0;  // a new call: the previous one's outputs are no longer its own
  for (const auto& t : tensors) {
    if (!t.tensor.defined() || t.tensor.device() == device) continue;
    const bool cpu_scalar = t.tensor.device().is_cpu() && t.tensor.dim() == 0;
    TORCH_CHECK(cpu_scalar && cpu_scalars, op, ": expected all tensors on ", device, ", but '", t.name,
                "' is on ", t.tensor.device(),
                cpu_scalar ? " (only pointwise ops take a 0-dim CPU tensor as a scalar)" : "");
  }
}

namespace {

// Overlap checks read storage geometry; fake tensors with symbolic sizes have none worth
// checking (and numel() would throw on them), so those are left to the real run.
bool checkable(const at::Tensor& t) {
  return t.defined() && !t.unsafeGetTensorImpl()->has_symbolic_sizes_strides() && !t.is_meta();
}

void check_overlaps(const at::Tensor& written, c10::ArrayRef<NamedTensor> inputs, bool allow_full_overlap) {
  if (!checkable(written)) return;
  at::assert_no_internal_overlap(written);
  for (const auto& in : inputs) {
    if (!checkable(in.tensor)) continue;
    if (allow_full_overlap) {
      at::assert_no_partial_overlap(written, in.tensor);
    } else {
      at::assert_no_overlap(written, in.tensor);
    }
  }
}

// An out= that overlaps no input is the call's own to write (autotune::is_private_output).
void mark_if_apart(const at::Tensor& out, c10::ArrayRef<NamedTensor> inputs) {
  if (!checkable(out)) return;
  for (const auto& in : inputs) {
    const bool apart =
        !in.tensor.defined() ||
        (checkable(in.tensor) && at::get_overlap_status(out, in.tensor) == at::MemOverlapStatus::No);
    if (!apart) return;
  }
  mark_private(out);
}

void check_dtype(std::string_view op, std::string_view name, at::ScalarType written, at::ScalarType result,
                 OutDtype out_dtype) {
  if (out_dtype == OutDtype::exact) {
    TORCH_CHECK(written == result, op, ": expected '", name, "' to have the result dtype ", result,
                ", but got ", written, " (", op, " does not cast its result)");
    return;
  }
  TORCH_CHECK(at::canCast(result, written), op, ": result type ", result,
              " can't be cast to the desired output type ", written, " of '", name, "'");
}

}  // namespace

void prepare_out(std::string_view op, std::string_view name, at::Tensor& out, const TensorSpec& spec,
                 at::Device device, bool allow_full_overlap, OutDtype out_dtype,
                 c10::ArrayRef<NamedTensor> inputs) {
  if (at::GradMode::is_enabled() && !device.is_meta()) {
    bool any_grad = out.requires_grad();
    for (const auto& in : inputs) any_grad = any_grad || (in.tensor.defined() && in.tensor.requires_grad());
    TORCH_CHECK(!any_grad, op,
                ": the out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad");
  }
  TORCH_CHECK(out.device() == device, op, ": expected '", name, "' on ", device,
              " like the inputs, but it is on ", out.device());
  check_dtype(op, name, out.scalar_type(), spec.dtype, out_dtype);
  check_overlaps(out, inputs, allow_full_overlap);
  if (same_sizes(out.sym_sizes(), spec.sizes)) return mark_if_apart(out, inputs);
  // An out that is also an input (possible only where full overlap is allowed: pointwise ops)
  // cannot be resized: the kernel would read the resized input. PyTorch raises here too. A
  // strided view's overlap is too hard to tell: it counts as the input only on the same storage.
  if (checkable(out)) {
    for (const auto& in : inputs) {
      if (!checkable(in.tensor)) continue;
      const auto overlap = at::get_overlap_status(out, in.tensor);
      TORCH_CHECK(overlap == at::MemOverlapStatus::No ||
                      (overlap == at::MemOverlapStatus::TooHard && !out.is_alias_of(in.tensor)),
                  op, ": output with shape ", out.sym_sizes(), " doesn't match the broadcast shape ",
                  c10::SymIntArrayRef(spec.sizes), " ('", name, "' is also the input '", in.name, "')");
    }
  }
  if (out.sym_numel() != 0) {
    TORCH_WARN("An output with one or more elements was resized since it had shape ", out.sym_sizes(),
               ", which does not match the required output shape ", c10::SymIntArrayRef(spec.sizes),
               ". This behavior is deprecated, and in a future "
               "PyTorch release outputs will not be resized unless they have zero elements. You "
               "can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
               "with t.resize_(0).");
  }
  out.resize__symint(spec.sizes);
  // A freshly resized out takes the layout the meta function chose, as in PyTorch.
  if (!spec.strides.empty()) out.as_strided__symint(spec.sizes, spec.strides);
  mark_if_apart(out, inputs);
}

void check_inplace(std::string_view op, const at::Tensor& self, const TensorSpec& spec, OutDtype out_dtype,
                   c10::ArrayRef<NamedTensor> inputs) {
  // TensorIterator's order: memory overlap, then shape, then castability.
  check_overlaps(self, inputs, /*allow_full_overlap=*/true);
  TORCH_CHECK(same_sizes(self.sym_sizes(), spec.sizes), op, ": output with shape ", self.sym_sizes(),
              " doesn't match the broadcast shape ", c10::SymIntArrayRef(spec.sizes));
  check_dtype(op, "self", self.scalar_type(), spec.dtype, out_dtype);
}

OutputTarget::OutputTarget(at::Tensor& dest, const TensorSpec& spec, bool must_not_alias_inputs,
                           c10::ArrayRef<NamedTensor> inputs, bool any_strides)
    : dest_(dest), target_(dest) {
  bool layout_matches = dest.scalar_type() == spec.dtype;
  if (layout_matches && any_strides) {
    // sizes are the spec's (prepare_out, check_inplace); the kernel takes any strides
  } else if (layout_matches && spec.strides.empty()) {
    layout_matches = dest.is_contiguous();
  } else if (layout_matches) {
    auto strides = dest.sym_strides();
    for (size_t i = 0; i < strides.size(); ++i) {
      // Strides of size-1 dims never matter for addressing.
      if (!same(spec.sizes[i], 1) && !same(strides[i], spec.strides[i])) {
        layout_matches = false;
        break;
      }
    }
  }
  bool aliased = false;
  if (must_not_alias_inputs && checkable(dest)) {
    for (const auto& in : inputs) {
      if (checkable(in.tensor) && at::get_overlap_status(dest, in.tensor) != at::MemOverlapStatus::No) {
        aliased = true;
      }
    }
  }
  if (!layout_matches || aliased) {
    proxy_ = true;
    target_ = allocate(spec, dest.device());
  }
}

void OutputTarget::commit() {
  if (proxy_) dest_.copy_(target_);
}

std::vector<at::Tensor> allocate(const std::vector<TensorSpec>& specs, at::Device device) {
  std::vector<at::Tensor> out;
  out.reserve(specs.size());
  for (const auto& spec : specs) out.push_back(allocate(spec, device));
  return out;
}

void prepare_out(std::string_view op, std::string_view name, at::TensorList out,
                 const std::vector<TensorSpec>& specs, at::Device device, bool allow_full_overlap,
                 OutDtype out_dtype, c10::ArrayRef<NamedTensor> inputs) {
  TORCH_CHECK(out.size() == specs.size(), op, ": expected '", name, "' to be a list of ", specs.size(),
              " tensors (one per output), got ", out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    at::Tensor element = out[i];  // a handle on the user's tensor: resizing it resizes theirs
    const std::string element_name = std::string(name) + "[" + std::to_string(i) + "]";
    prepare_out(op, element_name, element, specs[i], device, allow_full_overlap, out_dtype, inputs);
    // The elements must not overlap each other either.
    for (size_t j = 0; j < i; ++j) check_overlaps(element, {{"out", out[j]}}, /*allow_full_overlap=*/false);
  }
}

OutputTargets::OutputTargets(at::TensorList dest, const std::vector<TensorSpec>& specs)
    : dest_(dest.begin(), dest.end()) {
  targets_.reserve(dest_.size());  // OutputTarget keeps a reference into dest_: no reallocation
  tensors_.reserve(dest_.size());
  for (size_t i = 0; i < dest_.size(); ++i) {
    targets_.emplace_back(dest_[i], specs[i], /*must_not_alias_inputs=*/false, c10::ArrayRef<NamedTensor>{},
                          /*any_strides=*/false);
    tensors_.push_back(targets_.back().tensor());
  }
}

void OutputTargets::commit() {
  for (auto& t : targets_) t.commit();
}

}  // namespace structgen
