// Does flate2's default backend (miniz_oxide) at its best level reproduce the published zlib bytes?
use std::io::{Read, Write};
fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let mut body = Vec::new();
        flate2::read::ZlibDecoder::new(&data[10..]).read_to_end(&mut body).unwrap();
        for level in [9u32, 6, 10] {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
            e.write_all(&body).unwrap();
            let z = e.finish().unwrap();
            println!("{path}: miniz_oxide level {level}: {} bytes, same as file: {}", z.len(), z[..] == data[10..]);
        }
    }
}
