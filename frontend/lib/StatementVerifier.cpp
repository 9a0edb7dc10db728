//===- StatementVerifier.cpp - Rules local to one statement ----------------===//
//
// Everything here can be decided from the statement alone, before any
// metadata is read: arity, the `_` marker, `^T` placement, ranges, attribute
// keys and types, macro tags and their attributes.
//
//===----------------------------------------------------------------------===//
#include "StatementBuilder.h"

#include <algorithm>

namespace aoa {

namespace {

enum class ValueKind { Integer, String };

struct AttributeSpec {
  const char *key;
  ValueKind kind;
  const char *example;
};

constexpr AttributeSpec kAttributes[] = {
    {"axis", ValueKind::Integer, "axis=1"},
    {"permute", ValueKind::String, "permute='[1, 0]'"},
    {"dtype", ValueKind::String, "dtype='float32'"},
    {"src_dtype", ValueKind::String, "src_dtype='bfloat16'"},
    {"dst_dtype", ValueKind::String, "dst_dtype='float32'"},
    {"reshape", ValueKind::String, "reshape='[8, 4, 16]'"},
    {"num_heads", ValueKind::Integer, "num_heads=32"},
    {"num_key_value_groups", ValueKind::Integer, "num_key_value_groups=8"},
};

const AttributeSpec *findSpec(const std::string &key) {
  for (const AttributeSpec &spec : kAttributes)
    if (key == spec.key)
      return &spec;
  return nullptr;
}

class Verifier {
public:
  Verifier(const Statement &statement, DiagnosticEngine &diags)
      : s_(statement), diags_(diags) {}

  bool run() {
    checkNames();
    checkArity();
    checkPlaceholders();
    checkAttributes();
    checkTags();
    return ok_;
  }

private:
  InFlightDiagnostic error(SourceLocation loc, std::string message) {
    ok_ = false;
    return diags_.error(loc, std::move(message));
  }

  void checkNames();
  void checkArity();
  void checkPlaceholders();
  void checkAttributes();
  void checkTags();
  void requireCount(MacroTag tag, const std::vector<std::pair<size_t, size_t>> &forms,
                    const char *formText);
  std::optional<int64_t> positiveInteger(const char *key, MacroTag tag);

  const Statement &s_;
  DiagnosticEngine &diags_;
  bool ok_ = true;
};

void Verifier::checkNames() {
  for (const Name &name : s_.lhs) {
    if (!name.quoted && macroTagFromSpelling(name.text))
      error(name.location, "macro tag '" + name.text + "' is not a source name")
          .hint("macro tags follow the destination names: `F -> D, " +
                name.text + "`; write a key with this name in backquotes");
  }
  for (const Name &name : s_.rhs) {
    if (name.transposed)
      error(name.location, "cannot assign to a transpose ('" + name.text + "^T')")
          .hint("transpose the source instead: `" + s_.lhs.front().text +
                "^T -> " + name.text + "`");
  }
  for (const std::vector<Name> *side : {&s_.lhs, &s_.rhs})
    for (const Name &name : *side) {
      if (!name.range)
        continue;
      const NameRange &range = *name.range;
      if (range.begin < 0 || range.end <= range.begin)
        error(range.location, "range [" + std::to_string(range.begin) + ":" +
                                  std::to_string(range.end) + "] of '" +
                                  name.text + "' is empty or negative")
            .hint("name[begin:end] needs 0 <= begin < end; q[0:3] stands for "
                  "q_0, q_1, q_2");
    }
}

void Verifier::checkArity() {
  if (s_.lhs.size() > 1 && s_.rhs.size() > 1)
    error(s_.arrowLocation, "cannot map " + std::to_string(s_.lhs.size()) +
                                " names to " + std::to_string(s_.rhs.size()) +
                                " names")
        .hint("a statement is 1 -> 1 (rename, cast, permute), 1 -> n (split) "
              "or n -> 1 (concat); go through a temporary name: "
              "`a, b -> t, axis=0` then `t -> c, d, axis=0`");
}

void Verifier::checkPlaceholders() {
  auto isPlaceholder = [](const Name &n) { return n.isPlaceholder(); };
  for (const std::vector<Name> *side : {&s_.lhs, &s_.rhs}) {
    for (const Name &name : *side) {
      if (!name.isPlaceholder())
        continue;
      if (side->size() > 1)
        error(name.location, "'_' must stand alone on its side of '->'")
            .hint("`_ -> b` adds b, `a -> _` removes a");
      if (name.range || name.transposed)
        error(name.location, "'_' cannot take a range or '^T'");
    }
  }
  bool adds = std::any_of(s_.lhs.begin(), s_.lhs.end(), isPlaceholder);
  bool removes = std::any_of(s_.rhs.begin(), s_.rhs.end(), isPlaceholder);
  if (adds && removes) {
    error(s_.arrowLocation, "'_ -> _' neither adds nor removes a key")
        .hint("`_ -> b` adds b, `a -> _` removes a");
    return;
  }
  // Paddle reads `a, b -> _` and `_ -> b, c` as a concat/split.
  if (adds && s_.lhs.size() == 1 && s_.rhs.size() > 1)
    error(s_.rhs[1].location, "adding a key takes exactly one destination name")
        .hint("write one `_ -> b` statement per key");
  if (removes && s_.rhs.size() == 1 && s_.lhs.size() > 1)
    error(s_.lhs[1].location, "removing a key takes exactly one source name")
        .hint("write one `a -> _` statement per key");
  if ((adds || removes) && (!s_.attributes.empty() || !s_.tags.empty()))
    error(!s_.attributes.empty() ? s_.attributes.front().location
                                 : s_.tags.front().location,
          std::string(adds ? "adding" : "removing") +
              " a key takes no attributes or macro tags");
}

void Verifier::checkAttributes() {
  for (size_t i = 0; i < s_.attributes.size(); ++i) {
    const Attribute &a = s_.attributes[i];
    for (size_t j = 0; j < i; ++j)
      if (s_.attributes[j].key == a.key) {
        error(a.location, "attribute '" + a.key + "' is given twice")
            .note(s_.attributes[j].location, "first given here");
        break;
      }
    if (a.key == "transpose") {
      error(a.location, "attribute 'transpose' is not supported")
          .hint("write permute='[1, 0]' (or the `A^T -> B` suffix for a full "
                "transpose)");
      continue;
    }
    const AttributeSpec *spec = findSpec(a.key);
    if (!spec) {
      std::vector<std::string> keys;
      for (const AttributeSpec &known : kAttributes)
        keys.push_back(known.key);
      if (macroTagFromSpelling(a.key)) {
        error(a.location, "macro tag '" + a.key + "' takes no value")
            .hint("write the tag alone: `F -> D, " + a.key + "`");
        continue;
      }
      auto d = error(a.location, "unknown attribute '" + a.key + "'");
      std::string suggestion = closestSpelling(a.key, keys);
      if (!suggestion.empty())
        d.hint("did you mean '" + suggestion + "'?");
      else
        d.hint("known attributes: axis, permute, dtype, src_dtype, dst_dtype, "
               "reshape, num_heads, num_key_value_groups");
      continue;
    }
    bool isInteger = a.isInteger();
    if (spec->kind == ValueKind::Integer && !isInteger)
      error(a.valueLocation, "attribute '" + a.key + "' takes an integer, not "
                                 "the string " + std::string(1, a.quote) +
                                 a.string() + std::string(1, a.quote))
          .hint(std::string("write ") + spec->example);
    else if (spec->kind == ValueKind::String && isInteger)
      error(a.valueLocation, "attribute '" + a.key +
                                 "' takes a quoted string, not the number " +
                                 std::to_string(a.integer()))
          .hint(std::string("write ") + spec->example);
  }
  const Attribute *src = s_.findAttribute("src_dtype");
  const Attribute *dst = s_.findAttribute("dst_dtype");
  if ((src == nullptr) != (dst == nullptr))
    error((src ? src : dst)->location, "'src_dtype' and 'dst_dtype' go together")
        .hint("write src_dtype='bfloat16', dst_dtype='float32', or a one-sided "
              "dtype='float32'");
}

std::optional<int64_t> Verifier::positiveInteger(const char *key, MacroTag tag) {
  const Attribute *a = s_.findAttribute(key);
  if (!a) {
    error(s_.tags.front().location, std::string("'") + macroTagSpelling(tag) +
                                        "' needs the attribute '" + key + "'")
        .hint(std::string("write `") + macroTagSpelling(tag) +
              ", num_heads=H, num_key_value_groups=G` with H query heads and "
              "G key/value heads");
    return std::nullopt;
  }
  if (!a->isInteger())
    return std::nullopt; // reported by checkAttributes
  if (a->integer() <= 0) {
    error(a->valueLocation, std::string("'") + key + "' must be positive (got " +
                                std::to_string(a->integer()) + ")");
    return std::nullopt;
  }
  return a->integer();
}

void Verifier::requireCount(MacroTag tag,
                            const std::vector<std::pair<size_t, size_t>> &forms,
                            const char *formText) {
  for (const auto &[lhs, rhs] : forms)
    if (s_.lhs.size() == lhs && s_.rhs.size() == rhs)
      return;
  error(s_.tags.front().location,
        std::string("'") + macroTagSpelling(tag) + "' does not apply to " +
            std::to_string(s_.lhs.size()) + " -> " +
            std::to_string(s_.rhs.size()) + " names")
      .hint(std::string("supported forms: ") + formText);
}

void Verifier::checkTags() {
  if (s_.tags.size() > 1) {
    error(s_.tags[1].location, "a statement takes at most one macro tag")
        .note(s_.tags[0].location, "first tag is here");
    return;
  }
  bool qkvTag = !s_.tags.empty() && s_.tags[0].tag != MacroTag::FusedFfn;
  for (const char *key : {"num_heads", "num_key_value_groups"}) {
    const Attribute *a = s_.findAttribute(key);
    if (a && !qkvTag)
      error(a->location, std::string("'") + key +
                             "' only applies to fused_qkv and fused_qkv_old")
          .hint("write `F -> q, k, v, fused_qkv, num_heads=H, "
                "num_key_value_groups=G`");
  }
  if (s_.tags.empty())
    return;
  MacroTag tag = s_.tags[0].tag;
  // Names that macros expand ($LAYER_ID and friends keep the arity; ranges
  // and stars change it) are counted after expansion instead; the attribute
  // checks below still apply.
  bool expands = false;
  for (const std::vector<Name> *side : {&s_.lhs, &s_.rhs})
    for (const Name &name : *side)
      if (name.range || (!name.quoted && name.text.find('*') != std::string::npos))
        expands = true;

  if (!expands) switch (tag) {
  case MacroTag::FusedQkv:
    if (s_.lhs.size() == 1 && s_.rhs.size() == 1) {
      error(s_.tags[0].location,
            "'fused_qkv' converts between separate q, k, v and one fused "
            "weight; it does not re-lay out a fused weight")
          .hint("for the TP-dependent re-layout of a fused QKV weight "
                "(`F -> F, fused_qkv, ...` in older Paddle) write "
                "'fused_qkv_old': `F -> F, fused_qkv_old, num_heads=H, "
                "num_key_value_groups=G`");
      return;
    }
    requireCount(tag, {{1, 3}, {3, 1}}, "`F -> q, k, v, fused_qkv, ...` and "
                                        "`q, k, v -> F, fused_qkv, ...`");
    break;
  case MacroTag::FusedQkvOld:
    requireCount(tag, {{1, 1}, {1, 3}, {3, 1}},
                 "`F -> D, fused_qkv_old, ...`, `F -> q, k, v, fused_qkv_old, "
                 "...` and `q, k, v -> D, fused_qkv_old, ...`");
    break;
  case MacroTag::FusedFfn:
    requireCount(tag, {{1, 1}, {1, 2}, {2, 1}},
                 "`F -> D, fused_ffn`, `F -> gate, up, fused_ffn` and "
                 "`gate, up -> D, fused_ffn`");
    break;
  }
  if (tag == MacroTag::FusedFfn)
    return;
  std::optional<int64_t> heads = positiveInteger("num_heads", tag);
  std::optional<int64_t> groups = positiveInteger("num_key_value_groups", tag);
  if (heads && groups && *heads % *groups != 0)
    error(s_.findAttribute("num_key_value_groups")->valueLocation,
          "num_heads (" + std::to_string(*heads) +
              ") must be divisible by num_key_value_groups (" +
              std::to_string(*groups) + ")")
        .hint("num_key_value_groups is the number of key/value heads; each "
              "serves num_heads / num_key_value_groups query heads");
}

} // namespace

const char *attributeExample(const std::string &key) {
  const AttributeSpec *spec = findSpec(key);
  return spec ? spec->example : nullptr;
}

bool verifyStatement(const Statement &statement, DiagnosticEngine &diags) {
  return Verifier(statement, diags).run();
}

} // namespace aoa
