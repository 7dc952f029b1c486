// SPDX-License-Identifier: MIT
// throttled: per GPU, the share of busy samples held below max clocks by thermal, power-cap or
// hardware-slowdown reasons; the evidence names the main cause.
#include <algorithm>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"
#include "diagnose/throttle.h"

namespace gpumon::diagnose {

void check_throttled(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double worst = 0, worst_busy = 0;
  std::string worst_cause;
  for (const auto& g : v.run.gpus) {
    double busy = 0, throttled = 0, thermal = 0, power = 0, hw = 0, clock_sum = 0, clock_n = 0;
    std::optional<double> max_temp, power_limit;
    std::int64_t t0 = 0, t1 = 0;
    for (const auto& p : g.points) {
      if (!p.util_pct || *p.util_pct < t.busy_util_pct || !p.clock_reasons) continue;
      busy += p.samples;
      const auto c = point_throttle(p, g.max_sm_clock_mhz);
      const auto n = samples_throttled(p, g.max_sm_clock_mhz);
      if (n > 0) {
        if (throttled == 0) t0 = p.t_ms;
        t1 = p.t_ms + p.span_ms;
      }
      throttled += n, thermal += c.thermal, power += c.power, hw += c.hw_slowdown;
      if (p.sm_clock_mhz) clock_sum += *p.sm_clock_mhz * p.samples, clock_n += p.samples;
      if (p.temp_c) max_temp = std::max(max_temp.value_or(*p.temp_c), *p.temp_c);
      if (p.power_limit_w) power_limit = p.power_limit_w;
    }
    if (busy < t.throttle_min_samples) continue;
    const double share = throttled / busy;
    if (share < t.throttle_share) continue;
    const std::string cause = thermal >= power && thermal >= hw ? "thermal"
                              : power >= hw                     ? "power_cap"
                                                                : "hw_slowdown";
    f.gpus.push_back(g.gpu);
    widen_range(f, t0, t1);
    const std::string k = "gpu" + std::to_string(g.gpu) + "_";
    f.add(k + "throttle_share", share);
    f.add(k + "cause", cause);
    f.add(k + "thermal_share", thermal / busy);
    f.add(k + "power_cap_share", power / busy);
    f.add(k + "hw_slowdown_share", hw / busy);
    if (clock_n > 0) f.add(k + "mean_sm_clock_mhz", clock_sum / clock_n);
    if (g.max_sm_clock_mhz) f.add(k + "max_sm_clock_mhz", *g.max_sm_clock_mhz);
    if (max_temp) f.add(k + "max_temp_c", *max_temp);
    if (power_limit) f.add(k + "power_limit_w", *power_limit);
    if (share > worst) worst = share, worst_busy = busy, worst_cause = cause;
  }
  if (f.gpus.empty()) return;
  f.evidence.insert(f.evidence.begin(), {"cause", worst_cause});
  f.evidence.insert(f.evidence.begin(), {"throttle_share", worst});
  for (const auto& r : v.ranks)
    if (r.info->gpu && std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
      f.ranks.push_back(r.label);
  f.id = "throttled";
  f.severity = worst >= t.throttle_critical_share ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(worst_busy, 10.0 * t.throttle_min_samples, worst, t.throttle_share);
  std::string gpus;
  for (unsigned g : f.gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(g);
  f.title = "Clocks throttled (" + worst_cause + ")";
  f.summary = "GPU " + gpus + " below max clocks " + fmt(worst * 100, 0) +
              "% of the busy time, mostly for " + worst_cause + " reasons";
  f.advice = worst_cause == "thermal"
                 ? "Check cooling: fans, airflow, inlet temperature and blocked or failed fans on "
                   "this GPU; compare with its neighbours; ask the site to inspect the chassis."
             : worst_cause == "power_cap"
                 ? "The GPU hits its power limit: check `nvidia-smi -q -d POWER` for a lowered "
                   "limit; a lasting cap costs throughput, raise it if the site allows."
                 : "Hardware slowdown is raised by the board (power brake, over-temperature or "
                   "a PSU event): report the GPU to the site with these times.";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
