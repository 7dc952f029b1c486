// SPDX-License-Identifier: MIT
// ecc_errors, xid, gpu_lost: hardware events the driver reported (event table), and ECC
// counters that grew during the run, and lost samples.
#include <algorithm>
#include <map>

#include "diagnose/rules/rules.h"
#include "gpu/xid.h"

namespace gpumon::diagnose {
namespace {

void add_ranks_of(const RunView& v, Finding& f) {
  for (const auto& r : v.run.ranks)
    if (r.gpu && std::count(f.gpus.begin(), f.gpus.end(), *r.gpu))
      f.ranks.push_back(r.rank.value_or(r.pid));
}

void add_gpu(Finding& f, unsigned gpu) {
  if (!std::count(f.gpus.begin(), f.gpus.end(), gpu)) f.gpus.push_back(gpu);
}

// What an XID class means for the user: the severity and what to do (the classes themselves
// are gpu/xid.h's).
Severity xid_severity(XidClass c) {
  return c == XidClass::kHardware ? Severity::kCritical : Severity::kWarning;
}

std::string xid_advice(XidClass c) {
  switch (c) {
    case XidClass::kHardware:
      return "Hardware/driver error: drain the node, reset the GPU (`nvidia-smi -r` or a "
             "reboot), check the kernel log (dmesg) around these times, and report the GPU for "
             "an RMA if it recurs.";
    case XidClass::kApplication:
      return "Application error: the GPU is likely fine; check the training code and the CUDA "
             "error in the process's log (an illegal memory access, a faulting kernel).";
    case XidClass::kUnknown: break;
  }
  return "Unknown to gpumon: look it up in NVIDIA's XID catalog "
         "(docs.nvidia.com/deploy/xid-errors) and check the kernel log (dmesg).";
}

struct GpuXids {
  std::map<std::int64_t, int> counts;  // code -> events
  std::int64_t first_ms = 0, last_ms = 0;
};

// One finding per GPU: each GPU's codes, severity and advice are its own (a GPU whose memory
// fails is not the one whose kernel faulted).
Finding xid_finding(const RunView& v, unsigned gpu, const GpuXids& x) {
  Finding f;
  f.id = "xid";
  f.gpus = {gpu};
  f.confidence = 1;
  f.severity = Severity::kInfo;
  widen_range(f, x.first_ms, x.last_ms);
  bool seen[3] = {false, false, false};  // by XidClass
  std::string codes, classes;
  for (const auto& [code, n] : x.counts) {
    const XidInfo info = xid_info(static_cast<std::uint64_t>(code));
    codes += (codes.empty() ? "" : ", ") + describe_xid(static_cast<std::uint64_t>(code)) +
             (n > 1 ? " x" + std::to_string(n) : "");
    f.add("xid_" + std::to_string(code), static_cast<double>(n));
    f.severity = std::max(f.severity, xid_severity(info.xid_class));
    seen[static_cast<int>(info.xid_class)] = true;
  }
  // Hardware first: it decides what happens to the node.
  for (XidClass c : {XidClass::kHardware, XidClass::kApplication, XidClass::kUnknown}) {
    if (!seen[static_cast<int>(c)]) continue;
    classes += (classes.empty() ? "" : ", ") + std::string(xid_class_name(c));
    f.advice += (f.advice.empty() ? "" : " ") + xid_advice(c);
  }
  f.add("classes", classes);
  f.title = seen[static_cast<int>(XidClass::kHardware)]      ? "XID error: hardware/driver"
            : seen[static_cast<int>(XidClass::kApplication)] ? "XID error: application"
                                                             : "XID error: unknown code";
  f.summary = "the driver reported " + codes + " on GPU " + std::to_string(gpu);
  add_ranks_of(v, f);
  return f;
}

struct GpuEcc {
  double corrected_events = 0, uncorrected_events = 0;
  double corrected_growth = 0, uncorrected_growth = 0;  // volatile counters during the run
  double corrected() const { return std::max(corrected_events, corrected_growth); }
  double uncorrected() const { return std::max(uncorrected_events, uncorrected_growth); }
};

}  // namespace

void check_hardware(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding ecc, lost;
  std::map<unsigned, GpuEcc> eccs;
  std::map<unsigned, GpuXids> xids;
  for (const auto& e : v.run.events) {
    if (e.kind == "ecc_single_bit" || e.kind == "ecc_double_bit") {
      add_gpu(ecc, e.gpu);
      widen_range(ecc, e.time_ms, e.time_ms);
      auto& g = eccs[e.gpu];
      (e.kind == "ecc_single_bit" ? g.corrected_events : g.uncorrected_events) +=
          static_cast<double>(std::max<std::int64_t>(e.value, 1));
    } else if (e.kind == "xid") {
      auto [it, fresh] = xids.try_emplace(e.gpu);
      auto& g = it->second;
      if (fresh) g.first_ms = g.last_ms = e.time_ms;
      g.first_ms = std::min(g.first_ms, e.time_ms), g.last_ms = std::max(g.last_ms, e.time_ms);
      ++g.counts[e.value];
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
      eccs[g.gpu].corrected_growth = dc, eccs[g.gpu].uncorrected_growth = du;
    }
  }
  if (!ecc.gpus.empty()) {
    // Corrected errors are judged by their rate on one GPU (thresholds.h says why).
    const double span_h = v.run.start_ms && v.run.end_ms
                              ? static_cast<double>(*v.run.end_ms - *v.run.start_ms) / 3.6e6
                              : 0;
    const double hours = std::max(span_h, t.ecc_rate_min_hours);
    double corrected = 0, uncorrected = 0, worst_rate = 0;
    for (const auto& [gpu, g] : eccs) {
      corrected += g.corrected(), uncorrected += g.uncorrected();
      worst_rate = std::max(worst_rate, g.corrected() / hours);
      if (eccs.size() > 1) {
        ecc.add("gpu" + std::to_string(gpu) + "_corrected", g.corrected());
        ecc.add("gpu" + std::to_string(gpu) + "_uncorrected", g.uncorrected());
      }
    }
    const bool rising = worst_rate >= t.ecc_corrected_per_hour;
    ecc.id = "ecc_errors";
    ecc.severity = uncorrected > 0 ? Severity::kCritical
                   : rising        ? Severity::kWarning
                                   : Severity::kInfo;
    ecc.confidence = 1;
    ecc.title = uncorrected > 0 ? "Uncorrected ECC errors"
                : rising        ? "Corrected ECC errors at a rising rate"
                                : "Corrected ECC errors";
    ecc.summary = fmt(corrected, 0) + " corrected and " + fmt(uncorrected, 0) +
                  " uncorrected ECC errors during the run (corrected: " + fmt(worst_rate, 1) +
                  " per hour on one GPU at the most)";
    ecc.evidence.insert(ecc.evidence.begin(), {{"corrected", corrected},
                                               {"uncorrected", uncorrected},
                                               {"corrected_per_hour", worst_rate}});
    if (uncorrected > 0)
      ecc.advice =
          "Uncorrected errors corrupt results: stop using the GPU, check "
          "`nvidia-smi -q -d ECC,ROW_REMAPPER` and ask for a reset or an RMA.";
    else if (rising)
      ecc.advice = "Corrected errors are coming at " + fmt(t.ecc_corrected_per_hour, 0) +
                   " or more an hour: the memory is weakening. Watch `nvidia-smi -q -d "
                   "ECC,ROW_REMAPPER`, plan to drain the node and report the GPU.";
    else
      ecc.advice =
          "ECC corrected these errors (the memory working as designed): nothing to do unless "
          "their rate rises, which gpumon reports as a warning.";
    add_ranks_of(v, ecc);
    out.push_back(std::move(ecc));
  }
  for (const auto& [gpu, x] : xids) out.push_back(xid_finding(v, gpu, x));
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
