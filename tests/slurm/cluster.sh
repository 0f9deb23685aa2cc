#!/usr/bin/env bash
# tests/slurm/cluster.sh — provides: a real Slurm cluster (munged, slurmctld, slurmd) on this
# machine, for the Slurm tests and for trying the scripts in slurm/ by hand. Needs root.
#
#   cluster.sh install        install slurm-wlm and munge if they are missing
#   cluster.sh up single      one node, "localhost", on 127.0.0.1
#   cluster.sh up netns [N]   N nodes (default 2) node1..nodeN, each in its own network namespace
#                             with its own address 10.200.0.(10+i), hostname and /etc/hosts
#   cluster.sh down           stop everything `up` started and remove what it created
#   cluster.sh on NODE CMD... run CMD inside node NODE's namespaces (netns), as its jobs see it
#
# Clients (sbatch, squeue, scontrol ...) need `export SLURM_CONF=$SLURMCI_BASE/etc/slurm.conf`.
# `up` runs `down` first, so repeating either command is safe.
#
# Settings, from the environment:
#   SLURMCI_BASE       state, spool, logs (default /tmp/slurmci); logs stay there after `down`
#   SLURMCI_CPUS       CPUs each node offers (default 4; Slurm trusts this number, so tests may
#                      ask for more tasks than the machine has cores)
#   SLURMCI_GPUS       fake GPUs per node (default 2; 0 for none): "gpu" GRES whose devices are
#                      /dev/null, so --gpus-per-node requests schedule and set
#                      CUDA_VISIBLE_DEVICES exactly as on a GPU cluster
#   SLURMCI_RANK0_DIR  netns only: a folder that node1 may write and every other node sees
#                      read-only, so a test can prove that only ranks on node1 write there
#
# The recipe, the measurements behind it and its gotchas: shared/notes/slurm-local-cluster.md.
# Network safety (netns): only loopback and the bridge and veths made here are touched; test
# addresses live in 10.200.0.0/24 on those links only; the namespaces have no default route;
# while up, a blackhole route for 10.200.0.0/16 keeps any 10.200.x traffic off real links.
set -euo pipefail

BASE=${SLURMCI_BASE:-/tmp/slurmci}
CONF=$BASE/etc/slurm.conf
CPUS=${SLURMCI_CPUS:-4}
GPUS=${SLURMCI_GPUS:-2}
RANK0_DIR=${SLURMCI_RANK0_DIR:-}
# Names and ports of our own, so nothing else on the machine is mistaken for ours and a real
# Slurm installation (ports 6817/6818) is left alone.
BRIDGE=slurmcibr0
NS_PREFIX=slurmci-node
VETH_PREFIX=slurmci-v
SUBNET=10.200.0
CTLD_PORT=16817
SLURMD_PORT=16818

log() { echo "cluster: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
    command -v sbatch >/dev/null && command -v munged >/dev/null; then
    return
  fi
  log "installing slurm-wlm and munge"
  # The postinst scripts try to start the daemons (invoke-rc.d); without systemd that fails
  # unless a policy-rc.d forbids it. Add one only for this install if the machine has none.
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    added_policy=1
  fi
  local status=0
  apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
      --no-install-recommends slurm-wlm munge >/dev/null || status=$?
  if ((added_policy)); then rm -f "$policy"; fi
  ((status == 0)) || die "apt-get install slurm-wlm munge failed ($status)"
}

# --- processes ----------------------------------------------------------------------------------

# alive PID: the process exists and is not a zombie (kill -0 counts zombies as alive, and PID 1
# here is slow to reap daemonized parents).
alive() {
  local stat
  stat=$(cat 2>/dev/null "/proc/$1/stat") || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# daemon_pids NAME: pids of NAME started with "-f $CONF" (found through /proc, not pid files,
# which may point at unrelated processes after a reboot).
daemon_pids() {
  local dir args
  for dir in /proc/[0-9]*; do
    mapfile -d '' -t args 2>/dev/null <"$dir/cmdline" || continue
    ((${#args[@]} >= 3)) || continue
    [[ ${args[0]##*/} == "$1" && ${args[1]} == -f && ${args[2]} == "$CONF" ]] || continue
    alive "${dir#/proc/}" && echo "${dir#/proc/}"
  done
}

# tagged_pids: every process of this cluster, daemons and job processes alike: the daemons are
# started with SLURMCI_TAG=$BASE in their environment (slurmstepd inherits it) and job processes
# carry SLURM_CONF=$CONF and a SLURM_JOB_ID (which the submitting shell does not have).
tagged_pids() {
  local dir environment
  for dir in /proc/[0-9]*; do
    [[ ${dir#/proc/} == "$$" ]] && continue
    environment=$(tr '\0' '\n' 2>/dev/null <"$dir/environ") || continue
    if grep -qxF "SLURMCI_TAG=$BASE" <<<"$environment" ||
      { grep -qxF "SLURM_CONF=$CONF" <<<"$environment" &&
        grep -q "^SLURM_JOB_ID=" <<<"$environment"; }; then
      alive "${dir#/proc/}" && echo "${dir#/proc/}"
    fi
  done
}

# stop_pids SECONDS PID...: SIGTERM, wait up to SECONDS, then SIGKILL what is left.
stop_pids() {
  local seconds=$1 pid waited=0
  shift
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  while ((waited < seconds * 4)); do
    local left=0
    for pid in "$@"; do alive "$pid" && left=1; done
    ((left)) || return 0
    sleep 0.25
    waited=$((waited + 1))
  done
  kill -KILL "$@" 2>/dev/null || true
}

# --- munge ---------------------------------------------------------------------------------------

start_munge() {
  # Reuse a munged that already answers (the machine's own); `down` stops only ours.
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 600 /etc/munge/munge.key
  fi
  install -d -o munge -g munge /run/munge
  runuser -u munge -- /usr/sbin/munged
  local pid
  pid=$(cat /run/munge/munged.pid)
  echo "$pid" >"$BASE/run/munged.started"
  munge -n | unmunge >/dev/null || die "munged does not answer"
}

stop_munge() {
  local marker=$BASE/run/munged.started pid
  [[ -f $marker ]] || return 0
  pid=$(cat "$marker")
  # Only the munged this script started, and only if that pid still is a munged.
  if alive "$pid" && [[ $(tr '\0' ' ' <"/proc/$pid/cmdline") == */usr/sbin/munged* ]]; then
    stop_pids 5 "$pid"
  fi
  rm -f "$marker"
}

# --- configuration -------------------------------------------------------------------------------

# write_config MODE NODES
write_config() {
  local mode=$1 nodes=$2 ctld_addr=127.0.0.1 i gres=""
  [[ $mode == netns ]] && ctld_addr=$SUBNET.1
  ((GPUS > 0)) && gres=" Gres=gpu:$GPUS"
  mkdir -p "$BASE"/{etc,state,run,log}
  if [[ $mode == single ]]; then
    mkdir -p "$BASE"/{spool,tmp}/localhost
  else
    for ((i = 1; i <= nodes; i++)); do mkdir -p "$BASE"/{spool,tmp}/node$i; done
  fi
  {
    cat <<EOF
# Written by tests/slurm/cluster.sh ($mode, $nodes node(s)).
ClusterName=slurmci
# "localhost" matches whatever the host is called.
SlurmctldHost=localhost($ctld_addr)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$BASE/state
# %n: one spool and one TmpFS per node, or PMIx steps of two nodes collide on one filesystem.
SlurmdSpoolDir=$BASE/spool/%n
TmpFS=$BASE/tmp/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Trust the CPUs= and Gres= below instead of what the hardware has.
SlurmdParameters=config_overrides
MpiDefault=pmix
# Reject impossible jobs at once instead of leaving them pending forever.
EnforcePartLimits=ALL
ReturnToService=2
# Schedule at once (the default batch_sched_delay=3 adds 3 s to every job).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
KillWait=10
EOF
    ((GPUS > 0)) && echo "GresTypes=gpu"
    if [[ $mode == single ]]; then
      echo "NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$CPUS$gres"
    else
      for ((i = 1; i <= nodes; i++)); do
        echo "NodeName=node$i NodeAddr=$SUBNET.$((10 + i)) CPUs=$CPUS$gres"
      done
    fi
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$CONF"
  # Slurm drops GPUs without a device file, so each fake GPU is a character device that is
  # /dev/null (1:3). Jobs get CUDA_VISIBLE_DEVICES as on a real GPU node.
  : >"$BASE/etc/gres.conf"
  for ((i = 0; i < GPUS; i++)); do
    mkdir -p "$BASE/dev"
    mknod "$BASE/dev/nvidia$i" c 1 3
    echo "Name=gpu File=$BASE/dev/nvidia$i" >>"$BASE/etc/gres.conf"
  done
  printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$BASE/etc/cgroup.conf"
  {
    echo "127.0.0.1 localhost"
    echo "$SUBNET.1 slurmci-ctl"
    for ((i = 1; i <= nodes; i++)); do echo "$SUBNET.$((10 + i)) node$i"; done
  } >"$BASE/etc/hosts"
}

# --- network namespaces --------------------------------------------------------------------------

make_network() {
  local nodes=$1 i ns veth
  # Refuse to run where 10.200.0.0/16 is already in use: never touch someone else's network.
  if ip -4 -o addr show | grep -q " inet 10\.200\." || ip -4 route show | grep -q "^10\.200\."; then
    die "10.200.0.0/16 is already in use on this machine; not creating test networks"
  fi
  # First the blackhole: from now on nothing for 10.200.x can leave through a real link.
  ip route add blackhole 10.200.0.0/16
  ip link add "$BRIDGE" type bridge
  sysctl -q -w "net.ipv6.conf.$BRIDGE.disable_ipv6=1" 2>/dev/null || true
  ip addr add "$SUBNET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((i = 1; i <= nodes; i++)); do
    ns=$NS_PREFIX$i veth=$VETH_PREFIX$i
    ip netns add "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    sysctl -q -w "net.ipv6.conf.$veth.disable_ipv6=1" 2>/dev/null || true
    ip link set "$veth" master "$BRIDGE" up
    # nsenter, not `ip netns exec` (which remounts /sys; see start_netns_slurmd).
    nsenter --net="/run/netns/$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
    ip -n "$ns" addr add "$SUBNET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
  done
}

# our_namespaces: the network namespaces `up` made.
our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep "^${NS_PREFIX}[0-9]*$" || true
}

remove_network() {
  local ns link
  for ns in $(our_namespaces); do
    # Anything still running inside: kill it, or the namespace lives on.
    # shellcheck disable=SC2046  # one pid per word
    stop_pids 2 $(ip netns pids "$ns" 2>/dev/null)
  done
  # Host-side veths first: that removes both ends at once (ip netns del is asynchronous).
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep "^${VETH_PREFIX}[0-9]*$" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  for ns in $(our_namespaces); do
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
  # The blackhole route goes last, after every 10.200.0.x address is gone.
  ip route del blackhole 10.200.0.0/16 2>/dev/null || true
}

# start_netns_slurmd I: slurmd for node I inside its network namespace, with its own hostname
# (Open MPI names shared-memory segments after the host) and /etc/hosts.
start_netns_slurmd() {
  local i=$1 setup
  setup="hostname node$i && mount --bind '$BASE/etc/hosts' /etc/hosts"
  if [[ -n $RANK0_DIR && $i -gt 1 ]]; then
    setup+=" && mount --bind '$RANK0_DIR' '$RANK0_DIR' && mount -o remount,bind,ro '$RANK0_DIR'"
  fi
  # nsenter --net rather than `ip netns exec`: the latter remounts /sys, /sys/fs/cgroup
  # disappears and slurmd dies ("Unable to initialize cgroup plugin").
  SLURMCI_TAG=$BASE SLURM_CONF=$CONF nsenter --net="/run/netns/$NS_PREFIX$i" \
    unshare --uts --mount --propagation private \
    sh -c "$setup && exec /usr/sbin/slurmd -f '$CONF' -N node$i"
}

# --- up and down ---------------------------------------------------------------------------------

wait_nodes_idle() {
  local tries states
  for ((tries = 0; tries < 120; tries++)); do
    # Every node idle: none still unknown, down or not responding.
    states=$(SLURM_CONF=$CONF sinfo -h -N -o '%T' 2>/dev/null | sort -u) || states=""
    [[ $states == idle ]] && return 0
    sleep 0.25
  done
  SLURM_CONF=$CONF sinfo -N >&2 || true
  die "nodes did not become idle; see $BASE/log"
}

up() {
  local mode=${1:-single} nodes=${2:-2} i
  [[ $(id -u) -eq 0 ]] || die "needs root (daemons, namespaces)"
  case $mode in
    single) nodes=1 ;;
    netns) [[ $nodes =~ ^[1-9]$ ]] || die "netns: 1 to 9 nodes, not '$nodes'" ;;
    *) die "unknown mode '$mode' (single or netns)" ;;
  esac
  [[ $BASE == /?*/?* ]] || die "SLURMCI_BASE must be an absolute path below a folder, not '$BASE'"
  install_packages
  down
  rm -rf "$BASE"
  write_config "$mode" "$nodes"
  [[ -z $RANK0_DIR || -d $RANK0_DIR ]] || die "SLURMCI_RANK0_DIR $RANK0_DIR is not a folder"
  start_munge
  [[ $mode == netns ]] && make_network "$nodes"
  SLURMCI_TAG=$BASE SLURM_CONF=$CONF /usr/sbin/slurmctld -f "$CONF" -i
  if [[ $mode == single ]]; then
    SLURMCI_TAG=$BASE SLURM_CONF=$CONF /usr/sbin/slurmd -f "$CONF" -N localhost
  else
    for ((i = 1; i <= nodes; i++)); do start_netns_slurmd "$i"; done
  fi
  wait_nodes_idle
  log "up: $mode, $nodes node(s); export SLURM_CONF=$CONF"
}

down() {
  [[ $(id -u) -eq 0 ]] || die "needs root"
  if [[ -f $CONF ]] && [[ -n $(daemon_pids slurmctld) ]]; then
    # Cancel every job and give them up to 10 s to end (a checkpoint may be being written).
    local jobs
    jobs=$(SLURM_CONF=$CONF squeue -h -o %i 2>/dev/null || true)
    # shellcheck disable=SC2086  # one job id per word
    [[ -z $jobs ]] || SLURM_CONF=$CONF scancel --full --quiet $jobs 2>/dev/null || true
    local tries
    for ((tries = 0; tries < 40; tries++)); do
      [[ -z $(SLURM_CONF=$CONF squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.25
    done
  fi
  # shellcheck disable=SC2046  # one pid per word
  stop_pids 5 $(daemon_pids slurmd)
  # slurmctld before the network goes, so it never talks to a vanished node address.
  # shellcheck disable=SC2046
  stop_pids 5 $(daemon_pids slurmctld)
  # shellcheck disable=SC2046
  stop_pids 2 $(tagged_pids)
  remove_network
  stop_munge
}

# on NODE COMMAND...: runs COMMAND inside node NODE's namespaces (network, hostname, mounts), as
# its slurmd and jobs see the machine (netns mode).
on_node() {
  local node=$1 pid="" candidate
  shift
  for candidate in $(daemon_pids slurmd); do
    [[ $(readlink "/proc/$candidate/ns/net") == "$(readlink /proc/self/ns/net)" ]] && continue
    if [[ $(tr '\0' ' ' <"/proc/$candidate/cmdline") == *" -N $node "* ]]; then
      pid=$candidate
      break
    fi
  done
  [[ -n $pid ]] || die "no slurmd for node '$node' in a namespace of its own"
  nsenter --target "$pid" --net --uts --mount -- "$@"
}

case ${1:-} in
  install) install_packages ;;
  up) up "${2:-single}" "${3:-2}" ;;
  down) down ;;
  on)
    (($# >= 3)) || die "usage: cluster.sh on NODE COMMAND..."
    shift
    on_node "$@"
    ;;
  *)
    sed -n '2,13p' "$0" >&2
    exit 2
    ;;
esac
