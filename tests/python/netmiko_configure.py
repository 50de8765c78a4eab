"""Configures one mercury-sim device through a real sshd with netmiko, the way a network
engineer's script (or networking-generic-switch) would: connect, optionally `enable`,
`send_config_set`, save (IOS/EOS) or commit (Junos), one show command, disconnect.

Usage: netmiko_configure.py DEVICE_TYPE PORT KEY_FILE IFACE VLAN [ENABLE_SECRET]

Prints one JSON object (the outputs netmiko returned, the prompts it found) on stdout and
exits 0; any netmiko exception is a non-zero exit with the traceback on stderr. The Rust
test (tests/netmiko.rs) asserts the simulator's state afterwards.
"""

import json
import sys

from netmiko import ConnectHandler


def lines_for(device_type, iface, vlan):
    """The configuration lines, in each vendor's syntax (NGS's templates as facts)."""
    if device_type == "juniper_junos":
        return [
            f"set vlans tenant-{vlan} vlan-id {vlan}",
            f"set interfaces {iface} unit 0 family ethernet-switching interface-mode access",
            f"delete interfaces {iface} unit 0 family ethernet-switching vlan members",
            f"set interfaces {iface} unit 0 family ethernet-switching vlan members {vlan}",
        ]
    return [
        f"vlan {vlan}",
        f"name tenant-{vlan}",
        f"interface {iface}",
        "switchport mode access",
        f"switchport access vlan {vlan}",
    ]


def main():
    device_type, port, key_file, iface, vlan = sys.argv[1:6]
    secret = sys.argv[6] if len(sys.argv) > 6 else ""
    conn = ConnectHandler(
        device_type=device_type,
        host="127.0.0.1",
        port=int(port),
        username="root",
        key_file=key_file,
        use_keys=True,
        allow_agent=False,
        system_host_keys=False,
        secret=secret,
        conn_timeout=20,
        auth_timeout=20,
        banner_timeout=20,
    )
    out = {"device_type": device_type, "base_prompt": conn.base_prompt}
    if secret:
        conn.enable()
        out["enable_prompt"] = conn.find_prompt()
    junos = device_type == "juniper_junos"
    # Junos: stay in the candidate and commit it, as NGS's Juniper driver does.
    out["config"] = conn.send_config_set(
        lines_for(device_type, iface, vlan), exit_config_mode=not junos
    )
    if junos:
        out["commit"] = conn.commit()
        conn.exit_config_mode()
        out["show"] = conn.send_command("show vlans")
    else:
        out["save"] = conn.save_config()
        out["show"] = conn.send_command("show vlan brief")
    out["final_prompt"] = conn.find_prompt()
    conn.disconnect()
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
