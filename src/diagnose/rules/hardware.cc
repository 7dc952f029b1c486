// SPDX-License-Identifier: MIT
// ecc_errors, xid, gpu_lost: hardware events the driver reported (event table), and ECC
// counters that grew during the run, and lost samples.
#include <algorithm>
#include <map>
#include <set>

#include "diagnose/rules/rules.h"

namespace gpumon::diagnose {
namespace {

// XIDs that mean the GPU or its memory is failing (not an application bug): 48 double-bit ECC,
// 63/64 row remapping, 74 NVLink, 79 fallen off the bus, 92 high single-bit rate, 94/95
// contained/uncontained ECC, 119/120 GSP errors.
bool critical_xid(std::int64_t x) {
  static const std::set<std::int64_t> k{48, 63, 64, 74, 79, 92, 94, 95, 119, 120};
  return k.count(x) > 0;
}

void add_ranks_of(const RunView& v, Finding& f) {
  for (const auto& r : v.run.ranks)
    if (r.gpu && std::count(f.gpus.begin(), f.gpus.end(), *r.gpu))
      f.ranks.push_back(r.rank.value_or(r.pid));
}

void add_gpu(Finding& f, unsigned gpu) {
  if (!std::count(f.gpus.begin(), f.gpus.end(), gpu)) f.gpus.push_back(gpu);
}

}  // namespace

void check_hardware(const RunView& v, const Thresholds&, std::vector<Finding>& out) {
  Finding ecc, xid, lost;
  double corrected = 0, uncorrected = 0;
  std::map<std::int64_t, int> xids;
  for (const auto& e : v.run.events) {
    if (e.kind == "ecc_single_bit" || e.kind == "ecc_double_bit") {
      add_gpu(ecc, e.gpu);
      widen_range(ecc, e.time_ms, e.time_ms);
      (e.kind == "ecc_single_bit" ? corrected : uncorrected) += std::max<std::int64_t>(e.value, 1);
    } else if (e.kind == "xid") {
      add_gpu(xid, e.gpu);
      widen_range(xid, e.time_ms, e.time_ms);
      ++xids[e.value];
    } else if (e.kind == "lost") {
      add_gpu(lost, e.gpu);
      widen_range(lost, e.time_ms, e.time_ms);
    }
  }
  // Counters that grew during the run (their first value is history from before it).
  for (const auto& g : v.run.gpus) {
    std::optional<double> c0, c1, u0, u1;
    std::optional<std::int64_t> grew_ms, last_ms;  // first and last sample after a growth
    for (const auto& p : g.points) {
      if (p.ecc_corrected) c1 = p.ecc_corrected, c0 = c0.value_or(*p.ecc_corrected);
      if (p.ecc_uncorrected) u1 = p.ecc_uncorrected, u0 = u0.value_or(*p.ecc_uncorrected);
      if ((c1 && *c1 > *c0) || (u1 && *u1 > *u0)) {
        if (!grew_ms) grew_ms = p.t_ms;
        last_ms = p.t_ms + p.span_ms;
      }
      if (p.lost) {
        add_gpu(lost, g.gpu);
        widen_range(lost, p.t_ms, p.t_ms + p.span_ms);
      }
    }
    const double dc = c0 ? *c1 - *c0 : 0, du = u0 ? *u1 - *u0 : 0;
    if (grew_ms && (dc > 0 || du > 0)) {
      add_gpu(ecc, g.gpu);
      widen_range(ecc, *grew_ms, *last_ms);
      corrected = std::max(corrected, dc), uncorrected = std::max(uncorrected, du);
    }
  }
  if (!ecc.gpus.empty()) {
    ecc.id = "ecc_errors";
    ecc.severity = uncorrected > 0 ? Severity::kCritical : Severity::kWarning;
    ecc.confidence = 1;
    ecc.title = uncorrected > 0 ? "Uncorrected ECC errors" : "Corrected ECC errors";
    ecc.summary = fmt(corrected, 0) + " corrected and " + fmt(uncorrected, 0) +
                  " uncorrected ECC errors during the run";
    ecc.add("corrected", corrected);
    ecc.add("uncorrected", uncorrected);
    ecc.advice = uncorrected > 0
                     ? "Uncorrected errors corrupt results: stop using the GPU, check "
                       "`nvidia-smi -q -d ECC,ROW_REMAPPER` and ask for a reset or an RMA."
                     : "Corrected errors are harmless alone but a rising count foretells a "
                       "failing memory: watch `nvidia-smi -q -d ECC,ROW_REMAPPER` and report it.";
    add_ranks_of(v, ecc);
    out.push_back(std::move(ecc));
  }
  if (!xid.gpus.empty()) {
    bool critical = false;
    std::string codes;
    for (const auto& [code, n] : xids) {
      critical = critical || critical_xid(code);
      codes += (codes.empty() ? "" : ", ") + std::to_string(code) +
               (n > 1 ? " x" + std::to_string(n) : "");
      xid.add("xid_" + std::to_string(code), static_cast<double>(n));
    }
    xid.id = "xid";
    xid.severity = critical ? Severity::kCritical : Severity::kWarning;
    xid.confidence = 1;
    xid.title = "XID error";
    xid.summary = "the driver reported XID " + codes;
    xid.advice =
        "Look the codes up in NVIDIA's XID catalog: 13/31/43 usually mean an application bug "
        "(bad memory access), 48/63/64/74/79/92/94/95 failing hardware (report the GPU); see "
        "the kernel log (dmesg) around these times.";
    add_ranks_of(v, xid);
    out.push_back(std::move(xid));
  }
  if (!lost.gpus.empty()) {
    lost.id = "gpu_lost";
    lost.severity = Severity::kCritical;
    lost.confidence = 1;
    lost.title = "GPU lost";
    lost.summary = "the GPU stopped answering (fell off the bus or the driver lost it)";
    lost.add("gpus_lost", static_cast<double>(lost.gpus.size()));
    lost.advice =
        "Check dmesg for XID 79 / PCIe errors; the GPU needs a reset or a reboot, and a "
        "recurring loss means a hardware fault (report it with these times).";
    add_ranks_of(v, lost);
    out.push_back(std::move(lost));
  }
}

}  // namespace gpumon::diagnose
