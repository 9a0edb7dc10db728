//===- PlanResolutionChecker.cpp - A plan's results against the case ------===//
//
// The executor's checks against the case (PlanResolutionExecutor.h): plan
// tensors are the metadata's shards, unchanged, and every destination shard
// is in the plan once; writes go to files of the writing rank, take data
// from another rank only when no local replica holds it, and every stored
// destination element is written exactly once with the label the model
// predicts.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionExecutor.h"

namespace aoa::plan_resolution_test {

void Executor::matchTensors() {
  auto match = [&](const char *side, const std::vector<KeySpec> &keys,
                   const std::vector<plan::File> &files,
                   const std::vector<plan::StoredTensor> &tensors,
                   std::vector<const ShardSpec *> &specs) {
    std::map<std::pair<std::string, std::string>,
             std::pair<const KeySpec *, const ShardSpec *>>
        byName;
    for (const KeySpec &k : keys)
      for (const ShardSpec &s : k.shards)
        byName[{s.file, s.name}] = {&k, &s};
    for (size_t i = 0; i < tensors.size(); ++i) {
      const plan::StoredTensor &t = tensors[i];
      std::string where = std::string(side) + " tensor " + std::to_string(i);
      if (t.file >= files.size()) {
        fail(where + ": bad file index");
        specs.push_back(nullptr);
        continue;
      }
      const plan::File &file = files[t.file];
      auto it = byName.find({file.path, t.name});
      if (it == byName.end()) {
        fail(where + ": no shard " + file.path + ":" + t.name);
        specs.push_back(nullptr);
        continue;
      }
      const KeySpec &k = *it->second.first;
      const ShardSpec &s = *it->second.second;
      if (t.key != k.key || t.dtype != k.dtype || llvm::ArrayRef<int64_t>(t.globalShape) != llvm::ArrayRef<int64_t>(k.shape) ||
          t.box != s.box || t.flat != s.flat)
        fail(where + " (" + t.name +
             "): key, dtype, shape, box or flat "
             "range differ from the metadata");
      if (file.rank != s.rank)
        fail(where + " (" + t.name + "): file '" + file.path + "' on rank " +
             std::to_string(file.rank) + ", shard on rank " +
             std::to_string(s.rank));
      specs.push_back(&s);
    }
  };
  match("source", c_.source, plan_.sourceFiles, plan_.sourceTensors,
        sourceSpecs_);
  match("destination", c_.destination, plan_.destinationFiles,
        plan_.destinationTensors, destinationSpecs_);
  std::map<const ShardSpec *, int> seen;
  for (const ShardSpec *s : destinationSpecs_)
    if (s && ++seen[s] > 1)
      fail("destination shard " + s->name + " is in the plan twice");
  for (const KeySpec &k : c_.destination)
    for (const ShardSpec &s : k.shards) {
      if (!seen.count(&s))
        fail("destination shard " + s.file + ":" + s.name +
             " is not in the plan");
      if (s.flat)
        ++stats_.flatDestination;
    }
  for (const plan::StoredTensor &t : plan_.destinationTensors)
    written_.push_back(std::vector<std::pair<int, Label>>(
        size_t(t.storedElements()), {0, Label{}}));
}

int64_t Executor::storedIndex(const plan::StoredTensor &t, const Point &p) {
  int64_t i = indexIn(t.box, p);
  if (i < 0)
    return -1;
  if (t.flat) {
    if (i < t.flat->begin || i >= t.flat->end)
      return -1;
    i -= t.flat->begin;
  }
  return i;
}

void Executor::write(uint32_t rank, const plan::Instruction &in, Buffer *b,
                     const std::string &at) {
  std::string where = at + " write";
  if (!b)
    return;
  if (in.tensor >= plan_.destinationTensors.size()) {
    fail(where + ": bad tensor");
    return;
  }
  const plan::StoredTensor &t = plan_.destinationTensors[in.tensor];
  if (plan_.destinationFiles[t.file].rank != rank)
    fail(where + " of " + t.name + ": its file is on rank " +
         std::to_string(plan_.destinationFiles[t.file].rank));
  if (!b->defined) {
    fail(where + ": unfilled buffer");
    return;
  }
  if (b->dtype != t.dtype || b->shape != in.region.shape() ||
      in.region.rank() != t.box.rank()) {
    fail(where + ": buffer " + str(b->shape) + " " +
         std::string(dtypeName(b->dtype)) + " for " + t.key +
         in.region.toString() + " " + std::string(dtypeName(t.dtype)));
    return;
  }
  size_t next = 0;
  forEachPoint(in.region, [&](const Point &p) {
    const Label &label = b->data[next++];
    int64_t i = storedIndex(t, p);
    if (i < 0) {
      fail(where + ": " + t.key + str(p) + " is not stored in " + t.name);
      return;
    }
    auto &slot = written_[in.tensor][size_t(i)];
    ++slot.first;
    slot.second = label;
    ++stats_.elements;
    // Data from another rank only when this rank has no replica of it.
    bool local =
        label.key >= 0 &&
        (storedOnRank_[size_t(label.key)][size_t(label.index)] >> rank & 1);
    if (local && __builtin_popcount(
                     storedOnRank_[size_t(label.key)][size_t(label.index)]) > 1)
      ++stats_.localReplicaChoices;
    if (b->originRank != int(rank) && local)
      fail(where + ": " + t.key + str(p) + " came from rank " +
           std::to_string(b->originRank) + " though rank " +
           std::to_string(rank) + " stores its source element");
  });
}

void Executor::checkDestinations() {
  for (size_t d = 0; d < plan_.destinationTensors.size(); ++d) {
    const plan::StoredTensor &t = plan_.destinationTensors[d];
    int64_t begin = t.flat ? t.flat->begin : 0;
    for (size_t i = 0; i < written_[d].size(); ++i) {
      Point p = pointAt(t.box, begin + int64_t(i));
      const auto &[count, label] = written_[d][i];
      std::string where = "destination " + t.key + str(p) + " in " +
                          plan_.destinationFiles[t.file].path + ":" + t.name;
      if (count != 1) {
        fail(where + " written " + std::to_string(count) + " times");
        continue;
      }
      auto [key, q] = c_.predict(t.key, p);
      int32_t id = keyId(key);
      Label expected{id, id < 0 ? -1
                                : indexIn(wholeBox(keyShapes_[size_t(id)]), q)};
      if (!(label == expected)) {
        std::string got =
            label.key < 0
                ? "?"
                : c_.source[size_t(label.key)].key +
                      str(pointAt(wholeBox(keyShapes_[size_t(label.key)]),
                                  label.index));
        fail(where + " holds " + got + ", expected " + key + str(q));
      }
    }
  }
}

} // namespace aoa::plan_resolution_test
