// lib/config/option_error.cpp — Boost.Program_options error messages without the placeholder loop.
#include "config/option_error.hpp"

#include <algorithm>
#include <map>

namespace mnist_ddp::config {
namespace {

namespace po = boost::program_options;

/// error_with_option_name's protected substitutions, reached through a derived member pointer.
struct Substitutions : po::error_with_option_name {
  static std::map<std::string, std::string>& of(po::error_with_option_name& error) {
    return error.*(&Substitutions::m_substitutions);
  }
};

}  // namespace

std::string option_error_text(po::error& error) {
  if (auto* named = dynamic_cast<po::error_with_option_name*>(&error)) {
    // Note [Boost option error placeholders]; no placeholder name starts with "25".
    for (auto& [placeholder, text] : Substitutions::of(*named)) {
      if (std::count(text.begin(), text.end(), '%') < 2) continue;
      std::string escaped;
      for (char c : text) escaped += c == '%' ? std::string("%25") : std::string(1, c);
      text = escaped;
    }
  }
  return error.what();
}

}  // namespace mnist_ddp::config
