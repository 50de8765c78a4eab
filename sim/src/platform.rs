//! The platform list (Mercury's names), each platform's family, default
//! inventory and login user, and the factory for its CLI.

use crate::cli::{Cli, Env};
use crate::model::{Config, DeviceState, Port, Sessions, Vlan};

/// A supported platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Platform {
    CiscoIos,
    CiscoNxos,
    CiscoS300,
    AristaEos,
    Juniper,
    DellOs10,
    DellForce10,
    DellPowerconnect,
    Cumulus,
    CumulusNvue,
    Sonic,
    DellEnterpriseSonic,
    Huawei,
    HuaweiVrpv8,
    HpeComware,
    BrocadeFastiron,
    Ruijie,
    MellanoxMlnxos,
    SupermicroSmis,
    NokiaSrl,
    Pluribus,
    ArubaAoscx,
    OvsLinux,
}

use Platform::*;

impl Platform {
    /// Every platform, in `mercury-sim platforms` order.
    pub const ALL: [Platform; 23] = [
        CiscoIos,
        CiscoNxos,
        CiscoS300,
        AristaEos,
        Juniper,
        DellOs10,
        DellForce10,
        DellPowerconnect,
        Cumulus,
        CumulusNvue,
        Sonic,
        DellEnterpriseSonic,
        Huawei,
        HuaweiVrpv8,
        HpeComware,
        BrocadeFastiron,
        Ruijie,
        MellanoxMlnxos,
        SupermicroSmis,
        NokiaSrl,
        Pluribus,
        ArubaAoscx,
        OvsLinux,
    ];

    /// Mercury's name.
    pub fn name(self) -> &'static str {
        match self {
            CiscoIos => "cisco_ios",
            CiscoNxos => "cisco_nxos",
            CiscoS300 => "cisco_s300",
            AristaEos => "arista_eos",
            Juniper => "juniper",
            DellOs10 => "dell_os10",
            DellForce10 => "dell_force10",
            DellPowerconnect => "dell_powerconnect",
            Cumulus => "cumulus",
            CumulusNvue => "cumulus_nvue",
            Sonic => "sonic",
            DellEnterpriseSonic => "dell_enterprise_sonic",
            Huawei => "huawei",
            HuaweiVrpv8 => "huawei_vrpv8",
            HpeComware => "hpe_comware",
            BrocadeFastiron => "brocade_fastiron",
            Ruijie => "ruijie",
            MellanoxMlnxos => "mellanox_mlnxos",
            SupermicroSmis => "supermicro_smis",
            NokiaSrl => "nokia_srl",
            Pluribus => "pluribus",
            ArubaAoscx => "aruba_aoscx",
            OvsLinux => "ovs_linux",
        }
    }

    /// Look up by name; NGS-style `netmiko_` prefixes and a few aliases accepted.
    pub fn from_name(s: &str) -> Option<Platform> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_prefix("netmiko_").unwrap_or(&s);
        let alias = match s {
            "cisco_xe" | "ios" => "cisco_ios",
            "nxos" => "cisco_nxos",
            "eos" => "arista_eos",
            "junos" | "juniper_junos" => "juniper",
            "dell_os9" | "dell_nos" => "dell_force10",
            "nvue" => "cumulus_nvue",
            "nclu" => "cumulus",
            "ovs" => "ovs_linux",
            "onyx" | "mellanox" => "mellanox_mlnxos",
            "srl" | "nokia_srlinux" => "nokia_srl",
            "comware" | "hp_comware" => "hpe_comware",
            "aoscx" | "aruba_os" => "aruba_aoscx",
            "smis" | "supermicro" => "supermicro_smis",
            "ruijie_os" => "ruijie",
            other => other,
        };
        Self::ALL.into_iter().find(|p| p.name() == alias)
    }

    /// Default login user.
    pub fn default_user(self) -> &'static str {
        match self {
            Cumulus | CumulusNvue => "cumulus",
            Pluribus => "network-admin",
            OvsLinux => "root",
            _ => "admin",
        }
    }

    /// Default hostname.
    pub fn default_hostname(self) -> &'static str {
        match self {
            Sonic | DellEnterpriseSonic => "sonic",
            _ => "leaf1",
        }
    }

    /// Ports as shipped: (canonical names, admin_up default).
    pub fn inventory(self) -> (Vec<String>, bool) {
        fn r(pre: &'static str, a: u32, b: u32) -> impl Iterator<Item = String> {
            (a..=b).map(move |i| format!("{pre}{i}"))
        }
        let v: Vec<String> = match self {
            CiscoIos => r("GigabitEthernet1/0/", 1, 48)
                .chain(r("TenGigabitEthernet1/1/", 1, 4))
                .collect(),
            CiscoS300 => r("GigabitEthernet1/0/", 1, 28).collect(),
            CiscoNxos => r("Ethernet1/", 1, 48).collect(),
            AristaEos => r("Ethernet", 1, 48).collect(),
            Juniper => r("ge-0/0/", 0, 47).chain(r("xe-0/1/", 0, 3)).collect(),
            DellOs10 => r("ethernet1/1/", 1, 32).collect(),
            DellForce10 => r("TenGigabitEthernet1/", 1, 48).collect(),
            DellPowerconnect => r("Gi1/0/", 1, 24).collect(),
            Cumulus | CumulusNvue => r("swp", 1, 52).collect(),
            Sonic | DellEnterpriseSonic => (0..32).map(|i| format!("Ethernet{}", i * 4)).collect(),
            Huawei => r("GigabitEthernet0/0/", 1, 24)
                .chain(r("XGigabitEthernet0/0/", 1, 4))
                .collect(),
            HuaweiVrpv8 => r("GE1/0/", 0, 47).collect(),
            HpeComware => r("GigabitEthernet1/0/", 1, 48)
                .chain(r("Ten-GigabitEthernet1/0/", 49, 52))
                .collect(),
            BrocadeFastiron => r("ethernet1/1/", 1, 48).collect(),
            Ruijie => r("GigabitEthernet0/", 1, 48)
                .chain(r("TenGigabitEthernet0/", 49, 52))
                .collect(),
            MellanoxMlnxos => r("Eth1/", 1, 32).collect(),
            SupermicroSmis => r("Gi0/", 1, 24).chain(r("Ex0/", 25, 28)).collect(),
            NokiaSrl => r("ethernet-1/", 1, 32).collect(),
            Pluribus => r("", 1, 48).collect(),
            ArubaAoscx => r("1/1/", 1, 48).collect(),
            OvsLinux => r("eth", 1, 8).collect(),
        };
        let up = !matches!(
            self,
            CiscoNxos | DellForce10 | Cumulus | CumulusNvue | ArubaAoscx
        );
        (v, up)
    }

    /// A fresh device: default inventory, VLAN 1 where the vendor has it,
    /// saved = running.
    pub fn default_state(self) -> DeviceState {
        let mut cfg = Config::default();
        let (ports, up) = self.inventory();
        for p in ports {
            let mut port = Port::new(up);
            if self == OvsLinux {
                port.ovs = Some(crate::model::OvsPort {
                    bridge: "br0".into(),
                    ..Default::default()
                });
            }
            cfg.ports.insert(p, port);
        }
        let vlan1 = match self {
            NokiaSrl | OvsLinux => None,
            Juniper => Some("default"),
            ArubaAoscx => Some("DEFAULT_VLAN_1"),
            BrocadeFastiron => Some("DEFAULT-VLAN"),
            Huawei | HuaweiVrpv8 | HpeComware | Cumulus | CumulusNvue | Sonic
            | DellEnterpriseSonic | Pluribus | DellForce10 => Some(""),
            _ => Some("default"),
        };
        if let Some(name) = vlan1 {
            cfg.vlans.insert("1".into(), Vlan { name: name.into() });
        }
        if self == OvsLinux {
            crate::shell::ovs_default_extra(&mut cfg);
        }
        DeviceState {
            platform: self.name().to_string(),
            hostname: self.default_hostname().to_string(),
            saved: cfg.clone(),
            running: cfg,
            pending: None,
            sessions: Sessions::default(),
            unmodelled: Vec::new(),
        }
    }

    /// This platform's CLI for one session.
    pub fn new_cli(self, env: &Env) -> Box<dyn Cli> {
        match self {
            Juniper => Box::new(crate::junos::Junos::new(env)),
            Huawei | HuaweiVrpv8 | HpeComware => Box::new(crate::vrp::Vrp::new(env)),
            Cumulus | CumulusNvue | Sonic | DellEnterpriseSonic | OvsLinux => {
                Box::new(crate::shell::Shell::new(env))
            }
            NokiaSrl => Box::new(crate::srl::Srl::new(env)),
            Pluribus => Box::new(crate::netvisor::Netvisor::new(env)),
            _ => Box::new(crate::ios::Ios::new(env)),
        }
    }
}

/// Refuse a session over the `max-sessions` limit, the way the device (or its
/// sshd) says it, on stdout and stderr.
pub fn refuse_session(p: Platform, active: u32) {
    let msg = match p {
        Juniper => format!("error: maximum number of sessions ({active}) reached; try again later"),
        Huawei | HuaweiVrpv8 | HpeComware => {
            format!("Error: The number of online users has reached the upper limit ({active}).")
        }
        Cumulus | CumulusNvue | Sonic | DellEnterpriseSonic | OvsLinux | NokiaSrl => {
            format!("Too many logins for this user ({active} active); connection closed.")
        }
        _ => format!("% Maximum number of sessions ({active}) reached. Connection refused."),
    };
    println!("{msg}");
    eprintln!("{msg}");
}
