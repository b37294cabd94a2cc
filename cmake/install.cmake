# What `cmake --install build --prefix P` puts under P:
#   include/attn/<layer>/*.h            the headers, included as <attn/engine/tensor.h>
#   lib/libattn_*.a                      one static library per layer
#   bin/attn                             the program
#   lib/cmake/attn/                      the CMake package: find_package(attn CONFIG) -> attn::attn
#   lib/pkgconfig/attn.pc                the same for pkg-config
# attn::attn links every layer and carries the include path, OpenBLAS, OpenMP,
# threads and, in a CUDA build, ATTN_WITH_CUDA and the CUDA libraries (and
# NCCL, when the build found it).
# The emulated CUDA build (ATTN_CUDA=EMULATE) is a test harness, not a
# product: it installs nothing.
if(ATTN_CUDA_EMULATED)
  return()
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every layer library, each before the layers it links: the static link order.
set(ATTN_LIBRARIES attn_cli attn_train_bench attn_train attn_models attn_nn attn_train_optim attn_train_data
    attn_ops attn_engine attn_util)

# `attn` is the program's target, so the library target is attn_library,
# exported under the name attn (attn::attn).
add_library(attn_library INTERFACE)
set_target_properties(attn_library PROPERTIES EXPORT_NAME attn)
target_link_libraries(attn_library INTERFACE ${ATTN_LIBRARIES})
add_library(attn::attn ALIAS attn_library)

install(TARGETS ${ATTN_LIBRARIES} attn_library EXPORT attnTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS attn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The .h files only: sources, CUDA-only headers (.cuh) and the CUDA
# emulation's stand-in runtime headers (engine/cuda/emulate) stay behind.
foreach(folder ${ATTN_LAYER_FOLDERS})
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attn/${folder}
          FILES_MATCHING PATTERN "*.h"
          # the emulated CUDA runtime is the test harness's, never a user's
          PATTERN "emulate" EXCLUDE)
endforeach()

set(ATTN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attn)
install(EXPORT attnTargets NAMESPACE attn:: DESTINATION ${ATTN_PACKAGE_DIR})
# The CUDA toolkit this build used, as a hint for find_dependency(CUDAToolkit).
set(ATTN_CUDA_TOOLKIT_ROOT "")
if(ATTN_WITH_CUDA)
  get_filename_component(ATTN_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
# Where the build found NCCL, as a hint for the package's own search.
set(ATTN_NCCL_LIBRARY_DIR "")
if(ATTN_WITH_NCCL)
  get_filename_component(ATTN_NCCL_LIBRARY_DIR "${ATTN_NCCL_LIBRARY}" DIRECTORY)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/attnConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/attnConfig.cmake INSTALL_DESTINATION ${ATTN_PACKAGE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/attnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/attnConfig.cmake ${CMAKE_BINARY_DIR}/package/attnConfigVersion.cmake
        DESTINATION ${ATTN_PACKAGE_DIR})

# attn.pc names its prefix relative to its own folder (${pcfiledir}), so the
# file is right for whatever --prefix the install is given.
set(ATTN_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
string(REGEX REPLACE "[^/]+" ".." ATTN_PC_TO_PREFIX "${ATTN_PC_DIR}")
set(ATTN_PC_LIBS "")
foreach(library ${ATTN_LIBRARIES})
  string(APPEND ATTN_PC_LIBS " -l${library}")
endforeach()
set(ATTN_PC_CFLAGS "${OpenMP_CXX_FLAGS}")
string(APPEND ATTN_PC_LIBS " ${OpenMP_CXX_FLAGS}")
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND ATTN_PC_LIBS " ${CMAKE_THREAD_LIBS_INIT}")
endif()
if(ATTN_WITH_CUDA)
  string(APPEND ATTN_PC_CFLAGS " -DATTN_WITH_CUDA")
  foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
    string(APPEND ATTN_PC_CFLAGS " -I${dir}")
  endforeach()
  string(APPEND ATTN_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart")
endif()
if(ATTN_WITH_MPI)
  foreach(library ${MPI_CXX_LIBRARIES})
    string(APPEND ATTN_PC_LIBS " ${library}")
  endforeach()
endif()
if(ATTN_WITH_NCCL)
  string(APPEND ATTN_PC_LIBS " -L${ATTN_NCCL_LIBRARY_DIR} -lnccl")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/attn.pc.in ${CMAKE_BINARY_DIR}/package/attn.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/attn.pc DESTINATION ${ATTN_PC_DIR})
