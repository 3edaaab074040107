//! A newline codec with a maximum line length that survives oversized lines.
//!
//! `tokio_util::codec::LinesCodec` reports an over-long line as an error, and a `FramedRead`
//! ends its stream after any error, so one 64 MiB line would cut the provider off. This codec
//! instead yields [`Frame::Oversized`] and resumes at the next newline, buffering at most
//! `max_len` bytes at any time.

use bytes::{Buf as _, BytesMut};
use tokio_util::codec::Decoder;

/// One frame read from a line-oriented stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its terminator (`\n` or `\r\n`).
    Line(String),
    /// A complete line that is not valid UTF-8: readers that need text take `lossy` (invalid
    /// sequences replaced), strict readers refuse the line.
    NotUtf8 {
        /// The line with invalid sequences replaced by U+FFFD.
        lossy: String,
        /// Byte offset of the first invalid sequence.
        valid_up_to: usize,
    },
    /// A line longer than the limit was skipped; `bytes` is its full length.
    Oversized {
        /// Length of the skipped line in bytes.
        bytes: usize,
    },
}

/// Newline-delimited frames of at most `max_len` bytes.
#[derive(Debug)]
pub struct BoundedLines {
    max_len: usize,
    /// Bytes of the current oversized line already discarded, when skipping.
    skipping: Option<usize>,
    /// How far the buffer has been searched for a newline.
    searched: usize,
}

impl BoundedLines {
    /// A codec that accepts lines of up to `max_len` bytes.
    pub fn new(max_len: usize) -> Self {
        Self {
            max_len,
            skipping: None,
            searched: 0,
        }
    }

    fn line_from(bytes: &[u8]) -> Frame {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(text) => Frame::Line(text.to_owned()),
            Err(e) => Frame::NotUtf8 {
                lossy: String::from_utf8_lossy(bytes).into_owned(),
                valid_up_to: e.valid_up_to(),
            },
        }
    }
}

impl Decoder for BoundedLines {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        loop {
            let newline = buf[self.searched..]
                .iter()
                .position(|b| *b == b'\n')
                .map(|i| i + self.searched);
            match (newline, self.skipping) {
                (Some(at), Some(skipped)) => {
                    buf.advance(at + 1);
                    self.skipping = None;
                    self.searched = 0;
                    return Ok(Some(Frame::Oversized { bytes: skipped + at }));
                }
                (Some(at), None) if at <= self.max_len => {
                    let line = buf.split_to(at + 1);
                    self.searched = 0;
                    return Ok(Some(Self::line_from(&line[..at])));
                }
                (Some(_), None) => {
                    // The line is complete but too long: drop it as a whole.
                    self.skipping = Some(0);
                }
                (None, Some(skipped)) => {
                    self.skipping = Some(skipped + buf.len());
                    buf.clear();
                    self.searched = 0;
                    return Ok(None);
                }
                (None, None) if buf.len() > self.max_len => {
                    self.skipping = Some(0);
                }
                (None, None) => {
                    self.searched = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if let Some(skipped) = self.skipping.take() {
            return Ok(Some(Frame::Oversized {
                bytes: skipped + buf.split().len(),
            }));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        self.searched = 0;
        let rest = buf.split();
        Ok(Some(Self::line_from(&rest)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut codec = BoundedLines::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        while let Some(f) = codec.decode_eof(&mut buf).unwrap() {
            out.push(f);
        }
        out
    }

    fn line(s: &str) -> Frame {
        Frame::Line(s.to_owned())
    }

    #[test]
    fn splits_lines_across_chunks_and_strips_crlf() {
        let got = frames(100, &[b"ab", b"c\r\nde", b"f\n", b"tail"]);
        assert_eq!(got, vec![line("abc"), line("def"), line("tail")]);
    }

    #[test]
    fn oversized_line_is_skipped_and_stream_resumes() {
        let big = [b'x'; 50];
        let got = frames(10, &[b"ok\n", &big[..20], &big[20..], b"\nafter\n"]);
        assert_eq!(
            got,
            vec![line("ok"), Frame::Oversized { bytes: 50 }, line("after")]
        );
    }

    #[test]
    fn oversized_complete_line_in_one_chunk() {
        let got = frames(4, &[b"0123456789\nx\n"]);
        assert_eq!(got, vec![Frame::Oversized { bytes: 10 }, line("x")]);
    }

    #[test]
    fn oversized_last_line_without_newline_is_reported() {
        let got = frames(4, &[b"0123456789"]);
        assert_eq!(got, vec![Frame::Oversized { bytes: 10 }]);
    }

    #[test]
    fn invalid_utf8_is_reported_with_a_lossy_copy_and_the_stream_goes_on() {
        let got = frames(100, &[b"ab\xffc\n", b"next\n"]);
        assert_eq!(
            got,
            vec![
                Frame::NotUtf8 {
                    lossy: "ab\u{fffd}c".into(),
                    valid_up_to: 2
                },
                line("next")
            ]
        );
    }

    #[test]
    fn memory_stays_bounded_while_skipping() {
        let mut codec = BoundedLines::new(16);
        let mut buf = BytesMut::new();
        for _ in 0..1000 {
            buf.extend_from_slice(&[b'y'; 4096]);
            assert!(codec.decode(&mut buf).unwrap().is_none());
            assert!(buf.len() <= 4096 + 16);
        }
        buf.extend_from_slice(b"\n");
        assert_eq!(
            codec.decode(&mut buf).unwrap(),
            Some(Frame::Oversized { bytes: 4096 * 1000 })
        );
    }
}
