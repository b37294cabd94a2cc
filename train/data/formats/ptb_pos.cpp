// Penn Treebank WSJ part-of-speech tagging with the usual split: sections
// 00-18 train, 19-21 dev, 22-24 test. DIR holds the section folders 00..24
// (the treebank's wsj/NN layout); every file in them holds one sentence per
// line as whitespace-separated word/TAG tokens, the tokens split at the last
// '/', "\/" in a word read as '/' and "\*" as '*'. Empty elements (tag
// -NONE-) are dropped; of an ambiguous tag "A|B" the first is kept.
#include <algorithm>
#include <filesystem>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/formats/tagged_sentences.h"

namespace attn {

namespace {

namespace fs = std::filesystem;
using loader_util::fail_at;
using loader_util::quote;
using loader_util::TaggedFile;
using loader_util::TaggedSentence;

const char* const kLoader = "load_ptb_pos";

std::string unescape(const std::string& word) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '\\' && i + 1 < word.size() && (word[i + 1] == '/' || word[i + 1] == '*')) ++i;
    out += word[i];
  }
  return out;
}

void read_section_file(const std::string& file, TaggedFile& into) {
  const std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) continue;
    TaggedSentence s;
    for (const std::string& token : loader_util::split_whitespace(lines[i])) {
      const size_t slash = token.rfind('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == token.size() || token[slash - 1] == '\\')
        fail_at(kLoader, file, i + 1, "token " + quote(token) + " is not word/TAG");
      std::string tag = token.substr(slash + 1);
      if (tag == "-NONE-") continue;
      tag = tag.substr(0, tag.find('|'));
      if (tag.empty()) fail_at(kLoader, file, i + 1, "token " + quote(token) + " has an empty tag");
      s.tokens.push_back(unescape(token.substr(0, slash)));
      s.tags.push_back(tag);
      s.lines.push_back(i + 1);
    }
    s.file = file;
    if (!s.tokens.empty()) into.sentences.push_back(std::move(s));
  }
}

// Sections first..last, their files in name order.
TaggedFile read_sections(const std::string& dir, int first, int last) {
  TaggedFile out;
  out.path = loader_util::join_path(dir, (first < 10 ? "0" : "") + std::to_string(first)) + ".." +
             (last < 10 ? "0" : "") + std::to_string(last);
  for (int section = first; section <= last; ++section) {
    const std::string folder = loader_util::join_path(dir, (section < 10 ? "0" : "") + std::to_string(section));
    std::error_code ec;
    ATTN_CHECK(fs::is_directory(folder, ec), kLoader, "cannot open the section folder ", folder,
               " (DIR must hold the WSJ sections 00..24: 00-18 train, 19-21 dev, 22-24 test)");
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    ATTN_CHECK(!files.empty(), kLoader, "the section folder ", folder, " holds no files");
    for (const std::string& file : files) read_section_file(file, out);
  }
  return out;
}

}  // namespace

Dataset load_ptb_pos(const std::string& dir) {
  return loader_util::tagged_dataset(kLoader, "ptb-pos", read_sections(dir, 0, 18), read_sections(dir, 19, 21),
                                     read_sections(dir, 22, 24), false);
}

}  // namespace attn
