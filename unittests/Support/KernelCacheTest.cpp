//===- KernelCacheTest.cpp - The on-disk kernel cache ---------------------===//
//
// Pins the cache's contract below the tools: entries come back byte for byte,
// a truncated or altered entry is a miss (and removed), keys tell field lists
// apart, eviction removes the least recently used entries, an unwritable
// directory is a silent miss, and size limits parse as documented.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/KernelCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <chrono>
#include <functional>

using namespace llvm;
using namespace nabla;

namespace {

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("nabla-cache-test", root));
  }
  void TearDown() override { sys::fs::remove_directories(root); }

  KernelCache makeCache(uint64_t maxBytes = kDefaultKernelCacheBytes) {
    KernelCacheConfig config;
    SmallString<128> directory(root);
    sys::path::append(directory, "cache");
    config.directory = std::string(directory);
    config.maxBytes = maxBytes;
    return KernelCache(config);
  }

  static std::string keyOf(StringRef text) {
    KernelCacheKey key;
    key.add("text", text);
    return key.hex();
  }

  /// Rewrites the file at `path` through `change`.
  static void rewrite(StringRef path,
                      function_ref<void(std::string &)> change) {
    auto buffer = MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buffer));
    std::string bytes = (*buffer)->getBuffer().str();
    change(bytes);
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }

  SmallString<128> root;
};

const std::vector<CachedFile> kFiles = {
    {"manifest.json", "{\"kernels\":[]}"},
    {std::string("kernels\0spv", 11), std::string("\x03\x02\x23\x07\0\0", 6)},
    {"empty", ""}};

TEST_F(KernelCacheTest, StoredFilesComeBackExactly) {
  KernelCache cache = makeCache();
  std::string key = keyOf("a");
  EXPECT_FALSE(cache.lookup(key));
  ASSERT_TRUE(cache.store(key, kFiles));
  std::optional<std::vector<CachedFile>> files = cache.lookup(key);
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), kFiles.size());
  for (size_t i = 0; i < kFiles.size(); ++i) {
    EXPECT_EQ((*files)[i].name, kFiles[i].name);
    EXPECT_EQ((*files)[i].contents, kFiles[i].contents);
  }
}

TEST_F(KernelCacheTest, DamagedEntriesAreMissesAndRemoved) {
  KernelCache cache = makeCache();
  std::string key = keyOf("a");
  std::string path = cache.getEntryPath(key);
  std::vector<std::function<void(std::string &)>> damages = {
      [](std::string &bytes) { bytes.resize(bytes.size() / 2); },
      [](std::string &bytes) { bytes.back() ^= 1; },
      [](std::string &bytes) { bytes[20] ^= 0x40; },
      [](std::string &bytes) { bytes += "x"; },
      [](std::string &bytes) { bytes.clear(); }};
  for (auto &damage : damages) {
    ASSERT_TRUE(cache.store(key, kFiles));
    rewrite(path, damage);
    EXPECT_FALSE(cache.lookup(key));
    EXPECT_FALSE(sys::fs::exists(path));
  }
}

TEST_F(KernelCacheTest, AnEntryUnderAnotherNameIsAMiss) {
  KernelCache cache = makeCache();
  ASSERT_TRUE(cache.store(keyOf("a"), kFiles));
  ASSERT_FALSE(sys::fs::copy_file(cache.getEntryPath(keyOf("a")),
                                  cache.getEntryPath(keyOf("b"))));
  EXPECT_FALSE(cache.lookup(keyOf("b")));
}

TEST_F(KernelCacheTest, KeysTellFieldListsApart) {
  KernelCacheKey ab, a_b, ba;
  ab.add("x", "ab");
  a_b.add("x", "a");
  a_b.add("x", "b");
  ba.add("x", "ba");
  EXPECT_NE(ab.hex(), a_b.hex());
  EXPECT_NE(ab.hex(), ba.hex());
  KernelCacheKey named;
  named.add("y", "ab");
  EXPECT_NE(ab.hex(), named.hex());
  EXPECT_EQ(ab.hex().size(), 64u);
  // hex() does not end the key.
  std::string before = ab.hex();
  EXPECT_EQ(ab.hex(), before);
}

TEST_F(KernelCacheTest, EvictsLeastRecentlyUsedFirst) {
  // Room for two entries of this size, not three.
  KernelCache probe = makeCache();
  ASSERT_TRUE(probe.store(keyOf("probe"), kFiles));
  uint64_t entrySize;
  ASSERT_FALSE(
      sys::fs::file_size(probe.getEntryPath(keyOf("probe")), entrySize));
  ASSERT_FALSE(sys::fs::remove(probe.getEntryPath(keyOf("probe"))));

  KernelCache cache = makeCache(entrySize * 2 + entrySize / 2);
  auto age = [&](StringRef name, int seconds) {
    int fd;
    ASSERT_FALSE(sys::fs::openFileForWrite(cache.getEntryPath(keyOf(name)), fd,
                                           sys::fs::CD_OpenExisting,
                                           sys::fs::OF_Append));
    sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now() - std::chrono::seconds(seconds));
    sys::fs::closeFile(fd);
  };
  ASSERT_TRUE(cache.store(keyOf("old"), kFiles));
  age("old", 300);
  ASSERT_TRUE(cache.store(keyOf("used"), kFiles));
  age("used", 200);
  // A hit makes "used" the most recent.
  ASSERT_TRUE(cache.lookup(keyOf("used")));
  ASSERT_TRUE(cache.store(keyOf("new"), kFiles));
  EXPECT_FALSE(cache.lookup(keyOf("old")));
  EXPECT_TRUE(cache.lookup(keyOf("used")));
  EXPECT_TRUE(cache.lookup(keyOf("new")));
}

TEST_F(KernelCacheTest, UnwritableDirectoryIsASilentMiss) {
  KernelCacheConfig config;
  SmallString<128> file(root);
  sys::path::append(file, "not-a-directory");
  {
    std::error_code ec;
    raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec);
  }
  // A directory below a regular file can never be created.
  SmallString<128> directory(file);
  sys::path::append(directory, "cache");
  config.directory = std::string(directory);
  KernelCache cache(config);
  EXPECT_FALSE(cache.store(keyOf("a"), kFiles));
  EXPECT_FALSE(cache.lookup(keyOf("a")));
}

TEST(KernelCacheSizeTest, ParsesBytesAndSuffixes) {
  EXPECT_EQ(parseCacheSize("0"), 0u);
  EXPECT_EQ(parseCacheSize("1234"), 1234u);
  EXPECT_EQ(parseCacheSize("4K"), 4096u);
  EXPECT_EQ(parseCacheSize("3m"), 3u << 20);
  EXPECT_EQ(parseCacheSize("2G"), 2ull << 30);
  EXPECT_FALSE(parseCacheSize(""));
  EXPECT_FALSE(parseCacheSize("M"));
  EXPECT_FALSE(parseCacheSize("-1"));
  EXPECT_FALSE(parseCacheSize("12X"));
  EXPECT_FALSE(parseCacheSize("1.5G"));
  EXPECT_FALSE(parseCacheSize("99999999999999999999G"));
}

} // namespace
