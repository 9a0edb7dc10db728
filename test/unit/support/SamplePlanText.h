//===- SamplePlanText.h - docs/plan-format.md's example plan ----*- C++ -*-===//
//
// The documented example (plus one added key with every escape): the plan
// text tests check the writer against it byte for byte, and the executor
// tests run it on real files.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_SAMPLEPLANTEXT_H
#define AOA_TEST_UNIT_SAMPLEPLANTEXT_H

namespace aoa::test {

inline const char *const kSamplePlanText = R"(aoa-plan 3
ranks 2
memory-budget 1048576
source-file 0 rank 0 "src/rank0.safetensors"
source-file 1 rank 1 "src/rank1.safetensors"
destination-file 0 rank 0 "model-00001.safetensors"
destination-file 1 rank 0 "opt-rank0.safetensors"
destination-file 2 rank 1 "opt-rank1.safetensors"
destination-file 3 rank 1 "model-00002.safetensors"
source-tensor 0 file 0 name "w" key "w" bfloat16[8, 4] box [0:4, 0:4]
source-tensor 1 file 1 name "w" key "w" bfloat16[8, 4] box [4:8, 0:4]
source-tensor 2 file 1 name "m.moment1_0" key "m.moment1_0" float32[4, 8] box [0:4, 0:8] flat [0:16]
source-tensor 3 file 0 name "m.moment1_0" key "m.moment1_0" float32[4, 8] box [0:4, 0:8] flat [16:32]
source-tensor 4 file 1 name "q" key "q" float32[6, 2] box [0:6, 0:2]
source-tensor 5 file 1 name "kc" key "kc" float32[2, 2, 3] box [0:2, 0:2, 0:3]
destination-tensor 0 file 0 name "wt" key "wt" float32[4, 8] box [0:4, 0:8]
destination-tensor 1 file 1 name "m.moment1_0" key "m.moment1_0" float32[4, 8] box [0:2, 0:8]
destination-tensor 2 file 2 name "m.moment1_0" key "m.moment1_0" float32[4, 8] box [2:4, 0:8]
destination-tensor 3 file 3 name "qc" key "qc" float32[3, 2, 2] box [0:3, 0:2, 0:2]
destination-tensor 4 file 3 name "kf" key "kf" float32[4, 3] box [0:4, 0:3]
added-key "lm_head.bias"
added-key "we\"ird\\key\n\té"
rank 0
  round 0
    %0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]
    %1 = read src 3 [2:4, 0:8] : float32[2, 8]
    send 1 %1
    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]
    %4 = copy %0 ["[1, 0]", "float32"] : float32[4, 4]
    %5 = copy %2 ["[1, 0]", "float32"] : float32[4, 4]
    write dst 0 [0:4, 0:4] %4
    write dst 0 [0:4, 4:8] %5
    write dst 1 [0:2, 0:8] %3
  round 1
rank 1
  round 0
    %0 = read src 1 [4:8, 0:4] : bfloat16[4, 4]
    %1 = read src 2 [0:2, 0:8] : float32[2, 8]
    %2 = read src 4 [0:6, 0:2] : float32[6, 2]
    send 0 %0, %1
    %3 = recv 0 : float32[2, 8]
    %4 = copy %2 ["reshape:[3, 2, 2]"] : float32[3, 2, 2]
    write dst 2 [2:4, 0:8] %3
    write dst 3 [0:3, 0:2, 0:2] %4
  round 1
    %0 = read src 5 [0:2, 0:2, 0:3] : float32[2, 2, 3]
    %1 = copy %0 ["flatten:[2, 2, 3]"] : float32[4, 3]
    write dst 4 [0:4, 0:3] %1
)";

} // namespace aoa::test

#endif // AOA_TEST_UNIT_SAMPLEPLANTEXT_H
