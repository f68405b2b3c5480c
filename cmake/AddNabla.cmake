#===- AddNabla.cmake - Thin wrappers around AddMLIR for Nabla -------------===#
#
# Nabla libraries are static archives of our own code that link the shared
# libMLIR/libLLVM. The upstream helpers would install them into an export set
# named "MLIRTargets"; these wrappers install them into "NablaTargets" instead
# so that `find_package(Nabla)` gets imported targets `Nabla::<name>`.
#
#===----------------------------------------------------------------------===#

# Records an installed Nabla library in the NablaTargets export set.
function(_nabla_install_library name)
  set_property(GLOBAL APPEND PROPERTY NABLA_EXPORTED_LIBS ${name})
  install(TARGETS ${name} EXPORT NablaTargets
    ARCHIVE DESTINATION lib
    LIBRARY DESTINATION lib
    INCLUDES DESTINATION include ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
endfunction()

# add_nabla_dialect_library(name SOURCES... [DEPENDS ...] [MLIR_LIBS ...])
# A dialect library; MLIR_LIBS are upstream library names resolved to the MLIR
# dylib by mlir_target_link_libraries.
function(add_nabla_dialect_library name)
  cmake_parse_arguments(ARG "" "" "MLIR_LIBS" ${ARGN})
  add_mlir_dialect_library(${name} DISABLE_INSTALL ${ARG_UNPARSED_ARGUMENTS})
  mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  _nabla_install_library(${name})
endfunction()

# add_nabla_library(name SOURCES... [DEPENDS ...] [LINK_LIBS ...] [MLIR_LIBS ...])
# Any other Nabla library (passes, conversions, pipelines, runtime).
function(add_nabla_library name)
  cmake_parse_arguments(ARG "" "" "MLIR_LIBS" ${ARGN})
  add_mlir_library(${name} DISABLE_INSTALL ${ARG_UNPARSED_ARGUMENTS})
  mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  _nabla_install_library(${name})
endfunction()

# nabla_add_version_definitions(target)
# Defines NABLA_VERSION (the project version, e.g. "0.1.0") for a tool's
# --version, which prints "<tool> (Nabla) <version>".
function(nabla_add_version_definitions target)
  target_compile_definitions(${target} PRIVATE NABLA_VERSION="${Nabla_VERSION}")
endfunction()
