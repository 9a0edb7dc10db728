//===- FusedLayout.cpp -----------------------------------------------------===//
#include "FusedLayout.h"

#include "ExpansionLimits.h"
#include "MacroUtils.h"

#include "aoa/passes/AxisTrace.h"

#include <charconv>

namespace aoa {

FusedExpansion::FusedExpansion(CompilationState &state,
                               const Statement &statement, const char *pass,
                               size_t statementIndex)
    : state_(state), statement_(statement), pass_(pass), index_(statementIndex) {
  if (const Attribute *axis = statement.findAttribute("axis"))
    if (axis->isInteger())
      axis_ = axis->integer();
  tagLocation_ = statement.tags.empty() ? statement.location
                                        : statement.tags.front().location;
  // "lower-fused-ffn" -> "fused_ffn.N.": the temporaries read like the tag.
  piecePrefix_ = pass;
  if (piecePrefix_.rfind("lower-", 0) == 0)
    piecePrefix_.erase(0, 6);
  for (char &c : piecePrefix_)
    if (c == '-')
      c = '_';
  piecePrefix_ += "." + std::to_string(index_) + ".";
}

bool FusedExpansion::checkHeadBounds(int64_t heads, int64_t groups) {
  const Attribute *attribute = statement_.findAttribute("num_heads");
  SourceLocation at = attribute ? attribute->valueLocation : tagLocation_;
  if (heads > kMaxExpandedNames || groups > kMaxExpandedNames ||
      heads + 2 * groups > kMaxExpandedNames) {
    reportAt(state_, statement_, at,
             "num_heads=" + std::to_string(heads) +
                 " and num_key_value_groups=" + std::to_string(groups) +
                 " make more than " + std::to_string(kMaxExpandedNames) +
                 " heads to move one by one")
        .hint("num_heads and num_key_value_groups count attention heads of "
              "one layer");
    return false;
  }
  // The names the statement reads are keys of the source (of the
  // destination under --reverse); those it writes, of the other side.
  bool reverse = state_.program.reverse;
  auto check = [&](const Name &name, bool read, int64_t count,
                   const char *what) {
    const KeySpace &keys = read != reverse ? state_.source : state_.destination;
    std::optional<TensorType> type = storedKeyType(keys, name);
    if (!type)
      return true;
    std::optional<size_t> axis = normalizedAxis(axis_, type->shape.size());
    if (!axis || type->shape[*axis] >= count)
      return true; // a bad axis is reported where it is used
    reportAt(state_, statement_, at,
             std::string(what) + " " + std::to_string(count) + " exceeds the " +
                 std::to_string(type->shape[*axis]) + " elements of '" +
                 name.text + "' (" + printTensorType(*type) +
                 ") along axis " + std::to_string(*axis) +
                 ": every head needs at least one")
        .hint("check num_heads and num_key_value_groups against the model's "
              "config (and the fused axis, `axis`, default 1)");
    return false;
  };
  const std::vector<Name> &lhs = statement_.lhs, &rhs = statement_.rhs;
  std::string all = "num_heads + 2 * num_key_value_groups =";
  if (lhs.size() == 1 && !check(lhs[0], true, heads + 2 * groups, all.c_str()))
    return false;
  if (rhs.size() == 1 && !check(rhs[0], false, heads + 2 * groups, all.c_str()))
    return false;
  const std::vector<Name> &parts = lhs.size() == 3 ? lhs : rhs;
  bool partsRead = lhs.size() == 3;
  if (parts.size() == 3 &&
      (!check(parts[0], partsRead, heads, "num_heads") ||
       !check(parts[1], partsRead, groups, "num_key_value_groups") ||
       !check(parts[2], partsRead, groups, "num_key_value_groups")))
    return false;
  return true;
}

bool FusedExpansion::checkPieceCount(int64_t pieces, const Name &left,
                                     int64_t leftShards, const Name &right,
                                     int64_t rightShards) {
  if (pieces > 0 && pieces <= kMaxExpandedNames)
    return true;
  if (silent_)
    return false;
  reportAt(state_, statement_, tagLocation_,
           "'" + left.text + "' in " + std::to_string(leftShards) +
               " shards along the fused axis and '" + right.text + "' in " +
               std::to_string(rightShards) + " make " +
               (pieces > 0 ? std::to_string(pieces) : std::string("too many")) +
               " gate and up pieces, more than " +
               std::to_string(kMaxExpandedNames) + " to move one by one")
      .hint("fused_ffn cuts the fused axis into a gate and an up piece per "
            "lcm(shards on the left, shards on the right); choose "
            "tensor-parallel degrees with a small common multiple, e.g. one "
            "dividing the other");
  return false;
}

Name FusedExpansion::piece(std::string_view label) const {
  std::string text;
  text.reserve(piecePrefix_.size() + label.size());
  text.append(piecePrefix_).append(label);
  return makeName(std::move(text), tagLocation_, true);
}

Name FusedExpansion::piece(std::string_view label, int64_t index) const {
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, index);
  (void)error; // (24 characters hold any int64_t)
  std::string text;
  text.reserve(piecePrefix_.size() + label.size() + (end - digits));
  text.append(piecePrefix_).append(label).append(digits, end);
  return makeName(std::move(text), tagLocation_, true);
}

void FusedExpansion::emit(std::vector<Name> lhs, std::vector<Name> rhs,
                          std::vector<Statement> &out) const {
  if (printedStatement_.empty())
    printedStatement_ = SharedString(printStatement(statement_));
  Statement child = deriveStatement(statement_, pass_, printedStatement_);
  child.lhs = std::move(lhs);
  child.rhs = std::move(rhs);
  child.attributes.push_back(makeIntegerAttribute("axis", axis_, tagLocation_));
  out.push_back(std::move(child));
}

std::optional<int64_t> FusedExpansion::shardCount(const Name &name, bool left) {
  const KeySpace &keys =
      left ? state_.keysOfLeftNames() : state_.keysOfRightNames();
  if (!keys.present())
    return 1; // no destination layout: one unsharded tensor
  // (Diagnostic text is built only on failure: this runs twice for each of
  // a large model's tens of thousands of fused statements.)
  auto hint = [&] {
    return "the fused macros read the tensor-parallel degree from the " +
           keys.sideName() + " metadata";
  };
  ChainName start{name.text, name.temporary};
  const std::string shown = state_.chain.spelling(start);
  std::string why;
  // Left names are read, so they are followed back to the keys they come
  // from; right names are written, so they are followed forward.
  std::optional<ChainWalk> walk =
      state_.chain.resolve(start, /*forward=*/!left, keys, why);
  if (!walk) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             "cannot tell how '" + shown + "' is sharded: " + why)
        .hint(hint());
    return std::nullopt;
  }
  const std::string &key = walk->reached.text;
  bool isKey = !walk->reached.temporary && keys.contains(key);
  std::optional<size_t> rank = isKey ? keys.rankOf(key) : std::nullopt;
  if (!rank) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             "cannot tell how '" + shown + "' is sharded: '" +
                 state_.chain.spelling(walk->reached) +
                 (isKey ? "' has no stored tensor with a shape"
                        : "' is not a " + keys.sideName() +
                              " key and no statement leads from it to one"))
        .hint(hint());
    return std::nullopt;
  }
  return countAlongFusedAxis(name, shown, *walk, *rank, keys);
}

std::optional<int64_t>
FusedExpansion::countAlongFusedAxis(const Name &name, const std::string &shown,
                                    const ChainWalk &walk, size_t keyRank,
                                    const KeySpace &keys) {
  const std::string &key = walk.reached.text;
  bool mapped = !(walk.steps.empty() && shown == key);
  auto subject = [&](const std::vector<unsigned> &keyAxes) {
    std::string text = "cannot tell how '" + shown +
                       "' is sharded along axis " + std::to_string(axis_);
    // Name the key's axes whenever they are not the fused axis itself.
    if (mapped && !keyAxes.empty())
      text += " (" + describeKeyAxes(keyAxes, key) + ")";
    return text;
  };
  AxisTraceError traceError;
  std::optional<std::vector<AxisOrigin>> axes =
      traceAxes(walk, keyRank, traceError);
  if (!axes) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             subject({}) + ": " + traceError.message)
        .note(traceError.location, "the step that cannot be followed");
    return std::nullopt;
  }
  int64_t rank = static_cast<int64_t>(axes->size());
  int64_t fusedAxis = axis_ < 0 ? axis_ + rank : axis_;
  if (fusedAxis < 0 || fusedAxis >= rank) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             subject({}) + ": axis " + std::to_string(axis_) +
                 " is out of range for '" + shown + "' of rank " +
                 std::to_string(rank))
        .hint("the fused axis is the `axis` attribute (default 1)");
    return std::nullopt;
  }
  const AxisOrigin &origin = (*axes)[fusedAxis];
  if (origin.cutBy) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             subject({}) + ": a reshape cuts it out of an axis of '" + key +
                 "', whose shards need not be whole blocks of it")
        .note(*origin.cutBy, "the reshape is here")
        .hint("write the fused statement where the fused axis is a whole "
              "axis of a stored key");
    return std::nullopt;
  }
  std::vector<unsigned> sharded;
  int64_t count = 1;
  for (unsigned keyAxis : origin.keyAxes) {
    std::string why;
    std::optional<int64_t> along = keys.shardCountAlongAxis(key, keyAxis, why);
    if (!along) {
      if (silent_)
        return std::nullopt;
      reportAt(state_, statement_, name.location,
               subject(origin.keyAxes) + ": " + why)
          .hint("the fused macros need the " + keys.sideName() +
                " shards to split the fused axis into equal parts");
      return std::nullopt;
    }
    if (*along > 1) {
      sharded.push_back(keyAxis);
      count = *along;
    }
  }
  // A reshape merged several key axes into the fused one: its shards are
  // whole blocks of it only if at most the outermost of them is sharded.
  if (sharded.size() > 1 ||
      (sharded.size() == 1 && sharded.front() != origin.keyAxes.front())) {
    if (silent_)
      return std::nullopt;
    reportAt(state_, statement_, name.location,
             subject(origin.keyAxes) + ": '" + key + "' is sharded along " +
                 (sharded.size() > 1
                      ? std::string("more than one of them")
                      : "axis " + std::to_string(sharded.front()) +
                            ", not the outermost") +
                 ", so a shard is not one block of the fused axis")
        .hint("the fused macros need the fused axis's shards to be whole "
              "blocks of it: shard only the outermost of the merged axes");
    return std::nullopt;
  }
  return count;
}

std::optional<int64_t> FusedExpansion::leftShardCount(const Name &name) {
  return shardCount(name, true);
}

std::optional<int64_t> FusedExpansion::rightShardCount(const Name &name) {
  return shardCount(name, false);
}

bool FusedExpansion::checkDivisible(int64_t heads, const char *what,
                                    int64_t shards, const Name &name,
                                    const char *side) {
  if (heads % shards == 0)
    return true;
  reportAt(state_, statement_, name.location,
           std::string(what) + " (" + std::to_string(heads) +
               ") is not divisible by the " + std::to_string(shards) + " " +
               side + " shards of '" + name.text + "' along axis " +
               std::to_string(axis_))
      .hint("every tensor-parallel rank must hold whole heads; choose a "
            "degree that divides the head counts");
  return false;
}

} // namespace aoa
