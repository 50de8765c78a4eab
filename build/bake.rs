//! Writes a parsed catalog out as Rust expressions (build time only): each value becomes
//! the expression that builds it, so the binary constructs the built-in platforms without
//! parsing anything. Every struct is written field by field with its full literal, so a
//! field added to `src/catalog/raw.rs` and forgotten here fails the build.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::raw::{
    Kind, RawCheck, RawIdempotent, RawMode, RawOption, RawPlatform, RawPortNames, RawPortType,
    RawResponse, RawVerify, Spacing, VlanListStyle,
};

/// A value that can be written as the Rust expression that builds it.
pub trait Bake {
    /// Appends the expression to `out`.
    fn bake(&self, out: &mut String);
}

impl Bake for String {
    fn bake(&self, out: &mut String) {
        // `str`'s Debug form is a valid Rust string literal (quotes, backslashes and
        // control characters escaped).
        let _ = write!(out, "String::from({self:?})");
    }
}

impl Bake for bool {
    fn bake(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl<T: Bake> Bake for Option<T> {
    fn bake(&self, out: &mut String) {
        match self {
            None => out.push_str("None"),
            Some(v) => {
                out.push_str("Some(");
                v.bake(out);
                out.push(')');
            }
        }
    }
}

impl<T: Bake> Bake for Vec<T> {
    fn bake(&self, out: &mut String) {
        if self.is_empty() {
            out.push_str("Vec::new()");
            return;
        }
        out.push_str("vec![");
        for v in self {
            v.bake(out);
            out.push_str(", ");
        }
        out.push(']');
    }
}

impl<T: Bake> Bake for BTreeSet<T> {
    fn bake(&self, out: &mut String) {
        if self.is_empty() {
            out.push_str("BTreeSet::new()");
            return;
        }
        out.push_str("BTreeSet::from([");
        for v in self {
            v.bake(out);
            out.push_str(", ");
        }
        out.push_str("])");
    }
}

impl<K: Bake, V: Bake> Bake for BTreeMap<K, V> {
    fn bake(&self, out: &mut String) {
        if self.is_empty() {
            out.push_str("BTreeMap::new()");
            return;
        }
        out.push_str("BTreeMap::from([");
        for (k, v) in self {
            out.push('(');
            k.bake(out);
            out.push_str(", ");
            v.bake(out);
            out.push_str("), ");
        }
        out.push_str("])");
    }
}

impl Bake for Kind {
    fn bake(&self, out: &mut String) {
        out.push_str(match self {
            Kind::Cli => "Kind::Cli",
            Kind::Exec => "Kind::Exec",
            Kind::Ovsdb => "Kind::Ovsdb",
        });
    }
}

impl Bake for Spacing {
    fn bake(&self, out: &mut String) {
        out.push_str(match self {
            Spacing::None => "Spacing::None",
            Spacing::One => "Spacing::One",
            Spacing::Either => "Spacing::Either",
        });
    }
}

impl Bake for RawIdempotent {
    fn bake(&self, out: &mut String) {
        match self {
            RawIdempotent::Output(s) => {
                out.push_str("RawIdempotent::Output(");
                s.bake(out);
                out.push(')');
            }
            RawIdempotent::After { output, line } => {
                out.push_str("RawIdempotent::After { output: ");
                output.bake(out);
                out.push_str(", line: ");
                line.bake(out);
                out.push_str(" }");
            }
        }
    }
}

/// Writes `Name { field: value, ... }`.
macro_rules! bake_struct {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Bake for $ty {
            fn bake(&self, out: &mut String) {
                // Destructured, so a field missing from the list is a compile error here.
                let $ty { $($field),* } = self;
                out.push_str(concat!(stringify!($ty), " {\n"));
                $(
                    out.push_str(concat!("    ", stringify!($field), ": "));
                    $field.bake(out);
                    out.push_str(",\n");
                )*
                out.push('}');
            }
        }
    };
}

bake_struct!(VlanListStyle { separator, range });
bake_struct!(RawMode {
    name,
    prompt,
    parent,
    enter,
    exit,
    secret,
    config,
});
bake_struct!(RawResponse {
    prompt,
    answer,
    newline,
});
bake_struct!(RawVerify {
    show,
    parser,
    mode,
    admin_default,
    trunk_default,
    modes,
    mode_default,
    unread,
    vlan_table,
    unsupported,
});
bake_struct!(RawOption {
    about,
    default,
    values,
    pattern,
    templates,
});
bake_struct!(RawPortNames {
    space,
    number,
    types,
    samples,
    refused,
});
bake_struct!(RawPortType {
    name,
    abbrev,
    number,
    space,
});
bake_struct!(RawCheck {
    vlans,
    vlan_present,
});
bake_struct!(RawPlatform {
    description,
    aliases,
    kind,
    network_types,
    port_pattern,
    port_names,
    lag_interface,
    lag_pattern,
    lag_modes,
    echo,
    modes,
    login_mode,
    config_mode,
    save_mode,
    secret_prompt,
    responses,
    failures,
    temporary_failures,
    on_open,
    on_open_mode,
    commit,
    abort,
    commit_leaves_to,
    save,
    close,
    vlan_list,
    templates,
    actions,
    unsupported,
    samples,
    own_context,
    native_in_allowed,
    allowed_set_adds,
    native_is_access,
    idempotent,
    nouns,
    end_of_options,
    exec_shell,
    options,
    lag_delete_resets_members,
    notes,
    verify,
    check,
});
