// SPDX-License-Identifier: MIT
// `--compat dcgm`: dcgm-exporter's names, units and labels, so the dcgm-exporter Grafana
// dashboard (grafana.com 12239) and users' DCGM alerts work unchanged.
#include <memory>
#include <string>
#include <vector>

#include "exporter/metric_names.h"
#include "exporter/renderers.h"

namespace gpumon::exporter {
namespace {

// The label values of one GPU; Label views point into it, so it must not move while used.
struct DcgmLabels {
  std::string gpu, uuid, bus, device, model;
  std::vector<Label> labels;

  DcgmLabels(unsigned index, const DeviceStatic* d, const ExporterOptions& o)
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
  }
  DcgmLabels(const DcgmLabels&) = delete;
  DcgmLabels& operator=(const DcgmLabels&) = delete;
};

}  // namespace

void render_dcgm(const ExporterView& v, const ExporterOptions& o, ExpositionWriter& w) {
  std::vector<std::unique_ptr<DcgmLabels>> labels(v.gpus.size());
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    if (v.gpu(i) != nullptr) labels[i] = std::make_unique<DcgmLabels>(i, find_device(v, i), o);
  }
  for (const FamilySpec& f : dcgm_families()) {
    w.family(f.name, f.help, f.type);
    for (unsigned i = 0; i < v.gpus.size(); ++i) {
      const GpuState* g = v.gpu(i);
      if (g == nullptr) continue;
      const auto& value = g->values[static_cast<std::size_t>(f.id)];
      if (value) w.sample(labels[i]->labels, scaled(f, *value));
    }
  }
  w.family("DCGM_FI_DEV_XID_ERRORS",
           "Value of the last XID error since gpumon started (absent until the first)",
           MetricType::kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->last_xid) continue;
    w.sample(labels[i]->labels, static_cast<double>(*g->last_xid));
  }
}

}  // namespace gpumon::exporter
