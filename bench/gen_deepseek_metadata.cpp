//===- gen_deepseek_metadata.cpp - DeepSeek-V3-sized shard metadata -------===//
//
// Writes the source checkpoint metadata and the destination layout of a
// DeepSeek-V3-sized conversion (bench/README.md, "Budgets"), the input of the metadata and
// compiler benchmarks:
//
//   * 61 layers, the first 3 dense, the rest MoE with 256 routed experts and
//     1 shared expert; hidden 7168, intermediate 18432, moe_intermediate 2048,
//     vocab 129280, MLA attention (q_a/q_b/kv_a/kv_b/o_proj);
//   * every trainable parameter has optimizer states .w_0, .moment1_0,
//     .moment2_0 (fp32, its shape) and .beta1_pow_acc_0, .beta2_pow_acc_0
//     (fp32, shape [1]);
//   * source TP8 x EP8 (64 ranks), destination TP4 x EP16 (64 ranks); the
//     data-parallel degree equals the expert-parallel degree.
//
// Layout rules (the same for source and destination, with their degrees):
//   * rank = dp * tp_degree + tp;
//   * non-expert weights: column- or row-parallel layers are split across TP,
//     norms, q_a/kv_a projections and the router are replicated on every TP
//     rank; every DP rank holds a replica;
//   * non-expert optimizer states use sharding stage 1 v2: per TP rank, the
//     TP shards of all non-expert parameters are flattened back to back into
//     one buffer, which DP ranks split evenly; each piece is a shard with a
//     flat_range, and each holder of a piece also holds the beta-pow scalars;
//   * expert e lives on EP rank e / (experts / ep); its weight and its
//     w_0 / moment states are split across that group's TP ranks; its beta-pow
//     scalars are stored once, by the group's first TP rank
//     (--beta-pow-on-every-tp-rank stores them on every TP rank instead);
//   * model weights go to model_rankNNNNN.safetensors, optimizer states to
//     optimizer_rankNNNNN.safetensors; the in-file name is the key.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace aoa;
using namespace llvm;

static cl::OptionCategory category("aoa-bench-gen-metadata options");
static cl::opt<std::string> sourcePath("src", cl::Required,
                                       cl::desc("Write the source metadata here"),
                                       cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    destinationPath("dst", cl::Required,
                    cl::desc("Write the destination layout here"),
                    cl::value_desc("file"), cl::cat(category));
static cl::opt<unsigned> layers("layers", cl::init(61),
                                cl::desc("Decoder layers"), cl::cat(category));
static cl::opt<unsigned> denseLayers("dense-layers", cl::init(3),
                                     cl::desc("Leading layers with a dense MLP"),
                                     cl::cat(category));
static cl::opt<unsigned> experts("experts", cl::init(256),
                                 cl::desc("Routed experts per MoE layer"),
                                 cl::cat(category));
static cl::opt<unsigned> sourceTp("src-tp", cl::init(8),
                                  cl::desc("Source tensor-parallel degree"),
                                  cl::cat(category));
static cl::opt<unsigned> sourceEp("src-ep", cl::init(8),
                                  cl::desc("Source expert-parallel degree"),
                                  cl::cat(category));
static cl::opt<unsigned> destinationTp(
    "dst-tp", cl::init(4), cl::desc("Destination tensor-parallel degree"),
    cl::cat(category));
static cl::opt<unsigned> destinationEp(
    "dst-ep", cl::init(16), cl::desc("Destination expert-parallel degree"),
    cl::cat(category));
static cl::opt<std::string> queriesPath(
    "queries", cl::desc("Also write an `aoa-compile --queries` file here: one "
                        "query per destination shard, in key order"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<unsigned> queryCount(
    "query-count", cl::init(0),
    cl::desc("Queries to write (0: one per destination shard; more starts "
             "over at the first shard)"),
    cl::cat(category));
static cl::opt<bool> betaPowOnEveryTpRank(
    "beta-pow-on-every-tp-rank",
    cl::desc("Store experts' beta-pow scalars on every TP rank of the group"),
    cl::cat(category));

namespace {

constexpr int64_t kHidden = 7168;
constexpr int64_t kIntermediate = 18432;
constexpr int64_t kMoeIntermediate = 2048;
constexpr int64_t kVocab = 129280;
constexpr int64_t kHeads = 128;
constexpr int64_t kQLoraRank = 1536;
constexpr int64_t kKvLoraRank = 512;
constexpr int64_t kQkNopeDim = 128;
constexpr int64_t kQkRopeDim = 64;
constexpr int64_t kVDim = 128;
/// Stage-1 buffers are padded so each DP slice is a multiple of this.
constexpr int64_t kSlotAlignment = 256;

/// How a parameter is laid out across tensor-parallel ranks.
enum class TpSplit { Replicated, Column, Row };

struct Parameter {
  std::string key;
  std::vector<int64_t> shape;
  TpSplit split;
  DType dtype = DType::BF16;
  bool trainable = true;
  /// Routed expert id, or -1.
  int expert = -1;
};

std::vector<Parameter> deepseekParameters() {
  std::vector<Parameter> params;
  auto add = [&](std::string key, std::vector<int64_t> shape, TpSplit split) {
    params.push_back(Parameter{std::move(key), std::move(shape), split});
    return &params.back();
  };
  add("deepseek.embed_tokens.weight", {kVocab, kHidden}, TpSplit::Row);
  for (unsigned layer = 0; layer < layers; ++layer) {
    std::string p = "deepseek.layers." + std::to_string(layer) + ".";
    add(p + "input_layernorm.weight", {kHidden}, TpSplit::Replicated);
    add(p + "self_attn.q_a_proj.weight", {kHidden, kQLoraRank},
        TpSplit::Replicated);
    add(p + "self_attn.q_a_layernorm.weight", {kQLoraRank},
        TpSplit::Replicated);
    add(p + "self_attn.q_b_proj.weight",
        {kQLoraRank, kHeads * (kQkNopeDim + kQkRopeDim)}, TpSplit::Column);
    add(p + "self_attn.kv_a_proj_with_mqa.weight",
        {kHidden, kKvLoraRank + kQkRopeDim}, TpSplit::Replicated);
    add(p + "self_attn.kv_a_layernorm.weight", {kKvLoraRank},
        TpSplit::Replicated);
    add(p + "self_attn.kv_b_proj.weight",
        {kKvLoraRank, kHeads * (kQkNopeDim + kVDim)}, TpSplit::Column);
    add(p + "self_attn.o_proj.weight", {kHeads * kVDim, kHidden}, TpSplit::Row);
    add(p + "post_attention_layernorm.weight", {kHidden}, TpSplit::Replicated);
    if (layer < denseLayers) {
      add(p + "mlp.up_gate_proj.weight", {kHidden, 2 * kIntermediate},
          TpSplit::Column);
      add(p + "mlp.down_proj.weight", {kIntermediate, kHidden}, TpSplit::Row);
      continue;
    }
    add(p + "mlp.gate.weight", {kHidden, int64_t(experts)}, TpSplit::Replicated);
    Parameter *bias = add(p + "mlp.gate.e_score_correction_bias",
                          {int64_t(experts)}, TpSplit::Replicated);
    bias->dtype = DType::F32;
    bias->trainable = false; // a buffer updated by the router, not by Adam
    add(p + "mlp.shared_experts.up_gate_proj.weight",
        {kHidden, 2 * kMoeIntermediate}, TpSplit::Column);
    add(p + "mlp.shared_experts.down_proj.weight", {kMoeIntermediate, kHidden},
        TpSplit::Row);
    for (unsigned e = 0; e < experts; ++e) {
      std::string q = p + "mlp.experts." + std::to_string(e) + ".";
      add(q + "up_gate_proj.weight", {kHidden, 2 * kMoeIntermediate},
          TpSplit::Column)
          ->expert = static_cast<int>(e);
      add(q + "down_proj.weight", {kMoeIntermediate, kHidden}, TpSplit::Row)
          ->expert = static_cast<int>(e);
    }
  }
  add("deepseek.norm.weight", {kHidden}, TpSplit::Replicated);
  add("lm_head.weight", {kHidden, kVocab}, TpSplit::Column);
  return params;
}

struct Parallelism {
  unsigned tp;
  unsigned ep;
  unsigned dp() const { return ep; }
  uint32_t rank(unsigned dp, unsigned tp) const { return dp * this->tp + tp; }
};

struct Box {
  std::vector<int64_t> offset;
  std::vector<int64_t> shape;
};

/// The part of `param` that TP rank `t` holds.
Box tpShard(const Parameter &param, unsigned t, unsigned tp) {
  Box box{std::vector<int64_t>(param.shape.size(), 0), param.shape};
  if (param.split == TpSplit::Replicated)
    return box;
  size_t axis = param.split == TpSplit::Column ? param.shape.size() - 1 : 0;
  box.shape[axis] /= tp;
  box.offset[axis] = box.shape[axis] * t;
  return box;
}

int64_t volume(const std::vector<int64_t> &shape) {
  int64_t v = 1;
  for (int64_t extent : shape)
    v *= extent;
  return v;
}

std::string fileName(const char *kind, uint32_t rank) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%s_rank%05u.safetensors", kind, rank);
  return buffer;
}

const char *const kMomentSuffixes[] = {".w_0", ".moment1_0", ".moment2_0"};
const char *const kBetaSuffixes[] = {".beta1_pow_acc_0", ".beta2_pow_acc_0"};

class LayoutWriter {
public:
  LayoutWriter(const std::vector<Parameter> &params, Parallelism parallel)
      : params_(params), parallel_(parallel) {}

  ShardMetadata build() {
    builder_.reserve(params_.size() * 6, 1 << 20, 4 << 20);
    for (const Parameter &param : params_)
      addWeight(param);
    computeStageOnePieces();
    for (const Parameter &param : params_)
      if (param.trainable)
        addOptimizerStates(param);
    return builder_.finish();
  }

private:
  /// One DP rank's part of a parameter's TP shard in a stage-1 buffer.
  struct Piece {
    unsigned dp;
    int64_t begin, end; ///< flat range within the TP shard
  };

  void addTensor(const std::string &key, DType dtype,
                 const std::vector<int64_t> &shape) {
    if (!builder_.addTensor(key, dtype, shape)) {
      std::cerr << "aoa-bench-gen-metadata: duplicate key " << key << "\n";
      std::exit(1);
    }
  }
  void addShard(uint32_t rank, const char *kind, const std::string &name,
                const Box &box, std::optional<FlatElementRange> range = {}) {
    if (!builder_.addShard(rank, fileName(kind, rank), name, box.offset,
                           box.shape, range)) {
      std::cerr << "aoa-bench-gen-metadata: bad shard of " << name << "\n";
      std::exit(1);
    }
  }

  /// The DP ranks that hold expert `e`: those of its EP group.
  std::vector<unsigned> expertHolders(int e) const {
    unsigned group = static_cast<unsigned>(e) / (experts / parallel_.ep);
    std::vector<unsigned> holders;
    for (unsigned d = 0; d < parallel_.dp(); ++d)
      if (d % parallel_.ep == group)
        holders.push_back(d);
    return holders;
  }

  void addWeight(const Parameter &param) {
    addTensor(param.key, param.dtype, param.shape);
    std::vector<unsigned> holders;
    if (param.expert >= 0) {
      holders = expertHolders(param.expert);
    } else {
      for (unsigned d = 0; d < parallel_.dp(); ++d)
        holders.push_back(d);
    }
    for (unsigned d : holders)
      for (unsigned t = 0; t < parallel_.tp; ++t)
        addShard(parallel_.rank(d, t), "model", param.key,
                 tpShard(param, t, parallel_.tp));
  }

  /// Sharding stage 1 v2 for the non-expert parameters: per TP rank their TP
  /// shards are laid back to back and DP ranks split the buffer evenly. The
  /// TP shards of all TP ranks have the same sizes, so one layout serves all.
  void computeStageOnePieces() {
    int64_t total = 0;
    std::vector<int64_t> base(params_.size(), -1);
    for (size_t i = 0; i < params_.size(); ++i) {
      const Parameter &param = params_[i];
      if (param.expert >= 0 || !param.trainable)
        continue;
      base[i] = total;
      total += volume(tpShard(param, 0, parallel_.tp).shape);
    }
    int64_t unit = kSlotAlignment * parallel_.dp();
    int64_t slice = (total + unit - 1) / unit * kSlotAlignment;
    pieces_.assign(params_.size(), {});
    for (size_t i = 0; i < params_.size(); ++i) {
      if (base[i] < 0)
        continue;
      int64_t size = volume(tpShard(params_[i], 0, parallel_.tp).shape);
      for (unsigned d = 0; d < parallel_.dp(); ++d) {
        int64_t begin = std::max(base[i], d * slice);
        int64_t end = std::min(base[i] + size, (d + 1) * slice);
        if (begin < end)
          pieces_[i].push_back(Piece{d, begin - base[i], end - base[i]});
      }
    }
  }

  void addOptimizerStates(const Parameter &param) {
    size_t index = static_cast<size_t>(&param - params_.data());
    for (const char *suffix : kMomentSuffixes) {
      std::string key = param.key + suffix;
      addTensor(key, DType::F32, param.shape);
      if (param.expert >= 0) {
        for (unsigned d : expertHolders(param.expert))
          for (unsigned t = 0; t < parallel_.tp; ++t)
            addShard(parallel_.rank(d, t), "optimizer", key,
                     tpShard(param, t, parallel_.tp));
        continue;
      }
      for (unsigned t = 0; t < parallel_.tp; ++t)
        for (const Piece &piece : pieces_[index])
          addShard(parallel_.rank(piece.dp, t), "optimizer", key,
                   tpShard(param, t, parallel_.tp),
                   FlatElementRange{piece.begin, piece.end});
    }
    Box scalar{{0}, {1}};
    for (const char *suffix : kBetaSuffixes) {
      std::string key = param.key + suffix;
      addTensor(key, DType::F32, {1});
      if (param.expert >= 0) {
        unsigned tpRanks = betaPowOnEveryTpRank ? parallel_.tp : 1;
        for (unsigned d : expertHolders(param.expert))
          for (unsigned t = 0; t < tpRanks; ++t)
            addShard(parallel_.rank(d, t), "optimizer", key, scalar);
        continue;
      }
      for (unsigned t = 0; t < parallel_.tp; ++t)
        for (const Piece &piece : pieces_[index])
          addShard(parallel_.rank(piece.dp, t), "optimizer", key, scalar);
    }
  }

  const std::vector<Parameter> &params_;
  Parallelism parallel_;
  ShardMetadataBuilder builder_;
  std::vector<std::vector<Piece>> pieces_;
};

/// Checks that every split divides evenly; false (with a message) otherwise.
bool checkDegrees(const char *side, Parallelism parallel) {
  const int64_t splitExtents[] = {kVocab,
                                  kHeads * (kQkNopeDim + kQkRopeDim),
                                  kHeads * (kQkNopeDim + kVDim),
                                  kHeads * kVDim,
                                  2 * kIntermediate,
                                  kIntermediate,
                                  2 * kMoeIntermediate,
                                  kMoeIntermediate};
  if (parallel.tp == 0 || parallel.ep == 0) {
    std::cerr << "aoa-bench-gen-metadata: " << side
              << " degrees must be positive\n";
    return false;
  }
  for (int64_t extent : splitExtents)
    if (extent % parallel.tp != 0) {
      std::cerr << "aoa-bench-gen-metadata: " << side << " TP degree "
                << parallel.tp << " does not divide " << extent << "\n";
      return false;
    }
  if (experts % parallel.ep != 0) {
    std::cerr << "aoa-bench-gen-metadata: " << side << " EP degree "
              << parallel.ep << " does not divide " << experts
              << " experts\n";
    return false;
  }
  return true;
}

bool writeFile(const std::string &path, const ShardMetadata &metadata) {
  std::ofstream out(path, std::ios::binary);
  writeShardMetadata(metadata, out);
  out.close();
  if (!out) {
    std::cerr << "aoa-bench-gen-metadata: cannot write " << path << "\n";
    return false;
  }
  return true;
}

void appendList(std::string &out, llvm::ArrayRef<int64_t> values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  out += ']';
}

/// One query per destination shard (a load asks for every shard it holds),
/// repeated from the start to reach --query-count.
bool writeQueries(const std::string &path, const ShardMetadata &destination) {
  std::vector<ShardId> shards;
  for (TensorId id : destination.tensorIdsByKey())
    for (ShardRef shard : destination.tensor(id).shards())
      shards.push_back(shard.id());
  size_t count = queryCount ? size_t(queryCount) : shards.size();
  std::ofstream out(path, std::ios::binary);
  std::string line = "{\"queries\": [\n";
  for (size_t i = 0; i < count && !shards.empty(); ++i) {
    ShardRef shard = destination.shard(shards[i % shards.size()]);
    TensorRef tensor = destination.tensor(shard.tensorId());
    line += "  {\"key\": \"" + std::string(tensor.key()) +
            "\", \"global_offset\": ";
    appendList(line, shard.globalOffset());
    line += ", \"local_shape\": ";
    appendList(line, shard.localShape());
    line += ", \"global_shape\": ";
    appendList(line, tensor.globalShape());
    line += ", \"dtype\": \"" + std::string(dtypeName(tensor.dtype())) +
            "\"}" + (i + 1 < count ? ",\n" : "\n");
    out << line;
    line.clear();
  }
  out << line << "]}\n";
  out.close();
  if (!out) {
    std::cerr << "aoa-bench-gen-metadata: cannot write " << path << "\n";
    return false;
  }
  std::cout << "queries: " << count << " -> " << path << "\n";
  return true;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "Writes DeepSeek-V3-sized source and destination metadata\n");
  if (denseLayers > layers) {
    std::cerr << "aoa-bench-gen-metadata: --dense-layers exceeds --layers\n";
    return 1;
  }
  Parallelism source{sourceTp, sourceEp};
  Parallelism destination{destinationTp, destinationEp};
  if (!checkDegrees("source", source) ||
      !checkDegrees("destination", destination))
    return 1;

  std::vector<Parameter> params = deepseekParameters();
  struct Side {
    const char *name;
    Parallelism parallel;
    const std::string &path;
  };
  for (const Side &side : {Side{"source", source, sourcePath},
                           Side{"destination", destination, destinationPath}}) {
    ShardMetadata metadata = LayoutWriter(params, side.parallel).build();
    if (!writeFile(side.path, metadata))
      return 1;
    std::cout << side.name << ": TP" << side.parallel.tp << " x EP"
              << side.parallel.ep << ", " << metadata.tensorCount()
              << " tensors, " << metadata.shardCount() << " shards -> "
              << side.path << "\n";
    if (&side.path == &destinationPath.getValue() && !queriesPath.empty() &&
        !writeQueries(queriesPath, metadata))
      return 1;
  }
  return 0;
}
