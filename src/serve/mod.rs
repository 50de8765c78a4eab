//! Fronts that stay up for one connection and run a request per call: the JSON-RPC dialect
//! of Ironic's standalone networking service over HTTP/1.1 (`jsonrpc`, `http`, `htpasswd`),
//! optionally inside TLS (`tls`). Each call goes down the same path as `mercury run`
//! (`run::run_request`).

pub mod htpasswd;
pub mod http;
pub mod jsonrpc;
pub mod tls;
