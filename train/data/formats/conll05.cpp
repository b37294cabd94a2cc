// CoNLL-2005 SRL: the words column beside the official props columns, one
// instance per predicate with its arguments turned from the bracket notation
// into BIO tags (docs/data.md).
#include <map>
#include <set>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::join_path;
using loader_util::quote;

const char* const kLoader = "load_conll05";

struct Row {
  std::vector<std::string> cols;
  size_t line = 0;
};

struct Instance {
  std::vector<std::string> tokens, tags;
  int64_t predicate = -1;
};

// One props cell: "(TYPE*" opens, "*)" or "*TYPE)" closes, "*" is neither;
// "(TYPE*)" both. Sets `open` (empty when none) and `closes`.
void parse_cell(const std::string& cell, const std::string& file, size_t line, std::string& open, bool& closes) {
  const size_t star = cell.find('*');
  if (star == std::string::npos || cell.find('*', star + 1) != std::string::npos)
    fail_at(kLoader, file, line, "props cell " + quote(cell) + " is not (TYPE*, *, *) or (TYPE*)");
  const std::string head = cell.substr(0, star), tail = cell.substr(star + 1);
  open.clear();
  if (!head.empty()) {
    if (head[0] != '(' || head.size() < 2 || head.find('(', 1) != std::string::npos)
      fail_at(kLoader, file, line,
              "props cell " + quote(cell) + " opens " + (head.size() < 2 ? "an argument without a type" :
                                                         "more than one argument (nested arguments are not SRL props)"));
    open = head.substr(1);
  }
  closes = !tail.empty();
  if (closes) {
    const std::string type = tail.substr(0, tail.size() - 1);
    if (tail.back() != ')' || type.find(')') != std::string::npos)
      fail_at(kLoader, file, line, "props cell " + quote(cell) + " closes more than one argument or is malformed");
    if (!type.empty() && !open.empty() && type != open)
      fail_at(kLoader, file, line, "props cell " + quote(cell) + " opens " + quote(open) + " but closes " + quote(type));
  }
}

// The BIO tags of argument column `column` (0-based among the argument
// columns) of a sentence, checked for balanced brackets and a V span on the
// predicate's row.
std::vector<std::string> bio_of_column(const std::vector<Row>& rows, size_t column, size_t predicate_row,
                                       const std::string& file) {
  std::vector<std::string> tags;
  std::string inside;  // the type of the open argument, empty when none
  size_t opened_at = 0;
  bool has_predicate_span = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string& cell = rows[r].cols[2 + column];
    std::string open;
    bool closes = false;
    parse_cell(cell, file, rows[r].line, open, closes);
    if (!open.empty()) {
      if (!inside.empty())
        fail_at(kLoader, file, rows[r].line,
                "argument column " + std::to_string(column + 1) + " opens " + quote(open) + " while " + quote(inside) +
                    " (opened on line " + std::to_string(opened_at) + ") is still open: unbalanced brackets");
      inside = open;
      opened_at = rows[r].line;
      tags.push_back("B-" + open);
    } else if (!inside.empty()) {
      tags.push_back("I-" + inside);
    } else {
      if (closes)
        fail_at(kLoader, file, rows[r].line,
                "argument column " + std::to_string(column + 1) + " closes an argument that was never opened: "
                "unbalanced brackets");
      tags.push_back("O");
    }
    if (inside == "V" && r == predicate_row) has_predicate_span = true;
    if (closes) inside.clear();
  }
  if (!inside.empty())
    fail_at(kLoader, file, opened_at,
            "argument column " + std::to_string(column + 1) + ": " + quote(inside) +
                " is never closed before the sentence ends: unbalanced brackets");
  if (!has_predicate_span)
    fail_at(kLoader, file, rows[predicate_row].line,
            "argument column " + std::to_string(column + 1) + " has no (V*) span on its predicate " +
                quote(rows[predicate_row].cols[1]) + " (row " + std::to_string(predicate_row + 1) +
                " of the sentence): a predicate column without its predicate");
  return tags;
}

// The instances of one sentence: one per target (a row whose second column
// is not "-"), in the order of the targets, which is the order of the
// argument columns.
void add_sentence(const std::vector<Row>& rows, const std::string& file, std::vector<Instance>& out) {
  if (rows.empty()) return;
  const size_t columns = rows.front().cols.size();
  std::vector<size_t> targets;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].cols.size() != columns)
      fail_at(kLoader, file, rows[r].line,
              "expected " + std::to_string(columns) + " columns like the sentence's first row (line " +
                  std::to_string(rows.front().line) + "), found " + std::to_string(rows[r].cols.size()));
    if (rows[r].cols[1] != "-") targets.push_back(r);
  }
  if (columns < 2)
    fail_at(kLoader, file, rows.front().line, "expected WORD TARGET ARGS..., found one column");
  if (targets.size() != columns - 2)
    fail_at(kLoader, file, rows.front().line,
            "the sentence has " + std::to_string(targets.size()) + " predicates in its target column but " +
                std::to_string(columns - 2) + " argument columns (one per predicate)");
  std::vector<std::string> tokens;
  for (const Row& row : rows) tokens.push_back(lowercase_token(row.cols[0]));
  for (size_t k = 0; k < targets.size(); ++k) {
    Instance inst;
    inst.tokens = tokens;
    inst.tags = bio_of_column(rows, k, targets[k], file);
    inst.predicate = static_cast<int64_t>(targets[k]);
    out.push_back(std::move(inst));
  }
}

std::vector<Instance> read_conll05(const std::string& file) {
  std::vector<Instance> out;
  std::vector<Row> rows;
  const std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) {
      add_sentence(rows, file, out);
      rows.clear();
      continue;
    }
    rows.push_back({loader_util::split_whitespace(lines[i]), i + 1});
  }
  add_sentence(rows, file, out);
  return out;
}

std::string pick(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (loader_util::is_regular_file(join_path(dir, n))) return join_path(dir, n);
  return "";
}

}  // namespace

Dataset load_conll05(const std::string& dir) {
  const std::string train = pick(dir, {"train.txt", "train-set"}), dev = pick(dir, {"dev.txt", "dev-set"}),
                    test = pick(dir, {"test.txt", "test-wsj", "test-brown"});
  if (train.empty()) throw Error(std::string(kLoader) + ": cannot open " + join_path(dir, "train.txt") + " (or train-set)");
  if (test.empty()) throw Error(std::string(kLoader) + ": cannot open " + join_path(dir, "test.txt") + " (or test-wsj)");
  std::vector<Instance> tr = read_conll05(train), dv = dev.empty() ? std::vector<Instance>() : read_conll05(dev),
                        te = read_conll05(test);
  std::set<std::string> tag_set{"O"};
  for (const auto* split : {&tr, &dv, &te})
    for (const Instance& inst : *split) tag_set.insert(inst.tags.begin(), inst.tags.end());
  Dataset d;
  d.name = loader_util::base_name(dir);
  d.task = TaskKind::Srl;
  d.label_names.assign(tag_set.begin(), tag_set.end());  // byte order
  const std::map<std::string, int64_t> index = loader_util::label_index(d.label_names);
  auto convert = [&](const std::vector<Instance>& raw, std::vector<Example>& to) {
    for (const Instance& inst : raw) {
      Example e;
      e.tokens = inst.tokens;
      for (const std::string& t : inst.tags) e.tags.push_back(index.at(t));
      e.predicate = inst.predicate;
      to.push_back(std::move(e));
    }
  };
  convert(tr, d.train);
  convert(dv, d.dev);
  convert(te, d.test);
  if (dev.empty()) d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  return d;
}

}  // namespace attn
