#include "attn/train/data/sentence_splitter.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace attn {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_closer(char c) { return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}'; }

// Lowercase, without the final '.'.
const std::set<std::string>& abbreviations() {
  static const std::set<std::string> words = {
      "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "col", "lt", "sgt", "capt", "cmdr",
      "adm", "gov", "sen", "rep", "rev", "hon", "pres", "messrs", "vs", "etc", "e.g", "i.e", "cf", "al", "approx",
      "ca", "c", "inc", "ltd", "co", "corp", "bros", "dept", "univ", "assn", "no", "nos", "vol", "vols", "pp", "p",
      "fig", "figs", "ed", "eds", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
      "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "u.s", "u.k", "a.m", "p.m", "b.c", "a.d"};
  return words;
}

// Whether the '.' at `dot` ends the word before it as an abbreviation.
bool after_abbreviation(const std::string& text, size_t dot) {
  size_t start = dot;
  while (start > 0 && !is_space(text[start - 1]) && text[start - 1] != '(' && text[start - 1] != '"') --start;
  std::string word = text.substr(start, dot - start);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word.empty()) return false;
  if (word.size() == 1 && std::isalpha(static_cast<unsigned char>(word[0]))) return true;  // an initial
  if (word.find('.') != std::string::npos) return true;                                     // "u.s", "a.m"
  return abbreviations().count(word) > 0;
}

// Whether a sentence may start at `at` (the first non-space byte after a
// candidate end): not a lowercase ASCII word, which continues the sentence.
bool may_start_sentence(const std::string& text, size_t at) {
  return at < text.size() && !std::islower(static_cast<unsigned char>(text[at]));
}

}  // namespace

std::vector<SentenceSpan> split_sentences(const std::string& text) {
  std::vector<size_t> starts;
  size_t first = 0;
  while (first < text.size() && is_space(text[first])) ++first;
  if (first == text.size()) return {};
  starts.push_back(0);
  for (size_t i = first; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '.' && c != '!' && c != '?') continue;
    size_t end = i + 1;
    while (end < text.size() && (text[end] == '.' || text[end] == '!' || text[end] == '?' || is_closer(text[end])))
      ++end;
    if (end == text.size() || !is_space(text[end])) continue;
    if (c == '.' && end == i + 1 && after_abbreviation(text, i)) continue;
    size_t next = end;
    while (next < text.size() && is_space(text[next])) ++next;
    if (next == text.size() || !may_start_sentence(text, next)) continue;
    starts.push_back(next);
    i = next - 1;
  }
  std::vector<SentenceSpan> spans;
  for (size_t k = 0; k < starts.size(); ++k)
    spans.push_back({starts[k], k + 1 < starts.size() ? starts[k + 1] : text.size()});
  return spans;
}

std::vector<std::string> sentence_texts(const std::string& text) {
  std::vector<std::string> out;
  for (const SentenceSpan& s : split_sentences(text)) {
    size_t b = s.begin, e = s.end;
    while (b < e && is_space(text[b])) ++b;
    while (e > b && is_space(text[e - 1])) --e;
    out.push_back(text.substr(b, e - b));
  }
  return out;
}

}  // namespace attn
