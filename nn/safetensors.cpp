#include "attn/nn/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/util/json.h"
#include "attn/engine/copy.h"

namespace attn {

namespace {

constexpr const char* kOp = "safetensors";
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the reference implementation's limit too
constexpr const char* kMetadataKey = "__metadata__";

bool host_is_little_endian() {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// A header number: JSON allows any double, safetensors only whole,
// non-negative numbers (exact below 2^53, more than any file's size).
uint64_t header_integer(const std::string& path, const std::string& where, const Json& v) {
  ATTN_CHECK(v.is_number(), kOp, path, ": ", where, " must be an integer, got ", json_type_name(v.type()));
  const double x = v.as_number();
  ATTN_CHECK(x >= 0, kOp, path, ": ", where, ": negative numbers are not allowed in a safetensors header");
  ATTN_CHECK(x == std::floor(x), kOp, path, ": ", where, ": only whole numbers are allowed in a safetensors header");
  ATTN_CHECK(x <= 9007199254740992.0, kOp, path, ": ", where, ": integer too large (above 2^53)");
  return static_cast<uint64_t>(x);
}

const char* format_dtype(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::U8: return "U8";
    case DType::I64: return "I64";
  }
  return "?";
}

bool parse_dtype(const std::string& name, DType* out) {
  static const std::map<std::string, DType> table = {
      {"F32", DType::F32}, {"F64", DType::F64}, {"U8", DType::U8}, {"I64", DType::I64}};
  auto it = table.find(name);
  if (it == table.end()) return false;
  *out = it->second;
  return true;
}

// Closes the descriptor and removes the temporary file unless released.
class TempFile {
 public:
  TempFile(std::string path, const std::string& target) : path_(std::move(path)), target_(target) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ATTN_CHECK(fd_ >= 0, kOp, target_, ": cannot create '", path_, "' (", std::strerror(errno), ")");
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* data, size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      ssize_t n = ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      ATTN_CHECK(n > 0, kOp, target_, ": writing '", path_, "' failed (", std::strerror(errno), ")");
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }

  // Flushes to disk and renames over the target.
  void commit() {
    ATTN_CHECK(::fsync(fd_) == 0, kOp, target_, ": flushing '", path_, "' failed (", std::strerror(errno), ")");
    int rc = ::close(fd_);
    fd_ = -1;
    ATTN_CHECK(rc == 0, kOp, target_, ": closing '", path_, "' failed (", std::strerror(errno), ")");
    ATTN_CHECK(::rename(path_.c_str(), target_.c_str()) == 0, kOp, target_, ": cannot rename '", path_,
               "' over it (", std::strerror(errno), ")");
    committed_ = true;
    // Make the rename itself durable; failing here loses nothing already written.
    std::string dir = target_.find('/') == std::string::npos ? "." : target_.substr(0, target_.rfind('/') + 1);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::string path_;
  const std::string& target_;
  int fd_ = -1;
  bool committed_ = false;
};

// numel * element size, or false on overflow.
bool byte_count(const std::vector<uint64_t>& shape, size_t element, uint64_t* out) {
  uint64_t n = element;
  for (uint64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

struct Entry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

std::string offsets_str(const Entry& e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

// Checks one tensor's header entry and turns it into an Entry.
Entry parse_entry(const std::string& path, const std::string& name, const Json& v) {
  ATTN_CHECK(v.is_object(), kOp, path, ": tensor '", name, "' must be an object, got ", json_type_name(v.type()));
  for (const auto& [key, field] : v.as_object())
    ATTN_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", kOp, path, ": tensor '", name,
               "' has an unexpected field '", key, "'");
  const Json *dtype = v.find("dtype"), *shape = v.find("shape"), *offsets = v.find("data_offsets");
  ATTN_CHECK(dtype && shape && offsets, kOp, path, ": tensor '", name, "' lacks the field '",
             !dtype ? "dtype" : !shape ? "shape" : "data_offsets", "'");
  ATTN_CHECK(dtype->is_string(), kOp, path, ": tensor '", name, "': dtype must be a string");
  Entry e;
  e.name = name;
  ATTN_CHECK(parse_dtype(dtype->as_string(), &e.dtype), kOp, path, ": tensor '", name, "' has unsupported dtype '",
             dtype->as_string(), "' (attn reads F32, F64, U8 and I64)");
  ATTN_CHECK(shape->is_array(), kOp, path, ": tensor '", name, "': shape must be an array of integers");
  const std::string in_shape = "tensor '" + name + "': shape";
  std::vector<uint64_t> dims;
  for (const Json& d : shape->as_array()) {
    dims.push_back(header_integer(path, in_shape, d));
    e.shape.push_back(static_cast<int64_t>(dims.back()));
  }
  ATTN_CHECK(offsets->is_array() && offsets->as_array().size() == 2, kOp, path, ": tensor '", name,
             "': data_offsets must be two integers [begin, end]");
  const std::string in_offsets = "tensor '" + name + "': data_offsets";
  e.begin = header_integer(path, in_offsets, offsets->as_array()[0]);
  e.end = header_integer(path, in_offsets, offsets->as_array()[1]);
  ATTN_CHECK(e.begin <= e.end, kOp, path, ": tensor '", name, "' has out-of-order data_offsets ", offsets_str(e),
             " (begin after end)");
  uint64_t bytes = 0;
  ATTN_CHECK(byte_count(dims, dtype_size(e.dtype), &bytes), kOp, path, ": tensor '", name, "': shape ",
             shape_str(e.shape), " is too large");
  ATTN_CHECK(e.end - e.begin == bytes, kOp, path, ": tensor '", name, "' of dtype ", dtype->as_string(),
             " and shape ", shape_str(e.shape), " needs ", bytes, " bytes but data_offsets ", offsets_str(e),
             " span ", e.end - e.begin);
  return e;
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  ATTN_CHECK(host_is_little_endian(), kOp, path, ": writing needs a little-endian host");
  // Every check runs before the file is touched.
  std::set<std::string> names;
  for (const auto& [name, t] : tensors) {
    ATTN_CHECK(!name.empty(), kOp, path, ": tensor names must not be empty");
    ATTN_CHECK(name != kMetadataKey, kOp, path, ": '", kMetadataKey, "' is reserved and cannot name a tensor");
    ATTN_CHECK(names.insert(name).second, kOp, path, ": tensor name '", name, "' appears twice");
    ATTN_CHECK(t.defined(), kOp, path, ": tensor '", name, "' is undefined");
  }

  NoGrad no_grad;
  std::vector<Tensor> host;  // contiguous CPU copies, in order
  std::string header = "{";
  if (!metadata.empty()) {
    header += json_quote(kMetadataKey) + ":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header += (first ? "" : ",") + json_quote(k) + ":" + json_quote(v);
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    Tensor c = contiguous(t.device() == Device::CPU ? t.detach() : to_device(t.detach(), Device::CPU));
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * dtype_size(c.dtype());
    if (header.size() > 1) header += ",";
    header += json_quote(name) + ":{\"dtype\":\"" + format_dtype(c.dtype()) + "\",\"shape\":[";
    for (size_t i = 0; i < c.shape().size(); ++i) header += (i ? "," : "") + std::to_string(c.shape()[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
    host.push_back(c);
  }
  header += "}";
  // Pad with spaces so the data section starts 8-byte aligned, as the
  // reference writer does (readers may then map the data in place).
  while ((8 + header.size()) % 8 != 0) header += ' ';

  TempFile file(path + ".tmp." + std::to_string(::getpid()), path);
  uint8_t length[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));
  file.write(length, 8);
  file.write(header.data(), header.size());
  for (const Tensor& c : host)
    if (c.numel() > 0) file.write(c.raw_data(), static_cast<size_t>(c.numel()) * dtype_size(c.dtype()));
  file.commit();
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  struct stat st;
  ATTN_CHECK(::stat(path.c_str(), &st) == 0, kOp, "cannot open '", path, "' (", std::strerror(errno), ")");
  ATTN_CHECK(S_ISREG(st.st_mode), kOp, "cannot open '", path, "' (not a regular file)");
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.good(), kOp, "cannot open '", path, "' (", std::strerror(errno), ")");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  ATTN_CHECK(file_size >= 8, kOp, path, ": truncated file: ", file_size,
             " bytes, shorter than the 8-byte header length");
  uint8_t length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(length[i]) << (8 * i);
  ATTN_CHECK(header_size <= file_size - 8, kOp, path, ": truncated file: the header length is ", header_size,
             " bytes but only ", file_size - 8, " bytes follow it");
  ATTN_CHECK(header_size <= kMaxHeaderBytes, kOp, path, ": the header length ", header_size,
             " exceeds the 100 MiB limit");
  std::string text(static_cast<size_t>(header_size), '\0');
  in.read(&text[0], static_cast<std::streamsize>(header_size));
  ATTN_CHECK(in.good(), kOp, path, ": reading the header failed");
  const uint64_t data_size = file_size - 8 - header_size;

  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Error& e) {
    throw Error(std::string(kOp) + ": " + path + ": malformed JSON header: " + e.what());
  }
  ATTN_CHECK(doc.is_object(), kOp, path, ": the header must be a JSON object, got ", json_type_name(doc.type()));
  std::vector<Entry> entries;
  std::map<std::string, std::string> meta;
  for (const auto& [name, v] : doc.as_object()) {
    if (name == kMetadataKey) {
      ATTN_CHECK(v.is_object(), kOp, path, ": ", kMetadataKey, " must be an object of strings");
      for (const auto& [k, s] : v.as_object()) {
        ATTN_CHECK(s.is_string(), kOp, path, ": ", kMetadataKey, " value of '", k, "' must be a string, got ",
                   json_type_name(s.type()));
        meta[k] = s.as_string();
      }
      continue;
    }
    Entry e = parse_entry(path, name, v);
    ATTN_CHECK(e.end <= data_size, kOp, path, ": truncated file: tensor '", name, "' has data_offsets ",
               offsets_str(e), " but the data section holds only ", data_size, " bytes");
    entries.push_back(e);
  }

  // The tensors must tile the data section exactly: no holes, no overlaps.
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : order) {
    ATTN_CHECK(e->begin >= covered, kOp, path, ": tensors '", previous ? previous->name : "", "' ",
               previous ? offsets_str(*previous) : "", " and '", e->name, "' ", offsets_str(*e), " overlap");
    ATTN_CHECK(e->begin == covered, kOp, path, ": bytes [", covered, ", ", e->begin,
               ") of the data section belong to no tensor (before '", e->name, "')");
    covered = e->end;
    previous = e;
  }
  ATTN_CHECK(covered == data_size, kOp, path, ": ", data_size - covered,
             " bytes after the last tensor belong to no tensor");

  ATTN_CHECK(host_is_little_endian(), kOp, path, ": reading needs a little-endian host");
  std::map<std::string, Tensor> out;
  const uint64_t data_start = 8 + header_size;
  for (const Entry& e : entries) {
    Tensor t = empty(e.shape, e.dtype);
    const uint64_t bytes = e.end - e.begin;
    if (bytes > 0) {
      in.seekg(static_cast<std::streamoff>(data_start + e.begin), std::ios::beg);
      in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(bytes));
      ATTN_CHECK(in.good(), kOp, path, ": reading tensor '", e.name, "' failed");
    }
    out.emplace(e.name, t);
  }
  if (metadata) *metadata = meta;
  return out;
}

void load_into_module(Module& m, const std::map<std::string, Tensor>& tensors, bool strict) {
  const auto state = m.named_state();
  // Check everything first, so a bad checkpoint leaves the model untouched.
  std::set<std::string> expected;
  for (const auto& [name, t] : state) {
    expected.insert(name);
    auto it = tensors.find(name);
    ATTN_CHECK(it != tensors.end(), "load_into_module", "the checkpoint lacks the tensor '", name, "' (shape ",
               shape_str(t.shape()), ")");
    const Tensor& src = it->second;
    ATTN_CHECK(src.shape() == t.shape(), "load_into_module", name, ": checkpoint has ", shape_str(src.shape()),
               ", model has ", shape_str(t.shape()));
    ATTN_CHECK(src.dtype() == t.dtype() || (is_floating(src.dtype()) && is_floating(t.dtype())), "load_into_module",
               name, ": checkpoint has dtype ", dtype_name(src.dtype()), ", model has ", dtype_name(t.dtype()));
  }
  if (strict) {
    std::string unexpected;
    for (const auto& [name, t] : tensors)
      if (!expected.count(name)) unexpected += (unexpected.empty() ? "'" : ", '") + name + "'";
    ATTN_CHECK(unexpected.empty(), "load_into_module", "the checkpoint has tensor(s) the model does not: ",
               unexpected);
  }
  NoGrad no_grad;
  for (const auto& [name, t] : state) copy_into(t, tensors.at(name).to(t.device()));
}

}  // namespace attn
