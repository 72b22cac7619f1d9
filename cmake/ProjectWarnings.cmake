# Warnings apply to project targets only; third-party headers come in as SYSTEM.
function(posgeom_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor)
  if(POSGEOM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
