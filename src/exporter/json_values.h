// SPDX-License-Identifier: MIT
// The values of the JSON API (render_json.cc, render_training.cc; docs/exporter.md): missing is
// null, never 0; text from outside (process, user and device names) is cleaned to valid UTF-8
// first.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "host/text_clean.h"

namespace gpumon::exporter {

/// The value of `v` (a std::optional or a Reading), or null when it is missing.
template <typename Maybe>
nlohmann::json or_null(const Maybe& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// Text from outside (a std::optional or a Reading of a string), cleaned, or null.
template <typename Maybe>
nlohmann::json text_or_null(const Maybe& v) {
  return v ? nlohmann::json(host::clean_text(*v)) : nlohmann::json(nullptr);
}

/// The compact body. Invalid UTF-8 is replaced rather than thrown on: everything is cleaned
/// first, this is the backstop.
inline std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpumon::exporter
