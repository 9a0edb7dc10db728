//===- ContentHashTest.cpp - xxh3-64 hashing and its text form ------------===//
#include "aoa/runtime/support/ContentHash.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace aoa::runtime;

namespace {

TEST(ContentHash, KnownValues) {
  // XXH3_64bits with seed 0, from the xxHash reference implementation.
  EXPECT_EQ(contentHash("", 0), 0x2d06800538d394c2u);
  EXPECT_EQ(contentHash("abc", 3), 0x78af5f94892f3950u);
  ContentHasher hasher;
  EXPECT_EQ(hasher.digest(), 0x2d06800538d394c2u);
  hasher.update("a", 1);
  hasher.update("bc", 2);
  EXPECT_EQ(formatContentHash(hasher.digest()), "78af5f94892f3950");
}

TEST(ContentHash, StreamingEqualsOneShot) {
  std::mt19937_64 rng(7);
  // Sizes around xxh3's internal block and stripe boundaries.
  for (size_t size :
       {0, 1, 3, 16, 17, 128, 129, 240, 241, 1023, 1024, 1025, 4096, 100000}) {
    std::string data(size, '\0');
    for (char &c : data)
      c = static_cast<char>(rng());
    uint64_t expected = contentHash(data.data(), data.size());
    for (int trial = 0; trial < 5; ++trial) {
      ContentHasher hasher;
      size_t at = 0;
      while (at < size) {
        size_t piece = std::min<size_t>(size - at, rng() % 300);
        hasher.update(data.data() + at, piece);
        at += piece;
      }
      EXPECT_EQ(hasher.digest(), expected) << "size " << size;
    }
  }
}

TEST(ContentHash, ResetAndMove) {
  ContentHasher hasher;
  hasher.update("garbage", 7);
  hasher.reset();
  hasher.update("abc", 3);
  ContentHasher moved(std::move(hasher));
  EXPECT_EQ(moved.digest(), 0x78af5f94892f3950u);
  ContentHasher assigned;
  assigned = std::move(moved);
  assigned.update("d", 1);
  EXPECT_EQ(assigned.digest(), contentHash("abcd", 4));
}

TEST(ContentHash, TextForm) {
  EXPECT_EQ(formatContentHash(0), "0000000000000000");
  EXPECT_EQ(formatContentHash(1), "0000000000000001");
  EXPECT_EQ(formatContentHash(0xfedcba9876543210u), "fedcba9876543210");
  EXPECT_EQ(parseContentHash("fedcba9876543210"), 0xfedcba9876543210u);
  EXPECT_EQ(parseContentHash("FEDCBA9876543210"), 0xfedcba9876543210u);
  EXPECT_EQ(parseContentHash("0000000000000001"), 1u);
  EXPECT_FALSE(parseContentHash(""));
  EXPECT_FALSE(parseContentHash("123"));
  EXPECT_FALSE(parseContentHash("0x00000000000001"));
  EXPECT_FALSE(parseContentHash("fedcba98765432100"));
  EXPECT_FALSE(parseContentHash("fedcba987654321g"));
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    uint64_t value = rng();
    EXPECT_EQ(parseContentHash(formatContentHash(value)), value);
  }
}

} // namespace
