//===- ContentHash.h - xxh3-64 hashes of tensor data ------------*- C++ -*-===//
//
// The destination metadata records an xxh3-64 hash (seed 0) of every stored
// tensor's bytes (docs/runtime-storage.md), so a later run can verify the data. Data
// arrives in pieces, so the hasher is streaming: the hash of the pieces fed in
// order equals the hash of their concatenation. Hashes are written as 16
// lowercase hex digits.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_CONTENTHASH_H
#define AOA_RUNTIME_SUPPORT_CONTENTHASH_H

#include "aoa/ir/ContentHashText.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

// libxxhash's streaming state; only ContentHash.cpp sees its definition.
struct XXH3_state_s;

namespace aoa::runtime {

class ContentHasher {
public:
  ContentHasher();
  /// A moved-from hasher may only be destroyed or assigned to.
  ContentHasher(ContentHasher &&) noexcept;
  ContentHasher &operator=(ContentHasher &&) noexcept;
  ~ContentHasher();

  /// Feeds the next `size` bytes.
  void update(const void *data, size_t size);
  /// The hash of everything fed since construction or reset(); feeding may
  /// go on afterwards.
  uint64_t digest() const;
  /// Starts over, as if newly constructed.
  void reset();

private:
  struct StateDeleter {
    void operator()(XXH3_state_s *state) const;
  };
  std::unique_ptr<XXH3_state_s, StateDeleter> state_;
};

/// The hash of one buffer (same value as a ContentHasher fed with it).
uint64_t contentHash(const void *data, size_t size);

/// The text form ("2d06800538d394c2") lives in ir, which the metadata writer
/// and loader share; it is part of this API too.
using ::aoa::formatContentHash;
using ::aoa::parseContentHash;

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_CONTENTHASH_H
