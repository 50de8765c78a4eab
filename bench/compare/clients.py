"""The Python clients of the comparison benchmark (bench/compare/run): netmiko's
send_config_set and networking-generic-switch's plug_port_to_network, each putting one port
into VLAN 120 and saving (IOS/EOS) or committing (Junos) on a mercury-sim behind sshd.

    clients.py serve KIND DEVICE_TYPE SSH_PORT KEY_FILE IFACE
        Imports and sets up once (as a long-lived neutron-server would), then for every
        line on stdin performs one operation and prints its wall time in ms (or
        "error: ..."). This is the warm, in-process cost of one change.
    clients.py once KIND DEVICE_TYPE SSH_PORT KEY_FILE IFACE
        One operation in a fresh interpreter (imports included), for the cold process
        cost and peak RSS under /usr/bin/time.

KIND is "netmiko" or "ngs"; DEVICE_TYPE is netmiko's name (cisco_ios, arista_eos,
juniper_junos). Each operation opens its own SSH connection (NGS's default,
ngs_ssh_reuse_connection = False), as Mercury does.
"""

import sys
import time
import warnings


def netmiko_client(device_type, port, key_file, iface):
    from netmiko import ConnectHandler

    junos = device_type == "juniper_junos"
    if junos:
        lines = [
            f"set interfaces {iface} unit 0 family ethernet-switching interface-mode access",
            f"delete interfaces {iface} unit 0 family ethernet-switching vlan members",
            f"set interfaces {iface} unit 0 family ethernet-switching vlan members 120",
        ]
    else:
        lines = [f"interface {iface}", "switchport mode access", "switchport access vlan 120"]

    def op():
        conn = ConnectHandler(
            device_type=device_type,
            host="127.0.0.1",
            port=int(port),
            username="root",
            key_file=key_file,
            use_keys=True,
            allow_agent=False,
            system_host_keys=False,
        )
        try:
            conn.send_config_set(lines, exit_config_mode=not junos)
            if junos:
                conn.commit()
                conn.exit_config_mode()
            else:
                conn.save_config()
        finally:
            conn.disconnect()

    return op


def ngs_client(device_type, port, key_file, iface):
    warnings.simplefilter("ignore")
    from oslo_config import cfg
    from networking_generic_switch import config as _ngs_config  # noqa: F401 (options)
    from networking_generic_switch import devices

    cfg.CONF([], project="mercury-bench")
    dev = devices.device_manager(
        {
            # NGS's entry point names: netmiko_cisco_ios, netmiko_arista_eos, netmiko_juniper.
            "device_type": "netmiko_" + device_type.replace("juniper_junos", "juniper"),
            "ip": "127.0.0.1",
            "port": str(port),
            "username": "root",
            "key_file": key_file,
            "use_keys": "True",
            "allow_agent": "False",
            "system_host_keys": "False",
        },
        "leaf",
    )

    def op():
        dev.plug_port_to_network(iface, 120)

    return op


def make(kind, *args):
    return {"netmiko": netmiko_client, "ngs": ngs_client}[kind](*args)


def main():
    mode, kind = sys.argv[1], sys.argv[2]
    op = make(kind, *sys.argv[3:7])
    if mode == "once":
        op()
        return
    for _ in sys.stdin:
        t0 = time.perf_counter()
        try:
            op()
            print(f"{(time.perf_counter() - t0) * 1000:.3f}", flush=True)
        except Exception as e:  # the benchmark counts failures, it does not stop
            print(f"error: {type(e).__name__}: {e}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
