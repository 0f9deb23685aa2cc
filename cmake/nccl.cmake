# cmake/nccl.cmake — provides: the MNIST_DDP_NCCL option (AUTO, ON, OFF) and, when the NCCL
# backend is built, MNIST_DDP_HAVE_NCCL=TRUE and the target mnist_ddp_nccl (the NCCL and CUDA
# runtime headers, and the paths of the two libraries, which the program opens when it uses them).
#
# Search order for NCCL: the folder of the LibTorch in use, when that LibTorch has CUDA and ships a
# libnccl of its own (the process must load exactly one NCCL: two copies would each keep their own
# state); for a LibTorch from a pip wheel, the NCCL wheel beside it (<site-packages>/nvidia/nccl,
# which torch loads); then NCCL_HOME, CUDA_HOME, the CUDA toolkit found and /usr/local/cuda.

set(MNIST_DDP_NCCL AUTO CACHE STRING
    "Build the NCCL backend: AUTO (when the CUDA toolkit and NCCL are found), ON (required), OFF")
set_property(CACHE MNIST_DDP_NCCL PROPERTY STRINGS AUTO ON OFF)
mddp_tristate(MNIST_DDP_NCCL _mddp_nccl_mode)

set(MNIST_DDP_HAVE_NCCL FALSE)

# Reports why the backend is not built: fatal when it was asked for, a status line otherwise.
function(_mddp_nccl_missing reason)
  if(_mddp_nccl_mode STREQUAL "ON")
    message(FATAL_ERROR "MNIST_DDP_NCCL=ON but ${reason}. Install the CUDA toolkit and NCCL, "
                        "point CUDA_HOME or NCCL_HOME at them, or configure with -DMNIST_DDP_NCCL=OFF.")
  endif()
  message(STATUS "NCCL backend: not built (${reason})")
endfunction()

if(_mddp_nccl_mode STREQUAL "OFF")
  message(STATUS "NCCL backend: not built (MNIST_DDP_NCCL=OFF)")
  return()
endif()

# The CUDA toolkit: nvcc on the PATH, CUDAToolkit_ROOT, CUDA_PATH; else CUDA_HOME or /usr/local/cuda.
if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT})
  foreach(_dir "$ENV{CUDA_HOME}" /usr/local/cuda)
    if(_dir AND EXISTS "${_dir}/include/cuda_runtime_api.h")
      set(CUDAToolkit_ROOT "${_dir}")
      break()
    endif()
  endforeach()
endif()
find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  _mddp_nccl_missing("the CUDA toolkit was not found")
  return()
endif()

# LibTorch's own folder counts only when that LibTorch has CUDA (libtorch_cuda), so a CPU LibTorch
# in a system folder does not pull in an unrelated NCCL from there.
set(_mddp_torch_lib_dir "")
if(TORCH_LIBRARY)
  get_filename_component(_mddp_torch_lib_dir "${TORCH_LIBRARY}" DIRECTORY)
elseif(TORCH_INSTALL_PREFIX)
  set(_mddp_torch_lib_dir "${TORCH_INSTALL_PREFIX}/lib")
endif()
set(_mddp_torch_has_cuda FALSE)
if(_mddp_torch_lib_dir AND EXISTS "${_mddp_torch_lib_dir}/libtorch_cuda.so")
  set(_mddp_torch_has_cuda TRUE)
endif()

# A pip wheel's LibTorch (<site-packages>/torch/lib) loads NCCL and the CUDA runtime from the
# nvidia-* wheels installed beside it: <site-packages>/nvidia/nccl/lib/libnccl.so.2 (no
# unversioned libnccl.so) with nvidia/nccl/include, and libcudart.so.<major> in nvidia/cu13/lib
# (CUDA 13) or nvidia/cuda_runtime/lib (CUDA 12).
set(_mddp_wheel_nvidia_dir "")
if(_mddp_torch_has_cuda AND IS_DIRECTORY "${_mddp_torch_lib_dir}/../../nvidia")
  get_filename_component(_mddp_wheel_nvidia_dir "${_mddp_torch_lib_dir}/../../nvidia" ABSOLUTE)
endif()

if(_mddp_torch_has_cuda)
  set(_mddp_torch_nccl_dirs "${_mddp_torch_lib_dir}")
  if(_mddp_wheel_nvidia_dir)
    list(APPEND _mddp_torch_nccl_dirs "${_mddp_wheel_nvidia_dir}/nccl/lib")
  endif()
  find_library(MNIST_DDP_NCCL_LIBRARY NAMES nccl libnccl.so.2
               PATHS ${_mddp_torch_nccl_dirs} NO_DEFAULT_PATH)
endif()
find_library(MNIST_DDP_NCCL_LIBRARY NAMES nccl libnccl.so.2
             HINTS ENV NCCL_HOME ENV CUDA_HOME "${CUDAToolkit_LIBRARY_DIR}" /usr/local/cuda
             PATH_SUFFIXES lib lib64)
if(NOT MNIST_DDP_NCCL_LIBRARY)
  _mddp_nccl_missing("libnccl was not found (searched a CUDA LibTorch's folder and the NCCL "
                     "wheel beside it, NCCL_HOME, CUDA_HOME, ${CUDAToolkit_LIBRARY_DIR}, "
                     "/usr/local/cuda)")
  return()
endif()
# The header next to the library first, so that header and library are of one release.
get_filename_component(_mddp_nccl_lib_dir "${MNIST_DDP_NCCL_LIBRARY}" DIRECTORY)
find_path(MNIST_DDP_NCCL_INCLUDE_DIR nccl.h
          HINTS "${_mddp_nccl_lib_dir}/../include" ENV NCCL_HOME ENV CUDA_HOME
                ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda
          PATH_SUFFIXES include)
if(NOT MNIST_DDP_NCCL_INCLUDE_DIR)
  _mddp_nccl_missing("nccl.h was not found (libnccl is ${MNIST_DDP_NCCL_LIBRARY})")
  return()
endif()

file(STRINGS "${MNIST_DDP_NCCL_INCLUDE_DIR}/nccl.h" _mddp_nccl_version_lines
     REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
set(_mddp_nccl_version "")
foreach(_part MAJOR MINOR PATCH)
  string(REGEX MATCH "NCCL_${_part} ([0-9]+)" _match "${_mddp_nccl_version_lines}")
  list(APPEND _mddp_nccl_version "${CMAKE_MATCH_1}")
endforeach()
string(REPLACE ";" "." _mddp_nccl_version "${_mddp_nccl_version}")
# Non-blocking initialisation (ncclCommInitRankConfig, ncclCommFinalize) came with 2.14; ncclAvg
# with 2.10.
if(_mddp_nccl_version VERSION_LESS 2.14)
  _mddp_nccl_missing("NCCL ${_mddp_nccl_version} is older than 2.14 "
                     "(${MNIST_DDP_NCCL_INCLUDE_DIR}/nccl.h)")
  return()
endif()

# The CUDA runtime: LibTorch's bundled copy where it has one (the same one-copy reason as NCCL),
# or the CUDA runtime wheel beside a pip LibTorch, else the toolkit's.
set(_mddp_cudart "${CUDA_cudart_LIBRARY}")
if(_mddp_torch_has_cuda)
  file(GLOB _mddp_torch_cudart "${_mddp_torch_lib_dir}/libcudart*.so*")
  if(NOT _mddp_torch_cudart AND _mddp_wheel_nvidia_dir)
    file(GLOB _mddp_torch_cudart "${_mddp_wheel_nvidia_dir}/*/lib/libcudart.so.[0-9]*")
  endif()
  if(_mddp_torch_cudart)
    list(SORT _mddp_torch_cudart)
    list(GET _mddp_torch_cudart 0 _mddp_cudart)
  endif()
endif()

# Headers only: the program opens both libraries when the backend is first used, looking first
# at the files found here (lib/distributed/gpu_libraries.cpp, Note [The NCCL backend loads its
# libraries]), so it starts where they are not installed.
add_library(mnist_ddp_nccl INTERFACE)
target_include_directories(mnist_ddp_nccl INTERFACE "${MNIST_DDP_NCCL_INCLUDE_DIR}"
                                                    ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(mnist_ddp_nccl INTERFACE
  MNIST_DDP_NCCL_LIBRARY="${MNIST_DDP_NCCL_LIBRARY}"
  MNIST_DDP_CUDA_RUNTIME_LIBRARY="${_mddp_cudart}")
target_link_libraries(mnist_ddp_nccl INTERFACE ${CMAKE_DL_LIBS})
# The communicator follows LibTorch's current CUDA stream, which only a LibTorch with CUDA has.
if(_mddp_torch_has_cuda)
  target_compile_definitions(mnist_ddp_nccl INTERFACE MNIST_DDP_TORCH_CUDA=1)
endif()
set(MNIST_DDP_HAVE_NCCL TRUE)
message(STATUS "NCCL backend: NCCL ${_mddp_nccl_version} (${MNIST_DDP_NCCL_LIBRARY}), "
               "CUDA ${CUDAToolkit_VERSION} runtime (${_mddp_cudart}), both opened when used")
