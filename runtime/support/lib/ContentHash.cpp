//===- ContentHash.cpp ----------------------------------------------------===//
#include "aoa/runtime/support/ContentHash.h"

// Exposes XXH3_state_t's definition, so the state can be allocated with new
// (which, unlike XXH3_createState, cannot return null) and copied.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace aoa::runtime {

void ContentHasher::StateDeleter::operator()(XXH3_state_s *state) const {
  delete state;
}

ContentHasher::ContentHasher() : state_(new XXH3_state_t) { reset(); }
ContentHasher::ContentHasher(ContentHasher &&) noexcept = default;
ContentHasher &ContentHasher::operator=(ContentHasher &&) noexcept = default;
ContentHasher::~ContentHasher() = default;

void ContentHasher::update(const void *data, size_t size) {
  // XXH3_64bits_update fails only for a null state, or a null pointer with a
  // non-zero size; neither can happen through this class's contract.
  XXH3_64bits_update(state_.get(), data, size);
}

uint64_t ContentHasher::digest() const {
  return XXH3_64bits_digest(state_.get());
}

void ContentHasher::reset() { XXH3_64bits_reset(state_.get()); }

uint64_t contentHash(const void *data, size_t size) {
  return XXH3_64bits(data, size);
}

} // namespace aoa::runtime
