// SPDX-License-Identifier: MIT
// _gpumon: the Python binding of the agent client (src/agent/agent_client.h). It links no
// libtorch and no libpython-specific C++ beyond pybind11, so one build works with any torch.
// Every call is non-blocking except close(), which releases the GIL while it waits.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>

#include "agent/agent_client.h"
#include "agent/socket_path.h"
#include "step_clock_binding.h"
#include "training/protocol.h"

namespace py = pybind11;
using gpumon::agent::AgentClient;
using gpumon::agent::AgentClientOptions;

PYBIND11_MODULE(_gpumon, m) {
  m.doc() = "gpumon's agent client (see docs/python.md); use the gpumon package, not this.";
  m.attr("MAX_MESSAGE_BYTES") = gpumon::training::kMaxMessageBytes;
  m.attr("PROTOCOL_VERSION") = gpumon::training::kProtocolVersion;
  m.def("default_socket_path", &gpumon::agent::default_socket_path);
  m.def("check_owned_socket", &gpumon::agent::check_owned_socket,
        "Empty when the path is a socket of this user, else why not.");

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
