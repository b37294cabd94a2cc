#include "attn/util/text.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "attn/util/error.h"

namespace attn {
namespace text {

void fail_at(const std::string& loader, const std::string& file, size_t line, const std::string& what) {
  throw Error(loader + ": " + file + ":" + std::to_string(line) + ": " + what);
}

std::string quote(const std::string& text) {
  size_t cut = std::min(text.size(), kQuoteLimit);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = "'";
  for (size_t i = 0; i < cut; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut == text.size()) return out + "'";
  return out + "...' (" + std::to_string(text.size()) + " bytes)";
}

LineReader::LineReader(const std::string& loader, const std::string& file)
    : loader_(loader), file_(file), in_(std::make_unique<std::ifstream>(file, std::ios::binary)) {
  struct stat st;
  if (::stat(file.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(loader + ": " + file + " is a folder; give a file");
  if (!*in_) throw Error(loader + ": cannot open " + file);
}

LineReader::LineReader(const std::string& loader, const std::string& name, std::unique_ptr<std::istream> in)
    : loader_(loader), file_(name), in_(std::move(in)) {}

bool LineReader::next(std::string& line) {
  if (!in_chunk_) {
    if (!std::getline(*in_, chunk_)) {
      if (in_->bad()) throw Error(loader_ + ": read error in " + file_);
      return false;
    }
    pos_ = 0;
    in_chunk_ = true;
  }
  size_t cr = chunk_.find('\r', pos_);
  if (cr == std::string::npos) {
    line.assign(chunk_, pos_, std::string::npos);
    in_chunk_ = false;
  } else {
    line.assign(chunk_, pos_, cr - pos_);
    pos_ = cr + 1;
    in_chunk_ = pos_ < chunk_.size();  // a CR at the end of the chunk was a CRLF (or the file's last byte)
  }
  if (++line_no_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  return true;
}

namespace {

std::vector<std::string> all_lines(LineReader&& reader) {
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& loader, const std::string& file) {
  return all_lines(LineReader(loader, file));
}

std::vector<std::string> split_lines(const std::string& text) {
  return all_lines(LineReader("text", "the text", std::make_unique<std::istringstream>(text)));
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string unknown_word_hint(const std::string& word, const std::vector<std::string>& known) {
  const std::string guess = nearest_word(word, known);
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  return "'" + word + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)") + "; known: " + list;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string base_name(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path;
  size_t slash = path.rfind('/', end);
  return path.substr(slash == std::string::npos ? 0 : slash + 1, end - (slash == std::string::npos ? 0 : slash + 1) + 1);
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::vector<std::string> split_whitespace(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string::npos;
}

std::string trim(const std::string& s, const char* whitespace) {
  size_t b = s.find_first_not_of(whitespace);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(whitespace);
  return s.substr(b, e - b + 1);
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  size_t start = 0;
  for (size_t at; (at = s.find(from, start)) != std::string::npos; start = at + from.size())
    out.append(s, start, at - start).append(to);
  return out.append(s, start, std::string::npos);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp <= 0x10FFFF) {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace text
}  // namespace attn
