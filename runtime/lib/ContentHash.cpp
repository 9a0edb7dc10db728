//===- ContentHash.cpp ----------------------------------------------------===//
#include "aoa/runtime/ContentHash.h"

#include "Messages.h"

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

std::string formatContentHash(uint64_t hash) {
  std::string text;
  for (int shift = 56; shift >= 0; shift -= 8)
    appendHexByte(text, static_cast<unsigned char>(hash >> shift));
  return text;
}

std::optional<uint64_t> parseContentHash(std::string_view text) {
  if (text.size() != 16)
    return std::nullopt;
  uint64_t hash = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return std::nullopt;
    hash = (hash << 4) | uint64_t(digit);
  }
  return hash;
}

} // namespace aoa::runtime
