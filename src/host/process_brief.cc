// SPDX-License-Identifier: MIT
#include "host/process_brief.h"

#include "host/proc_parse.h"
#include "host/text_clean.h"

namespace gpumon::host {

std::optional<ProcessBrief> read_process_brief(const ProcFiles& files, unsigned pid,
                                               std::size_t max_command_bytes) {
  const std::string dir = std::to_string(pid);
  const FileText stat = files.read(dir + "/stat", 4096);
  if (!stat.ok()) return std::nullopt;
  const std::optional<ProcStat> st = parse_stat(stat.text);
  if (!st) return std::nullopt;
  ProcessBrief b;
  b.pid = pid, b.ppid = st->ppid, b.start_ticks = st->start_ticks;
  // An unreadable or empty cmdline (a kernel thread, a zombie): the name, as ps shows it.
  if (const FileText cmdline = files.read(dir + "/cmdline", max_command_bytes + 64); cmdline.ok())
    b.command = command_line_from_proc(cmdline.text, max_command_bytes);
  if (b.command.empty()) b.command = "[" + clean_text(st->comm) + "]";
  return b;
}

}  // namespace gpumon::host
