//===- load_metadata.cpp - Time loading shard metadata --------------------===//
//
// aoa-bench-load-metadata [--mode=M] [--repeat=N] FILE...
//
// Loads each file N times and prints the wall time of each load and the
// process's peak resident memory. The modes give the baselines the loader is
// measured against, each in its own process so peak memory is its own:
//   load           the real loader: simdjson On-Demand into a ShardMetadata
//   read           only read() the file into a padded buffer
//   map            only mmap the file (MAP_POPULATE), as the loader does
//   simdjson-walk  map, then walk every value with simdjson On-Demand
//                  (numbers parsed, strings seen in place), building nothing
//   simdjson-chunks
//                  the same walk over the tensors' entries in chunks of about
//                  --chunk-mib MiB, each wrapped in braces and parsed by one
//                  reused parser: what a loader that parses in bounded
//                  chunks would pay (the structural index of the whole
//                  document is most of simdjson-walk's memory). Cut where a
//                  line starts the next entry (`},` newline `"`), as aoa's
//                  writer lays entries out; same scalars and checksum as
//                  simdjson-walk when the cuts are right.
//   nlohmann-sax   map, then parse with nlohmann's SAX interface, building
//                  nothing (the other streaming parser the metadata budget allows)
// With --keep, loaded models stay alive, so loading a source and a
// destination file in one run shows the peak memory a compiler would have.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataLoader.h"

#include "llvm/Support/CommandLine.h"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <iostream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
namespace ondemand = simdjson::ondemand;

namespace {

enum class Mode { Load, Read, Map, SimdjsonWalk, SimdjsonChunks, NlohmannSax };

cl::OptionCategory category("aoa-bench-load-metadata options");
cl::list<std::string> files(cl::Positional, cl::OneOrMore,
                            cl::desc("<metadata files>"), cl::cat(category));
cl::opt<Mode> mode(
    "mode", cl::desc("What to measure"), cl::init(Mode::Load),
    cl::values(clEnumValN(Mode::Load, "load", "the metadata loader"),
               clEnumValN(Mode::Read, "read", "read() the file only"),
               clEnumValN(Mode::Map, "map", "mmap the file only"),
               clEnumValN(Mode::SimdjsonWalk, "simdjson-walk",
                          "simdjson On-Demand over every value, no model"),
               clEnumValN(Mode::SimdjsonChunks, "simdjson-chunks",
                          "the same walk, the tensors in chunks with one "
                          "reused parser"),
               clEnumValN(Mode::NlohmannSax, "nlohmann-sax",
                          "nlohmann SAX parse, no model")),
    cl::cat(category));
cl::opt<unsigned> chunkMiB("chunk-mib", cl::init(2),
                           cl::desc("Chunk size of --mode=simdjson-chunks"),
                           cl::cat(category));
cl::opt<unsigned> repeat("repeat", cl::init(1),
                         cl::desc("Loads per file (the minimum is reported)"),
                         cl::cat(category));
cl::opt<bool> keep("keep",
                   cl::desc("Keep every loaded model until the end (as a "
                            "compiler holds source and destination)"),
                   cl::cat(category));

/// Models kept alive by --keep.
std::vector<aoa::ShardMetadata> &keptModels() {
  static std::vector<aoa::ShardMetadata> models;
  return models;
}

/// Counts what it sees so the walk cannot be optimised away.
struct WalkCounts {
  uint64_t scalars = 0;
  int64_t checksum = 0;
};

bool walk(ondemand::value value, WalkCounts &counts) {
  ondemand::json_type type;
  if (value.type().get(type))
    return false;
  switch (type) {
  case ondemand::json_type::object: {
    ondemand::object object;
    if (value.get_object().get(object))
      return false;
    for (auto field : object) {
      ondemand::field f;
      if (std::move(field).get(f) || !walk(f.value(), counts))
        return false;
    }
    return true;
  }
  case ondemand::json_type::array: {
    ondemand::array array;
    if (value.get_array().get(array))
      return false;
    for (auto element : array) {
      ondemand::value v;
      if (std::move(element).get(v) || !walk(v, counts))
        return false;
    }
    return true;
  }
  case ondemand::json_type::number: {
    int64_t number;
    if (value.get_int64().get(number)) {
      double d;
      if (value.get_double().get(d))
        return false;
      number = static_cast<int64_t>(d);
    }
    counts.checksum += number;
    ++counts.scalars;
    return true;
  }
  case ondemand::json_type::string: {
    ondemand::raw_json_string s;
    if (value.get_raw_json_string().get(s))
      return false;
    counts.checksum += s.raw()[0];
    ++counts.scalars;
    return true;
  }
  default:
    ++counts.scalars;
    return true;
  }
}

/// --mode=simdjson-chunks (see the file comment); false when the text is not
/// laid out as aoa's writer does or a chunk does not parse.
bool walkInChunks(std::string_view text, WalkCounts &counts) {
  constexpr std::string_view kTensors = "\"tensors\": {";
  size_t open = text.find(kTensors);
  size_t rootClose = text.find_last_of('}');
  if (open == std::string_view::npos || rootClose == std::string_view::npos ||
      rootClose == 0)
    return false;
  size_t begin = open + kTensors.size();
  size_t end = text.find_last_of('}', rootClose - 1); // the tensors' own
  if (end == std::string_view::npos || end < begin)
    return false;
  ondemand::parser parser;
  std::string buffer;
  auto walkText = [&](std::string_view head, std::string_view body,
                      std::string_view tail) {
    buffer.assign(head).append(body).append(tail);
    size_t length = buffer.size();
    buffer.append(simdjson::SIMDJSON_PADDING, ' ');
    ondemand::document document;
    ondemand::value root;
    return !parser
                .iterate(simdjson::padded_string_view(buffer.data(), length,
                                                      buffer.size()))
                .get(document) &&
           !document.get_value().get(root) && walk(root, counts);
  };
  // The fields around the tensors, as one document of their own.
  if (!walkText(text.substr(0, begin), "", text.substr(end)))
    return false;
  size_t chunkBytes = std::max<size_t>(1, chunkMiB) << 20;
  for (size_t at = begin; at < end;) {
    size_t cut = at + chunkBytes < end ? text.find("},\n\"", at + chunkBytes)
                                       : std::string_view::npos;
    size_t stop = cut == std::string_view::npos || cut >= end ? end : cut + 1;
    if (!walkText("{", text.substr(at, stop - at), "}"))
      return false;
    at = stop == end ? end : stop + 1; // past the comma
  }
  return true;
}

struct NullSax : nlohmann::json_sax<nlohmann::json> {
  uint64_t scalars = 0;
  bool null() override { return ++scalars; }
  bool boolean(bool) override { return ++scalars; }
  bool number_integer(number_integer_t) override { return ++scalars; }
  bool number_unsigned(number_unsigned_t) override { return ++scalars; }
  bool number_float(number_float_t, const string_t &) override {
    return ++scalars;
  }
  bool string(string_t &) override { return ++scalars; }
  bool binary(binary_t &) override { return ++scalars; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    std::cerr << ex.what() << "\n";
    return false;
  }
};

class MappedFile {
public:
  explicit MappedFile(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
      return;
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
        page - size_t(st.st_size) % page >= simdjson::SIMDJSON_PADDING) {
      void *p = ::mmap(nullptr, size_t(st.st_size), PROT_READ,
                       MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = p;
        size_ = size_t(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_)
      ::munmap(data_, size_);
  }
  bool ok() const { return data_ != nullptr; }
  std::string_view text() const {
    return std::string_view(static_cast<const char *>(data_), size_);
  }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

/// One measured run; returns a summary line, or empty on failure.
std::string runOnce(const std::string &path) {
  if (mode == Mode::Load) {
    aoa::SourceManager sources;
    aoa::DiagnosticEngine diags(sources);
    aoa::TextDiagnosticPrinter printer(std::cerr, sources);
    diags.setHandler(printer.handler());
    std::optional<aoa::ShardMetadata> metadata =
        aoa::loadShardMetadata(path, sources, diags);
    if (!metadata)
      return {};
    std::string summary =
        std::to_string(metadata->tensorCount()) + " tensors, " +
        std::to_string(metadata->shardCount()) + " shards, " +
        std::to_string(metadata->files().size()) + " files, model " +
        std::to_string(metadata->memoryBytes() >> 20) + " MiB";
    if (keep)
      keptModels().push_back(std::move(*metadata));
    return summary;
  }
  if (mode == Mode::Read) {
    simdjson::padded_string text;
    if (simdjson::padded_string::load(path).get(text)) {
      std::cerr << "cannot read " << path << "\n";
      return {};
    }
    return std::to_string(text.size()) + " bytes read";
  }
  // The baselines read the file as the loader does: mapped, with the
  // kernel's zero fill past the end as simdjson's padding.
  MappedFile file(path);
  if (!file.ok()) {
    std::cerr << "cannot map " << path
              << " (or its last page has no room for the padding)\n";
    return {};
  }
  std::string_view text = file.text();
  if (mode == Mode::Map)
    return std::to_string(text.size()) + " bytes mapped";
  if (mode == Mode::SimdjsonWalk) {
    ondemand::parser parser;
    ondemand::document document;
    ondemand::value root;
    WalkCounts counts;
    if (parser
            .iterate(simdjson::padded_string_view(
                text.data(), text.size(),
                text.size() + simdjson::SIMDJSON_PADDING))
            .get(document) ||
        document.get_value().get(root) ||
        !walk(root, counts)) {
      std::cerr << "simdjson could not walk " << path << "\n";
      return {};
    }
    return std::to_string(counts.scalars) + " scalars walked (checksum " +
           std::to_string(counts.checksum) + ")";
  }
  if (mode == Mode::SimdjsonChunks) {
    WalkCounts counts;
    if (!walkInChunks(text, counts)) {
      std::cerr << "cannot walk " << path << " in chunks\n";
      return {};
    }
    return std::to_string(counts.scalars) + " scalars walked (checksum " +
           std::to_string(counts.checksum) + ")";
  }
  NullSax sax;
  if (!nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax))
    return {};
  return std::to_string(sax.scalars) + " scalars parsed";
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Times loading shard metadata\n");
  for (const std::string &path : files) {
    double best = 1e300;
    std::string summary;
    for (unsigned i = 0; i < std::max(1u, unsigned(repeat)); ++i) {
      auto start = std::chrono::steady_clock::now();
      summary = runOnce(path);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (summary.empty())
        return 1;
      best = std::min(best, seconds);
    }
    std::printf("%s: %s: %.3f s (best of %u)\n", path.c_str(), summary.c_str(),
                best, std::max(1u, unsigned(repeat)));
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak RSS: %.1f MiB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
