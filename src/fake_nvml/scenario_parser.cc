// SPDX-License-Identifier: MIT
// The top level of a scenario: system facts, init behaviour, device templates and devices.
#include "fake_nvml/scenario_parser.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "fake_nvml/parser_internal.h"
#include "nvml/nvml_library.h"

namespace gpumon::fake {
namespace {

using detail::Json;
using detail::Node;
using detail::ParseContext;

constexpr std::size_t kMaxJsonDepth = 64;

// "00000000:18:00.0" (or the 4-digit domain form) into its numbers; normalised upper-case text.
void parse_pci_bus_id(const Node& n, const std::string& text, DeviceSpec& d) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  int consumed = 0;
  const std::size_t colon = text.find(':');
  bool shape = (colon == 4 || colon == 8) && text.size() == colon + 8 && text[colon + 3] == ':' &&
               text[colon + 6] == '.';
  for (std::size_t i = 0; shape && i < text.size(); ++i) {
    shape = i == colon || i == colon + 3 || i == colon + 6 ||
            std::isxdigit(static_cast<unsigned char>(text[i]));
  }
  const bool ok = shape &&
                  std::sscanf(text.c_str(), "%x:%2x:%2x.%1x%n", &domain, &bus, &device, &function,
                              &consumed) == 4 &&
                  static_cast<std::size_t>(consumed) == text.size();
  if (!ok) n.fail("must look like \"00000000:18:00.0\" (domain:bus:device.function, hex)");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", domain, bus, device, function);
  d.pci_bus_id = buf;
  d.pci_domain = domain;
  d.pci_bus = bus;
  d.pci_device = device;
}

std::uint32_t parse_u32_or_hex(const Node& n) {
  if (!n.is_string()) return static_cast<std::uint32_t>(n.uint(0xFFFFFFFFULL));
  const std::string s = n.string(10);
  unsigned v = 0;
  int consumed = 0;
  if (s.size() < 3 || s.rfind("0x", 0) != 0 ||
      std::sscanf(s.c_str(), "0x%8x%n", &v, &consumed) != 1 ||
      static_cast<std::size_t>(consumed) != s.size()) {
    n.fail("must be a number or a hex string such as \"0x233510DE\"");
  }
  return v;
}

// GPM exists from Hopper on: the data-centre Hopper and Blackwell names.
bool gpm_by_name(const std::string& name) {
  for (const char* model : {"H100", "H200", "H800", "H20", "GH200", "B100", "B200", "GB200"}) {
    if (name.find(model) != std::string::npos) return true;
  }
  return false;
}

void default_series(DeviceSpec& d, Field f, double value) {
  d.at(f).value = value;
}

DeviceSpec parse_device(const Node& n, unsigned index, ParseContext& ctx) {
  n.expect_object({"name",
                   "uuid",
                   "serial",
                   "pci_bus_id",
                   "pci_device_id",
                   "pci_subsystem_id",
                   "minor_number",
                   "memory_total_bytes",
                   "memory_reserved_bytes",
                   "max_sm_clock_mhz",
                   "max_mem_clock_mhz",
                   "max_graphics_clock_mhz",
                   "persistence_mode",
                   "ecc_enabled",
                   "ecc_pending",
                   "vbios_version",
                   "compute_mode",
                   "mig_mode_current",
                   "mig_mode_pending",
                   "pcie_link_gen_max",
                   "pcie_link_gen_gpu_max",
                   "pcie_link_width_max",
                   "inforom_image_version",
                   "display_active",
                   "accounting_mode",
                   "display_mode",
                   "brand",
                   "architecture",
                   "board_id",
                   "module_id",
                   "multi_gpu_board",
                   "board_part_number",
                   "gsp_firmware_version",
                   "virtualization_mode",
                   "addressing_mode",
                   "pci_base_class",
                   "pci_sub_class",
                   "accounting_buffer_size",
                   "recovery_action",
                   "c2c_enabled",
                   "memory_power_mw",
                   "inforom_oem_version",
                   "inforom_ecc_version",
                   "inforom_power_version",
                   "power_limit_mw",
                   "power_default_limit_mw",
                   "power_min_limit_mw",
                   "power_max_limit_mw",
                   "applications_graphics_clock_mhz",
                   "applications_mem_clock_mhz",
                   "default_applications_graphics_clock_mhz",
                   "default_applications_mem_clock_mhz",
                   "energy_at_start_mj",
                   "fields",
                   "unsupported",
                   "errors",
                   "latency_us",
                   "processes",
                   "xid_events",
                   "ecc_events",
                   "gpm_supported",
                   "lost_at_s",
                   "recovers_at_s"});
  DeviceSpec d;
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-4000-8000-%012x", index);
  d.uuid = buf;
  d.serial = std::to_string(1650000000000ULL + index);
  std::snprintf(buf, sizeof buf, "%08X:%02X:00.0", (index + 1) / 256, (index + 1) % 256);
  parse_pci_bus_id(n, buf, d);
  d.minor_number = index;

  if (auto v = n.get("name")) d.name = detail::expanded_string(*v, 95, index);
  if (auto v = n.get("uuid")) d.uuid = detail::expanded_string(*v, 79, index);
  if (auto v = n.get("serial")) d.serial = detail::expanded_string(*v, 29, index);
  if (auto v = n.get("pci_bus_id")) parse_pci_bus_id(*v, detail::expanded_string(*v, 16, index), d);
  if (auto v = n.get("pci_device_id")) d.pci_device_id = parse_u32_or_hex(*v);
  if (auto v = n.get("pci_subsystem_id")) d.pci_subsystem_id = parse_u32_or_hex(*v);
  if (auto v = n.get("minor_number")) d.minor_number = static_cast<unsigned>(v->uint(1U << 20U));
  if (auto v = n.get("memory_total_bytes")) d.memory_total_bytes = v->uint(1ULL << 50U);
  if (auto v = n.get("memory_reserved_bytes")) {
    d.memory_reserved_bytes = v->uint(d.memory_total_bytes);
  }
  if (auto v = n.get("max_sm_clock_mhz"))
    d.max_sm_clock_mhz = static_cast<unsigned>(v->uint(100000));
  if (auto v = n.get("max_mem_clock_mhz"))
    d.max_mem_clock_mhz = static_cast<unsigned>(v->uint(100000));
  if (auto v = n.get("max_graphics_clock_mhz")) {
    d.max_graphics_clock_mhz = static_cast<unsigned>(v->uint(100000));
  }
  if (auto v = n.get("persistence_mode")) d.persistence_mode = v->boolean();
  if (auto v = n.get("ecc_enabled")) d.ecc_enabled = v->boolean();
  if (auto v = n.get("ecc_pending")) d.ecc_pending = v->boolean();
  if (auto v = n.get("vbios_version")) d.vbios_version = v->string(31);
  if (auto v = n.get("compute_mode")) d.compute_mode = static_cast<unsigned>(v->uint(3));
  if (auto v = n.get("mig_mode_current")) d.mig_mode_current = v->boolean();
  if (auto v = n.get("mig_mode_pending")) d.mig_mode_pending = v->boolean();
  if (auto v = n.get("pcie_link_gen_max")) d.pcie_link_gen_max = static_cast<unsigned>(v->uint(16));
  if (auto v = n.get("pcie_link_gen_gpu_max")) {
    d.pcie_link_gen_gpu_max = static_cast<unsigned>(v->uint(16));
  }
  if (auto v = n.get("pcie_link_width_max")) {
    d.pcie_link_width_max = static_cast<unsigned>(v->uint(32));
  }
  if (auto v = n.get("inforom_image_version")) d.inforom_image_version = v->string(15);
  if (auto v = n.get("display_active")) d.display_active = v->boolean();
  if (auto v = n.get("accounting_mode")) d.accounting_mode = v->boolean();
  if (auto v = n.get("display_mode")) d.display_mode = v->boolean();
  for (auto [key, member, max] :
       {std::tuple{"brand", &DeviceSpec::brand, 255ULL},
        std::tuple{"architecture", &DeviceSpec::architecture, 0xffffffffULL},
        std::tuple{"board_id", &DeviceSpec::board_id, 0xffffffffULL},
        std::tuple{"module_id", &DeviceSpec::module_id, 0xffffffffULL},
        std::tuple{"virtualization_mode", &DeviceSpec::virtualization_mode, 255ULL},
        std::tuple{"addressing_mode", &DeviceSpec::addressing_mode, 255ULL},
        std::tuple{"pci_base_class", &DeviceSpec::pci_base_class, 255ULL},
        std::tuple{"pci_sub_class", &DeviceSpec::pci_sub_class, 255ULL},
        std::tuple{"accounting_buffer_size", &DeviceSpec::accounting_buffer_size, 0xffffffffULL},
        std::tuple{"recovery_action", &DeviceSpec::recovery_action, 255ULL},
        std::tuple{"memory_power_mw", &DeviceSpec::memory_power_mw, 100000000ULL}})
    if (auto v = n.get(key)) d.*member = static_cast<unsigned>(v->uint(max));
  if (auto v = n.get("multi_gpu_board")) d.multi_gpu_board = v->boolean();
  if (auto v = n.get("c2c_enabled")) d.c2c_enabled = v->boolean();
  if (auto v = n.get("board_part_number")) d.board_part_number = v->string(79);
  if (auto v = n.get("gsp_firmware_version")) d.gsp_firmware_version = v->string(63);
  for (auto [key, member] :
       {std::pair{"inforom_oem_version", &DeviceSpec::inforom_oem_version},
        std::pair{"inforom_ecc_version", &DeviceSpec::inforom_ecc_version},
        std::pair{"inforom_power_version", &DeviceSpec::inforom_power_version}})
    if (auto v = n.get(key)) d.*member = v->string(15);
  if (auto v = n.get("power_limit_mw"))
    d.power_limit_mw = static_cast<unsigned>(v->uint(100000000));
  for (auto [key, member] :
       {std::pair{"power_default_limit_mw", &DeviceSpec::power_default_limit_mw},
        std::pair{"power_min_limit_mw", &DeviceSpec::power_min_limit_mw},
        std::pair{"power_max_limit_mw", &DeviceSpec::power_max_limit_mw}})
    if (auto v = n.get(key)) d.*member = static_cast<unsigned>(v->uint(100000000));
  for (auto [key, member] :
       {std::pair{"applications_graphics_clock_mhz", &DeviceSpec::applications_graphics_clock_mhz},
        std::pair{"applications_mem_clock_mhz", &DeviceSpec::applications_mem_clock_mhz},
        std::pair{"default_applications_graphics_clock_mhz",
                  &DeviceSpec::default_applications_graphics_clock_mhz},
        std::pair{"default_applications_mem_clock_mhz",
                  &DeviceSpec::default_applications_mem_clock_mhz}})
    if (auto v = n.get(key)) d.*member = static_cast<unsigned>(v->uint(100000));
  if (auto v = n.get("energy_at_start_mj")) d.energy_at_start_mj = v->number(0, 1e18);

  // Defaults of the series, then the scenario's own.
  default_series(d, Field::kTemperatureGpuC, 35);
  default_series(d, Field::kTemperatureMemoryC, 35);
  default_series(d, Field::kPowerDrawMw, 70000);
  default_series(d, Field::kPowerLimitMw, d.power_limit_mw);
  default_series(d, Field::kSmClockMhz, d.max_sm_clock_mhz);
  default_series(d, Field::kMemClockMhz, d.max_mem_clock_mhz);
  default_series(d, Field::kGraphicsClockMhz, d.max_graphics_clock_mhz);
  default_series(d, Field::kFanSpeedPct, 30);
  default_series(d, Field::kPcieLinkGen, d.pcie_link_gen_max);
  default_series(d, Field::kPcieLinkWidth, d.pcie_link_width_max);
  bool instant_given = false;
  bool average_given = false;
  bool gr_engine_given = false;
  bool graphics_given = false;
  if (auto fields = n.get("fields")) {
    if (!fields->is_object()) fields->fail("expected an object of series");
    for (const auto& [key, unused] : fields->json().items()) {
      const Node f = fields->at(key);
      const auto field = field_from_name(key);
      if (!field || static_cast<std::size_t>(*field) >= kSeriesCount) {
        f.fail("unknown field (see docs/scenarios.md for the list)");
      }
      const auto id = static_cast<unsigned>(*field);
      d.at(*field) = detail::parse_series(f, is_code_field(*field),
                                          detail::noise_stream(ctx.seed, index, id), ctx);
      instant_given = instant_given || *field == Field::kPowerInstantMw;
      average_given = average_given || *field == Field::kPowerAverageMw;
      gr_engine_given = gr_engine_given || *field == Field::kGrEngineActivePct;
      graphics_given = graphics_given || *field == Field::kGraphicsClockMhz;
      if (*field == Field::kEnergyMj) d.energy_from_power = false;
    }
  }
  if (!instant_given) d.at(Field::kPowerInstantMw) = d.at(Field::kPowerDrawMw);
  if (!average_given) d.at(Field::kPowerAverageMw) = d.at(Field::kPowerDrawMw);
  if (!gr_engine_given) d.at(Field::kGrEngineActivePct) = d.at(Field::kUtilizationGpuPct);
  if (!graphics_given && d.max_graphics_clock_mhz == d.max_sm_clock_mhz) {
    d.at(Field::kGraphicsClockMhz) = d.at(Field::kSmClockMhz);
  }
  if (auto u = n.get("unsupported")) {
    const std::size_t size = u->expect_array(kFieldCount);
    for (std::size_t i = 0; i < size; ++i) {
      const Node item = u->at(i);
      const auto field = field_from_name(item.string(64));
      if (!field) item.fail("unknown field (see docs/scenarios.md for the list)");
      d.unsupported.set(static_cast<std::size_t>(*field));
    }
  }
  if (auto v = n.get("errors")) d.errors = detail::parse_errors(*v, ctx);
  if (auto v = n.get("latency_us")) d.latencies = detail::parse_latencies(*v, ctx);
  if (auto v = n.get("processes")) d.processes = detail::parse_processes(*v, index, ctx);
  if (auto v = n.get("xid_events")) d.xid_events = detail::parse_xid_events(*v, ctx);
  if (auto v = n.get("ecc_events")) {
    auto ecc = detail::parse_ecc_events(*v, ctx);
    d.xid_events.insert(d.xid_events.end(), ecc.begin(), ecc.end());
  }
  detail::sort_events(d.xid_events);
  d.gpm_supported = gpm_by_name(d.name);
  if (auto v = n.get("gpm_supported")) d.gpm_supported = v->boolean();
  if (auto v = n.get("lost_at_s")) d.lost_at_s = v->number(0, kMaxTimeS);
  if (auto v = n.get("recovers_at_s")) {
    if (!d.lost_at_s) v->fail("needs lost_at_s");
    d.recovers_at_s = v->number(0, kMaxTimeS);
    if (*d.recovers_at_s <= *d.lost_at_s) v->fail("must be > lost_at_s");
  }
  return d;
}

// Devices from "devices", "device_template" and "repeat_devices".
void parse_devices(const Node& root, Scenario& sc, ParseContext& ctx) {
  const auto devices = root.get("devices");
  const auto tmpl = root.get("device_template");
  const auto repeat = root.get("repeat_devices");
  std::size_t listed = devices ? devices->expect_array(kMaxDevices) : 0;
  ParseContext template_cost;
  if (tmpl) {
    template_cost.seed = ctx.seed;
    (void)parse_device(*tmpl, 0, template_cost);  // errors in the template name the template
  }
  std::size_t count = listed;
  if (repeat) {
    if (!tmpl) repeat->fail("needs a device_template");
    count = repeat->uint(kMaxDevices);
    if (listed > count) devices->fail("has more entries than repeat_devices");
  } else if (!devices) {
    root.fail("missing key \"devices\" (or \"device_template\" with \"repeat_devices\")");
  }
  // Every device starts from the template, so its size counts once per device: check before
  // building anything, so that a hostile template fails at once rather than after 2M items.
  if (template_cost.items_total * count > kMaxItemsTotal ||
      template_cost.processes_total * count > kMaxProcessesTotal) {
    (repeat ? *repeat : *tmpl)
        .fail("the template's points, processes, events and rules times " + std::to_string(count) +
              " devices exceed the scenario's limits (" + std::to_string(kMaxItemsTotal) +
              " items, " + std::to_string(kMaxProcessesTotal) + " processes)");
  }
  sc.devices.reserve(count);
  std::map<std::string, std::string> seen;  // uuid / bus id -> first path
  for (std::size_t i = 0; i < count; ++i) {
    const std::string path = "devices[" + std::to_string(i) + "]";
    Json merged = tmpl ? tmpl->json() : Json::object();
    if (i < listed) {
      const Node own = devices->at(i);
      if (!own.is_object())
        own.fail(std::string("expected an object, got ") + own.json().type_name());
      merged.merge_patch(own.json());
    }
    const Node node(merged, path);
    sc.devices.push_back(parse_device(node, static_cast<unsigned>(i), ctx));
    const DeviceSpec& d = sc.devices.back();
    for (const auto& [key, value] : {std::pair{"uuid", d.uuid},
                                     {"pci_bus_id", d.pci_bus_id},
                                     {"minor_number", std::to_string(d.minor_number)}}) {
      const auto [it, fresh] = seen.emplace(std::string(key) + "=" + value, path);
      if (!fresh) throw detail::ScenarioError(path + "." + key + ": same as " + it->second);
    }
  }
}

}  // namespace

std::optional<int> return_code_from_name(std::string_view name) {
  if (name.rfind("NVML_ERROR_", 0) == 0) name.remove_prefix(11);
  if (name == "NVML_SUCCESS") name = "SUCCESS";
  for (int code = 0; code <= 1000; ++code) {
    if (code > 40 && code != 999) continue;
    const auto rc = static_cast<nvmlReturn_t>(code);
    if (code != 999 && nvml::return_code_name(rc) == "UNKNOWN") continue;  // not a known code
    if (nvml::return_code_name(rc) == name) return code;
  }
  return std::nullopt;
}

ParseResult parse_scenario(std::string_view json_text, std::string_view default_name) {
  ParseResult result;
  try {
    if (json_text.size() > kMaxScenarioBytes) throw detail::ScenarioError("scenario is too large");
    const Json doc = detail::parse_json(json_text, kMaxJsonDepth);
    const Node root(doc, "");
    root.expect_object({"name", "description", "driver_version", "nvml_version",
                        "cuda_driver_version", "init", "seed", "latency_us", "devices",
                        "device_template", "repeat_devices"});
    Scenario sc;
    sc.name = std::string(default_name);
    if (auto v = root.get("name")) sc.name = v->string(200);
    if (auto v = root.get("description")) sc.description = v->string(10000);
    if (auto v = root.get("driver_version")) sc.driver_version = v->string(79);
    if (auto v = root.get("nvml_version")) sc.nvml_version = v->string(79);
    if (auto v = root.get("cuda_driver_version")) {
      sc.cuda_driver_version = static_cast<int>(v->uint(1000000));
    }
    if (auto init = root.get("init")) {
      init->expect_object({"error", "latency_us"});
      if (auto e = init->get("error")) {
        const auto code = return_code_from_name(e->string(64));
        if (!code) e->fail("must be an NVML error name such as \"DRIVER_NOT_LOADED\"");
        sc.init_error = *code;
      }
      if (auto l = init->get("latency_us")) sc.init_latency_us = l->number(0, 60e6);
    }
    ParseContext ctx;
    if (auto v = root.get("seed")) ctx.seed = sc.seed = v->uint(~0ULL);
    if (auto v = root.get("latency_us")) sc.latencies = detail::parse_latencies(*v, ctx);
    parse_devices(root, sc, ctx);
    result.scenario = std::move(sc);
  } catch (const detail::ScenarioError& e) {
    result.error = e.what();
  } catch (const std::exception& e) {  // bad_alloc and the like: still an answer, not a crash
    result.error = std::string("cannot read scenario: ") + e.what();
  }
  return result;
}

ParseResult load_scenario_file(const std::string& path) {
  ParseResult result;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    result.error = path + ": cannot read: " + ec.message();
    return result;
  }
  if (size > kMaxScenarioBytes) {
    result.error = path + ": scenario is too large (" + std::to_string(size) + " bytes)";
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    result.error = path + ": cannot read";
    return result;
  }
  result = parse_scenario(text.str(), std::filesystem::path(path).stem().string());
  if (!result.error.empty()) result.error = path + ": " + result.error;
  return result;
}

ResolvedPath resolve_scenario_path(std::string_view name_or_path, std::string_view scenario_dir,
                                   std::string_view builtin_dir) {
  const std::string value(name_or_path);
  if (value.empty()) return {"", "no scenario given"};
  const bool is_path = value.find('/') != std::string::npos ||
                       (value.size() > 5 && value.compare(value.size() - 5, 5, ".json") == 0);
  if (is_path) return {value, ""};
  std::string tried;
  for (std::string_view dir : {scenario_dir, builtin_dir}) {
    if (dir.empty()) continue;
    const std::string candidate = std::string(dir) + "/" + value + ".json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return {candidate, ""};
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  return {"", "scenario \"" + value + "\" not found (looked for " + tried +
                  "); set GPUMON_SCENARIO_DIR or give a path"};
}

}  // namespace gpumon::fake
