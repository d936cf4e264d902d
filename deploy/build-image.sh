#!/usr/bin/env bash
# Builds the static `perft` binary and the container image.
# Usage: deploy/build-image.sh [TAG] [BASE]   (BASE=scratch where no image can be pulled)
#
# PERFT_IMAGE_PROFILE picks the build:
# - release (the default): the images people run; every crate compiled
#   for static linking, fat LTO.
# - dev: CI's compose test. Only the final link is static, so the
#   dependencies `cargo test` already compiled (the same profile) are
#   reused; only the crates whose features the test build unifies
#   differently (the coordinator's and worker's fault injectors, which the
#   image must not have) and those above them compile again: about 2 min
#   on two cores, against 3.5 for a second build of the whole tree.
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
