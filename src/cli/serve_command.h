// SPDX-License-Identifier: MIT
// `gpumon serve`: runs the sampler and serves /metrics, /health, the JSON API and the web
// dashboard over HTTP(S) until SIGINT or SIGTERM (then exit 0). docs/exporter.md.
//
// Built only with src/http and src/exporter (libmicrohttpd and friends); without them
// `gpumon serve` says so (cli_app.cc).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cli/console.h"
#include "node/node_log.h"

namespace gpumon::cli {

struct ServeOptions {
  std::string listen = "127.0.0.1:9477";
  std::chrono::milliseconds interval{1000};
  bool dcgm_compat = false;  ///< --compat dcgm
  bool show_uuid = false;    ///< --uuid; by default with --compat dcgm (DCGM labels carry it)
  bool pcie = false;         ///< --pcie; by default with --compat dcgm (its PROF_PCIE_* fields)
  std::string web_config_file;
  std::string record_path;   ///< --record FILE: also write a recording
  bool force = false;        ///< --force: overwrite an existing --record FILE
  std::string agent_socket;  ///< --agent-socket PATH; empty: the default path
  bool no_agent = false;     ///< --no-agent: host no agent socket
  bool no_diagnose = false;  ///< --no-diagnose: run no live diagnoses
  node::LogFormat log_format = node::LogFormat::kText;  ///< --log-format
};

/// Parses the arguments after `serve`. Returns "" when they parsed, "help" for -h/--help, or
/// what is wrong with them.
std::string parse_serve_args(const std::vector<std::string>& args, ServeOptions& out);

/// The usage text of `gpumon serve --help`.
std::string serve_usage();

int run_serve_command(const std::vector<std::string>& args, const Console& console);

}  // namespace gpumon::cli
