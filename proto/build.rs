//! Compiles `perft/v2/perft.proto` with protox (pure Rust: no `protoc` on any
//! machine) and generates the tonic client and server code from it. The
//! encoded descriptor set is kept for gRPC server reflection.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "perft/v2/perft.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["."])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("perft_descriptor.bin"), descriptors.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
