// The SGML entities of WMT's test sets that mteval-v13a (and sacreBLEU's 13a
// tokenisation) turn back into characters, shared by the SGML loader and
// BLEU so both read a reference the same way.
#pragma once
#include <string>

namespace attn {

// &quot; &amp; &lt; &gt; replaced by " & < >, each over the whole line in
// that order, as mteval does (so "&amp;quot;" becomes "&quot;"). Other
// entities stay as they are.
std::string unescape_mteval_entities(const std::string& line);

}  // namespace attn
