//===- BinaryLayout.cpp ---------------------------------------------------===//
#include "BinaryLayout.h"

#include "aoa/formats/plan/BinaryPlan.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <xxhash.h>

namespace aoa {
namespace binplan {

std::string sectionName(uint64_t section) {
  switch (section) {
  case kStrings:
    return "the string table";
  case kFiles:
    return "the file table";
  case kTensors:
    return "the tensor table";
  case kTransforms:
    return "the transform table";
  case kLists:
    return "the added-key and copied-file lists";
  default:
    return "rank " + std::to_string(section - kSharedSections) + "'s section";
  }
}

std::string hexText(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, value);
  return text;
}

uint64_t checksum(const void *data, size_t size) {
  return XXH3_64bits(data, size);
}

StreamingChecksum::StreamingChecksum() : state_(XXH3_createState()) {
  if (!state_)
    throw std::bad_alloc();
  XXH3_64bits_reset(state_.get());
}

StreamingChecksum::~StreamingChecksum() = default;

void StreamingChecksum::FreeState::operator()(XXH3_state_s *state) const {
  XXH3_freeState(state);
}

void StreamingChecksum::update(std::string_view bytes) {
  XXH3_64bits_update(state_.get(), bytes.data(), bytes.size());
}

uint64_t StreamingChecksum::digest() const {
  return XXH3_64bits_digest(state_.get());
}

bool isBinaryPlan(std::string_view bytes) {
  return bytes.size() >= sizeof(kMagic) &&
         std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0;
}

} // namespace binplan
} // namespace aoa
