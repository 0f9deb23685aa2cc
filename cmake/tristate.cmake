# cmake/tristate.cmake — provides: mddp_tristate(), the AUTO / ON / OFF build options.

# Sets OUT_VAR to AUTO, ON or OFF from the cache variable OPTION (which also takes 1/TRUE/YES and
# 0/FALSE/NO, in any case); any other value stops the configure naming the option.
function(mddp_tristate option out_var)
  string(TOUPPER "${${option}}" mode)
  if(mode MATCHES "^(1|TRUE|YES)$")
    set(mode ON)
  elseif(mode MATCHES "^(0|FALSE|NO)$")
    set(mode OFF)
  endif()
  if(NOT mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${option} must be AUTO, ON or OFF (got '${${option}}')")
  endif()
  set(${out_var} "${mode}" PARENT_SCOPE)
endfunction()
