// SRL argument precision, recall and F1 as the CoNLL-2005 scorer
// srl-eval.pl computes them, from predicted and gold BIO tags of one
// predicate each (docs/data.md, "SRL scoring").
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// The BIO tags of one predicate turned into bracketed phrases the way Tan et
// al.'s scripts/convert_to_conll.py (github XMUNLP/Tagger) writes them for
// srl-eval.pl: a phrase starts at any tag other than O that follows O, a B-
// tag or the sentence start, or at any B- tag; it runs over the following
// I- tags, whatever their type, and ends before the next O or B- tag or at
// the sentence end. Its type is its first tag's ("I-A0" with no B-A0 before
// it opens an A0; "B-A0 I-A1" is one A0). Each phrase is [begin, end).
struct SrlPhrase {
  std::string type;
  int64_t begin = 0, end = 0;
};
std::vector<SrlPhrase> srl_phrases(const std::vector<std::string>& tags);

// An argument as srl-eval.pl's SRL::prop::load_SE_tagging builds it from the
// phrases, in order: a phrase of type C-X joins the latest X argument before
// it as one more piece (with none, it becomes an X argument itself); any
// other phrase (R-X included) is an argument of its own type.
struct SrlArgument {
  std::string type;
  std::vector<std::pair<int64_t, int64_t>> pieces;  // [begin, end), in order
  bool operator==(const SrlArgument& o) const { return type == o.type && pieces == o.pieces; }
};
std::vector<SrlArgument> srl_arguments(const std::vector<std::string>& tags);

struct SrlScores {
  int64_t correct = 0, excess = 0, missed = 0;  // srl-eval.pl's corr., excess, missed
  double precision = 0, recall = 0, f1 = 0;     // fractions in [0, 1]; 0 where undefined
};

// Over propositions (gold[p], pred[p]: the tags of proposition p): a
// predicted argument is correct when a gold argument has its type and
// exactly its pieces; arguments of type V are not counted (srl-eval.pl's
// excluded set). Throws when a proposition's two tag lists differ in length.
SrlScores srl_scores(const std::vector<std::vector<std::string>>& gold,
                     const std::vector<std::vector<std::string>>& pred);

}  // namespace attn
