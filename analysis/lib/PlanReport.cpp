//===- PlanReport.cpp - A plan as one HTML page ---------------------------===//
//
// The page is written in one pass: a header with the totals, the estimate
// (when there is one), the traffic matrix, then the per-rank and per-round
// charts, each followed by its numbers in a table. Charts are inline SVG
// with a <title> per mark, so hovering a cell or bar shows its numbers
// without any script.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanReport.h"

#include "Units.h"
#include "aoa/analysis/EstimateText.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>

namespace aoa {
namespace analysis {

namespace {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

constexpr const char *kStyle = R"(<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a1a1a;
       max-width: 1240px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; border-bottom: 1px solid #ccc; }
p.note { color: #555; margin: 2px 0 8px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
.headline td { font-size: 15px; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px;
            margin-right: 4px; vertical-align: -1px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
details { margin: 6px 0 10px; }
</style>
)";

struct Series {
  const char *name;
  const char *color;
};

struct Bar {
  std::string label;
  std::vector<double> values;
};

void legend(const std::vector<Series> &series, std::ostream &os) {
  os << "<div class=\"legend\">";
  for (const Series &s : series)
    os << "<span><i style=\"background:" << s.color << "\"></i>" << s.name
       << "</span>";
  os << "</div>\n";
}

/// Vertical bars, one slot per bar: side by side or stacked.
void barChart(const std::string &id, const std::vector<Series> &series,
              const std::vector<Bar> &bars, bool stacked,
              const std::function<std::string(double)> &format,
              std::ostream &os) {
  legend(series, os);
  const double left = 70, top = 10, width = 1140, height = 200, bottom = 40;
  double maximum = 0;
  for (const Bar &bar : bars) {
    double sum = 0;
    for (double v : bar.values) {
      maximum = std::max(maximum, v);
      sum += v;
    }
    if (stacked)
      maximum = std::max(maximum, sum);
  }
  os << "<svg id=\"" << id << "\" class=\"chart\" width=\""
     << number(left + width + 10) << "\" height=\""
     << number(top + height + bottom) << "\">\n";
  for (int tick = 0; tick <= 4; ++tick) {
    double y = top + height - height * tick / 4;
    os << "<line x1=\"" << number(left) << "\" x2=\"" << number(left + width)
       << "\" y1=\"" << number(y) << "\" y2=\"" << number(y)
       << "\" stroke=\"#ddd\"/><text x=\"" << number(left - 4) << "\" y=\""
       << number(y + 4) << "\" text-anchor=\"end\">"
       << escape(format(maximum * tick / 4)) << "</text>\n";
  }
  if (bars.empty() || maximum <= 0) {
    os << "</svg>\n";
    return;
  }
  double slot = width / double(bars.size());
  // A label needs about 70 px ("rounds 10-19").
  size_t labelEvery = std::max<size_t>(1, size_t(std::ceil(70 / slot)));
  for (size_t b = 0; b < bars.size(); ++b) {
    const Bar &bar = bars[b];
    double x0 = left + slot * double(b) + slot * 0.1;
    double inner = slot * 0.8;
    double base = top + height;
    for (size_t s = 0; s < series.size() && s < bar.values.size(); ++s) {
      double h = height * bar.values[s] / maximum;
      if (h <= 0)
        continue;
      double x = stacked ? x0 : x0 + inner * double(s) / double(series.size());
      double w = stacked ? inner : inner / double(series.size());
      double y = stacked ? base - h : top + height - h;
      if (stacked)
        base -= h;
      os << "<rect x=\"" << number(x) << "\" y=\"" << number(y) << "\" width=\""
         << number(std::max(w, 0.5)) << "\" height=\"" << number(h)
         << "\" fill=\"" << series[s].color << "\"><title>" << escape(bar.label)
         << ": " << series[s].name << " " << escape(format(bar.values[s]))
         << "</title></rect>\n";
    }
    if (b % labelEvery == 0)
      os << "<text x=\"" << number(left + slot * (double(b) + 0.5)) << "\" y=\""
         << number(top + height + 14) << "\" text-anchor=\"middle\">"
         << escape(bar.label) << "</text>\n";
  }
  os << "</svg>\n";
}

std::string bytesLabel(double bytes) { return formatBytes(int64_t(bytes)); }

/// How ranks are grouped in the matrix and the rank charts.
struct RankGroups {
  uint32_t size = 1; ///< ranks per group
  uint32_t count = 0;
  std::string unit; ///< "rank", "node" or "nodes"
  uint32_t ranksPerNode = 8;
  /// ranksPerNode comes from a cluster spec (else it is a guess).
  bool nodesKnown = false;

  std::string name(uint32_t group) const {
    if (size == 1)
      return "rank " + std::to_string(group);
    uint32_t nodes = size / ranksPerNode;
    if (nodes <= 1)
      return "node " + std::to_string(group);
    return "nodes " + std::to_string(group * nodes) + "-" +
           std::to_string(group * nodes + nodes - 1);
  }
};

RankGroups rankGroups(uint32_t ranks, const ClusterSpec *cluster,
                      uint32_t maxGroups) {
  RankGroups groups;
  groups.ranksPerNode = cluster ? cluster->ranksPerNode : 8;
  groups.nodesKnown = cluster != nullptr;
  if (ranks <= kReportMaxRanks) {
    groups.count = ranks;
    groups.unit = "rank";
    return groups;
  }
  uint32_t nodes = (ranks + groups.ranksPerNode - 1) / groups.ranksPerNode;
  uint32_t nodesPerGroup = (nodes + maxGroups - 1) / maxGroups;
  groups.size = groups.ranksPerNode * nodesPerGroup;
  groups.count = (ranks + groups.size - 1) / groups.size;
  groups.unit = nodesPerGroup == 1 ? "node" : "group of nodes";
  return groups;
}

/// Light to dark blue on a log scale between the smallest and largest
/// non-zero cell.
std::string heatColor(int64_t bytes, int64_t smallest, int64_t largest) {
  double t = 1;
  if (largest > smallest)
    t = (std::log(double(bytes)) - std::log(double(smallest))) /
        (std::log(double(largest)) - std::log(double(smallest)));
  auto mix = [&](int from, int to) { return int(from + (to - from) * t); };
  char color[16];
  std::snprintf(color, sizeof(color), "#%02x%02x%02x", mix(222, 8),
                mix(235, 48), mix(247, 107));
  return color;
}

void writeMatrix(const PlanTraffic &traffic, const RankGroups &groups,
                 std::ostream &os) {
  os << "<h2>Traffic matrix</h2>\n<p class=\"note\">Bytes sent from each "
     << groups.unit << " (row) to each " << groups.unit
     << " (column), on a log scale; hover a cell for its bytes.";
  if (groups.size > 1)
    os << " Ranks are grouped by " << groups.size
       << " (traffic inside a group is on the diagonal).";
  if (groups.size == 1 && groups.nodesKnown &&
      groups.ranksPerNode < groups.count)
    os << " Dashed lines separate nodes of " << groups.ranksPerNode
       << " ranks.";
  os << "</p>\n";
  TrafficMatrix matrix = groupMatrix(traffic.sent, groups.size);
  if (matrix.empty()) {
    os << "<p>No rank sends anything.</p>\n";
    return;
  }
  int64_t smallest = matrix.begin()->second, largest = smallest;
  for (const auto &[pair, bytes] : matrix) {
    smallest = std::min(smallest, bytes);
    largest = std::max(largest, bytes);
  }
  // The scale spans at least three orders of magnitude, so that cells of
  // nearly equal bytes look nearly equal.
  smallest = std::max<int64_t>(1, std::min(smallest, largest / 1000));
  double cell = std::clamp(480.0 / double(groups.count), 3.0, 22.0);
  double left = 70, top = 30, side = cell * double(groups.count);
  os << "<svg id=\"traffic-matrix\" class=\"heatmap\" width=\""
     << number(left + side + 200) << "\" height=\""
     << number(top + std::max(side, 16.0 * 10) + 20) << "\">\n<rect x=\""
     << number(left) << "\" y=\"" << number(top) << "\" width=\""
     << number(side) << "\" height=\"" << number(side)
     << "\" fill=\"#f7f7f7\" stroke=\"#bbb\"/>\n";
  for (const auto &[pair, bytes] : matrix)
    os << "<rect class=\"cell\" x=\""
       << number(left + cell * double(pair.second)) << "\" y=\""
       << number(top + cell * double(pair.first)) << "\" width=\""
       << number(cell) << "\" height=\"" << number(cell) << "\" fill=\""
       << heatColor(bytes, smallest, largest) << "\"><title>"
       << escape(groups.name(pair.first)) << " &#8594; "
       << escape(groups.name(pair.second)) << ": " << formatBytes(bytes)
       << "</title></rect>\n";
  // Node boundaries, when ranks are shown one by one on several nodes.
  if (groups.size == 1 && groups.nodesKnown &&
      groups.ranksPerNode < groups.count)
    for (uint32_t r = groups.ranksPerNode; r < groups.count;
         r += groups.ranksPerNode) {
      double at = cell * double(r);
      os << "<line x1=\"" << number(left + at) << "\" x2=\""
         << number(left + at) << "\" y1=\"" << number(top) << "\" y2=\""
         << number(top + side)
         << "\" stroke=\"#999\" stroke-dasharray=\"3 2\"/>"
         << "<line x1=\"" << number(left) << "\" x2=\"" << number(left + side)
         << "\" y1=\"" << number(top + at) << "\" y2=\"" << number(top + at)
         << "\" stroke=\"#999\" stroke-dasharray=\"3 2\"/>\n";
    }
  os << "<text x=\"" << number(left - 40) << "\" y=\"" << number(top - 6)
     << "\" text-anchor=\"middle\">from \\ to</text>\n";
  uint32_t labelEvery = std::max<uint32_t>(1, (groups.count + 15) / 16);
  for (uint32_t g = 0; g < groups.count; g += labelEvery) {
    double at = cell * (double(g) + 0.5);
    os << "<text x=\"" << number(left - 4) << "\" y=\"" << number(top + at + 4)
       << "\" text-anchor=\"end\">" << g << "</text><text x=\""
       << number(left + at) << "\" y=\"" << number(top - 6)
       << "\" text-anchor=\"middle\">" << g << "</text>\n";
  }
  // The colour scale.
  double x = left + side + 20;
  for (int step = 0; step < 10; ++step) {
    double t = step / 9.0;
    int64_t bytes = int64_t(
        std::exp(std::log(double(smallest)) +
                 t * (std::log(double(largest)) - std::log(double(smallest)))));
    os << "<rect x=\"" << number(x) << "\" y=\"" << number(top + 16 * step)
       << "\" width=\"14\" height=\"16\" fill=\""
       << heatColor(std::clamp(bytes, smallest, largest), smallest, largest)
       << "\"/>\n";
  }
  os << "<text x=\"" << number(x + 20) << "\" y=\"" << number(top + 12) << "\">"
     << formatBytes(smallest) << "</text><text x=\"" << number(x + 20)
     << "\" y=\"" << number(top + 16 * 10 - 4) << "\">" << formatBytes(largest)
     << "</text>\n</svg>\n";
}

void writeRanks(const PlanTraffic &traffic, const PlanEstimate *estimate,
                const RankGroups &groups, std::ostream &os) {
  os << "<h2>Bytes per " << groups.unit << "</h2>\n";
  std::vector<RankTraffic> totals(groups.count);
  std::vector<double> busy(groups.count, 0);
  for (uint32_t rank = 0; rank < traffic.ranks; ++rank) {
    totals[rank / groups.size].add(traffic.rankTotals[rank]);
    if (estimate)
      busy[rank / groups.size] =
          std::max(busy[rank / groups.size], estimate->ranks[rank].busySeconds);
  }
  std::vector<Bar> bars;
  for (uint32_t g = 0; g < groups.count; ++g)
    bars.push_back(
        Bar{groups.name(g),
            {double(totals[g].read), double(totals[g].sent),
             double(totals[g].received), double(totals[g].written)}});
  barChart("rank-bytes",
           {{"read", "#4e79a7"},
            {"sent", "#f28e2b"},
            {"received", "#e15759"},
            {"written", "#59a14f"}},
           bars, false, bytesLabel, os);
  os << "<details><summary>the numbers</summary>\n<table id=\"rank-table\">"
        "<tr><th>"
     << groups.unit
     << "</th><th>read</th><th>sent</th><th>received</th><th>written</th>"
        "<th>copied</th><th>largest round's buffers</th>";
  if (estimate)
    os << "<th>busy (estimate)</th>";
  os << "</tr>\n";
  for (uint32_t g = 0; g < groups.count; ++g) {
    const RankTraffic &t = totals[g];
    os << "<tr><td>" << escape(groups.name(g)) << "</td><td>"
       << formatBytes(t.read) << "</td><td>" << formatBytes(t.sent)
       << "</td><td>" << formatBytes(t.received) << "</td><td>"
       << formatBytes(t.written) << "</td><td>" << formatBytes(t.copied)
       << "</td><td>" << formatBytes(t.bufferBytes) << "</td>";
    if (estimate)
      os << "<td>" << formatSeconds(busy[g]) << "</td>";
    os << "</tr>\n";
  }
  os << "</table></details>\n";
}

/// Consecutive rounds summed into at most kReportMaxRoundBars bins.
template <typename Values>
std::vector<Bar> roundBars(size_t rounds, Values values) {
  size_t perBin = std::max<size_t>(1, (rounds + kReportMaxRoundBars - 1) /
                                          kReportMaxRoundBars);
  std::vector<Bar> bars;
  for (size_t first = 0; first < rounds; first += perBin) {
    size_t last = std::min(rounds, first + perBin) - 1;
    Bar bar;
    bar.label = first == last ? "round " + std::to_string(first)
                              : "rounds " + std::to_string(first) + "-" +
                                    std::to_string(last);
    for (size_t r = first; r <= last; ++r) {
      std::vector<double> v = values(r);
      bar.values.resize(v.size(), 0);
      for (size_t i = 0; i < v.size(); ++i)
        bar.values[i] += v[i];
    }
    bars.push_back(std::move(bar));
  }
  return bars;
}

void writeRounds(const PlanTraffic &traffic, std::ostream &os) {
  os << "<h2>Bytes per round</h2>\n";
  if (traffic.rounds.size() > kReportMaxRoundBars)
    os << "<p class=\"note\">" << traffic.rounds.size()
       << " rounds, summed in bins of consecutive rounds.</p>\n";
  std::vector<Bar> bars = roundBars(traffic.rounds.size(), [&](size_t r) {
    RankTraffic total;
    for (const RankRoundTraffic &rank : traffic.rounds[r].ranks)
      total.add(rank.traffic);
    return std::vector<double>{double(total.read), double(total.sent),
                               double(total.copied), double(total.written)};
  });
  barChart("round-bytes",
           {{"read", "#4e79a7"},
            {"sent", "#f28e2b"},
            {"copied", "#b07aa1"},
            {"written", "#59a14f"}},
           bars, false, bytesLabel, os);
}

void writeEstimate(const PlanReportInput &input, std::ostream &os) {
  const PlanEstimate &estimate = *input.estimate;
  const ClusterSpec &cluster = *input.cluster;
  os << "<h2>Estimate</h2>\n<table class=\"headline\">"
     << "<tr><td>predicted time</td><td id=\"predicted-time\">"
     << formatSeconds(estimate.seconds) << "</td></tr>\n";
  if (estimate.ideal.resource.kind != ResourceKind::None)
    os << "<tr><td>ideal lower bound</td><td>"
       << formatSeconds(estimate.ideal.seconds) << " ("
       << escape(estimate.ideal.resource.describe()) << ": "
       << formatBytes(estimate.ideal.bytes) << ")</td></tr>\n";
  os << "</table>\n<p class=\"note\">On " << escape(input.clusterName) << ": "
     << "ranks per node " << cluster.ranksPerNode << ", disk read "
     << formatNumber(cluster.diskReadGBps) << " GB/s and write "
     << formatNumber(cluster.diskWriteGBps) << " GB/s per node, NIC "
     << formatNumber(cluster.nicGBps) << " GB/s per node and direction, NVLink "
     << formatNumber(cluster.nvlinkGBps) << " GB/s and copies "
     << formatNumber(cluster.copyGBps) << " GB/s per rank.</p>\n<ul>\n";
  for (const std::string &line : estimateAssumptions())
    os << "<li>" << escape(line) << "</li>\n";
  os << "</ul>\n";
  for (const MemoryWarning &w : estimate.memoryWarnings) {
    os << "<p class=\"warning\"><b>warning:</b> "
       << estimate.memoryWarnings.size()
       << " round(s) of ranks need more buffer memory than "
       << formatNumber(*cluster.memoryPerRankGiB) << " GiB, the first round "
       << w.round << " on rank " << w.rank << " (" << formatBytes(w.bufferBytes)
       << ").</p>\n";
    break;
  }

  os << "<h3>Time per round, by phase</h3>\n";
  std::vector<Bar> bars = roundBars(estimate.rounds.size(), [&](size_t r) {
    std::vector<double> v;
    for (const PhaseEstimate &phase : estimate.rounds[r].phases)
      v.push_back(phase.seconds);
    return v;
  });
  barChart("round-time",
           {{"read", "#4e79a7"},
            {"exchange", "#f28e2b"},
            {"copy", "#b07aa1"},
            {"write", "#59a14f"}},
           bars, true, formatSeconds, os);

  os << "<h3>Critical path</h3>\n<table id=\"critical-path\"><tr><th>bound "
        "by</th><th>time</th><th>share</th></tr>\n";
  // Longest first, as aoa-plan estimate prints them.
  std::vector<size_t> kinds;
  for (size_t k = 1; k < kResourceKindCount; ++k)
    if (estimate.boundSeconds[k] > 0)
      kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](size_t a, size_t b) {
    return estimate.boundSeconds[a] > estimate.boundSeconds[b];
  });
  for (size_t k : kinds)
    os << "<tr><td>" << resourceKindName(static_cast<ResourceKind>(k))
       << "</td><td>" << formatSeconds(estimate.boundSeconds[k]) << "</td><td>"
       << number(100 * estimate.boundSeconds[k] / estimate.seconds)
       << "%</td></tr>\n";
  os << "</table>\n";
  std::vector<size_t> slowest = slowestRounds(estimate, kSlowestRoundsShown);
  os << "<p class=\"note\">The " << slowest.size()
     << " slowest rounds, slowest first: the phase that takes longest, the "
        "resource that bounds it and the rank that ends it.</p>\n"
        "<table id=\"slowest-rounds\"><tr><th>round</th><th>time</th>"
        "<th>read</th><th>exchange</th><th>copy</th><th>write</th>"
        "<th>bound</th><th>critical rank</th></tr>\n";
  for (size_t r : slowest) {
    const RoundEstimate &round = estimate.rounds[r];
    os << "<tr><td>" << r << "</td><td>" << formatSeconds(round.seconds)
       << "</td>";
    for (const PhaseEstimate &phase : round.phases)
      os << "<td>" << formatSeconds(phase.seconds) << "</td>";
    const PhaseEstimate &longest = round.longestPhase();
    os << "<td>" << escape(longest.bound.describe()) << "</td><td>"
       << (longest.criticalRank ? std::to_string(*longest.criticalRank) : "-")
       << "</td></tr>\n";
  }
  os << "</table>\n";
}

} // namespace

void writePlanReport(const PlanReportInput &input, std::ostream &os) {
  const PlanTraffic &traffic = *input.traffic;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n<title>aoa plan report: "
     << escape(input.planName) << "</title>\n"
     << kStyle << "</head>\n<body>\n<h1>Plan " << escape(input.planName)
     << "</h1>\n";
  const RankTraffic &t = traffic.total;
  os << "<p id=\"totals\">" << traffic.ranks << " ranks, "
     << traffic.rounds.size() << " rounds: read " << formatBytes(t.read)
     << ", sent " << formatBytes(t.sent) << ", copied " << formatBytes(t.copied)
     << ", written " << formatBytes(t.written)
     << "; the largest round's buffers on one rank "
     << formatBytes(t.bufferBytes) << ". (GB = 10<sup>9</sup> bytes)</p>\n";
  if (input.estimate && input.cluster)
    writeEstimate(input, os);
  writeMatrix(traffic,
              rankGroups(traffic.ranks, input.cluster, kReportMaxMatrixGroups),
              os);
  writeRanks(traffic, input.estimate,
             rankGroups(traffic.ranks, input.cluster, kReportMaxMatrixGroups),
             os);
  writeRounds(traffic, os);
  os << "</body>\n</html>\n";
}

} // namespace analysis
} // namespace aoa
