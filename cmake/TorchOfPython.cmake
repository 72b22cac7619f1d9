# The LibTorch of the torch installed for the Python that builds the package: the extension
# must link the one the user's `import torch` loads (two LibTorch builds in one process do
# not mix). pip's isolated build environment hides the user's site-packages from the build
# requirements' Python; `-E` (no PYTHONPATH) looks past it into the interpreter's own
# environment, where torch is. Sets POSGEOM_TORCH_VERSION and prepends the prefix.
function(posgeom_torch_of_python)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -E -c "import torch; print(torch.utils.cmake_prefix_path); print(torch.__version__)"
    OUTPUT_VARIABLE found OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status ERROR_QUIET)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "posgeom's Python package links the LibTorch of the torch it runs with: install torch in "
                        "${Python_EXECUTABLE}'s environment first (pip install torch)")
  endif()
  string(REPLACE "\n" ";" found "${found}")
  list(GET found 0 prefix)
  list(GET found 1 version)
  set(CMAKE_PREFIX_PATH "${prefix};${CMAKE_PREFIX_PATH}" PARENT_SCOPE)
  set(POSGEOM_TORCH_VERSION "${version}" PARENT_SCOPE)
  message(STATUS "posgeom: the Python package links torch ${version} (${prefix})")
endfunction()
