// SPDX-License-Identifier: MIT
#include "cli/watch_command.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <map>
#include <thread>
#include <utility>

#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/history.h"
#include "cli/process_signal.h"
#include "cli/process_view.h"
#include "cli/rank_rows.h"
#include "cli/snapshot_gather.h"
#include "cli/snapshot_text.h"
#include "cli/terminal.h"
#include "cli/version.h"
#include "cli/watch_source.h"
#include "cli/watch_view.h"
#include "host/process_inspector.h"

namespace gpumon::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds interval_of(const WatchFlags& flags) {
  return std::chrono::milliseconds(std::llround(flags.interval_s * 1000.0));
}

// Not a terminal: the snapshot text every interval, separated by blank lines.
// The first frame waits for the sampler's first tick this long at most.
constexpr std::chrono::seconds kFirstTickWait{30};

int plain_loop(WatchSource& source, host::ProcessInspector& inspector, const WatchFlags& flags,
               const Console& console) {
  TextOptions o;
  o.version = version_number();
  const std::string host = host_name();
  const std::string rank_file = rank_memory_file(console.getenv("GPUMON_AGENT_SOCKET"));
  auto next = Clock::now();
  for (std::uint64_t frame = 0; flags.count == 0 || frame < flags.count; ++frame) {
    if (frame > 0) {
      std::this_thread::sleep_until(next);
      console.out << '\n';
    }
    next += interval_of(flags);
    std::optional<Snapshot> snap = source.latest(inspector, host, kFirstTickWait);
    if (snap) add_ranks(*snap, rank_file);
    if (!snap) {
      console.err << "gpumon watch: the GPUs gave no sample within " << kFirstTickWait.count()
                  << " s\n";
      return 1;
    }
    console.out << format_snapshot_text(*snap, o);
    console.out.flush();
    if (!console.out) break;  // the reader went away
  }
  return 0;
}

// The launchers the tree view groups ranks under (torchrun, a shell script), read afresh for
// each frame while the tree is on.
std::map<unsigned, host::ProcessBrief> read_launchers(const Snapshot& snap,
                                                      const host::ProcFiles& proc) {
  std::map<unsigned, host::ProcessBrief> out;
  for (unsigned pid : launcher_pids(snap))
    if (auto b = host::read_process_brief(proc, pid)) out.emplace(pid, std::move(*b));
  return out;
}

std::vector<unsigned> gpu_indices(const Snapshot& snap) {
  std::vector<unsigned> out;
  for (const GpuSnapshot& g : snap.gpus) out.push_back(g.info.index);
  return out;
}

int full_screen_loop(WatchSource& source, host::ProcessInspector& inspector,
                     const host::ProcFiles& proc, const WatchFlags& flags, const Console& console) {
  std::string error;
  auto screen = FullScreen::enter(console.in_fd, console.out_fd, &error);
  if (!screen) {
    console.err << "gpumon: cannot open the live view: " << error << '\n';
    return 1;
  }
  ViewOptions view;
  view.interval_s = flags.interval_s;
  view.pcie = true;  // WatchSource reads it
  view.version = version_number();
  const bool color =
      !flags.no_color && color_wanted(true, console.getenv("NO_COLOR"), console.getenv("TERM"));
  view.style = RenderStyle{color, true};
  view.unicode = locale_is_utf8(console.getenv("LC_ALL").value_or("").c_str(),
                                console.getenv("LC_CTYPE").value_or("").c_str(),
                                console.getenv("LANG").value_or("").c_str());
  GpuHistories history;
  const std::string host = host_name();
  const std::string rank_file = rank_memory_file(console.getenv("GPUMON_AGENT_SOCKET"));
  Snapshot snap;
  host::HostUsageReader host_usage(proc);
  WatchUi ui;
  std::map<unsigned, host::ProcessBrief> launchers;
  std::vector<ProcessLine> lines;
  FrameLayout layout;
  auto draw = [&] {
    const TerminalSize size = terminal_size(console.out_fd).value_or(TerminalSize{});
    view.width = size.cols;
    view.height = size.rows;
    lines = arrange_processes(snap, ui.procs, launchers);
    screen->draw(render_watch_frame(snap, history, view, ui, &lines, &layout));
  };

  const auto interval = interval_of(flags);
  std::uint64_t frames = 0;
  auto next = Clock::now();
  bool quit = false;
  std::string unfinished;  // an escape sequence the last read ended inside
  while (!quit) {
    if (Clock::now() >= next) {
      if (flags.count != 0 && frames >= flags.count) break;
      if (std::optional<Snapshot> latest = source.latest(inspector, host, kFirstTickWait)) {
        snap = std::move(*latest);
        add_ranks(snap, rank_file);
      }
      snap.host_usage = host_usage.read();
      history.record(snap);
      launchers = ui.procs.tree ? read_launchers(snap, proc) : decltype(launchers){};
      ++frames;
      draw();
      next += interval;
      if (next < Clock::now()) next = Clock::now() + interval;  // fell behind: do not burst
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    // A sequence cut between two reads waits this long for its end, then counts as typed.
    constexpr std::chrono::milliseconds kSequenceWait{50};
    std::string typed = screen->wait_for_input(
        unfinished.empty() ? wait + std::chrono::milliseconds(1) : std::min(wait, kSequenceWait));
    const bool flush = typed.empty() && !unfinished.empty();
    typed = std::exchange(unfinished, std::string()) + typed;
    if (!typed.empty()) {
      for (const Key& key : decode_keys(typed, flush ? nullptr : &unfinished)) {
        const bool tree = ui.procs.tree;
        UiAction action = handle_key(ui, key, lines, gpu_indices(snap), layout.gpus_per_page);
        if (action.quit) quit = true;
        if (action.send) ui.message = send_confirmed_signal(proc, *action.send, ::kill);
        if (ui.procs.tree && !tree) launchers = read_launchers(snap, proc);
        lines = arrange_processes(snap, ui.procs, launchers);
      }
      if (!quit) draw();
    }
    const PendingSignals sig = screen->take_signals();
    if (sig.quit) break;
    if (sig.suspend) {
      screen->suspend();
      draw();
    } else if (sig.resized) {
      draw();
    }
  }
  screen.reset();  // restores the terminal before anything else is printed
  return 0;
}

}  // namespace

bool use_full_screen(bool out_is_tty, const std::optional<std::string>& term) {
  return out_is_tty && term && !term->empty() && *term != "dumb";
}

int run_watch_command(const std::vector<std::string>& args, const Console& console) {
  CLI::App app("gpumon watch: the live view of every GPU and its processes", "gpumon watch");
  WatchFlags flags;
  app.add_option("-i,--interval", flags.interval_s, "Seconds between refreshes (at least 0.1)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("-c,--count", flags.count, "Exit after this many refreshes (0: until q)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--no-color", flags.no_color, "No colour (as NO_COLOR=1)");
  if (auto done = parse_args(app, args, console, "gpumon watch --help")) return *done;

  const auto source = WatchSource::open(flags.interval_s, console);
  if (!source) return kExitNoGpu;
  host::DiskProcFiles proc;
  host::UserNames users;
  host::ProcessInspector inspector(proc, users);
  if (use_full_screen(console.out_is_tty(), console.getenv("TERM"))) {
    return full_screen_loop(*source, inspector, proc, flags, console);
  }
  return plain_loop(*source, inspector, flags, console);
}

}  // namespace gpumon::cli
