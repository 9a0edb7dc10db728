//===- PlanSummary.cpp - The cost table aoa-compile prints ----------------===//
#include "aoa/formats/plan/PlanSummary.h"

#include "aoa/ir/ByteSize.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace aoa {

namespace {

/// `1.50 MiB (1572864 B)`; just `512 B` below a KiB.
std::string sizeCell(int64_t bytes) {
  std::string human = formatByteSize(bytes);
  if (bytes < 1024 && bytes > -1024)
    return human;
  return human + " (" + std::to_string(bytes) + " B)";
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// A table whose columns are as wide as their widest cell; the first column
/// is left-aligned, the others right-aligned.
class Table {
public:
  void row(std::vector<std::string> cells) {
    rows_.push_back(std::move(cells));
  }

  void print(std::ostream &os) const {
    std::vector<size_t> widths;
    for (const auto &cells : rows_) {
      widths.resize(std::max(widths.size(), cells.size()), 0);
      for (size_t c = 0; c < cells.size(); ++c)
        widths[c] = std::max(widths[c], cells[c].size());
    }
    for (const auto &cells : rows_) {
      std::string line;
      for (size_t c = 0; c < cells.size(); ++c) {
        std::string pad(widths[c] - cells[c].size(), ' ');
        if (c == 0)
          line += cells[c] + pad;
        else
          line += "  " + pad + cells[c];
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      os << line << '\n';
    }
  }

private:
  std::vector<std::vector<std::string>> rows_;
};

plan::RankCost totalCost(llvm::ArrayRef<plan::RankCost> costs) {
  plan::RankCost total;
  for (const plan::RankCost &c : costs) {
    total.bytesRead += c.bytesRead;
    total.bytesSent += c.bytesSent;
    total.bytesReceived += c.bytesReceived;
    total.bytesWritten += c.bytesWritten;
    total.instructions += c.instructions;
    total.peakBufferBytes = std::max(total.peakBufferBytes, c.peakBufferBytes);
  }
  return total;
}

void printHeadline(const plan::Plan &plan, const plan::RankCost &total,
                   std::ostream &os) {
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan.programs)
    rounds = std::max(rounds, program.rounds.size());
  os << "plan: " << plural(plan.ranks, "rank") << ", "
     << plural(rounds, "round") << ", "
     << plural(static_cast<size_t>(total.instructions), "instruction") << "\n";
  os << "files: " << plural(plan.sourceFiles.size(), "source file") << " ("
     << plural(plan.sourceTensors.size(), "tensor") << "), "
     << plural(plan.destinationFiles.size(), "destination file") << " ("
     << plural(plan.destinationTensors.size(), "tensor") << ")";
  if (!plan.addedKeys.empty())
    os << ", " << plural(plan.addedKeys.size(), "added key");
  os << "\n";
  // Only a plan compiled with --shared-src says so: the run's requirement.
  if (plan.sourceAccess == plan::SourceAccess::Shared)
    os << "source access: shared (each rank reads what it writes from any "
          "source file; every rank must see every source file, so not "
          "aoa-run --node-local)\n";
  os << "memory budget: "
     << (plan.memoryBudget > 0
             ? sizeCell(plan.memoryBudget) + " of buffers per rank"
             : std::string("none"))
     << "\n\n";
}

/// "idle (no instructions): 3 ranks (1-2, 5)", or nothing. Ranks without
/// instructions get no row: rank ids may be sparse (ranks 0 and 2^24-1
/// alone), and a row per idle rank would be millions of lines.
void printIdleRanks(llvm::ArrayRef<plan::RankCost> costs, std::ostream &os) {
  std::string idle;
  size_t idleCount = 0;
  size_t idleFrom = 0;
  bool inIdleRun = false;
  for (size_t r = 0; r <= costs.size(); ++r) {
    bool isIdle = r < costs.size() && costs[r].instructions == 0;
    if (isIdle && !inIdleRun)
      idleFrom = r;
    if (!isIdle && inIdleRun)
      idle += (idle.empty() ? "" : ", ") + std::to_string(idleFrom) +
              (r - 1 > idleFrom ? "-" + std::to_string(r - 1) : "");
    inIdleRun = isIdle;
    idleCount += isIdle;
  }
  if (idleCount)
    os << "idle (no instructions): " << plural(idleCount, "rank") << " ("
       << idle << ")\n";
}

/// The table of busy ranks and the total; returns the ranks whose peak
/// buffers exceed the budget.
std::vector<size_t> printRankTable(const plan::Plan &plan,
                                   llvm::ArrayRef<plan::RankCost> costs,
                                   const plan::RankCost &total,
                                   std::ostream &os) {
  Table table;
  table.row({"rank", "instructions", "read", "sent", "received", "written",
             "peak buffers"});
  std::vector<size_t> overBudget;
  for (size_t r = 0; r < costs.size(); ++r) {
    const plan::RankCost &c = costs[r];
    if (c.instructions == 0)
      continue;
    bool over = plan.memoryBudget > 0 && c.peakBufferBytes > plan.memoryBudget;
    if (over)
      overBudget.push_back(r);
    table.row({std::to_string(r), std::to_string(c.instructions),
               sizeCell(c.bytesRead), sizeCell(c.bytesSent),
               sizeCell(c.bytesReceived), sizeCell(c.bytesWritten),
               sizeCell(c.peakBufferBytes) + (over ? " !" : "")});
  }
  table.row({"total", std::to_string(total.instructions),
             sizeCell(total.bytesRead), sizeCell(total.bytesSent),
             sizeCell(total.bytesReceived), sizeCell(total.bytesWritten),
             "max " + sizeCell(total.peakBufferBytes)});
  table.print(os);
  return overBudget;
}

void printOverBudget(const plan::Plan &plan, llvm::ArrayRef<size_t> ranks,
                     std::ostream &os) {
  if (ranks.empty())
    return;
  os << "\n! the peak buffer memory of "
     << (ranks.size() == 1 ? "rank " : "ranks ");
  for (size_t i = 0; i < ranks.size(); ++i)
    os << (i ? ", " : "") << ranks[i];
  os << " exceeds the memory budget of " << sizeCell(plan.memoryBudget)
     << ": a transfer that cannot be split is larger than the budget\n";
}

void printNetwork(int64_t bytesSent, int64_t broadcastBytes,
                  std::ostream &os) {
  os << "\nnetwork: this plan sends " << sizeCell(bytesSent)
     << " between ranks; a broadcast-everything approach would move "
     << broadcastBytes << " bytes (" << formatByteSize(broadcastBytes) << ")";
  if (bytesSent > 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "%.1fx",
                  static_cast<double>(broadcastBytes) /
                      static_cast<double>(bytesSent));
    os << ", " << ratio << " as much";
  }
  os << "\n";
}

} // namespace

void printPlanSummary(const plan::Plan &plan, std::ostream &os,
                      int64_t broadcastBytes) {
  std::vector<plan::RankCost> costs = plan.costs();
  plan::RankCost total = totalCost(costs);
  printHeadline(plan, total, os);
  std::vector<size_t> overBudget = printRankTable(plan, costs, total, os);
  printIdleRanks(costs, os);
  printOverBudget(plan, overBudget, os);
  if (broadcastBytes >= 0)
    printNetwork(total.bytesSent, broadcastBytes, os);
}

} // namespace aoa
