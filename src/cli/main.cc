// SPDX-License-Identifier: MIT
// The gpumon executable: builds the Console over the real terminal and hands over to run_cli.
// No exception leaves main: each becomes "gpumon: <what>" and exit status 2.
#include <unistd.h>

#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "cli/console.h"

namespace {

std::string self_path() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const gpumon::cli::Console console{
        std::cout, std::cerr, STDOUT_FILENO, STDIN_FILENO, gpumon::cli::process_env, self_path()};
    const int rc = gpumon::cli::run_cli(args, console);
    std::cout.flush();
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "gpumon: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "gpumon: unexpected error\n";
  }
  return 2;
}
