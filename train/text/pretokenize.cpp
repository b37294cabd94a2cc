#include "attn/train/text/pretokenize.h"

#include <cctype>
#include <cstring>

#include "attn/train/text/bpe.h"
#include "attn/train/text/utf8_chars.h"

namespace attn {

namespace {

bool is_ascii_punct(const std::string& ch) {
  return ch.size() == 1 && std::ispunct(static_cast<unsigned char>(ch[0]));
}
bool is_digit(const std::string& ch) { return ch.size() == 1 && std::isdigit(static_cast<unsigned char>(ch[0])); }
bool is_word_char(const std::string& ch) { return !is_ascii_punct(ch); }

// Whether the punctuation at chars[i] stays inside the word around it.
bool joins_word(const std::vector<std::string>& chars, size_t i) {
  if (i == 0 || i + 1 >= chars.size()) return false;
  const std::string &before = chars[i - 1], &c = chars[i], &after = chars[i + 1];
  if (c == "." || c == ",") return is_digit(before) && is_digit(after);
  if (c == "-" || c == "'") return is_word_char(before) && is_word_char(after);
  return false;
}

bool attaches_left(const std::string& w) { return w.size() == 1 && std::strchr(".,!?;:%)]}", w[0]) != nullptr; }
bool attaches_right(const std::string& w) { return w.size() == 1 && std::strchr("([{", w[0]) != nullptr; }

}  // namespace

std::vector<std::string> pretokenize(const std::string& line) {
  std::vector<std::string> out;
  for (const std::string& chunk : text::split_python_whitespace(line)) {
    const std::vector<std::string> chars = text::utf8_chars(chunk);
    std::string word;
    for (size_t i = 0; i < chars.size(); ++i) {
      if (is_ascii_punct(chars[i]) && !joins_word(chars, i)) {
        if (!word.empty()) out.push_back(std::move(word));
        word.clear();
        out.push_back(chars[i]);
      } else {
        word += chars[i];
      }
    }
    if (!word.empty()) out.push_back(std::move(word));
  }
  return out;
}

std::string detokenize(const std::vector<std::string>& words) {
  std::string out;
  bool glue_next = true;  // no space before the first word
  bool double_open = false, single_open = false;
  for (const std::string& w : words) {
    bool left = attaches_left(w), right = attaches_right(w);
    if (w == "\"" || w == "'") {
      bool& open = w == "\"" ? double_open : single_open;
      (open ? left : right) = true;
      open = !open;
    }
    if (!glue_next && !left) out += ' ';
    out += w;
    glue_next = right;
  }
  return out;
}

std::string detokenize_units(const std::vector<std::string>& units) {
  return detokenize(text::split_python_whitespace(Bpe::decode(units)));
}

}  // namespace attn
