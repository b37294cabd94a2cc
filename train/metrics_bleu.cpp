#include "attn/train/metrics_bleu.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "attn/engine/error.h"
#include "attn/train/text/mteval_entities.h"
#include "attn/train/text/utf8_chars.h"
#include "attn/util/text.h"

namespace attn {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The characters of the first rule of sacreBLEU's TokenizerRegexp, the
// class [\{-\~\[-\` -\&\(-\+\:-\@\/].
bool is_13a_symbol(char ch) {
  const unsigned char c = static_cast<unsigned char>(ch);
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

// One pass of a two-character rule, as Python's re.sub scans: left to right,
// a match consumes both characters. Working on bytes gives the same result
// as on code points: a multi-byte character is never a digit, '.', ',' or
// '-', so matches start and end at the same places.
template <class Match, class Emit>
std::string two_char_pass(const std::string& s, Match match, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (size_t i = 0; i < s.size();) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// `s` without trailing Python whitespace (sacreBLEU strips each segment with rstrip()).
std::string rstrip_python(const std::string& s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = text::utf8_char_length(s, i);
    if (!text::is_python_space_at(s, i)) end = i + len;
    i += len;
  }
  return s.substr(0, end);
}

std::vector<std::string> bleu_tokens(const std::string& line) {
  return text::split_python_whitespace(tokenize_13a(rstrip_python(line)));
}

// Every n-gram of orders 1..4 with its count, words joined by single spaces.
std::unordered_map<std::string, int64_t> ngram_counts(const std::vector<std::string>& words) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string gram;
    for (size_t n = 0; n < 4 && i + n < words.size(); ++n) {
      gram += (n ? " " : "") + words[i + n];
      ++counts[gram];
    }
  }
  return counts;
}

size_t order_of(const std::string& gram) {
  size_t n = 1;
  for (char c : gram) n += c == ' ';
  return n;
}

}  // namespace

std::string tokenize_13a(const std::string& input) {
  std::string line = input;
  line = text::replace_all(line, "<skipped>", "");
  line = text::replace_all(line, "-\n", "");
  line = text::replace_all(line, "\n", " ");
  line = unescape_mteval_entities(line);
  line = " " + line + " ";
  std::string spaced;
  for (char c : line) {
    if (is_13a_symbol(c)) {
      spaced += ' ';
      spaced += c;
      spaced += ' ';
    } else {
      spaced += c;
    }
  }
  // Period and comma, unless preceded by a digit: r'([^0-9])([\.,])' -> r'\1 \2 '.
  spaced = two_char_pass(
      spaced, [](char a, char b) { return !is_digit(a) && (b == '.' || b == ','); },
      [](std::string& out, char a, char b) { out.append(1, a).append(" ").append(1, b).append(" "); });
  // Period and comma, unless followed by a digit: r'([\.,])([^0-9])' -> r' \1 \2'.
  spaced = two_char_pass(
      spaced, [](char a, char b) { return (a == '.' || a == ',') && !is_digit(b); },
      [](std::string& out, char a, char b) { out.append(" ").append(1, a).append(" ").append(1, b); });
  // Dash after a digit: r'([0-9])(-)' -> r'\1 \2 '.
  spaced = two_char_pass(
      spaced, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& out, char a, char b) { out.append(1, a).append(" ").append(1, b).append(" "); });
  std::string out;
  for (const std::string& w : text::split_python_whitespace(spaced)) out += (out.empty() ? "" : " ") + w;
  return out;
}

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  for (int n = 0; n < 4; ++n) correct[n] += o.correct[n], total[n] += o.total[n];
  return *this;
}

BleuStats sentence_bleu_stats(const std::string& hyp, const std::string& ref) {
  const std::vector<std::string> h = bleu_tokens(hyp), r = bleu_tokens(ref);
  BleuStats s;
  s.hyp_len = static_cast<int64_t>(h.size());
  s.ref_len = static_cast<int64_t>(r.size());
  const auto ref_counts = ngram_counts(r);
  for (const auto& [gram, count] : ngram_counts(h)) {
    const size_t n = order_of(gram) - 1;
    s.total[n] += count;
    auto it = ref_counts.find(gram);
    if (it != ref_counts.end()) s.correct[n] += std::min(count, it->second);
  }
  return s;
}

BleuScore bleu_from_stats(const BleuStats& s) {
  BleuScore score;
  score.hyp_len = s.hyp_len;
  score.ref_len = s.ref_len;
  score.brevity_penalty = 1.0;
  if (s.hyp_len < s.ref_len)
    score.brevity_penalty =
        s.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len)) : 0.0;
  bool any_correct = false;
  for (int n = 0; n < 4; ++n) any_correct = any_correct || s.correct[n] > 0;
  if (!any_correct) return score;
  double smooth = 1;
  for (int n = 0; n < 4; ++n) {
    if (s.total[n] == 0) break;
    if (s.correct[n] == 0) {
      smooth *= 2;
      score.precisions[n] = 100.0 / (smooth * static_cast<double>(s.total[n]));
    } else {
      score.precisions[n] = 100.0 * static_cast<double>(s.correct[n]) / static_cast<double>(s.total[n]);
    }
  }
  // sacreBLEU's my_log floors log(0) at -9999999999: any zero precision gives 0.
  double log_sum = 0;
  for (double p : score.precisions) {
    if (p == 0) return score;
    log_sum += std::log(p);
  }
  score.bleu = score.brevity_penalty * std::exp(log_sum / 4);
  return score;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  ATTN_CHECK(hyps.size() == refs.size(), "corpus_bleu", hyps.size(), " hypotheses but ", refs.size(),
             " references; BLEU needs one reference per hypothesis");
  BleuStats total;
  for (size_t i = 0; i < hyps.size(); ++i) total += sentence_bleu_stats(hyps[i], refs[i]);
  return bleu_from_stats(total);
}

std::string format_bleu(const BleuScore& s) {
  char buf[256];
  const double ratio = s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
  std::snprintf(buf, sizeof buf, "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)",
                s.bleu, s.precisions[0], s.precisions[1], s.precisions[2], s.precisions[3], s.brevity_penalty, ratio,
                static_cast<long long>(s.hyp_len), static_cast<long long>(s.ref_len));
  return buf;
}

}  // namespace attn
