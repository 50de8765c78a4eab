#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: port_info
short_description: Read switch ports' L2 state, or the device inventory
description:
  - With O(ports), reads the ports back with the platform's show commands (Mercury's
    C(verify_port) without expectations) and returns each port's normalised state. Changes
    nothing.
  - Without O(ports), returns Mercury's C(get_switches) inventory (never secrets).
version_added: "0.1.0"
author: Mercury developers (@mercury-dev)
extends_documentation_fragment:
  - mercury.network.common
options:
  ports:
    description:
      - Ports to read.
    type: list
    elements: str
    default: []
    aliases: [port]
"""

EXAMPLES = r"""
- name: Read a port
  mercury.network.port_info:
    device: leaf-1
    ports: [Ethernet1/5]
  register: info

- name: It is an access port in VLAN 120
  ansible.builtin.assert:
    that:
      - info.ports["Ethernet1/5"].mode == "access"
      - info.ports["Ethernet1/5"].access_vlan == 120
"""

RETURN = r"""
ports:
  description: Each port's state as read (mode, access_vlan, native_vlan, allowed_vlans,
    description, mtu, admin_up, lag), by the port name given.
  returned: when O(ports) is given
  type: dict
switches:
  description: The configured devices (name, platform, aliases, mac, address, transport,
    default_vlan, allowed_vlans, manage_vlans, network_types).
  returned: when O(ports) is not given
  type: list
  elements: dict
msg:
  description: What Mercury did.
  returned: always
  type: str
rc:
  description: Mercury's exit code.
  returned: always
  type: int
mercury:
  description: Mercury's whole JSON result.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.mercury.network.plugins.module_utils.mercury import (
    READ_ARGS,
    call,
    target,
)


def main():
    spec = dict(READ_ARGS)
    spec.update(ports=dict(type="list", elements="str", default=[], aliases=["port"]))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    p = module.params
    if p["ports"]:
        if not (p.get("device") or p.get("switch_id") or p.get("switch_info")):
            module.fail_json(msg="ports needs one of device, switch_id, switch_info")
        request = dict(op="verify_port")
        if len(p["ports"]) == 1:
            request["port"] = p["ports"][0]
        else:
            request["ports"] = p["ports"]
        target(p, request)
    else:
        request = dict(op="get_switches")
    if p.get("request_id"):
        request["request_id"] = p["request_id"]
    result = call(module, request, [])
    ret = dict(changed=False, msg=result.get("msg", ""), rc=result.get("rc", 70), mercury=result)
    data = result.get("data") or {}
    if p["ports"]:
        read = data.get("ports") or []
        ret["ports"] = dict(
            (given, r.get("state")) for given, r in zip(p["ports"], read)
        )
    else:
        ret["switches"] = data.get("switches") or []
    if result.get("rc", 70) != 0:
        module.fail_json(**ret)
    module.exit_json(**ret)


if __name__ == "__main__":
    main()
