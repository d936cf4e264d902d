//! A done job's certificate file, streamed in chunks that must come in
//! order and add up to the length the first one announced.

use perft_proto as pb;
use tonic::Streaming;

use crate::error::{ClientError, ReplyError};

/// The largest certificate accepted from a coordinator: far above a
/// record job's (10 million units at about 30 bytes each).
pub const MAX_CERTIFICATE_BYTES: u64 = 16 << 30;

/// The whole file the chunks of `stream` carry.
pub(crate) async fn collect(mut stream: Streaming<pb::CertificateChunk>) -> Result<Vec<u8>, ClientError> {
    let broken = |why: String| ClientError::from(ReplyError::Certificate(why));
    let mut bytes: Vec<u8> = Vec::new();
    let mut total: Option<u64> = None;
    while let Some(chunk) = stream.message().await? {
        let announced = *total.get_or_insert(chunk.total_bytes);
        if announced != chunk.total_bytes {
            return Err(broken(format!(
                "a chunk says the file is {} bytes, the first said {announced}",
                chunk.total_bytes
            )));
        }
        if announced > MAX_CERTIFICATE_BYTES {
            return Err(broken(format!(
                "a file of {announced} bytes, more than the {MAX_CERTIFICATE_BYTES} accepted"
            )));
        }
        if chunk.offset != bytes.len() as u64 {
            return Err(broken(format!(
                "a chunk at byte {} where byte {} was due",
                chunk.offset,
                bytes.len()
            )));
        }
        if bytes.len() as u64 + chunk.data.len() as u64 > announced {
            return Err(broken(format!("more than the {announced} bytes announced")));
        }
        if bytes.is_empty() {
            bytes.reserve(announced.min(64 << 20) as usize);
        }
        bytes.extend_from_slice(&chunk.data);
    }
    match total {
        Some(total) if total == bytes.len() as u64 => Ok(bytes),
        Some(total) => Err(broken(format!("it ended at byte {} of {total}", bytes.len()))),
        None => Err(broken("it sent nothing".to_owned())),
    }
}
