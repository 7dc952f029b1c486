// SPDX-License-Identifier: MIT
// `--compat dcgm`: dcgm-exporter's names, units, types and labels, so the dcgm-exporter Grafana
// dashboard (grafana.com 12239) and users' DCGM alerts work unchanged.
#include <memory>
#include <string>
#include <vector>

#include "exporter/metric_names.h"
#include "exporter/renderers.h"
#include "gpu/xid.h"

namespace gpumon::exporter {
namespace {

// The label values of one GPU; Label views point into it, so it must not move while used.
struct DcgmLabels {
  std::string gpu, uuid, bus, device, model, driver;
  std::vector<Label> labels;

  DcgmLabels(unsigned index, const DeviceStatic* d, const SystemInfo& system,
             const ExporterOptions& o)
      : gpu(std::to_string(index)) {
    labels.push_back({"gpu", gpu});
    if (d != nullptr && o.show_uuid && d->uuid) {
      uuid = d->uuid.value();
      labels.push_back({"UUID", uuid});
    }
    if (d != nullptr && d->pci_bus_id) {
      bus = d->pci_bus_id.value();
      labels.push_back({"pci_bus_id", bus});
    }
    if (d != nullptr && d->minor_number) {
      device = "nvidia" + std::to_string(d->minor_number.value());
      labels.push_back({"device", device});
    }
    if (d != nullptr && d->name) {
      model = d->name.value();
      labels.push_back({"modelName", model});
    }
    // dcgm-exporter renamed Hostname to hostname (#655); alerts in the wild use either.
    labels.push_back({"Hostname", o.hostname});
    labels.push_back({"hostname", o.hostname});
    // The label field of its default counters, so alerts can tell driver versions apart.
    if (system.driver_version) {
      driver = system.driver_version.value();
      labels.push_back({"DCGM_FI_DRIVER_VERSION", driver});
    }
  }
  DcgmLabels(const DcgmLabels&) = delete;
  DcgmLabels& operator=(const DcgmLabels&) = delete;
};

// The last XID with dcgm-exporter's err_code and err_msg labels; 0 ("No Error") before the
// first, so alerts matching on err_code see the series from the start.
void render_xid(const GpuState& g, std::vector<Label> labels, ExpositionWriter& w) {
  const std::uint64_t code = g.last_xid.value_or(0);
  const std::string err_code = std::to_string(code);
  std::string err_msg = "No Error";
  if (code != 0) {
    const XidInfo x = xid_info(code);
    err_msg = x.dcgm_name.empty() ? "Unknown Error" : std::string(x.dcgm_name);
  }
  labels.push_back({"err_code", err_code});
  labels.push_back({"err_msg", err_msg});
  w.sample(labels, static_cast<double>(code));
}

}  // namespace

void render_dcgm(const ExporterView& v, const ExporterOptions& o, ExpositionWriter& w) {
  std::vector<std::unique_ptr<DcgmLabels>> labels(v.gpus.size());
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    if (v.gpu(i) != nullptr)
      labels[i] = std::make_unique<DcgmLabels>(i, find_device(v, i), v.system, o);
  }
  for (const FamilySpec& f : dcgm_families()) {
    w.family(f.name, f.help, f.type);
    for (unsigned i = 0; i < v.gpus.size(); ++i) {
      const GpuState* g = v.gpu(i);
      if (g == nullptr) continue;
      const std::optional<double> value = g->known.value(f.id);
      if (value) w.sample(labels[i]->labels, scaled(f, *value));
    }
  }
  // DCGM's value: a rate in MB/s over all links (TX + RX), from the second read on; absent
  // without NVLink. dcgm-exporter declares it a counter, and so does compat mode.
  w.family("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
           "NVLink data sent and received over all links, MB/s, as DCGM computes it (the growth "
           "of nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT_DATA_TX + _RX) KiB per second / 1000)",
           MetricType::kCounter);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g != nullptr && g->nvlink_mb_per_s) w.sample(labels[i]->labels, *g->nvlink_mb_per_s);
  }
  w.family("DCGM_FI_DEV_XID_ERRORS",
           "Value of the last XID error since gpumon started (0 until the first)",
           MetricType::kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr) continue;  // a lost GPU keeps it: XID 79 is how it was lost
    render_xid(*g, labels[i]->labels, w);
  }
}

}  // namespace gpumon::exporter
