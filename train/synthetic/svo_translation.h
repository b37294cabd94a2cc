// A synthetic translation task with a known answer, to exercise the whole
// translation path (data, BPE, encoder-decoder, decoding, BLEU) in seconds:
// English-like subject-verb-object sentences to German-like subject-object-
// verb ones. The grammar (docs/data.md, "Translation"):
//   source  NP_subj VERB NP_obj           NP = the ADJ{0..2} NOUN
//   target  NP'_subj NP'_obj VERB'+AGR    NP' = de NOUN' ADJ'{0..2}
// Every source word has its own target word (the lexicon is one to one),
// nouns are singular or plural in both, and the target verb takes the suffix
// "et" after a singular subject and "en" after a plural one: agreement
// across the object and the adjectives in between.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// n distinct (source, target) pairs, words separated by single spaces,
// drawn from a Generator seeded with `seed` (the same n and seed give the
// same pairs). n in 0..1000000 (the grammar has about 2.1 million sentences).
std::vector<std::pair<std::string, std::string>> svo_to_sov_pairs(int64_t n, uint64_t seed);

// The source sentence a target sentence of the grammar came from; throws
// attn::Error naming the problem for anything the grammar cannot produce
// (unknown word, wrong order, a verb suffix that disagrees with the subject).
std::string sov_to_svo(const std::string& target);

}  // namespace attn
