// The JSON the decision files hold (disk_cache.cpp): a value, a strict parser and the two
// writers it needs. Only what this runtime writes is read back: no \u escapes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace structgen::autotune::json {

struct Value {
  using Object = std::vector<std::pair<std::string, Value>>;  // keys in file order
  std::variant<std::nullptr_t, bool, double, std::string, std::vector<Value>, Object> v;

  const Value* get(const std::string& key) const;  // an object's member, else null
  const std::string* str() const { return std::get_if<std::string>(&v); }
  const double* num() const { return std::get_if<double>(&v); }
  const std::vector<Value>* arr() const { return std::get_if<std::vector<Value>>(&v); }
  const Object* obj() const { return std::get_if<Object>(&v); }
};

// nullopt on any syntax error (a truncated or corrupt file) or nesting deeper than 16.
std::optional<Value> parse(const std::string& text);

// The same value: members compared in order, numbers exactly (whitespace may differ).
bool equal(const Value& a, const Value& b);

std::string quoted(const std::string& s);  // a string literal; control characters become spaces
std::string number(double d);              // 6 significant digits

}  // namespace structgen::autotune::json
