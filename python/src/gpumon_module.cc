// SPDX-License-Identifier: MIT
// _gpumon: the Python binding of the agent client (src/agent/agent_client.h). It links no
// libtorch and no libpython-specific C++ beyond pybind11, so one build works with any torch.
// Every call is non-blocking except close(), which releases the GIL while it waits.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>

#include "agent/agent_client.h"
#include "agent/socket_path.h"
#include "client/agent_launcher.h"
#include "client/client_core.h"
#include "client/hand_over_schedule.h"
#include "diagnose/finding_identity.h"
#include "gpu/pci_bus_id.h"
#include "step_clock_binding.h"
#include "training/protocol.h"

namespace py = pybind11;
using gpumon::agent::AgentClient;
using gpumon::agent::AgentClientOptions;

namespace {

// What finding_identity.h reads of a compact finding the agent pushed (a dict of
// json.loads; diagnose/live/live_findings.h writes it). Anything else in a list is skipped.
struct PushedFinding {
  std::string id;
  std::vector<long long> gpus, ranks, pids;
};

std::vector<PushedFinding> pushed_findings(const py::sequence& list) {
  auto numbers = [](const py::dict& d, const char* key) {
    std::vector<long long> out;
    if (!d.contains(key) || !py::isinstance<py::list>(d[key])) return out;
    for (const auto& x : d[key].cast<py::list>())
      if (py::isinstance<py::int_>(x)) out.push_back(x.cast<long long>());
    return out;
  };
  std::vector<PushedFinding> out;
  out.reserve(list.size());
  for (const auto& item : list) {
    PushedFinding f;
    if (py::isinstance<py::dict>(item)) {
      const auto d = item.cast<py::dict>();
      if (d.contains("id") && py::isinstance<py::str>(d["id"])) f.id = d["id"].cast<std::string>();
      f.gpus = numbers(d, "gpus"), f.ranks = numbers(d, "ranks"), f.pids = numbers(d, "pids");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_gpumon, m) {
  m.doc() = "gpumon's agent client (see docs/python.md); use the gpumon package, not this.";
  m.attr("MAX_MESSAGE_BYTES") = gpumon::training::kMaxMessageBytes;
  m.attr("PROTOCOL_VERSION") = gpumon::training::kProtocolVersion;
  m.def("default_socket_path", &gpumon::agent::default_socket_path);
  m.def("rank_memory_path", &gpumon::agent::rank_memory_path, py::arg("socket_path"),
        "Where the node serving that agent socket publishes its ranks' memory and GPU readings.");
  m.def("check_owned_socket", &gpumon::agent::check_owned_socket,
        "Empty when the path is a socket of this user, else why not.");
  // The client core both clients share (src/client/client_core.h).
  m.attr("HAND_OVER_INTERVAL_S") =
      std::chrono::duration<double>(gpumon::client::HandOverSchedule::kInterval).count();
  m.def("fork_generation", &gpumon::agent::fork_generation,
        "Bumped in every forked child: compare with the value taken at start.");
  m.def(
      "attach_agent",
      [](const std::string& socket_path, bool start_agent, const std::string& record,
         const std::string& fallback_binary, const std::string& own_binary) {
        gpumon::client::AgentAttach a;
        {
          py::gil_scoped_release release;  // may start an agent and wait for it
          a = gpumon::client::attach_agent(
              {socket_path, start_agent, record, fallback_binary, own_binary});
        }
        return py::make_tuple(a.socket_path, a.warning_kind, a.warning);
      },
      py::arg("socket_path") = "", py::arg("start_agent") = true, py::arg("record") = "",
      py::arg("fallback_binary") = "", py::arg("own_binary") = "",
      "(socket path, warning kind, warning): the agent to talk to, started when none listens; "
      "a non-empty kind means there is none and gpumon does nothing.");
  m.def(
      "find_gpumon_binary",
      [](const std::string& fallback, const std::string& own) {
        return gpumon::client::find_gpumon_binary(fallback, own);
      },
      py::arg("fallback") = "", py::arg("own") = "",
      "GPUMON_BINARY, else own, else gpumon on PATH, else fallback; or None.");
  m.def(
      "hello_line",
      [](std::optional<std::string> torch_version, std::optional<std::string> device,
         std::optional<std::string> pci_bus_id, std::optional<std::string> device_uuid) {
        return gpumon::client::hello_line({std::move(torch_version), std::move(device),
                                           std::move(pci_bus_id), std::move(device_uuid)});
      },
      py::arg("torch_version") = py::none(), py::arg("device") = py::none(),
      py::arg("pci_bus_id") = py::none(), py::arg("device_uuid") = py::none(),
      "This process's hello: pid, ranks, host and CUDA environment from here, the device given.");
  m.def(
      "device_line",
      [](std::optional<std::string> torch_version, std::optional<std::string> device,
         std::optional<std::string> pci_bus_id, std::optional<std::string> device_uuid) {
        return gpumon::client::device_line({std::move(torch_version), std::move(device),
                                            std::move(pci_bus_id), std::move(device_uuid)});
      },
      py::arg("torch_version") = py::none(), py::arg("device") = py::none(),
      py::arg("pci_bus_id") = py::none(), py::arg("device_uuid") = py::none(),
      "The `device` message: the device this process resolved after its hello.");
  m.def("same_pci_bus_id", &gpumon::same_pci_bus_id, py::arg("a"), py::arg("b"),
        "True when both parse as PCI bus ids of one device (src/gpu/pci_bus_id.h).");
  // The live findings' identity, as the agent's log and listeners see it.
  m.def(
      "compare_findings",
      [](const py::sequence& before, const py::sequence& after) {
        const auto m =
            gpumon::diagnose::match_findings(pushed_findings(before), pushed_findings(after));
        return py::make_tuple(m.appeared, m.cleared, m.changed);
      },
      py::arg("before"), py::arg("after"),
      "(appeared, cleared, changed): indices of the findings that appeared in `after`, cleared "
      "from `before`, and are still there on other GPUs / ranks / pids (into `after`). Lists "
      "of the agent's compact finding dicts; src/diagnose/finding_identity.h is the rule.");
  m.def("oom_line", &gpumon::client::oom_line, py::arg("step"), py::arg("requested_bytes"),
        py::arg("device"), py::arg("path"), "The OOM report for the agent.");

  py::class_<AgentClient>(m, "Client")
      .def(py::init([](const std::string& socket_path, std::size_t max_queue_bytes,
                       double min_backoff_s, double max_backoff_s) {
             AgentClientOptions o;
             o.socket_path = socket_path;
             o.max_queue_bytes = max_queue_bytes;
             o.min_backoff = std::chrono::milliseconds(static_cast<long>(min_backoff_s * 1000));
             o.max_backoff = std::chrono::milliseconds(static_cast<long>(max_backoff_s * 1000));
             return std::make_unique<AgentClient>(o);
           }),
           py::arg("socket_path"), py::arg("max_queue_bytes") = 256 * 1024,
           py::arg("min_backoff_s") = 0.1, py::arg("max_backoff_s") = 5.0)
      .def("set_hello", &AgentClient::set_hello, py::arg("line"))
      .def("send", &AgentClient::send, py::arg("line"),
           "Queues one message and writes what the socket takes; False when dropped.")
      .def("flush", &AgentClient::flush)
      .def(
          "close",
          [](AgentClient& c, double timeout_s) {
            py::gil_scoped_release release;
            c.close(std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
          },
          py::arg("timeout_s") = 1.0)
      .def("in_owner_process", &AgentClient::in_owner_process)
      .def("disconnects", &AgentClient::disconnects)
      .def("receive", &AgentClient::receive,
           "Reads the agent's lines that have arrived (never blocks).")
      .def("findings_seq", &AgentClient::findings_seq,
           "Changes each time the agent's latest findings line changes.")
      .def("findings_line", &AgentClient::findings_line,
           "The agent's latest findings line (JSON text), '' when none.")
      .def("stats", [](const AgentClient& c) {
        const auto s = c.stats();
        py::dict d;
        d["sent"] = s.sent;
        d["dropped"] = s.dropped;
        d["connects"] = s.connects;
        d["disconnects"] = s.disconnects;
        d["queued_bytes"] = s.queued_bytes;
        d["connected"] = s.connected;
        d["last_error"] = s.last_error;
        return d;
      });
  gpumon::python::bind_step_clock(m);
}
