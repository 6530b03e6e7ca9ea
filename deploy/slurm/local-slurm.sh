#!/usr/bin/env bash
# local-slurm.sh - a real single-host Slurm for fairportal's tests and bench, in one of three versions:
# 22.05 (Debian 12's own slurm-wlm, run from the host), 24.11 (Debian 13) and 26.05 (Debian
# unstable), the last two run inside a cached Debian root built by slurm-rootfs.sh (chroot, the
# host's network and pid namespaces, so everything still listens on 127.0.0.1).
#
#   deploy/slurm/local-slurm.sh start        install/build what is missing, write the config, start what is down
#   deploy/slurm/local-slurm.sh stop         cancel this cluster's jobs, stop its daemons
#   deploy/slurm/local-slurm.sh status       exit 0 when slurmctld answers and the nodes are usable
#   deploy/slurm/local-slurm.sh stop-ctld    stop slurmctld only (fault tests: "Slurm unreachable")
#   deploy/slurm/local-slurm.sh start-ctld   start slurmctld again and wait until it answers
#   deploy/slurm/local-slurm.sh env          print the client environment (export SLURM_CONF=...)
#   deploy/slurm/local-slurm.sh start-rest   24.11/26.05: start slurmrestd with JWT auth on 127.0.0.1:<ctld port + 3>
#   deploy/slurm/local-slurm.sh stop-rest    stop that slurmrestd
#
# The version: $FAIRPORTAL_SLURM_VERSION (22.05, 24.11 or 26.05), default the one the directory
# was started with (its cluster.env), else 22.05. Defaults per version:
#
#   version  directory          slurmctld slurmdbd slurmd(n1..) slurmrestd  root file system
#   22.05    var/slurm          6817      6819     6831..       -           the host
#   24.11    var/slurm-24.11    6917      6919     6931..       6920        /var/lib/fairportal/slurm-rootfs/24.11
#   26.05    var/slurm-26.05    7017      7019     7031..       7020        /var/lib/fairportal/slurm-rootfs/26.05
#
# FAIRPORTAL_SLURM_PORT_BASE moves all of a cluster's ports (ctld = base+17, dbd = base+19, rest =
# base+20, slurmd = base+31...). Client tools of a chroot version are the wrappers in <dir>/bin
# (squeue, sacct, sbatch, scontrol, ... each runs the root's tool with this cluster's SLURM_CONF):
# point SLURM_BIN_DIR at <dir>/bin, SLURM_CONF at <dir>/etc/slurm.conf (`env` prints both).
#
# Everything (config, state, logs, pid files) lives in one directory: $FAIRPORTAL_SLURM_DIR. The
# accounting MariaDB (port $FAIRPORTAL_SLURM_MYSQL_PORT, default 3307) lives in
# $FAIRPORTAL_SLURM_MYSQL_DIR: by default the 22.05 cluster's own directory; the other versions
# share the 22.05 directory's MariaDB (default var/slurm), each with its own database
# (slurm_acct_db, slurm_acct_db_24_11, slurm_acct_db_26_05). Stopping the cluster that owns the
# MariaDB stops it. `start` is idempotent and fast when the cluster already runs (well under a
# second): it installs only missing packages, builds a root only once per machine, never
# regenerates the munge key or the database, starts only daemons that are down (checked by pid
# file and /proc, never by name) and restarts slurmctld/slurmd only when their configuration changed.
#
# The cluster: munged, slurmdbd for sacct and multifactor fair share, slurmctld and one slurmd
# per node (all on 127.0.0.1) with fake GPUs (gres/gpu files are symlinks to /dev/null).
# Partitions: `main` (default) and `gpu`, both over every node, so a fairportal flavor can be
# mapped to a partition. 24.11 and 26.05 also accept JWT (AuthAltTypes=auth/jwt, key
# <dir>/etc/jwt_hs256.key) for slurmrestd. By hand, as `start-rest` does it:
#   SLURM_JWT=daemon <dir>/sbin/slurmrestd -u 65534 -g 65534 -a rest_auth/jwt 127.0.0.1:6920 &
#   export SLURM_JWT=$(<dir>/bin/scontrol token username=root lifespan=3600 | cut -d= -f2)
#   curl -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" http://127.0.0.1:6920/slurm/v0.0.42/jobs
# (24.11 serves data_parser v0.0.40-v0.0.42, 26.05 v0.0.45; `slurmrestd -d list` names them).
#
# Knobs (environment): FAIRPORTAL_SLURM_NODES=2, _CPUS=16 (per node), _MEM_MB=65536, _GPUS=4,
# _HALFLIFE=00:02:00 (PriorityDecayHalfLife), _PORT_BASE (above), _CTLD_PORT, _SLURMD_PORT
# (first node), _DBD_PORT, _REST_PORT, _MYSQL_PORT=3307, _MYSQL_DIR, _ACCT_DB (the accounting database), _TIMEOUT=60 (seconds to
# wait for each daemon), FAIRPORTAL_SLURM_ROOTFS_CACHE (slurm-rootfs.sh).
# Must run as root (it installs packages, mounts and runs the daemons as root), as CI does.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
abs_dir() { local d=$1; case "$d" in /*) ;; *) d="$(pwd)/$d" ;; esac; echo "${d%/}"; }
VERSION="${FAIRPORTAL_SLURM_VERSION:-}"
if [[ -n "${FAIRPORTAL_SLURM_DIR:-}" ]]; then
  DIR="$(abs_dir "$FAIRPORTAL_SLURM_DIR")"
  # the version (and ports) this directory was started with, unless the environment says otherwise
  if [[ -z "$VERSION" && -f "$DIR/cluster.env" ]]; then VERSION="$(sed -n 's/^FAIRPORTAL_SLURM_VERSION=//p' "$DIR/cluster.env")"; fi
fi
VERSION="${VERSION:-22.05}"
case "$VERSION" in
  22.05) DEFAULT_BASE=6800; DEFAULT_DIR="$ROOT/var/slurm" ;;
  24.11) DEFAULT_BASE=6900; DEFAULT_DIR="$ROOT/var/slurm-24.11" ;;
  26.05) DEFAULT_BASE=7000; DEFAULT_DIR="$ROOT/var/slurm-26.05" ;;
  *) echo "local-slurm: FAIRPORTAL_SLURM_VERSION must be 22.05, 24.11 or 26.05, got '$VERSION'" >&2; exit 2 ;;
esac
DIR="${DIR:-$DEFAULT_DIR}"
case "$DIR" in ""|/|/root|/home|/tmp|/usr|/var|/etc) echo "local-slurm: refusing FAIRPORTAL_SLURM_DIR=$DIR" >&2; exit 2 ;; esac
# ports and the shared MariaDB as this directory was started with (cluster.env), unless overridden
if [[ -f "$DIR/cluster.env" ]]; then
  while IFS='=' read -r key value; do
    [[ "$key" =~ ^FAIRPORTAL_SLURM_(PORT_BASE|CTLD_PORT|SLURMD_PORT|DBD_PORT|REST_PORT|MYSQL_PORT|MYSQL_DIR|NODES|ACCT_DB)$ ]] || continue
    [[ -n "${!key:-}" ]] || export "$key=$value"
  done <"$DIR/cluster.env"
fi

NODES="${FAIRPORTAL_SLURM_NODES:-2}"
CPUS="${FAIRPORTAL_SLURM_CPUS:-16}"
MEM_MB="${FAIRPORTAL_SLURM_MEM_MB:-65536}"
GPUS="${FAIRPORTAL_SLURM_GPUS:-4}"
HALFLIFE="${FAIRPORTAL_SLURM_HALFLIFE:-00:02:00}"
PORT_BASE="${FAIRPORTAL_SLURM_PORT_BASE:-$DEFAULT_BASE}"
[[ "$PORT_BASE" =~ ^[0-9]+$ ]] || { echo "local-slurm: FAIRPORTAL_SLURM_PORT_BASE must be a whole number" >&2; exit 2; }
CTLD_PORT="${FAIRPORTAL_SLURM_CTLD_PORT:-$((PORT_BASE + 17))}"
SLURMD_PORT="${FAIRPORTAL_SLURM_SLURMD_PORT:-$((PORT_BASE + 31))}"
DBD_PORT="${FAIRPORTAL_SLURM_DBD_PORT:-$((PORT_BASE + 19))}"
REST_PORT="${FAIRPORTAL_SLURM_REST_PORT:-$((PORT_BASE + 20))}"
MYSQL_PORT="${FAIRPORTAL_SLURM_MYSQL_PORT:-3307}"
if [[ "$VERSION" == 22.05 ]]; then MYSQL_DIR="${FAIRPORTAL_SLURM_MYSQL_DIR:-$DIR}"
else MYSQL_DIR="${FAIRPORTAL_SLURM_MYSQL_DIR:-$ROOT/var/slurm}"; fi
MYSQL_DIR="$(abs_dir "$MYSQL_DIR")"
TIMEOUT="${FAIRPORTAL_SLURM_TIMEOUT:-60}"
CLUSTER=fairportal
ACCT_DB=slurm_acct_db
[[ "$VERSION" == 22.05 ]] || ACCT_DB="slurm_acct_db_${VERSION/./_}"
# an extra cluster sharing a MariaDB (the fault tests' own controller) names its own database
ACCT_DB="${FAIRPORTAL_SLURM_ACCT_DB:-$ACCT_DB}"
[[ "$ACCT_DB" =~ ^[a-z][a-z0-9_]{0,63}$ ]] || { echo "local-slurm: FAIRPORTAL_SLURM_ACCT_DB must be a lower-case SQL name, got '$ACCT_DB'" >&2; exit 2; }
for v in NODES CPUS MEM_MB GPUS CTLD_PORT SLURMD_PORT DBD_PORT REST_PORT MYSQL_PORT TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "local-slurm: FAIRPORTAL_SLURM_$v must be a whole number, got '${!v}'" >&2; exit 2; }
done
[[ "$NODES" -ge 1 ]] || { echo "local-slurm: FAIRPORTAL_SLURM_NODES must be at least 1" >&2; exit 2; }
# a chroot version's tools are wrappers in $DIR/bin and $DIR/sbin (written by `start`)
CHROOT=""
if [[ "$VERSION" != 22.05 ]]; then
  CHROOT="${FAIRPORTAL_SLURM_ROOTFS_CACHE:-/var/lib/fairportal/slurm-rootfs}/$VERSION"
  export PATH="$DIR/bin:$DIR/sbin:$PATH"
fi

ETC="$DIR/etc"; RUN="$DIR/run"; LOG="$DIR/log"; SPOOL="$DIR/spool"
MUNGE_SOCK="$RUN/munge.socket"
CONF="$ETC/slurm.conf"
# the MariaDB's files, in the directory of the cluster that owns it
MYCNF="$MYSQL_DIR/etc/my.cnf"; MYRUN="$MYSQL_DIR/run"; MYLOG="$MYSQL_DIR/log"
unset SLURM_JWT SLURM_CONF 2>/dev/null || true
export SLURM_CONF="$CONF"

T0=$(date +%s%N)
log() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); printf '[local-slurm %d.%03ds] %s\n' $((ms / 1000)) $((ms % 1000)) "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- processes: ours only (pid file + /proc name + a reference to DIR), never by name alone ----
pid_of() { [[ -s "$1" ]] && tr -dc '0-9' <"$1" || true; }
is_ours() { # MATCH: the directory its command line names (default DIR)
  local pid=$1 comm=$2 dir="${MATCH:-$DIR}"
  [[ -n "$pid" && -d "/proc/$pid" ]] || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$comm" ]] || return 1
  tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/" && return 0
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qF "SLURM_CONF=$dir/" && return 0
  return 1
}
running() { is_ours "$(pid_of "$1")" "$2"; }
stop_pidfiles() { # comm pidfile...: SIGTERM ours, wait up to 30 s, then SIGKILL
  local comm=$1 f pid i alive; shift
  local pids=()
  for f in "$@"; do
    [[ -e "$f" ]] || continue
    pid="$(pid_of "$f")"
    if is_ours "$pid" "$comm"; then pids+=("$pid"); kill -TERM "$pid" 2>/dev/null || true; fi
    rm -f "$f"
  done
  [[ ${#pids[@]} -gt 0 ]] || return 0
  log "stopping $comm (pid ${pids[*]})"
  for ((i = 0; i < 300; i++)); do
    alive=0; for pid in "${pids[@]}"; do [[ -d /proc/$pid ]] && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}
wait_until() { # what pidfile comm probe...: until the probe passes; give up when the daemon died
  local what=$1 pf=$2 comm=$3; shift 3
  local deadline=$(( $(date +%s) + TIMEOUT )) gone=0
  until "$@" >/dev/null 2>&1; do
    if running "$pf" "$comm"; then gone=0; else gone=$((gone + 1)); fi
    [[ $gone -lt 50 && $(date +%s) -lt $deadline ]] || return 1
    sleep 0.2
  done
  log "$what ready"
}
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
need_port() { port_free "$1" || die "port $1 ($2) is taken by another process: $(ss -Hltnp "sport = :$1" | head -1)"; }

munge_ok() { munge -n -S "$MUNGE_SOCK" | unmunge -S "$MUNGE_SOCK"; }
mysql_ok() { mariadb-admin --defaults-file="$MYCNF" -uroot ping; }
dbd_ok() { sacctmgr -n -P show cluster format=cluster; }
ctld_ok() { scontrol ping | grep -q 'is UP'; }
nodes_ok() {
  local states
  states="$(sinfo -h -N -p main -o '%N %t')" || return 1
  [[ "$(wc -l <<<"$states")" -ge "$NODES" ]] && ! awk '$2 !~ /^(idle|mix|alloc|comp)$/' <<<"$states" | grep -q .
}

# --- packages ----------------------------------------------------------------------------------
install_packages() {
  if [[ -n "$CHROOT" ]]; then
    "$HERE/slurm-rootfs.sh" "$VERSION" >/dev/null || die "could not build the Slurm $VERSION root"
    if PATH="$PATH:/usr/sbin" command -v mariadbd mariadb-install-db ss mountpoint >/dev/null; then return 0; fi
  fi
  # fast path: every daemon and the accounting plugin are installed already
  if PATH="$PATH:/usr/sbin" command -v munged slurmctld slurmd slurmdbd sacct mariadbd mariadb-install-db ss >/dev/null \
    && compgen -G "/usr/lib/*/slurm-wlm/accounting_storage_mysql.so" >/dev/null; then
    return 0
  fi
  local pkgs=(munge slurm-client slurmctld slurmd slurmdbd slurm-wlm-mysql-plugin mariadb-server mariadb-client iproute2)
  [[ -z "$CHROOT" ]] || pkgs=(mariadb-server mariadb-client iproute2)
  local missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  log "installing Debian packages: ${missing[*]}"
  local apt=(apt-get -o DPkg::Lock::Timeout=900 -o Dpkg::Options::=--force-confold) out="/tmp/fairportal-slurm-apt.$$.log"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >"$out" 2>&1; then
    "${apt[@]}" update -qq >>"$out" 2>&1 || true
    "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >>"$out" 2>&1 \
      || { tail -20 "$out" >&2; die "apt-get install failed (log $out)"; }
  fi
  rm -f "$out"
}

# --- configuration -----------------------------------------------------------------------------
CHANGED=" "
write_file() { # path mode < content: replace only when the content differs; remember the change
  local path=$1 mode=$2 tmp
  tmp="$(mktemp "$path.XXXXXX")"
  cat >"$tmp"; chmod "$mode" "$tmp"
  if [[ -f "$path" ]] && cmp -s "$tmp" "$path"; then rm -f "$tmp"; return 0; fi
  mv -f "$tmp" "$path"; CHANGED+="$(basename "$path") "
}
changed() { [[ "$CHANGED" == *" $1 "* ]]; }

write_config() {
  mkdir -p "$ETC" "$RUN" "$LOG" "$SPOOL/ctld" "$DIR/munge" "$DIR/dev" "$MYSQL_DIR/etc" "$MYRUN" "$MYLOG" "$MYSQL_DIR/mysql"
  chmod 700 "$SPOOL/ctld"; chmod 711 "$DIR/munge"
  local nodelist ports i n gres_conf="AutoDetect=off" gres_node="" gres_types=""
  if [[ $NODES -eq 1 ]]; then nodelist=n1; ports=$SLURMD_PORT
  else nodelist="n[1-$NODES]"; ports="[$SLURMD_PORT-$((SLURMD_PORT + NODES - 1))]"; fi
  for ((i = 1; i <= NODES; i++)); do mkdir -p "$SPOOL/d-n$i"; done
  if [[ $GPUS -gt 0 ]]; then
    gres_node=" Gres=gpu:$GPUS"; gres_types="GresTypes=gpu"
    for ((i = 1; i <= NODES; i++)); do
      n="n$i"; mkdir -p "$DIR/dev/$n"
      # Slurm wants a device file per GPU: a symlink to /dev/null passes its check.
      for ((g = 0; g < GPUS; g++)); do ln -sfn /dev/null "$DIR/dev/$n/gpu$g"; done
      gres_conf+=$'\n'"NodeName=$n Name=gpu File=$DIR/dev/$n/gpu[0-$((GPUS - 1))]"
    done
  fi
  write_file "$MYCNF" 644 <<EOF
[mysqld]
datadir=$MYSQL_DIR/mysql/data
socket=$MYRUN/mysqld.sock
pid-file=$MYRUN/mysqld.pid
port=$MYSQL_PORT
bind-address=127.0.0.1
user=root
log-error=$MYLOG/mysqld.log
skip-name-resolve
innodb_buffer_pool_size=128M
innodb_lock_wait_timeout=900
[client]
socket=$MYRUN/mysqld.sock
port=$MYSQL_PORT
EOF
  [[ -s "$MYSQL_DIR/etc/dbpass" ]] || { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$MYSQL_DIR/etc/dbpass"; chmod 600 "$MYSQL_DIR/etc/dbpass"; }
  # lines only some versions take (each starts with a newline; 22.05's files stay as they were)
  local jwt="" debug_flags=$'\nDebugFlags=NO_CONF_HASH' switch=$'\nSwitchType=switch/none'
  if [[ -n "$CHROOT" ]]; then
    # slurmrestd's JWT: a key per cluster; 23.x+ dropped switch/none and NO_CONF_HASH
    [[ -s "$ETC/jwt_hs256.key" ]] || { head -c 32 /dev/urandom >"$ETC/jwt_hs256.key"; chmod 600 "$ETC/jwt_hs256.key"; }
    jwt=$'\nAuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key='"$ETC/jwt_hs256.key"
    debug_flags=""; switch=""
  fi
  write_file "$ETC/slurmdbd.conf" 600 <<EOF
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$LOG/slurmdbd.log
PidFile=$RUN/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MYSQL_PORT
StorageUser=slurm
StoragePass=$(cat "$MYSQL_DIR/etc/dbpass")
StorageLoc=$ACCT_DB$jwt
EOF
  write_file "$CONF" 644 <<EOF
# written by deploy/slurm/local-slurm.sh: one host, fake resources
ClusterName=$CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK$jwt
StateSaveLocation=$SPOOL/ctld
SlurmdSpoolDir=$SPOOL/d-%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info$debug_flags
PlugStackConfig=$ETC/plugstack.conf
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none$switch
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=256
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
MessageTimeout=5
MinJobAge=300
MaxJobCount=100000
JobRequeue=1
$gres_types
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageEnforce=associations
AccountingStoreFlags=job_comment
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
PriorityType=priority/multifactor
PriorityDecayHalfLife=$HALFLIFE
PriorityCalcPeriod=1
PriorityMaxAge=1-0
PriorityWeightAge=1000
PriorityWeightFairshare=100000
PriorityWeightJobSize=0
PriorityWeightPartition=0
PriorityWeightQOS=0
JobCompType=jobcomp/none
NodeName=$nodelist NodeAddr=127.0.0.1 NodeHostname=localhost Port=$ports CPUs=$CPUS RealMemory=$MEM_MB$gres_node State=UNKNOWN
PartitionName=main Nodes=$nodelist Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$nodelist Default=NO MaxTime=INFINITE State=UP
EOF
  write_file "$ETC/plugstack.conf" 644 </dev/null
  # 23.x+ slurmd initialises a cgroup plugin even with proctrack/linuxproc: none here
  [[ -z "$CHROOT" ]] || write_file "$ETC/cgroup.conf" 644 <<<"CgroupPlugin=disabled"
  write_file "$ETC/gres.conf" 644 <<<"$gres_conf"
}

# --- daemons -----------------------------------------------------------------------------------
start_munge() {
  if [[ ! -s "$DIR/munge/munge.key" ]]; then
    mungekey --create --keyfile="$DIR/munge/munge.key" --force; chmod 600 "$DIR/munge/munge.key"
  fi
  if ! running "$RUN/munged.pid" munged; then
    rm -f "$MUNGE_SOCK" "$MUNGE_SOCK.lock"
    munged --socket="$MUNGE_SOCK" --key-file="$DIR/munge/munge.key" --pid-file="$RUN/munged.pid" \
      --log-file="$LOG/munged.log" --seed-file="$DIR/munge/munged.seed" --num-threads=4 9>&- \
      || die "munged failed: $(tail -3 "$LOG/munged.log")"
  fi
  wait_until munged "$RUN/munged.pid" munged munge_ok || die "munged does not answer on $MUNGE_SOCK"
}

start_mysql() {
  # one MariaDB may serve several clusters (one database each): start it under its own lock
  exec 8>"$MYSQL_DIR/.mysql.lock"
  flock -w 600 8 || die "another local-slurm.sh holds $MYSQL_DIR/.mysql.lock"
  if [[ ! -d "$MYSQL_DIR/mysql/data/mysql" ]]; then
    log "initialising the accounting database"
    rm -rf "$MYSQL_DIR/mysql/data"
    mariadb-install-db --defaults-file="$MYCNF" --auth-root-authentication-method=normal --skip-test-db --user=root \
      >"$MYLOG/mysql-install.log" 2>&1 || die "mariadb-install-db failed: $MYLOG/mysql-install.log"
  fi
  if MATCH="$MYSQL_DIR" running "$MYRUN/mysqld.pid" mariadbd && changed my.cnf; then MATCH="$MYSQL_DIR" stop_pidfiles mariadbd "$MYRUN/mysqld.pid"; fi
  if ! MATCH="$MYSQL_DIR" running "$MYRUN/mysqld.pid" mariadbd; then
    need_port "$MYSQL_PORT" "the accounting MariaDB"
    # --pidfile: start-stop-daemon then matches only this instance (the machine may run its own MariaDB)
    start-stop-daemon --start --background --pidfile "$MYRUN/mysqld.pid" --exec /usr/sbin/mariadbd -- --defaults-file="$MYCNF" 8>&- 9>&-
  fi
  MATCH="$MYSQL_DIR" wait_until "MariaDB :$MYSQL_PORT" "$MYRUN/mysqld.pid" mariadbd mysql_ok || die "MariaDB did not start: $(tail -5 "$MYLOG/mysqld.log")"
  local pass; pass="$(cat "$MYSQL_DIR/etc/dbpass")"
  mariadb --defaults-file="$MYCNF" -uroot -e "
    CREATE DATABASE IF NOT EXISTS $ACCT_DB;
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$pass';
    GRANT ALL ON $ACCT_DB.* TO 'slurm'@'127.0.0.1';
    GRANT ALL ON $ACCT_DB.* TO 'slurm'@'localhost';" || die "could not create the slurm database user"
  exec 8>&-
}

start_dbd() {
  if running "$RUN/slurmdbd.pid" slurmdbd && { changed slurmdbd.conf || changed my.cnf; }; then stop_pidfiles slurmdbd "$RUN/slurmdbd.pid"; fi
  if ! running "$RUN/slurmdbd.pid" slurmdbd; then
    need_port "$DBD_PORT" slurmdbd
    SLURM_CONF="$CONF" slurmdbd 9>&- || die "slurmdbd failed: $(tail -5 "$LOG/slurmdbd.log")"
  fi
  wait_until slurmdbd "$RUN/slurmdbd.pid" slurmdbd dbd_ok || die "slurmdbd does not answer: $(tail -5 "$LOG/slurmdbd.log")"
  if ! sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER"; then
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
  fi
  # root may submit under the default account (AccountingStorageEnforce=associations)
  if ! sacctmgr -n -P show assoc where cluster="$CLUSTER" user=root format=account | grep -q .; then
    sacctmgr -i add account fairportal cluster="$CLUSTER" description=fairportal organization=fairportal >/dev/null 2>&1 || true
    sacctmgr -i add user root account=fairportal cluster="$CLUSTER" >/dev/null
  fi
}

start_ctld() {
  if ! running "$RUN/slurmctld.pid" slurmctld; then
    need_port "$CTLD_PORT" slurmctld
    slurmctld -f "$CONF" 9>&- || die "slurmctld failed: $(tail -5 "$LOG/slurmctld.log")"
  fi
  wait_until slurmctld "$RUN/slurmctld.pid" slurmctld ctld_ok || die "slurmctld does not answer: $(tail -5 "$LOG/slurmctld.log")"
}

start_nodes() {
  local i
  for ((i = 1; i <= NODES; i++)); do
    if ! running "$RUN/slurmd-n$i.pid" slurmd; then
      need_port "$((SLURMD_PORT + i - 1))" "slurmd n$i"
      slurmd -f "$CONF" -N "n$i" 9>&- || die "slurmd n$i failed: $(tail -5 "$LOG/slurmd-n$i.log")"
    fi
  done
  local deadline=$(( $(date +%s) + TIMEOUT )) resumed=0
  until nodes_ok; do
    if [[ $resumed -eq 0 && $(date +%s) -gt $(( deadline - TIMEOUT + 10 )) ]]; then
      # a node left down or drained by an earlier run: resume it once
      for n in $(sinfo -h -N -o '%N %t' | awk '$2 ~ /(drain|drng|down|inval|fail)/ {print $1}'); do
        scontrol update nodename="$n" state=resume 2>/dev/null || true
      done
      resumed=1
    fi
    [[ $(date +%s) -lt $deadline ]] || die "nodes not usable: $(sinfo -N -o '%N %t %E' | tr '\n' ' ')"
    sleep 0.2
  done
  log "nodes ready: $(sinfo -h -o '%P %D %t' | tr '\n' ' ')"
}

print_env() {
  echo "export SLURM_CONF=$CONF"
  if [[ -n "$CHROOT" ]]; then echo "export SLURM_BIN_DIR=$DIR/bin"; else echo "export SLURM_BIN_DIR="; fi
  echo "export FAIRPORTAL_SLURM_DIR=$DIR"
}

# --- a chroot version: mounts and wrappers -------------------------------------------------------
TOOLS=(squeue sacct sbatch scontrol scancel sinfo sacctmgr sprio sshare srun salloc sstat sreport munge unmunge)
DAEMONS=(slurmctld slurmd slurmdbd munged slurmrestd)
prepare_root() {
  [[ -n "$CHROOT" ]] || return 0
  [[ -f "$CHROOT/.fairportal-rootfs" ]] || die "no Slurm $VERSION root at $CHROOT (start builds it)"
  # the root shares /proc and /dev with the host; this cluster's directory appears at the same path
  mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
  mountpoint -q "$CHROOT/dev" || mount --bind /dev "$CHROOT/dev"
  # names resolve as on the host (localhost, the host name munged and slurmd look up)
  cmp -s /etc/hosts "$CHROOT/etc/hosts" || cp /etc/hosts "$CHROOT/etc/hosts"
  mkdir -p "$CHROOT$DIR"
  mountpoint -q "$CHROOT$DIR" || mount --bind "$DIR" "$CHROOT$DIR"
  mkdir -p "$DIR/bin" "$DIR/sbin"
  local tool where path
  for tool in "${TOOLS[@]}" "${DAEMONS[@]}"; do
    where=bin; [[ " ${DAEMONS[*]} " == *" $tool "* ]] && where=sbin
    path=/usr/bin/$tool; [[ -x "$CHROOT/usr/bin/$tool" ]] || path=/usr/sbin/$tool
    write_file "$DIR/$where/$tool" 755 <<EOF
#!/bin/sh
# written by deploy/slurm/local-slurm.sh: Slurm $VERSION's $tool (root $CHROOT) for the cluster in $DIR
SLURM_CONF=$CONF
export SLURM_CONF
exec chroot $CHROOT $path "\$@"
EOF
  done
}

unmount_root() {
  [[ -n "$CHROOT" ]] || return 0
  if mountpoint -q "$CHROOT$DIR"; then umount "$CHROOT$DIR" 2>/dev/null || umount -l "$CHROOT$DIR" || true; fi
}

REST_PID="$RUN/slurmrestd.pid"
start_rest() {
  [[ -n "$CHROOT" ]] || die "slurmrestd runs for 24.11 and 26.05 (the host's 22.05 has no JWT plugin here)"
  prepare_root
  if ! running "$REST_PID" slurmrestd; then
    need_port "$REST_PORT" slurmrestd
    # slurmrestd refuses to run as root (26.05 even when told otherwise): it runs as nobody (65534);
    # SLURM_JWT=daemon: it takes the JWT token of each request
    SLURM_JWT=daemon setsid "$DIR/sbin/slurmrestd" -u 65534 -g 65534 -a rest_auth/jwt "127.0.0.1:$REST_PORT" \
      >>"$LOG/slurmrestd.log" 2>&1 </dev/null 9>&- &
    echo $! >"$REST_PID"
  fi
  local deadline=$(( $(date +%s) + TIMEOUT ))
  until ss -Hltn "sport = :$REST_PORT" | grep -q .; do
    running "$REST_PID" slurmrestd || die "slurmrestd died: $(tail -3 "$LOG/slurmrestd.log")"
    [[ $(date +%s) -lt $deadline ]] || die "slurmrestd does not listen on $REST_PORT"
    sleep 0.2
  done
  # A token for the tests and the bench (readable by root only), and where to find both: rest.env.
  local token
  token="$("$DIR/bin/scontrol" token username=root lifespan=172800 | sed -n 's/^SLURM_JWT=//p')"
  [[ -n "$token" ]] || die "scontrol token gave no token (AuthAltTypes=auth/jwt?)"
  printf '%s\n' "$token" | write_file "$DIR/etc/jwt.token" 600
  write_file "$DIR/rest.env" 644 <<EOF
SLURM_REST_URL=http://127.0.0.1:$REST_PORT
SLURM_JWT_FILE=$DIR/etc/jwt.token
SLURM_REST_USER=root
EOF
  log "slurmrestd on http://127.0.0.1:$REST_PORT (token in $DIR/etc/jwt.token, settings in $DIR/rest.env)"
}

write_cluster_env() {
  write_file "$DIR/cluster.env" 644 <<EOF
FAIRPORTAL_SLURM_VERSION=$VERSION
FAIRPORTAL_SLURM_PORT_BASE=$PORT_BASE
FAIRPORTAL_SLURM_CTLD_PORT=$CTLD_PORT
FAIRPORTAL_SLURM_SLURMD_PORT=$SLURMD_PORT
FAIRPORTAL_SLURM_DBD_PORT=$DBD_PORT
FAIRPORTAL_SLURM_REST_PORT=$REST_PORT
FAIRPORTAL_SLURM_MYSQL_PORT=$MYSQL_PORT
FAIRPORTAL_SLURM_MYSQL_DIR=$MYSQL_DIR
FAIRPORTAL_SLURM_NODES=$NODES
FAIRPORTAL_SLURM_ACCT_DB=$ACCT_DB
EOF
}

start() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (it installs packages and runs the Slurm daemons)"
  install_packages
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock -w 600 9 || die "another local-slurm.sh holds $DIR/.lock"
  touch "$DIR/.fairportal-slurm"
  write_cluster_env
  prepare_root
  write_config
  start_munge
  start_mysql
  start_dbd
  if changed slurm.conf || changed gres.conf || changed cgroup.conf; then
    stop_pidfiles slurmd "$RUN"/slurmd-*.pid
    stop_pidfiles slurmctld "$RUN/slurmctld.pid"
  fi
  start_ctld
  start_nodes
  print_env >"$DIR/env.sh"
  print_env
}

stop() {
  [[ -e "$DIR/.fairportal-slurm" ]] || { log "nothing to stop in $DIR"; return 0; }
  if running "$RUN/slurmctld.pid" slurmctld && timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; then
    local jobs; jobs="$(timeout 20 squeue -h -o '%A' 2>/dev/null | tr '\n' ' ')"
    if [[ -n "${jobs// /}" ]]; then
      log "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      timeout 60 scancel $jobs 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do [[ -z "$(timeout 10 squeue -h -t R,CG -o %A 2>/dev/null)" ]] && break; sleep 0.2; done
    fi
  fi
  stop_pidfiles slurmd "$RUN"/slurmd-*.pid
  stop_pidfiles slurmctld "$RUN/slurmctld.pid"
  stop_pidfiles slurmdbd "$RUN/slurmdbd.pid"
  # the MariaDB only when this cluster owns it (others may share it)
  [[ "$MYSQL_DIR" != "$DIR" ]] || MATCH="$MYSQL_DIR" stop_pidfiles mariadbd "$MYRUN/mysqld.pid"
  stop_pidfiles slurmrestd "$REST_PID"
  stop_pidfiles munged "$RUN/munged.pid"
  unmount_root
  log "stopped"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) running "$RUN/slurmctld.pid" slurmctld && ctld_ok && nodes_ok ;;
  stop-ctld) stop_pidfiles slurmctld "$RUN/slurmctld.pid" ;;
  start-ctld) prepare_root; start_ctld ;;
  env) print_env ;;
  start-rest) start_rest ;;
  stop-rest) stop_pidfiles slurmrestd "$REST_PID" ;;
  *) echo "usage: $0 start|stop|status|stop-ctld|start-ctld|env|start-rest|stop-rest" >&2; exit 2 ;;
esac
