#!/usr/bin/env bash
# Builds the static `perft` binary and the container image.
# Usage: deploy/build-image.sh [TAG] [BASE]   (BASE=scratch where no image can be pulled)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-deep-perft:latest}
base=${2:-gcr.io/distroless/static-debian12:nonroot}
target=x86_64-unknown-linux-gnu
# The Cargo profile: release (fat LTO) for images people run; CI's compose
# test builds with image-test (no LTO, parallel codegen), minutes faster
# on two cores and the same code.
profile=${PERFT_IMAGE_PROFILE:-release}
RUSTFLAGS='-C target-feature=+crt-static' cargo build --profile "$profile" --locked --target "$target" --bin perft
rm -rf target/image && mkdir -p target/image/data
cp "target/$target/$profile/perft" target/image/perft
docker build -f deploy/Dockerfile --build-arg "BASE=$base" -t "$tag" target/image
