//! The built-in catalog as static data: `build.rs` parses `plugins.toml` at build time and
//! writes each platform out as a function that builds its [`RawPlatform`], with a static
//! table of names and aliases ([`PLATFORMS`]). Loading the built-in catalog therefore
//! parses nothing and builds nothing; [`super::Catalog::get`] builds and compiles the one
//! platform a run uses.

use std::collections::{BTreeMap, BTreeSet};

#[allow(unused_imports)]
use super::raw::{Kind, RawCheck, RawMode, RawPlatform, RawResponse, RawVerify, VlanListStyle};

/// One built-in platform: its name, its aliases, and the function that builds it.
pub(super) type Builtin = (&'static str, &'static [&'static str], fn() -> RawPlatform);

include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));
