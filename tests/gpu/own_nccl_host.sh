#!/usr/bin/env bash
# tests/gpu/own_nccl_host.sh — provides: a testing aid, never a default: runs its command as an
# NCCL host of its own (NCCL_HOSTID from the Open MPI rank), so that N ranks may share one GPU as
# a real N-rank communicator (Note [Several NCCL ranks on one GPU], rank_capability.cpp), its
# traffic on loopback sockets. Harmless where NCCL is not used.
#
#   mpirun -np 8 tests/gpu/own_nccl_host.sh build-gpu/mnist_ddp --backend nccl ...
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:?run under mpirun: no OMPI_COMM_WORLD_RANK or PMIX_RANK}}
export NCCL_HOSTID=own-nccl-host-$rank
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
# Ranks that share one GPU must not set up multi-node NVLink or NVLink SHARP (NVLS) buffers for it.
export NCCL_MNNVL_ENABLE=${NCCL_MNNVL_ENABLE:-0} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
exec "$@"
