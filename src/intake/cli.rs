//! Intake from argv: the clap definitions, and their conversion into a [`RawRequest`].
//!
//! clap types end here. Values are kept as strings so that a bad VLAN or port is reported
//! by the request layer as invalid data (exit 65), not as a usage error (64); usage errors
//! are unknown flags and verbs.
// The doc comments below are also clap's --help text, where `<uuid>` is a placeholder.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::config;
use crate::report::exit::ExitKind;
use crate::request::vlan::{Vlan, VlanSet};
use crate::request::{LocalLinkConnection, RawPortItem, RawRequest, RequestError};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object (the default when stdout is not a terminal).
    Json,
    /// For people.
    Text,
}

/// Put bare-metal server ports on the right layer-2 network.
///
/// One request per run: mercury finds the device in its local configuration, checks the
/// request against policy, takes the device lock, opens one session, applies the change,
/// writes an audit record, prints one JSON result on stdout and exits with a documented code.
#[derive(Debug, Parser)]
#[command(name = "mercury", version, after_long_help = exit_codes_help())]
pub struct Cli {
    /// Configuration file (serve-ssh ignores MERCURY_CONFIG: only --config or the default).
    #[arg(long, global = true, env = "MERCURY_CONFIG", default_value = config::DEFAULT_PATH, value_name = "PATH")]
    pub config: PathBuf,
    /// Plan only: print every line that would be sent; no lock, no connection, no audit.
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Read the changed ports before and after the change (the default where the device's
    /// `verify` is on and its platform can read ports): nothing is sent when they already
    /// are as requested, removals are authorised against what the port carries, `changed`
    /// is exact, and a change the device accepted but does not show fails with exit 1.
    #[arg(long, global = true, conflicts_with = "no_verify")]
    pub verify: bool,
    /// Do not read the ports (faster; `changed` then says what was sent, and a change that
    /// could remove VLANs a caller may not remove is refused).
    #[arg(long, global = true)]
    pub no_verify: bool,
    /// Check mode (Ansible's): connect, read the ports, and report the `diff` and the
    /// `changed` the request would produce, sending no configuration line.
    #[arg(long, global = true, conflicts_with_all = ["no_verify", "dry_run"])]
    pub check: bool,
    /// Output format [default: json, or text when stdout is a terminal].
    #[arg(long, global = true, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Diagnostics on stderr (-v info, -vv debug); RUST_LOG also works (not for serve-ssh).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands. Each one's arguments are built only when it is the one invoked (clap's
/// `defer`): building all of them cost `--version` and every run ~280 KiB of heap
/// (docs/proof.md, issue 18). The help text of a subcommand is its variant's doc comment
/// here; the argument structs carry plain comments, because a doc comment on one (or on a
/// struct it flattens) would become the subcommand's `about` when its deferred arguments
/// are built, replacing the variant's.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Put ports on a network: access port in VLAN N, or add VLAN N to a trunk.
    AttachPort(PortArgs),
    /// Take a network off ports; access ports get the idle VLAN back.
    DetachPort(PortArgs),
    /// Declare ports' whole L2 configuration (mode, native VLAN, allowed VLANs, ...).
    UpdatePort(UpdateArgs),
    /// Return ports to their idle state.
    ResetPort(ResetArgs),
    /// Create a VLAN (needs manage_vlans).
    AddNetwork(NetworkArgs),
    /// Delete a VLAN (needs manage_vlans).
    DeleteNetwork(NetworkArgs),
    /// Create or update a LAG (port-channel / bond) with members.
    UpdateLag(LagArgs),
    /// Delete a LAG.
    DeleteLag(DeleteLagArgs),
    /// OVS/DPU: add a representor port to a bridge.
    PlugPort(PlugArgs),
    /// OVS/DPU: remove a representor port from a bridge.
    UnplugPort(UnplugArgs),
    /// List configured devices (never secrets).
    GetSwitches,
    /// What network types a device can provide.
    GetAllowedNetworkTypes(TargetArgs),
    /// Does a device + port resolve and pass policy? (no device contact)
    IsLinkValid(LinkArgs),
    /// Can this port kind be handled?
    IsPortSupported(PortKindArgs),
    /// Read ports back and compare them with an expected state (mode, VLANs, ...); no change.
    VerifyPort(VerifyArgs),
    /// Validate configuration, catalog and file permissions (no device contact).
    ///
    /// Without options: the configuration, the catalog and file permissions, without device
    /// contact. With --connect: also reach each device (or each --device), verify its host key,
    /// log in, work out the prompt and mode, and read whether the idle VLAN exists; one line per
    /// device, and nothing is configured.
    Check(CheckArgs),
    /// Read one JSON request from stdin (or --request FILE) and run it.
    Run(RunArgs),
    /// Forced-command entry for SSH: request from SSH_ORIGINAL_COMMAND and/or stdin.
    ServeSsh(ServeSshArgs),
    /// Ironic's networking JSON-RPC over one HTTP connection on stdin/stdout (socket activation).
    ///
    /// Speaks the JSON-RPC 2.0 dialect of Ironic's ironic-networking service (update_port,
    /// reset_port, update_lag, delete_lag, get_switches) over exactly one HTTP/1.1 connection on
    /// stdin/stdout, as started by systemd socket activation with Accept=yes or by inetd,
    /// optionally inside TLS terminated by Mercury (--tls-cert/--tls-key; TLS 1.3 unless
    /// --tls-min-version 1.2; client certificates with --tls-client-ca). Every call is one
    /// ordinary Mercury request: the configuration is read again, and policy, lock and audit
    /// apply. The audit record names the client by the socket's peer address. Failed logins are
    /// audited and the third one on a connection closes it.
    ServeJsonrpc(ServeJsonrpcArgs),
    /// Print a shell completion script.
    ///
    /// The bash, zsh and fish scripts complete --device from the configured device names and
    /// aliases (read with `mercury completions --devices`, using MERCURY_CONFIG or the default
    /// configuration path).
    Completions(CompletionArgs),
    /// Write a mercury.toml (and secret files) from networking-generic-switch's config files.
    ///
    /// Reads every `[genericswitch:NAME]` section (and `[ngs_coordination]`) of the given NGS /
    /// ML2 configuration files, in order, as neutron-server would, and writes OUT_DIR/mercury.toml
    /// with one `[devices.NAME]` per switch, passwords and enable secrets in OUT_DIR/secrets/
    /// (mode 0600; never in mercury.toml), and an empty OUT_DIR/known_hosts for the switches'
    /// host keys. The result lists every setting that had no equivalent. With --dry-run nothing
    /// is written and the result carries the mercury.toml text.
    ImportNgs(ImportNgsArgs),
}

// Which device: a config name, alias or switch MAC, or an Ironic link.
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Device name, alias, or switch MAC.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Ironic local_link_connection switch_id (chassis MAC).
    #[arg(long, value_name = "MAC", conflicts_with = "device")]
    pub switch_id: Option<String>,
    /// Ironic local_link_connection switch_info (device name).
    #[arg(long, value_name = "NAME", conflicts_with = "device")]
    pub switch_info: Option<String>,
}

// Why, and correlation ids for the audit record.
#[derive(Debug, Clone, Default, Args)]
pub struct MetaArgs {
    /// Why (change ticket, "deploy node <uuid>"); required for changes.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Caller's correlation id (generated when absent).
    #[arg(long, value_name = "ID")]
    pub request_id: Option<String>,
    /// Ironic node UUID.
    #[arg(long, value_name = "UUID")]
    pub node_uuid: Option<String>,
    /// Ironic port UUID.
    #[arg(long, value_name = "UUID")]
    pub port_uuid: Option<String>,
    /// VIF id.
    #[arg(long, value_name = "ID")]
    pub vif_id: Option<String>,
    /// Ironic lifecycle step (idle, inspection, cleaning, provisioning, tenant, rescuing, servicing).
    #[arg(long, value_name = "STEP")]
    pub lifecycle: Option<String>,
}

// attach-port / detach-port.
#[derive(Debug, Clone, Args)]
pub struct PortArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Port name (repeat for several ports in one session).
    #[arg(long, required = true, value_name = "PORT")]
    port: Vec<String>,
    /// VLAN id.
    #[arg(long, value_name = "VLAN")]
    vlan: String,
    /// access (default) or trunk.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

// update-port.
#[derive(Debug, Clone, Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Port name (repeatable).
    #[arg(long, required = true, value_name = "PORT")]
    port: Vec<String>,
    /// access, trunk or hybrid.
    #[arg(long, value_name = "MODE")]
    mode: String,
    /// Untagged VLAN (the access VLAN for access ports).
    #[arg(long, value_name = "VLAN")]
    native_vlan: Option<String>,
    /// Tagged VLANs, e.g. 100,200-210.
    #[arg(long, value_name = "LIST")]
    allowed_vlans: Option<String>,
    /// Idle VLAN to remove first (default: the device's default_vlan).
    #[arg(long, value_name = "VLAN")]
    default_vlan: Option<String>,
    /// Port description.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// MTU.
    #[arg(long, value_name = "BYTES")]
    mtu: Option<u32>,
    #[command(flatten)]
    meta: MetaArgs,
}

// reset-port.
#[derive(Debug, Clone, Args)]
pub struct ResetArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Port name (repeatable).
    #[arg(long, required = true, value_name = "PORT")]
    port: Vec<String>,
    /// Native VLAN to remove.
    #[arg(long, value_name = "VLAN")]
    native_vlan: Option<String>,
    /// Tagged VLANs to remove.
    #[arg(long, value_name = "LIST")]
    allowed_vlans: Option<String>,
    /// Idle VLAN to restore (default: the device's default_vlan).
    #[arg(long, value_name = "VLAN")]
    default_vlan: Option<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

// add-network / delete-network.
#[derive(Debug, Clone, Args)]
pub struct NetworkArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// VLAN id.
    #[arg(long, value_name = "VLAN")]
    vlan: String,
    /// VLAN name (default vlan<N>).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

// update-lag.
#[derive(Debug, Clone, Args)]
pub struct LagArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// LAG number or the platform's LAG interface name (Port-channel10, ae1, bond3).
    #[arg(long, value_name = "LAG")]
    lag: String,
    /// Member port (repeatable).
    #[arg(long = "member", required = true, value_name = "PORT")]
    members: Vec<String>,
    /// lacp (default) or static.
    #[arg(long, value_name = "MODE")]
    aggregation_mode: Option<String>,
    /// L2 mode of the LAG: access or trunk.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    /// Untagged VLAN.
    #[arg(long, value_name = "VLAN")]
    native_vlan: Option<String>,
    /// Tagged VLANs.
    #[arg(long, value_name = "LIST")]
    allowed_vlans: Option<String>,
    /// Idle VLAN to remove first.
    #[arg(long, value_name = "VLAN")]
    default_vlan: Option<String>,
    /// Description.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

// delete-lag.
#[derive(Debug, Clone, Args)]
pub struct DeleteLagArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// LAG number or interface name.
    #[arg(long, value_name = "LAG")]
    lag: String,
    /// Member port to release (repeatable).
    #[arg(long = "member", value_name = "PORT")]
    members: Vec<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

// plug-port.
#[derive(Debug, Clone, Args)]
pub struct PlugArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Representor port (e.g. pf0vf3).
    #[arg(long, value_name = "PORT")]
    port: String,
    /// Bridge (default: the device's bridge, else br-int).
    #[arg(long, value_name = "BRIDGE")]
    bridge: Option<String>,
    /// external_ids:attached-mac.
    #[arg(long, value_name = "MAC")]
    mac: Option<String>,
    /// Access VLAN tag.
    #[arg(long, value_name = "VLAN")]
    vlan: Option<String>,
    /// On a DPU with an uplink in config: plug on the card only, leave the switch port
    /// facing the card as it is.
    #[arg(long)]
    card_only: bool,
    #[command(flatten)]
    meta: MetaArgs,
}

// unplug-port.
#[derive(Debug, Clone, Args)]
pub struct UnplugArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Representor port.
    #[arg(long, value_name = "PORT")]
    port: String,
    /// Bridge.
    #[arg(long, value_name = "BRIDGE")]
    bridge: Option<String>,
    /// On a DPU with an uplink in config: unplug on the card only, leave the switch port
    /// facing the card as it is.
    #[arg(long)]
    card_only: bool,
    #[command(flatten)]
    meta: MetaArgs,
}

// verify-port: the same fields as update-port, all optional.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Port name (repeatable).
    #[arg(long, required = true, value_name = "PORT")]
    port: Vec<String>,
    /// Expected mode: access, trunk or hybrid (without it, only the given fields are compared).
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    /// Expected untagged VLAN (the access VLAN of an access port).
    #[arg(long, value_name = "VLAN")]
    native_vlan: Option<String>,
    /// Expected tagged VLANs, exactly.
    #[arg(long, value_name = "LIST")]
    allowed_vlans: Option<String>,
    /// Expected description.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// Expected MTU.
    #[arg(long, value_name = "BYTES")]
    mtu: Option<u32>,
    /// Caller's correlation id (generated when absent).
    #[arg(long, value_name = "ID")]
    request_id: Option<String>,
}

// is-link-valid.
#[derive(Debug, Clone, Args)]
pub struct LinkArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Port name.
    #[arg(long, value_name = "PORT")]
    port: Option<String>,
}

// is-port-supported.
#[derive(Debug, Clone, Args)]
pub struct PortKindArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Ironic vnic_type: baremetal or smart-nic.
    #[arg(long, value_name = "TYPE")]
    vnic_type: Option<String>,
    /// Ironic port is_smartnic.
    #[arg(long)]
    is_smartnic: bool,
}

// check.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Lint the catalog only (built-in plus plugins.d).
    #[arg(long, conflicts_with = "connect")]
    pub catalog: bool,
    /// Print the supported-operations table (Markdown) instead of JSON.
    #[arg(long, requires = "catalog")]
    pub table: bool,
    /// Connect to every device (or each --device): host key, login, prompt and mode, idle VLAN.
    #[arg(long)]
    pub connect: bool,
    /// With --connect: only this device (repeatable).
    #[arg(long, value_name = "NAME", requires = "connect")]
    pub device: Vec<String>,
}

// run.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Read the request from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    pub request: Option<PathBuf>,
}

// serve-ssh.
#[derive(Debug, Clone, Args)]
pub struct ServeSshArgs {
    /// The caller's name ([callers.NAME] in the configuration); set on the authorized_keys line.
    #[arg(long, value_name = "NAME")]
    pub caller: String,
    /// Further restrict this key to these devices (repeatable).
    #[arg(long = "allow-device", value_name = "NAME")]
    pub allow_devices: Vec<String>,
}

// serve-jsonrpc.
#[derive(Debug, Clone, Args)]
pub struct ServeJsonrpcArgs {
    /// Serve the one connection on stdin/stdout (the only mode: no listening daemon).
    #[arg(long, required = true)]
    pub inetd: bool,
    /// htpasswd file with bcrypt hashes (htpasswd -B) for HTTP Basic authentication.
    #[arg(long, value_name = "FILE")]
    pub htpasswd: PathBuf,
    /// Policy scope ([callers.NAME]) for every user [default: the authenticated user's name].
    #[arg(long, value_name = "NAME")]
    pub caller: Option<String>,
    /// Close the connection after this many idle seconds between requests.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
    /// Answer 408 and close when a request's head and body take longer than this many
    /// seconds to arrive, from its first byte.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,
    /// Terminate TLS: the server certificate chain (PEM), with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The server's private key (PEM; a secret: mode 0600, like every secret file).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require a client certificate signed by a CA in this PEM file.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Lowest TLS version accepted: 1.3 (default, as Ironic's own JSON-RPC server) or 1.2
    /// for clients whose TLS library predates 1.3.
    #[arg(long, value_name = "VERSION", value_enum, default_value_t = TlsVersion::V1_3, requires = "tls_cert")]
    pub tls_min_version: TlsVersion,
}

/// `--tls-min-version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsVersion {
    /// TLS 1.2 and 1.3.
    #[value(name = "1.2")]
    V1_2,
    /// TLS 1.3 only.
    #[value(name = "1.3")]
    V1_3,
}

// completions.
#[derive(Debug, Clone, Args)]
pub struct CompletionArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, required_unless_present = "devices")]
    pub shell: Option<clap_complete::Shell>,
    /// Print the configured device names and aliases, one per line (what the scripts call).
    #[arg(long, conflicts_with = "shell")]
    pub devices: bool,
}

// import-ngs.
#[derive(Debug, Clone, Args)]
pub struct ImportNgsArgs {
    /// NGS configuration files (e.g. /etc/neutron/plugins/ml2/ml2_conf_genericswitch.ini).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Where to write mercury.toml, secrets/ and known_hosts.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out_dir: PathBuf,
    /// Replace files that already exist.
    #[arg(long)]
    pub force: bool,
}

/// The exit-code table for `--help` and the man page.
pub fn exit_codes_help() -> String {
    let mut s = String::from("Exit codes:\n");
    for k in ExitKind::ALL {
        let retry = if k.retryable() { " (retry)" } else { "" };
        s.push_str(&format!("  {:>3}  {}{retry}\n", k.code(), k.meaning()));
    }
    s
}

/// The clap command (for completions, the man page and the forced-command allowlist).
/// Subcommands' arguments are deferred: call `build()` before walking them (clap's own
/// generators do).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Parses the process's argv (see [`parse_from`]).
pub fn parse_args() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// Parses argv. For `serve-ssh` the environment chooses nothing: sshd can pass a client's
/// variables through (`AcceptEnv`, `PermitUserEnvironment`, `environment=` on the key), so a
/// `MERCURY_CONFIG` from the environment is ignored there and the configuration comes from
/// the authorized_keys argv (`--config`) or the default path; [`Cli::log_from_env`] says
/// the same for `RUST_LOG`.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let matches = command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let Command::ServeSsh(_) = cli.command {
        let from_env = |m: &clap::ArgMatches| {
            m.value_source("config") == Some(clap::parser::ValueSource::EnvVariable)
        };
        let sub = matches.subcommand_matches("serve-ssh");
        if from_env(&matches) || sub.is_some_and(from_env) {
            cli.config = PathBuf::from(config::DEFAULT_PATH);
        }
    }
    Ok(cli)
}

impl Cli {
    /// Whether diagnostics may be configured from the environment (`RUST_LOG`): not for
    /// `serve-ssh`, whose environment a remote client may influence; `-v` on the
    /// authorized_keys line still works.
    pub fn log_from_env(&self) -> bool {
        !matches!(self.command, Command::ServeSsh(_))
    }
}

fn vlan(v: &Option<String>) -> Result<Option<Vlan>, RequestError> {
    v.as_deref()
        .map(Vlan::parse)
        .transpose()
        .map_err(Into::into)
}

fn vlans(v: &Option<String>) -> Result<Option<VlanSet>, RequestError> {
    v.as_deref()
        .map(VlanSet::parse)
        .transpose()
        .map_err(Into::into)
}

impl TargetArgs {
    fn apply(&self, raw: &mut RawRequest, port: Option<String>) {
        raw.device = self.device.clone();
        if self.switch_id.is_some() || self.switch_info.is_some() {
            raw.local_link_connection = Some(LocalLinkConnection {
                switch_id: self.switch_id.clone(),
                switch_info: self.switch_info.clone(),
                port_id: port,
                hostname: None,
            });
        }
    }
}

impl MetaArgs {
    fn apply(&self, raw: &mut RawRequest) {
        raw.reason = self.reason.clone();
        raw.request_id = self.request_id.clone();
        raw.node_uuid = self.node_uuid.clone();
        raw.port_uuid = self.port_uuid.clone();
        raw.vif_id = self.vif_id.clone();
        raw.lifecycle = self.lifecycle.clone();
    }
}

fn set_ports(raw: &mut RawRequest, ports: &[String]) {
    if let [one] = ports {
        raw.port = Some(one.clone());
    } else {
        raw.ports = Some(ports.iter().cloned().map(RawPortItem::Name).collect());
    }
}

impl Command {
    /// The request an operation subcommand describes (`None` for check/run/serve-ssh/completions).
    pub fn to_raw(&self) -> Option<Result<RawRequest, RequestError>> {
        let op = match self {
            Command::AttachPort(_) => "attach_port",
            Command::DetachPort(_) => "detach_port",
            Command::UpdatePort(_) => "update_port",
            Command::ResetPort(_) => "reset_port",
            Command::AddNetwork(_) => "add_network",
            Command::DeleteNetwork(_) => "delete_network",
            Command::UpdateLag(_) => "update_lag",
            Command::DeleteLag(_) => "delete_lag",
            Command::PlugPort(_) => "plug_port",
            Command::UnplugPort(_) => "unplug_port",
            Command::GetSwitches => "get_switches",
            Command::GetAllowedNetworkTypes(_) => "get_allowed_network_types",
            Command::IsLinkValid(_) => "is_link_valid",
            Command::IsPortSupported(_) => "is_port_supported",
            Command::VerifyPort(_) => "verify_port",
            Command::Check(_)
            | Command::Run(_)
            | Command::ServeSsh(_)
            | Command::ServeJsonrpc(_)
            | Command::Completions(_)
            | Command::ImportNgs(_) => return None,
        };
        let mut raw = RawRequest {
            op: Some(op.to_string()),
            ..RawRequest::default()
        };
        Some(self.fill(&mut raw).map(|_| raw))
    }

    fn fill(&self, raw: &mut RawRequest) -> Result<(), RequestError> {
        match self {
            Command::AttachPort(a) | Command::DetachPort(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                set_ports(raw, &a.port);
                raw.vlan = Some(Vlan::parse(&a.vlan)?);
                raw.mode = a.mode.clone();
            }
            Command::UpdatePort(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                set_ports(raw, &a.port);
                raw.mode = Some(a.mode.clone());
                raw.native_vlan = vlan(&a.native_vlan)?;
                raw.allowed_vlans = vlans(&a.allowed_vlans)?;
                raw.default_vlan = vlan(&a.default_vlan)?;
                raw.description = a.description.clone();
                raw.mtu = a.mtu;
            }
            Command::ResetPort(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                set_ports(raw, &a.port);
                raw.native_vlan = vlan(&a.native_vlan)?;
                raw.allowed_vlans = vlans(&a.allowed_vlans)?;
                raw.default_vlan = vlan(&a.default_vlan)?;
            }
            Command::AddNetwork(a) | Command::DeleteNetwork(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                raw.vlan = Some(Vlan::parse(&a.vlan)?);
                raw.name = a.name.clone();
            }
            Command::UpdateLag(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                raw.lag = Some(a.lag.clone());
                raw.members = Some(a.members.clone());
                raw.aggregation_mode = a.aggregation_mode.clone();
                raw.mode = a.mode.clone();
                raw.native_vlan = vlan(&a.native_vlan)?;
                raw.allowed_vlans = vlans(&a.allowed_vlans)?;
                raw.default_vlan = vlan(&a.default_vlan)?;
                raw.description = a.description.clone();
            }
            Command::DeleteLag(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                raw.lag = Some(a.lag.clone());
                raw.members = (!a.members.is_empty()).then(|| a.members.clone());
            }
            Command::PlugPort(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                raw.port = Some(a.port.clone());
                raw.bridge = a.bridge.clone();
                raw.mac = a.mac.clone();
                raw.vlan = vlan(&a.vlan)?;
                raw.card_only = a.card_only.then_some(true);
            }
            Command::UnplugPort(a) => {
                a.target.apply(raw, None);
                a.meta.apply(raw);
                raw.port = Some(a.port.clone());
                raw.bridge = a.bridge.clone();
                raw.card_only = a.card_only.then_some(true);
            }
            Command::GetSwitches => {}
            Command::GetAllowedNetworkTypes(t) => t.apply(raw, None),
            Command::IsLinkValid(a) => {
                a.target.apply(raw, a.port.clone());
                if raw.local_link_connection.is_none() {
                    raw.port = a.port.clone();
                }
            }
            Command::IsPortSupported(a) => {
                a.target.apply(raw, None);
                raw.vnic_type = a.vnic_type.clone();
                raw.is_smartnic = a.is_smartnic.then_some(true);
            }
            Command::VerifyPort(a) => {
                a.target.apply(raw, None);
                raw.request_id = a.request_id.clone();
                set_ports(raw, &a.port);
                raw.mode = a.mode.clone();
                raw.native_vlan = vlan(&a.native_vlan)?;
                raw.allowed_vlans = vlans(&a.allowed_vlans)?;
                raw.description = a.description.clone();
                raw.mtu = a.mtu;
            }
            Command::Check(_)
            | Command::Run(_)
            | Command::ServeSsh(_)
            | Command::ServeJsonrpc(_)
            | Command::Completions(_)
            | Command::ImportNgs(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definitions_are_consistent() {
        command().debug_assert();
    }

    #[test]
    fn only_the_invoked_subcommand_is_built() {
        // Unbuilt, a subcommand has its name and help text but none of its arguments.
        let lazy = command();
        let attach = lazy.find_subcommand("attach-port").unwrap();
        assert_eq!(attach.get_arguments().count(), 0);
        let mut built = command();
        built.build();
        let attach = built.find_subcommand("attach-port").unwrap();
        assert!(attach.get_arguments().any(|a| a.get_long() == Some("port")));
    }

    #[test]
    fn building_a_subcommand_keeps_its_help_text() {
        // The variant's doc comment is the help text; building the deferred arguments must
        // not replace it with an argument struct's doc comment.
        let lazy = command();
        let mut built = command();
        built.build();
        for sub in lazy.get_subcommands() {
            let after = built.find_subcommand(sub.get_name()).unwrap();
            let text = |c: &clap::Command| {
                (
                    c.get_about().map(|a| a.to_string()),
                    c.get_long_about().map(|a| a.to_string()),
                )
            };
            assert_eq!(text(after), text(sub), "{}", sub.get_name());
        }
    }

    #[test]
    fn flags_become_a_raw_request() {
        let cli = Cli::try_parse_from([
            "mercury",
            "attach-port",
            "--device",
            "leaf-1",
            "--port",
            "Ethernet1/5",
            "--vlan",
            "120",
            "--reason",
            "CHG-1",
        ])
        .unwrap();
        let raw = cli.command.to_raw().unwrap().unwrap();
        assert_eq!(raw.op.as_deref(), Some("attach_port"));
        assert_eq!(raw.port.as_deref(), Some("Ethernet1/5"));
        assert_eq!(raw.vlan.map(Vlan::get), Some(120));
    }

    #[test]
    fn bad_vlan_is_invalid_data_not_usage() {
        let cli = Cli::try_parse_from([
            "mercury",
            "attach-port",
            "--device",
            "a",
            "--port",
            "E1",
            "--vlan",
            "4095",
            "--reason",
            "r",
        ])
        .unwrap();
        assert!(cli.command.to_raw().unwrap().is_err());
    }
}
