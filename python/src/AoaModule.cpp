//===- AoaModule.cpp - The C++ core of the Python module aoa --------------===//
//
// The extension `aoa._aoa` (docs/python.md): thin bindings over the same
// library calls the tools make, so that Python gets the tools' behaviour and
// their messages: compiling is aoa-compile's driver (runCompile), running is
// aoa-run's (runPlanCommand, local backend), loading one rank into memory is
// the local backend's loadRankLocally, scanning is aoa-scan's
// openCheckpointDirectory. The pure-Python package aoa/__init__.py gives
// them typed signatures, accepts dicts and lists, and builds numpy arrays.
//
// Every failure raises aoa.Error (an Exception) with the text the tool
// would print. Long calls release the GIL and run on a worker thread while
// the calling thread polls for signals every 100 ms: Ctrl-C asks the run to
// stop between rounds (RunOptions::interrupted) and raises KeyboardInterrupt
// once the worker has stopped, so nothing is left running.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/CompileDriver.h"
#include "aoa/driver/PlanFile.h"
#include "aoa/driver/RunDriver.h"
#include "aoa/driver/SourceLayoutCheck.h"
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/formats/plan/PlanSummary.h"
#include "aoa/formats/plan/PlanWriter.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/runtime/backends/LocalBackend.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/support/ContentHash.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace aoa::python {
namespace {

/// Raised as aoa.Error; its text is what the tool would print.
class AoaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

std::string errorText(const runtime::Error &error) {
  std::string text = error.message;
  if (!error.hint.empty())
    text += "\nhint: " + error.hint;
  return text;
}

/// Runs `work` on a worker thread with the GIL released, checking for
/// signals every 100 ms. When a signal handler raises (Ctrl-C), `interrupted`
/// is set, the worker is waited for, and the Python exception is raised.
template <typename T>
T runReleasingTheGil(std::function<T()> work, std::atomic<bool> &interrupted) {
  std::packaged_task<T()> task(std::move(work));
  std::future<T> result = task.get_future();
  bool signalled = false;
  {
    py::gil_scoped_release release;
    std::thread worker(std::move(task));
    while (result.wait_for(std::chrono::milliseconds(100)) !=
           std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (!signalled && PyErr_CheckSignals() != 0) {
        signalled = true;
        interrupted = true;
      }
    }
    worker.join();
  }
  if (signalled)
    throw py::error_already_set();
  return result.get();
}

/// A plan read and verified, with its bytes (binary or text, as compiled or
/// loaded) and the layout hashes a binary plan records.
struct PlanHandle {
  std::string name;
  std::string bytes;
  plan::Plan plan;
  binplan::PlanOrigin origin;
};

/// Diagnostics printed into a string, for an exception's text: the tools'
/// located messages, without colour.
struct CollectedDiagnostics {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::ostringstream messages;
  TextDiagnosticPrinter printer{messages, sources, false};
  CollectedDiagnostics() { diags.setHandler(printer.handler()); }
};

std::shared_ptr<PlanHandle> planFromBytes(const std::string &name,
                                          std::string bytes) {
  CollectedDiagnostics diagnostics;
  auto handle = std::make_shared<PlanHandle>();
  handle->name = name;
  handle->bytes = std::move(bytes);
  std::optional<plan::Plan> plan =
      readPlanBytes(name, handle->bytes, diagnostics.sources, diagnostics.diags,
                    &handle->origin);
  if (!plan)
    throw AoaError(diagnostics.messages.str());
  handle->plan = std::move(*plan);
  return handle;
}

std::shared_ptr<PlanHandle> loadPlan(const std::string &path) {
  CollectedDiagnostics diagnostics;
  auto handle = std::make_shared<PlanHandle>();
  handle->name = path;
  std::optional<plan::Plan> plan =
      readPlanFileAnyForm(path, handle->bytes, diagnostics.sources,
                          diagnostics.diags, &handle->origin);
  if (!plan) {
    std::string text = diagnostics.messages.str();
    throw AoaError(text.empty() ? "cannot read the plan '" + path + "'" : text);
  }
  handle->plan = std::move(*plan);
  return handle;
}

/// aoa-compile's options, as aoa/__init__.py passes them (paths only).
struct CompileRequest {
  std::string config;
  std::string source;
  std::string destination;
  std::string layout;
  bool toHuggingFace = false;
  uint64_t maxShardSize = 5000000000ULL;
  bool reverse = false;
  int64_t memoryBudget = int64_t(1) << 30;
  std::string emit = "plan"; ///< plan, mappings, plan-text
  std::string queries;
  bool sharedSource = false;
};

/// Runs aoa-compile's pipeline; returns what it emits and the summary it
/// prints, or raises aoa.Error with its diagnostics.
std::pair<std::string, std::string>
compileToText(const CompileRequest &request) {
  CompileOptions options;
  options.configPath = request.config;
  options.sourceMetadataPath = request.source;
  options.destinationMetadataPath = request.destination;
  options.layoutSpecPath = request.layout;
  options.toHuggingFace = request.toHuggingFace;
  options.maxShardSize = request.maxShardSize;
  options.reverse = request.reverse;
  options.memoryBudget = request.memoryBudget;
  options.queriesPath = request.queries;
  options.sharedSource = request.sharedSource;
  if (request.emit == "plan")
    options.emit = EmitKind::Plan;
  else if (request.emit == "plan-text")
    options.emit = EmitKind::PlanText;
  else if (request.emit == "mappings")
    options.emit = EmitKind::Mappings;
  else
    throw AoaError("unknown emission '" + request.emit + "'");
  std::ostringstream out, err;
  std::atomic<bool> interrupted{false};
  int status = runReleasingTheGil<int>(
      [&] { return runCompile(options, out, err); }, interrupted);
  if (status != 0)
    throw AoaError(err.str());
  return {out.str(), err.str()};
}

std::pair<std::shared_ptr<PlanHandle>, std::string>
compilePlan(const CompileRequest &request, const std::string &name) {
  auto [bytes, summary] = compileToText(request);
  return {planFromBytes(name, std::move(bytes)), summary};
}

std::string runPlan(const PlanHandle &handle, const std::string &source,
                    const std::string &destination, unsigned threads,
                    bool verify, bool overwrite, bool progress) {
  RunCommand command;
  command.planPath = handle.name;
  command.planText = handle.bytes;
  command.backend = "local";
  command.progress = progress ? ProgressStyle::Lines : ProgressStyle::None;
  command.options.sourceDirectory = source;
  command.options.destinationDirectory = destination;
  command.options.threads = threads;
  command.options.verify = verify;
  command.options.overwrite = overwrite;
  std::atomic<bool> interrupted{false};
  command.options.interrupted = [&interrupted] { return interrupted.load(); };
  std::ostringstream err;
  int status = runReleasingTheGil<int>(
      [&] { return runPlanCommand(command, err); }, interrupted);
  if (status != 0)
    throw AoaError(err.str());
  return err.str();
}

/// One tensor of a rank's destination files, for aoa.load to allocate.
struct RankTensor {
  std::string file;
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

std::vector<RankTensor> rankTensors(const PlanHandle &handle, uint32_t rank) {
  const plan::Plan &plan = handle.plan;
  if (rank >= plan.ranks)
    throw AoaError("rank " + std::to_string(rank) +
                   " is not a rank of the plan\nhint: the plan has " +
                   std::to_string(plan.ranks) +
                   (plan.ranks == 1 ? " rank" : " ranks"));
  std::vector<RankTensor> tensors;
  for (uint32_t t = 0; t < plan.destinationTensors.size(); ++t) {
    const plan::StoredTensor &tensor = plan.destinationTensors[t];
    const plan::File &file = plan.destinationFiles[tensor.file];
    if (file.rank != rank)
      continue;
    tensors.push_back(
        {file.path, tensor.name, std::string(dtypeName(tensor.dtype)),
         tensor.storedShape(), runtime::destinationTensorBytes(plan, t)});
  }
  return tensors;
}

/// Releases a buffer view PyObject_GetBuffer filled.
struct ReleaseBuffer {
  void operator()(Py_buffer *view) const {
    PyBuffer_Release(view);
    delete view;
  }
};

/// Fills the caller's buffers (name -> writable, C-contiguous buffer) with
/// `rank`'s destination tensors.
py::dict loadInto(const PlanHandle &handle, uint32_t rank,
                  const std::string &source, const py::dict &buffers,
                  unsigned threads) {
  std::vector<runtime::CallerTensor> tensors;
  // Views of the buffers, held until the load is done (released with the
  // GIL held: the load has returned by then).
  std::vector<std::unique_ptr<Py_buffer, ReleaseBuffer>> views;
  for (auto [key, value] : buffers) {
    std::string name = py::str(key);
    auto view = std::make_unique<Py_buffer>();
    if (PyObject_GetBuffer(value.ptr(), view.get(),
                           PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw AoaError("tensor '" + name +
                     "': the buffer given for it is not "
                     "a writable, C-contiguous buffer (" +
                     std::string(py::str(py::type::of(value))) +
                     ")\nhint: pass a C-contiguous numpy array, a bytearray "
                     "or another writable buffer");
    }
    views.emplace_back(view.release());
    tensors.push_back(
        {"", name, views.back()->buf, uint64_t(views.back()->len)});
  }
  runtime::Status layout =
      checkSourceLayout(handle.name, handle.origin, source);
  if (!layout.ok())
    throw AoaError(errorText(layout.error()));
  runtime::RunOptions options;
  options.sourceDirectory = source;
  options.threads = threads;
  std::atomic<bool> interrupted{false};
  options.interrupted = [&interrupted] { return interrupted.load(); };
  runtime::Expected<runtime::RunReport> report =
      runReleasingTheGil<runtime::Expected<runtime::RunReport>>(
          [&] {
            return runtime::loadRankLocally(handle.plan, options, rank,
                                            tensors);
          },
          interrupted);
  if (!report.ok())
    throw AoaError(errorText(report.error()));
  py::dict result;
  result["bytes_read"] = report->bytesRead;
  result["bytes_exchanged"] = report->bytesExchanged;
  result["bytes_written"] = report->bytesWritten;
  result["seconds"] = report->seconds;
  return result;
}

std::string planSummary(const PlanHandle &handle) {
  std::ostringstream out;
  printPlanSummary(handle.plan, out, -1);
  return out.str();
}

void savePlan(const PlanHandle &handle, const std::string &path) {
  runtime::Status saved = runtime::writeFileAtomically(path, handle.bytes);
  if (!saved.ok())
    throw AoaError(errorText(saved.error()));
}

/// aoa-scan: the directory's shard metadata as aoa-metadata v1 JSON text.
std::string scanDirectory(const std::string &directory) {
  CollectedDiagnostics diagnostics;
  runtime::Expected<formats::CheckpointDirectory> checkpoint =
      formats::openCheckpointDirectory(directory, diagnostics.sources,
                                       diagnostics.diags);
  if (!checkpoint)
    throw AoaError(diagnostics.diags.hadErrors()
                       ? diagnostics.messages.str()
                       : errorText(checkpoint.error()));
  std::ostringstream out;
  writeShardMetadata(checkpoint->metadata, out);
  return out.str();
}

} // namespace
} // namespace aoa::python

PYBIND11_MODULE(_aoa, m) {
  using namespace aoa::python;
  m.doc() = "The C++ core of the aoa module; use the package aoa instead.";
  py::register_exception<AoaError>(m, "Error", PyExc_Exception);

  py::class_<PlanHandle, std::shared_ptr<PlanHandle>>(m, "PlanHandle")
      .def_property_readonly("name", [](const PlanHandle &h) { return h.name; })
      .def_property_readonly("ranks",
                             [](const PlanHandle &h) { return h.plan.ranks; })
      .def("text",
           [](const PlanHandle &h) { return aoa::printPlanText(h.plan); })
      .def("summary", &planSummary)
      .def("save", &savePlan)
      .def("rank_tensors",
           [](const PlanHandle &h, uint32_t rank) {
             py::list tensors;
             for (const RankTensor &t : rankTensors(h, rank))
               tensors.append(
                   py::make_tuple(t.file, t.name, t.dtype, t.shape, t.bytes));
             return tensors;
           })
      .def("destination_files", [](const PlanHandle &h) {
        py::list files;
        for (const aoa::plan::File &f : h.plan.destinationFiles)
          files.append(py::make_tuple(f.path, f.rank));
        return files;
      });

  m.def(
      "compile",
      [](const std::string &config, const std::string &source,
         const std::string &destination, const std::string &layout,
         bool toHuggingFace, uint64_t maxShardSize, bool reverse,
         int64_t memoryBudget, bool sharedSource, const std::string &name) {
        CompileRequest request{
            config,       source,  destination,  layout, toHuggingFace,
            maxShardSize, reverse, memoryBudget, "plan", "", sharedSource};
        return compilePlan(request, name);
      },
      py::arg("config"), py::arg("source"), py::arg("destination"),
      py::arg("layout"), py::arg("to_hf"), py::arg("max_shard_size"),
      py::arg("reverse"), py::arg("memory_budget"), py::arg("shared_src"),
      py::arg("name"));
  m.def(
      "compile_text",
      [](const std::string &config, const std::string &source,
         const std::string &destination, const std::string &layout,
         bool toHuggingFace, uint64_t maxShardSize, bool reverse,
         int64_t memoryBudget, const std::string &emit,
         const std::string &queries) {
        CompileRequest request{
            config,       source,  destination,  layout, toHuggingFace,
            maxShardSize, reverse, memoryBudget, emit,   queries, false};
        return compileToText(request).first;
      },
      py::arg("config"), py::arg("source"), py::arg("destination"),
      py::arg("layout"), py::arg("to_hf"), py::arg("max_shard_size"),
      py::arg("reverse"), py::arg("memory_budget"), py::arg("emit"),
      py::arg("queries"));
  m.def("load_plan", &loadPlan, py::arg("path"));
  m.def("run", &runPlan, py::arg("plan"), py::arg("src_dir"),
        py::arg("dst_dir"), py::arg("threads"), py::arg("verify"),
        py::arg("overwrite"), py::arg("progress"));
  m.def("load_into", &loadInto, py::arg("plan"), py::arg("rank"),
        py::arg("src_dir"), py::arg("buffers"), py::arg("threads"));
  m.def("scan", &scanDirectory, py::arg("directory"));
}
