// Splits running text (a SQuAD passage) into sentences. The authors of seed
// 002 used NLTK's Punkt (nltk.sent_tokenize, exp_SQuAD_sim/src/dataset.py);
// this is a rule-based stand-in with the same main decisions:
//  - a sentence ends after '.', '!' or '?' (and any closing quotes or
//    brackets right after it) when whitespace follows and the next word
//    does not start with a lowercase ASCII letter;
//  - a '.' does not end a sentence after a known abbreviation ("Mr.",
//    "Dr.", "St.", "e.g.", "U.S.", "Jan.", "No.", ... matched ignoring case),
//    a single letter (initials: "J. R. R. Tolkien"), or a word with a '.'
//    inside ("U.S.", "a.m.").
// Spans cover the text without gaps: each sentence's span runs to the start
// of the next, so every character (an answer's start included) lies in one.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

struct SentenceSpan {
  size_t begin = 0, end = 0;  // byte offsets, [begin, end)
};

// At least one span for a text that is not all whitespace; none otherwise.
std::vector<SentenceSpan> split_sentences(const std::string& text);

// The sentences' text, trimmed of surrounding whitespace.
std::vector<std::string> sentence_texts(const std::string& text);

}  // namespace attn
