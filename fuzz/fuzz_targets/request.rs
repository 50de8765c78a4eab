//! The request parser: any text on stdin or in a JSON-RPC call goes through
//! `RawRequest::from_json` and `Request::from_raw`. Neither may panic, and a request that
//! validates must carry only values safe to render into a device command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mercury::request::{RawRequest, Request};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(raw) = RawRequest::from_json(text) else {
        return;
    };
    if let Ok(req) = Request::from_raw(raw) {
        // Whatever validated renders without control characters or separators.
        let shown = format!("{req:?}");
        assert!(!shown.contains('\u{0}'), "NUL survived validation: {shown}");
    }
});
