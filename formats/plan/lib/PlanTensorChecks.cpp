//===- PlanTensorChecks.cpp - Stored tensors and regions ------------------===//
//
// Stored tensors (names and keys as text, their file, the key's shape, the
// box and flat range, a source tensor's data offsets), the Hugging Face
// rules for destination tensors, and the tensor and region of a read or a
// write. A tensor that fails is remembered as unusable, so the instructions
// on it add no second error.
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

#include "TransformTypes.h"

#include "aoa/ir/FirstOccurrence.h"
#include "aoa/ir/ShardMetadata.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace aoa {
namespace plancheck {

namespace {

bool insideShape(const Box &box, llvm::ArrayRef<int64_t> shape) {
  for (size_t d = 0; d < box.rank(); ++d)
    if (box.dim(d).begin < 0 || box.dim(d).begin > box.dim(d).end ||
        box.dim(d).end > shape[d])
      return false;
  return true;
}

/// Per tensor, the first tensor listed with its file and name (itself when
/// it is the first; FirstOccurrence.h: a map of a million names would
/// allocate a node for each, and sorting the hashes cost a third of the
/// check). Tensors with a file id out of range are their own first (they
/// are reported for their file).
std::vector<uint32_t>
firstOfSameName(const std::vector<plan::StoredTensor> &tensors,
                size_t fileCount) {
  return firstOccurrences(
      tensors.size(),
      [&](size_t i) {
        const plan::StoredTensor &t = tensors[i];
        uint64_t hash = std::hash<std::string_view>()(t.name) ^
                        (uint64_t(t.file) * 0x9e3779b97f4a7c15ull);
        return hash ^ (hash >> 31);
      },
      [&](size_t a, size_t b) {
        const plan::StoredTensor &x = tensors[a], &y = tensors[b];
        return x.file < fileCount && x.file == y.file && x.name == y.name;
      });
}

} // namespace

void PlanChecker::checkTensors(bool destination) {
  const std::vector<plan::StoredTensor> &tensors =
      destination ? plan_.destinationTensors : plan_.sourceTensors;
  const std::vector<plan::File> &files =
      destination ? plan_.destinationFiles : plan_.sourceFiles;
  std::vector<bool> &usable = destination ? destinationUsable_ : sourceUsable_;
  Kind kind = destination ? Kind::DestinationTensor : Kind::SourceTensor;
  const char *side = destination ? "destination" : "source";
  usable.assign(tensors.size(), false);
  std::vector<uint32_t> firstListed = firstOfSameName(tensors, files.size());
  for (uint32_t i = 0; i < tensors.size() && !errors_.stopped(); ++i) {
    const plan::StoredTensor &t = tensors[i];
    bool ok = true;
    for (auto [text, field, what] :
         {std::tuple(std::string_view(t.name), Field::Name, "name"),
          std::tuple(std::string_view(t.key), Field::Whole, "key")})
      if (std::string why = unusableText(text, false); !why.empty()) {
        error(site(kind, i, field), std::string(side) + " tensor " +
                                        std::to_string(i) + ": its " + what +
                                        " " + why)
            .hint("names and keys are UTF-8, as metadata.json and "
                  "safetensors headers require");
        ok = false;
      }
    if (t.file >= files.size()) {
      error(site(kind, i, Field::File),
            std::string(side) + " tensor " + std::to_string(i) + " names " +
                side + " file " + std::to_string(t.file) +
                ", but the plan lists " +
                plural(files.size(), (std::string(side) + " file").c_str()))
          .hint("file ids count from 0 in the order of the file lines");
      ok = false;
    } else if (firstListed[i] != i) {
      auto diag =
          error(site(kind, i, Field::Name),
                std::string(side) + " tensor " + quote(t.name) + " of file " +
                    quote(files[t.file].path) + " is listed twice");
      note(diag, site(kind, firstListed[i], Field::Name), "first listed here");
      diag.hint("list each stored tensor once and refer to it by its id");
      ok = false;
    }
    ok = checkGeometry(kind, i, t) && ok;
    if (ok && t.data)
      ok = checkDataOffsets(destination, i, t);
    usable[i] = ok;
  }
}

/// The key's shape, the box and the flat range of a stored tensor.
bool PlanChecker::checkGeometry(Kind kind, uint32_t i,
                                const plan::StoredTensor &t) {
  llvm::ArrayRef<int64_t> shape = t.globalShape;
  if (shape.size() > kDimensionLimit) {
    error(site(kind, i, Field::Type),
          "key " + quote(t.key) + " has " + plural(shape.size(), "dimension") +
              "; at most " + std::to_string(kDimensionLimit) +
              " are supported")
        .hint("safetensors headers and the shard metadata allow at most " +
              std::to_string(kDimensionLimit) + " dimensions");
    return false;
  }
  std::optional<int64_t> count = elementCount(shape);
  int64_t bytes = 0;
  if (std::any_of(shape.begin(), shape.end(),
                  [](int64_t e) { return e < 0; }) ||
      !count ||
      __builtin_mul_overflow(*count, int64_t(dtypeSize(t.dtype)), &bytes)) {
    error(site(kind, i, Field::Type), "key " + quote(t.key) +
                                          " has an invalid global shape " +
                                          formatShape(shape))
        .hint("extents are non-negative and the tensor has fewer than 2^63 "
              "bytes");
    return false;
  }
  if (t.box.rank() != shape.size()) {
    error(site(kind, i, Field::Box), "box " + t.box.toString() + " has " +
                                         plural(t.box.rank(), "dimension") +
                                         ", but key " + quote(t.key) + " has " +
                                         plural(shape.size(), "dimension") +
                                         " (" + typeText(t.dtype, shape) + ")")
        .hint("a box gives one BEGIN:END interval per dimension of the key");
    return false;
  }
  if (!insideShape(t.box, shape)) {
    error(site(kind, i, Field::Box),
          "box " + t.box.toString() + " lies outside the global shape " +
              formatShape(shape) + " of key " + quote(t.key))
        .hint("0 <= BEGIN <= END <= extent in every dimension");
    return false;
  }
  if (t.flat) {
    int64_t volume = t.box.volume();
    const FlatElementRange &f = *t.flat;
    if (!(0 <= f.begin && f.begin < f.end && f.end <= volume)) {
      std::string range = "flat range [" + std::to_string(f.begin) + ":" +
                          std::to_string(f.end) + "]";
      error(site(kind, i, Field::Flat),
            f.begin == f.end
                ? range + " is empty"
                : range + " does not lie within the " +
                      plural(volume, "element") + " of box " + t.box.toString())
          .hint("flat [A:B] stores elements A to B-1 of the row-major "
                "flattening of the box: 0 <= A < B <= " +
                std::to_string(volume));
      return false;
    }
  }
  return true;
}

/// A source tensor's recorded data offsets hold its stored bytes.
bool PlanChecker::checkDataOffsets(bool destination, uint32_t i,
                                   const plan::StoredTensor &t) {
  Kind kind = destination ? Kind::DestinationTensor : Kind::SourceTensor;
  if (destination) {
    error(site(kind, i, Field::Data),
          "destination tensor " + std::to_string(i) +
              " records data offsets; only source tensors do")
        .hint("a source tensor's offsets are what aoa-run expects to "
              "find; remove 'data' from destination tensors");
    return false;
  }
  // checkGeometry bounds the key's bytes, and so the stored ones.
  uint64_t bytes = uint64_t(t.storedElements()) * dtypeSize(t.dtype);
  const plan::ByteRange &data = *t.data;
  if (data.begin <= data.end && data.end - data.begin == bytes)
    return true;
  error(site(kind, i, Field::Data),
        "data offsets [" + std::to_string(data.begin) + ":" +
            std::to_string(data.end) + "] do not hold the " +
            std::to_string(bytes) + " bytes of " +
            typeText(t.dtype, t.storedShape()) + " that the tensor stores")
      .hint("'data [BEGIN:END]' gives the tensor's data_offsets in its "
            "file's safetensors header: END - BEGIN is its byte size");
  return false;
}

/// A Hugging Face directory maps each tensor name to one file
/// (model.safetensors.index.json), and loaders read whole tensors by
/// name: every destination key is stored once, whole, under its own name.
void PlanChecker::checkHuggingFaceDestination() {
  if (plan_.destinationFormat != plan::DestinationFormat::HuggingFace)
    return;
  std::unordered_map<std::string_view, uint32_t> stored;
  for (uint32_t t = 0;
       t < plan_.destinationTensors.size() && !errors_.stopped(); ++t) {
    const plan::StoredTensor &tensor = plan_.destinationTensors[t];
    if (tensor.name != tensor.key) {
      error(site(Kind::DestinationTensor, t, Field::Name),
            "destination tensor " + std::to_string(t) + " of key " +
                quote(tensor.key) + " is named " + quote(tensor.name) +
                " in its file")
          .hint("a Hugging Face directory stores each key under its own "
                "name");
      continue;
    }
    bool whole = !tensor.flat && tensor.box.rank() == tensor.globalShape.size();
    for (size_t d = 0; whole && d < tensor.box.rank(); ++d)
      whole = tensor.box.dim(d).begin == 0 &&
              tensor.box.dim(d).end == tensor.globalShape[d];
    if (!whole) {
      error(site(Kind::DestinationTensor, t, Field::Box),
            "destination tensor " + std::to_string(t) +
                " holds only part "
                "of key " +
                quote(tensor.key))
          .hint("a Hugging Face directory stores every key whole in one "
                "file; compile with a Hugging Face destination layout");
      continue;
    }
    auto [it, inserted] = stored.emplace(tensor.key, t);
    if (!inserted) {
      auto diag = error(site(Kind::DestinationTensor, t),
                        "key " + quote(tensor.key) + " is stored twice");
      note(diag, site(Kind::DestinationTensor, it->second),
           "first stored here");
      diag.hint("a Hugging Face index maps each key to one file");
    }
  }
}

const plan::File *PlanChecker::fileOf(bool destination,
                                      const plan::StoredTensor &t) {
  const std::vector<plan::File> &files =
      destination ? plan_.destinationFiles : plan_.sourceFiles;
  return t.file < files.size() ? &files[t.file] : nullptr;
}

/// The tensor an instruction reads or writes, when it exists and is
/// usable, after checking that this rank owns its file (any rank may read
/// any source file of a plan with shared source access).
const plan::StoredTensor *PlanChecker::tensorOf(uint32_t r, uint32_t k,
                                                uint32_t i, bool destination) {
  const plan::Instruction &in = plan_.programs[r].rounds[k].instructions[i];
  const std::vector<plan::StoredTensor> &tensors =
      destination ? plan_.destinationTensors : plan_.sourceTensors;
  const char *side = destination ? "destination" : "source";
  if (in.tensor >= tensors.size()) {
    error(at(r, k, i, Field::Tensor),
          std::string(side) + " tensor " + std::to_string(in.tensor) +
              " does not exist: the plan has " +
              plural(tensors.size(), (std::string(side) + " tensor").c_str()))
        .hint("tensor ids count from 0 in the order of the '" +
              std::string(side) + "-tensor' lines");
    return nullptr;
  }
  const std::vector<bool> &ok =
      destination ? destinationUsable_ : sourceUsable_;
  if (!ok[in.tensor])
    return nullptr; // reported with the tensor
  const plan::StoredTensor &t = tensors[in.tensor];
  const plan::File *file = fileOf(destination, t);
  bool anyRankReads =
      !destination && plan_.sourceAccess == plan::SourceAccess::Shared;
  if (file->rank != r && file->rank < plan_.ranks && !anyRankReads) {
    auto diag = error(at(r, k, i, Field::Tensor),
                      "rank " + std::to_string(r) + " " +
                          (destination ? "writes" : "reads") + " " + side +
                          " tensor " + std::to_string(in.tensor) +
                          ", but its file " + quote(file->path) +
                          " belongs to rank " + std::to_string(file->rank));
    note(diag,
         site(destination ? Kind::DestinationFile : Kind::SourceFile, t.file,
              Field::Rank),
         "the file's rank is given here");
    diag.hint(std::string("a rank ") + (destination ? "writes" : "reads") +
              " only the files it owns; move the instruction to rank " +
              std::to_string(file->rank));
  }
  return &t;
}

/// The region lies in the key, in the stored box and in its flat range.
bool PlanChecker::checkRegion(uint32_t r, uint32_t k, uint32_t i,
                              const plan::StoredTensor &t, bool destination) {
  const Box &region = plan_.programs[r].rounds[k].instructions[i].region;
  PlanSite where = at(r, k, i, Field::Region);
  std::string id =
      std::string(destination ? "destination" : "source") + " tensor " +
      std::to_string(plan_.programs[r].rounds[k].instructions[i].tensor);
  if (region.rank() != t.globalShape.size()) {
    error(where, "region " + region.toString() + " has " +
                     plural(region.rank(), "dimension") + ", but key " +
                     quote(t.key) + " has " +
                     plural(t.globalShape.size(), "dimension") + " (" +
                     typeText(t.dtype, t.globalShape) + ")")
        .hint("regions are boxes in the key's global coordinates, one "
              "BEGIN:END interval per dimension");
    return false;
  }
  if (!insideShape(region, t.globalShape)) {
    error(where, "region " + region.toString() +
                     " lies outside the global shape " +
                     formatShape(t.globalShape) + " of key " + quote(t.key))
        .hint("regions are boxes in the key's global coordinates: 0 <= "
              "BEGIN <= END <= extent");
    return false;
  }
  if (!t.box.contains(region)) {
    error(where, "region " + region.toString() + " is not inside " + id + " (" +
                     quote(t.name) + "), which holds " + t.box.toString() +
                     " of key " + quote(t.key))
        .hint(destination ? "write each region into a destination tensor "
                            "whose box contains it"
                          : "read each region from a source tensor whose "
                            "box contains it");
    return false;
  }
  if (t.flat && region.volume() != 0) {
    std::vector<int64_t> last = region.offsets();
    for (size_t d = 0; d < region.rank(); ++d)
      last[d] = region.dim(d).end - 1;
    int64_t first = rowMajorIndex(t.box, region.offsets()).value_or(-1);
    int64_t final = rowMajorIndex(t.box, last).value_or(-1);
    if (first < t.flat->begin || final >= t.flat->end) {
      error(where, "region " + region.toString() + " is not inside " + id +
                       " (" + quote(t.name) + "): its elements lie at " +
                       "flat indices " + std::to_string(first) + " to " +
                       std::to_string(final) + " of box " + t.box.toString() +
                       ", but the tensor stores only [" +
                       std::to_string(t.flat->begin) + ":" +
                       std::to_string(t.flat->end) + "]")
          .hint("the element at point p of a flat tensor is stored at "
                "rowMajorIndex(box, p) - A; a region must lie within "
                "flat [A:B]");
      return false;
    }
  }
  return true;
}

} // namespace plancheck
} // namespace aoa
