#!/bin/bash
# A throwaway single-node Slurm (munged + slurmctld + slurmd) on this machine,
# for trying the job-array recipe in this folder without a real cluster.
# Works as root without systemd or cgroups (containers, CI).
#
#   eval "$(deploy/slurm/local-slurm.sh start)"   # prints: export SLURM_CONF=...
#   deploy/slurm/local-slurm.sh status
#   deploy/slurm/local-slurm.sh stop
#
# Everything Slurm writes (conf, state, spool, logs, PID files) lives in
# $LOCAL_SLURM_DIR (default /tmp/c4sim-slurm). Only stdout carries the export
# line, so that `eval` works; progress goes to stderr.
set -eu

DIR=${LOCAL_SLURM_DIR:-/tmp/c4sim-slurm}
CONF=$DIR/slurm.conf
WAIT_S=${LOCAL_SLURM_WAIT_S:-60}
MUNGE_SOCKET=/run/munge/munge.socket.2

say() { echo "local-slurm: $*" >&2; }
die() { say "error: $*"; exit 1; }

# Whether PID exists and is not a zombie: daemons are reparented to PID 1,
# which in some containers reaps them only seconds after they die, and kill -0
# succeeds on a zombie.
running() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# PID recorded in $DIR/NAME.pid if that process is still NAME (a stale file from a
# killed run may name a PID that has since been reused by something else).
alive_pid() {
    local name=$1 pid
    pid=$(cat "$DIR/$name.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && running "$pid" || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
    echo "$pid"
}

install_packages() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && return 0
    [ "$(id -u)" = 0 ] || die "slurmctld is missing and installing it needs root"
    say "installing slurm-wlm and munge with apt-get"
    local t0=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    # Recommends would add every plugin's -dev package: not needed to run jobs.
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
    say "apt-get took $((SECONDS - t0)) s"
}

start_munge() {
    if alive_pid munged >/dev/null; then return 0; fi
    # munged refuses to run as root with the Debian layout (its dirs belong to
    # the munge user and it checks their ownership), so run it as munge, as
    # the packaged service does. /run is a tmpfs: the socket dir must be remade.
    mkdir -p /run/munge
    chown munge:munge /run/munge
    chmod 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 2>/dev/null
    fi
    chown munge:munge /etc/munge /etc/munge/munge.key
    chmod 0700 /etc/munge
    chmod 0400 /etc/munge/munge.key
    # A munged left from an earlier start (state dir wiped, or killed run):
    # adopt it if it answers, else clear its stale socket lock and pid file.
    local pid
    pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
    if [ -n "$pid" ] && running "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ] \
        && munge -n -S "$MUNGE_SOCKET" </dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1; then
        echo "$pid" >"$DIR/munged.pid"
        return 0
    fi
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged --force \
        || { tail -20 /var/log/munge/munged.log >&2 || true; die "munged did not start"; }
    local i
    for i in $(seq 50); do
        [ -s /run/munge/munged.pid ] && break
        sleep 0.1
    done
    cp /run/munge/munged.pid "$DIR/munged.pid"
    munge -n </dev/null | unmunge >/dev/null \
        || { tail -20 /var/log/munge/munged.log >&2 || true; die "munge round trip failed"; }
}

write_conf() {
    local host cpus sockets cores threads mem
    host=$(hostname -s)
    # slurmd -C reports the topology slurmd itself will detect; a NodeName that
    # disagrees with it (or claims more memory) leaves the node INVAL/DRAIN.
    local hw
    hw=$(slurmd -C | head -1)
    field() { echo "$hw" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    cpus=$(field CPUs); sockets=$(field SocketsPerBoard)
    cores=$(field CoresPerSocket); threads=$(field ThreadsPerCore)
    mem=$(field RealMemory)
    # Free memory shifts a little between runs; claim slightly less than seen.
    mem=$((mem * 95 / 100))
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    # The node and controller are addressed as 127.0.0.1 so that a hostname
    # that does not resolve (or resolves to another interface) does not matter.
    cat >"$CONF" <<EOF
# Written by deploy/slurm/local-slurm.sh: a one-node cluster for local tests.
ClusterName=c4sim-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Boards=1 SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

node_state() {
    SLURM_CONF=$CONF timeout 10 sinfo -h -N -o '%T' 2>/dev/null | head -1
}

show_logs() {
    local f
    for f in "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" /var/log/munge/munged.log; do
        [ -f "$f" ] || continue
        echo "---- last lines of $f" >&2
        tail -25 "$f" >&2
    done
}

cmd_start() {
    install_packages
    mkdir -p "$DIR"
    start_munge
    if ! alive_pid slurmctld >/dev/null || ! alive_pid slurmd >/dev/null; then
        # A half-started cluster (one daemon killed) is restarted whole.
        stop_daemon slurmd
        stop_daemon slurmctld
        write_conf
        # -c: start from a clean job/node state, not jobs of a killed run.
        slurmctld -c -f "$CONF" || { show_logs; die "slurmctld did not start"; }
        slurmd -f "$CONF" || { show_logs; die "slurmd did not start"; }
    fi
    local t0=$SECONDS state=
    while [ $((SECONDS - t0)) -lt "$WAIT_S" ]; do
        state=$(node_state)
        case $state in idle | mixed | allocated) break ;; esac
        sleep 1
    done
    case $state in
        idle | mixed | allocated) ;;
        *)
            SLURM_CONF=$CONF timeout 10 sinfo -N -l >&2 || true
            show_logs
            die "node not idle after ${WAIT_S}s (state: ${state:-no answer from slurmctld})"
            ;;
    esac
    say "up: node $(hostname -s) is $state; state in $DIR"
    echo "export SLURM_CONF=$CONF"
}

# Sends TERM to a recorded daemon, waits, then KILL.
stop_daemon() {
    local name=$1 pid i
    pid=$(alive_pid "$name") || { rm -f "$DIR/$name.pid"; return 0; }
    kill "$pid" 2>/dev/null || true
    for i in $(seq 100); do
        running "$pid" || break
        sleep 0.1
    done
    if running "$pid"; then
        say "$name ($pid) ignored TERM for 10 s: killing it"
        kill -9 "$pid" 2>/dev/null || true
        while running "$pid"; do sleep 0.1; done
    fi
    rm -f "$DIR/$name.pid"
}

cmd_stop() {
    # Jobs still running would outlive slurmd (slurmstepd is its own process).
    if alive_pid slurmctld >/dev/null; then
        SLURM_CONF=$CONF timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    stop_daemon slurmd
    stop_daemon slurmctld
    stop_daemon munged
    say "stopped"
}

cmd_status() {
    local name pid rc=0
    for name in munged slurmctld slurmd; do
        if pid=$(alive_pid "$name"); then
            say "$name running (pid $pid)"
        else
            say "$name not running"
            rc=1
        fi
    done
    if [ "$rc" = 0 ]; then
        SLURM_CONF=$CONF timeout 10 sinfo -N >&2 || rc=1
        echo "export SLURM_CONF=$CONF"
    fi
    return "$rc"
}

case ${1:-} in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    *) echo "usage: $0 start|stop|status   (state in \$LOCAL_SLURM_DIR, default /tmp/c4sim-slurm)" >&2; exit 2 ;;
esac
