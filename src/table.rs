//! Plain-text tables for the command line (`acplb sessions list`, `acplb queue list`): every
//! column but the last padded to its widest cell, the last one left free; cells kept on one line.

use std::io::Write;

/// Writes `header` then `rows`, columns two spaces apart, trailing blanks trimmed.
pub(crate) fn write<const N: usize>(
    out: &mut impl Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> std::io::Result<()> {
    let header = header.map(str::to_owned);
    let mut widths = [0usize; N];
    for row in std::iter::once(&header).chain(rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < N {
                line.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count() + 2));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `text` on one line (control characters as spaces, ends trimmed), cut to `width` characters
/// with `…` when longer.
pub(crate) fn one_line(text: &str, width: usize) -> String {
    let flat: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= width {
        return flat;
    }
    let mut cut: String = flat.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_the_last_is_free() {
        let mut out = Vec::new();
        let rows = [["a".to_owned(), "long cell".to_owned(), "x y".to_owned()]];
        write(&mut out, ["ID", "S", "TEXT"], &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "ID  S          TEXT\na   long cell  x y\n"
        );
    }

    #[test]
    fn texts_are_one_line_and_cut() {
        assert_eq!(one_line(" fix\nthe bug\n", 48), "fix the bug");
        let long = one_line(&"é".repeat(100), 48);
        assert_eq!(long.chars().count(), 48);
        assert!(long.ends_with('…'));
    }
}
