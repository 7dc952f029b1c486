// SPDX-License-Identifier: MIT
// Sends three steps to the agent at argv[1] through the installed gpumon::client.
#include <gpumon/monitor.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  gpumon::MonitorOptions o;
  o.socket_path = argv[1];
  o.start_agent = false;
  gpumon::Monitor mon = gpumon::Monitor::start(o);
  if (!mon.active()) return 2;
  for (int i = 0; i < 3; ++i) {
    const int batch = mon.fetch([i] { return i; });
    (void)batch;
    mon.step();
  }
  mon.close();
  std::printf("consumer: %llu steps\n", static_cast<unsigned long long>(mon.stats().steps));
  return mon.stats().steps == 3 ? 0 : 3;
}
