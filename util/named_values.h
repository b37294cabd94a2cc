// A closed set of choices spelled as names (a task kind, an activation, a
// mask direction): one table per enum serves both directions, and the error
// for an unknown name lists the choices, so adding a choice is one table row.
#pragma once
#include <cstddef>
#include <string>

#include "attn/util/error.h"

namespace attn {

// One row of a name table. A value's first row gives its name (what
// name_of_value returns and the error lists); later rows of the same value
// are aliases that value_from_name also accepts.
template <class E>
struct NamedValue {
  E value;
  const char* name;
};

namespace detail {
template <class E, std::size_t N>
const NamedValue<E>* first_row_of(const NamedValue<E> (&table)[N], E value) {
  for (const NamedValue<E>& row : table)
    if (row.value == value) return &row;
  return nullptr;
}
}  // namespace detail

// The first name of `value` in the table; "?" for a value without a row.
template <class E, std::size_t N>
const char* name_of_value(const NamedValue<E> (&table)[N], E value) {
  const NamedValue<E>* row = detail::first_row_of(table, value);
  return row != nullptr ? row->name : "?";
}

// The value named `name`; otherwise an attn::Error from `where`:
// "unknown <what> '<name>' (known: <each value's first name>)".
template <class E, std::size_t N>
E value_from_name(const NamedValue<E> (&table)[N], const std::string& name, const char* where, const char* what) {
  for (const NamedValue<E>& row : table)
    if (name == row.name) return row.value;
  std::string known;
  for (const NamedValue<E>& row : table) {
    if (detail::first_row_of(table, row.value) != &row) continue;  // an alias
    known += (known.empty() ? "" : ", ") + std::string(row.name);
  }
  ATTN_CHECK(false, where, "unknown ", what, " '", name, "' (known: ", known, ")");
  return table[0].value;
}

}  // namespace attn
