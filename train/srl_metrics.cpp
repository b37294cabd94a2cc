#include "attn/train/srl_metrics.h"

#include <map>

#include "attn/engine/error.h"

namespace attn {

namespace {
bool is_b(const std::string& tag) { return tag.rfind("B-", 0) == 0; }

std::string type_of(const std::string& tag) {
  ATTN_CHECK(tag.size() > 2 && (tag[0] == 'B' || tag[0] == 'I') && tag[1] == '-', "srl_phrases", "tag '", tag,
             "' is not O, B-<role> or I-<role>");
  return tag.substr(2);
}

const char* const kContinuation = "C-";
const char* const kVerb = "V";
}  // namespace

std::vector<SrlPhrase> srl_phrases(const std::vector<std::string>& tags) {
  std::vector<SrlPhrase> out;
  bool open = false;
  for (size_t i = 0; i < tags.size(); ++i) {
    const std::string& tag = tags[i];
    if (tag == "O") {
      open = false;
      continue;
    }
    const std::string type = type_of(tag);
    if (!open || is_b(tag)) {
      out.push_back({type, static_cast<int64_t>(i), static_cast<int64_t>(i)});
      open = true;
    }
    out.back().end = static_cast<int64_t>(i) + 1;
  }
  return out;
}

std::vector<SrlArgument> srl_arguments(const std::vector<std::string>& tags) {
  std::vector<SrlArgument> args;
  std::map<std::string, size_t> latest;  // type -> its latest argument
  for (const SrlPhrase& p : srl_phrases(tags)) {
    if (p.type.rfind(kContinuation, 0) == 0) {
      const std::string base = p.type.substr(2);
      auto it = latest.find(base);
      if (it != latest.end()) {
        args[it->second].pieces.push_back({p.begin, p.end});
        continue;
      }
      args.push_back({base, {{p.begin, p.end}}});
      latest[base] = args.size() - 1;
      continue;
    }
    args.push_back({p.type, {{p.begin, p.end}}});
    latest[p.type] = args.size() - 1;
  }
  return args;
}

SrlScores srl_scores(const std::vector<std::vector<std::string>>& gold,
                     const std::vector<std::vector<std::string>>& pred) {
  ATTN_CHECK(gold.size() == pred.size(), "srl_scores", gold.size(), " gold propositions but ", pred.size(),
             " predicted");
  SrlScores s;
  for (size_t p = 0; p < gold.size(); ++p) {
    ATTN_CHECK(gold[p].size() == pred[p].size(), "srl_scores", "proposition ", p, " has ", gold[p].size(),
               " gold tags but ", pred[p].size(), " predicted");
    std::vector<SrlArgument> g = srl_arguments(gold[p]), q = srl_arguments(pred[p]);
    std::vector<bool> matched(g.size(), false);
    for (const SrlArgument& a : q) {
      if (a.type == kVerb) continue;
      bool ok = false;
      for (size_t k = 0; k < g.size() && !ok; ++k)
        if (!matched[k] && g[k] == a) matched[k] = ok = true;
      (ok ? s.correct : s.excess) += 1;
    }
    for (size_t k = 0; k < g.size(); ++k) s.missed += !matched[k] && g[k].type != kVerb;
  }
  if (s.correct + s.excess > 0) s.precision = static_cast<double>(s.correct) / static_cast<double>(s.correct + s.excess);
  if (s.correct + s.missed > 0) s.recall = static_cast<double>(s.correct) / static_cast<double>(s.correct + s.missed);
  if (s.precision + s.recall > 0) s.f1 = 2 * s.precision * s.recall / (s.precision + s.recall);
  return s;
}

}  // namespace attn
