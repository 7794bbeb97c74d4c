// The Functionalize kernel of written overloads (see structgen/functionalize.h).
#include <structgen/functionalize.h>

#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <memory>
#include <utility>
#include <vector>

namespace structgen {
namespace {

namespace fimpl = at::functionalization::impl;

bool holds_functional(const c10::IValue& v) {
  if (v.isTensor()) return fimpl::isFunctionalTensor(v.toTensor());
  if (v.isTensorList()) return fimpl::isFunctionalTensor(v.toTensorList());
  if (v.isList()) {  // Tensor?[]
    for (const c10::IValue& e : v.toListRef()) {
      if (holds_functional(e)) return true;
    }
  }
  return false;
}

// Applies `f` to every tensor of an argument (Tensor, Tensor?, Tensor[], Tensor?[]); other
// values pass through.
template <class F>
c10::IValue map_tensors(const c10::IValue& v, const F& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) out.push_back(f(t));
    return out;
  }
  if (v.isList()) {
    const c10::List<c10::IValue> in = v.toList();
    c10::impl::GenericList out(in.elementType());
    for (const c10::IValue& e : in) out.push_back(map_tensors(e, f));
    return out;
  }
  return v;
}

at::Tensor unwrapped(const at::Tensor& t) {
  if (!fimpl::isFunctionalTensor(t)) return t;
  fimpl::sync(t);
  return fimpl::from_functional_tensor(t);
}

// A meta tensor with t's sizes, strides and dtype (symbolic sizes stay symbolic).
at::Tensor as_meta(const at::Tensor& t) {
  if (!t.defined()) return t;
  return at::empty_strided_symint(t.sym_sizes(), t.sym_strides(), t.options().device(at::kMeta));
}

class FunctionalizeAs final : public c10::OperatorKernel {
 public:
  FunctionalizeAs(std::string functional, bool dtype_from_written) : dtype_from_written_(dtype_from_written) {
    const auto dot = functional.find('.');
    name_ = functional.substr(0, dot);  // in the written op's namespace: qualified at the first call
    overload_ = dot == std::string::npos ? "" : functional.substr(dot + 1);
  }

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const auto& arguments = op.schema().arguments();
    const size_t n = arguments.size();
    std::vector<c10::IValue> args(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
    torch::jit::drop(*stack, n);

    std::vector<size_t> written;  // in schema order: the functional's returns, in order
    bool writes_functional = false, reads_functional = false;
    for (size_t i = 0; i < n; ++i) {
      const bool writes = arguments[i].alias_info() != nullptr && arguments[i].alias_info()->isWrite();
      (writes ? writes_functional : reads_functional) |= holds_functional(args[i]);
      if (writes) written.push_back(i);
    }
    if (!writes_functional) {
      // Nothing being traced is written (e.g. an out= tensor made outside the compiled region
      // is not functional): run the op itself, as torchgen's kernels do.
      TORCH_CHECK(!reads_functional, op.schema().name(),
                  ": mutating a non-functional tensor with a "
                  "functional tensor is not allowed; wrap every input in the functionalize() call");
      for (auto& a : args) stack->push_back(std::move(a));
      at::AutoDispatchSkipFunctionalize skip;
      op.callBoxed(stack);
      return;
    }

    check_on_meta(op, args);

    // The functional sibling takes every argument but the outs (kwarg-only written tensors).
    torch::jit::Stack call;
    for (size_t i = 0; i < n; ++i) {
      const bool is_out = arguments[i].kwarg_only() && arguments[i].alias_info() != nullptr &&
                          arguments[i].alias_info()->isWrite();
      if (is_out) continue;
      if (dtype_from_written_ && arguments[i].name() == "dtype" && args[i].isNone()) {
        call.emplace_back(static_cast<int64_t>(args[written.front()].toTensor().scalar_type()));
      } else {
        call.push_back(map_tensors(args[i], unwrapped));
      }
    }
    {
      at::AutoDispatchSkipFunctionalize skip;
      const std::string& written_name = op.schema().name();  // "<namespace>::add"
      const std::string qualified = written_name.substr(0, written_name.find("::") + 2) + name_;
      c10::Dispatcher::singleton().findSchemaOrThrow(qualified.c_str(), overload_.c_str()).callBoxed(call);
    }
    TORCH_INTERNAL_ASSERT(call.size() == written.size(), op.schema().name(), ": ", call.size(),
                          " results for ", written.size(), " written arguments");
    for (size_t k = 0; k < written.size(); ++k) commit(args[written[k]], call[k]);
    for (size_t k = 0; k < op.schema().returns().size(); ++k) stack->push_back(args[written[k]]);
  }

 private:
  // The written overload's own checks (out dtype castability, inplace shape, overlap), which the
  // functional call would not make: run the op on meta copies, as torchgen does for inplace ops.
  // Ops whose output size is data have no Meta kernel; their functional call checks what it can.
  static void check_on_meta(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args) {
    if (!op.hasKernelForDispatchKey(c10::DispatchKey::Meta)) return;
    const auto exclude = c10::functorch_transforms_ks |
                         c10::DispatchKeySet({c10::DispatchKey::Functionalize, c10::DispatchKey::Python,
                                              c10::DispatchKey::PythonTLSSnapshot});
    c10::impl::ExcludeDispatchKeyGuard guard(exclude);
    torch::jit::Stack meta;
    for (const auto& a : args)
      meta.push_back(map_tensors(a, [](const at::Tensor& t) {
        return as_meta(fimpl::isFunctionalTensor(t) ? fimpl::from_functional_tensor(t) : t);
      }));
    op.callBoxed(meta);
  }

  static void commit(const c10::IValue& target, const c10::IValue& result) {
    if (target.isTensorList()) {
      const std::vector<at::Tensor> targets = target.toTensorVector();
      const std::vector<at::Tensor> results = result.toTensorVector();
      fimpl::replace_(targets, results);
      fimpl::commit_update(targets);
      fimpl::sync(targets);
      return;
    }
    const at::Tensor& t = target.toTensor();
    fimpl::replace_(t, result.toTensor());
    fimpl::commit_update(t);
    fimpl::sync(t);
  }

  std::string name_;
  std::string overload_;
  bool dtype_from_written_;
};

}  // namespace

torch::CppFunction functionalize_as(std::string functional, bool dtype_from_written) {
  return torch::CppFunction::makeFromBoxedFunctor(
      std::make_unique<FunctionalizeAs>(std::move(functional), dtype_from_written));
}

}  // namespace structgen
