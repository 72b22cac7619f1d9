# One switch for ASan+UBSan on everything we build (tests included).
if(POSGEOM_SANITIZE)
  set(POSGEOM_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_compile_options(${POSGEOM_SANITIZER_FLAGS})
  add_link_options(${POSGEOM_SANITIZER_FLAGS})
endif()

# The fuzzing build (tools/fuzz): coverage for libFuzzer and ASan+UBSan on all project code.
if(POSGEOM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "POSGEOM_FUZZ needs clang (CXX=clang++)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
