#include <runtime/autotune/json.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace structgen::autotune::json {
namespace {

// A recursive-descent parser over the whole text.
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  std::optional<Value> document() {
    auto v = value(0);
    skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool literal(const char* word) {
    const size_t n = std::char_traits<char>::length(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }
  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return std::nullopt;
        const char e = s_[i_++];
        if (e == 'n')
          c = '\n';
        else if (e == 't')
          c = '\t';
        else if (e == '"' || e == '\\' || e == '/')
          c = e;
        else
          return std::nullopt;  // we never write \u escapes
      }
      out += c;
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  std::optional<Value> value(int depth) {
    skip();
    if (depth > 16 || i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      Value::Object obj;
      if (eat('}')) return Value{std::move(obj)};
      do {
        auto k = string();
        if (!k || !eat(':')) return std::nullopt;
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        obj.emplace_back(std::move(*k), std::move(*v));
      } while (eat(','));
      if (!eat('}')) return std::nullopt;
      return Value{std::move(obj)};
    }
    if (c == '[') {
      ++i_;
      std::vector<Value> arr;
      if (eat(']')) return Value{std::move(arr)};
      do {
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        arr.push_back(std::move(*v));
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
      return Value{std::move(arr)};
    }
    if (c == '"') {
      auto s = string();
      if (!s) return std::nullopt;
      return Value{std::move(*s)};
    }
    if (literal("true")) return Value{true};
    if (literal("false")) return Value{false};
    if (literal("null")) return Value{nullptr};
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin) return std::nullopt;
    i_ += end - begin;
    return Value{d};
  }
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

const Value* Value::get(const std::string& key) const {
  const Object* o = obj();
  if (o == nullptr) return nullptr;
  for (const auto& [k, value] : *o) {
    if (k == key) return &value;
  }
  return nullptr;
}

std::optional<Value> parse(const std::string& text) { return Parser(text).document(); }

bool equal(const Value& a, const Value& b) {
  if (a.v.index() != b.v.index()) return false;
  if (const auto* x = a.arr()) {
    const auto& y = *b.arr();
    if (x->size() != y.size()) return false;
    for (size_t i = 0; i < x->size(); ++i) {
      if (!equal((*x)[i], y[i])) return false;
    }
    return true;
  }
  if (const auto* x = a.obj()) {
    const auto& y = *b.obj();
    if (x->size() != y.size()) return false;
    for (size_t i = 0; i < x->size(); ++i) {
      if ((*x)[i].first != y[i].first || !equal((*x)[i].second, y[i].second)) return false;
    }
    return true;
  }
  if (const auto* x = a.str()) return *x == *b.str();
  if (const auto* x = a.num()) return *x == *b.num();
  if (const auto* x = std::get_if<bool>(&a.v)) return *x == std::get<bool>(b.v);
  return true;  // null
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

std::string number(double d) {
  std::ostringstream os;
  os.precision(6);
  os << d;
  return os.str();
}

}  // namespace structgen::autotune::json
