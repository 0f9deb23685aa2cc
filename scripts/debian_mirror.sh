#!/usr/bin/env bash
# scripts/debian_mirror.sh — provides: the Debian archive this machine's apt uses (its first
# non-security source, deb822 or one-line format), printed for debootstrap and the like;
# http://deb.debian.org/debian where apt names none.
set -euo pipefail
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
  awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}')
[[ -n $mirror ]] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
  awk '$1 == "deb" && $2 !~ /security/ {print ($2 ~ /^\[/ ? $3 : $2); exit}')
echo "${mirror:-http://deb.debian.org/debian}"
