//===- CompileDriver.cpp ---------------------------------------------------===//
#include "aoa/driver/CompileDriver.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/ir/FileText.h"

#include "aoa/driver/MetadataArgument.h"
#include "aoa/driver/OutputFile.h"
#include "aoa/driver/StatementOutputs.h"
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/HuggingFaceShards.h"
#include "aoa/formats/SourceFacts.h"
#include "aoa/formats/metadata/LayoutSpecLoader.h"
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/LayoutHash.h"
#include "aoa/formats/plan/PlanSummary.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/formats/plan/PlanWriter.h"
#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/frontend/Printers.h"
#include "aoa/frontend/QueryLoader.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/Passes.h"
#include "aoa/passes/TimeReport.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <ostream>
#include <sstream>

namespace aoa {

namespace {

/// --to-hf: the Hugging Face files the statements' outputs (stored whole)
/// are packed into (CompilationState::layoutDerivedDestination).
std::function<std::unique_ptr<ShardMetadata>(const ShardMetadata &)>
huggingFaceLayoutMaker(const CompileOptions &options, DiagnosticEngine &diags) {
  return [&options, &diags](const ShardMetadata &whole)
             -> std::unique_ptr<ShardMetadata> {
    formats::HuggingFaceShardOptions packing;
    packing.maxShardSize = options.maxShardSize;
    runtime::Expected<formats::HuggingFaceShards> shards =
        formats::packHuggingFaceShards(whole, packing);
    if (!shards) {
      diags
          .error(SourceLocation{}, "cannot lay out a Hugging Face directory: " +
                                       shards.error().message)
          .hint(shards.error().hint);
      return nullptr;
    }
    return std::make_unique<ShardMetadata>(std::move(shards->layout));
  };
}

/// --layout: the spec's rules placed over the statements' outputs. The
/// outputs are derived first, as `aoa-layout SPEC --config` does, because
/// the fused macros count the destination's shards: the layout must be
/// known before they run, as with --dst.
std::optional<ShardMetadata>
layoutStatementOutputs(const CompileOptions &options, const ConfigFile &config,
                       bool relayoutOnly, const ShardMetadata &source,
                       SourceManager &sources, DiagnosticEngine &diags) {
  std::optional<Program> program =
      parseConfig(config, sources, diags, relayoutOnly);
  if (!program)
    return std::nullopt;
  std::optional<ShardMetadata> outputs =
      deriveStatementOutputs(std::move(*program), source,
                             options.sourceMetadataPath, sources, diags);
  if (!outputs)
    return std::nullopt;
  LayoutKeyList keys = layoutKeysOf(*outputs, "the statements' outputs");
  return loadLayoutSpec(options.layoutSpecPath, sources, diags, &keys);
}

/// The flags that need source metadata, and the destination's three
/// spellings, checked before any metadata is loaded.
bool checkMetadataFlags(const CompileOptions &options,
                        DiagnosticEngine &diags) {
  if (options.sourceMetadataPath.empty()) {
    diags
        .error(SourceLocation{}, "--emit=expanded and later stages need the "
                                 "source metadata")
        .hint(
            "pass --src=SOURCE_METADATA.json (aoa-metadata v1) or --src=DIR (a "
            "checkpoint directory)");
    return false;
  }
  if (!options.queriesPath.empty() && options.emit != EmitKind::Mappings &&
      options.emit != EmitKind::MappingsCount) {
    diags.error(SourceLocation{},
                "--queries only applies to --emit=mappings and "
                "--emit=mappings-count");
    return false;
  }
  bool derivedLayout =
      !options.layoutSpecPath.empty() || options.toHuggingFace;
  if (derivedLayout + !options.destinationMetadataPath.empty() > 1 ||
      (!options.layoutSpecPath.empty() && options.toHuggingFace)) {
    diags
        .error(SourceLocation{}, "--dst, --layout and --to-hf each give the "
                                 "destination layout; pass one of them")
        .hint("--dst takes shard metadata, --layout a layout spec with rules "
              "over the statements' outputs, --to-hf makes a Hugging Face "
              "directory");
    return false;
  }
  bool emitsPlan =
      options.emit == EmitKind::Plan || options.emit == EmitKind::PlanText;
  if (derivedLayout && !emitsPlan) {
    diags.error(SourceLocation{}, "--layout and --to-hf apply to plans "
                                  "(--emit=plan or --emit=plan-text)");
    return false;
  }
  return true;
}

/// The source and destination layouts, and what the plan records of them.
struct Layouts {
  std::optional<ShardMetadata> source;
  std::optional<ShardMetadata> destination;
  /// Names the destination in diagnostics: --dst or --layout.
  std::string destinationName;
  /// Diagnostics about a key point into the file that declares it: the
  /// metadata file, a checkpoint directory's metadata.json or index, or
  /// nothing (a scanned directory of safetensors files).
  std::string sourceLocatePath;
  std::string destinationLocatePath;
  /// A derived destination is this model re-laid out: the source
  /// directory's other files (config.json, tokenizer files) come along.
  std::vector<std::string> otherFiles;
  /// What the plan was compiled from, for the binary plan's header.
  binplan::PlanOrigin origin;
  /// With threads, the source layout's hash, worked out beside the passes
  /// (takeSourceLayoutHash). Declared last: destroyed first, so a compile
  /// that stops early waits for it before the source goes.
  std::future<uint64_t> sourceLayoutHash;

  /// Moves the hash worked out beside the passes into `origin`; before the
  /// source is released.
  void takeSourceLayoutHash() {
    if (sourceLayoutHash.valid())
      origin.sourceLayoutHash = sourceLayoutHash.get();
  }
};

PipelineStage stageFor(EmitKind emit) {
  switch (emit) {
  case EmitKind::Expanded:
    return PipelineStage::Macros;
  case EmitKind::Ir:
    return PipelineStage::Ops;
  case EmitKind::Mappings:
  case EmitKind::MappingsCount:
    return PipelineStage::ShardSources;
  default:
    return PipelineStage::Plan;
  }
}

/// The destination metadata, loaded on a second thread while the main one
/// loads the source's. It reports into a diagnostics engine of its own and
/// is used only if that engine stayed silent: otherwise the destination is
/// loaded again on the main thread, after the source, so that diagnostics
/// come in the same order and with the same locations as without threads.
class DestinationPreload {
public:
  DestinationPreload(std::string path, bool hash)
      : path_(std::move(path)), hash_(hash) {
    diags_.setHandler([this](const Diagnostic &) { silent_ = false; });
    done_ = std::async(std::launch::async, [this] {
      metadata_ = loadMetadataArgument(path_, sources_, diags_, locatePath_);
      if (metadata_ && hash_)
        layoutHash_ = binplan::layoutHash(*metadata_);
    });
  }
  DestinationPreload(const DestinationPreload &) = delete;
  DestinationPreload &operator=(const DestinationPreload &) = delete;
  ~DestinationPreload() {
    if (done_.valid())
      done_.wait();
  }

  /// Waits for the load; true (and the layout moved into `layouts`) if it
  /// succeeded without a diagnostic.
  bool take(Layouts &layouts);

private:
  std::string path_;
  bool hash_;
  SourceManager sources_;
  DiagnosticEngine diags_{sources_};
  bool silent_ = true;
  std::string locatePath_;
  std::optional<ShardMetadata> metadata_;
  std::optional<uint64_t> layoutHash_;
  std::future<void> done_;
};

bool loadLayouts(const CompileOptions &options, const ConfigFile &config,
                 bool relayoutOnly, SourceManager &sources,
                 DiagnosticEngine &diags, Layouts &layouts) {
  bool derivedLayout =
      !options.layoutSpecPath.empty() || options.toHuggingFace;
  // Only a plan records the layouts' hashes (its header).
  bool hashLayouts = stageFor(options.emit) == PipelineStage::Plan;
  std::optional<DestinationPreload> preload;
  if (options.threads > 1 && !options.destinationMetadataPath.empty())
    preload.emplace(options.destinationMetadataPath, hashLayouts);
  // (A destination loaded beside it sorts its keys on its own thread.)
  layouts.source = loadMetadataArgument(
      options.sourceMetadataPath, sources, diags, layouts.sourceLocatePath,
      derivedLayout ? &layouts.otherFiles : nullptr, options.threads);
  if (layouts.source && options.sourceMetadataOutput)
    writeShardMetadata(*layouts.source, *options.sourceMetadataOutput);
  if (!layouts.source)
    return false;
  // With threads, the source's hash is worked out while the passes run
  // (the second core is idle during the front-end passes).
  if (hashLayouts && options.threads > 1)
    layouts.sourceLayoutHash =
        std::async(std::launch::async, [&source = *layouts.source] {
          return binplan::layoutHash(source);
        });
  else if (hashLayouts)
    layouts.origin.sourceLayoutHash = binplan::layoutHash(*layouts.source);
  layouts.destinationName = options.destinationMetadataPath;
  if (preload && preload->take(layouts))
    return true;
  if (!options.destinationMetadataPath.empty()) {
    layouts.destination =
        loadMetadataArgument(options.destinationMetadataPath, sources, diags,
                             layouts.destinationLocatePath);
    if (!layouts.destination)
      return false;
  } else if (!options.layoutSpecPath.empty()) {
    layouts.destination = layoutStatementOutputs(
        options, config, relayoutOnly, *layouts.source, sources, diags);
    if (!layouts.destination)
      return false;
    layouts.destinationName = options.layoutSpecPath;
  }
  if (layouts.destination && hashLayouts)
    layouts.origin.destinationLayoutHash =
        binplan::layoutHash(*layouts.destination);
  return true;
}

bool DestinationPreload::take(Layouts &layouts) {
  done_.get(); // rethrows what the thread threw
  if (!silent_ || !metadata_)
    return false;
  layouts.destination = std::move(metadata_);
  layouts.destinationLocatePath = std::move(locatePath_);
  layouts.origin.destinationLayoutHash = layoutHash_;
  return true;
}

} // namespace

struct CompileWorkspace {
  CompileWorkspace(SourceManager &sources, DiagnosticEngine &diags)
      : state(sources, diags) {}
  Layouts layouts;
  CompilationState state;
};

void CompileWorkspaceDeleter::operator()(CompileWorkspace *workspace) const {
  delete workspace;
}

namespace {

/// CompilationState::locateMetadataKey. Metadata files are parsed without
/// keeping their text; a diagnostic about a key reads the file again (once)
/// to point at the key's declaration.
class MetadataKeyLocator {
public:
  MetadataKeyLocator(const Layouts &layouts, SourceManager &sources)
      : layouts_(layouts), sources_(sources) {}

  SourceLocation operator()(bool destination, const std::string &key) {
    const std::string &path = destination ? layouts_.destinationLocatePath
                                          : layouts_.sourceLocatePath;
    if (path.empty())
      return SourceLocation{};
    auto [it, inserted] = buffers_.emplace(path, std::nullopt);
    if (inserted) {
      std::string text;
      if (!readFileToString(path, text))
        it->second = sources_.addBuffer(path, std::move(text));
    }
    if (!it->second)
      return SourceLocation{};
    size_t at = sources_.text(*it->second).find("\"" + key + "\"");
    return at == std::string_view::npos
               ? SourceLocation{}
               : sources_.locationForOffset(*it->second, at);
  }

private:
  const Layouts &layouts_;
  SourceManager &sources_;
  std::map<std::string, std::optional<uint32_t>> buffers_;
};

bool checkPrintAfter(const CompileOptions &options, DiagnosticEngine &diags) {
  std::vector<std::string> known = allPassNames();
  for (const std::string &pass : options.printAfter) {
    if (std::find(known.begin(), known.end(), pass) != known.end())
      continue;
    auto d = diags.error(SourceLocation{},
                         "--print-after: unknown pass '" + pass + "'");
    std::string suggestion = closestSpelling(pass, known);
    std::string list;
    for (const std::string &name : known)
      list += (list.empty() ? "" : ", ") + name;
    d.hint(suggestion.empty() ? "passes: " + list
                              : "did you mean '" + suggestion + "'?");
    return false;
  }
  return true;
}

/// The plan, after the passes built it: what aoa-run must find and accept,
/// then the plan in the requested form to `text`, the summary to `err`.
bool emitPlan(const CompileOptions &options, CompilationState &state,
              Layouts &layouts, DiagnosticEngine &diags, std::ostream &text,
              std::ostream &err, TimeReport *timeReport) {
  layouts.takeSourceLayoutHash();
  if (options.toHuggingFace)
    state.plan.destinationFormat = plan::DestinationFormat::HuggingFace;
  state.plan.copiedFiles = std::move(layouts.otherFiles);
  // The compiler read a directory's headers: record what aoa-run must find
  // there (a file changed since is refused before data moves).
  std::error_code notDirectory;
  if (std::filesystem::is_directory(options.sourceMetadataPath, notDirectory))
    if (runtime::Status recorded = formats::recordSourceFacts(
            state.plan, options.sourceMetadataPath);
        !recorded.ok()) {
      diags.error(SourceLocation{}, recorded.error().message)
          .hint(recorded.error().hint);
      return false;
    }
  // The plan aoa-run will read must pass aoa-run's verifier: reserved
  // names, aliased paths, Hugging Face rules are refused here already. The
  // programs are checked with --verify-plan only (by aoa-run always): they
  // follow from the checked tables, and checking them costs about as much
  // as building them.
  PlanChecks checks =
      options.verifyPrograms ? PlanChecks::All : PlanChecks::Tables;
  auto write = [&] {
    if (options.emit == EmitKind::PlanText)
      writePlanText(state.plan, text);
    else
      binplan::writeBinaryPlan(state.plan, layouts.origin, text,
                               options.threads);
  };
  // With threads, into a file: the plan is verified and its summary
  // formatted on a second thread while it is written. Only the writer
  // touches the output and only the verifier reports, and a plan that fails
  // verification is never committed (the output is a temporary until then).
  // Standard output, which may pass through before the commit, waits for
  // the verifier.
  if (options.threads > 1 && text.tellp() != std::streampos(-1)) {
    ScopedTimeStep timer(timeReport, "[verify-plan, write-plan, summary]");
    std::ostringstream summary;
    std::future<bool> verified = std::async(std::launch::async, [&] {
      if (!verifyPlan(state.plan, diags, checks))
        return false;
      printPlanSummary(state.plan, summary, state.broadcastBytes);
      return true;
    });
    write();
    if (!verified.get())
      return false;
    err << summary.str();
    return true;
  }
  {
    ScopedTimeStep timer(timeReport, "[verify-plan]");
    if (!verifyPlan(state.plan, diags, checks))
      return false;
  }
  {
    ScopedTimeStep timer(timeReport, "[write-plan]");
    write();
  }
  ScopedTimeStep timer(timeReport, "[summary]");
  printPlanSummary(state.plan, err, state.broadcastBytes);
  return true;
}

/// Runs the passes up to the requested stage and emits it into `text`;
/// false if a stage failed.
bool runPasses(const CompileOptions &options, Program program,
               bool relayoutOnly, const ConfigFile &config,
               SourceManager &sources, DiagnosticEngine &diags,
               std::ostream &text, std::ostream &err, TimeReport *timeReport,
               CompileWorkspacePtr &workspace) {
  workspace = CompileWorkspacePtr(new CompileWorkspace(sources, diags));
  Layouts &layouts = workspace->layouts;
  CompilationState &state = workspace->state;
  {
    ScopedTimeStep timer(timeReport, "[load-metadata]");
    if (!loadLayouts(options, config, relayoutOnly, sources, diags, layouts))
      return false;
    // The key spaces (sorted names of each side) read only their metadata
    // and report nothing: with threads, the destination's is built on a
    // second thread.
    std::future<KeySpace> destination;
    if (layouts.destination)
      destination = std::async(
          options.threads > 1 ? std::launch::async : std::launch::deferred,
          [&] {
            return KeySpace(*layouts.destination, "destination",
                            layouts.destinationName);
          });
    state.source =
        KeySpace(*layouts.source, "source", options.sourceMetadataPath);
    if (destination.valid())
      state.destination = destination.get();
  }
  state.program = std::move(program);
  if (!options.queriesPath.empty()) {
    std::optional<std::vector<TensorDesc>> queries = loadQueries(
        options.queriesPath, sources, diags, &state.locateQuery);
    if (!queries)
      return false;
    state.queries = std::move(*queries);
    state.hasQueryFile = true;
  }
  state.memoryBudget = options.memoryBudget;
  state.sharedSource = options.sharedSource;
  state.threads = options.threads;
  if (options.toHuggingFace)
    state.layoutDerivedDestination = huggingFaceLayoutMaker(options, diags);
  state.locateMetadataKey = MetadataKeyLocator(layouts, sources);

  PipelineStage stage = stageFor(options.emit);
  PassManager pm;
  addPipeline(pm, stage);
  if (!checkPrintAfter(options, diags))
    return false;
  PassInstrumentation instrumentation;
  instrumentation.printAfter = options.printAfter;
  instrumentation.printAfterAll = options.printAfterAll;
  instrumentation.timeReport = timeReport;
  if (options.emit == EmitKind::MappingsCount) {
    // The pass counts what it answers; nothing is formatted.
    if (!pm.run(state, instrumentation, err))
      return false;
    text << "{\"targets\": " << state.answeredQueries
         << ", \"entries\": " << state.answeredEntries << "}\n";
    return true;
  }
  if (stage == PipelineStage::ShardSources) {
    // Answers stream into the output as they are found. Pass dumps go to
    // stderr so that the output stays one JSON document.
    MappingsJsonWriter writer(text);
    state.mappingSink = [&writer](const TensorDesc &query,
                                  llvm::ArrayRef<MappingEntry> entries) {
      writer.write(query, entries);
    };
    return pm.run(state, instrumentation, err);
  }
  bool emitted;
  if (stage == PipelineStage::Plan) {
    // The statements, the name links and the dataflow's named values go
    // before resolve-shard-sources, whose stored tensors and transfers grow
    // to the compile's peak: only the ops' diagnostics read the statements
    // after (and keep what they show), only the dataflow's targets and
    // inputs are read, and the pass erases the targets as it goes, so the
    // views are freed while the plan grows. The metadata, the key spaces,
    // the ops and the rest of the dataflow are read up to
    // resolve-shard-sources; verify and schedule work on its transfers and
    // the plan alone: they go there, before schedule builds the plan beside
    // the transfers. (On the DeepSeek-V3 bench the compile's peak fell from
    // 1,175 to about 990 MiB: bench/RESULTS.md.)
    instrumentation.afterPass = [&](const Pass &pass) {
      if (std::string_view(pass.name()) == "derive-destination") {
        ScopedTimeStep timer(timeReport, "[release-statements]");
        releaseStatements(state);
        state.dataflow.releaseValues();
        return;
      }
      if (std::string_view(pass.name()) != "resolve-shard-sources")
        return;
      ScopedTimeStep timer(timeReport, "[release-front-end]");
      layouts.takeSourceLayoutHash();
      state.source = KeySpace();
      state.destination = KeySpace();
      state.derivedDestination.reset();
      layouts.source.reset();
      layouts.destination.reset();
      state.releasedExpansions = {};
      state.ops = std::vector<Op>();
      state.dataflow = Dataflow();
    };
    // Dumps go to stderr, the plan to the output, the summary to stderr.
    emitted = pm.run(state, instrumentation, err) &&
              emitPlan(options, state, layouts, diags, text, err, timeReport);
  } else {
    emitted = pm.run(state, instrumentation, text);
    if (emitted && stage == PipelineStage::Ops)
      printOps(state, text);
    else if (emitted)
      printStatements(state, text);
  }
  return emitted;
}

/// Emits the requested stage into `text`; false if a stage failed.
bool runStages(CompileOptions options, SourceManager &sources,
               DiagnosticEngine &diags, std::ostream &text, std::ostream &err,
               TimeReport *timeReport, CompileWorkspacePtr &workspace) {
  if (options.emit == EmitKind::Default)
    options.emit = options.sourceMetadataPath.empty() ? EmitKind::Ast
                                                      : EmitKind::Plan;
  std::optional<ConfigFile> config =
      options.configPath.empty()
          ? loadConfigText("(no statements).aoa", "", sources, diags)
          : loadConfigFile(options.configPath, sources, diags);
  if (!config)
    return false;
  if (options.reverse)
    config->reverse = true;
  if (options.emit == EmitKind::Tokens)
    return printTokens(text, *config, sources, diags);

  // With metadata, a config without statements is a pure re-layout.
  bool relayoutOnly = !options.sourceMetadataPath.empty() &&
                      options.emit != EmitKind::Ast;
  std::optional<Program> program =
      parseConfig(*config, sources, diags, relayoutOnly);
  if (!program)
    return false;
  if (options.emit == EmitKind::Ast) {
    printProgram(text, *program, sources);
    return true;
  }
  if (!checkMetadataFlags(options, diags))
    return false;
  return runPasses(options, std::move(*program), relayoutOnly, *config, sources,
                   diags, text, err, timeReport, workspace);
}

} // namespace

int runCompile(const CompileOptions &options, std::ostream &out,
               std::ostream &err, CompileWorkspacePtr *keep) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, options.color);
  diags.setHandler(printer.handler());

  // Output goes to a temporary that only a successful run commits, so a
  // failed run never leaves a partial output behind.
  std::string openError;
  std::optional<OutputFile> output =
      OutputFile::open(options.outputPath, out, openError);
  if (!output) {
    diags.error(SourceLocation{}, openError);
    err << "1 error generated.\n";
    return 1;
  }
  std::optional<TimeReport> timeReport;
  if (options.timePasses)
    timeReport.emplace();
  TimeReport *report = timeReport ? &*timeReport : nullptr;
  CompileWorkspacePtr workspace;
  bool ok = runStages(options, sources, diags, output->stream(), err, report,
                      workspace) &&
            !diags.hadErrors();
  if (ok) {
    ScopedTimeStep timer(report, "[commit-output]");
    if (std::optional<std::string> failure = output->commit()) {
      diags.error(SourceLocation{}, *failure);
      ok = false;
    }
  }
  if (keep) {
    *keep = std::move(workspace);
  } else {
    ScopedTimeStep timer(report, "[release-state]");
    workspace.reset();
  }
  if (timeReport)
    timeReport->print(err);
  if (!ok) {
    err << diags.errorCount() << (diags.errorCount() == 1 ? " error" : " errors")
        << " generated.\n";
    return 1;
  }
  return 0;
}

} // namespace aoa
