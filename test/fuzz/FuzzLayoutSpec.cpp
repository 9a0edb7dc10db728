//===- FuzzLayoutSpec.cpp - Fuzz target: layout specs ---------------------===//
//
// The input is a layout spec (docs/layouts.md), expanded as `aoa-layout SPEC`
// does, then again as `aoa-layout SPEC --src CHECKPOINT` does over a fixed
// key list of a small Llama-like MoE model (layers and experts for the rules'
// $LAYER_ID / $EXPERT_ID, several dtypes and ranks).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "aoa/formats/metadata/LayoutSpecLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

aoa::LayoutKeyList makeKeys() {
  aoa::LayoutKeyList list;
  list.origin = "the fuzz target's keys";
  auto add = [&list](std::string key, aoa::DType dtype,
                     std::vector<int64_t> shape) {
    list.keys.push_back({std::move(key), dtype, std::move(shape)});
  };
  add("model.embed_tokens.weight", aoa::DType::BF16, {64, 16});
  for (int layer = 0; layer < 4; ++layer) {
    std::string p = "model.layers." + std::to_string(layer) + ".";
    add(p + "input_layernorm.weight", aoa::DType::F32, {16});
    add(p + "self_attn.q_proj.weight", aoa::DType::BF16, {16, 16});
    add(p + "self_attn.k_proj.weight", aoa::DType::BF16, {8, 16});
    add(p + "self_attn.v_proj.weight", aoa::DType::BF16, {8, 16});
    add(p + "self_attn.o_proj.weight", aoa::DType::BF16, {16, 16});
    for (int expert = 0; expert < 4; ++expert)
      add(p + "mlp.experts." + std::to_string(expert) + ".up_proj.weight",
          aoa::DType::F16, {24, 16});
    add(p + "mlp.gate.weight", aoa::DType::F32, {4, 16});
  }
  add("model.norm.weight", aoa::DType::F32, {16});
  add("lm_head.weight", aoa::DType::BF16, {64, 16});
  add("step", aoa::DType::I64, {});
  return list;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const aoa::LayoutKeyList keys = makeKeys();
  std::string text(reinterpret_cast<const char *>(data), size);
  {
    aoa::fuzz::RenderedDiagnostics r;
    aoa::loadLayoutSpecText("fuzz-layout.json", text, r.sources, r.diags);
  }
  aoa::fuzz::RenderedDiagnostics r;
  aoa::loadLayoutSpecText("fuzz-layout.json", std::move(text), r.sources,
                          r.diags, &keys);
  return 0;
}
