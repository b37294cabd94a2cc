// Corpus BLEU (Papineni et al. 2002) exactly as sacreBLEU computes it with its
// defaults (tokenizer 13a, mixed case, one reference, smoothing 'exp',
// 4-grams): the figure WMT results and seed 001's Table 6 report.
// Detokenised strings in, BLEU on sacreBLEU's 0..100 scale out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// sacreBLEU's tokenizer_13a (mteval-v13a.pl): "<skipped>" and "-\n" removed,
// other line ends made spaces, &quot; &amp; &lt; &gt; unescaped, then ASCII
// symbols {|}~ [\]^_` !"#$%& ()*+ :;<=>?@ / split off, '.' and ',' split off
// unless between digits ("3.5", "1,000"), '-' split off after a digit, and
// whitespace (Python's set) collapsed to single spaces, none at the ends.
std::string tokenize_13a(const std::string& line);

// The sufficient statistics of BLEU: lengths in 13a tokens, and per order
// n = 1..4 the clipped matches (correct) and the hypothesis n-grams (total).
// They add up over sentences; a corpus's BLEU is a function of their sum.
struct BleuStats {
  int64_t hyp_len = 0, ref_len = 0;
  int64_t correct[4] = {0, 0, 0, 0};
  int64_t total[4] = {0, 0, 0, 0};
  BleuStats& operator+=(const BleuStats& o);
};

struct BleuScore {
  double bleu = 0;                          // 0..100
  double precisions[4] = {0, 0, 0, 0};      // 0..100, as sacreBLEU reports them (smoothed where 0)
  double brevity_penalty = 0;
  int64_t hyp_len = 0, ref_len = 0;
};

// One sentence pair's statistics: both strings are stripped of trailing
// whitespace and 13a-tokenised; a hypothesis n-gram counts as correct at most
// as often as it occurs in the reference (clipping).
BleuStats sentence_bleu_stats(const std::string& hyp, const std::string& ref);

// sacreBLEU's compute_bleu with smooth_method 'exp': BP = 1 when
// hyp_len >= ref_len, else exp(1 - ref_len / hyp_len) (0 for an empty
// output); BLEU 0 when no n-gram of any order matches; an order with hyp
// n-grams but no match gets precision 100 / (2^k * total), k counting such
// orders from 1; an order without hyp n-grams ends the loop, its precision
// and those above stay 0, and BLEU is 0.
BleuScore bleu_from_stats(const BleuStats& stats);

// Corpus BLEU of `hyps` against `refs` (one reference per hypothesis, equal
// counts, else attn::Error).
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// sacreBLEU's one-line report: "BLEU = 23.64 55.1/29.3/18.0/11.5 (BP = 1.000
// ratio = 1.012 hyp_len = 62402 ref_len = 61647)".
std::string format_bleu(const BleuScore& score);

}  // namespace attn
