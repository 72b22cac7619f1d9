# One switch for ASan+UBSan on everything we build (tests included).
if(POSGEOM_SANITIZE)
  set(POSGEOM_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_compile_options(${POSGEOM_SANITIZER_FLAGS})
  add_link_options(${POSGEOM_SANITIZER_FLAGS})
endif()
