//! OpenSSL bound on first use, on x86_64 Linux: the system's shared `libcrypto.so.3`,
//! loaded with `dlopen` when the first SSH connection is opened instead of by the dynamic
//! loader at every start (`libssl.so.3` only if one of its functions were ever called,
//! which Mercury never does).
//!
//! libssh2 (built and linked statically by `libssh2-sys`) calls OpenSSL. Mapping and
//! relocating OpenSSL costs every process about 3.5 ms (docs/openssl.md), which `--version`,
//! `--help`, dry runs, `check`, policy refusals and the waiters of a coalesced burst would
//! pay for nothing. So the build links no OpenSSL library (`.cargo/config.toml` sets
//! `OPENSSL_LIBS` empty for this target) and this module defines, for each OpenSSL function
//! the binary calls, a stub with the function's own name:
//!
//! - the stub jumps through its slot ([`Stub::slot`]) once the slot holds the real address;
//! - while the slot is empty it jumps to a resolver that saves every argument register
//!   (`%rdi %rsi %rdx %rcx %r8 %r9`, `%rax` which carries a variadic call's vector count,
//!   `%xmm0`–`%xmm7`), calls `bind` (load the libraries once, `dlvsym` the function at
//!   the `OPENSSL_3.0.0` version the headers were compiled against, fill the slot), restores
//!   the registers and jumps to the real function, which returns straight to the caller.
//!
//! The stubs are hidden symbols: they satisfy libssh2's references inside the executable and
//! are never exported, so OpenSSL's own calls can never bind back to them.
//!
//! [`load`] binds every libcrypto stub at once, initialises libcrypto (with the system's
//! `openssl.cnf`) and returns an error instead of failing later; the SSH transport calls it
//! before it opens a socket, so a missing or unusable OpenSSL is a
//! configuration error (78) before anything is changed. The resolver path only serves a call
//! made before [`load`], which Mercury does not make; if binding fails there it can only
//! print why and abort, as the dynamic loader would have at start.
//!
//! The list of functions is checked by the link itself: a function libssh2 or openssl-sys
//! calls that has no stub here is an undefined symbol and the build fails. No data object
//! of OpenSSL is referenced (a data symbol could not be stubbed); `tests/openssl_lazy.rs`
//! checks that the binary imports nothing from OpenSSL and needs neither library.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The shared library a function comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lib {
    /// `libcrypto.so.3`.
    Crypto,
    /// `libssl.so.3`.
    Ssl,
}

impl Lib {
    /// The soname passed to `dlopen`.
    pub fn soname(self) -> &'static CStr {
        match self {
            Lib::Crypto => c"libcrypto.so.3",
            Lib::Ssl => c"libssl.so.3",
        }
    }
}

/// The symbol version of every OpenSSL 3 function the binary calls (`nm -D` on a normally
/// linked build shows each as `@OPENSSL_3.0.0`).
const VERSION: &CStr = c"OPENSSL_3.0.0";

/// One stubbed function. `#[repr(C)]` with the slot first: the stub's assembly reads the
/// slot at the descriptor's address.
#[repr(C)]
pub struct Stub {
    /// The real function once bound, null before.
    pub slot: AtomicPtr<c_void>,
    /// The function's name.
    pub name: &'static CStr,
    /// Where it lives.
    pub lib: Lib,
}

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlvsym(handle: *mut c_void, symbol: *const c_char, version: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

const RTLD_LAZY: c_int = 1;

/// A library's handle, as an address (a raw pointer is not `Sync`), or why it failed.
type Handle = OnceLock<Result<usize, String>>;

/// `libcrypto.so.3`, loaded by [`load`].
static CRYPTO: Handle = OnceLock::new();
/// `libssl.so.3`, loaded only if one of its functions is ever called (Mercury calls none:
/// see [`load`]).
static SSL: Handle = OnceLock::new();

/// The last `dlerror` message, or `fallback`.
fn last_error(fallback: &str) -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl call
    // on this thread; it is copied at once.
    let p = unsafe { dlerror() };
    if p.is_null() {
        return fallback.to_string();
    }
    // SAFETY: non-null, NUL-terminated (above).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn open(lib: Lib) -> Result<usize, String> {
    // SAFETY: a NUL-terminated soname; dlopen is thread-safe.
    let h = unsafe { dlopen(lib.soname().as_ptr(), RTLD_LAZY) };
    if h.is_null() {
        return Err(last_error("dlopen failed"));
    }
    Ok(h as usize)
}

/// Loads one library, once per process (thread-safe).
fn handle(lib: Lib) -> Result<usize, String> {
    let cell = match lib {
        Lib::Crypto => &CRYPTO,
        Lib::Ssl => &SSL,
    };
    cell.get_or_init(|| open(lib)).clone()
}

/// Resolves one stub and fills its slot; returns the real function.
fn resolve(stub: &Stub) -> Result<*mut c_void, String> {
    let bound = stub.slot.load(Ordering::Acquire);
    if !bound.is_null() {
        return Ok(bound);
    }
    let handle = handle(stub.lib)?;
    // SAFETY: a handle from dlopen, NUL-terminated name and version.
    let f = unsafe { dlvsym(handle as *mut c_void, stub.name.as_ptr(), VERSION.as_ptr()) };
    if f.is_null() {
        return Err(format!(
            "{}: no {}@{} ({})",
            stub.lib.soname().to_string_lossy(),
            stub.name.to_string_lossy(),
            VERSION.to_string_lossy(),
            last_error("symbol not found")
        ));
    }
    stub.slot.store(f, Ordering::Release);
    Ok(f)
}

/// `OPENSSL_INIT_LOAD_CONFIG`: read the system's `openssl.cnf` (which can carry a crypto
/// policy) as `OPENSSL_init_ssl` would have.
const INIT_LOAD_CONFIG: u64 = 0x40;
/// `OPENSSL_INIT_NO_ATEXIT`: no cleanup handler at exit, as openssl-sys asks.
const INIT_NO_ATEXIT: u64 = 0x0008_0000;

static INIT: OnceLock<Result<(), String>> = OnceLock::new();

extern "C" {
    /// The stub of libcrypto's initialiser (below).
    fn OPENSSL_init_crypto(opts: u64, settings: *const c_void) -> c_int;
}

/// Binds every libcrypto function, loading `libcrypto.so.3` on the first call, and
/// initialises it; later calls return at once. The error says which library or function
/// is missing, or that OpenSSL refused to initialise (e.g. an unreadable `openssl.cnf`).
///
/// libssh2 needs only libcrypto. openssl-sys's `init` (which libssh2-sys runs before the
/// first session) calls libssl's `OPENSSL_init_ssl` with `OPENSSL_INIT_LOAD_SSL_STRINGS`,
/// which would map `libssl.so.3` and load its error strings for nothing: ~0.5 MiB of a real
/// attach's resident set (docs/openssl.md). So this does libcrypto's part of that
/// initialisation itself (`OPENSSL_init_crypto` with `OPENSSL_INIT_LOAD_CONFIG`, the
/// configuration `OPENSSL_init_ssl` loads) and tells openssl-sys it is done
/// (`assume_init`). The `OPENSSL_init_ssl` stub stays, bound lazily should anything call
/// it.
pub fn load() -> Result<(), String> {
    for stub in STUBS.iter().filter(|s| s.lib == Lib::Crypto) {
        resolve(stub).map_err(|e| format!("cannot load OpenSSL for SSH: {e}"))?;
    }
    INIT.get_or_init(init).clone()
}

/// libcrypto's initialisation with the system configuration (see [`load`]).
fn init() -> Result<(), String> {
    // SAFETY: the stub is bound (by `load`, before); no settings object, as openssl-sys
    // passes none.
    let ok = unsafe { OPENSSL_init_crypto(INIT_LOAD_CONFIG | INIT_NO_ATEXIT, std::ptr::null()) };
    if ok != 1 {
        return Err(format!(
            "cannot load OpenSSL for SSH: OPENSSL_init_crypto failed ({})",
            "is the system's openssl.cnf readable and valid?"
        ));
    }
    // SAFETY: libcrypto is initialised, with the configuration; nothing needs libssl.
    unsafe { openssl_sys::assume_init() };
    Ok(())
}

/// Called by the resolver's assembly with the stub's descriptor in `%rdi`; returns the real
/// function. It cannot return an error to libssh2, so a failure (only possible for a call
/// made before [`load`]) is printed and the process aborts.
extern "C" fn bind(stub: &Stub) -> *mut c_void {
    match resolve(stub) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mercury: cannot load OpenSSL for SSH: {e}");
            std::process::abort()
        }
    }
}

// The shared resolver. Entered by a jump from a stub with the descriptor in %r11 and the
// stack as the caller left it at its call (%rsp = 8 mod 16). Seven pushes and 128 bytes of
// vector registers leave %rsp 16-aligned for the call, as the ABI wants.
std::arch::global_asm!(
    ".pushsection .text.mercury_openssl_stubs,\"ax\",@progbits",
    ".globl mercury_openssl_bind",
    ".hidden mercury_openssl_bind",
    ".type mercury_openssl_bind,@function",
    "mercury_openssl_bind:",
    "push %rax",
    "push %rdi",
    "push %rsi",
    "push %rdx",
    "push %rcx",
    "push %r8",
    "push %r9",
    "sub $128, %rsp",
    "movdqu %xmm0, 0(%rsp)",
    "movdqu %xmm1, 16(%rsp)",
    "movdqu %xmm2, 32(%rsp)",
    "movdqu %xmm3, 48(%rsp)",
    "movdqu %xmm4, 64(%rsp)",
    "movdqu %xmm5, 80(%rsp)",
    "movdqu %xmm6, 96(%rsp)",
    "movdqu %xmm7, 112(%rsp)",
    "mov %r11, %rdi",
    "call {bind}",
    "mov %rax, %r11",
    "movdqu 0(%rsp), %xmm0",
    "movdqu 16(%rsp), %xmm1",
    "movdqu 32(%rsp), %xmm2",
    "movdqu 48(%rsp), %xmm3",
    "movdqu 64(%rsp), %xmm4",
    "movdqu 80(%rsp), %xmm5",
    "movdqu 96(%rsp), %xmm6",
    "movdqu 112(%rsp), %xmm7",
    "add $128, %rsp",
    "pop %r9",
    "pop %r8",
    "pop %rcx",
    "pop %rdx",
    "pop %rsi",
    "pop %rdi",
    "pop %rax",
    "jmp *%r11",
    ".size mercury_openssl_bind, . - mercury_openssl_bind",
    ".popsection",
    bind = sym bind,
    options(att_syntax),
);

/// Defines one stub per name: its descriptor, and a hidden function of the same name that
/// jumps through the descriptor's slot, or to the resolver while the slot is empty.
macro_rules! stubs {
    ($($lib:ident: $($name:ident),+ $(,)?;)+) => {
        $($(
            #[allow(non_snake_case)]
            mod $name {
                use super::*;

                /// The descriptor.
                pub static STUB: Stub = Stub {
                    slot: AtomicPtr::new(std::ptr::null_mut()),
                    name: match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                        Ok(n) => n,
                        Err(_) => c"?",
                    },
                    lib: Lib::$lib,
                };

                std::arch::global_asm!(
                    // Every stub and the resolver in one section, which the code layout
                    // (build/text-order.ld) places whole: valgrind's CPU, which the layout
                    // is recorded on, makes libssh2 call other stubs than a real one does.
                    // `mercury_openssl_stub_NAME` marks a stub for bench/issue18/symbol-order.
                    ".pushsection .text.mercury_openssl_stubs,\"ax\",@progbits",
                    concat!(".globl ", stringify!($name)),
                    concat!(".hidden ", stringify!($name)),
                    concat!(".type ", stringify!($name), ",@function"),
                    concat!("mercury_openssl_stub_", stringify!($name), ":"),
                    concat!(stringify!($name), ":"),
                    "mov {stub}(%rip), %r11",
                    "test %r11, %r11",
                    "jz 2f",
                    "jmp *%r11",
                    "2:",
                    "lea {stub}(%rip), %r11",
                    "jmp mercury_openssl_bind",
                    concat!(".size ", stringify!($name), ", . - ", stringify!($name)),
                    ".popsection",
                    stub = sym STUB,
                    options(att_syntax),
                );
            }
        )+)+

        /// Every stub, for [`load`].
        pub static STUBS: &[&Stub] = &[$($(&$name::STUB,)+)+];
    };
}

stubs! {
    Ssl: OPENSSL_init_ssl;
    Crypto:
        BIO_ctrl,
        BIO_free,
        BIO_new_file,
        BIO_new_mem_buf,
        BN_CTX_free,
        BN_CTX_new,
        BN_bin2bn,
        BN_bn2bin,
        BN_clear_free,
        BN_cmp,
        BN_free,
        BN_is_bit_set,
        BN_mod_exp,
        BN_new,
        BN_num_bits,
        BN_rand,
        BN_set_word,
        BN_sub,
        BN_value_one,
        CRYPTO_free,
        ECDSA_SIG_free,
        ECDSA_SIG_get0,
        ECDSA_SIG_new,
        ECDSA_SIG_set0,
        EC_curve_nid2nist,
        ERR_get_error,
        ERR_peek_last_error,
        EVP_CIPHER_CTX_ctrl,
        EVP_CIPHER_CTX_free,
        EVP_CIPHER_CTX_new,
        EVP_Cipher,
        EVP_CipherInit,
        EVP_DigestFinal_ex,
        EVP_DigestInit_ex,
        EVP_DigestSign,
        EVP_DigestSignInit,
        EVP_DigestUpdate,
        EVP_DigestVerify,
        EVP_DigestVerifyInit,
        EVP_MAC_CTX_free,
        EVP_MAC_CTX_new,
        EVP_MAC_fetch,
        EVP_MAC_final,
        EVP_MAC_free,
        EVP_MAC_init,
        EVP_MAC_update,
        EVP_MD_CTX_free,
        EVP_MD_CTX_new,
        EVP_PKEY_CTX_free,
        EVP_PKEY_CTX_new,
        EVP_PKEY_CTX_new_id,
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid,
        EVP_PKEY_CTX_set_rsa_padding,
        EVP_PKEY_CTX_set_signature_md,
        EVP_PKEY_derive,
        EVP_PKEY_derive_init,
        EVP_PKEY_derive_set_peer,
        EVP_PKEY_free,
        EVP_PKEY_fromdata,
        EVP_PKEY_fromdata_init,
        EVP_PKEY_get_bn_param,
        EVP_PKEY_get_id,
        EVP_PKEY_get_int_param,
        EVP_PKEY_get_octet_string_param,
        EVP_PKEY_get_raw_private_key,
        EVP_PKEY_get_raw_public_key,
        EVP_PKEY_get_size,
        EVP_PKEY_get_utf8_string_param,
        EVP_PKEY_keygen,
        EVP_PKEY_keygen_init,
        EVP_PKEY_new_raw_private_key,
        EVP_PKEY_new_raw_public_key,
        EVP_PKEY_sign,
        EVP_PKEY_sign_init,
        EVP_PKEY_verify,
        EVP_PKEY_verify_init,
        EVP_aes_128_cbc,
        EVP_aes_128_ctr,
        EVP_aes_128_gcm,
        EVP_aes_192_cbc,
        EVP_aes_192_ctr,
        EVP_aes_256_cbc,
        EVP_aes_256_ctr,
        EVP_aes_256_gcm,
        EVP_sha1,
        EVP_sha256,
        EVP_sha384,
        EVP_sha512,
        OSSL_PARAM_construct_BN,
        OSSL_PARAM_construct_end,
        OSSL_PARAM_construct_octet_string,
        OSSL_PARAM_construct_utf8_string,
        OPENSSL_init_crypto,
        PEM_read_bio_PrivateKey,
        RAND_bytes,
        d2i_ECDSA_SIG,
        i2d_ECDSA_SIG,
    ;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_libcrypto_stub_binds_to_the_system_openssl() {
        load().unwrap();
        assert!(CRYPTO.get().is_some_and(|h| h.is_ok()));
        let crypto: Vec<_> = STUBS.iter().filter(|s| s.lib == Lib::Crypto).collect();
        assert_eq!(crypto.len(), STUBS.len() - 1);
        for stub in crypto {
            assert!(
                !stub.slot.load(Ordering::Acquire).is_null(),
                "{:?}",
                stub.name
            );
        }
    }

    #[test]
    fn the_libssl_stub_binds_to_libssl() {
        let ssl = STUBS.iter().find(|s| s.lib == Lib::Ssl).unwrap();
        assert_eq!(ssl.name, c"OPENSSL_init_ssl");
        assert!(!resolve(ssl).unwrap().is_null());
    }

    #[test]
    fn a_stub_called_before_load_binds_itself_and_returns_the_real_result() {
        extern "C" {
            fn EVP_sha256() -> *const c_void;
            fn EVP_sha1() -> *const c_void;
        }
        // SAFETY: OpenSSL functions without arguments returning static method tables.
        let (a, b) = unsafe { (EVP_sha256(), EVP_sha1()) };
        assert!(!a.is_null() && !b.is_null() && a != b);
        // SAFETY: as above; the second call goes through the bound slot.
        assert_eq!(unsafe { EVP_sha256() }, a);
    }
}
