//! A journal's lines as it is read a piece at a time, through the transport's bounded line
//! codec: a line over the cap is skipped as it goes by, never held whole, and comes out as
//! [`Frame::Oversized`] to be reported like a damaged line. Reading a journal thus costs at
//! most one line's cap of memory besides what is kept of it.

use std::io::{self, Read};

use bytes::BytesMut;
use tokio_util::codec::Decoder as _;

use crate::transport::{BoundedLines, Frame};

/// The longest journal line read or written: 64 MiB, the longest request line acplb accepts,
/// so no prompt or update that reached acplb needs more.
pub const MAX_LINE: usize = 64 << 20;

/// How much is read at once.
const CHUNK: usize = 256 << 10;

/// Lines of a file read a piece at a time.
#[derive(Debug)]
pub(super) struct Lines {
    codec: BoundedLines,
    /// Read and not yet split off as a line.
    buf: BytesMut,
}

impl Lines {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            codec: BoundedLines::new(cap),
            buf: BytesMut::new(),
        }
    }

    /// Reads the next piece of `input`; how many bytes it had (0: none for now, or the end).
    pub(super) fn read_from(&mut self, input: &mut impl Read) -> io::Result<usize> {
        let start = self.buf.len();
        self.buf.resize(start + CHUNK, 0);
        let read = loop {
            match input.read(&mut self.buf[start..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        self.buf.truncate(start + *read.as_ref().unwrap_or(&0));
        read
    }

    /// The next complete line read, if any.
    pub(super) fn next_line(&mut self) -> Option<Frame> {
        // The codec's only error is its own `io::Error` type, which it never returns.
        self.codec.decode(&mut self.buf).ok().flatten()
    }

    /// Once the input ended: the last line, which had no newline, if there is one.
    pub(super) fn rest(&mut self) -> Option<Frame> {
        self.codec.decode_eof(&mut self.buf).ok().flatten()
    }
}
