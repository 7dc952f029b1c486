// SPDX-License-Identifier: MIT
// -i / --id: which GPUs a query covers. An id is an NVML index ("0"), a UUID ("GPU-..."), a
// PCI bus id in full ("00000000:18:00.0") or short ("18:00.0") form, or a board serial; a comma
// list selects several. Matching is case-insensitive for UUIDs and bus ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/gpu_types.h"
#include "gpu/pci_bus_id.h"
#include "query/query_error.h"

namespace gpumon::query {

/// Index (into `devices`) of the GPU `id` names, or nullopt. Digits name an index first and a
/// serial otherwise.
std::optional<unsigned> match_device(std::string_view id, const std::vector<DeviceStatic>& devices);

/// Resolves an -i list to sorted, de-duplicated indices into `devices` (so "-i 1,0,0" is GPUs 0
/// and 1, each once, like nvidia-smi). An empty list is a usage error (exit 2); an id that
/// matches no GPU gives nvidia-smi's "No devices were found" (exit 6).
Expected<std::vector<unsigned>> select_devices(std::string_view id_list,
                                               const std::vector<DeviceStatic>& devices);

/// The GPUs of `backend` an -i list names (nullopt: every GPU, in index order); a backend
/// without GPUs gives nvidia-smi's "No devices were found" (exit 6).
Expected<std::vector<unsigned>> choose_devices(const std::optional<std::string>& ids,
                                               const GpuBackend& backend);

}  // namespace gpumon::query
