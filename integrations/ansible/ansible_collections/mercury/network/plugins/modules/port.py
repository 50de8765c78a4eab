#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: port
short_description: Put switch ports on a network, take them off, declare or reset them
description:
  - Runs one Mercury request for one or more ports of one device, in one session.
  - O(state=attached) is C(attach_port), O(state=detached) C(detach_port),
    O(state=configured) C(update_port) (the port's whole L2 configuration) and
    O(state=reset) C(reset_port) (back to the idle VLAN).
version_added: "0.1.0"
author: Mercury developers (@mercury-dev)
extends_documentation_fragment:
  - mercury.network.common
  - mercury.network.common.change
options:
  ports:
    description:
      - Port names (the device's own names or abbreviations).
    type: list
    elements: str
    required: true
    aliases: [port]
  state:
    description:
      - What to do with the ports.
    type: str
    choices: [attached, detached, configured, reset]
    default: attached
  vlan:
    description:
      - The VLAN for O(state=attached) and O(state=detached).
    type: int
  mode:
    description:
      - V(access) or V(trunk) for O(state=attached) (default access); V(access), V(trunk) or
        V(hybrid) for O(state=configured) (required there).
    type: str
  native_vlan:
    description:
      - Untagged VLAN (O(state=configured)), or the native VLAN to remove (O(state=reset)).
    type: int
  allowed_vlans:
    description:
      - Tagged VLANs, for example V(100,200-210) (O(state=configured)), or those to remove
        (O(state=reset)).
    type: str
  default_vlan:
    description:
      - The idle VLAN to remove first or restore (default the device's C(default_vlan)).
    type: int
  description:
    description:
      - Port description (O(state=configured)).
    type: str
  mtu:
    description:
      - MTU (O(state=configured)).
    type: int
"""

EXAMPLES = r"""
- name: Put the server's port on the tenant VLAN
  mercury.network.port:
    device: leaf-1
    ports: [Ethernet1/5]
    vlan: 120
    reason: "deploy node 7"

- name: Declare a trunk, on the executor host over SSH
  mercury.network.port:
    executor: mercury@executor.dc1
    switch_id: "00:53:00:00:00:01"
    ports: [Ethernet1/6]
    state: configured
    mode: trunk
    native_vlan: 10
    allowed_vlans: "100-105"
    reason: CHG-1235

- name: Back to the idle VLAN
  mercury.network.port:
    device: leaf-1
    ports: [Ethernet1/5]
    state: reset
"""

RETURN = r"""
changed:
  description: Whether the device's configuration changed (exact with O(verify)).
  returned: always
  type: bool
msg:
  description: What Mercury did, in one sentence (the device's own error line on failure).
  returned: always
  type: str
rc:
  description: Mercury's exit code (0 done, 1 rejected by the device, 64-78 see mercury(1)).
  returned: always
  type: int
commands:
  description: The lines sent (or, in check mode without C(--check), that would be sent).
  returned: always
  type: list
  elements: str
mercury:
  description: Mercury's whole JSON result.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.mercury.network.plugins.module_utils.mercury import (
    COMMON_ARGS,
    meta,
    run,
    target,
)

OPS = dict(attached="attach_port", detached="detach_port", configured="update_port", reset="reset_port")


def main():
    spec = dict(COMMON_ARGS)
    spec.update(
        ports=dict(type="list", elements="str", required=True, aliases=["port"]),
        state=dict(type="str", choices=list(OPS), default="attached"),
        vlan=dict(type="int"),
        mode=dict(type="str"),
        native_vlan=dict(type="int"),
        allowed_vlans=dict(type="str"),
        default_vlan=dict(type="int"),
        description=dict(type="str"),
        mtu=dict(type="int"),
    )
    module = AnsibleModule(
        argument_spec=spec,
        supports_check_mode=True,
        required_one_of=[("device", "switch_id", "switch_info")],
        required_if=[
            ("state", "attached", ["vlan"]),
            ("state", "detached", ["vlan"]),
            ("state", "configured", ["mode"]),
        ],
    )
    p = module.params
    request = dict(op=OPS[p["state"]])
    ports = p["ports"]
    if len(ports) == 1:
        request["port"] = ports[0]
    else:
        request["ports"] = ports
    keys = dict(
        attached=("vlan", "mode"),
        detached=("vlan", "mode"),
        configured=("mode", "native_vlan", "allowed_vlans", "default_vlan", "description", "mtu"),
        reset=("native_vlan", "allowed_vlans", "default_vlan"),
    )[p["state"]]
    for k in keys:
        if p.get(k) is not None:
            request[k] = p[k]
    run(module, meta(p, target(p, request)))


if __name__ == "__main__":
    main()
