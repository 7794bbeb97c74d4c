#include <structgen/rules.h>

#include <ATen/Dispatch.h>
#include <ATen/core/Formatting.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DefaultDtype.h>
#include <c10/util/overflows.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace structgen::rules {

namespace {

std::string element_name(std::string_view name, int64_t element) {
  std::ostringstream s;
  s << name;
  if (element >= 0) s << "[" << element << "]";
  return s.str();
}

}  // namespace

std::string show(const at::Scalar& value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string show(c10::SymIntArrayRef dims) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
  s << "]";
  return s.str();
}

namespace {

// at::toOpMathType, without its internal assert on the dtypes it does not list (uint16/32/64):
// those compute as themselves, and the kernels' dtype dispatch names them as unsupported.
at::ScalarType opmath_of(at::ScalarType t) {
  if (t == at::kHalf || t == at::kBFloat16 || c10::isFloat8Type(t)) return at::kFloat;
  if (t == at::kComplexHalf) return at::kComplexFloat;
  return t;
}

}  // namespace

Dtypes Dtypes::of(at::ScalarType t) { return {t, opmath_of(t), t, t}; }

std::string Site::str() const {
  std::ostringstream s;
  s << element_name(tensor, element);
  if (group && !argument) {
    s << ".shape[" << index << ":";
    if (end != 0 || index >= 0) s << end;
    s << "]";
  } else if (!argument) {
    s << ".size(" << index << ")";
  }
  return s.str();
}

Dims sym(at::IntArrayRef a) {
  Dims out;
  for (int64_t x : a) out.emplace_back(x);
  return out;
}

Dims join(std::initializer_list<Dims> parts) {
  Dims out;
  for (const auto& p : parts) out.append(p.begin(), p.end());
  return out;
}

std::vector<int64_t> one_dim(const c10::SymInt& d) { return {d.guard_int(__FILE__, __LINE__)}; }
std::vector<int64_t> one_dim(std::optional<int64_t> d) {
  return d.has_value() ? std::vector<int64_t>{*d} : std::vector<int64_t>{};
}

std::vector<int64_t> concrete(c10::SymIntArrayRef dims) {
  std::vector<int64_t> out;
  for (const auto& d : dims) out.push_back(d.guard_int(__FILE__, __LINE__));
  return out;
}

void check_nonempty(std::string_view op, std::string_view name, at::TensorList tensors) {
  TORCH_CHECK(!tensors.empty(), op, ": '", name, "' must be a non-empty list of tensors");
}

void check_rank(std::string_view op, std::string_view name, int64_t element, std::string_view pattern,
                int64_t rank, int64_t expected, bool at_least) {
  const bool ok = at_least ? rank >= expected : rank == expected;
  TORCH_CHECK(ok, op, ": '", element_name(name, element), "' must have ", at_least ? "at least " : "",
              expected, " dims to match ", pattern, ", got ", rank);
}

int64_t group_length(std::string_view op, std::string_view name, int64_t element, std::string_view pattern,
                     const c10::SymInt& position, int64_t rank) {
  // `*g:d` takes the dims before position d, a dim index wrapped like PyTorch's dim arguments.
  const int64_t d = position.guard_int(__FILE__, __LINE__);
  TORCH_CHECK_INDEX(-rank <= d && d < rank, op, ": dim ", d, " is out of range for '",
                    element_name(name, element), "' with ", rank, " dims (pattern ", pattern,
                    "; expected a dim in [", -rank, ", ", rank - 1, "])");
  return d < 0 ? d + rank : d;
}

void check_literal(std::string_view op, const Site& site, const c10::SymInt& size, int64_t literal,
                   std::string_view pattern) {
  TORCH_CHECK(size == literal, op, ": ", site.str(), "=", size, " must equal ", literal, " (pattern ",
              pattern, ")");
}

void check_same(std::string_view op, const Site& bound, const c10::SymInt& expected, const Site& site,
                const c10::SymInt& actual, std::string_view dim) {
  TORCH_CHECK(expected == actual, op, ": ", bound.str(), "=", expected, " must equal ", site.str(), "=",
              actual, " (dim ", dim, ")");
}

void check_same_dims(std::string_view op, const Site& bound, c10::SymIntArrayRef expected, const Site& site,
                     c10::SymIntArrayRef actual, std::string_view group) {
  bool same = expected.size() == actual.size();
  for (size_t i = 0; same && i < expected.size(); ++i) same = expected[i] == actual[i];
  TORCH_CHECK(same, op, ": ", bound.str(), "=", show(expected), " must equal ", site.str(), "=", show(actual),
              " (group *", group, ")");
}

int64_t wrap_dim(std::string_view op, std::string_view name, int64_t dim, int64_t rank) {
  // A 0-dim tensor accepts dims 0 and -1, as in PyTorch. IndexError, as torch raises.
  const int64_t r = std::max<int64_t>(rank, 1);
  TORCH_CHECK_INDEX(-r <= dim && dim < r, op, ": dim ", dim, " is out of range for '", name, "' with ", rank,
                    " dims (expected to be in range of [", -r, ", ", r - 1, "])");
  return dim < 0 ? dim + r : dim;
}

Dims broadcast(std::string_view op, std::initializer_list<NamedSizes> inputs) {
  size_t ndim = 0;
  for (const auto& in : inputs) ndim = std::max(ndim, in.sizes.size());
  Dims shape(ndim, c10::SymInt(1));
  for (const auto& in : inputs) {
    const size_t offset = ndim - in.sizes.size();
    for (size_t i = 0; i < in.sizes.size(); ++i) {
      auto& out = shape[offset + i];
      const auto& size = in.sizes[i];
      if (same(size, 1)) continue;
      if (same(out, 1)) {
        out = size;
        continue;
      }
      if (!same(size, out)) {
        // The message names the first input that set this dim (found only on failure).
        std::string_view owner;
        for (const auto& t : inputs) {
          const size_t k = offset + i + t.sizes.size();
          if (k >= ndim && !same(t.sizes[k - ndim], 1)) {
            owner = t.name;
            break;
          }
        }
        std::ostringstream shapes;
        for (const auto& t : inputs)
          shapes << (&t == inputs.begin() ? "" : ", ") << t.name << "=" << show(t.sizes);
        TORCH_CHECK(false, op, ": the size of '", in.name, "' (", size, ") must match the size of '", owner,
                    "' (", out, ") at non-singleton dimension ",
                    static_cast<int64_t>(offset + i) - static_cast<int64_t>(ndim),
                    "; shapes: ", shapes.str());
      }
    }
  }
  return shape;
}

std::vector<int64_t> reduced_dims(std::string_view op, std::string_view name, int64_t rank,
                                  at::OptionalIntArrayRef dim, bool empty_reduces_all) {
  // None (or [] where empty_reduces_all) reduces every dim; duplicates are an error, as in PyTorch.
  std::vector<int64_t> out;
  if (!dim.has_value() || (dim->empty() && empty_reduces_all)) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(rank, 1), false);
  for (int64_t d : *dim) {
    const int64_t w = wrap_dim(op, name, d, rank);
    TORCH_CHECK(!seen[w], op, ": dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (rank > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Dims reduce(std::string_view op, std::string_view name, c10::SymIntArrayRef sizes,
            at::OptionalIntArrayRef dim, bool keepdim, bool empty_reduces_all) {
  const auto reduced = reduced_dims(op, name, sizes.size(), dim, empty_reduces_all);
  Dims out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    const bool r = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (!r) {
      out.push_back(sizes[d]);
    } else if (keepdim) {
      out.emplace_back(1);
    }
  }
  return out;
}

Dims matmul(std::string_view op, std::string_view a_name, c10::SymIntArrayRef a, std::string_view b_name,
            c10::SymIntArrayRef b) {
  TORCH_CHECK(!a.empty() && !b.empty(), op, ": both arguments need at least 1 dim, but '", a_name, "' has ",
              a.size(), " and '", b_name, "' has ", b.size());
  // A 1-D left operand is a row [1, k] whose n dim is dropped; a 1-D right operand a column.
  const int64_t ka = static_cast<int64_t>(a.size()) - 1;
  const int64_t kb = b.size() == 1 ? 0 : static_cast<int64_t>(b.size()) - 2;
  check_same(op, Site{a_name, -1, -1}, a[ka], Site{b_name, -1, b.size() == 1 ? -1 : -2}, b[kb], "k");
  const c10::SymIntArrayRef ba = a.size() > 2 ? a.slice(0, a.size() - 2) : c10::SymIntArrayRef();
  const c10::SymIntArrayRef bb = b.size() > 2 ? b.slice(0, b.size() - 2) : c10::SymIntArrayRef();
  Dims out = broadcast(op, {{a_name, ba}, {b_name, bb}});
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b[b.size() - 1]);
  return out;
}

namespace {

// torch.cat skips 1-D empty tensors (shape [0]) in its shape checks: legacy behaviour kept.
bool legacy_empty(const at::Tensor& t) { return t.dim() == 1 && t.sym_size(0) == 0; }

}  // namespace

Dims cat(std::string_view op, std::string_view name, at::TensorList tensors, const c10::SymInt& dim) {
  check_nonempty(op, name, tensors);
  int64_t ref = -1;
  for (size_t i = 0; i < tensors.size() && ref < 0; ++i) {
    if (!legacy_empty(tensors[i])) ref = static_cast<int64_t>(i);
  }
  if (ref < 0) return sizes(tensors[0]);
  const auto& first = tensors[ref];
  TORCH_CHECK(first.dim() > 0, op, ": zero-dimensional tensor (", element_name(name, ref),
              ") cannot be concatenated");
  const int64_t d = wrap_dim(op, element_name(name, ref), dim.guard_int(__FILE__, __LINE__), first.dim());
  Dims out = sizes(first);
  out[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (legacy_empty(t)) continue;
    TORCH_CHECK(t.dim() == first.dim(), op, ": ", element_name(name, i), " must have ", first.dim(),
                " dims like ", element_name(name, ref), ", got ", t.dim());
    for (int64_t j = 0; j < t.dim(); ++j) {
      if (j == d) continue;
      check_same(op, Site{name, ref, j}, first.sym_size(j), Site{name, static_cast<int64_t>(i), j},
                 t.sym_size(j), "that is not the cat dim");
    }
    out[d] = out[d] + t.sym_size(d);
  }
  return out;
}

Dims stack(std::string_view op, std::string_view name, at::TensorList tensors, const c10::SymInt& dim) {
  check_nonempty(op, name, tensors);
  const auto& first = tensors[0];
  // The new dim may go anywhere in the result, which has one dim more than each input.
  const int64_t d = wrap_dim(op, "the result", dim.guard_int(__FILE__, __LINE__), first.dim() + 1);
  for (size_t i = 1; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    TORCH_CHECK(t.dim() == first.dim(), op, ": ", element_name(name, i), " must have ", first.dim(),
                " dims like ", element_name(name, 0), ", got ", t.dim());
    check_same_dims(op, Site{name, 0, 0, first.dim(), true}, first.sym_sizes(),
                    Site{name, static_cast<int64_t>(i), 0, t.dim(), true}, t.sym_sizes(), "(every dim)");
  }
  Dims out = sizes(first);
  out.insert(out.begin() + d, c10::SymInt(static_cast<int64_t>(tensors.size())));
  return out;
}

std::vector<Dims> split(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src,
                        std::string_view sizes_name, const Dims& sizes, const c10::SymInt& dim) {
  TORCH_CHECK(!src.empty(), op, ": '", src_name, "' must have at least 1 dim to be split, got 0");
  const int64_t d = wrap_dim(op, src_name, dim.guard_int(__FILE__, __LINE__), src.size());
  c10::SymInt total = 0;
  for (const auto& s : sizes) {
    TORCH_CHECK(s >= 0, op, ": '", sizes_name, "' must have only non-negative entries, got ", sizes_name, "=",
                show(sizes));
    total = total + s;
  }
  TORCH_CHECK(total == src[d], op, ": '", sizes_name, "' must sum to ", src_name, ".size(", d, ")=", src[d],
              ", got ", sizes_name, "=", show(sizes), " (sum ", total, ")");
  std::vector<Dims> out;
  out.reserve(sizes.size());
  for (const auto& s : sizes) {
    Dims shape(src.begin(), src.end());
    shape[d] = s;
    out.push_back(std::move(shape));
  }
  return out;
}

std::vector<TensorSpec> specs(std::vector<Dims>&& shapes, at::ScalarType dtype) {
  std::vector<TensorSpec> out;
  out.reserve(shapes.size());
  for (auto& s : shapes) out.push_back(TensorSpec{std::move(s), {}, dtype});
  return out;
}

Dims index(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src, const c10::SymInt& dim,
           std::string_view index_name, c10::SymIntArrayRef index) {
  (void)index_name;
  const int64_t rank = src.size();
  const int64_t d = wrap_dim(op, src_name, dim.guard_int(__FILE__, __LINE__), rank);
  Dims out(src.begin(), src.begin() + std::min(d, rank));
  out.append(index.begin(), index.end());
  if (d + 1 <= rank) out.append(src.begin() + d + 1, src.end());
  return out;
}

Dims gather(std::string_view op, std::string_view src_name, c10::SymIntArrayRef src, const c10::SymInt& dim,
            std::string_view index_name, c10::SymIntArrayRef index) {
  const int64_t rank = std::max<int64_t>(src.size(), 1);
  const int64_t d = wrap_dim(op, src_name, dim.guard_int(__FILE__, __LINE__), src.size());
  TORCH_CHECK(std::max<int64_t>(index.size(), 1) == rank, op, ": '", index_name,
              "' must have as many dims as '", src_name, "' (", src.size(), "), got ", index.size());
  c10::SymInt numel = 1;
  for (const auto& s : index) numel = numel * s;
  if (numel != 0 && !src.empty() && !index.empty()) {
    for (int64_t k = 0; k < rank; ++k) {
      if (k == d) continue;
      TORCH_CHECK(index[k] <= src[k], op, ": ", index_name, ".size(", k, ")=", index[k], " must be at most ",
                  src_name, ".size(", k, ")=", src[k], " (every dim but dim ", d, "); shapes: ", src_name,
                  "=", show(src), ", ", index_name, "=", show(index));
    }
  }
  return Dims(index.begin(), index.end());
}

c10::SymInt window(std::string_view op, const c10::SymInt& n, const c10::SymInt& k, const c10::SymInt& s,
                   const c10::SymInt& p, const c10::SymInt& d, bool ceil_mode) {
  TORCH_CHECK(k > 0 && s > 0 && d > 0 && p >= 0, op,
              ": window needs kernel, stride and dilation > 0 and padding >= 0, got kernel=", k,
              ", stride=", s, ", dilation=", d, ", padding=", p);
  // torch's pooling_output_shape: the quotient rounds down (the numerator is negative when the
  // window is larger than the padded input), and with ceil_mode the last window must start
  // inside the input or the left padding; a kernel larger than the input then still gives 1.
  const c10::SymInt num = n + 2 * p - (d * (k - 1) + 1) + (ceil_mode ? s - 1 : c10::SymInt(0));
  c10::SymInt out = (num >= 0 ? num / s : -((s - 1 - num) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= n + p) out = out - 1;
  TORCH_CHECK(out >= 1, op, ": the window (kernel=", k, ", dilation=", d, ", padding=", p,
              ") does not fit an input of size ", n, ": output size would be < 1");
  return out;
}

c10::SymInt item(std::string_view op, std::string_view name, const Dims& values, const c10::SymInt& i) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t at = i.guard_int(__FILE__, __LINE__);
  TORCH_CHECK_INDEX(-n <= at && at < n, op, ": index ", at, " is out of range for '", name, "' with ", n,
                    " elements");
  return values[at < 0 ? at + n : at];
}

c10::SymInt bucket_pow2(const c10::SymInt& x) {
  const int64_t v = x.expect_int();
  int64_t b = 1;
  while (b < v) b <<= 1;
  return v <= 0 ? 0 : b;
}

bool innermost(const at::Tensor& t, at::IntArrayRef dims) {
  int64_t inner = -1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && (inner < 0 || t.stride(d) < t.stride(inner))) inner = d;
  }
  return inner >= 0 && std::find(dims.begin(), dims.end(), inner) != dims.end();
}

c10::SymInt sum(c10::SymIntArrayRef values) {
  c10::SymInt total = 0;
  for (const auto& v : values) total = total + v;
  return total;
}

Dims ones(const c10::SymInt& n) {
  const int64_t count = n.guard_int(__FILE__, __LINE__);
  return Dims(std::max<int64_t>(count, 0), c10::SymInt(1));
}

c10::SymInt floordiv(std::string_view op, const c10::SymInt& a, const c10::SymInt& b) {
  // Python's floor division on concrete values; symbolic sizes are non-negative, where
  // truncation (SymInt's /) and floor agree.
  TORCH_CHECK(b != 0, op, ": division by zero in a shape rule (", a, " // ", b, ")");
  if (auto x = a.maybe_as_int(), y = b.maybe_as_int(); x && y) {
    int64_t q = *x / *y;
    if ((*x % *y != 0) && ((*x < 0) != (*y < 0))) --q;
    return q;
  }
  return a / b;
}

c10::SymInt mod(std::string_view op, const c10::SymInt& a, const c10::SymInt& b) {
  TORCH_CHECK(b != 0, op, ": division by zero in a shape rule (", a, " % ", b, ")");
  return a - floordiv(op, a, b) * b;
}

namespace {
constexpr int kUnordered = 2;

// -1, 0 or 1 as i is below, equal to or above d, exactly (no rounding of i to double).
int order(int64_t i, double d) {
  if (std::isnan(d)) return kUnordered;
  constexpr double two_to_63 = 9223372036854775808.0;
  if (d >= two_to_63) return -1;
  if (d < -two_to_63) return 1;
  const double whole = std::floor(d);
  const auto floor_d = static_cast<int64_t>(whole);
  if (i != floor_d) return i < floor_d ? -1 : 1;
  return whole == d ? 0 : -1;
}

int order(const at::Scalar& a, const at::Scalar& b) {
  const bool a_int = a.isIntegral(/*includeBool=*/true), b_int = b.isIntegral(/*includeBool=*/true);
  if (a_int && b_int) {
    const int64_t x = a.toLong(), y = b.toLong();
    return (x > y) - (x < y);
  }
  if (a_int) return order(a.toLong(), b.toDouble());
  if (b_int) {
    const int o = order(b.toLong(), a.toDouble());
    return o == kUnordered ? o : -o;
  }
  const double x = a.toDouble(), y = b.toDouble();
  if (std::isnan(x) || std::isnan(y)) return kUnordered;
  return (x > y) - (x < y);
}
}  // namespace

bool compare(std::string_view op, const at::Scalar& a, std::string_view relation, const at::Scalar& b) {
  if (a.isComplex() || b.isComplex()) {
    TORCH_CHECK(relation == "==" || relation == "!=", op, ": a rule orders complex numbers (", a, " ",
                relation, " ", b, "); complex numbers compare by == and != only");
    return (a.toComplexDouble() == b.toComplexDouble()) == (relation == "==");
  }
  const int o = order(a, b);
  if (relation == "==") return o == 0;
  if (relation == "!=") return o != 0;
  if (relation == "<") return o == -1;
  if (relation == "<=") return o == -1 || o == 0;
  if (relation == ">") return o == 1;
  TORCH_CHECK(relation == ">=", op, ": unknown comparison ", relation);
  return o == 1 || o == 0;
}

namespace {
// The result and compute dtypes of a promotion kind, from torch.result_type of the arguments.
Dtypes by_kind(at::ScalarType promoted, Promotion kind) {
  const at::ScalarType opmath = opmath_of(promoted);
  switch (kind) {
    case Promotion::DEFAULT:
      return {promoted, opmath, promoted};
    case Promotion::NO_OPMATH:
      return {promoted, promoted, promoted};
    case Promotion::INT_TO_FLOAT: {
      if (at::isIntegralType(promoted, /*includeBool=*/true)) {
        const auto f = c10::get_default_dtype_as_scalartype();
        return {f, opmath_of(f), f};
      }
      return {promoted, opmath, promoted};
    }
    case Promotion::ALWAYS_BOOL:
      return {at::kBool, opmath, promoted};
    case Promotion::COMPLEX_TO_FLOAT:
      return {at::isComplexType(promoted) ? c10::toRealValueType(promoted) : promoted, opmath, promoted};
    case Promotion::BOOL_TO_LONG: {
      const auto t = promoted == at::kBool ? at::kLong : promoted;
      return {t, promoted == at::kBool ? at::kLong : opmath, t};
    }
  }
  TORCH_CHECK(false, "unknown promotion kind");
}
}  // namespace

Dtypes promote(std::string_view op, std::initializer_list<NamedTensor> tensors,
               std::initializer_list<at::TensorList> lists, std::initializer_list<at::Scalar> scalars,
               Promotion kind, std::initializer_list<std::optional<at::Scalar>> optional_scalars) {
  (void)op;
  at::native::ResultTypeState state{};
  for (const auto& t : tensors) state = at::native::update_result_type_state(t.tensor, state);
  for (const auto& list : lists) {
    for (const auto& t : list) state = at::native::update_result_type_state(t, state);
  }
  for (const auto& s : scalars) state = at::native::update_result_type_state(s, state);
  for (const auto& s : optional_scalars) {
    if (s.has_value()) state = at::native::update_result_type_state(*s, state);
  }
  const at::ScalarType promoted = at::native::result_type(state);
  Dtypes dtypes = by_kind(promoted, kind);
  dtypes.promoted = promoted;
  return dtypes;
}

Dtypes reduction(std::string_view op, std::string_view name, at::ScalarType input,
                 std::optional<at::ScalarType> override_dtype, Reduction kind) {
  if (override_dtype.has_value() && kind != Reduction::BOOL && kind != Reduction::LONG) {
    return Dtypes::of(*override_dtype);
  }
  switch (kind) {
    case Reduction::SUM:
      return Dtypes::of(at::isIntegralType(input, /*includeBool=*/true) ? at::kLong : input);
    case Reduction::SAME:
      return Dtypes::of(input);
    case Reduction::FLOAT:
    case Reduction::REAL:
      TORCH_CHECK(
          at::isFloatingType(input) || at::isComplexType(input), op, ": could not infer the output dtype: '",
          name, "' must have a floating point or complex dtype, got ", input, "; pass dtype= to choose one");
      if (kind == Reduction::REAL && at::isComplexType(input))
        return {c10::toRealValueType(input), input, input};
      return Dtypes::of(input);
    case Reduction::BOOL:
      return Dtypes::of(input == at::kByte ? at::kByte : at::kBool);
    case Reduction::LONG:
      return {at::kLong, input, input};
    case Reduction::OPMATH:
      TORCH_CHECK(at::isFloatingType(input), op, ": '", name, "' must have a floating point dtype, got ",
                  input);
      return Dtypes::of(opmath_of(input));
  }
  TORCH_CHECK(false, "unknown reduction kind");
}

void check_allowed(std::string_view op, std::string_view name, at::ScalarType dtype, uint64_t mask,
                   std::string_view allowed) {
  TORCH_CHECK(mask & bit(dtype), op, ": '", name, "' has dtype ", dtype, ", which ", op,
              " does not support (supported: ", allowed, ")");
}

void check_allowed_promoted(std::string_view op, std::initializer_list<NamedTensor> tensors,
                            at::ScalarType promoted, uint64_t mask, std::string_view allowed) {
  if (mask & bit(promoted)) return;
  for (const auto& t : tensors) {  // an argument of that dtype: named, as check_allowed does
    TORCH_CHECK(t.tensor.scalar_type() != promoted, op, ": '", t.name, "' has dtype ", promoted, ", which ",
                op, " does not support (supported: ", allowed, ")");
  }
  std::string inputs;
  for (const auto& t : tensors) {
    inputs += (inputs.empty() ? "'" : ", '") + std::string(t.name) + "' (" +
              c10::toString(t.tensor.scalar_type()) + ")";
  }
  TORCH_CHECK(false, op, ": ", inputs, " promote to ", promoted, ", which ", op,
              " does not support (supported: ", allowed, ")");
}

void check_alpha(std::string_view op, at::ScalarType dtype, const at::Scalar& alpha) {
  // PyTorch's alpha rules for add/sub.
  TORCH_CHECK(!alpha.isBoolean() || dtype == at::kBool, op,
              ": a boolean alpha is only supported for bool results, got alpha=", alpha.toBool(),
              " with result type ", dtype);
  TORCH_CHECK(at::isFloatingType(dtype) || at::isComplexType(dtype) || alpha.isIntegral(true), op,
              ": for integral inputs alpha must not be a floating point number, got alpha=", alpha,
              " with result type ", dtype);
  TORCH_CHECK(at::isComplexType(dtype) || !alpha.isComplex(), op,
              ": for non-complex inputs alpha must not be complex, got alpha=", alpha);
}

void check_integer_power(std::string_view op, at::ScalarType dtype, const at::Scalar& exponent) {
  // An integral result of a negative integral power is no integer (torch raises too).
  TORCH_CHECK(!at::isIntegralType(dtype, /*includeBool=*/true) || !exponent.isIntegral(false) ||
                  exponent.toLong() >= 0,
              op, ": integers to negative integer powers are not allowed, got exponent=", exponent,
              " with result type ", dtype);
}

void check_fits(std::string_view op, std::string_view name, at::ScalarType dtype, const at::Scalar& value,
                bool integral_only) {
  // torch converts such a number to the result's type with Scalar::to<T>(), which refuses one
  // that overflows it (clamp_min(uint8, 300)); an infinity fits a floating type, and any number a
  // bool (it becomes x != 0: add(bool, bool, alpha=2) is torch's logical or).
  if (dtype == at::kBool || (integral_only && !at::isIntegralType(dtype, /*includeBool=*/false))) return;
  bool overflows = false;
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "fits_check", [&] {
    if (value.isComplex()) {
      overflows = c10::overflows<scalar_t>(value.toComplexDouble());
    } else if (value.isFloatingPoint()) {
      overflows = c10::overflows<scalar_t>(value.toDouble());
    } else if (!value.isBoolean()) {
      overflows = c10::overflows<scalar_t>(value.toLong());
    }
  });
  TORCH_CHECK(!overflows, op, ": ", name, "=", value, " does not fit the result's dtype ", dtype,
              " (it would overflow)");
}

void check_nonempty(std::string_view op, std::string_view name, c10::SymIntArrayRef sizes,
                    const std::vector<int64_t>& reduced) {
  for (int64_t d : reduced) {
    TORCH_CHECK_INDEX(sizes[d] != 0, op, ": cannot reduce over dim ", d, " of '", name,
                      "', which has size 0: ", op, " of no elements is undefined");
  }
}

void check_norm_nonempty(std::string_view op, std::string_view name, const std::optional<at::Scalar>& p,
                         c10::SymIntArrayRef sizes, const std::vector<int64_t>& reduced) {
  const double order = p.has_value() ? p->toDouble() : 2.0;
  if (order >= 0 && !std::isinf(order)) return;  // sum-like: 0 for no elements
  for (int64_t d : reduced) {
    TORCH_CHECK(sizes[d] != 0, op, ": cannot compute the ", order, " norm over dim ", d, " of '", name,
                "', which has size 0: that norm has no identity");
  }
}

void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const auto& first = *tensors.begin();
  for (const auto& t : tensors) {
    TORCH_CHECK(t.tensor.scalar_type() == first.tensor.scalar_type(), op, ": '", t.name, "' has dtype ",
                t.tensor.scalar_type(), " but '", first.name, "' has ", first.tensor.scalar_type(),
                "; they must have the same dtype");
  }
}

}  // namespace structgen::rules
