#!/usr/bin/env bash
# The README's Quickstart commands, timed, on a fresh clone in a stock Debian 13 (trixie) with
# only python3-venv, nodejs and npm added (and git and ca-certificates, to clone and to reach
# PyPI and npm): the figure the README gives for `nox` comes from here.
#
#   sudo benchmarks/debian13_fresh_clone.sh            # builds /srv/trixie once, then runs
#   sudo ROOT=/srv/trixie REF=main benchmarks/debian13_fresh_clone.sh
#
# Needs root (debootstrap, chroot, mounts) on a Debian or Ubuntu host with network access to
# deb.debian.org, PyPI and the npm registry. Run it on a quiet machine: `nox` is timed.
# Each run is a new user with an empty home (no pip or npm cache) cloning the repository at REF
# (default: the current commit of this checkout) and running every fenced block of the README's
# Quickstart section in order, as that user, with a clean environment, under `time`.
# The tests read third-party data from ../shared/data beside the checkout (README, Development):
# DATA (default: ../shared/data beside this checkout) is copied there.
# Variables: ROOT, REF, DATA, MIRROR (a Debian mirror), EXTRA_CA (a directory of *.crt copied
# into the chroot's trust store, for a network that intercepts TLS; default: the host's
# /usr/local/share/ca-certificates), KEEP=1 (leave the mounts in place), STEPS=N (run only the
# first N blocks: STEPS=1 is the quickstart line alone).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${ROOT:-/srv/trixie}
REF=${REF:-$(git -C "$REPO" rev-parse HEAD)}
DATA=${DATA:-$REPO/../shared/data}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
EXTRA_CA=${EXTRA_CA:-/usr/local/share/ca-certificates}
PACKAGES=(python3-venv python3-dev gcc nodejs npm git ca-certificates)
RUNNER=hermes-user
LOG=${LOG:-${TMPDIR:-/tmp}/hermes-debian13-fresh-clone.log}

[[ $(id -u) == 0 ]] || { echo "run as root (debootstrap, chroot, mount)" >&2; exit 2; }
[[ -d $DATA ]] || { echo "no test data at $DATA (set DATA=...)" >&2; exit 2; }

in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
as_user() { chroot --userspec="$RUNNER:$RUNNER" "$ROOT" env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME="/home/$RUNNER" USER="$RUNNER" LANG=C.UTF-8 TERM=xterm "$@"; }

if [[ ! -x $ROOT/usr/bin/python3 ]]; then
    command -v debootstrap >/dev/null || apt-get install -y debootstrap
    debootstrap --variant=minbase trixie "$ROOT" "$MIRROR"
fi

mounted=()
cleanup() {
    [[ ${KEEP:-0} == 1 ]] && return
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
}
trap cleanup EXIT
mount_once() {  # mount_once TARGET ARGS...: mounts unless TARGET already is a mount point
    local target=$ROOT/$1
    shift
    if ! mountpoint -q "$target"; then mount "$@" "$target" && mounted+=("$target"); fi
}
mount_once proc -t proc proc
mount_once sys --rbind /sys
mount_once dev --bind /dev
mount_once dev/pts --bind /dev/pts  # pexpect's terminals
mount_once dev/shm -t tmpfs -o mode=1777 tmpfs  # joblib's semaphores (the hybrid plugin's tests)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
if compgen -G "$EXTRA_CA/*.crt" >/dev/null; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp "$EXTRA_CA"/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi

in_root apt-get update -q
in_root apt-get install -y -q "${PACKAGES[@]}"
in_root update-ca-certificates >/dev/null

# A new user, an empty home: no pip, npm or nox cache of an earlier run.
in_root userdel -r "$RUNNER" 2>/dev/null || true
in_root useradd -m -s /bin/bash "$RUNNER"
home=$ROOT/home/$RUNNER
git clone -q --bare "$REPO" "$home/hermes-core.git"
git -C "$home/hermes-core.git" update-ref refs/heads/fresh-clone "$REF"
git -C "$home/hermes-core.git" symbolic-ref HEAD refs/heads/fresh-clone
mkdir -p "$home/shared" && cp -r "$DATA" "$home/shared/data"
in_root chown -R "$RUNNER:$RUNNER" "/home/$RUNNER"
as_user git clone -q "/home/$RUNNER/hermes-core.git" "/home/$RUNNER/hermes-core"

# Every fenced block of the README's Quickstart section, in order.
mapfile -d '' blocks < <(python3 - "$home/hermes-core/README.md" <<'EOF'
import re, sys
readme = open(sys.argv[1], encoding="utf-8").read()
section = re.split(r"^## ", readme.split("\n## Quickstart", 1)[1], flags=re.M)[0]
for block in re.findall(r"^```[^\n]*\n(.*?)^```", section, re.M | re.S):
    sys.stdout.write(block.strip() + "\0")
EOF
)

mkdir -p "$(dirname "$LOG")"
{
    echo "commit $(as_user git -C "/home/$RUNNER/hermes-core" rev-parse --short HEAD)"
    date -u +%FT%TZ
    echo "$(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    as_user sh -c 'python3 --version; echo "node $(node --version), npm $(npm --version)"'
} | tee "$LOG"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk "BEGIN { exit !($load >= 1.0) }"; then
    echo "warning: load average $load before the run: the times are not a quiet machine's" |
        tee -a "$LOG"
fi
status=0
for block in "${blocks[@]:0:${STEPS:-${#blocks[@]}}}"; do
    echo "\$ $block" | tee -a "$LOG"
    start=$(date +%s)
    as_user bash -c "cd ~/hermes-core && $block" >>"$LOG" 2>&1 || status=$?
    seconds=$(($(date +%s) - start))
    printf 'exit %s after %dm%02ds\n' "$status" $((seconds / 60)) $((seconds % 60)) | tee -a "$LOG"
    [[ $status == 0 ]] || break
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); full output in $LOG"
exit "$status"
