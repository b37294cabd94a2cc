// Chunk tag schemes of the NER corpora: IOB1
// (CoNLL-2003's files: B- only where a chunk follows one of its own type),
// BIO (IOB2: every chunk starts with B-) and BIOES (S- a one-token chunk,
// E- a chunk's last token). Conversions keep the chunks conlleval reads.
#pragma once
#include <string>
#include <vector>

namespace attn {

enum class TagScheme { Bio, Bioes };

// "bio" or "bioes"; anything else throws naming the known ones.
TagScheme tag_scheme_from_name(const std::string& name);

// An IOB1 or BIO sentence in BIO: an I-X that does not continue a chunk of
// type X (after O, at the start, after another type) becomes B-X. Throws
// for a tag that is neither O nor B-/I- followed by a type, naming its
// position.
std::vector<std::string> to_bio(const std::vector<std::string>& tags);

// A BIO sentence in `scheme`: for BIOES, B-X not followed by I-X becomes
// S-X and I-X not followed by I-X becomes E-X.
std::vector<std::string> bio_in_scheme(const std::vector<std::string>& bio, TagScheme scheme);

}  // namespace attn
