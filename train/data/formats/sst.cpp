// Stanford Sentiment Treebank in PTB tree form.
#include <memory>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;

const char* const kLoader = "load_sst";

struct Node {
  int label = 0;
  std::string word;  // leaves only
  std::vector<std::unique_ptr<Node>> children;
};

// Recursive-descent reader for one tree on one line.
class TreeReader {
 public:
  TreeReader(const std::string& line, const std::string& file, size_t line_no)
      : s_(line), file_(file), line_no_(line_no) {}

  std::unique_ptr<Node> read_tree() {
    skip_space();
    auto root = read_node(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the tree");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    fail_at(kLoader, file_, line_no_, what + " (column " + std::to_string(pos_ + 1) + ")");
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  std::string read_atom() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t' && s_[pos_] != '(' && s_[pos_] != ')') ++pos_;
    return s_.substr(start, pos_ - start);
  }

  std::unique_ptr<Node> read_node(int depth) {
    if (depth > 1000) fail("tree nested too deeply");
    if (pos_ >= s_.size() || s_[pos_] != '(') fail("expected '('");
    ++pos_;
    skip_space();
    std::string label = read_atom();
    if (label.size() != 1 || label[0] < '0' || label[0] > '4') fail("label must be 0..4, found " + loader_util::quote(label));
    auto node = std::make_unique<Node>();
    node->label = label[0] - '0';
    skip_space();
    if (pos_ >= s_.size()) fail("unbalanced parentheses: missing ')'");
    if (s_[pos_] == '(') {
      while (pos_ < s_.size() && s_[pos_] == '(') {
        node->children.push_back(read_node(depth + 1));
        skip_space();
      }
    } else {
      node->word = read_atom();
      if (node->word.empty()) fail("empty leaf");
      skip_space();
    }
    if (pos_ >= s_.size() || s_[pos_] != ')') fail("unbalanced parentheses: missing ')'");
    ++pos_;
    return node;
  }

  const std::string& s_;
  const std::string& file_;
  size_t line_no_;
  size_t pos_ = 0;
};

std::string leaf_token(const std::string& word) {
  if (word == "-LRB-") return "(";
  if (word == "-RRB-") return ")";
  return lowercase_token(word);
}

void collect_words(const Node& n, std::vector<std::string>& out) {
  if (n.children.empty()) {
    out.push_back(leaf_token(n.word));
    return;
  }
  for (const auto& c : n.children) collect_words(*c, out);
}

// Maps a 0..4 sentiment to the class id; -1 drops the example.
int64_t class_of(int label, int classes) {
  if (classes == 5) return label;
  if (label < 2) return 0;
  if (label > 2) return 1;
  return -1;
}

void add_example(const Node& n, int classes, std::vector<Example>& out) {
  int64_t c = class_of(n.label, classes);
  if (c < 0) return;
  Example e;
  collect_words(n, e.tokens);
  e.label = c;
  out.push_back(std::move(e));
}

void add_phrases(const Node& n, int classes, std::vector<Example>& out) {
  add_example(n, classes, out);
  for (const auto& c : n.children) add_phrases(*c, classes, out);
}

std::vector<Example> read_sst(const std::string& file, bool all_phrases, int classes) {
  std::vector<Example> out;
  std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) continue;
    std::unique_ptr<Node> root = TreeReader(lines[i], file, i + 1).read_tree();
    if (all_phrases) add_phrases(*root, classes, out);
    else add_example(*root, classes, out);
  }
  return out;
}

}  // namespace

Dataset load_sst(const std::string& dir, bool all_phrases, int classes) {
  ATTN_CHECK(classes == 5 || classes == 2, kLoader, "classes must be 5 or 2, got ", classes);
  Dataset d;
  d.name = classes == 5 ? "sst5" : "sst2";
  d.task = TaskKind::Classify;
  if (classes == 5) d.label_names = {"very negative", "negative", "neutral", "positive", "very positive"};
  else d.label_names = {"negative", "positive"};
  d.train = read_sst(loader_util::join_path(dir, "train.txt"), all_phrases, classes);
  d.dev = read_sst(loader_util::join_path(dir, "dev.txt"), false, classes);
  d.test = read_sst(loader_util::join_path(dir, "test.txt"), false, classes);
  return d;
}

}  // namespace attn
