#include "attn/train/data/spam/email_text.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "attn/util/text.h"

namespace attn {

namespace {

constexpr int kMaxMimeDepth = 8;

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string trim(const std::string& s) { return text::trim(s, " \t\r\n"); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

using text::append_utf8;

bool is_latin1(const std::string& charset) {
  std::string c = lower(charset);
  return c == "iso-8859-1" || c == "iso8859-1" || c == "latin1" || c == "latin-1" || c == "windows-1252" ||
         c == "cp1252" || c == "iso-8859-15";
}

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// Bytes >= 0x80 read as Latin-1 code points (Windows-1252's 0x80..0x9F
// extras become C1 controls, which the tokenizer treats as spaces). Text that
// is already valid UTF-8 is left alone: mislabelled charsets are common.
std::string latin1_to_utf8(const std::string& s) {
  if (valid_utf8(s)) return s;
  std::string out;
  out.reserve(s.size());
  for (char c : s) append_utf8(out, static_cast<unsigned char>(c));
  return out;
}

struct Headers {
  std::vector<std::pair<std::string, std::string>> fields;  // lowercased name, unfolded value
  std::string get(const std::string& name) const {
    for (const auto& f : fields)
      if (f.first == name) return f.second;
    return "";
  }
};

// Splits "headers \n\n body" (after CRLF normalisation). `raw` may start with
// an mbox "From " line, which is skipped like any line without a colon.
std::pair<Headers, std::string> split_message(const std::string& raw) {
  Headers h;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t eol = raw.find('\n', pos);
    if (eol == std::string::npos) eol = raw.size();
    std::string line = raw.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) return {h, pos < raw.size() ? raw.substr(pos) : std::string()};
    if ((line[0] == ' ' || line[0] == '\t') && !h.fields.empty()) {
      h.fields.back().second += " " + trim(line);  // folded continuation
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || line.find(' ') < colon) continue;
    h.fields.emplace_back(lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return {h, ""};
}

// Value of a parameter such as boundary="..." in a Content-Type header.
std::string header_param(const std::string& value, const std::string& name) {
  std::string lv = lower(value);
  size_t at = 0;
  while ((at = lv.find(name, at)) != std::string::npos) {
    bool starts = at == 0 || lv[at - 1] == ';' || lv[at - 1] == ' ' || lv[at - 1] == '\t';
    size_t p = at + name.size();
    while (p < lv.size() && lv[p] == ' ') ++p;
    if (starts && p < lv.size() && lv[p] == '=') {
      ++p;
      while (p < lv.size() && lv[p] == ' ') ++p;
      if (p < value.size() && value[p] == '"') {
        size_t close = value.find('"', p + 1);
        return value.substr(p + 1, close == std::string::npos ? std::string::npos : close - p - 1);
      }
      size_t end = value.find_first_of("; \t", p);
      return value.substr(p, end == std::string::npos ? std::string::npos : end - p);
    }
    at = p;
  }
  return "";
}

std::string media_type(const Headers& h) {
  std::string ct = lower(h.get("content-type"));
  std::string type = trim(ct.substr(0, ct.find(';')));
  return type.empty() ? "text/plain" : type;
}

// Markup in a part that does not declare itself HTML (common in spam).
bool contains_html(const std::string& text) {
  static const char* const kMarkers[] = {"<html", "<body", "<a href", "</a>", "<br>", "<br/>", "<br />", "<p>",
                                         "</p>", "<font", "<table", "<div", "<td", "<img"};
  std::string l = lower(text);
  for (const char* m : kMarkers)
    if (l.find(m) != std::string::npos) return true;
  return false;
}

// Quoted-printable that the headers do not declare: two or more soft line
// breaks ("=" at the end of a line) plus an encoded byte.
bool looks_quoted_printable(const std::string& text) {
  size_t soft = 0;
  for (size_t p = text.find("=\n"); p != std::string::npos && soft < 2; p = text.find("=\n", p + 2)) ++soft;
  return soft >= 2 && (text.find("=20") != std::string::npos || text.find("=3D") != std::string::npos);
}

struct Collected {
  std::vector<std::string> plain, html;
};

void walk_part(const Headers& h, const std::string& body, int depth, Collected& out);

void walk_multipart(const std::string& boundary, const std::string& body, int depth, Collected& out) {
  std::string delim = "--" + boundary;
  std::vector<std::string> parts;
  size_t pos = 0;
  bool inside = false;
  size_t part_start = 0;
  while (pos <= body.size()) {
    size_t eol = body.find('\n', pos);
    if (eol == std::string::npos) eol = body.size();
    std::string line = body.substr(pos, eol - pos);
    std::string t = trim(line);
    if (t.compare(0, delim.size(), delim) == 0) {
      if (inside) parts.push_back(body.substr(part_start, pos > part_start ? pos - part_start - 1 : 0));
      bool closing = t.compare(delim.size(), 2, "--") == 0;
      if (closing) {
        inside = false;
        break;
      }
      inside = true;
      part_start = eol + 1;
    }
    pos = eol + 1;
  }
  if (inside && part_start < body.size()) parts.push_back(body.substr(part_start));  // unterminated last part
  for (const std::string& part : parts) {
    auto [headers, part_body] = split_message(part);
    walk_part(headers, part_body, depth + 1, out);
  }
}

void walk_part(const Headers& h, const std::string& body, int depth, Collected& out) {
  if (depth > kMaxMimeDepth) return;
  std::string type = media_type(h);
  if (type.compare(0, 10, "multipart/") == 0) {
    std::string boundary = header_param(h.get("content-type"), "boundary");
    if (!boundary.empty()) {
      walk_multipart(boundary, body, depth, out);
      return;
    }
    type = "text/plain";  // no boundary: read it as text
  }
  if (type == "message/rfc822") {
    auto [inner_headers, inner_body] = split_message(body);
    walk_part(inner_headers, inner_body, depth + 1, out);
    return;
  }
  if (type.compare(0, 5, "text/") != 0) return;  // attachments, images
  std::string encoding = lower(trim(h.get("content-transfer-encoding")));
  std::string text = body;
  if (encoding == "quoted-printable") text = decode_quoted_printable(text);
  else if (encoding == "base64") text = decode_base64(text);
  else if (encoding.empty() && looks_quoted_printable(text)) text = decode_quoted_printable(text);
  if (is_latin1(header_param(h.get("content-type"), "charset"))) text = latin1_to_utf8(text);
  if (type == "text/html") out.html.push_back(strip_html(text));
  else if (type == "text/enriched" || contains_html(text)) out.plain.push_back(strip_html(text));
  else out.plain.push_back(text);
}

std::string decode_encoded_words(const std::string& value) {
  std::string out;
  size_t pos = 0;
  while (pos < value.size()) {
    size_t start = value.find("=?", pos);
    if (start == std::string::npos) break;
    size_t q1 = value.find('?', start + 2);
    size_t q2 = q1 == std::string::npos ? q1 : value.find('?', q1 + 1);
    size_t end = q2 == std::string::npos ? q2 : value.find("?=", q2 + 1);
    if (end == std::string::npos || q2 != q1 + 2) {
      out += value.substr(pos, start + 2 - pos);
      pos = start + 2;
      continue;
    }
    std::string between = value.substr(pos, start - pos);
    // Whitespace between two adjacent encoded words is dropped (RFC 2047).
    if (!(pos > 0 && trim(between).empty())) out += between;
    std::string charset = value.substr(start + 2, q1 - start - 2);
    char enc = static_cast<char>(value[q1 + 1] | 0x20);
    std::string payload = value.substr(q2 + 1, end - q2 - 1);
    std::string decoded;
    if (enc == 'b') {
      decoded = decode_base64(payload);
    } else {
      for (char& c : payload)
        if (c == '_') c = ' ';
      decoded = decode_quoted_printable(payload);
    }
    out += is_latin1(charset) ? latin1_to_utf8(decoded) : decoded;
    pos = end + 2;
  }
  out += value.substr(pos < value.size() ? pos : value.size());
  return out;
}

bool starts_with_ci(const std::string& s, size_t at, const char* word) {
  for (size_t i = 0; word[i]; ++i) {
    if (at + i >= s.size()) return false;
    char c = s[at + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

// Position just past the closing tag "</name ...>" (case-insensitive), or npos.
size_t skip_element_body(const std::string& s, size_t from, const char* name) {
  std::string close = std::string("</") + name;
  for (size_t p = s.find('<', from); p != std::string::npos; p = s.find('<', p + 1)) {
    if (starts_with_ci(s, p, close.c_str())) {
      size_t gt = s.find('>', p);
      return gt == std::string::npos ? s.size() : gt + 1;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string decode_quoted_printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '=') {
      out += c;
      continue;
    }
    // Soft line break: '=' then optional trailing blanks, then (CR)LF.
    size_t j = i + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    if (j < text.size() && text[j] == '\r') ++j;
    if (j < text.size() && text[j] == '\n') {
      i = j;
      continue;
    }
    if (i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
      continue;
    }
    out += c;  // a stray '=' stays
  }
  return out;
}

std::string decode_base64(const std::string& text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') break;
    else continue;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string strip_html(const std::string& html) {
  std::string out;
  out.reserve(html.size());
  size_t i = 0;
  while (i < html.size()) {
    char c = html[i];
    if (c == '<') {
      if (html.compare(i, 4, "<!--") == 0) {
        size_t end = html.find("-->", i + 4);
        i = end == std::string::npos ? html.size() : end + 3;
        out += ' ';
        continue;
      }
      bool is_script = starts_with_ci(html, i, "<script"), is_style = starts_with_ci(html, i, "<style");
      size_t gt = html.find('>', i);
      // A '<' with no '>' after it, or followed by a space, is text ("a < b").
      if (gt == std::string::npos || (i + 1 < html.size() && (html[i + 1] == ' ' || html[i + 1] == '='))) {
        out += c;
        ++i;
        continue;
      }
      i = gt + 1;
      if (is_script || is_style) {
        size_t after = skip_element_body(html, i, is_script ? "script" : "style");
        if (after != std::string::npos) i = after;
      }
      out += ' ';
      continue;
    }
    if (c == '&') {
      size_t semi = html.find(';', i);
      if (semi != std::string::npos && semi - i <= 10) {
        std::string name = html.substr(i + 1, semi - i - 1);
        std::string lname = lower(name);
        std::string rep;
        if (lname == "amp") rep = "&";
        else if (lname == "lt") rep = "<";
        else if (lname == "gt") rep = ">";
        else if (lname == "quot") rep = "\"";
        else if (lname == "apos") rep = "'";
        else if (lname == "nbsp") rep = " ";
        else if (lname == "copy") rep = "\u00a9";
        else if (lname == "reg") rep = "\u00ae";
        else if (lname == "trade") rep = "\u2122";
        else if (lname == "mdash") rep = "\u2014";
        else if (lname == "ndash") rep = "\u2013";
        else if (lname == "hellip") rep = "\u2026";
        else if (lname == "lsquo" || lname == "rsquo") rep = "'";
        else if (lname == "ldquo" || lname == "rdquo") rep = "\"";
        else if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == std::string::npos && name[0] != '#')
          rep = " ";  // other named entities: a separator
        else if (name.size() >= 2 && name[0] == '#') {
          uint32_t cp = 0;
          bool ok = true, hex = name[1] == 'x' || name[1] == 'X';
          for (size_t k = hex ? 2 : 1; k < name.size() && ok; ++k) {
            int d = hex ? hex_value(name[k]) : (name[k] >= '0' && name[k] <= '9' ? name[k] - '0' : -1);
            if (d < 0 || cp > 0x10FFFF) ok = false;
            else cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
          }
          if (ok && name.size() > (hex ? 2u : 1u) && cp > 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF))
            append_utf8(rep, cp);
        }
        if (!rep.empty()) {
          out += rep;
          i = semi + 1;
          continue;
        }
      }
    }
    out += c;
    ++i;
  }
  return out;
}

std::string collapse_space(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool pending = false;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      pending = !out.empty();
      continue;
    }
    if (pending) out += ' ';
    pending = false;
    out += c;
  }
  return out;
}

EmailText parse_email(const std::string& raw) {
  std::string text;
  text.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i)
    if (!(raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n')) text += raw[i];
  auto [headers, body] = split_message(text);
  Collected parts;
  walk_part(headers, body, 0, parts);
  const std::vector<std::string>& chosen = parts.plain.empty() ? parts.html : parts.plain;
  std::string joined;
  for (const std::string& p : chosen) joined += p + "\n";
  EmailText out;
  out.subject = collapse_space(decode_encoded_words(headers.get("subject")));
  out.body = collapse_space(joined);
  return out;
}

std::string email_to_text(const std::string& raw) {
  EmailText e = parse_email(raw);
  if (e.subject.empty()) return e.body;
  if (e.body.empty()) return e.subject;
  return e.subject + " " + e.body;
}

}  // namespace attn
