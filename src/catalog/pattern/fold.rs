//! Case-insensitive matching, ASCII only: every `(?i)` scope of a pattern is rewritten into
//! explicit classes before anything compiles it — a letter `a` becomes `[aA]`, a class gains
//! the other case of the ASCII letters it holds — and the `i` flag is removed.
//!
//! Why: the regex crate's `(?i)` folds by Unicode's simple case folding, which needs its
//! `unicode-case` tables (70 KB of relocated pointers that every process, `--version`
//! included, dirties at load) and turns `k` and `s` into non-ASCII classes (`K` U+212A KELVIN
//! SIGN, `ſ` U+017F LONG S). Compiling such a class makes `regex-automata` allocate a 320 KB
//! table, the largest piece of a real attach's heap (docs/proof.md, issue 18). Prompts,
//! failure lines and listings of network devices are ASCII; this module keeps the semantics
//! for ASCII text exactly, and on non-ASCII text differs only there: a non-ASCII letter
//! matches only itself, and `k` / `s` no longer match the Kelvin sign and the long s. The
//! same rule as the ASCII `\w`, `\d`, `\s` of [`super::ascii_classes`].
//!
//! The rewrite works on `regex-syntax`'s AST (which needs no Unicode tables), so flag scopes
//! follow the regex crate's rules: `(?i)` holds to the end of its group, across `|`;
//! `(?i:…)` and `(?-i)` as written.

use std::borrow::Cow;

use regex_syntax::ast::{
    self, Ast, ClassAscii, ClassAsciiKind, ClassSet, ClassSetItem, ClassSetRange, ClassSetUnion,
    Flag, Flags, FlagsItemKind, GroupKind, Literal, LiteralKind, Span,
};

/// `source` with its case-insensitive scopes spelt out as ASCII classes (module docs);
/// unchanged (and not parsed) when it sets no `i` flag.
pub(crate) fn ascii_case(source: &str) -> Result<Cow<'_, str>, String> {
    if !may_set_i(source) {
        return Ok(Cow::Borrowed(source));
    }
    let mut ast = ast::parse::Parser::new()
        .parse(source)
        .map_err(|e| e.to_string())?;
    let mut ci = false;
    if !fold(&mut ast, &mut ci) {
        return Ok(Cow::Borrowed(source));
    }
    let mut out = String::with_capacity(source.len() * 2);
    ast::print::Printer::new()
        .print(&ast, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(Cow::Owned(out))
}

/// Whether a flag group in `source` could contain `i` (`(?i)`, `(?x-i:`, …): a cheap test
/// that lets patterns without one skip the parse. It may say yes wrongly (`\(?i)` is a
/// literal parenthesis), never no wrongly.
fn may_set_i(source: &str) -> bool {
    let b = source.as_bytes();
    (0..b.len().saturating_sub(1)).any(|at| {
        b[at] == b'('
            && b[at + 1] == b'?'
            && b[at + 2..]
                .iter()
                .take_while(|c| b"imsUuxR-".contains(c))
                .any(|&c| c == b'i')
    })
}

/// Applies and removes the `i` items of `flags`; returns whether there was one.
fn take_i(flags: &mut Flags, ci: &mut bool) -> bool {
    let mut negated = false;
    let mut found = false;
    for item in &flags.items {
        match item.kind {
            FlagsItemKind::Negation => negated = true,
            FlagsItemKind::Flag(Flag::CaseInsensitive) => {
                *ci = !negated;
                found = true;
            }
            FlagsItemKind::Flag(_) => {}
        }
    }
    if found {
        flags
            .items
            .retain(|i| i.kind != FlagsItemKind::Flag(Flag::CaseInsensitive));
        // A negation with no flag after it (`(?x-)`) is a syntax error: drop it.
        if flags.items.last().map(|i| &i.kind) == Some(&FlagsItemKind::Negation) {
            flags.items.pop();
        }
    }
    found
}

/// Rewrites `ast` in visit order with `ci` the case-insensitive flag in force; returns
/// whether anything changed.
fn fold(ast: &mut Ast, ci: &mut bool) -> bool {
    match ast {
        Ast::Flags(set) => {
            let span = set.span;
            if !take_i(&mut set.flags, ci) {
                return false;
            }
            if set.flags.items.is_empty() {
                *ast = Ast::empty(span);
            }
            true
        }
        Ast::Literal(lit) => {
            let Some(other) = other_case(lit.c).filter(|_| *ci) else {
                return false;
            };
            let span = lit.span;
            let items = vec![
                ClassSetItem::Literal(verbatim(lit.c, span)),
                ClassSetItem::Literal(verbatim(other, span)),
            ];
            *ast = Ast::class_bracketed(ast::ClassBracketed {
                span,
                negated: false,
                kind: ClassSet::union(ClassSetUnion { span, items }),
            });
            true
        }
        Ast::ClassBracketed(class) => *ci && fold_set(&mut class.kind),
        Ast::Repetition(rep) => fold(&mut rep.ast, ci),
        Ast::Group(group) => {
            // A group's flags hold inside it only.
            let mut inner = *ci;
            let mut changed = false;
            if let GroupKind::NonCapturing(flags) = &mut group.kind {
                changed |= take_i(flags, &mut inner);
            }
            changed | fold(&mut group.ast, &mut inner)
        }
        // In order: a `(?i)` holds for what follows it in the enclosing group, `|` included.
        Ast::Alternation(alt) => alt
            .asts
            .iter_mut()
            .fold(false, |changed, a| fold(a, ci) | changed),
        Ast::Concat(cat) => cat
            .asts
            .iter_mut()
            .fold(false, |changed, a| fold(a, ci) | changed),
        Ast::Empty(_)
        | Ast::Dot(_)
        | Ast::Assertion(_)
        | Ast::ClassUnicode(_)
        | Ast::ClassPerl(_) => false,
    }
}

/// Adds the other case of every ASCII letter in `set` (each operand of a set operation on
/// its own, as the regex crate folds them); returns whether anything was added.
fn fold_set(set: &mut ClassSet) -> bool {
    match set {
        ClassSet::Item(item) => fold_item(item),
        ClassSet::BinaryOp(op) => fold_set(&mut op.lhs) | fold_set(&mut op.rhs),
    }
}

fn fold_item(item: &mut ClassSetItem) -> bool {
    let extra: Vec<ClassSetItem> = match item {
        ClassSetItem::Literal(lit) => match other_case(lit.c) {
            Some(o) => vec![ClassSetItem::Literal(verbatim(o, lit.span))],
            None => return false,
        },
        ClassSetItem::Range(range) => {
            let (lo, hi) = (range.start.c, range.end.c);
            let span = range.span;
            [('a', 'z'), ('A', 'Z')]
                .into_iter()
                .filter_map(|(a, z)| {
                    let (s, e) = (lo.max(a), hi.min(z));
                    let (s, e) = (other_case(s)?, other_case(e)?);
                    (lo.max(a) <= hi.min(z)).then(|| {
                        ClassSetItem::Range(ClassSetRange {
                            span,
                            start: verbatim(s, span),
                            end: verbatim(e, span),
                        })
                    })
                })
                .collect()
        }
        // `[:upper:]` and `[:lower:]` (negated or not) fold to their union with both.
        ClassSetItem::Ascii(class)
            if matches!(class.kind, ClassAsciiKind::Upper | ClassAsciiKind::Lower) =>
        {
            let span = class.span;
            [ClassAsciiKind::Upper, ClassAsciiKind::Lower]
                .into_iter()
                .map(|kind| {
                    ClassSetItem::Ascii(ClassAscii {
                        span,
                        kind,
                        negated: false,
                    })
                })
                .collect()
        }
        ClassSetItem::Bracketed(class) => return fold_set(&mut class.kind),
        ClassSetItem::Union(union) => {
            return union
                .items
                .iter_mut()
                .fold(false, |changed, i| fold_item(i) | changed)
        }
        ClassSetItem::Empty(_)
        | ClassSetItem::Ascii(_)
        | ClassSetItem::Unicode(_)
        | ClassSetItem::Perl(_) => return false,
    };
    if extra.is_empty() {
        return false;
    }
    let span = *item.span();
    let original = std::mem::replace(item, ClassSetItem::Empty(span));
    let mut items = vec![original];
    items.extend(extra);
    *item = ClassSetItem::Union(ClassSetUnion { span, items });
    true
}

/// The other case of an ASCII letter.
fn other_case(c: char) -> Option<char> {
    match c {
        'a'..='z' => Some(c.to_ascii_uppercase()),
        'A'..='Z' => Some(c.to_ascii_lowercase()),
        _ => None,
    }
}

fn verbatim(c: char, span: Span) -> Literal {
    Literal {
        span,
        kind: LiteralKind::Verbatim,
        c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(p: &str) -> String {
        ascii_case(p).unwrap().into_owned()
    }

    #[test]
    fn patterns_without_an_i_flag_are_not_touched() {
        for p in [
            r"^% ?Invalid input",
            r"^(?P<host>[\w.\-]+)#",
            r"(?s:a.b)",
            r"\(?i\)",
        ] {
            assert!(matches!(ascii_case(p).unwrap(), Cow::Borrowed(_)), "{p}");
        }
    }

    #[test]
    fn i_scopes_become_ascii_classes() {
        for (from, to) in [
            (r"(?i)ab1", "[aA][bB]1"),
            (r"(?i)^% ?error", "^% ?[eE][rR][rR][oO][rR]"),
            (r"x(?i:k)s", "x(?:[kK])s"),
            (r"(?i)a(?-i)b", "[aA]b"),
            (r"(?is)a.", "(?s)[aA]."),
            (r"(?i)a|b", "[aA]|[bB]"),
            (r"(?:(?i)a)b", "(?:[aA])b"),
            (r"(?i)[a-c_]", "[a-cA-C_]"),
            (r"(?i)[^a-c]", "[^a-cA-C]"),
            (r"(?i)[W-c]", "[W-cA-Cw-z]"),
            (r"(?i)[[:upper:]]", "[[:upper:][:upper:][:lower:]]"),
            (r"(?i)(?P<h>é)", "(?P<h>é)"),
            (r"(?i)\x41", "[Aa]"),
        ] {
            assert_eq!(folded(from), to, "{from}");
            regex::Regex::new(to).unwrap_or_else(|e| panic!("{to}: {e}"));
        }
    }

    #[test]
    fn folded_patterns_match_as_unicode_case_folding_does_on_ascii() {
        // What the regex crate's `(?i)` matched (with its Unicode tables), on ASCII texts;
        // the folded form, compiled without them, must agree.
        let cases: &[(&str, &[(&str, bool)])] = &[
            (
                r"(?i)^% ?configuration (?:database )?is locked",
                &[
                    ("% Configuration database is LOCKED", true),
                    ("%CONFIGURATION is locked", true),
                    ("Configuration is locked", false),
                ],
            ),
            (
                r"(?i)(?:Port-channel|Po)([0-9]+)",
                &[("po7", true), ("PORT-CHANNEL12", true), ("p7", false)],
            ),
            (r"(?i)[^a-z]", &[("abcXYZ", false), ("abc1", true)]),
            (r"(?i)[[:^upper:]]x", &[("Ax", true), ("ax", true)]),
            (r"a(?i)b|c", &[("C", true), ("aB", true), ("AB", false)]),
            (r"(?i:a)b", &[("Ab", true), ("AB", false)]),
        ];
        for (pattern, texts) in cases {
            let r = regex::Regex::new(&folded(pattern)).unwrap();
            for (text, expect) in *texts {
                assert_eq!(r.is_match(text), *expect, "{pattern} on {text:?}");
            }
        }
    }

    #[test]
    fn non_ascii_letters_fold_no_more() {
        let r = regex::Regex::new(&folded(r"(?i)^ks$")).unwrap();
        assert!(r.is_match("KS"));
        assert!(
            !r.is_match("\u{212A}\u{17F}"),
            "Kelvin sign and long s are not k and s"
        );
    }

    #[test]
    fn no_built_in_pattern_reaches_the_regex_crate_case_insensitive() {
        // (That each folded pattern compiles is builtin_catalog_passes_the_lint's.)
        let catalog = crate::catalog::Catalog::builtin().unwrap();
        let mut folded = 0;
        for name in catalog.names() {
            let platform = catalog.get(name).unwrap();
            for (what, p) in platform.patterns() {
                assert!(!may_set_i(p.as_str()), "{name} {what}: {:?}", p.as_str());
                folded += usize::from(p.as_str().contains("[iI]"));
            }
        }
        // The catalog's `(?i)` failure lines, secret prompts and LAG patterns.
        assert!(folded > 15, "{folded} folded patterns");
    }

    #[test]
    fn the_regex_crate_has_no_unicode_tables() {
        // Cargo.toml turns them off; a dependency that turned them back on (features are
        // unified) would bring back 360 KB of every process's read-only data.
        for p in [r"\pL", r"(?i)a", r"\w"] {
            assert!(
                regex::Regex::new(p).is_err(),
                "{p} compiled: Unicode tables are linked"
            );
        }
    }

    #[test]
    fn syntax_errors_are_reported() {
        assert!(ascii_case(r"(?i)(unclosed").is_err());
    }
}
