//! A small POSIX-shell lexer: words with their quoting removed, and the operators between them.
//!
//! It understands just enough of `bash` to read the one-line commands Codex runs: single and
//! double quotes, backslash escapes, comments, `|`, `&&`, `||`, `;`, newlines and simple
//! redirections. Anything it does not understand (subshells, command substitution, here-docs,
//! background jobs, unterminated quotes) makes [`lex`] return `None`, and callers treat the
//! command as opaque.

/// One shell word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text with quotes and escapes removed.
    pub(crate) text: String,
    /// False when the word holds an unquoted or double-quoted expansion (`$x`, `~`), so its
    /// runtime value is not `text`.
    pub(crate) literal: bool,
    /// True when the word holds an unquoted glob character (`*`, `?`, `[`).
    pub(crate) glob: bool,
}

/// An operator between words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// `|`
    Pipe,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;` or a newline.
    Seq,
    /// A redirection; `harmless` when it only discards output or merges stderr into stdout.
    Redirect {
        /// `2>/dev/null`, `>/dev/null`, `&>/dev/null`, `2>&1`.
        harmless: bool,
    },
}

/// A lexed token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word.
    Word(Word),
    /// An operator.
    Op(Op),
}

/// Lexes `input`, or returns `None` when it uses shell syntax this lexer does not model.
pub(crate) fn lex(input: &str) -> Option<Vec<Token>> {
    Lexer {
        chars: input.chars().peekable(),
        tokens: Vec::new(),
        word: None,
    }
    .run()
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    tokens: Vec<Token>,
    word: Option<Word>,
}

impl Lexer<'_> {
    fn run(mut self) -> Option<Vec<Token>> {
        while let Some(c) = self.chars.next() {
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' => self.op(Op::Seq),
                '#' if self.word.is_none() => self.skip_comment(),
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '\\' => self.escaped(),
                '|' => self.pipe_or()?,
                '&' => self.and_or_redirect()?,
                ';' => {
                    if self.chars.peek() == Some(&';') {
                        return None;
                    }
                    self.op(Op::Seq);
                }
                '>' | '<' => self.redirect(c)?,
                '(' | ')' | '`' => return None,
                '$' => self.dollar()?,
                '~' if self.word.is_none() => self.push('~', false, false),
                '*' | '?' | '[' => self.push(c, true, true),
                _ => self.push(c, true, false),
            }
        }
        self.end_word();
        Some(self.tokens)
    }

    fn push(&mut self, c: char, literal: bool, glob: bool) {
        let word = self.word.get_or_insert_with(|| Word {
            text: String::new(),
            literal: true,
            glob: false,
        });
        word.text.push(c);
        word.literal &= literal;
        word.glob |= glob;
    }

    /// Starts a word without adding text, so `''` still yields an (empty) word.
    fn touch(&mut self) {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            literal: true,
            glob: false,
        });
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.tokens.push(Token::Word(word));
        }
    }

    fn op(&mut self, op: Op) {
        self.end_word();
        self.tokens.push(Token::Op(op));
    }

    fn skip_comment(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == '\n' {
                break;
            }
            self.chars.next();
        }
    }

    fn single_quoted(&mut self) -> Option<()> {
        self.touch();
        loop {
            match self.chars.next()? {
                '\'' => return Some(()),
                c => self.push(c, true, false),
            }
        }
    }

    fn double_quoted(&mut self) -> Option<()> {
        self.touch();
        loop {
            match self.chars.next()? {
                '"' => return Some(()),
                '`' => return None,
                '$' => {
                    if self.chars.peek() == Some(&'(') {
                        return None;
                    }
                    self.push('$', false, false);
                }
                '\\' => match self.chars.next()? {
                    c @ ('"' | '\\' | '$' | '`') => self.push(c, true, false),
                    '\n' => {}
                    c => {
                        self.push('\\', true, false);
                        self.push(c, true, false);
                    }
                },
                c => self.push(c, true, false),
            }
        }
    }

    fn escaped(&mut self) {
        match self.chars.next() {
            Some('\n') => {}
            Some(c) => self.push(c, true, false),
            None => self.push('\\', true, false),
        }
    }

    fn dollar(&mut self) -> Option<()> {
        if self.chars.peek() == Some(&'(') {
            return None;
        }
        self.push('$', false, false);
        Some(())
    }

    fn pipe_or(&mut self) -> Option<()> {
        match self.chars.peek() {
            Some('|') => {
                self.chars.next();
                self.op(Op::Or);
            }
            Some('&') => return None,
            _ => self.op(Op::Pipe),
        }
        Some(())
    }

    fn and_or_redirect(&mut self) -> Option<()> {
        match self.chars.peek() {
            Some('&') => {
                self.chars.next();
                self.op(Op::And);
                Some(())
            }
            Some('>') if self.word.is_none() => {
                self.chars.next();
                let append = self.chars.peek() == Some(&'>');
                if append {
                    self.chars.next();
                }
                let target = self.redirect_target()?;
                self.tokens.push(Token::Op(Op::Redirect {
                    harmless: target == "/dev/null",
                }));
                Some(())
            }
            // A lone `&` runs the command in the background.
            _ => None,
        }
    }

    /// Lexes `[n]>`, `[n]>>`, `[n]>&m`, `<`; here-docs and here-strings are not modelled.
    fn redirect(&mut self, c: char) -> Option<()> {
        // Digits just before `>` are a file descriptor, not a word (`2>/dev/null`).
        if let Some(word) = &self.word {
            if word.text.bytes().all(|b| b.is_ascii_digit()) {
                self.word = None;
            } else {
                self.end_word();
            }
        }
        if c == '<' {
            if matches!(self.chars.peek(), Some('<' | '>' | '(')) {
                return None;
            }
            self.redirect_target()?;
            self.tokens.push(Token::Op(Op::Redirect { harmless: false }));
            return Some(());
        }
        match self.chars.peek() {
            Some('>') => {
                self.chars.next();
            }
            Some('&') => {
                self.chars.next();
                let target = self.redirect_target()?;
                let harmless = target == "1" || target == "2";
                self.tokens.push(Token::Op(Op::Redirect { harmless }));
                return Some(());
            }
            Some('(' | '|') => return None,
            _ => {}
        }
        let target = self.redirect_target()?;
        self.tokens.push(Token::Op(Op::Redirect {
            harmless: target == "/dev/null",
        }));
        Some(())
    }

    /// Reads the word after a redirection operator.
    fn redirect_target(&mut self) -> Option<String> {
        while matches!(self.chars.peek(), Some(' ' | '\t')) {
            self.chars.next();
        }
        let mut target = String::new();
        while let Some(&c) = self.chars.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '|' | '&' | '<' | '>' | '(' | ')' => break,
                '\'' | '"' | '\\' | '$' | '`' => return None,
                _ => {
                    target.push(c);
                    self.chars.next();
                }
            }
        }
        (!target.is_empty()).then_some(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(input: &str) -> Vec<String> {
        lex(input)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w.text,
                Token::Op(op) => format!("<{op:?}>"),
            })
            .collect()
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(
            words(r#"echo 'a b' "c \"d\" \n" e\ f"#),
            ["echo", "a b", r#"c "d" \n"#, "e f"]
        );
        assert_eq!(words(r"'it'\''s'"), ["it's"]);
        assert_eq!(words("''"), [""]);
    }

    #[test]
    fn operators() {
        assert_eq!(
            words("a | b && c || d; e\nf"),
            [
                "a", "<Pipe>", "b", "<And>", "c", "<Or>", "d", "<Seq>", "e", "<Seq>", "f"
            ]
        );
        assert_eq!(
            words("rg x 2>/dev/null"),
            ["rg", "x", "<Redirect { harmless: true }>"]
        );
        assert_eq!(words("rg x 2>&1"), ["rg", "x", "<Redirect { harmless: true }>"]);
        assert_eq!(
            words("echo x > out.txt"),
            ["echo", "x", "<Redirect { harmless: false }>"]
        );
        assert_eq!(
            words("echo x>>out"),
            ["echo", "x", "<Redirect { harmless: false }>"]
        );
        assert_eq!(words("ls &>/dev/null"), ["ls", "<Redirect { harmless: true }>"]);
        assert_eq!(words("ls # comment"), ["ls"]);
    }

    #[test]
    fn unsupported_syntax() {
        for input in [
            "echo $(id)",
            "echo `id`",
            "(cd x)",
            "sleep 1 &",
            "cat <<EOF",
            "echo 'open",
            "a |& b",
        ] {
            assert_eq!(lex(input), None, "{input}");
        }
    }

    #[test]
    fn expansions_and_globs_are_flagged() {
        let tokens = lex("$HOME *.rs '*'").unwrap();
        let [Token::Word(a), Token::Word(b), Token::Word(c)] = tokens.as_slice() else {
            panic!("{tokens:?}")
        };
        assert!(!a.literal && !a.glob);
        assert!(b.literal && b.glob);
        assert!(c.literal && !c.glob);
    }
}
