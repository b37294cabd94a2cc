// The word-level processing around BPE for translation: pretokenize()
// before learning or applying BPE, detokenize() on the model's output before
// BLEU. Case is kept (BLEU is case-sensitive). Rules in docs/data.md, "Translation".
#pragma once
#include <string>
#include <vector>

namespace attn {

// Words of one sentence: the line is cut on whitespace (Python's set,
// non-ASCII spaces included), then every ASCII punctuation character is a
// token of its own, except
//  - '.' and ',' between two digits ("3.5", "1,000" stay whole), and
//  - '-' and '\'' between two word characters ("well-known", "don't").
// Word characters are everything else (letters, digits, non-ASCII).
std::vector<std::string> pretokenize(const std::string& line);

// The inverse for ordinary text: words joined by single spaces, except that
// . , ! ? ; : % ) ] } attach to the word before, ( [ { attach to the word
// after, and straight quotes " and ' alternate between opening (attached to
// the next word) and closing (attached to the previous one).
// detokenize(pretokenize(s)) == s for text spaced that way.
std::string detokenize(const std::vector<std::string>& words);

// A model's output as subword units (Bpe::encode's form, "@@" marking a
// unit continued by the next) back to a sentence: Bpe::decode, then detokenize.
std::string detokenize_units(const std::vector<std::string>& units);

}  // namespace attn
