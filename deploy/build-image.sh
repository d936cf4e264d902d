#!/usr/bin/env bash
# Builds the static `perft` binary and the container image.
# Usage: deploy/build-image.sh [TAG] [BASE]   (BASE=scratch where no image can be pulled)
#
# PERFT_IMAGE_PROFILE picks the build:
# - release (the default): the images people run; every crate compiled
#   for static linking, fat LTO.
# - dev: CI's compose test. Only the final link is static, so the
#   libraries `cargo test` already compiled (the same profile) are linked
#   as they are: on two cores this costs a couple of minutes, not a whole
#   second build of the tree. The code is the tests' code.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-deep-perft:latest}
base=${2:-gcr.io/distroless/static-debian12:nonroot}
profile=${PERFT_IMAGE_PROFILE:-release}
case "$profile" in
  dev)
    cargo rustc --profile dev --locked -p perft-cli --bin perft -- \
      -C target-feature=+crt-static -C strip=debuginfo
    binary=target/debug/perft
    ;;
  *)
    target=x86_64-unknown-linux-gnu
    RUSTFLAGS='-C target-feature=+crt-static' cargo build --profile "$profile" --locked --target "$target" --bin perft
    binary=target/$target/$profile/perft
    ;;
esac
rm -rf target/image && mkdir -p target/image/data
cp "$binary" target/image/perft
docker build -f deploy/Dockerfile --build-arg "BASE=$base" -t "$tag" target/image
