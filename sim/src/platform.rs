//! The platform table — the one place that says what each platform is: Mercury's
//! name and its aliases, the CLI implementation (family, and for Linux shells
//! the tool) that plays it, the login user and hostname, the inventory as
//! shipped and the default VLAN — and the factory that builds a platform's CLI
//! and says how it refuses a session over the limit. Adding a platform is one
//! row in `platforms!` (plus, inside its family's file, whatever the family
//! spells per platform: prompts, interface names, error strings).

use crate::cli::{Cli, Env};
use crate::model::{Config, DeviceState, Port, Sessions, Vlan};
use crate::shell::Tool;

/// The CLI implementation that plays a platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IOS-like keyword CLI (`ios.rs`).
    Ios,
    /// Junos (`junos.rs`).
    Junos,
    /// VRP / Comware (`vrp.rs`).
    Vrp,
    /// A Linux shell with the platform's configuration tool (`shell/`).
    Shell(Tool),
    /// Nokia SR Linux (`srl.rs`).
    Srl,
    /// Pluribus Netvisor (`netvisor.rs`).
    Netvisor,
}

/// A run of ports as shipped: `prefix` + `first`, `first + step`, ... `last`.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    /// Name before the number.
    pub prefix: &'static str,
    /// First number.
    pub first: u32,
    /// Last number.
    pub last: u32,
    /// Step between numbers.
    pub step: u32,
}

/// `prefix` + `first..=last`.
const fn ports(prefix: &'static str, first: u32, last: u32) -> Ports {
    Ports {
        prefix,
        first,
        last,
        step: 1,
    }
}

/// One platform's row.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Mercury's name.
    pub name: &'static str,
    /// Other names accepted (NGS / netmiko spellings); `netmiko_` prefixes are
    /// stripped before matching.
    pub aliases: &'static [&'static str],
    /// The CLI implementation.
    pub family: Family,
    /// Default login user.
    pub user: &'static str,
    /// Default hostname.
    pub hostname: &'static str,
    /// Inventory as shipped.
    pub ports: &'static [Ports],
    /// Whether shipped ports are administratively up.
    pub ports_up: bool,
    /// Name of VLAN 1 as shipped; None when the platform has no VLAN 1.
    pub vlan1: Option<&'static str>,
}

/// What most rows share.
const ROW: Spec = Spec {
    name: "",
    aliases: &[],
    family: Family::Ios,
    user: "admin",
    hostname: "leaf1",
    ports: &[],
    ports_up: true,
    vlan1: Some("default"),
};

/// The table: `Variant => Spec`, in `mercury-sim platforms` order. Generates
/// the `Platform` enum, `Platform::ALL` and `Platform::spec`.
macro_rules! platforms {
    ($($variant:ident => $spec:expr,)*) => {
        /// A supported platform.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub enum Platform {
            $($variant,)*
        }

        impl Platform {
            /// Every platform, in `mercury-sim platforms` order.
            pub const ALL: &'static [Platform] = &[$(Platform::$variant,)*];

            /// This platform's row of the table.
            pub fn spec(self) -> &'static Spec {
                match self {
                    $(Platform::$variant => {
                        const SPEC: Spec = $spec;
                        &SPEC
                    })*
                }
            }
        }
    };
}

platforms! {
    CiscoIos => Spec {
        name: "cisco_ios",
        aliases: &["cisco_xe", "ios"],
        ports: &[ports("GigabitEthernet1/0/", 1, 48), ports("TenGigabitEthernet1/1/", 1, 4)],
        ..ROW
    },
    CiscoNxos => Spec {
        name: "cisco_nxos",
        aliases: &["nxos"],
        ports: &[ports("Ethernet1/", 1, 48)],
        ports_up: false,
        ..ROW
    },
    CiscoS300 => Spec {
        name: "cisco_s300",
        ports: &[ports("GigabitEthernet1/0/", 1, 28)],
        ..ROW
    },
    AristaEos => Spec {
        name: "arista_eos",
        aliases: &["eos"],
        ports: &[ports("Ethernet", 1, 48)],
        ..ROW
    },
    Juniper => Spec {
        name: "juniper",
        aliases: &["junos", "juniper_junos"],
        family: Family::Junos,
        ports: &[ports("ge-0/0/", 0, 47), ports("xe-0/1/", 0, 3)],
        ..ROW
    },
    DellOs10 => Spec {
        name: "dell_os10",
        ports: &[ports("ethernet1/1/", 1, 32)],
        ..ROW
    },
    DellForce10 => Spec {
        name: "dell_force10",
        aliases: &["dell_os9", "dell_nos"],
        ports: &[ports("TenGigabitEthernet1/", 1, 48)],
        ports_up: false,
        vlan1: Some(""),
        ..ROW
    },
    DellPowerconnect => Spec {
        name: "dell_powerconnect",
        ports: &[ports("Gi1/0/", 1, 24)],
        ..ROW
    },
    Cumulus => Spec {
        name: "cumulus",
        aliases: &["nclu"],
        family: Family::Shell(Tool::Nclu),
        ..CUMULUS
    },
    CumulusNvue => Spec {
        name: "cumulus_nvue",
        aliases: &["nvue"],
        family: Family::Shell(Tool::Nvue),
        ..CUMULUS
    },
    Sonic => Spec {
        name: "sonic",
        ..SONIC
    },
    DellEnterpriseSonic => Spec {
        name: "dell_enterprise_sonic",
        ..SONIC
    },
    Huawei => Spec {
        name: "huawei",
        family: Family::Vrp,
        ports: &[ports("GigabitEthernet0/0/", 1, 24), ports("XGigabitEthernet0/0/", 1, 4)],
        vlan1: Some(""),
        ..ROW
    },
    HuaweiVrpv8 => Spec {
        name: "huawei_vrpv8",
        family: Family::Vrp,
        ports: &[ports("GE1/0/", 0, 47)],
        vlan1: Some(""),
        ..ROW
    },
    HpeComware => Spec {
        name: "hpe_comware",
        aliases: &["comware", "hp_comware"],
        family: Family::Vrp,
        ports: &[ports("GigabitEthernet1/0/", 1, 48), ports("Ten-GigabitEthernet1/0/", 49, 52)],
        vlan1: Some(""),
        ..ROW
    },
    BrocadeFastiron => Spec {
        name: "brocade_fastiron",
        ports: &[ports("ethernet1/1/", 1, 48)],
        vlan1: Some("DEFAULT-VLAN"),
        ..ROW
    },
    Ruijie => Spec {
        name: "ruijie",
        aliases: &["ruijie_os"],
        ports: &[ports("GigabitEthernet0/", 1, 48), ports("TenGigabitEthernet0/", 49, 52)],
        ..ROW
    },
    MellanoxMlnxos => Spec {
        name: "mellanox_mlnxos",
        aliases: &["onyx", "mellanox"],
        ports: &[ports("Eth1/", 1, 32)],
        ..ROW
    },
    SupermicroSmis => Spec {
        name: "supermicro_smis",
        aliases: &["smis", "supermicro"],
        ports: &[ports("Gi0/", 1, 24), ports("Ex0/", 25, 28)],
        ..ROW
    },
    NokiaSrl => Spec {
        name: "nokia_srl",
        aliases: &["srl", "nokia_srlinux"],
        family: Family::Srl,
        ports: &[ports("ethernet-1/", 1, 32)],
        vlan1: None,
        ..ROW
    },
    Pluribus => Spec {
        name: "pluribus",
        family: Family::Netvisor,
        user: "network-admin",
        ports: &[ports("", 1, 48)],
        vlan1: Some(""),
        ..ROW
    },
    ArubaAoscx => Spec {
        name: "aruba_aoscx",
        aliases: &["aoscx", "aruba_os"],
        ports: &[ports("1/1/", 1, 48)],
        ports_up: false,
        vlan1: Some("DEFAULT_VLAN_1"),
        ..ROW
    },
    OvsLinux => Spec {
        name: "ovs_linux",
        aliases: &["ovs"],
        family: Family::Shell(Tool::Ovs),
        user: "root",
        ports: &[ports("eth", 1, 8)],
        vlan1: None,
        ..ROW
    },
}

/// A Cumulus Linux switch (NVUE or NCLU).
const CUMULUS: Spec = Spec {
    user: "cumulus",
    ports: &[ports("swp", 1, 52)],
    ports_up: false,
    vlan1: Some(""),
    ..ROW
};

/// A SONiC switch; its front panel is `Ethernet0`, `Ethernet4`, ... `Ethernet124`.
const SONIC: Spec = Spec {
    family: Family::Shell(Tool::Sonic),
    hostname: "sonic",
    ports: &[Ports {
        prefix: "Ethernet",
        first: 0,
        last: 124,
        step: 4,
    }],
    vlan1: Some(""),
    ..ROW
};

impl Platform {
    /// Mercury's name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Look up by name or alias; NGS-style `netmiko_` prefixes accepted.
    pub fn from_name(s: &str) -> Option<Platform> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_prefix("netmiko_").unwrap_or(&s);
        Self::ALL.iter().copied().find(|p| {
            let spec = p.spec();
            spec.name == s || spec.aliases.contains(&s)
        })
    }

    /// Default login user.
    pub fn default_user(self) -> &'static str {
        self.spec().user
    }

    /// Default hostname.
    pub fn default_hostname(self) -> &'static str {
        self.spec().hostname
    }

    /// Ports as shipped: (canonical names, admin_up default).
    pub fn inventory(self) -> (Vec<String>, bool) {
        let spec = self.spec();
        let names = spec
            .ports
            .iter()
            .flat_map(|r| {
                (r.first..=r.last)
                    .step_by(r.step as usize)
                    .map(move |i| format!("{}{i}", r.prefix))
            })
            .collect();
        (names, spec.ports_up)
    }

    /// A fresh device: default inventory, VLAN 1 where the vendor has it,
    /// saved = running.
    pub fn default_state(self) -> DeviceState {
        let spec = self.spec();
        let mut cfg = Config::default();
        let (ports, up) = self.inventory();
        for p in ports {
            cfg.ports.insert(p, Port::new(up));
        }
        if let Some(name) = spec.vlan1 {
            cfg.vlans.insert("1".into(), Vlan { name: name.into() });
        }
        if spec.family == Family::Shell(Tool::Ovs) {
            crate::shell::ovs::as_shipped(&mut cfg);
        }
        DeviceState {
            platform: spec.name.to_string(),
            hostname: spec.hostname.to_string(),
            saved: cfg.clone(),
            running: cfg,
            pending: None,
            sessions: Sessions::default(),
            unmodelled: Vec::new(),
        }
    }

    /// A fresh device that also has `vlans`, named as the vendor names a VLAN it creates
    /// (IOS `VLAN0010`, Junos `vlan10` as Mercury names it, SR Linux a `mac-vrf-10`
    /// network-instance); OVS hosts have no VLAN objects.
    pub fn shipped_with(self, vlans: &[u16]) -> DeviceState {
        let mut st = self.default_state();
        let family = self.spec().family;
        if vlans.is_empty() || family == Family::Shell(Tool::Ovs) {
            return st;
        }
        let cfg = &mut st.running;
        for v in vlans {
            cfg.add_vlan(*v);
            cfg.vlan_mut(*v).name = match (family, self) {
                (Family::Junos, _) => format!("vlan{v}"),
                (Family::Srl, _) => format!("mac-vrf-{v}"),
                (Family::Ios, Platform::CiscoIos) => format!("VLAN{v:04}"),
                _ => String::new(),
            };
        }
        if family == Family::Srl {
            let statements: Vec<Vec<String>> = vlans
                .iter()
                .map(|v| {
                    vec![
                        "network-instance".into(),
                        format!("mac-vrf-{v}"),
                        "type".into(),
                        "mac-vrf".into(),
                    ]
                })
                .collect();
            cfg.extra
                .insert("srl".into(), serde_json::json!(statements));
        }
        st.saved = st.running.clone();
        st
    }

    /// This platform's CLI for one session.
    pub fn new_cli(self, env: &Env) -> Box<dyn Cli> {
        match self.spec().family {
            Family::Ios => Box::new(crate::ios::Ios::new(env)),
            Family::Junos => Box::new(crate::junos::Junos::new(env)),
            Family::Vrp => Box::new(crate::vrp::Vrp::new(env)),
            Family::Shell(tool) => Box::new(crate::shell::Shell::new(env, tool)),
            Family::Srl => Box::new(crate::srl::Srl::new(env)),
            Family::Netvisor => Box::new(crate::netvisor::Netvisor::new(env)),
        }
    }
}

/// Refuse a session over the `max-sessions` limit, the way the device (or its
/// sshd) says it, on stdout and stderr.
pub fn refuse_session(p: Platform, active: u32) {
    let msg = match p.spec().family {
        Family::Junos => {
            format!("error: maximum number of sessions ({active}) reached; try again later")
        }
        Family::Vrp => {
            format!("Error: The number of online users has reached the upper limit ({active}).")
        }
        Family::Shell(_) | Family::Srl => {
            format!("Too many logins for this user ({active} active); connection closed.")
        }
        Family::Ios | Family::Netvisor => {
            format!("% Maximum number of sessions ({active}) reached. Connection refused.")
        }
    };
    println!("{msg}");
    eprintln!("{msg}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(Platform::ALL.len(), 23);
        for p in Platform::ALL {
            assert_eq!(Platform::from_name(p.name()), Some(*p));
            for a in p.spec().aliases {
                assert_eq!(Platform::from_name(a), Some(*p));
            }
        }
        assert_eq!(
            Platform::from_name(" NETMIKO_Cisco_XE "),
            Some(Platform::CiscoIos)
        );
        assert_eq!(Platform::from_name("nope"), None);
    }

    #[test]
    fn sonic_ports_step_by_four() {
        let (ports, up) = Platform::Sonic.inventory();
        assert_eq!(ports.len(), 32);
        assert_eq!(ports[1], "Ethernet4");
        assert_eq!(ports.last().map(String::as_str), Some("Ethernet124"));
        assert!(up);
    }
}
