#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ovs_port
short_description: Plug or unplug an Open vSwitch representor port on a DPU / SmartNIC
description:
  - O(state=present) is Mercury's C(plug_port) (the port on the bridge with C(external_ids)
    C(iface-id), C(attached-mac), C(node-uuid), optionally tagged), O(state=absent)
    C(unplug_port). The device's platform is C(ovs).
version_added: "0.1.0"
author: Mercury developers (@mercury-dev)
extends_documentation_fragment:
  - mercury.network.common
  - mercury.network.common.change
options:
  port:
    description:
      - The representor port (for example V(pf0vf3)).
    type: str
    required: true
  bridge:
    description:
      - The bridge (default the device's C(bridge), else V(br-int)).
    type: str
  vif_id:
    description:
      - The VIF id (C(external_ids:iface-id)).
    type: str
  mac:
    description:
      - The instance's MAC (C(external_ids:attached-mac)).
    type: str
  vlan:
    description:
      - Access VLAN tag.
    type: int
  state:
    description:
      - Whether the port should be on the bridge.
    type: str
    choices: [present, absent]
    default: present
"""

EXAMPLES = r"""
- name: Plug node 7's representor
  mercury.network.ovs_port:
    device: dpu-7
    port: pf0vf3
    vif_id: 5f1c2d8e-0000-4000-8000-000000000007
    mac: "fa:16:3e:00:00:07"
    node_uuid: 1be26c0b-03f2-4d2e-ae87-c02d7f33c123
    vlan: 120
    reason: "deploy node 7"
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
        port=dict(type="str", required=True),
        bridge=dict(type="str"),
        vif_id=dict(type="str"),
        mac=dict(type="str"),
        vlan=dict(type="int"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    module = AnsibleModule(
        argument_spec=spec,
        supports_check_mode=True,
        required_one_of=[("device", "switch_id", "switch_info")],
    )
    p = module.params
    request = dict(op="plug_port" if p["state"] == "present" else "unplug_port", port=p["port"])
    keys = ("bridge", "vif_id", "mac", "vlan") if p["state"] == "present" else ("bridge",)
    for k in keys:
        if p.get(k) is not None:
            request[k] = p[k]
    run(module, meta(p, target(p, request)))


if __name__ == "__main__":
    main()
