# Torch stays inside model, the accumulators, runtime, train and the pass's Torch side.
# posgeom_torch carries Torch to the targets that may use it (and the macro that lets
# posgeom's Torch headers compile); posgeom_torch_free(target) puts stubs that #error in
# front of Torch's headers for the others, since Debian installs Torch under /usr/include,
# where every compiler looks.
add_library(posgeom_torch INTERFACE)
target_include_directories(posgeom_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_link_libraries(posgeom_torch INTERFACE ${TORCH_LIBRARIES})
target_compile_definitions(posgeom_torch INTERFACE POSGEOM_TORCH_ALLOWED=1)
# ATen's headers take about 7 s of each of the ~70 translation units that include them
# (more with LibTorch 2.x); one precompiled copy per target saves minutes of every build.
option(POSGEOM_TORCH_PCH "Precompile ATen's headers for the targets that use Torch" ON)
if(POSGEOM_TORCH_PCH)
  target_precompile_headers(posgeom_torch INTERFACE <ATen/ATen.h>)
endif()

function(posgeom_torch_free target)
  target_include_directories(${target} BEFORE PRIVATE ${PROJECT_SOURCE_DIR}/cmake/no-torch)
endfunction()
