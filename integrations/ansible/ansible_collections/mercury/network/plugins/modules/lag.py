#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: lag
short_description: Create, update or delete a LAG (port-channel, bond)
description:
  - O(state=present) is Mercury's C(update_lag) (the LAG with these members, LACP or
    static, and its L2 settings), O(state=absent) C(delete_lag).
version_added: "0.1.0"
author: Mercury developers (@mercury-dev)
extends_documentation_fragment:
  - mercury.network.common
  - mercury.network.common.change
options:
  lag:
    description:
      - LAG number or the platform's LAG interface name (V(Port-channel10), V(ae1), V(bond3)).
    type: str
    required: true
  members:
    description:
      - Member ports (required for O(state=present); with O(state=absent) the members to release).
    type: list
    elements: str
    default: []
  aggregation_mode:
    description:
      - V(lacp) (default) or V(static).
    type: str
  mode:
    description:
      - L2 mode of the LAG, V(access) or V(trunk).
    type: str
  native_vlan:
    description:
      - Untagged VLAN.
    type: int
  allowed_vlans:
    description:
      - Tagged VLANs, for example V(100,200-210).
    type: str
  default_vlan:
    description:
      - The idle VLAN to remove first.
    type: int
  description:
    description:
      - Description.
    type: str
  state:
    description:
      - Whether the LAG should exist.
    type: str
    choices: [present, absent]
    default: present
"""

EXAMPLES = r"""
- name: An LACP port-channel of two ports in VLAN 120
  mercury.network.lag:
    device: leaf-1
    lag: "10"
    members: [Ethernet1/7, Ethernet1/8]
    mode: access
    native_vlan: 120
    reason: CHG-7
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
  description: The lines sent.
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


def main():
    spec = dict(COMMON_ARGS)
    spec.update(
        lag=dict(type="str", required=True),
        members=dict(type="list", elements="str", default=[]),
        aggregation_mode=dict(type="str"),
        mode=dict(type="str"),
        native_vlan=dict(type="int"),
        allowed_vlans=dict(type="str"),
        default_vlan=dict(type="int"),
        description=dict(type="str"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    module = AnsibleModule(
        argument_spec=spec,
        supports_check_mode=True,
        required_one_of=[("device", "switch_id", "switch_info")],
    )
    p = module.params
    if p["state"] == "present" and not p["members"]:
        module.fail_json(msg="state=present needs members")
    request = dict(op="update_lag" if p["state"] == "present" else "delete_lag", lag=p["lag"])
    if p["members"]:
        request["members"] = p["members"]
    if p["state"] == "present":
        for k in ("aggregation_mode", "mode", "native_vlan", "allowed_vlans", "default_vlan", "description"):
            if p.get(k) is not None:
                request[k] = p[k]
    run(module, meta(p, target(p, request)))


if __name__ == "__main__":
    main()
