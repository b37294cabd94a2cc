#include "attn/train/data/formats/tag_schemes.h"

#include "attn/engine/error.h"

namespace attn {

TagScheme tag_scheme_from_name(const std::string& name) {
  if (name == "bio") return TagScheme::Bio;
  if (name == "bioes") return TagScheme::Bioes;
  ATTN_CHECK(false, "tag scheme", "unknown tag scheme '", name, "' (known: bio, bioes)");
  return TagScheme::Bio;
}

namespace {
bool continues(const std::string& tag, const std::string& type) {
  return tag.size() == type.size() + 2 && tag[1] == '-' && (tag[0] == 'B' || tag[0] == 'I') &&
         tag.compare(2, std::string::npos, type) == 0;
}
}  // namespace

std::vector<std::string> to_bio(const std::vector<std::string>& tags) {
  std::vector<std::string> out(tags);
  for (size_t i = 0; i < tags.size(); ++i) {
    const std::string& t = tags[i];
    if (t == "O") continue;
    ATTN_CHECK(t.size() > 2 && t[1] == '-' && (t[0] == 'B' || t[0] == 'I'), "to_bio", "tag ", i, " '", t,
               "' is not O, B-<type> or I-<type>");
    if (t[0] == 'I' && (i == 0 || !continues(tags[i - 1], t.substr(2)))) out[i] = "B-" + t.substr(2);
  }
  return out;
}

std::vector<std::string> bio_in_scheme(const std::vector<std::string>& bio, TagScheme scheme) {
  if (scheme == TagScheme::Bio) return bio;
  std::vector<std::string> out(bio);
  for (size_t i = 0; i < bio.size(); ++i) {
    if (bio[i] == "O") continue;
    const std::string type = bio[i].substr(2);
    const bool next_continues = i + 1 < bio.size() && bio[i + 1] == "I-" + type;
    if (!next_continues) out[i] = (bio[i][0] == 'B' ? "S-" : "E-") + type;
  }
  return out;
}

}  // namespace attn
