// lib/config/option_error.hpp — provides: option_error_text, a Boost.PO error's message, safely.
#pragma once

#include <string>

#include <boost/program_options/errors.hpp>

namespace mnist_ddp::config {

/// `error.what()`, but it always returns. Note [Boost option error placeholders]: Boost 1.74
/// replaces %value%, %canonical_option% ... until none is left, so user text holding one
/// (`--lr %value%`) loops forever; such text is shown with each '%' as "%25".
std::string option_error_text(boost::program_options::error& error);

}  // namespace mnist_ddp::config
