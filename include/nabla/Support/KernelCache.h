//===- KernelCache.h - On-disk cache of compiled kernels --------*- C++ -*-===//
//
// The on-disk cache behind `nabla-compile`, `nabla-run` and Python: one entry
// per compilation, holding every output file of it, named by a content hash of
// everything that decides those files (the caller builds it with
// KernelCacheKey; nabla/Compile/CompileCache.h does it for compileModule).
//
// The directory is $NABLA_CACHE_DIR, else $XDG_CACHE_HOME/nabla, else
// ~/.cache/nabla; its size is capped by $NABLA_CACHE_SIZE (bytes, or with a
// K/M/G suffix; default 512M), and $NABLA_NO_CACHE (any value but "" and
// "0") turns it off. An entry is `<key>.nkc`: a header with the payload's
// size and checksum (XXH3-128) followed by the payload, written to a unique
// temporary name in the same directory and renamed into place, so that
// concurrent writers (also on NFS, where rename is atomic but locks are not
// to be trusted) never expose a partial entry. Every read checks the header: a
// truncated or corrupt entry is removed and reported as a miss. A hit sets
// the entry's modification time; after each store the oldest entries are
// removed until the directory is under its cap (least recently used first).
// The cache never fails a compilation: a directory that cannot be created,
// read or written is a miss.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_KERNELCACHE_H
#define NABLA_SUPPORT_KERNELCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SHA256.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nabla {

/// The default cap on the cache directory's size: 512 MiB.
constexpr uint64_t kDefaultKernelCacheBytes = 512ull << 20;

/// Where the cache lives and how it behaves.
struct KernelCacheConfig {
  /// The cache directory; empty: the cache is off.
  std::string directory;
  /// Entries are evicted, oldest first, while the directory holds more.
  uint64_t maxBytes = kDefaultKernelCacheBytes;
  /// Report hits, misses, stores and evictions on stderr
  /// ($NABLA_CACHE_VERBOSE).
  bool verbose = false;

  /// The configuration the environment describes ($NABLA_CACHE_DIR,
  /// $XDG_CACHE_HOME, $HOME, $NABLA_CACHE_SIZE, $NABLA_NO_CACHE,
  /// $NABLA_CACHE_VERBOSE); `enabled` false (a tool's --no-cache) turns it
  /// off too. An error for a malformed $NABLA_CACHE_SIZE.
  static llvm::Expected<KernelCacheConfig> fromEnvironment(bool enabled = true);
};

/// Parses a size in bytes: digits with an optional K, M or G suffix (powers
/// of 1024). std::nullopt when malformed.
std::optional<uint64_t> parseCacheSize(llvm::StringRef text);

/// A cache key under construction: every field is hashed with its name and
/// length, so that no two different field lists give the same bytes.
class KernelCacheKey {
public:
  void add(llvm::StringRef field, llvm::StringRef value);
  void add(llvm::StringRef field, int64_t value);
  /// The file at `path` as it is now: its path, size and modification time
  /// (or that it is missing). Stands for a tool or library that the output
  /// depends on, without reading it.
  void addFileIdentity(llvm::StringRef field, llvm::StringRef path);
  /// The identity of every regular file directly inside `directory`, in name
  /// order.
  void addDirectoryIdentity(llvm::StringRef field, llvm::StringRef directory);

  /// The key: 64 hexadecimal digits of SHA-256. The key may be extended
  /// further after this.
  std::string hex();

private:
  llvm::SHA256 hasher;
};

/// One file of a cache entry.
struct CachedFile {
  std::string name;
  std::string contents;
};

/// Counts of what the caches of this process did (for tests and --verbose
/// reports).
struct KernelCacheStatistics {
  uint64_t hits = 0, misses = 0, stores = 0, corrupt = 0, evictions = 0;
};
KernelCacheStatistics getKernelCacheStatistics();

class KernelCache {
public:
  explicit KernelCache(KernelCacheConfig config) : config(std::move(config)) {}

  bool isEnabled() const { return !config.directory.empty(); }
  const KernelCacheConfig &getConfig() const { return config; }

  /// The files stored under `key`, checked; std::nullopt on a miss (also
  /// for an unreadable or corrupt entry, which is removed).
  std::optional<std::vector<CachedFile>> lookup(llvm::StringRef key) const;

  /// Stores `files` under `key` (replacing an entry of that key), then
  /// evicts the least recently used entries over the cap. Returns false,
  /// silently, when the directory cannot be written.
  bool store(llvm::StringRef key, llvm::ArrayRef<CachedFile> files) const;

  /// The path of `key`'s entry.
  std::string getEntryPath(llvm::StringRef key) const;

private:
  void evict(llvm::StringRef keep) const;
  void report(const llvm::Twine &message) const;

  KernelCacheConfig config;
};

} // namespace nabla

#endif // NABLA_SUPPORT_KERNELCACHE_H
