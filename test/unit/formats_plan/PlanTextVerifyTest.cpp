//===- PlanTextVerifyTest.cpp - Verifier rejections -----------------------===//
//
// The semantic rules of a plan (the verifier), located through the text
// when a plan is read, and named in words for an in-memory plan.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanVerifier.h"

#include "PlanTextTestSupport.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::test;

namespace {

using plan::Opcode;

TEST(PlanTextVerifyTest, FilesAndTensors) {
  expectEditError("source-file 1 rank 1", "source-file 1 rank 5", "5 \"src",
                  "source file 'src/rank1.safetensors' belongs to rank 5, but "
                  "the plan has 2 ranks");
  expectEditError("\"opt-rank1.safetensors\"", "\"../opt.safetensors\"",
                  "\"../opt",
                  "destination file '../opt.safetensors' is not "
                  "inside the destination directory");
  expectEditError("\"opt-rank1.safetensors\"", "\"/tmp/x.safetensors\"",
                  "\"/tmp", "is not inside the destination directory");
  expectEditError("\"src/rank1.safetensors\"", "\"src/rank0.safetensors\"",
                  "\"src/rank0.safetensors\"",
                  "source file 'src/rank0.safetensors' is listed twice", 1);
  expectEditError("source-tensor 4 file 1", "source-tensor 4 file 9", "9 name",
                  "source tensor 4 names source file 9, but the plan lists 2 "
                  "source files");
  expectEditError("float32[6, 2] box [0:6, 0:2]", "float32[6, 2] box [0:6]",
                  "[0:6]\n",
                  "box [0:6] has 1 dimension, but key 'q' has 2 "
                  "dimensions (float32[6, 2])");
  expectEditError("float32[6, 2] box [0:6, 0:2]",
                  "float32[6, 2] box [0:7, 0:2]", "[0:7",
                  "box [0:7, 0:2] lies outside the global shape [6, 2] of key "
                  "'q'");
  expectEditError("flat [16:32]", "flat [16:33]", "[16:33]",
                  "flat range [16:33] does not lie within the 32 elements of "
                  "box [0:4, 0:8]");
  expectEditError("flat [16:32]", "flat [16:16]", "[16:16]",
                  "flat range [16:16] is empty");
  expectEditError("name \"kf\"", "name \"qc\"", "\"qc\" key \"kf\"",
                  "destination tensor 'qc' of file 'model-00002.safetensors' "
                  "is listed twice");
  expectEditError("added-key \"lm_head.bias\"",
                  "added-key \"lm_head.bias\"\nadded-key \"lm_head.bias\"",
                  "added-key", "added key 'lm_head.bias' is listed twice", 1);
  expectError("aoa-plan 3\nranks 0\nmemory-budget 0\n", "ranks 0",
              "a plan needs at least one rank");
  expectEditError("ranks 2", "ranks 0", "0\n  round 0\n    %0 = read src 0",
                  "rank 0 is out of range: the plan has 0 ranks");
}

TEST(PlanTextVerifyTest, RoundCounts) {
  expectEditError("  round 1\nrank 1", "rank 1", "rank 1\n",
                  "rank 1 has 2 rounds, but rank 0 has 1");
}

TEST(PlanTextVerifyTest, Regions) {
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 9 [2:4, 0:8]",
                  "9 [2:4",
                  "source tensor 9 does not exist: the plan has 6 source "
                  "tensors");
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 2 [2:4, 0:8]",
                  "2 [2:4",
                  "rank 0 reads source tensor 2, but its file "
                  "'src/rank1.safetensors' belongs to rank 1");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6]",
                  "[0:6]",
                  "region [0:6] has 1 dimension, but key 'q' has 2 "
                  "dimensions");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6, 1:3]",
                  "[0:6, 1:3]",
                  "region [0:6, 1:3] lies outside the global shape [6, 2] of "
                  "key 'q'");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6, 2:1]",
                  "[0:6, 2:1]", "lies outside the global shape");
  expectEditError("%0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]",
                  "%0 = read src 0 [2:6, 0:4] : bfloat16[4, 4]", "[2:6",
                  "region [2:6, 0:4] is not inside source tensor 0 ('w'), "
                  "which holds [0:4, 0:4] of key 'w'");
  // Rows 0-1 of the moment are stored on rank 1 (flat [0:16]), not rank 0.
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 3 [1:3, 0:8]",
                  "[1:3",
                  "region [1:3, 0:8] is not inside source tensor 3 "
                  "('m.moment1_0'): its elements lie at flat indices "
                  "8 to 23 of box [0:4, 0:8], but the tensor stores "
                  "only [16:32]");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [1:3, 0:8] %3",
                  "[1:3",
                  "region [1:3, 0:8] is not inside destination "
                  "tensor 1");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 2 [2:4, 0:8] %3",
                  "2 [2:4, 0:8] %3",
                  "rank 0 writes destination tensor 2, but its file "
                  "'opt-rank1.safetensors' belongs to rank 1");
}

TEST(PlanTextVerifyTest, BufferTypes) {
  expectEditError("%1 = read src 3 [2:4, 0:8] : float32[2, 8]",
                  "%1 = read src 3 [2:4, 0:8] : float32[8, 2]",
                  "float32[8, 2]\n    send",
                  "buffer %1 is declared float32[8, 2], but region [2:4, 0:8] "
                  "has shape [2, 8]");
  expectEditError("%0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]",
                  "%0 = read src 0 [0:4, 0:4] : float32[4, 4]",
                  "float32[4, 4]\n    %1",
                  "read gives bfloat16 data, but buffer %0 is declared "
                  "float32[4, 4]");
  expectEditError("[\"[1, 0]\", \"float32\"] : float32[4, 4]\n    %5",
                  "[\"[1, 0]\"] : bfloat16[4, 4]\n    %5", "%4\n",
                  "buffer %4 holds bfloat16 data, but destination tensor 0 "
                  "(key 'wt') is float32");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [0:2, 0:4] %3",
                  "%3\n  round 1",
                  "buffer %3 is float32[2, 8], but region [0:2, 0:4] has "
                  "shape [2, 4]");
}

TEST(PlanTextVerifyTest, BufferUses) {
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [0:2, 0:8] %9",
                  "%9", "buffer %9 is not defined in this round");
  expectEditError("%1 = copy %0 [\"flatten:[2, 2, 3]\"]",
                  "%1 = copy %1 [\"flatten:[2, 2, 3]\"]", "%1 [",
                  "buffer %1 is used before it is defined");
  expectEditError("    %5 = copy %2 [\"[1, 0]\", \"float32\"] : "
                  "float32[4, 4]\n    write dst 0 [0:4, 0:4] %4\n",
                  "    write dst 0 [0:4, 0:4] %4\n    %5 = copy %2 "
                  "[\"[1, 0]\", \"float32\"] : float32[4, 4]\n",
                  "%5 = copy %2", "'copy' comes after a write in this round");
  expectEditError("    send 1 %1\n",
                  "    %6 = copy %1 [] : float32[2, 8]\n"
                  "    send 1 %6\n",
                  "send 1", "'send' comes after a copy in this round");
  expectEditError("    send 1 %1\n"
                  "    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n",
                  "    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n"
                  "    send 1 %2\n",
                  "%2\n",
                  "buffer %2 comes from 'recv'; a round sends only buffers it "
                  "has read");
}

TEST(PlanTextVerifyTest, Exchanges) {
  expectEditError("send 1 %1", "send 7 %1", "7 %1",
                  "rank 7 does not exist: the plan has 2 ranks");
  expectEditError("send 1 %1", "send 0 %1", "0 %1", "rank 0 sends to itself");
  // Rank 0 stops receiving: rank 1's send has no partner.
  expectEditError("    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n"
                  "    %4 = copy %0 [\"[1, 0]\", \"float32\"] : float32[4, 4]\n"
                  "    %5 = copy %2 [\"[1, 0]\", \"float32\"] : float32[4, 4]\n"
                  "    write dst 0 [0:4, 0:4] %4\n"
                  "    write dst 0 [0:4, 4:8] %5\n"
                  "    write dst 1 [0:2, 0:8] %3\n",
                  "", "send 0 %0, %1",
                  "send to rank 0 has no matching recv: rank 0 receives 0 "
                  "messages from rank 1 in round 0");
  expectEditError("    send 1 %1\n", "", "%3 = recv 0",
                  "recv from rank 0 has no matching send: rank 0 sends 0 "
                  "messages to rank 1 in round 0");
  expectEditError("%3 = recv 0 : float32[2, 8]",
                  "%3, %5 = recv 0 : float32[2, 8], float32[1]",
                  "%3, %5 = recv 0",
                  "recv from rank 0 expects float32[2, 8], float32[1], but "
                  "the matching send of rank 0 sends float32[2, 8]");
  // As many buffers on both sides, of another dtype or shape (the uses of
  // the received buffer are reported too).
  for (const char *types : {"bfloat16[4, 4], float16[2, 8]",
                            "bfloat16[2, 8], float32[2, 8]"}) {
    Read mismatch(edit(sampleText(),
                       "%2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]",
                       std::string("%2, %3 = recv 1 : ") + types));
    EXPECT_NE(mismatch.all().find(std::string("recv from rank 1 expects ") +
                                  types +
                                  ", but the matching send of rank 1 sends "
                                  "bfloat16[4, 4], float32[2, 8]"),
              std::string::npos)
        << mismatch.all();
  }
  Read r(edit(sampleText(), "%3 = recv 0 : float32[2, 8]",
              "%3, %5 = recv 0 : float32[2, 8], float32[1]"));
  ASSERT_FALSE(r.diagnostics.empty());
  ASSERT_EQ(r.diagnostics[0].notes.size(), 1u);
  EXPECT_EQ(r.sources.describe(r.diagnostics[0].notes[0].location),
            placeOf(std::string(r.sources.text(1)), "send 1 %1"));
}

TEST(PlanTextVerifyTest, CopyTransforms) {
  expectEditError("%4 = copy %0 [\"[1, 0]\"", "%4 = copy %0 [\"[2, 0, 1]\"",
                  "\"[2, 0, 1]\"",
                  "permutation step '[2, 0, 1]' has 3 axes, but the data has "
                  "rank 2 here (bfloat16[4, 4])");
  expectEditError("[\"reshape:[3, 2, 2]\"]", "[\"reshape:[2, 4, 2]\"]",
                  "\"reshape:[2, 4, 2]\"",
                  "step 'reshape:[2, 4, 2]' turns rows into blocks of 4 rows "
                  "of 2 elements, so the data must be 2-D with a multiple of 4 "
                  "rows and 2 columns, not [6, 2]");
  expectEditError("[\"reshape:[3, 2, 2]\"]", "[\"reshape:[3, 2]\"]",
                  "\"reshape:[3, 2]\"",
                  "needs a canonical shape of at least 3 positive extents");
  expectEditError("[\"flatten:[2, 2, 3]\"]", "[\"flatten:[2, 3, 2]\"]",
                  "\"flatten",
                  "step 'flatten:[2, 3, 2]' merges whole blocks "
                  "of shape [3, 2], so the data must be "
                  "[2, 3, 2], not [2, 2, 3]");
  expectEditError("[\"reshape:[3, 2, 2]\"] : float32[3, 2, 2]",
                  "[\"reshape:[3, 2, 2]\"] : float32[6, 2]",
                  "float32[6, 2]\n    write",
                  "copy gives float32[3, 2, 2], but buffer %4 is declared "
                  "float32[6, 2]");
}

TEST(PlanTextVerifyTest, CastsBetweenAllDtypes) {
  std::string text =
      edit(sampleText(), "\"q\" float32[6, 2]", "\"q\" int32[6, 2]");
  text = edit(text, "%2 = read src 4 [0:6, 0:2] : float32[6, 2]",
              "%2 = read src 4 [0:6, 0:2] : int32[6, 2]");
  text = edit(text, "[\"reshape:[3, 2, 2]\"]",
              "[\"float32\", \"reshape:[3, 2, 2]\"]");
  // An int32 -> float32 cast is valid: the plan reads and verifies.
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_TRUE(r.diagnostics.empty()) << r.all();
}

//===----------------------------------------------------------------------===//
// In-memory plans
//===----------------------------------------------------------------------===//

TEST(PlanVerifierTest, NamesSitesInWords) {
  plan::Plan p = samplePlan();
  // The flatten round's copy is the only one with its transform.
  uint32_t id = p.programs[1].rounds[1].instructions[1].transform;
  p.transforms.transforms[id][0].canonical = {2, 3, 2};
  std::vector<std::string> messages = verifyMessages(p);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].rfind("rank 1, round 1, instruction 1 (copy): step "
                              "'flatten:[2, 3, 2]'",
                              0),
            0u)
      << messages[0];
}

TEST(PlanVerifierTest, ACopyNamesATransformOfThePlan) {
  plan::Plan p = samplePlan();
  p.programs[1].rounds[1].instructions[1].transform = 99;
  std::vector<std::string> messages = verifyMessages(p);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].rfind("rank 1, round 1, instruction 1 (copy): the "
                              "copy names transform 99, but the plan has " +
                                  std::to_string(p.transforms.size()),
                              0),
            0u)
      << messages[0];
}

TEST(PlanVerifierTest, StructuralRulesOfTheModel) {
  plan::Plan p = samplePlan();
  // A declared buffer that nothing defines, and one defined twice.
  p.programs[1].rounds[1].buffers.push_back(decl(DType::F32, {1}));
  p.programs[0].rounds[0].instructions[5].buffer = 4;
  std::vector<std::string> messages = verifyMessages(p);
  std::string all;
  for (const std::string &m : messages)
    all += m + "\n";
  EXPECT_NE(all.find("rank 0, round 0, instruction 5 (copy): buffer %4 is "
                     "defined twice in this round"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("rank 1, round 1: buffer %2 is declared, but no "
                     "instruction of the round defines it"),
            std::string::npos)
      << all;

  plan::Plan q = samplePlan();
  q.programs.pop_back();
  messages = verifyMessages(q);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0], "the plan has 2 ranks but 1 rank program");

  plan::Plan huge = samplePlan();
  huge.programs[0].rounds[0].buffers[0].shape = {INT64_MAX, 4};
  messages = verifyMessages(huge);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0], "rank 0, round 0, instruction 0 (read): buffer %0 of "
                         "type bfloat16[9223372036854775807, 4] has no valid "
                         "size in bytes");
}

// Issue: a destination file named metadata.json was overwritten by the
// metadata, one under .aoa-run/ deleted with the staging directory, and
// `f` and `./f` were two files writing one (silently wrong data).
TEST(PlanTextVerifyTest, ReservedAndAliasedDestinationNames) {
  for (const char *reserved :
       {"metadata.json", "./metadata.json", "model.safetensors.index.json",
        ".aoa-run/files/x.safetensors", ".aoa-run", ".aoa/plan",
        "sub/.x.safetensors.tmp.1a2b3c4d"}) {
    SCOPED_TRACE(reserved);
    expectEditError("\"opt-rank1.safetensors\"",
                    "\"" + std::string(reserved) + "\"",
                    "\"" + std::string(reserved) + "\"",
                    "destination file '" + std::string(reserved) +
                        "' has a name that aoa-run uses for its own files");
  }
  // Not reserved: names that only look alike.
  for (const char *fine : {"metadata.json.safetensors", ".aoa-runs/x",
                           "sub/metadata.json", "x.tmp.safetensors"}) {
    SCOPED_TRACE(fine);
    Read r(edit(sampleText(), "\"opt-rank1.safetensors\"",
                "\"" + std::string(fine) + "\""));
    EXPECT_TRUE(r.plan) << r.all();
  }
  for (const char *alias :
       {"./model-00001.safetensors", ".//model-00001.safetensors"}) {
    SCOPED_TRACE(alias);
    expectEditError(
        "\"opt-rank0.safetensors\"", "\"" + std::string(alias) + "\"",
        "\"" + std::string(alias) + "\"",
        "destination file '" + std::string(alias) + "' is listed twice");
  }
  expectEditError("\"src/rank1.safetensors\"", "\"src//rank0.safetensors\"",
                  "\"src//rank0.safetensors\"",
                  "source file 'src//rank0.safetensors' is listed twice");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"./config.json\"",
                             "\"./config.json\"",
                             "copied file './config.json' is listed twice", 0);
}

// Issue 20 P1: `x` and `x/y` as two destination files, or a directory named
// metadata.json, failed halfway through the run with an OS error.
TEST(PlanTextVerifyTest, DestinationPathsDoNotCollide) {
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"model-00001.safetensors/x.safetensors\"",
                  "\"model-00001.safetensors/x",
                  "destination file 'model-00001.safetensors/x.safetensors' "
                  "needs a directory 'model-00001.safetensors', but "
                  "destination file 'model-00001.safetensors' is a file there");
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"./model-00001.safetensors//a/x.safetensors\"",
                  "\"./model-00001",
                  "but destination file "
                  "'model-00001.safetensors' is a file there");
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"metadata.json/x.safetensors\"", "\"metadata.json/x",
                  "destination file 'metadata.json/x.safetensors' needs a "
                  "directory 'metadata.json', a name aoa-run writes a file to");
  expectHuggingFaceEditError(
      "\"tok/vocab.txt\"", "\"model-00002-of-00002.safetensors/vocab.txt\"",
      "\"model-00002-of-00002.safetensors/vocab.txt\"",
      "copied file 'model-00002-of-00002.safetensors/vocab.txt' needs a "
      "directory 'model-00002-of-00002.safetensors', but destination file "
      "'model-00002-of-00002.safetensors' is a file there");
  expectHuggingFaceEditError(
      "\"tok/vocab.txt\"", "\"config.json/vocab.txt\"",
      "\"config.json/vocab.txt\"",
      "copied file 'config.json/vocab.txt' needs a directory 'config.json', "
      "but copied file 'config.json' is a file there");
  // A shared directory is fine.
  Read r(edit(sampleText(), "\"opt-rank1.safetensors\"",
              "\"model-00001/x.safetensors\""));
  EXPECT_TRUE(r.plan) << r.all();
}

// Issue: a source file '../x' was read from outside --src-dir, a NUL in a
// path cut it short, and invalid UTF-8 in names made a metadata.json our own
// loader rejects.
TEST(PlanTextVerifyTest, NamesStayInsideAndAreText) {
  expectEditError("\"src/rank1.safetensors\"", "\"../rank1.safetensors\"",
                  "\"../rank1",
                  "source file '../rank1.safetensors' is not inside the "
                  "source directory");
  expectEditError("\"src/rank1.safetensors\"", "\"/etc/rank1.safetensors\"",
                  "\"/etc", "is not inside the source directory");
  expectEditError("\"opt-rank1.safetensors\"", "\"opt\\u0000.safetensors\"",
                  "\"opt\\u0000", "contains the control character 0x00");
  expectEditError("\"src/rank1.safetensors\"", "\"src/rank1\\n.safetensors\"",
                  "\"src/rank1\\n", "contains the control character 0x0a");
  expectEditError("name \"kf\"", "name \"k\xff\"", "\"k\xff\" key",
                  "destination tensor 4: its name is not valid UTF-8");
  expectEditError("key \"kf\"", "key \"k\xc3\"", "destination-tensor 4",
                  "destination tensor 4: its key is not valid UTF-8");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"tok\\u0001.txt\"",
                             "\"tok\\u0001",
                             "contains the control character 0x01");
}

// The tensors listed twice are found in a hash table of the first ones:
// thousands of tensors over two files, a few listed again far from where they
// first were (and names equal across files, which are no repeat), checked
// against a scan of every earlier tensor.
TEST(PlanTextVerifyTest, RepeatedTensorsMatchAScanOfEveryEarlierOne) {
  plan::Plan p = samplePlan();
  size_t firstAdded = p.sourceTensors.size();
  for (uint32_t i = 0; i < 6000; ++i)
    p.sourceTensors.push_back(
        tensor(i % 2, "layer." + std::to_string(i / 2) + ".w", DType::F32,
               {4}, box({{0, 4}})));
  for (uint32_t i : {17u, 4001u, 17u, 5998u, 2u})
    p.sourceTensors.push_back(p.sourceTensors[firstAdded + i]);
  std::vector<std::pair<size_t, size_t>> expected; // (repeat, first)
  for (size_t i = 0; i < p.sourceTensors.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (p.sourceTensors[j].file == p.sourceTensors[i].file &&
          p.sourceTensors[j].name == p.sourceTensors[i].name) {
        expected.push_back({i, j});
        break;
      }
  ASSERT_EQ(expected.size(), 5u);

  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::vector<std::pair<size_t, size_t>> found;
  diags.setHandler([&](const Diagnostic &d) {
    // In-memory plans name their sites: "source tensor I: ...".
    auto indexIn = [](const std::string &text) {
      return size_t(std::stoul(text.substr(text.find_first_of("0123456789"))));
    };
    ASSERT_NE(d.message.find("is listed twice"), std::string::npos)
        << d.message;
    ASSERT_EQ(d.notes.size(), 1u);
    found.push_back({indexIn(d.message), indexIn(d.notes[0].message)});
  });
  EXPECT_FALSE(verifyPlan(p, diags, PlanChecks::Tables));
  EXPECT_EQ(found, expected);
}

// A binary plan stores a region's rank in one byte: a key of more
// dimensions than the metadata allows is refused, not truncated.
TEST(PlanTextVerifyTest, KeysHaveAtMost255Dimensions) {
  plan::Plan p = samplePlan();
  p.sourceTensors[4].globalShape = SharedShape(std::vector<int64_t>(256, 1));
  std::vector<std::string> messages = verifyMessages(p);
  EXPECT_NE(std::find(messages.begin(), messages.end(),
                      "source tensor 4: key 'q' has 256 dimensions; at most "
                      "255 are supported"),
            messages.end())
      << testing::PrintToString(messages);
  p.sourceTensors[4].globalShape = SharedShape(std::vector<int64_t>(255, 1));
  messages = verifyMessages(p);
  for (const std::string &m : messages)
    EXPECT_EQ(m.find("are supported"), std::string::npos) << m;
}

TEST(PlanTextVerifyTest, RankCountIsBounded) {
  expectEditError("ranks 2", "ranks 16777217", "16777217",
                  "the number of ranks must be at most 16777216, not "
                  "16777217");
  // An in-memory plan (the compiler's) is held to the same bound.
  plan::Plan huge = samplePlan();
  huge.ranks = uint32_t(kRankLimit) + 1;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::string errors;
  diags.setHandler(
      [&](const Diagnostic &d) { errors += renderDiagnostic(d, sources); });
  EXPECT_FALSE(verifyPlan(huge, diags));
  EXPECT_NE(errors.find("a plan of 16777217 ranks is more than the 16777216 "
                        "aoa supports"),
            std::string::npos)
      << errors;
}

// Issue (UBSan): byte counts of float32 [2^61, 2] overflowed int64.
TEST(PlanTextVerifyTest, KeysWhoseBytesOverflowAreRefused) {
  std::string text = sampleText();
  text = edit(text, "source-tensor 4 file 1 name \"q\" key \"q\" float32[6, 2]",
              "source-tensor 4 file 1 name \"q\" key \"q\" "
              "float32[2305843009213693952, 2]");
  expectError(text, "float32[2305843009213693952, 2]",
              "key 'q' has an invalid global shape [2305843009213693952, 2]");
}

} // namespace
