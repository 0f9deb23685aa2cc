// lib/config/option_error.hpp — provides: option_error_text, the message of a Boost.Program_options
// error, safe for any text the user typed.
#pragma once

#include <string>

#include <boost/program_options/errors.hpp>

namespace mnist_ddp::config {

/// `error.what()`, but it always returns. Note [Boost option error placeholders]: Boost 1.74
/// builds the message by replacing %value%, %canonical_option% ... until none is left, so a name
/// or value that itself contains one (`--lr %value%`, a config line `%option% = 1`) makes
/// what() loop forever. Such text appears with each '%' as "%25".
std::string option_error_text(boost::program_options::error& error);

}  // namespace mnist_ddp::config
