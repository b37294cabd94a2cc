// CoNLL-2003 NER in its official layout: DIR/eng.train, eng.testa (dev),
// eng.testb (test), "word POS chunk NER" per line, a blank line between
// sentences, -DOCSTART- lines between documents. The files tag in IOB1;
// tags are read as chunks (conlleval's rules) and written in BIO or BIOES.
#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/formats/tag_schemes.h"
#include "attn/train/data/formats/tagged_sentences.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::TaggedFile;
using loader_util::TaggedSentence;

const char* const kLoader = "load_conll03";

// The NER column in `scheme`; a tag that is not IOB1/BIO names its line.
void retag(const std::string& file, TaggedSentence& s, TagScheme scheme) {
  for (size_t k = 0; k < s.tags.size(); ++k) {
    const std::string& t = s.tags[k];
    if (t != "O" && !(t.size() > 2 && t[1] == '-' && (t[0] == 'B' || t[0] == 'I')))
      fail_at(kLoader, file, s.lines[k],
              "NER tag " + loader_util::quote(t) + " is not O, B-<type> or I-<type> (the files tag in IOB1)");
  }
  s.tags = bio_in_scheme(to_bio(s.tags), scheme);
}

TaggedFile read_conll03(const std::string& file, TagScheme scheme) {
  TaggedFile out{file, {}};
  TaggedSentence current;
  auto finish = [&] {
    if (!current.tokens.empty()) {
      retag(file, current, scheme);
      out.sentences.push_back(std::move(current));
    }
    current = TaggedSentence();
  };
  const std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) {
      finish();
      continue;
    }
    const std::vector<std::string> cols = loader_util::split_whitespace(lines[i]);
    if (cols[0] == "-DOCSTART-") {
      finish();
      continue;
    }
    if (cols.size() != 4)
      fail_at(kLoader, file, i + 1,
              "expected 4 columns (word POS chunk NER), found " + std::to_string(cols.size()));
    current.tokens.push_back(cols[0]);
    current.tags.push_back(cols[3]);
    current.lines.push_back(i + 1);
  }
  finish();
  return out;
}

}  // namespace

Dataset load_conll03(const std::string& dir, TagScheme scheme) {
  const std::string train = loader_util::join_path(dir, "eng.train"), dev = loader_util::join_path(dir, "eng.testa"),
                    test = loader_util::join_path(dir, "eng.testb");
  return loader_util::tagged_dataset(kLoader, "conll03", read_conll03(train, scheme), read_conll03(dev, scheme),
                                     read_conll03(test, scheme), false);
}

}  // namespace attn
