//! The request: one operation, validated before anything else happens.
//!
//! Every entry point (flags, JSON on stdin, the forced-command string, JSON-RPC) produces a
//! [`RawRequest`]; [`Request::from_raw`] is the single place it becomes a [`Request`]. Values
//! here are checked without the configuration (VLAN ranges, name syntax, which fields an
//! operation takes); `run::resolve` then checks them against the device and platform
//! (device lookup, port pattern). Nothing below this module sees an unchecked string.

pub mod validate;
pub mod vlan;

use serde::{Deserialize, Serialize};

use validate::Escaped;
use vlan::{Vlan, VlanSet};

/// Largest batch of port changes one request may carry.
pub const MAX_PORTS: usize = 512;

/// A request that failed validation; exit 65.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RequestError(pub String);

impl From<validate::Invalid> for RequestError {
    fn from(e: validate::Invalid) -> Self {
        RequestError(e.0)
    }
}

impl From<crate::request::vlan::VlanError> for RequestError {
    fn from(e: crate::request::vlan::VlanError) -> Self {
        RequestError(e.to_string())
    }
}

fn bad(msg: impl Into<String>) -> RequestError {
    RequestError(msg.into())
}

/// The operations (DESIGN §2). Names are the JSON `op` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Put a port on a network.
    AttachPort,
    /// Take a network off a port.
    DetachPort,
    /// Declare a port's whole L2 configuration.
    UpdatePort,
    /// Return a port to its idle state.
    ResetPort,
    /// Create a VLAN.
    AddNetwork,
    /// Remove a VLAN.
    DeleteNetwork,
    /// Create or update a LAG with members.
    UpdateLag,
    /// Remove a LAG.
    DeleteLag,
    /// OVS: add a representor port to a bridge.
    PlugPort,
    /// OVS: remove a representor port.
    UnplugPort,
    /// What network types the device provides.
    GetAllowedNetworkTypes,
    /// Does a link resolve to a known device and an allowed port?
    IsLinkValid,
    /// Can this port kind be handled?
    IsPortSupported,
    /// Inventory, never secrets.
    GetSwitches,
    /// Read a port back and compare it with an expected state (no change).
    VerifyPort,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 15] = [
        Op::AttachPort,
        Op::DetachPort,
        Op::UpdatePort,
        Op::ResetPort,
        Op::AddNetwork,
        Op::DeleteNetwork,
        Op::UpdateLag,
        Op::DeleteLag,
        Op::PlugPort,
        Op::UnplugPort,
        Op::GetAllowedNetworkTypes,
        Op::IsLinkValid,
        Op::IsPortSupported,
        Op::GetSwitches,
        Op::VerifyPort,
    ];

    /// The JSON name (`attach_port`).
    pub fn name(self) -> &'static str {
        match self {
            Op::AttachPort => "attach_port",
            Op::DetachPort => "detach_port",
            Op::UpdatePort => "update_port",
            Op::ResetPort => "reset_port",
            Op::AddNetwork => "add_network",
            Op::DeleteNetwork => "delete_network",
            Op::UpdateLag => "update_lag",
            Op::DeleteLag => "delete_lag",
            Op::PlugPort => "plug_port",
            Op::UnplugPort => "unplug_port",
            Op::GetAllowedNetworkTypes => "get_allowed_network_types",
            Op::IsLinkValid => "is_link_valid",
            Op::IsPortSupported => "is_port_supported",
            Op::GetSwitches => "get_switches",
            Op::VerifyPort => "verify_port",
        }
    }

    /// Parses a JSON name or a CLI verb (`attach-port`).
    pub fn parse(name: &str) -> Option<Op> {
        let snake = name.replace('-', "_");
        Op::ALL.into_iter().find(|op| op.name() == snake)
    }

    /// Whether the operation changes a device (needs a reason, a lock, an audit record).
    pub fn mutates(self) -> bool {
        !matches!(
            self,
            Op::GetAllowedNetworkTypes
                | Op::IsLinkValid
                | Op::IsPortSupported
                | Op::GetSwitches
                | Op::VerifyPort
        )
    }

    /// Fields this operation takes besides `op` and the common metadata.
    fn fields(self) -> &'static [&'static str] {
        const TARGET: &[&str] = &["device", "local_link_connection"];
        match self {
            Op::AttachPort | Op::DetachPort => &[
                "device",
                "local_link_connection",
                "port",
                "ports",
                "vlan",
                "mode",
            ],
            Op::UpdatePort => &[
                "device",
                "local_link_connection",
                "port",
                "ports",
                "mode",
                "native_vlan",
                "allowed_vlans",
                "default_vlan",
                "description",
                "mtu",
            ],
            Op::ResetPort => &[
                "device",
                "local_link_connection",
                "port",
                "ports",
                "native_vlan",
                "allowed_vlans",
                "default_vlan",
            ],
            Op::AddNetwork | Op::DeleteNetwork => {
                &["device", "local_link_connection", "vlan", "name"]
            }
            Op::UpdateLag => &[
                "device",
                "local_link_connection",
                "lag",
                "members",
                "aggregation_mode",
                "mode",
                "native_vlan",
                "allowed_vlans",
                "default_vlan",
                "description",
            ],
            Op::DeleteLag => &["device", "local_link_connection", "lag", "members"],
            Op::PlugPort => &[
                "device",
                "local_link_connection",
                "port",
                "bridge",
                "vif_id",
                "mac",
                "vlan",
                "card_only",
            ],
            Op::UnplugPort => &[
                "device",
                "local_link_connection",
                "port",
                "bridge",
                "card_only",
            ],
            Op::GetAllowedNetworkTypes => TARGET,
            Op::IsLinkValid => &["device", "local_link_connection", "port"],
            Op::IsPortSupported => &[
                "device",
                "local_link_connection",
                "vnic_type",
                "is_smartnic",
            ],
            Op::GetSwitches => &[],
            Op::VerifyPort => &[
                "device",
                "local_link_connection",
                "port",
                "ports",
                "mode",
                "native_vlan",
                "allowed_vlans",
                "description",
                "mtu",
            ],
        }
    }
}

/// An Ironic `local_link_connection` (switch port) or SmartNIC link (`hostname`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LocalLinkConnection {
    /// Switch chassis MAC from LLDP.
    pub switch_id: Option<String>,
    /// Port name on the switch (or the representor on a SmartNIC).
    pub port_id: Option<String>,
    /// Free-form switch name (Mercury: a device name or alias).
    pub switch_info: Option<String>,
    /// SmartNIC: the card's host name (a device name or alias).
    pub hostname: Option<String>,
}

/// A batched port item: a bare name, or an object overriding the request's values.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RawPortItem {
    /// Just the port name.
    Name(String),
    /// A port with its own values.
    Full(RawPortFields),
}

/// Per-port values in a batch.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPortFields {
    /// Port name.
    pub port: String,
    /// VLAN (attach/detach).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan: Option<Vlan>,
    /// access / trunk / hybrid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Untagged VLAN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<Vlan>,
    /// Tagged VLANs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_vlans: Option<VlanSet>,
    /// Idle VLAN to remove first / restore.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_vlan: Option<Vlan>,
    /// Port description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MTU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// A network name from the configuration's `[networks]` standing for this port's VLAN
    /// (`vlan` for attach/detach, `native_vlan` otherwise); replaced by its id before the
    /// request is validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

/// A request as it arrives, before validation. `null` means absent (Ironic sends optional
/// arguments as `null`); unknown fields are refused. It serialises back to the same form
/// (a coalesced request is spooled as one).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_link_connection: Option<LocalLinkConnection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<RawPortItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan: Option<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_vlans: Option<VlanSet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_vlan: Option<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregation_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vif_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnic_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_smartnic: Option<bool>,
    /// Read the ports back before and after the change (`--verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// A network name from the configuration's `[networks]` standing for the request's VLAN
    /// (`vlan` for attach/detach/plug, `native_vlan` otherwise); replaced by its id before
    /// the request is validated (`run::resolve::networks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// plug/unplug on a DPU with an `uplink`: `true` changes the card only, not the switch
    /// port facing it (`--card-only`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_only: Option<bool>,
    /// Check mode (`--check`): read the ports and say what the change would do, sending no
    /// configuration line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<bool>,
}

impl RawRequest {
    /// Parses one JSON request (size-bounded by the caller).
    pub fn from_json(text: &str) -> Result<RawRequest, RequestError> {
        serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON request: {e}")))
    }

    /// Names of the operation-specific fields that are set.
    fn present(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        macro_rules! check {
            ($($f:ident),*) => { $( if self.$f.is_some() { out.push(stringify!($f)); } )* };
        }
        check!(
            device,
            local_link_connection,
            port,
            ports,
            vlan,
            name,
            mode,
            native_vlan,
            allowed_vlans,
            default_vlan,
            description,
            mtu,
            lag,
            members,
            aggregation_mode,
            bridge,
            vif_id,
            mac,
            vnic_type,
            is_smartnic,
            card_only
        );
        out
    }
}

/// L2 mode of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PortMode {
    /// One untagged VLAN.
    Access,
    /// Tagged VLANs plus an optional native VLAN.
    Trunk,
    /// Huawei/Comware hybrid ports.
    Hybrid,
}

impl PortMode {
    fn parse(s: &str) -> Result<PortMode, RequestError> {
        match s {
            "access" => Ok(PortMode::Access),
            "trunk" => Ok(PortMode::Trunk),
            "hybrid" => Ok(PortMode::Hybrid),
            other => Err(bad(format!(
                "invalid mode {}: expected access, trunk or hybrid",
                Escaped(other)
            ))),
        }
    }
}

/// LAG aggregation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    /// 802.3ad LACP.
    Lacp,
    /// Static bundle.
    Static,
}

/// One port's change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PortChange {
    /// Port name (checked against the platform pattern by `run::resolve`).
    pub port: String,
    /// VLAN for attach/detach.
    pub vlan: Option<Vlan>,
    /// Mode (attach/detach default access; update_port requires it).
    pub mode: Option<PortMode>,
    /// Native / access VLAN for update_port; to remove for reset_port.
    pub native_vlan: Option<Vlan>,
    /// Tagged VLANs.
    pub allowed_vlans: Option<VlanSet>,
    /// Idle VLAN override for this port.
    pub default_vlan: Option<Vlan>,
    /// Sanitised description.
    pub description: Option<String>,
    /// MTU, 576-9216.
    pub mtu: Option<u32>,
}

/// A VLAN to create or delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Network {
    /// The VLAN.
    pub vlan: Vlan,
    /// Its name (given, or `vlan<N>`).
    pub name: String,
}

/// A LAG to create, update or delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LagSpec {
    /// The LAG as given (a number or the platform's interface name).
    pub name: String,
    /// Member ports.
    pub members: Vec<String>,
    /// LACP or static.
    pub aggregation: Aggregation,
    /// L2 configuration of the LAG interface itself.
    pub l2: Option<PortChange>,
}

/// OVS representor plug.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plug {
    /// Bridge override.
    pub bridge: Option<String>,
    /// `external_ids:iface-id`.
    pub vif_id: Option<String>,
    /// `external_ids:attached-mac`.
    pub mac: Option<String>,
    /// Optional access tag.
    pub vlan: Option<Vlan>,
    /// On a DPU with an `uplink`: change the card only, leave the switch port facing it
    /// alone.
    pub card_only: bool,
}

/// Who/why metadata carried into the audit record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Meta {
    /// Why (change ticket, `deploy node <uuid>`).
    pub reason: Option<String>,
    /// Caller's correlation id (generated when absent).
    pub request_id: Option<String>,
    /// Ironic node.
    pub node_uuid: Option<String>,
    /// Ironic port.
    pub port_uuid: Option<String>,
    /// VIF id.
    pub vif_id: Option<String>,
    /// Ironic lifecycle step.
    pub lifecycle: Option<String>,
}

/// Query parameters for `is_port_supported`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PortKind {
    /// `baremetal`, `smart-nic`, ...
    pub vnic_type: Option<String>,
    /// Ironic's `is_smartnic`.
    pub is_smartnic: Option<bool>,
}

/// A validated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The operation.
    pub op: Op,
    /// Device reference (name, alias or MAC), if any.
    pub device: Option<String>,
    /// The Ironic link, if the device/port came that way.
    pub link: Option<LocalLinkConnection>,
    /// Port changes (port operations, plug/unplug, is_link_valid).
    pub ports: Vec<PortChange>,
    /// add/delete network.
    pub network: Option<Network>,
    /// update/delete LAG.
    pub lag: Option<LagSpec>,
    /// plug/unplug.
    pub plug: Option<Plug>,
    /// is_port_supported.
    pub kind: PortKind,
    /// Audit metadata.
    pub meta: Meta,
    /// Read the changed ports before and after (read before write); always for
    /// `verify_port`. As validated: only what the request asked; `run` settles it with the
    /// device's `verify` and whether the platform can read ports.
    pub verify: bool,
    /// What the request said about reading (`verify: true` / `--verify`, `verify: false` /
    /// `--no-verify`), or nothing (the device's setting decides).
    pub verify_asked: Option<bool>,
    /// Check mode: read, plan, report the diff and the `changed` the request would
    /// produce; no configuration line is sent.
    pub check: bool,
}

const LIFECYCLES: &[&str] = &[
    "idle",
    "inspection",
    "cleaning",
    "provisioning",
    "tenant",
    "rescuing",
    "servicing",
];

impl Request {
    /// Validates a raw request without config: op known, fields belong to the op, values
    /// well-formed, required fields present.
    pub fn from_raw(raw: RawRequest) -> Result<Request, RequestError> {
        // Network names are resolved against the configuration first; one left here was
        // never resolved, and a VLAN is never guessed.
        let unresolved = raw.network.is_some()
            || raw
                .ports
                .iter()
                .flatten()
                .any(|p| matches!(p, RawPortItem::Full(f) if f.network.is_some()));
        if unresolved {
            return Err(bad(
                "network names are resolved from the configuration's [networks] before validation",
            ));
        }
        let op_name = raw.op.as_deref().ok_or_else(|| bad("missing field `op`"))?;
        let op = Op::parse(op_name)
            .filter(|_| !op_name.contains('-'))
            .ok_or_else(|| {
                bad(format!(
                    "unknown op {} (known: {})",
                    Escaped(op_name),
                    Op::ALL.map(Op::name).join(", ")
                ))
            })?;
        for f in raw.present() {
            if !op.fields().contains(&f) {
                return Err(bad(format!("field `{f}` is not used by {}", op.name())));
            }
        }
        let meta = Meta {
            reason: raw.reason.clone(),
            request_id: raw.request_id.clone(),
            node_uuid: raw
                .node_uuid
                .as_deref()
                .map(|u| validate::uuid("node_uuid", u))
                .transpose()?,
            port_uuid: raw
                .port_uuid
                .as_deref()
                .map(|u| validate::uuid("port_uuid", u))
                .transpose()?,
            vif_id: raw.vif_id.clone(),
            lifecycle: raw.lifecycle.clone(),
        };
        if let Some(r) = &meta.reason {
            validate::free_text("reason", r)?;
        }
        if op.mutates() && meta.reason.is_none() {
            return Err(bad(format!(
                "{} needs a reason (change ticket, \"deploy node <uuid>\")",
                op.name()
            )));
        }
        if let Some(id) = &meta.request_id {
            validate::identifier("request_id", id)?;
        }
        if let Some(id) = &meta.vif_id {
            validate::identifier("vif_id", id)?;
        }
        if let Some(l) = &meta.lifecycle {
            if !LIFECYCLES.contains(&l.as_str()) {
                return Err(bad(format!(
                    "invalid lifecycle {} (one of {})",
                    Escaped(l),
                    LIFECYCLES.join(", ")
                )));
            }
        }
        let link = raw.local_link_connection.clone();
        if let Some(l) = &link {
            check_link(l)?;
        }
        if let Some(d) = &raw.device {
            if link.is_some() {
                return Err(bad("give either device or local_link_connection, not both"));
            }
            validate::simple_name("device", d, 128)
                .or_else(|_| validate::mac("device", d).map(|_| ()))?;
        }
        let needs_device = op != Op::GetSwitches && op != Op::IsPortSupported;
        if needs_device && raw.device.is_none() && link.is_none() {
            return Err(bad(format!(
                "{} needs a device (or local_link_connection)",
                op.name()
            )));
        }

        let verify = raw.verify == Some(true) || op == Op::VerifyPort;
        if verify && !op.mutates() && op != Op::VerifyPort {
            return Err(bad(format!(
                "{} changes nothing to verify (verify_port reads a port)",
                op.name()
            )));
        }
        let check = raw.check == Some(true);
        if check && (!op.mutates() || raw.verify == Some(false)) {
            return Err(bad(format!(
                "check mode reads the ports to predict a change: {} {}",
                op.name(),
                if op.mutates() {
                    "cannot be checked without reading (verify: false)"
                } else {
                    "changes nothing"
                }
            )));
        }
        let mut req = Request {
            verify,
            verify_asked: if check { Some(true) } else { raw.verify },
            check,
            op,
            device: raw.device.clone(),
            link,
            ports: Vec::new(),
            network: None,
            lag: None,
            plug: None,
            kind: PortKind::default(),
            meta,
        };
        match op {
            Op::AttachPort | Op::DetachPort | Op::UpdatePort | Op::ResetPort | Op::VerifyPort => {
                req.ports = port_changes(op, &raw, req.link.as_ref())?;
            }
            Op::AddNetwork | Op::DeleteNetwork => {
                let vlan = raw
                    .vlan
                    .ok_or_else(|| bad(format!("{} needs a vlan", op.name())))?;
                let name = match &raw.name {
                    Some(n) => {
                        validate::simple_name("name", n, 32)?;
                        n.clone()
                    }
                    None => format!("vlan{vlan}"),
                };
                req.network = Some(Network { vlan, name });
            }
            Op::UpdateLag | Op::DeleteLag => req.lag = Some(lag_spec(op, &raw)?),
            Op::PlugPort | Op::UnplugPort => {
                let port = single_port(&raw, req.link.as_ref(), op)?;
                if let Some(b) = &raw.bridge {
                    validate::simple_name("bridge", b, 15)?;
                }
                let mac = raw
                    .mac
                    .as_deref()
                    .map(|m| validate::mac("mac", m))
                    .transpose()?;
                if op == Op::PlugPort && req.meta.vif_id.is_none() {
                    return Err(bad("plug_port needs a vif_id (external_ids:iface-id)"));
                }
                req.plug = Some(Plug {
                    bridge: raw.bridge.clone(),
                    vif_id: req.meta.vif_id.clone(),
                    mac,
                    vlan: raw.vlan,
                    card_only: raw.card_only == Some(true),
                });
                req.ports = vec![PortChange {
                    port,
                    vlan: raw.vlan,
                    ..PortChange::default()
                }];
            }
            Op::IsLinkValid => {
                let port = single_port(&raw, req.link.as_ref(), op)?;
                req.ports = vec![PortChange {
                    port,
                    ..PortChange::default()
                }];
            }
            Op::IsPortSupported => {
                if let Some(v) = &raw.vnic_type {
                    validate::simple_name("vnic_type", v, 32)?;
                }
                req.kind = PortKind {
                    vnic_type: raw.vnic_type.clone(),
                    is_smartnic: raw.is_smartnic,
                };
            }
            Op::GetAllowedNetworkTypes | Op::GetSwitches => {}
        }
        Ok(req)
    }

    /// The device reference: `device`, else the link's `switch_info` / `hostname`, else its
    /// `switch_id`.
    pub fn target_reference(&self) -> Option<String> {
        if let Some(d) = &self.device {
            return Some(d.clone());
        }
        let l = self.link.as_ref()?;
        l.switch_info
            .clone()
            .or_else(|| l.hostname.clone())
            .or_else(|| l.switch_id.clone())
    }

    /// Every VLAN the request would configure, for policy and audit.
    pub fn vlans(&self) -> VlanSet {
        let mut set = VlanSet::new();
        let mut add = |c: &PortChange| {
            c.vlan
                .into_iter()
                .chain(c.native_vlan)
                .for_each(|v| set.insert(v));
            c.allowed_vlans
                .iter()
                .flat_map(|s| s.iter())
                .for_each(|v| set.insert(v));
        };
        self.ports.iter().for_each(&mut add);
        if let Some(l) = self.lag.as_ref().and_then(|l| l.l2.as_ref()) {
            add(l);
        }
        if let Some(n) = &self.network {
            set.insert(n.vlan);
        }
        set
    }

    /// A plug / unplug request's representor port and plug values (both present once
    /// validated); `None` for other operations.
    pub fn plugged(&self) -> Option<(&PortChange, &Plug)> {
        Some((self.ports.first()?, self.plug.as_ref()?))
    }

    /// Every port name the request touches (ports, LAG members).
    pub fn port_names(&self) -> Vec<String> {
        let mut out: Vec<String> = self.ports.iter().map(|p| p.port.clone()).collect();
        if let Some(l) = &self.lag {
            out.extend(l.members.iter().cloned());
        }
        out
    }
}

fn check_link(l: &LocalLinkConnection) -> Result<(), RequestError> {
    if let Some(id) = &l.switch_id {
        validate::mac("local_link_connection.switch_id", id)?;
    }
    if let Some(p) = &l.port_id {
        validate::port_name("local_link_connection.port_id", p)?;
    }
    for (f, v) in [("switch_info", &l.switch_info), ("hostname", &l.hostname)] {
        if let Some(v) = v {
            validate::simple_name(&format!("local_link_connection.{f}"), v, 128)?;
        }
    }
    if l.switch_id.is_none() && l.switch_info.is_none() && l.hostname.is_none() {
        return Err(bad(
            "local_link_connection needs switch_id, switch_info or hostname",
        ));
    }
    Ok(())
}

fn single_port(
    raw: &RawRequest,
    link: Option<&LocalLinkConnection>,
    op: Op,
) -> Result<String, RequestError> {
    let port = raw
        .port
        .clone()
        .or_else(|| link.and_then(|l| l.port_id.clone()))
        .ok_or_else(|| bad(format!("{} needs a port", op.name())))?;
    validate::port_name("port", &port)?;
    Ok(port)
}

fn port_changes(
    op: Op,
    raw: &RawRequest,
    link: Option<&LocalLinkConnection>,
) -> Result<Vec<PortChange>, RequestError> {
    let items: Vec<RawPortFields> = match (&raw.port, &raw.ports) {
        (Some(_), Some(_)) => return Err(bad("give either port or ports, not both")),
        (None, Some(list)) => {
            if list.is_empty() {
                return Err(bad("ports is empty"));
            }
            list.iter()
                .map(|i| match i {
                    RawPortItem::Name(n) => RawPortFields {
                        port: n.clone(),
                        ..RawPortFields::default()
                    },
                    RawPortItem::Full(f) => f.clone(),
                })
                .collect()
        }
        (Some(p), None) => vec![RawPortFields {
            port: p.clone(),
            ..RawPortFields::default()
        }],
        (None, None) => match link.and_then(|l| l.port_id.clone()) {
            Some(p) => vec![RawPortFields {
                port: p,
                ..RawPortFields::default()
            }],
            None => return Err(bad(format!("{} needs a port", op.name()))),
        },
    };
    if items.len() > MAX_PORTS {
        return Err(bad(format!(
            "too many ports: {} (at most {MAX_PORTS})",
            items.len()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        validate::port_name("port", &item.port)?;
        if !seen.insert(item.port.clone()) {
            return Err(bad(format!("port {} appears twice", Escaped(&item.port))));
        }
        let mode = item
            .mode
            .as_deref()
            .or(raw.mode.as_deref())
            .map(PortMode::parse)
            .transpose()?;
        let description = item
            .description
            .as_deref()
            .or(raw.description.as_deref())
            .map(validate::description)
            .transpose()?
            .map(|(d, _)| d);
        let mtu = item.mtu.or(raw.mtu);
        if let Some(m) = mtu {
            if !(576..=9216).contains(&m) {
                return Err(bad(format!("invalid mtu {m}: expected 576-9216")));
            }
        }
        let change = PortChange {
            port: item.port,
            vlan: item.vlan.or(raw.vlan),
            mode,
            native_vlan: item.native_vlan.or(raw.native_vlan),
            allowed_vlans: item.allowed_vlans.or_else(|| raw.allowed_vlans.clone()),
            default_vlan: item.default_vlan.or(raw.default_vlan),
            description,
            mtu,
        };
        check_port_change(op, &change)?;
        out.push(change);
    }
    Ok(out)
}

fn check_port_change(op: Op, c: &PortChange) -> Result<(), RequestError> {
    let port = Escaped(&c.port);
    match op {
        Op::AttachPort | Op::DetachPort => {
            if c.vlan.is_none() {
                return Err(bad(format!("{} needs a vlan (port {port})", op.name())));
            }
            if c.mode == Some(PortMode::Hybrid) {
                return Err(bad(format!("{} takes mode access or trunk", op.name())));
            }
        }
        Op::UpdatePort => {
            let mode = c
                .mode
                .ok_or_else(|| bad(format!("update_port needs a mode (port {port})")))?;
            if mode == PortMode::Access && c.native_vlan.is_none() {
                return Err(bad(format!(
                    "update_port mode access needs native_vlan: the access VLAN (port {port})"
                )));
            }
            if mode == PortMode::Access && c.allowed_vlans.as_ref().is_some_and(|s| !s.is_empty()) {
                return Err(bad(format!(
                    "update_port mode access takes no allowed_vlans (port {port})"
                )));
            }
            if mode != PortMode::Access
                && c.native_vlan.is_none()
                && c.allowed_vlans.as_ref().is_none_or(|s| s.is_empty())
            {
                return Err(bad(format!(
                    "update_port mode trunk needs native_vlan and/or allowed_vlans (port {port})"
                )));
            }
        }
        Op::VerifyPort => {
            let tagged = c.allowed_vlans.is_some() || c.native_vlan.is_some();
            if tagged && c.mode.is_none() {
                return Err(bad(format!(
                    "verify_port: native_vlan / allowed_vlans need a mode to compare with (port {port})"
                )));
            }
            if c.mode == Some(PortMode::Access)
                && c.allowed_vlans.as_ref().is_some_and(|s| !s.is_empty())
            {
                return Err(bad(format!(
                    "verify_port mode access takes no allowed_vlans (port {port})"
                )));
            }
        }
        _ => {}
    }
    Ok(())
}

fn lag_spec(op: Op, raw: &RawRequest) -> Result<LagSpec, RequestError> {
    let name = raw
        .lag
        .clone()
        .ok_or_else(|| bad(format!("{} needs a lag", op.name())))?;
    validate::port_name("lag", &name)?;
    let members = raw.members.clone().unwrap_or_default();
    if op == Op::UpdateLag && members.is_empty() {
        return Err(bad("update_lag needs members"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for m in &members {
        validate::port_name("member", m)?;
        if !seen.insert(m) {
            return Err(bad(format!("member {} appears twice", Escaped(m))));
        }
    }
    let aggregation = match raw.aggregation_mode.as_deref() {
        None | Some("lacp") | Some("802.3ad") => Aggregation::Lacp,
        Some("static") | Some("balance-xor") => Aggregation::Static,
        Some(other) => {
            return Err(bad(format!(
                "invalid aggregation_mode {}: expected lacp or static",
                Escaped(other)
            )))
        }
    };
    let l2 = if op == Op::UpdateLag && raw.mode.is_some() {
        let c = PortChange {
            port: name.clone(),
            vlan: None,
            mode: raw.mode.as_deref().map(PortMode::parse).transpose()?,
            native_vlan: raw.native_vlan,
            allowed_vlans: raw.allowed_vlans.clone(),
            default_vlan: raw.default_vlan,
            description: raw
                .description
                .as_deref()
                .map(validate::description)
                .transpose()?
                .map(|(d, _)| d),
            mtu: None,
        };
        check_port_change(Op::UpdatePort, &c)?;
        Some(c)
    } else {
        None
    };
    Ok(LagSpec {
        name,
        members,
        aggregation,
        l2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> Result<Request, RequestError> {
        Request::from_raw(RawRequest::from_json(json)?)
    }

    #[test]
    fn attach_minimal() {
        let r = req(r#"{"op":"attach_port","device":"leaf-1","port":"Ethernet1/5","vlan":120,"reason":"CHG-1"}"#)
            .unwrap();
        assert_eq!(r.op, Op::AttachPort);
        assert_eq!(r.ports[0].vlan.map(Vlan::get), Some(120));
    }

    #[test]
    fn refusals() {
        for (json, needle) in [
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":120}"#,
                "needs a reason",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":0,"reason":"r"}"#,
                "out of range",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":"1;reload","reason":"r"}"#,
                "invalid VLAN",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1;x","vlan":5,"reason":"r"}"#,
                "not allowed",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":5,"reason":"r","bogus":1}"#,
                "unknown field",
            ),
            (
                r#"{"op":"attach_port","op":"detach_port"}"#,
                "duplicate field",
            ),
            (r#"{"op":"reload"}"#, "unknown op"),
            (
                r#"{"op":"attach-port","device":"a","port":"E1","vlan":5,"reason":"r"}"#,
                "unknown op",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":5,"reason":"r","mtu":1500}"#,
                "not used by",
            ),
            (
                r#"{"op":"attach_port","device":"a","port":"E1","vlan":5,"reason":"a\nb"}"#,
                "control character",
            ),
            (
                r#"{"op":"update_port","device":"a","port":"E1","mode":"access","reason":"r"}"#,
                "needs native_vlan",
            ),
            (
                r#"{"op":"attach_port","device":"a","ports":["E1","E1"],"vlan":5,"reason":"r"}"#,
                "twice",
            ),
        ] {
            let e = req(json).unwrap_err().to_string();
            assert!(e.contains(needle), "{json}: {e}");
        }
    }

    #[test]
    fn batch_items_override_request_values() {
        let r = req(r#"{"op":"attach_port","device":"a","vlan":5,"reason":"r",
                       "ports":["E1",{"port":"E2","vlan":6,"mode":"trunk"}]}"#)
        .unwrap();
        assert_eq!(r.ports.len(), 2);
        assert_eq!(r.ports[0].vlan.map(Vlan::get), Some(5));
        assert_eq!(r.ports[1].vlan.map(Vlan::get), Some(6));
        assert_eq!(r.ports[1].mode, Some(PortMode::Trunk));
    }

    #[test]
    fn ironic_link_and_nulls() {
        let r = req(
            r#"{"op":"attach_port","local_link_connection":{"switch_id":"aa:bb:cc:dd:ee:01",
                       "port_id":"Ethernet1/5","switch_info":null},"vlan":"vlan-120","reason":"r",
                       "description":null}"#,
        );
        // description is not an attach_port field even when null? null counts as absent.
        let r = r.unwrap();
        assert_eq!(r.ports[0].port, "Ethernet1/5");
        assert_eq!(r.target_reference().as_deref(), Some("aa:bb:cc:dd:ee:01"));
    }
}
