#include "attn/train/synthetic/svo_translation.h"

#include <map>
#include <set>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/util/text.h"

namespace attn {

namespace {

struct Noun {
  const char *source_singular, *source_plural, *target_singular, *target_plural;
};
struct Word {
  const char *source, *target;
};

const Noun kNouns[] = {{"cat", "cats", "kazi", "kazin"},         {"dog", "dogs", "hunu", "hunun"},
                       {"bird", "birds", "vogo", "vogon"},       {"child", "children", "kindo", "kindor"},
                       {"farmer", "farmers", "bauro", "bauron"}, {"teacher", "teachers", "lehro", "lehron"},
                       {"horse", "horses", "pferdo", "pferdon"}, {"student", "students", "studo", "studon"}};
const Word kAdjectives[] = {{"big", "gros"},   {"small", "klen"}, {"red", "rota"},
                            {"old", "alta"},   {"happy", "froha"}, {"quiet", "stila"}};
// Past-tense verbs, which do not show number in the source; target stems.
const Word kVerbs[] = {{"saw", "sah"},   {"followed", "folg"}, {"helped", "half"},
                       {"found", "fand"}, {"liked", "mog"},     {"called", "ruf"}};
const Word kDeterminer = {"the", "de"};
const char* const kSingularSuffix = "et";
const char* const kPluralSuffix = "en";

constexpr int64_t kMaxPairs = 1000000;
constexpr int kMaxAdjectives = 2;

template <class T, size_t N>
size_t count_of(const T (&)[N]) {
  return N;
}

struct NounPhrase {
  size_t noun = 0;
  bool plural = false;
  std::vector<size_t> adjectives;  // distinct, in source order
};

NounPhrase draw_noun_phrase(Generator& gen) {
  NounPhrase np;
  np.noun = gen.next_u64() % count_of(kNouns);
  np.plural = gen.next_u64() % 2 == 1;
  const size_t n_adj = gen.next_u64() % (kMaxAdjectives + 1);
  while (np.adjectives.size() < n_adj) {
    const size_t a = gen.next_u64() % count_of(kAdjectives);
    bool repeated = false;
    for (size_t b : np.adjectives) repeated = repeated || a == b;
    if (!repeated) np.adjectives.push_back(a);
  }
  return np;
}

std::string source_np(const NounPhrase& np) {
  std::string s = kDeterminer.source;
  for (size_t a : np.adjectives) s += std::string(" ") + kAdjectives[a].source;
  return s + " " + (np.plural ? kNouns[np.noun].source_plural : kNouns[np.noun].source_singular);
}

std::string target_np(const NounPhrase& np) {
  std::string s = std::string(kDeterminer.target) + " " +
                  (np.plural ? kNouns[np.noun].target_plural : kNouns[np.noun].target_singular);
  for (size_t a : np.adjectives) s += std::string(" ") + kAdjectives[a].target;
  return s;
}

[[noreturn]] void not_in_grammar(const std::string& target, const std::string& why) {
  throw Error("sov_to_svo: " + text::quote(target) + " is not a sentence of the grammar: " + why);
}

// Reads "de NOUN' ADJ'*" from words[at...], advancing `at`.
NounPhrase read_target_np(const std::vector<std::string>& words, size_t& at, const std::string& target) {
  if (at >= words.size() || words[at] != kDeterminer.target)
    not_in_grammar(target, "expected '" + std::string(kDeterminer.target) + "' at word " + std::to_string(at + 1));
  ++at;
  if (at >= words.size()) not_in_grammar(target, "a noun phrase ends without its noun");
  NounPhrase np;
  bool found = false;
  for (size_t n = 0; n < count_of(kNouns) && !found; ++n) {
    if (words[at] == kNouns[n].target_singular || words[at] == kNouns[n].target_plural) {
      np.noun = n;
      np.plural = words[at] == kNouns[n].target_plural;
      found = true;
    }
  }
  if (!found) not_in_grammar(target, "expected a noun, got " + text::quote(words[at]));
  ++at;
  for (; at < words.size(); ++at) {
    size_t a = 0;
    while (a < count_of(kAdjectives) && words[at] != kAdjectives[a].target) ++a;
    if (a == count_of(kAdjectives)) break;
    np.adjectives.push_back(a);
  }
  if (np.adjectives.size() > static_cast<size_t>(kMaxAdjectives))
    not_in_grammar(target, "more than " + std::to_string(kMaxAdjectives) + " adjectives on one noun");
  return np;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> svo_to_sov_pairs(int64_t n, uint64_t seed) {
  ATTN_CHECK(n >= 0 && n <= kMaxPairs, "svo_to_sov_pairs", "the number of sentences must lie in 0..", kMaxPairs,
             ", got ", n);
  Generator gen(seed);
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> pairs;
  while (static_cast<int64_t>(pairs.size()) < n) {
    const NounPhrase subject = draw_noun_phrase(gen), object = draw_noun_phrase(gen);
    const Word& verb = kVerbs[gen.next_u64() % count_of(kVerbs)];
    std::string source = source_np(subject) + " " + verb.source + " " + source_np(object);
    if (!seen.insert(source).second) continue;
    std::string target = target_np(subject) + " " + target_np(object) + " " + verb.target +
                         (subject.plural ? kPluralSuffix : kSingularSuffix);
    pairs.emplace_back(std::move(source), std::move(target));
  }
  return pairs;
}

std::string sov_to_svo(const std::string& target) {
  const std::vector<std::string> words = text::split_whitespace(target);
  size_t at = 0;
  const NounPhrase subject = read_target_np(words, at, target);
  const NounPhrase object = read_target_np(words, at, target);
  if (at + 1 != words.size())
    not_in_grammar(target, at == words.size() ? "no verb at the end" : "more than one word after the object");
  const std::string& verb = words[at];
  for (const Word& v : kVerbs) {
    for (const char* suffix : {kSingularSuffix, kPluralSuffix}) {
      if (verb != std::string(v.target) + suffix) continue;
      if ((suffix == kPluralSuffix) != subject.plural)
        not_in_grammar(target, "the verb " + text::quote(verb) + " does not agree with the subject's number");
      return source_np(subject) + " " + v.source + " " + source_np(object);
    }
  }
  not_in_grammar(target, "expected a verb at the end, got " + text::quote(verb));
}

}  // namespace attn
