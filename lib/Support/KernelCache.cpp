//===- KernelCache.cpp - On-disk cache of compiled kernels ----------------===//
//
// The entry format (all integers little-endian):
//   "NABLAKC1"            8 bytes of magic (the 1 is the format's version)
//   payload size          u64
//   XXH3-128 of payload   u64 low half, u64 high half
//   payload:              key (u32 size, bytes), file count (u32), then per
//                         file its name (u32 size, bytes) and contents (u64
//                         size, bytes)
// The checksum guards against damage, not forgery (the key is SHA-256; the
// directory's permissions are the cache's security), so it is the fast one:
// a hit of a 3 MB cubin+PTX entry spends little time hashing. A reader
// accepts an entry only when the magic, the size, the checksum and the key
// all match and the payload parses to its last byte; anything else
// is a corrupt entry, removed and reported as a miss. Nothing here takes a
// lock: writers publish with rename, readers verify what they read.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/KernelCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

using namespace llvm;
using namespace nabla;

static constexpr StringLiteral kMagic = "NABLAKC1";
static constexpr size_t kHeaderSize = 8 + 8 + 16;
static constexpr StringLiteral kEntrySuffix = ".nkc";
static constexpr StringLiteral kTemporarySuffix = ".tmp";
/// A temporary file older than this was left by a writer that died; it is
/// removed during eviction.
static constexpr std::chrono::hours kAbandonedTemporaryAge(1);

namespace {
/// Process-wide counts (every KernelCache of the process adds to them).
struct Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, corrupt{0}, evictions{0};
};
} // namespace

static Counters &counters() {
  static Counters instance;
  return instance;
}

KernelCacheStatistics nabla::getKernelCacheStatistics() {
  Counters &c = counters();
  KernelCacheStatistics statistics;
  statistics.hits = c.hits;
  statistics.misses = c.misses;
  statistics.stores = c.stores;
  statistics.corrupt = c.corrupt;
  statistics.evictions = c.evictions;
  return statistics;
}

/// True when an environment variable is set to something other than "" or
/// "0".
static bool isSetToTrue(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && StringRef(value) != "0";
}

std::optional<uint64_t> nabla::parseCacheSize(StringRef text) {
  text = text.trim();
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (toUpper(text.back())) {
    case 'K':
      scale = 1ull << 10;
      break;
    case 'M':
      scale = 1ull << 20;
      break;
    case 'G':
      scale = 1ull << 30;
      break;
    default:
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value;
  if (text.empty() || !all_of(text, isDigit) || text.getAsInteger(10, value))
    return std::nullopt;
  if (value > UINT64_MAX / scale)
    return std::nullopt;
  return value * scale;
}

Expected<KernelCacheConfig> KernelCacheConfig::fromEnvironment(bool enabled) {
  KernelCacheConfig config;
  if (const char *size = std::getenv("NABLA_CACHE_SIZE"); size && *size) {
    std::optional<uint64_t> parsed = parseCacheSize(size);
    if (!parsed)
      return createStringError(
          inconvertibleErrorCode(),
          "$NABLA_CACHE_SIZE must be a number of bytes, optionally with a "
          "K, M or G suffix, not '%s'",
          size);
    config.maxBytes = *parsed;
  }
  config.verbose = isSetToTrue("NABLA_CACHE_VERBOSE");
  // A cap of 0 keeps nothing: the same as no cache.
  if (!enabled || isSetToTrue("NABLA_NO_CACHE") || config.maxBytes == 0)
    return config;
  if (const char *directory = std::getenv("NABLA_CACHE_DIR");
      directory && *directory) {
    config.directory = directory;
    return config;
  }
  // $XDG_CACHE_HOME, else ~/.cache; without either there is no cache.
  SmallString<128> path;
  if (sys::path::cache_directory(path)) {
    sys::path::append(path, "nabla");
    config.directory = std::string(path);
  }
  return config;
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

void KernelCacheKey::add(StringRef field, StringRef value) {
  uint8_t length[8];
  support::endian::write64le(length, field.size());
  hasher.update(ArrayRef<uint8_t>(length));
  hasher.update(field);
  support::endian::write64le(length, value.size());
  hasher.update(ArrayRef<uint8_t>(length));
  hasher.update(value);
}

void KernelCacheKey::add(StringRef field, int64_t value) {
  add(field, StringRef(std::to_string(value)));
}

void KernelCacheKey::addFileIdentity(StringRef field, StringRef path) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status)) {
    add(field, (path + " (missing)").str());
    return;
  }
  add(field,
      formatv("{0} {1} {2}", path, status.getSize(),
              status.getLastModificationTime().time_since_epoch().count())
          .str());
}

void KernelCacheKey::addDirectoryIdentity(StringRef field,
                                          StringRef directory) {
  std::vector<std::string> names;
  std::error_code ec;
  for (sys::fs::directory_iterator it(directory, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(std::string(sys::path::filename(it->path())));
  if (ec) {
    add(field, (directory + " (unreadable)").str());
    return;
  }
  llvm::sort(names);
  add(field, formatv("{0}: {1} files", directory, names.size()).str());
  for (const std::string &name : names) {
    SmallString<128> path(directory);
    sys::path::append(path, name);
    addFileIdentity(field, path);
  }
}

std::string KernelCacheKey::hex() {
  // result() leaves the state as it was, so the key can grow further.
  std::array<uint8_t, 32> digest = hasher.result();
  return toHex(ArrayRef<uint8_t>(digest), /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

static void appendU32(std::string &out, uint32_t value) {
  char bytes[4];
  support::endian::write32le(bytes, value);
  out.append(bytes, 4);
}

static void appendU64(std::string &out, uint64_t value) {
  char bytes[8];
  support::endian::write64le(bytes, value);
  out.append(bytes, 8);
}

/// The whole entry file for `files` under `key`.
static std::string encodeEntry(StringRef key, ArrayRef<CachedFile> files) {
  std::string payload;
  appendU32(payload, key.size());
  payload.append(key);
  appendU32(payload, files.size());
  for (const CachedFile &file : files) {
    appendU32(payload, file.name.size());
    payload.append(file.name);
    appendU64(payload, file.contents.size());
    payload.append(file.contents);
  }
  XXH128_hash_t checksum = xxh3_128bits(arrayRefFromStringRef(payload));
  std::string entry(kMagic);
  appendU64(entry, payload.size());
  appendU64(entry, checksum.low64);
  appendU64(entry, checksum.high64);
  entry += payload;
  return entry;
}

namespace {
/// Reads the payload front to back, failing (never reading past the end)
/// on a size that does not fit.
class PayloadReader {
public:
  explicit PayloadReader(StringRef bytes) : rest(bytes) {}

  bool readU32(uint32_t &value) {
    if (rest.size() < 4)
      return false;
    value = support::endian::read32le(rest.data());
    rest = rest.drop_front(4);
    return true;
  }
  bool readU64(uint64_t &value) {
    if (rest.size() < 8)
      return false;
    value = support::endian::read64le(rest.data());
    rest = rest.drop_front(8);
    return true;
  }
  bool readBytes(uint64_t size, std::string &out) {
    if (rest.size() < size)
      return false;
    out = rest.take_front(size).str();
    rest = rest.drop_front(size);
    return true;
  }
  bool atEnd() const { return rest.empty(); }

private:
  StringRef rest;
};
} // namespace

/// The files of an entry file, or std::nullopt when it is not a complete,
/// intact entry for `key`.
static std::optional<std::vector<CachedFile>> decodeEntry(StringRef key,
                                                          StringRef entry) {
  if (entry.size() < kHeaderSize || !entry.starts_with(kMagic))
    return std::nullopt;
  uint64_t payloadSize = support::endian::read64le(entry.data() + 8);
  XXH128_hash_t stored{support::endian::read64le(entry.data() + 16),
                       support::endian::read64le(entry.data() + 24)};
  StringRef payload = entry.drop_front(kHeaderSize);
  if (payload.size() != payloadSize ||
      !(xxh3_128bits(arrayRefFromStringRef(payload)) == stored))
    return std::nullopt;
  PayloadReader reader(payload);
  uint32_t keySize, count;
  std::string storedKey;
  if (!reader.readU32(keySize) || !reader.readBytes(keySize, storedKey) ||
      storedKey != key || !reader.readU32(count))
    return std::nullopt;
  std::vector<CachedFile> files;
  for (uint32_t i = 0; i < count; ++i) {
    CachedFile file;
    uint32_t nameSize;
    uint64_t size;
    if (!reader.readU32(nameSize) || !reader.readBytes(nameSize, file.name) ||
        !reader.readU64(size) || !reader.readBytes(size, file.contents))
      return std::nullopt;
    files.push_back(std::move(file));
  }
  if (!reader.atEnd())
    return std::nullopt;
  return files;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

std::string KernelCache::getEntryPath(StringRef key) const {
  SmallString<256> path(config.directory);
  sys::path::append(path, key + kEntrySuffix);
  return std::string(path);
}

void KernelCache::report(const Twine &message) const {
  if (config.verbose)
    errs() << "nabla-cache: " << message << "\n";
}

std::optional<std::vector<CachedFile>>
KernelCache::lookup(StringRef key) const {
  if (!isEnabled())
    return std::nullopt;
  std::string path = getEntryPath(key);
  Expected<sys::fs::file_t> file = sys::fs::openNativeFileForRead(path);
  if (!file) {
    consumeError(file.takeError());
    ++counters().misses;
    report("miss " + key);
    return std::nullopt;
  }
  // Read, not mapped: another process may truncate or replace the file.
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getOpenFile(
      *file, path, /*FileSize=*/-1, /*RequiresNullTerminator=*/false,
      /*IsVolatile=*/true);
  std::optional<std::vector<CachedFile>> files;
  if (buffer)
    files = decodeEntry(key, (*buffer)->getBuffer());
  if (files) {
    // Recently used: eviction removes the oldest modification times first.
    // Best effort (a cache shared between users may not allow it).
    (void)sys::fs::setLastAccessAndModificationTime(
        *file, std::chrono::system_clock::now());
  }
  sys::fs::closeFile(*file);
  if (!files) {
    (void)sys::fs::remove(path);
    ++counters().corrupt;
    ++counters().misses;
    report("corrupt entry " + key + " removed");
    return std::nullopt;
  }
  ++counters().hits;
  report("hit " + key);
  return files;
}

bool KernelCache::store(StringRef key, ArrayRef<CachedFile> files) const {
  if (!isEnabled())
    return false;
  if (sys::fs::create_directories(config.directory))
    return false;
  std::string entry = encodeEntry(key, files);
  SmallString<256> model(config.directory);
  sys::path::append(model, key + "-%%%%%%%%%%%%" + kTemporarySuffix);
  SmallString<256> temporary;
  int fd;
  if (sys::fs::createUniqueFile(model, fd, temporary))
    return false;
  bool written;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << entry;
    os.close();
    written = !os.has_error();
    os.clear_error();
  }
  // rename replaces an entry another process stored meanwhile: both are
  // complete, and readers hold whichever they opened.
  if (!written || sys::fs::rename(temporary, getEntryPath(key))) {
    (void)sys::fs::remove(temporary);
    return false;
  }
  ++counters().stores;
  report(formatv("stored {0} ({1} bytes)", key, entry.size()));
  evict(key);
  return true;
}

void KernelCache::evict(StringRef keep) const {
  struct Item {
    sys::TimePoint<> modified;
    uint64_t size;
    std::string path;
  };
  std::vector<Item> entries;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (sys::fs::directory_iterator it(config.directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    sys::fs::file_status status;
    if (sys::fs::status(it->path(), status) ||
        status.type() != sys::fs::file_type::regular_file)
      continue;
    if (name.ends_with(kTemporarySuffix)) {
      if (now - status.getLastModificationTime() > kAbandonedTemporaryAge)
        (void)sys::fs::remove(it->path());
      continue;
    }
    if (!name.ends_with(kEntrySuffix))
      continue;
    total += status.getSize();
    if (name.drop_back(kEntrySuffix.size()) != keep)
      entries.push_back(
          {status.getLastModificationTime(), status.getSize(), it->path()});
  }
  if (total <= config.maxBytes)
    return;
  llvm::sort(entries, [](const Item &a, const Item &b) {
    return a.modified < b.modified ||
           (a.modified == b.modified && a.path < b.path);
  });
  for (const Item &item : entries) {
    if (total <= config.maxBytes)
      break;
    // Another process may have removed it already; it is gone either way.
    (void)sys::fs::remove(item.path);
    total -= item.size;
    ++counters().evictions;
    report("evicted " + sys::path::stem(item.path));
  }
}
