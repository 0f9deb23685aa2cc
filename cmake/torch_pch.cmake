# cmake/torch_pch.cmake — provides: torch_pch(TARGET [REUSE_FROM OTHER] [FOR_ANY_LIBTORCH]), which
# precompiles <torch/torch.h> (or reuses OTHER's) for those sources of TARGET that use LibTorch's
# C++ API, a <torch/...> header included directly or through the project's own headers (with
# FOR_ANY_LIBTORCH: any LibTorch header, <ATen/...> and <c10/...> too); every other source of
# TARGET compiles without it.
#
# Why not every source: GCC's precompiled <torch/torch.h> is about 570 MB, and merely loading it
# costs about 9 s per source on a 2-core machine. A source that needs only ATen, c10 or no
# LibTorch at all compiles faster without it (options.cpp 7.8 s without, 16.8 s with; log.cpp
# 0.1 s and 9.3 s), while one that includes <torch/...> gains (trainer.cpp 27.6 s and 23.3 s).
#
# FOR_ANY_LIBTORCH is for the doctest programs: c10 includes glog, whose one-argument CHECK macro
# replaces doctest's CHECK when it comes after <doctest/doctest.h>. The precompiled header always
# comes first, so doctest's macros win wherever LibTorch is included at all.
#
# In a unity build (MNIST_DDP_UNITY) each batch parses LibTorch's headers once anyway, and the
# precompiled header would only add its own compile ahead of every batch: only the doctest
# programs get one, for the order above, which the first of them makes and the others reuse.

# Folders that quoted includes are looked up in, after the including file's own.
set(TORCH_PCH_INCLUDE_ROOTS "${PROJECT_SOURCE_DIR}/lib" "${PROJECT_SOURCE_DIR}/tests")

# _torch_pch_includes(FILE PATTERN OUT): sets OUT to whether FILE, or a project header it
# includes, has an #include line that matches PATTERN. Answers are kept per file and pattern for
# the rest of the configure run.
function(_torch_pch_includes file pattern out)
  set(key "torch_pch:${pattern}:${file}")
  get_property(known GLOBAL PROPERTY "${key}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "${key}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "${key}" FALSE)  # an include cycle ends here
  get_filename_component(own_dir "${file}" DIRECTORY)
  file(STRINGS "${file}" includes REGEX "^#include [<\"]")
  set(answer FALSE)
  foreach(line IN LISTS includes)
    if(line MATCHES "${pattern}")
      set(answer TRUE)
    elseif(line MATCHES "^#include \"([^\"]+)\"")
      set(header "${CMAKE_MATCH_1}")
      foreach(root IN ITEMS "${own_dir}" ${TORCH_PCH_INCLUDE_ROOTS})
        if(EXISTS "${root}/${header}")
          _torch_pch_includes("${root}/${header}" "${pattern}" nested)
          set(answer ${nested})
          break()
        endif()
      endforeach()
    endif()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "${key}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

function(torch_pch target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "FOR_ANY_LIBTORCH" "REUSE_FROM" "")
  if(CMAKE_UNITY_BUILD)
    if(NOT arg_FOR_ANY_LIBTORCH)
      return()
    endif()
    get_property(arg_REUSE_FROM GLOBAL PROPERTY torch_pch_first_doctest_program)
    if(NOT arg_REUSE_FROM)
      set_property(GLOBAL PROPERTY torch_pch_first_doctest_program ${target})
    endif()
  endif()
  set(pattern "^#include <torch/")
  if(arg_FOR_ANY_LIBTORCH)
    set(pattern "^#include <(torch|ATen|c10)/")
  endif()
  if(arg_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${arg_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.cpp$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    _torch_pch_includes("${path}" "${pattern}" uses_libtorch)
    if(NOT uses_libtorch)
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target}
                                  PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
