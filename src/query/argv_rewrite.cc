// SPDX-License-Identifier: MIT
#include "query/argv_rewrite.h"

namespace gpumon::query {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "-5", "+2", "-.5": a value that merely starts with a sign, not an option.
bool is_signed_number(std::string_view word) {
  if (word.size() < 2 || (word[0] != '-' && word[0] != '+')) return false;
  return is_digit(word[1]) || (word[1] == '.' && word.size() > 2 && is_digit(word[2]));
}

// Whether `word` may be taken as the value of an option with an optional value.
bool is_value(std::string_view word) {
  return !word.empty() && (word[0] != '-' || is_signed_number(word));
}

}  // namespace

std::vector<std::string> rewrite_nvidia_smi_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view word = args[i];
    if (word == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (word == "-lms") {
      out.emplace_back("--loop-ms");
    } else if (word.starts_with("-lms=")) {
      out.push_back("--loop-ms=" + std::string(word.substr(5)));
    } else if (word == "-l" || word == "--loop") {
      if (i + 1 < args.size() && is_value(args[i + 1])) {
        out.push_back("--loop=" + args[++i]);
      } else {
        out.push_back("--loop=" + std::string(kDefaultLoopSeconds));
      }
    } else if (word.starts_with("-l=")) {
      out.push_back("--loop=" + std::string(word.substr(3)));
    } else if (word.size() > 2 && word.starts_with("-l") && (is_digit(word[2]) || word[2] == '.')) {
      out.push_back("--loop=" + std::string(word.substr(2)));
    } else if (word.size() >= 3 && word[0] == '-' && word[2] == '=' &&
               (word[1] == 'i' || word[1] == 'c' || word[1] == 'f' || word[1] == 'd')) {
      out.emplace_back(word.substr(0, 2));
      out.emplace_back(word.substr(3));
    } else if (word.size() > 3 && word.starts_with("--") && word.back() == '=' &&
               word.find('=') == word.size() - 1) {
      // "--query-gpu=": CLI11 would take the next word as the value; make it an explicit "".
      out.emplace_back(word.substr(0, word.size() - 1));
      out.emplace_back();
    } else {
      out.emplace_back(word);
    }
  }
  return out;
}

}  // namespace gpumon::query
