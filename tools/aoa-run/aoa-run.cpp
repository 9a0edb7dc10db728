//===- aoa-run.cpp - Execute a transfer plan ------------------------------===//
//
// Parses flags and calls the run driver (driver/RunDriver.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/RunDriver.h"
#include "aoa/ir/ByteSize.h"

#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/Support/CommandLine.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("aoa-run options");

static cl::opt<std::string> planPath(cl::Positional, cl::Required,
                                     cl::value_desc("PLAN"),
                                     cl::desc("<PLAN: written by aoa-compile>"),
                                     cl::cat(category));
static cl::opt<std::string>
    sourceDirectory("src-dir", cl::Required,
                    cl::desc("The source checkpoint's directory (only read)"),
                    cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string> destinationDirectory(
    "dst-dir", cl::Required,
    cl::desc("Where the converted checkpoint and its metadata.json go"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> nodeLocal(
    "node-local",
    cl::desc("mpi, nccl: every rank has its own --src-dir and --dst-dir, "
             "which no other rank sees ({rank} in them becomes the rank); "
             "a rank reads only its own source files, writes only its own "
             "destination files, and rank 0's --dst-dir also gets "
             "metadata.json (and the index and copied files); refused for "
             "a plan compiled with aoa-compile --shared-src"),
    cl::cat(category));
static cl::opt<std::string>
    backend("backend",
            cl::desc("Executor: local (all ranks in one process), mpi "
                     "(one process per rank: mpirun -np RANKS aoa-run ...) "
                     "or nccl (one process per GPU, under mpirun or with "
                     "RANK, WORLD_SIZE and --rendezvous)"),
            cl::value_desc("name"), cl::init("local"), cl::cat(category));
static cl::opt<std::string> rendezvous(
    "rendezvous",
    cl::desc("nccl backend without mpirun: a directory every rank sees, "
             "where rank 0 leaves the NCCL ids for the others"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
static cl::opt<bool> emulateDevice(
    "emulate-device",
    cl::desc("For testing the nccl backend without a GPU: device memory is "
             "host memory, kernels run on the CPU, messages go over MPI"),
    cl::Hidden, cl::cat(category));
static cl::opt<unsigned>
    threads("threads",
            cl::desc("Worker threads for reads, copies and writes (0 = one "
                     "per core; with mpi, per process: the cores shared by "
                     "the processes on a host)"),
            cl::init(0), cl::cat(category));
static cl::opt<bool> verify(
    "verify",
    cl::desc("Re-read every written file from disk and check its hashes"),
    cl::cat(category));
static cl::opt<bool> overwrite(
    "overwrite",
    cl::desc("Replace destination files and metadata.json that exist "
             "(the old metadata.json goes before the first file is replaced)"),
    cl::cat(category));
static cl::opt<bool>
    restart("restart",
            cl::desc("Discard what an interrupted run of this plan finished "
                     "and start over (by default the run resumes)"),
            cl::cat(category));
static cl::opt<std::string> memoryLimit(
    "memory-limit",
    cl::desc("Most buffer memory to hold at once, e.g. 8G (default: 90% of "
             "physical memory)"),
    cl::value_desc("size"), cl::init(""), cl::cat(category));
static cl::opt<unsigned> stopAfterFiles(
    "stop-after-files",
    cl::desc("For testing resumption: fail as if interrupted once this many "
             "files are finished (with mpi: by each rank)"),
    cl::init(0), cl::Hidden, cl::cat(category));
static cl::opt<bool> noDirectCopy(
    "no-direct-copy",
    cl::desc("For comparing the paths: move every byte through a buffer, "
             "never file to file (local and mpi backends)"),
    cl::Hidden, cl::cat(category));
static cl::opt<aoa::ProgressStyle> progress(
    "progress", cl::desc("How to show progress on stderr"),
    cl::values(clEnumValN(aoa::ProgressStyle::Auto, "auto",
                          "a bar on a terminal, plain lines otherwise"),
               clEnumValN(aoa::ProgressStyle::Bar, "bar", "a redrawn bar"),
               clEnumValN(aoa::ProgressStyle::Lines, "lines",
                          "a line every 10% (and every 30 s)"),
               clEnumValN(aoa::ProgressStyle::None, "none", "nothing")),
    cl::init(aoa::ProgressStyle::Auto), cl::cat(category));

int main(int argc, char **argv) {
  // A file-size limit (ulimit -f) must be an error message, not a signal.
  std::signal(SIGXFSZ, SIG_IGN);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) { os << "aoa-run 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-run: execute a transfer plan\n\n"
      "  Reads the plan (aoa-compile's output), checks it, opens and checks\n"
      "  every source file it reads under --src-dir, and writes the\n"
      "  destination files under --dst-dir with a metadata.json that holds\n"
      "  the layout and an xxh3 hash of every stored tensor. Files are built\n"
      "  in DST/.aoa-run and moved into place only when all are complete, so\n"
      "  the destination never holds a partial checkpoint; an interrupted\n"
      "  run of the same plan resumes from the files it finished. DST may\n"
      "  neither lie inside --src-dir nor contain it; aoa-run never follows a\n"
      "  symbolic link inside DST, and one run at a time writes into it (a\n"
      "  second one refuses while DST/.aoa-run/lock is held). With mpi or\n"
      "  nccl, DST is one directory every rank sees (one host or a shared\n"
      "  file system), and so is SRC for a plan compiled with aoa-compile\n"
      "  --shared-src (each rank then reads what it writes itself); with\n"
      "  --node-local each rank has its own directories (e.g. --src-dir\n"
      "  'in/rank{rank}' --dst-dir 'out/rank{rank}') and nothing needs to\n"
      "  be shared. The exit code is 0 on success and 1 on any error.\n");

  aoa::RunCommand command;
  command.planPath = planPath;
  command.backend = backend;
  command.rendezvousDirectory = rendezvous;
  command.emulateDevice = emulateDevice;
  command.progress = progress;
  command.color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  command.options.sourceDirectory = sourceDirectory;
  command.options.destinationDirectory = destinationDirectory;
  command.options.nodeLocal = nodeLocal;
  if (threads > aoa::runtime::ThreadPool::kMaxThreads) {
    std::cerr << "aoa-run: error: --threads=" << threads
              << " is more than " << aoa::runtime::ThreadPool::kMaxThreads
              << "\nhint: reads, copies and writes gain nothing past the "
                 "cores and disks; 0 means one thread per core\n";
    return 1;
  }
  command.options.threads = threads;
  command.options.verify = verify;
  command.options.overwrite = overwrite;
  command.options.restart = restart;
  command.options.stopAfterFiles = stopAfterFiles;
  command.options.directCopy = !noDirectCopy;
  if (!memoryLimit.empty()) {
    std::optional<int64_t> limit = aoa::parseByteSize(memoryLimit);
    if (!limit) {
      std::cerr << "aoa-run: error: --memory-limit=" << memoryLimit
                << " is not a size\nhint: write digits with an optional K, "
                   "M, G or T suffix, e.g. 16G\n";
      return 1;
    }
    command.options.memoryLimit = uint64_t(*limit);
  }
  return aoa::runPlanCommand(command, std::cerr);
}
