#include "attn/train/data/tokenizer.h"

#include <cstdint>

namespace attn {

namespace {

enum class CharClass { Space, Word, Apostrophe, Punct, Invalid };

struct Char {
  CharClass cls;
  uint32_t cp;      // code point (0 for invalid bytes)
  size_t length;    // bytes consumed
};

// Decodes one UTF-8 sequence at text[i]; rejects overlong forms, surrogates
// and truncated sequences (each such byte comes back as Invalid, length 1).
Char decode(const std::string& text, size_t i) {
  unsigned char b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return {CharClass::Punct, b0, 1};
  size_t n;
  uint32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return {CharClass::Invalid, 0, 1};
  }
  if (i + n > text.size()) return {CharClass::Invalid, 0, 1};
  for (size_t k = 1; k < n; ++k) {
    unsigned char b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return {CharClass::Invalid, 0, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {CharClass::Invalid, 0, 1};
  return {CharClass::Punct, cp, n};
}

CharClass classify(uint32_t cp) {
  if (cp < 0x80) {
    char c = static_cast<char>(cp);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return CharClass::Space;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return CharClass::Word;
    if (c == '\'') return CharClass::Apostrophe;
    if (cp < 0x20 || cp == 0x7F) return CharClass::Space;  // other control characters
    return CharClass::Punct;
  }
  if (cp == 0x2018 || cp == 0x2019) return CharClass::Apostrophe;
  if (cp == 0xA0 || (cp >= 0x2000 && cp <= 0x200B) || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
      cp == 0xFEFF || cp == 0xFFFD || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
    return CharClass::Space;
  if (cp < 0xA0) return CharClass::Space;  // C1 controls
  if ((cp >= 0xA1 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7) return CharClass::Punct;
  if ((cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205E)) return CharClass::Punct;
  return CharClass::Word;
}

Char next_char(const std::string& text, size_t i) {
  Char c = decode(text, i);
  if (c.cls != CharClass::Invalid) c.cls = classify(c.cp);
  return c;
}

// Appends the lowercased bytes of one word character.
void append_word_char(std::string& out, const std::string& text, size_t i, const Char& c) {
  if (c.cp < 0x80) {
    char ch = text[i];
    out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
  } else if (c.cp >= 0xC0 && c.cp <= 0xDE && c.cp != 0xD7) {
    uint32_t lower = c.cp + 0x20;  // Latin-1 capitals sit 0x20 below their small letters
    out += static_cast<char>(0xC0 | (lower >> 6));
    out += static_cast<char>(0x80 | (lower & 0x3F));
  } else {
    out.append(text, i, c.length);
  }
}

bool is_word(const Char& c) { return c.cls == CharClass::Word; }

// Length in bytes of a clitic ("s", "re", "ve", "ll", "d", "m", "t") starting
// at text[i] and followed by a non-word character; 0 when there is none.
size_t clitic_length(const std::string& text, size_t i) {
  static const char* const kClitics[] = {"re", "ve", "ll", "s", "d", "m", "t"};
  for (const char* clitic : kClitics) {
    size_t n = 0;
    while (clitic[n] && i + n < text.size() && (text[i + n] | 0x20) == clitic[n]) ++n;
    if (clitic[n] != '\0') continue;
    if (i + n >= text.size()) return n;
    Char after = next_char(text, i + n);
    if (!is_word(after) && after.cls != CharClass::Apostrophe) return n;
  }
  return 0;
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    Char c = next_char(text, i);
    switch (c.cls) {
      case CharClass::Space:
      case CharClass::Invalid:
        flush();
        break;
      case CharClass::Word:
        append_word_char(word, text, i, c);
        break;
      case CharClass::Punct:
        flush();
        tokens.push_back(text.substr(i, c.length));
        break;
      case CharClass::Apostrophe: {
        size_t after = i + c.length;
        bool next_is_word = after < text.size() && is_word(next_char(text, after));
        if (!word.empty() && next_is_word) {
          word += '\'';  // inside a word
        } else if (word.empty() && next_is_word && clitic_length(text, after) > 0) {
          word += '\'';  // start of a clitic such as 's
        } else {
          flush();
          tokens.push_back("'");
        }
        break;
      }
    }
    i += c.length;
  }
  flush();
  return tokens;
}

std::string lowercase_token(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  size_t i = 0;
  while (i < token.size()) {
    Char c = decode(token, i);
    if (c.cls == CharClass::Invalid) {
      out += token[i];  // pre-tokenised data is kept byte for byte
    } else {
      append_word_char(out, token, i, c);
    }
    i += c.length;
  }
  return out;
}

}  // namespace attn
