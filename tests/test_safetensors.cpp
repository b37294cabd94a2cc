// safetensors I/O: round trips, byte-level format compatibility, rejection of
// damaged files with messages naming the file and the problem, atomic saves,
// and loading a checkpoint into a module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;

std::string temp_path(const std::string& name) { return testing_support::scratch_path(name); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

// A file made of a length prefix, `header` and `data`, as any writer would.
std::string file_with(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

// Loading `path` throws an Error whose message names the file and contains `what`.
void expect_load_error(const std::string& path, const std::string& what) {
  try {
    load_safetensors(path);
    ADD_FAILURE() << "loading " << path << " did not throw (expected '" << what << "')";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

bool no_temp_files_left(const std::string& path) {
  std::string dir = path.substr(0, path.rfind('/') + 1), base = path.substr(path.rfind('/') + 1) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool clean = true;
  while (dirent* e = ::readdir(d)) clean = clean && std::string(e->d_name).rfind(base, 0) != 0;
  ::closedir(d);
  return clean;
}

TEST(Safetensors, RoundTripsAllFourDtypesScalarsAndEmptyTensors) {
  const std::string path = temp_path("roundtrip.safetensors");
  Tensor f32 = from_vector({1.5, -2.25, 3.0e7, 0.1, -0.0, 6.0}, {2, 3}, DType::F32);
  Tensor f64 = from_vector({0.1, 1e-300, -7.0, 1.0 / 3.0}, {4, 1}, DType::F64);
  Tensor u8 = from_vector({0, 1, 255, 7}, {2, 2}, DType::U8);
  Tensor i64 = from_indices({-5, 0, 9007199254740993LL}, {3});
  Tensor scalar_t = scalar(42.5, DType::F64);
  Tensor none = zeros({0, 3}, DType::F32);
  save_safetensors(path, {{"f32", f32}, {"f64", f64}, {"u8", u8}, {"i64", i64}, {"scalar", scalar_t}, {"none", none}});
  std::map<std::string, Tensor> back = load_safetensors(path);
  ASSERT_EQ(back.size(), 6u);
  for (const auto& [name, t] : std::map<std::string, Tensor>{
           {"f32", f32}, {"f64", f64}, {"u8", u8}, {"scalar", scalar_t}, {"none", none}}) {
    EXPECT_EQ(back[name].dtype(), t.dtype()) << name;
    EXPECT_EQ(back[name].shape(), t.shape()) << name;
    EXPECT_EQ(back[name].to_vector(), t.to_vector()) << name;
  }
  ASSERT_EQ(back["i64"].dtype(), DType::I64);
  const int64_t* ints = back["i64"].data<int64_t>();
  EXPECT_EQ(ints[0], -5);
  EXPECT_EQ(ints[1], 0);
  EXPECT_EQ(ints[2], 9007199254740993LL);  // not representable as a double: proves a bitwise copy
  EXPECT_EQ(back["scalar"].dim(), 0);
  EXPECT_TRUE(no_temp_files_left(path));
}

TEST(Safetensors, MetadataRoundTripsIncludingCharactersJsonMustEscape) {
  const std::string path = temp_path("metadata.safetensors");
  std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"quote\"back\\slash", "line\nbreak\ttab \x01 caf\xc3\xa9"}, {"empty", ""}};
  save_safetensors(path, {{"name with \"quotes\"", ones({1})}}, meta);
  std::map<std::string, std::string> read;
  auto back = load_safetensors(path, &read);
  EXPECT_EQ(read, meta);
  ASSERT_EQ(back.count("name with \"quotes\""), 1u);
  EXPECT_EQ(back.begin()->second.to_vector(), std::vector<double>({1.0}));
}

TEST(Safetensors, NonContiguousTensorsAreWrittenInRowMajorOrder) {
  const std::string path = temp_path("strided.safetensors");
  Tensor base = from_vector({0, 1, 2, 3, 4, 5}, {2, 3}, DType::F64);
  Tensor t = transpose(base, 0, 1);  // [3, 2]: 0 3 / 1 4 / 2 5
  ASSERT_FALSE(t.is_contiguous());
  Tensor every_other = slice(from_vector({0, 1, 2, 3, 4, 5, 6}, {7}), 0, 1, 7, 2);  // 1 3 5, offset 1
  Tensor broadcast = expand(from_vector({7, 8}, {1, 2}), {3, 2});
  save_safetensors(path, {{"t", t}, {"odd", every_other}, {"bc", broadcast}});
  auto back = load_safetensors(path);
  EXPECT_EQ(back["t"].shape(), (Shape{3, 2}));
  EXPECT_EQ(back["t"].to_vector(), std::vector<double>({0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(back["odd"].to_vector(), std::vector<double>({1, 3, 5}));
  EXPECT_EQ(back["bc"].to_vector(), std::vector<double>({7, 8, 7, 8, 7, 8}));
}

// A file assembled byte by byte as the format describes: proves we read what
// other writers produce.
TEST(Safetensors, HandBuiltFileFromRawBytesParses) {
  const std::string path = temp_path("handmade.safetensors");
  write_bytes(path, file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1.5f, -2.0f})));
  auto t = load_safetensors(path);
  ASSERT_EQ(t.count("a"), 1u);
  EXPECT_EQ(t["a"].dtype(), DType::F32);
  EXPECT_EQ(t["a"].shape(), Shape{2});
  EXPECT_EQ(t["a"].to_vector(), std::vector<double>({1.5, -2.0}));

  // Whitespace, padding, metadata first, tensors listed out of data order, a
  // \u escape in a name and an escaped slash: all valid JSON a writer may use.
  std::string header =
      "{ \"__metadata__\" : {\"format\":\"pt\"},\n \"b\\u00e9\" : {\"dtype\":\"U8\", \"shape\":[1,2], "
      "\"data_offsets\":[8,10]},\n \"a\\/1\": {\"data_offsets\":[0,8], \"shape\":[], \"dtype\":\"F64\"} }      ";
  double d = -0.5;
  std::string data(reinterpret_cast<const char*>(&d), 8);
  data += std::string("\x03\x04", 2);
  write_bytes(path, file_with(header, data));
  std::map<std::string, std::string> meta;
  t = load_safetensors(path, &meta);
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(t.at("a/1").item(), -0.5);
  EXPECT_EQ(t.at("b\xc3\xa9").to_vector(), std::vector<double>({3, 4}));
}

// The bytes we write follow the layout exactly, with the data 8-byte aligned.
TEST(Safetensors, WrittenBytesFollowTheLayout) {
  const std::string path = temp_path("layout.safetensors");
  save_safetensors(path, {{"w", from_vector({1.5, -2.0}, {2}, DType::F32)}, {"m", from_vector({1}, {1}, DType::U8)}});
  std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  ASSERT_EQ(bytes.size(), 8 + n + 9);
  EXPECT_EQ((8 + n) % 8, 0u);
  std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.find("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                        "\"m\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[8,9]}}"),
            0u)
      << header;
  EXPECT_EQ(header.find_first_not_of(' ', header.rfind('}') + 1), std::string::npos);  // padded with spaces
  EXPECT_EQ(bytes.substr(8 + n, 8), f32_bytes({1.5f, -2.0f}));
  EXPECT_EQ(bytes.back(), '\x01');
}

TEST(Safetensors, TruncatedFilesAreRejectedAtEveryCut) {
  const std::string good = temp_path("whole.safetensors");
  save_safetensors(good, {{"a", ones({3, 2})}, {"b", zeros({4}, DType::F64)}});
  std::string bytes = read_bytes(good);
  uint64_t n = static_cast<uint8_t>(bytes[0]) | static_cast<uint64_t>(static_cast<uint8_t>(bytes[1])) << 8;
  const std::string path = temp_path("cut.safetensors");
  for (size_t cut : {size_t{0}, size_t{5}, size_t{8}, static_cast<size_t>(8 + n / 2), static_cast<size_t>(8 + n),
                     static_cast<size_t>(8 + n + 10), bytes.size() - 1}) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
    write_bytes(path, bytes.substr(0, cut));
    expect_load_error(path, "truncated");
  }
  // A header length far beyond the file, and one that would overflow.
  write_bytes(path, le64(1ull << 62) + "{}");
  expect_load_error(path, "truncated");
  write_bytes(path, le64(~0ull) + "{}");
  expect_load_error(path, "truncated");
  // Data offsets past the data section.
  write_bytes(path, file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1.0f})));
  expect_load_error(path, "truncated file: tensor 'a' has data_offsets [0, 8] but the data section holds only 4");
}

TEST(Safetensors, DamagedHeadersAreRejectedWithTheProblemNamed) {
  const std::string path = temp_path("bad.safetensors");
  const std::string eight = f32_bytes({1.0f, 2.0f});
  struct Case {
    std::string header, data, what;
  };
  const std::vector<Case> cases = {
      {R"({"a":{"dtype":"F32","shape":[2],)", eight, "malformed JSON header"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)", eight, "unexpected text after"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8.5]}})", eight, "whole numbers"},
      {R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight, "negative numbers"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{}})", eight, "key 'a' appears twice"},
      {R"(["a"])", "", "the header must be a JSON object"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight,
       "tensor 'a' of dtype F32 and shape [3] needs 12 bytes but data_offsets [0, 8] span 8"},
      {R"({"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", eight, "unsupported dtype 'F16'"},
      {R"({"a":{"dtype":"XYZ","shape":[2],"data_offsets":[0,8]}})", eight, "unsupported dtype 'XYZ'"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       eight, "tensors 'a' [0, 8] and 'b' [4, 8] overlap"},
      {R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight, "out-of-order data_offsets [8, 0]"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight, "bytes [0, 4) of the data section"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight, "4 bytes after the last tensor"},
      {R"({"a":{"dtype":"F32","shape":[2]}})", eight, "lacks the field 'data_offsets'"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", eight, "unexpected field 'extra'"},
      {R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", eight,
       "value of 'k' must be a string"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", eight, "data_offsets must be two integers"},
      {R"({"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}})", eight, "integer too large"},
      {R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", eight, "is too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    write_bytes(path, file_with(c.header, c.data));
    expect_load_error(path, c.what);
  }
}

TEST(Safetensors, MissingFileOrDirectoryIsNamed) {
  expect_load_error(temp_path("does_not_exist.safetensors"), "cannot open");
  expect_load_error(::testing::TempDir(), "not a regular file");
}

TEST(Safetensors, RejectedSaveLeavesTheOldFileIntact) {
  const std::string path = temp_path("atomic.safetensors");
  save_safetensors(path, {{"w", from_vector({1, 2, 3}, {3})}});
  const std::string before = read_bytes(path);
  try {
    save_safetensors(path, {{"w", zeros({5})}, {"v", zeros({1})}, {"w", zeros({2})}});
    ADD_FAILURE() << "duplicate names were accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor name 'w' appears twice"));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(load_safetensors(path).at("w").to_vector(), std::vector<double>({1, 2, 3}));
  EXPECT_THROW(save_safetensors(path, {{"__metadata__", zeros({1})}}), Error);
  EXPECT_THROW(save_safetensors(path, {{"", zeros({1})}}), Error);
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_TRUE(no_temp_files_left(path));
}

// A failure after the data is written (the rename fails because the target
// is a non-empty directory) removes the temporary file and leaves the target.
TEST(Safetensors, FailedRenameRemovesTheTemporaryFile) {
  const std::string dir = temp_path("target_is_a_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  write_bytes(dir + "/keep", "x");
  try {
    save_safetensors(dir, {{"w", ones({4})}});
    ADD_FAILURE() << "saving over a directory succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot rename"));
  }
  EXPECT_EQ(read_bytes(dir + "/keep"), "x");
  EXPECT_TRUE(no_temp_files_left(dir));
  ::unlink((dir + "/keep").c_str());
  ::rmdir(dir.c_str());
}

TEST(Safetensors, SaveIntoAMissingDirectoryFailsClearly) {
  const std::string path = temp_path("no_such_dir") + "/w.safetensors";
  try {
    save_safetensors(path, {{"w", ones({1})}});
    ADD_FAILURE() << "saving into a missing directory succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot create"));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

// A module with a parameter, a buffer and a child, for load_into_module.
class Child : public Module {
 public:
  explicit Child(DType dtype) { v = register_parameter("v", zeros({2}, dtype)); }
  Tensor v;
};

class Toy : public Module {
 public:
  explicit Toy(uint64_t seed, DType dtype = DType::F32) : child(dtype) {
    Generator g(seed);
    w = register_parameter("w", rand_uniform({2, 3}, -1, 1, g, dtype));
    b = register_buffer("b", rand_uniform({3}, -1, 1, g, dtype));
    register_module("child", child);
    write_element(child.v, 0, static_cast<double>(seed));
  }
  Tensor w, b;
  Child child;
};

std::map<std::string, Tensor> state_of(const Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : m.named_state()) out[name] = t;
  return out;
}

TEST(LoadIntoModule, CopiesInPlaceKeepingParameterHandles) {
  const std::string path = temp_path("toy.safetensors");
  Toy a(1), b(2);
  save_safetensors(path, a.named_state());
  Tensor handle = b.w;  // what an optimizer would hold
  load_into_module(b, load_safetensors(path));
  EXPECT_EQ(handle.impl(), b.named_parameters()[0].second.impl());
  EXPECT_EQ(handle.to_vector(), a.w.to_vector());
  EXPECT_TRUE(handle.requires_grad());
  EXPECT_TRUE(handle.is_leaf());
  EXPECT_EQ(b.b.to_vector(), a.b.to_vector());
  EXPECT_EQ(b.child.v.to_vector(), std::vector<double>({1, 0}));
}

TEST(LoadIntoModule, ConvertsBetweenFloat32AndFloat64) {
  Toy f64(3, DType::F64), f32(4, DType::F32);
  load_into_module(f32, state_of(f64));
  EXPECT_EQ(f32.w.dtype(), DType::F32);
  std::vector<double> want = f64.w.to_vector(), got = f32.w.to_vector();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], static_cast<double>(static_cast<float>(want[i])));
}

TEST(LoadIntoModule, MissingTensorIsNamedAndNothingIsCopied) {
  Toy a(1), b(2);
  const std::vector<double> before = b.w.to_vector();
  auto tensors = state_of(a);
  tensors.erase("child.v");
  try {
    load_into_module(b, tensors);
    ADD_FAILURE() << "a checkpoint without child.v loaded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("lacks the tensor 'child.v'"));
  }
  EXPECT_EQ(b.w.to_vector(), before);  // checked before any copy
}

TEST(LoadIntoModule, UnexpectedTensorFailsOnlyWhenStrict) {
  Toy a(1), b(2);
  auto tensors = state_of(a);
  tensors["encoder.extra"] = zeros({1});
  try {
    load_into_module(b, tensors);
    ADD_FAILURE() << "an unexpected tensor was accepted in strict mode";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'encoder.extra'"));
  }
  load_into_module(b, tensors, false);
  EXPECT_EQ(b.w.to_vector(), a.w.to_vector());
}

TEST(LoadIntoModule, ShapeAndDtypeMismatchesAreNamed) {
  Toy b(2);
  auto tensors = state_of(b);
  tensors["w"] = zeros({3, 2});
  try {
    load_into_module(b, tensors);
    ADD_FAILURE() << "a wrong shape loaded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("w: checkpoint has [3, 2], model has [2, 3]"));
  }
  tensors = state_of(b);
  tensors["b"] = from_indices({1, 2, 3}, {3});
  try {
    load_into_module(b, tensors);
    ADD_FAILURE() << "an int64 tensor loaded into a float buffer";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("b: checkpoint has dtype int64, model has float32"));
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The duplicate-key check was a scan of the keys so far (quadratic): 300,000
// keys took minutes. A hash set keeps the parse linear in the header size.
// No clock is read here (timings depend on the machine and its load): a
// quadratic check would run into CTest's per-test timeout instead.
TEST(SafetensorsLinearHeader, ManyKeysWithADuplicateAreRejected) {
  const std::string path = temp_path("many_keys.safetensors");
  std::string header = "{";
  const int keys = 300000;
  for (int i = 0; i < keys; ++i) header += "\"k" + std::to_string(i) + "\":0,";
  header += "\"k0\":0}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  file += header;
  std::ofstream(path, std::ios::binary) << file;
  std::string msg;
  try {
    load_safetensors(path);
  } catch (const Error& e) {
    msg = e.what();
  }
  std::remove(path.c_str());
  EXPECT_NE(msg.find("key 'k0' appears twice"), std::string::npos) << msg;
}

}  // namespace
}  // namespace attn
