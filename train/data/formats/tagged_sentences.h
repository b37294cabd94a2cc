// What the tagging loaders share (not part of the public API): sentences of
// tokens as the file spells them with one tag each, and the step that checks
// their tag set and turns them into a Dataset.
#pragma once
#include <string>
#include <vector>

#include "attn/train/data/dataset.h"

namespace attn {
namespace loader_util {

struct TaggedSentence {
  std::vector<std::string> tokens, tags;  // tokens in their original case
  std::vector<size_t> lines;              // line of each token, for errors
  std::string file;                       // where the split spans several files; else the TaggedFile's path
};

struct TaggedFile {
  std::string path;
  std::vector<TaggedSentence> sentences;
};

// A Dataset of task Tag named `name`: tag names in byte order; tokens
// lowercased (lowercase_token) with the original case kept in cased_tokens
// for the character feature. An empty `dev` (no path) is a seeded 10% of
// train (split_off). Errors, naming file and line: tags as LabelTally checks
// labels; a chunk-tagged set (any B-, I-, E- or S- tag, scored by entity F1)
// that holds a tag other than O without such a prefix.
Dataset tagged_dataset(const std::string& loader, const std::string& name, const TaggedFile& train,
                       const TaggedFile& dev, const TaggedFile& test, bool allow_similar_labels);

}  // namespace loader_util
}  // namespace attn
