// Word tokenisation shared by every text loader: lowercase, words and
// punctuation as separate tokens.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Rules, in order (see docs/data.md):
//  - ASCII letters are lowercased; letters and digits form words.
//  - An apostrophe (' or the typographic U+2018/U+2019, both emitted as ')
//    joins a word when it sits between two word characters ("don't"), or at
//    the start of a clitic "'s 're 've 'll 'd 'm 't" followed by a non-word
//    character ("it 's" from pre-tokenised corpora stays "'s"). Anywhere else
//    it is a token of its own.
//  - Every other non-space ASCII character is a token of its own ("3.5" is
//    "3", ".", "5").
//  - Non-ASCII UTF-8: letters (U+00C0 and above, outside the punctuation
//    ranges below) are word characters, kept as they are except Latin-1
//    capitals U+00C0..U+00DE, which are lowercased. No-break and typographic
//    spaces (U+00A0, U+2000..U+200B, U+202F, U+205F, U+3000, U+FEFF), C1
//    controls and the replacement character U+FFFD separate words. Latin-1
//    punctuation and symbols (U+00A1..U+00BF, U+00D7, U+00F7) and general
//    punctuation (U+2010..U+2027, U+2030..U+205E) are tokens of their own.
//    Bytes that are not valid UTF-8 (raw Latin-1 in old mail, for instance)
//    are dropped and separate words.
std::vector<std::string> tokenize(const std::string& text);

// ASCII lowercase of a pre-tokenised token (SST leaves, CoNLL tokens), with
// the same Latin-1 capital folding as tokenize().
std::string lowercase_token(const std::string& token);

}  // namespace attn
