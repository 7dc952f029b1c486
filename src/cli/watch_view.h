// SPDX-License-Identifier: MIT
// One frame of `gpumon watch`: a function of the snapshot, the histories and the screen size.
// The first line is always the SIMULATED label (reverse video) when the GPUs are simulated,
// else the title bar; then one block per GPU, then as many processes as fit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/gpu_cells.h"
#include "cli/history.h"
#include "cli/snapshot.h"
#include "cli/styled_line.h"
#include "cli/watch_keys.h"

namespace gpumon::cli {

struct ViewOptions {
  std::size_t width = 80;   ///< terminal columns
  std::size_t height = 24;  ///< terminal rows
  RenderStyle style{false, true};
  bool unicode = true;      ///< block-character sparklines; ASCII ones otherwise
  double interval_s = 1.0;  ///< shown in the title
  /// The source reads PCIe throughput: each GPU that can give it gets a PCIe line (N/A until
  /// its first read), so the layout does not change as reads come and go.
  bool pcie = false;
  std::string version;
  Thresholds thresholds;
};

/// What the frame showed, for the keys that page (PgUp/PgDn move by a page of GPUs).
struct FrameLayout {
  std::size_t gpus_shown = 0;     ///< GPU blocks or lines in this frame
  std::size_t gpus_per_page = 0;  ///< how many a full page holds (all of them when not paged)
};

/// At most `height` lines, each at most `width - 1` columns (the last column stays empty so a
/// terminal never wraps or scrolls); the last line is the keys (or the prompt being answered).
/// GPU blocks take three lines each (four with the PCIe line) when they fit, one line each
/// otherwise, from `ui.gpu_offset`. `lines` are the processes as arrange_processes() lists them for
/// `ui` (null: arranged here, without launchers).
std::vector<std::string> render_watch_frame(const Snapshot& snap, const GpuHistories& history,
                                            const ViewOptions& options, const WatchUi& ui = {},
                                            const std::vector<ProcessLine>* lines = nullptr,
                                            FrameLayout* layout = nullptr);

/// True when LC_ALL, LC_CTYPE or LANG (the first one set) names a UTF-8 locale.
bool locale_is_utf8(const char* lc_all, const char* lc_ctype, const char* lang);

}  // namespace gpumon::cli
