// Turns a raw RFC 822 message (as in the SpamAssassin corpus) into the text a
// classifier sees: the Subject plus the readable body. Light on purpose: no
// charset tables beyond Latin-1, no attachments, HTML reduced to its text.
#pragma once
#include <string>

namespace attn {

struct EmailText {
  std::string subject;  // decoded Subject header ("" when absent)
  std::string body;     // decoded, de-HTML'd body text
};

// Headers end at the first blank line. Only Subject is kept (RFC 2047
// encoded words "=?charset?Q|B?...?=" decoded). The body is walked as MIME:
// multipart bodies are split at their boundary (nested, message/rfc822
// included); text/* parts are decoded from quoted-printable or base64 and,
// when their charset is ISO-8859-1/Windows-1252, converted to UTF-8; other
// parts (images, attachments) are dropped. When any text/plain part exists
// only text/plain parts are kept, otherwise the text/html parts with their
// tags removed. Plain parts that contain markup (<a href, </a>, <br>, <p>,
// <font, <table, <html ... common in spam) and text/enriched are de-HTML'd
// too; a part without a declared encoding that has soft line breaks and =20
// or =3D is decoded as quoted-printable. Whitespace is collapsed to spaces.
EmailText parse_email(const std::string& raw);

// subject + " " + body, whitespace collapsed: one line, no tabs.
std::string email_to_text(const std::string& raw);

// Quoted-printable: "=" at line end is a soft break (removed), "=XX" a byte.
std::string decode_quoted_printable(const std::string& text);
// Base64, skipping characters outside the alphabet; stops at padding.
std::string decode_base64(const std::string& text);
// Drops comments, <script>/<style> contents and tags (a tag becomes a space;
// <br>, <p>, <div>... too); decodes &amp; &lt; &gt; &quot; &apos; &nbsp;
// &copy; &reg; &trade; &mdash; &ndash; &hellip; the curly quotes and numeric
// entities; other named entities become a space.
std::string strip_html(const std::string& html);
// Replaces each run of whitespace and control characters with one space and
// trims both ends.
std::string collapse_space(const std::string& text);

}  // namespace attn
