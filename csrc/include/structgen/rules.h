// The C++ lowering of the rule language (codegen/rules/): what generated meta functions call.
//
// Every builtin of docs/rules.md is one function here, working on SymInt so fake tensors with
// symbolic shapes take the same path. Failures raise with the op's name, the argument, the
// rule and the expected and actual values; python/structgen/rules.py mirrors each function.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <structgen/structured.h>

namespace structgen::rules {

using Dims = c10::SymDimVector;

// The dtype an output is written in, the one its kernel computes in (PyTorch's opmath: float
// for half and bfloat16, the result dtype otherwise, unless a promotion kind says more) and the
// common dtype the inputs are brought to (TensorIterator's: the promoted dtype, which differs
// from the result for comparisons (bool result) and complex-to-real ops).
struct Dtypes {
  at::ScalarType result;
  at::ScalarType compute;
  at::ScalarType common;
  // promote(): torch.result_type of the arguments, before the kind (what `allowed` restricts).
  at::ScalarType promoted = at::ScalarType::Undefined;
  static Dtypes of(at::ScalarType t);
};

// PyTorch's elementwise type-promotion kinds (torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND).
enum class Promotion { DEFAULT, NO_OPMATH, INT_TO_FLOAT, ALWAYS_BOOL, COMPLEX_TO_FLOAT, BOOL_TO_LONG };
// Result dtypes of reductions: SUM (integers -> int64), SAME, FLOAT (mean: needs a floating input),
// REAL (var/std: as FLOAT, a complex input gives its real type), BOOL (all/any: bool, uint8 stays
// uint8), LONG (argmax/argmin), OPMATH (a floating input's compute type: float for float16 and
// bfloat16, as rms_norm's rstd).
enum class Reduction { SUM, SAME, FLOAT, REAL, BOOL, LONG, OPMATH };

// Where a bound dim came from, for messages: tensors[1].size(-2), self.shape[0:2].
struct Site {
  std::string_view tensor;
  int64_t element = -1;  // index into a Tensor[] argument, or -1
  int64_t index = 0;     // dim (negative: from the end)
  int64_t end = 0;       // groups: one past the last dim
  bool group = false;
  bool argument = false;  // an int[] argument used as a pattern group (`*normalized_shape`)
  std::string str() const;
};

struct NamedSizes {
  std::string_view name;
  c10::SymIntArrayRef sizes;
};

inline Dims sym(c10::SymIntArrayRef a) { return Dims(a.begin(), a.end()); }
Dims sym(at::IntArrayRef a);
inline Dims sizes(const at::Tensor& t) { return sym(t.sym_sizes()); }
Dims join(std::initializer_list<Dims> parts);
std::vector<int64_t> one_dim(const c10::SymInt& d);
std::vector<int64_t> one_dim(std::optional<int64_t> d);  // None: no dims (an empty list)
std::vector<int64_t> concrete(c10::SymIntArrayRef dims);
inline at::IntArrayRef concrete(at::IntArrayRef dims) { return dims; }  // already ints: no copy

// Patterns.
void check_nonempty(std::string_view op, std::string_view name, at::TensorList tensors);
void check_rank(std::string_view op, std::string_view name, int64_t element, std::string_view pattern,
                int64_t rank, int64_t expected, bool at_least);
int64_t group_length(std::string_view op, std::string_view name, int64_t element, std::string_view pattern,
                     const c10::SymInt& position, int64_t rank);
void check_literal(std::string_view op, const Site& site, const c10::SymInt& size, int64_t literal,
                   std::string_view pattern);
void check_same(std::string_view op, const Site& bound, const c10::SymInt& expected, const Site& site,
                const c10::SymInt& actual, std::string_view dim);
void check_same_dims(std::string_view op, const Site& bound, c10::SymIntArrayRef expected, const Site& site,
                     c10::SymIntArrayRef actual, std::string_view group);

// Shape builtins.
int64_t wrap_dim(std::string_view op, std::string_view name, int64_t dim, int64_t rank);
Dims broadcast(std::string_view op, std::initializer_list<NamedSizes> inputs);
// None reduces every dim; so does [] unless empty_reduces_all is false (torch.all/any: [] reduces none).
std::vector<int64_t> reduced_dims(std::string_view op, std::string_view name, int64_t rank,
                                  at::OptionalIntArrayRef dim, bool empty_reduces_all = true);
Dims reduce(std::string_view op, std::string_view name, c10::SymIntArrayRef sizes,
            at::OptionalIntArrayRef dim, bool keepdim, bool empty_reduces_all = true);
Dims matmul(std::string_view op, std::string_view a_name, c10::SymIntArrayRef a, std::string_view b_name,
            c10::SymIntArrayRef b);
Dims cat(std::string_view op, std::string_view name, at::TensorList tensors, const c10::SymInt& dim);
Dims stack(std::string_view op, std::string_view name, at::TensorList tensors, const c10::SymInt& dim);
// torch.split_with_sizes: one shape per element, `src` with dim `dim` of size sizes[i]; the sizes
// must be non-negative and sum to src.size(dim).
std::vector<Dims> split(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src,
                        std::string_view sizes_name, const Dims& sizes, const c10::SymInt& dim);
// The specs of a Tensor[] output: contiguous elements of one dtype.
std::vector<TensorSpec> specs(std::vector<Dims>&& shapes, at::ScalarType dtype);
Dims index(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src, const c10::SymInt& dim,
           std::string_view index_name, c10::SymIntArrayRef index);
// torch.gather: index's shape; index has src's rank (a 0-dim tensor counts as 1-dim) and is no
// larger than src in every dim but `dim` (unchecked when index is empty).
Dims gather(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src, const c10::SymInt& dim,
            std::string_view index_name, c10::SymIntArrayRef index);
c10::SymInt window(std::string_view op, const c10::SymInt& n, const c10::SymInt& k, const c10::SymInt& s,
                   const c10::SymInt& p, const c10::SymInt& d, bool ceil_mode);
c10::SymInt sum(c10::SymIntArrayRef values);
Dims ones(const c10::SymInt& n);
// values[i] of an int[] argument, Python's negative indices included (IndexError otherwise).
c10::SymInt item(std::string_view op, std::string_view name, const Dims& values, const c10::SymInt& i);
inline c10::SymInt max(const c10::SymInt& a, const c10::SymInt& b) { return a.max(b); }
// Tuning keys (an op's `kernels:`): the smallest power of two >= x (0 for x <= 0), and whether
// t's innermost dim (smallest stride among dims of size > 1) is one of `dims`.
c10::SymInt bucket_pow2(const c10::SymInt& x);
// "[2, 3]": a shape in error messages; "-1.5": a Scalar (without the header that streams one).
std::string show(c10::SymIntArrayRef dims);
std::string show(const at::Scalar& value);
bool innermost(const at::Tensor& t, at::IntArrayRef dims);
inline c10::SymInt min(const c10::SymInt& a, const c10::SymInt& b) { return a.min(b); }
c10::SymInt floordiv(std::string_view op, const c10::SymInt& a, const c10::SymInt& b);
c10::SymInt mod(std::string_view op, const c10::SymInt& a, const c10::SymInt& b);
// A check's comparison of numbers ('int(min_val) >= 0', 'p > 1'), as Python compares them: exactly,
// an int with a float too; NaN is unordered; complex numbers by == and != only (else raises).
bool compare(std::string_view op, const at::Scalar& a, std::string_view relation, const at::Scalar& b);
inline at::Scalar number(const c10::SymInt& x) { return at::Scalar(x.guard_int(__FILE__, __LINE__)); }

// Dtype builtins and checks.
Dtypes promote(std::string_view op, std::initializer_list<NamedTensor> tensors,
               std::initializer_list<at::TensorList> lists, std::initializer_list<at::Scalar> scalars,
               Promotion kind, std::initializer_list<std::optional<at::Scalar>> optional_scalars = {});
Dtypes reduction(std::string_view op, std::string_view name, at::ScalarType input,
                 std::optional<at::ScalarType> override_dtype, Reduction kind);
constexpr uint64_t bit(at::ScalarType t) { return uint64_t{1} << static_cast<int>(t); }
void check_allowed(std::string_view op, std::string_view name, at::ScalarType dtype, uint64_t mask,
                   std::string_view allowed);
// `allowed` for the tensors of a promote(): their promoted dtype (torch checks the common dtype,
// so an int tensor with a bool one is fine where bool alone is not).
void check_allowed_promoted(std::string_view op, std::initializer_list<NamedTensor> tensors,
                            at::ScalarType promoted, uint64_t mask, std::string_view allowed);
void check_alpha(std::string_view op, at::ScalarType dtype, const at::Scalar& alpha);
// pow with a Scalar exponent: no negative integral exponent for an integral result.
void check_integer_power(std::string_view op, at::ScalarType dtype, const at::Scalar& exponent);
void check_fits(std::string_view op, std::string_view name, at::ScalarType dtype, const at::Scalar& value,
                bool integral_only);
void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors);
// Reductions with no identity (amax, amin): every reduced dim must have elements (IndexError, as torch).
void check_nonempty(std::string_view op, std::string_view name, c10::SymIntArrayRef sizes,
                    const std::vector<int64_t>& reduced);
// A p-norm with no identity (p < 0 or p = +inf; None is 2) of an empty reduced dim raises, as
// torch.linalg.vector_norm (a RuntimeError there).
void check_norm_nonempty(std::string_view op, std::string_view name, const std::optional<at::Scalar>& p,
                         c10::SymIntArrayRef sizes, const std::vector<int64_t>& reduced);

}  // namespace structgen::rules
