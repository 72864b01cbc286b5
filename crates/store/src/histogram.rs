//! A latency histogram as the history stores it: HdrHistogram's V2 encoding, lossless, in a blob.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

pub(crate) fn serialize(h: &Histogram<u64>) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("serializing a histogram: {e:?}"))?;
    Ok(buf)
}

pub(crate) fn deserialize(bytes: &[u8]) -> anyhow::Result<Histogram<u64>> {
    let mut reader = bytes;
    Deserializer::new()
        .deserialize(&mut reader)
        .map_err(|e| anyhow::anyhow!("reading a stored histogram: {e:?}"))
}
