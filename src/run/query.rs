//! Queries that never contact a device: `get_switches`, `is_link_valid`,
//! `is_port_supported`. A caller with a scope hears only about its own devices: the list
//! holds only them, and a question about any other device, configured or not, gets the
//! same answer as one about a device that does not exist.

use super::*;

impl Job<'_> {
    pub(super) fn get_switches(&mut self) -> Result<(), Error> {
        let mut list = Vec::new();
        for d in self.config.devices.values() {
            if self.scope.as_ref().is_some_and(|s| !s.allows(d)) {
                continue;
            }
            let platform = self.catalog.get(&d.platform).ok();
            list.push(json!({
                "name": d.name,
                "platform": platform.map(|p| p.name.clone()).unwrap_or_else(|| d.platform.clone()),
                "aliases": d.aliases,
                "mac": d.mac,
                "address": d.address,
                "transport": match d.transport { TransportKind::Ssh => "ssh", TransportKind::Command { .. } => "command", TransportKind::Local => "local" },
                "default_vlan": d.default_vlan,
                "allowed_vlans": d.allowed_vlans.as_ref().map(|s| s.to_string()),
                "manage_vlans": d.manage_vlans,
                "network_types": platform.map(|p| p.network_types.clone()).unwrap_or_default(),
            }));
        }
        self.report.msg = format!("{} devices", list.len());
        self.report.data = json!({ "switches": list });
        Ok(())
    }

    pub(super) fn is_link_valid(&mut self, req: &Request) -> Result<(), Error> {
        let mut req = req.clone();
        let mut found = json!({});
        let verdict =
            match resolve::resolve(&mut req, self.config, self.catalog, self.scope.as_ref()) {
                Ok((device, platform)) => {
                    self.report.device = Some(device.name.clone());
                    self.report.platform = Some(platform.name.clone());
                    // What the link resolved to, canonically (so a caller can compare two
                    // links: Ironic's DPU child node's switch port with the card's uplink).
                    found["ports"] = json!(req.port_names());
                    if let Some(up) = &device.uplink {
                        let port = self
                            .config
                            .devices
                            .get(&up.device)
                            .and_then(|sw| self.catalog.get(&sw.platform).ok())
                            .and_then(|p| p.canonical_port(&up.port).ok())
                            .unwrap_or_else(|| up.port.clone());
                        found["uplink"] = json!({"device": up.device, "port": port});
                    }
                    req.port_names()
                        .iter()
                        .try_for_each(|p| policy::check_port(device, platform, p))
                        .map_err(|e| e.to_string())
                }
                Err(resolve::ResolveError::Request(e) | resolve::ResolveError::Unknown(e)) => {
                    Err(e.0)
                }
                Err(resolve::ResolveError::NotYours(d)) => Err(d.to_string()),
                Err(e) => return Err(e.into()),
            };
        let valid = verdict.is_ok();
        self.report.msg = match &verdict {
            Ok(()) => "link is valid".into(),
            Err(why) => format!("link is not valid: {why}"),
        };
        let mut data = json!({ "valid": valid, "reason": verdict.err() });
        if valid {
            data["device"] = json!(self.report.device);
            data["ports"] = found["ports"].take();
            data["uplink"] = found["uplink"].take();
        }
        self.report.data = data;
        Ok(())
    }

    pub(super) fn is_port_supported(&mut self, req: &Request) -> Result<(), Error> {
        let vnic = req.kind.vnic_type.as_deref().unwrap_or("baremetal");
        let smartnic = req.kind.is_smartnic.unwrap_or(false);
        let platform = match req.target_reference() {
            Some(_) => {
                let mut req = req.clone();
                let (device, platform) =
                    resolve::resolve(&mut req, self.config, self.catalog, self.scope.as_ref())?;
                self.report.device = Some(device.name.clone());
                self.report.platform = Some(platform.name.clone());
                Some(platform)
            }
            None => None,
        };
        let (supported, why) = match vnic {
            "baremetal" if smartnic => (false, "a SmartNIC port has vnic_type smart-nic"),
            "baremetal" => (
                platform.is_none_or(|p| p.network_types.iter().any(|t| t == "vlan")),
                "switch port",
            ),
            "smart-nic" if !smartnic => (false, "vnic_type smart-nic needs is_smartnic"),
            "smart-nic" => (
                platform.is_none_or(|p| p.supports("plug")),
                "OVS representor on a DPU",
            ),
            _ => (false, "only baremetal and smart-nic ports are handled"),
        };
        self.report.msg = format!(
            "{vnic} port {}supported: {why}",
            if supported { "" } else { "not " }
        );
        self.report.data = json!({ "supported": supported });
        Ok(())
    }
}
