//! Splitting a journal into lines as it is read, with a cap on a line's length: a longer line
//! is skipped as it goes by, never held whole, and reported like a damaged one. Reading a
//! journal therefore costs at most one line's cap of memory besides what it holds.

/// The longest journal line read or written: 64 MiB, the longest request line acplb accepts,
/// so no prompt or update that reached acplb needs more.
pub const MAX_LINE: usize = 64 << 20;

/// A line that keeps no more than this much room once it is done with.
const KEEP: usize = 1 << 20;

/// One line, without its newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// A line within the cap.
    Whole(&'a [u8]),
    /// A line over the cap, of this many bytes, skipped.
    TooLong(u64),
}

/// Splits bytes pushed in pieces into lines; a line's start waits for its end.
#[derive(Debug)]
pub(super) struct Splitter {
    cap: usize,
    /// The start of a line whose newline has not come yet.
    partial: Vec<u8>,
    /// The length so far of a line over the cap being skipped.
    skipping: Option<u64>,
}

impl Splitter {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            cap,
            partial: Vec::new(),
            skipping: None,
        }
    }

    /// Splits `chunk`, handing `each` every line it completes, in order; stops at `each`'s
    /// first error.
    pub(super) fn push<E>(
        &mut self,
        mut chunk: &[u8],
        mut each: impl FnMut(Line<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(end) = chunk.iter().position(|b| *b == b'\n') {
            let (piece, rest) = (&chunk[..end], &chunk[end + 1..]);
            chunk = rest;
            if let Some(skipped) = self.skipping.take() {
                each(Line::TooLong(skipped + piece.len() as u64))?;
            } else if self.partial.is_empty() {
                if piece.len() > self.cap {
                    each(Line::TooLong(piece.len() as u64))?;
                } else {
                    each(Line::Whole(piece))?;
                }
            } else if self.partial.len() + piece.len() > self.cap {
                let len = (self.partial.len() + piece.len()) as u64;
                self.release();
                each(Line::TooLong(len))?;
            } else {
                self.partial.extend_from_slice(piece);
                let done = each(Line::Whole(&self.partial));
                self.release();
                done?;
            }
        }
        if let Some(skipped) = self.skipping.as_mut() {
            *skipped += chunk.len() as u64;
        } else if self.partial.len() + chunk.len() > self.cap {
            self.skipping = Some((self.partial.len() + chunk.len()) as u64);
            self.release();
        } else {
            self.partial.extend_from_slice(chunk);
        }
        Ok(())
    }

    /// What is left once the input ended: a last line without its newline, if any.
    pub(super) fn rest(&self) -> Option<Line<'_>> {
        match self.skipping {
            Some(skipped) => Some(Line::TooLong(skipped)),
            None if self.partial.is_empty() => None,
            None => Some(Line::Whole(&self.partial)),
        }
    }

    /// Forgets the line held, and its room when that was large.
    fn release(&mut self) {
        self.partial.clear();
        if self.partial.capacity() > KEEP {
            self.partial = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(cap: usize, pieces: &[&[u8]]) -> (Vec<String>, Option<String>) {
        let mut splitter = Splitter::new(cap);
        let mut out = Vec::new();
        for piece in pieces {
            splitter
                .push(piece, |line| {
                    out.push(show(line));
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        (out, splitter.rest().map(show))
    }

    fn show(line: Line<'_>) -> String {
        match line {
            Line::Whole(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Line::TooLong(n) => format!("<{n} bytes>"),
        }
    }

    #[test]
    fn lines_split_across_pieces_and_a_last_line_without_its_newline_is_left() {
        let (lines, rest) = split(8, &[b"ab", b"c\nde\n", b"\nf", b"g"]);
        assert_eq!(lines, ["abc", "de", ""]);
        assert_eq!(rest.as_deref(), Some("fg"));
        assert_eq!(split(8, &[b"a\n"]).1, None);
    }

    #[test]
    fn a_line_over_the_cap_is_skipped_without_being_kept() {
        let (lines, rest) = split(4, &[b"ok\n12345\n", b"123", b"45", b"6789", b"\nfine\n1234"]);
        assert_eq!(lines, ["ok", "<5 bytes>", "<9 bytes>", "fine"]);
        assert_eq!(rest.as_deref(), Some("1234"));
        let mut splitter = Splitter::new(4);
        splitter.push(b"123456789", |_| Err::<(), ()>(())).unwrap();
        assert_eq!(splitter.partial.capacity(), 0, "nothing of the long line is held");
        assert_eq!(splitter.rest(), Some(Line::TooLong(9)));
    }
}
