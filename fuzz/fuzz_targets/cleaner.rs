//! The session's output cleaner (`session::Cleaner`): device bytes in any split must give
//! the same text as in one piece (prompts are matched on it), and the text never keeps a
//! carriage return, an escape sequence or another control character besides `\n`, `\t`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mercury::session::Cleaner;

fuzz_target!(|data: &[u8]| {
    let Some((&split_seed, bytes)) = data.split_first() else {
        return;
    };
    let mut whole = String::new();
    Cleaner::default().feed(bytes, &mut whole);

    // The same bytes in chunks of 1 + (seed % 7) bytes.
    let step = 1 + usize::from(split_seed % 7);
    let mut chunked = String::new();
    let mut c = Cleaner::default();
    for piece in bytes.chunks(step) {
        c.feed(piece, &mut chunked);
    }
    assert_eq!(whole, chunked, "chunking changed the text (step {step})");
    assert!(
        !whole
            .chars()
            .any(|ch| ch.is_control() && ch != '\n' && ch != '\t'),
        "control character kept: {whole:?}"
    );
});
