#include "attn/train/data/formats/tagged_sentences.h"

#include <map>
#include <set>

#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {
namespace loader_util {

namespace {

const std::string& file_of(const TaggedFile& f, const TaggedSentence& s) { return s.file.empty() ? f.path : s.file; }

// The rule evaluation uses to decide on entity F1 (train/metrics.h
// is_chunk_tag), spelled here because the data layer sits below it.
bool is_chunk_tag(const std::string& tag) {
  return tag.size() > 2 && tag[1] == '-' && (tag[0] == 'B' || tag[0] == 'I' || tag[0] == 'E' || tag[0] == 'S');
}

// A chunk-tagged set must hold nothing but O and prefixed tags, or entity
// F1 fails at the first dev evaluation, an epoch into training.
void check_chunk_tags(const std::string& loader, const std::vector<const TaggedFile*>& files,
                      const std::set<std::string>& tag_set) {
  std::string example;
  for (const std::string& t : tag_set)
    if (is_chunk_tag(t)) {
      example = t;
      break;
    }
  if (example.empty()) return;  // not chunk-tagged: scored by token accuracy only
  for (const TaggedFile* f : files)
    for (const TaggedSentence& s : f->sentences)
      for (size_t k = 0; k < s.tags.size(); ++k)
        if (s.tags[k] != "O" && !is_chunk_tag(s.tags[k]))
          fail_at(loader, file_of(*f, s), s.lines[k],
                  "tag " + quote(s.tags[k]) + " is not O, B-<type>, I-<type>, E-<type> or S-<type>, but " +
                      quote(example) +
                      " makes this a chunk tag set (scored by entity F1); use one scheme (IOB1, BIO or BIOES) "
                      "throughout, or tags without B-/I-/E-/S- prefixes");
}

}  // namespace

Dataset tagged_dataset(const std::string& loader, const std::string& name, const TaggedFile& train,
                       const TaggedFile& dev, const TaggedFile& test, bool allow_similar_labels) {
  const std::vector<const TaggedFile*> files = {&train, &dev, &test};
  LabelTally tally;
  for (const TaggedFile* f : files)
    for (size_t n = 0; n < f->sentences.size(); ++n)
      for (size_t k = 0; k < f->sentences[n].tags.size(); ++k)
        tally.add(f->sentences[n].tags[k], file_of(*f, f->sentences[n]), f->sentences[n].lines[k],
                  k == 0 && (n == 0 || file_of(*f, f->sentences[n]) != file_of(*f, f->sentences[n - 1])));
  tally.check(loader, allow_similar_labels);
  std::vector<std::string> names = tally.names();
  std::set<std::string> tag_set(names.begin(), names.end());
  check_chunk_tags(loader, files, tag_set);

  Dataset d;
  d.name = name;
  d.task = TaskKind::Tag;
  d.label_names.assign(tag_set.begin(), tag_set.end());  // byte order
  std::map<std::string, int64_t> index = label_index(d.label_names);
  auto convert = [&](const TaggedFile& raw, std::vector<Example>& out) {
    for (const TaggedSentence& s : raw.sentences) {
      Example e;
      e.cased_tokens = s.tokens;
      for (const std::string& t : s.tokens) e.tokens.push_back(lowercase_token(t));
      for (const std::string& t : s.tags) e.tags.push_back(index.at(t));
      out.push_back(std::move(e));
    }
  };
  convert(train, d.train);
  convert(dev, d.dev);
  convert(test, d.test);
  if (dev.path.empty()) d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  return d;
}

}  // namespace loader_util
}  // namespace attn
